/* trace_render.h - the trace renderers' private header; they are public
 * (snapdiff/render_trace.h). */
#ifndef SNAPDIFF_RENDER_TRACE_RENDER_H
#define SNAPDIFF_RENDER_TRACE_RENDER_H

#include "snapdiff/render_trace.h"

#endif
