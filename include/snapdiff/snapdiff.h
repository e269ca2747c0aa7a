/* snapdiff.h - libsnapdiff's stable API, all of it: include this one header.
 *
 * Stable means: while the version is 0.x, only a minor release (0.3 -> 0.4) breaks it,
 * with a new SONAME and a CHANGELOG entry; from 1.0 only a major one
 * (docs/architecture.md, "ABI and versions"). Its functions are in the version node
 * LIBSNAPDIFF_0.3. Each header below also compiles alone.
 *
 * Two tiers are opt-in, as zstd's ZSTD_STATIC_LINKING_ONLY (docs/architecture.md, "Tiers"):
 *  - SNAPDIFF_RENDER_API (node LIBSNAPDIFF_RENDER_0.3): the renderers for people (text,
 *    SVG, HTML report, folded, pprof, CI annotations) and the words they use. Their output
 *    is wording, free to change; the JSON writers are stable and declared without it.
 *  - SNAPDIFF_EXPERIMENTAL (node LIBSNAPDIFF_EXPERIMENTAL_0.3): no API or ABI promise, may
 *    change in any release: the raw pickle reader (pickle.h), the segment-map helpers
 *    (experimental.h), the attribution's frame rules, the job-name readers, the statistics.
 * Define the macro before including this header (or any other) to get that tier too; a
 * header of one tier only (pickle.h, render_report.h, ...) stops with #error without it.
 */
#ifndef SNAPDIFF_SNAPDIFF_H
#define SNAPDIFF_SNAPDIFF_H

#include "common.h"   /* version, status codes, sd_error, the growable-struct rule */

#include "alloc.h"
#include "attrib.h"
#include "category.h"
#include "check.h"
#include "curve.h"
#include "diff.h"
#include "frag.h"
#include "gate.h"
#include "groups.h"
#include "levers.h"
#include "load.h"
#include "pattern.h"
#include "peak.h"
#include "profile.h"
#include "ranks.h"
#include "render.h"
#include "render_check.h"
#include "render_curve.h"
#include "render_diff.h"
#include "render_frag.h"
#include "render_replay.h"
#include "render_series.h"
#include "render_stats.h"
#include "render_top.h"
#include "render_trace.h"
#include "replay.h"
#include "series.h"
#include "snapshot.h"
#include "source.h"
#include "stats.h"
#include "summarize.h"
#include "summary.h"
#include "trace.h"
#include "units.h"

#ifdef SNAPDIFF_RENDER_API
#include "render_ranks.h"
#include "render_report.h"
#include "render_summary.h"
#include "report_data.h"
#endif

#ifdef SNAPDIFF_EXPERIMENTAL
#include "experimental.h"
#include "pickle.h"
#include "plan.h"
#include "render_plan.h"
#endif

#endif
