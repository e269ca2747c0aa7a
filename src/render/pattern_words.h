/* pattern_words.h - a pattern's words, for the diff's and check's text and JSON
 * (private, sdp_; pattern_words.c). */
#ifndef SNAPDIFF_RENDER_PATTERN_WORDS_H
#define SNAPDIFF_RENDER_PATTERN_WORDS_H

#include "snapdiff/pattern.h"

/* The one-line hint (the fix) of a pattern, for text and JSON; NULL for SD_PATTERN_NONE. */
const char *sdp_pattern_hint(sd_pattern p);

#endif
