/* snapdiff.h - libsnapdiff's stable API, all of it: include this one header.
 *
 * Stable means: while the version is 0.x, only a minor release (0.3 -> 0.4) breaks it,
 * with a new SONAME and a CHANGELOG entry; from 1.0 only a major one
 * (docs/architecture.md, "ABI and versions"). Each header below also compiles alone.
 *
 * Not included, because they are EXPERIMENTAL (no API or ABI promise, may change in any
 * release): snapdiff/experimental.h (the segment-map, page and bucket helpers of the
 * fragmentation analysis) and snapdiff/pickle.h (the raw pickle reader and its value
 * accessors, which `snapdiff dump` uses). Include them by name if you accept that.
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
#include "render_ranks.h"
#include "render_replay.h"
#include "render_report.h"
#include "render_series.h"
#include "render_stats.h"
#include "render_summary.h"
#include "render_top.h"
#include "render_trace.h"
#include "replay.h"
#include "report_data.h"
#include "series.h"
#include "snapshot.h"
#include "source.h"
#include "stats.h"
#include "summarize.h"
#include "summary.h"
#include "trace.h"
#include "units.h"

#endif
