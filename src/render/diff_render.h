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

/* The one-line hint (the fix) of a pattern, for text and JSON; NULL for SD_PATTERN_NONE
 * (pattern_words.c). */
const char *sdp_pattern_hint(sd_pattern p);

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

/* A site as every JSON document names it: {filename, line, name, kind} (a native site:
 * filename "", line 0, its label as name, the raw C++ symbol as `symbol`; a backward
 * site adds "backward": true). JSON null for an empty stack. jansson's json_t, named
 * by its struct tag so that this header does not need jansson. */
struct json_t;
struct json_t *sdp_site_json(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                             const sd_site *site);

/* One warning of the diff in English, as snprintf does (diff_warn_words.c). */
size_t sdp_diff_warning_text(const sd_diff_warning *w, char *buf, size_t size);

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
