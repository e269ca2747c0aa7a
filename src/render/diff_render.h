/* diff_render.h - the diff and the profile written for people and tools: text, JSON
 * (schema snapdiff.diff/1, docs/json-diff.md) and folded stacks for flame graphs.
 *
 * Each renderer writes to `out` and nothing else; the figures and verdicts come from the
 * diff (diff.h) and the profile (profile.h), the renderers only word and lay them out.
 * Private to libsnapdiff (prefix sdp_) until the public render API settles (render.h).
 * @return SD_OK, SD_EIO when writing failed, SD_ENOMEM. */
#ifndef SNAPDIFF_RENDER_DIFF_RENDER_H
#define SNAPDIFF_RENDER_DIFF_RENDER_H

#include <stdio.h>

#include "snapdiff/diff.h"
#include "snapdiff/profile.h"
#include "snapdiff/render.h"

typedef struct sdp_diff_text_options {
    sd_render_options render;   /* colour */
    size_t top;                 /* growing groups in the table; 0 = 20 */
} sdp_diff_text_options;

/* The totals, the growing and shrinking groups as a table, the stacks of the top groups.
 * SD_EUSAGE when the diff has no old snapshot (that one has folded stacks only). */
sd_status sdp_render_diff_text(FILE *out, const sd_diff *d, const sdp_diff_text_options *o);

/* The whole diff as one JSON document (2-space indent, then a newline); SD_EUSAGE
 * without an old snapshot. */
sd_status sdp_render_diff_json(FILE *out, const sd_diff *d);

/* Collapsed stacks ("outer;...;inner BYTES", sorted by text) of side `to` of a profile
 * minus side `from`: only lines that grew are written. With `from` absent (a NULL
 * snapshot) that is every live stack of `to`. Stacks dropped by a focus pattern are left
 * out. `max_memory` bounds the renderer's own tables (0 = unlimited). */
sd_status sdp_render_folded(FILE *out, const sd_profile *p, size_t from, size_t to,
                            uint64_t max_memory, sd_error *err);

/* The same stacks as pprof's profile.proto, gzipped (src/render/pprof.c): one sample per
 * stack with space/bytes and objects/count; with `from` absent the live memory of `to`,
 * else the growth of the stacks that grew. Frames innermost first, noise dropped. */
sd_status sdp_render_pprof(FILE *out, const sd_profile *p, size_t from, size_t to,
                           uint64_t max_memory, sd_error *err);

#endif
