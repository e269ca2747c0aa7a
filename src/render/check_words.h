/* check_words.h - the words every `snapdiff check` renderer shares (check_words.c). */
#ifndef SNAPDIFF_RENDER_CHECK_WORDS_H
#define SNAPDIFF_RENDER_CHECK_WORDS_H

#include "render/check_render.h"
#include "render/format.h"

sdp_text sdp_check_measured_text(const sd_limit_result *r);   /* "+3.1 MiB", "12.50%" */
sdp_text sdp_check_limit_text(const sd_limit_result *r);      /* "1.0 MiB", "10%", "0.5" */
/* One sentence: "allocated memory grew by +3.1 MiB, over the limit of 1.0 MiB". */
void sdp_check_words(const sd_limit_result *r, char *buf, size_t size);
/* Why a member has no verdicts of its own: "only in OLD: missing from NEW". */
const char *sdp_check_missing_text(sd_member_missing m);

#endif
