/* diff_render.h - what the diff renderers share (private, sdp_); the renderers themselves
 * are public (snapdiff/render_diff.h). */
#ifndef SNAPDIFF_RENDER_DIFF_RENDER_H
#define SNAPDIFF_RENDER_DIFF_RENDER_H

#include "snapdiff/render_diff.h"

/* The one-line hint (the fix) of a pattern, for text and JSON; NULL for SD_PATTERN_NONE
 * (pattern_words.c). */
const char *sdp_pattern_hint(sd_pattern p);

#endif
