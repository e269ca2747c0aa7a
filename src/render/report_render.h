/* report_render.h - `snapdiff report`: one self-contained HTML page over the analyses.
 *
 * The page (src/render/report/report.html, .css, .js, embedded at build time) draws
 * from data embedded in it: the same JSON documents the CLI writes (snapdiff.stats/1,
 * snapdiff.frag/1, snapdiff.diff/1), and a snapdiff.report/1 document of aggregates the
 * pictures need (live bytes by group, the stack tree for the icicle, segment-map pages,
 * downsampled trace timelines, per-group bytes over N files). Every array in it is
 * bounded (the SDP_REPORT_* limits below), so a report stays small however large the
 * snapshot. The limits are private (sdp_); the
 * renderer is public (snapdiff/render_report.h).
 */
#ifndef SNAPDIFF_RENDER_REPORT_RENDER_H
#define SNAPDIFF_RENDER_REPORT_RENDER_H

#include <stdio.h>

#include "snapdiff/diff.h"
#include "snapdiff/frag.h"
#include "snapdiff/profile.h"
#include "snapdiff/render_report.h"

enum {
    SDP_REPORT_MAX_SITES = 200,      /* rows of the live-by-group table (one file) */
    SDP_REPORT_MAX_STACKS = 1000,    /* stacks of the icicle (the rest: "other stacks") */
    SDP_REPORT_MAX_DEPTH = 96,       /* frames per icicle stack (the innermost are kept) */
    SDP_REPORT_MAX_POINTS = 1500,    /* timeline points per device */
    SDP_REPORT_MAX_SERIES = 40,      /* groups drawn over N files */
};

#endif
