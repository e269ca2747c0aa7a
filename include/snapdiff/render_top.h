/* render_top.h - `snapdiff top`: one snapshot's live memory by site, at the end and at the
 * peak (peak.h). Text for people; JSON schema snapdiff.top/1 (docs/json-top.md). */
#ifndef SNAPDIFF_RENDER_TOP_H
#define SNAPDIFF_RENDER_TOP_H

#include <stdio.h>

#include "frag.h"
#include "peak.h"
#include "render.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_TOP_SCHEMA "snapdiff.top/1"

/* One snapdiff.top/1 document. @return SD_OK, SD_EIO, SD_ENOMEM. The tool calls the
 * _with_ooms form; this one is for library users without a frag analysis. */
sd_status sd_render_top_json(FILE *out, const sd_peak *x, const sd_render_options *ro,
                             sd_error *err);
/* The same with each device's "ooms" (snapdiff.frag/1's oom_events) from `ooms`, the frag
 * analysis of the same snapshot; NULL = no oom analysed (every "ooms" is []). */
sd_status sd_render_top_json_with_ooms(FILE *out, const sd_peak *x, const sd_frag *ooms,
                                       const sd_render_options *ro, sd_error *err);

/* ---- Render tier (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_RENDER_API; exported in the node LIBSNAPDIFF_RENDER_0.3. Words and
 * layout for people, which change with the tool's output: no API promise past the
 * SONAME's. */
#ifdef SNAPDIFF_RENDER_API
/* Options of the text view that can grow. */
#define SD_TOP_TEXT_OPTIONS_VERSION 1
typedef struct sd_top_text_options {
    unsigned version;   /* SD_TOP_TEXT_OPTIONS_VERSION (growable: common.h) */
    size_t top;              /* rows per table; 0 = 20 */
    /* The frag analysis of the same snapshot, or NULL: each device's oom events are then
     * printed first, as `frag` prints them (issue 26: the oom appears first). */
    const sd_frag *ooms;
} sd_top_text_options;
#define SD_TOP_TEXT_OPTIONS_INIT {SD_TOP_TEXT_OPTIONS_VERSION, 0, NULL}
sd_status sd_top_text_options_init(sd_top_text_options *opts, unsigned version);
/* Per device: the live memory by key at the end (bytes, blocks, requested) and at the
 * peak, with the peak's entry, time and allocation. `topts` may be NULL.
 * @return SD_OK, SD_EIO (errno set). */
sd_status sd_render_top_text(FILE *out, const sd_peak *x, const sd_render_options *ro,
                             const sd_top_text_options *topts, sd_error *err);
#endif /* SNAPDIFF_RENDER_API */

#ifdef __cplusplus
}
#endif

#endif
