/* render_trace.h - the replay of `device_traces` (trace.h) for people and tools: text and
 * JSON (schema snapdiff.trace/1, docs/json-trace.md). See render.h for the rules every
 * renderer keeps. @return SD_OK, SD_EIO when writing failed, SD_ENOMEM. */
#ifndef SNAPDIFF_RENDER_TRACE_H
#define SNAPDIFF_RENDER_TRACE_H

#include <stdio.h>

#include "frag.h"
#include "render.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_TRACE_SCHEMA "snapdiff.trace/1"

/* The whole replay as one JSON document (2-space indent, then a newline). The tool calls
 * the _with_ooms form; this one is for library users without a frag analysis. */
sd_status sd_render_trace_json(FILE *out, const sd_trace *t);
/* The same with each device's "ooms" (snapdiff.frag/1's oom_events) from `ooms`, the frag
 * analysis of the same snapshot (NULL: every "ooms" is []). */
sd_status sd_render_trace_json_with_ooms(FILE *out, const sd_trace *t, const sd_frag *ooms);

/* ---- Render tier (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_RENDER_API; exported in the node LIBSNAPDIFF_RENDER_0.3. Words and
 * layout for people, which change with the tool's output: no API promise past the
 * SONAME's. */
#ifdef SNAPDIFF_RENDER_API
/* Growable as common.h says. */
#define SD_TRACE_TEXT_OPTIONS_VERSION 2
typedef struct sd_trace_text_options {
    unsigned version;           /* SD_TRACE_TEXT_OPTIONS_VERSION */
    sd_render_options render;   /* colour */
    size_t top;                 /* groups (and phases) per device; 0 = 20 */
    /* Version 2: the frag analysis of the same snapshot, or NULL; each device's oom events
     * are then printed first, as `frag` prints them (issue 26). */
    const sd_frag *ooms;
} sd_trace_text_options;
#define SD_TRACE_TEXT_OPTIONS_INIT \
    {SD_TRACE_TEXT_OPTIONS_VERSION, SD_RENDER_OPTIONS_INIT, 0, NULL}
sd_status sd_trace_text_options_init(sd_trace_text_options *opts, unsigned version);
/* Per device: a header (entries, span, the oom events first when o->ooms has them, alive
 * at the end, the peak and its site), the warnings, the timeline by phase of a training
 * step, the table of groups (alive first), then the marker phases. */
sd_status sd_render_trace_text(FILE *out, const sd_trace *t, const sd_trace_text_options *o);
#endif /* SNAPDIFF_RENDER_API */

#ifdef __cplusplus
}
#endif

#endif
