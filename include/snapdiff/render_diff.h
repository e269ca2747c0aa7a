/* render_diff.h - the diff and the profile written for people and tools: text, JSON
 * (schema snapdiff.diff/1, docs/json-diff.md), folded stacks for flame graphs and
 * pprof's profile.proto. See render.h for the rules every renderer keeps.
 *
 * The figures and verdicts come from the diff (diff.h) and the profile (profile.h); the
 * renderers only word and lay them out. @return SD_OK, SD_EIO when writing failed,
 * SD_ENOMEM. */
#ifndef SNAPDIFF_RENDER_DIFF_H
#define SNAPDIFF_RENDER_DIFF_H

#include <stdio.h>

#include "diff.h"
#include "profile.h"
#include "render.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_DIFF_SCHEMA "snapdiff.diff/1"

/* The whole diff as one JSON document (2-space indent, then a newline); SD_EUSAGE
 * without an old snapshot. */
sd_status sd_render_diff_json(FILE *out, const sd_diff *d);

/* ---- Render tier (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_RENDER_API; exported in the node LIBSNAPDIFF_RENDER_0.3. Words and
 * layout for people, which change with the tool's output: no API promise past the
 * SONAME's. */
#ifdef SNAPDIFF_RENDER_API
/* Options of the diff's text; growable as common.h says. */
#define SD_DIFF_TEXT_OPTIONS_VERSION 1
typedef struct sd_diff_text_options {
    unsigned version;           /* SD_DIFF_TEXT_OPTIONS_VERSION */
    sd_render_options render;   /* colour */
    size_t top;                 /* growing groups in the table; 0 = 20 */
} sd_diff_text_options;
#define SD_DIFF_TEXT_OPTIONS_INIT {SD_DIFF_TEXT_OPTIONS_VERSION, SD_RENDER_OPTIONS_INIT, 0}
sd_status sd_diff_text_options_init(sd_diff_text_options *opts, unsigned version);
/* The totals, the growing and shrinking groups as a table, the stacks of the top groups.
 * SD_EUSAGE when the diff has no old snapshot (that one has folded stacks only). */
sd_status sd_render_diff_text(FILE *out, const sd_diff *d, const sd_diff_text_options *o);
/* One warning of the diff in English, as snprintf does: at most size bytes with the NUL.
 * @return the length the whole text needs. */
size_t sd_diff_warning_text(const sd_diff_warning *w, char *buf, size_t size);
/* Collapsed stacks ("outer;...;inner BYTES", sorted by text) for flame graph tools: the
 * stacks profile.h merges (sd_stacks_create, SD_STACKS_FOLDED), one line each (the growth,
 * or with `from` absent every live stack). SD_EUSAGE for stacks of another form. */
sd_status sd_render_diff_folded(FILE *out, const sd_stacks *stacks, sd_error *err);
/* The same stacks as pprof's profile.proto, gzipped, merged by sd_stacks_create as
 * SD_STACKS_FRAMES: one sample per stack with space/bytes and objects/count. Frames
 * innermost first. `max_memory` bounds the encoder's own tables (0 = unlimited). */
sd_status sd_render_diff_pprof(FILE *out, const sd_stacks *stacks, uint64_t max_memory,
                               sd_error *err);
#endif /* SNAPDIFF_RENDER_API */

#ifdef __cplusplus
}
#endif

#endif
