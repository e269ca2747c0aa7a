/* render_report.h - `snapdiff report`: one self-contained HTML page over the analyses.
 * See render.h for the rules every renderer keeps.
 *
 * The page draws from data embedded in it: the same JSON documents the CLI writes
 * (snapdiff.stats/1, snapdiff.frag/1, snapdiff.diff/1; for ranks snapdiff.series-ranks/1,
 * for training logs snapdiff.curve/1), and a snapdiff.report/1 document of aggregates the
 * pictures need. Every array in it is bounded, so a report stays small
 * however large the snapshot. */
#ifndef SNAPDIFF_RENDER_API
#error "snapdiff/render_report.h is in libsnapdiff's render tier (docs/architecture.md, \"Tiers\"): define SNAPDIFF_RENDER_API before including it"
#endif

#ifndef SNAPDIFF_RENDER_REPORT_H
#define SNAPDIFF_RENDER_REPORT_H

#include <stdio.h>

#include "curve.h"
#include "diff.h"
#include "frag.h"
#include "profile.h"
#include "ranks.h"
#include "report_data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the page is drawn from; growable as common.h says. */
#define SD_REPORT_INPUT_VERSION 3
typedef struct sd_report_input {
    unsigned version;                 /* SD_REPORT_INPUT_VERSION */
    const sd_snapshot *const *snaps;  /* the inputs, in command-line order */
    size_t n;
    const sd_frag *const *frags;      /* one per snapshot */
    /* One file: a profile of {NULL, snap}; N files: of the N snapshots. NULL with a diff
     * (the diff's own profile is used). */
    const sd_profile *profile;
    const sd_diff *diff;              /* two files; else NULL */
    uint64_t max_memory;              /* budget for the folded stacks' tables; 0 = none */
    /* Version 2. */
    bool ranks;                       /* the snapshots are the ranks of one job, in rank
                                       * order: drawn side by side (profile and diff NULL) */
    const sd_curve *curve;            /* training logs (curve.h): the page draws their
                                       * curves; snaps, frags, profile and diff unused */
    /* Version 3. */
    const sd_report_data *data;       /* the figures of snaps (report_data.h), computed
                                       * before: required with snapshots (the renderer
                                       * computes none); unused with curve */
    /* A job's folder by step and rank (ranks.h: sd_job_summarize's entries in step order,
     * its ranks and grown), the whole folder while snaps are the rank the page follows:
     * the page draws the steps-by-ranks table `series` prints (snapdiff.series-job/1
     * embedded). NULL: no job folder. */
    const sd_job_entry *job;
    size_t n_job;
    const sd_job_rank *job_ranks;
    size_t n_job_ranks, job_grown;
} sd_report_input;
#define SD_REPORT_INPUT_INIT \
    {SD_REPORT_INPUT_VERSION, NULL, 0, NULL, NULL, NULL, 0, false, NULL, NULL, NULL, 0, NULL, 0, 0}
sd_status sd_report_input_init(sd_report_input *opts, unsigned version);

/* Write the page. @return SD_OK, SD_EIO (write failed), SD_ENOMEM, SD_EUSAGE (an input
 * without what its view needs: snapshots without data, data of other snapshots). */
sd_status sd_render_report(FILE *out, const sd_report_input *in, sd_error *err);

#ifdef __cplusplus
}
#endif

#endif
