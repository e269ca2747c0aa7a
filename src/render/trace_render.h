/* trace_render.h - the replay of `device_traces` (trace.h) for people and tools: text and
 * JSON (schema snapdiff.trace/1, docs/json-trace.md). The figures, warnings and phases come
 * from the replay; these only word and lay them out. Private to libsnapdiff (prefix sdp_).
 * @return SD_OK, SD_EIO when writing failed, SD_ENOMEM. */
#ifndef SNAPDIFF_RENDER_TRACE_RENDER_H
#define SNAPDIFF_RENDER_TRACE_RENDER_H

#include <stdio.h>

#include "snapdiff/render.h"
#include "snapdiff/trace.h"

typedef struct sdp_trace_text_options {
    sd_render_options render;   /* colour */
    size_t top;                 /* groups (and phases) per device; 0 = 20 */
} sdp_trace_text_options;

/* Per device: a header (entries, span, alive at the end, the peak and its site), the
 * warnings, the table of groups (alive first), then the phases. */
sd_status sdp_render_trace_text(FILE *out, const sd_trace *t, const sdp_trace_text_options *o);

/* The whole replay as one JSON document (2-space indent, then a newline). */
sd_status sdp_render_trace_json(FILE *out, const sd_trace *t);

#endif
