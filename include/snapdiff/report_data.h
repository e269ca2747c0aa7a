/* report_data.h - the figures `snapdiff report` draws that no other analysis keeps: computed
 * once, before the page is written, so that the renderer (render_report.h) only formats.
 *
 * For each snapshot: its peak (peak.h, with the caller's grouping), the live bytes after
 * every trace entry of each device (the peak's figure, for the timeline), the site of every
 * stack (attrib.h, for the allocations and OOMs the page names), its totals and its last
 * OOM (groups.h); over all of them the ranks' spread (ranks.h). With one snapshot and
 * replay set: the allocator replayed under the caller's settings (replay.h). With a
 * profile: its stacks as the folded output merges them (the icicle). Every figure has the
 * one definition its own header gives; nothing here is decided anew.
 */
#ifndef SNAPDIFF_RENDER_API
#error "snapdiff/report_data.h is in libsnapdiff's render tier (docs/architecture.md, \"Tiers\"): define SNAPDIFF_RENDER_API before including it"
#endif

#ifndef SNAPDIFF_REPORT_DATA_H
#define SNAPDIFF_REPORT_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attrib.h"
#include "groups.h"
#include "peak.h"
#include "profile.h"
#include "ranks.h"
#include "replay.h"
#include "snapshot.h"
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Caller-filled and growable: set `version` (SD_REPORT_DATA_OPTIONS_INIT or
 * sd_report_data_options_init()); a field a caller does not know stays zero, its default. */
#define SD_REPORT_DATA_OPTIONS_VERSION 2
typedef struct sd_report_data_options {
    unsigned version;                 /* SD_REPORT_DATA_OPTIONS_VERSION */
    sd_attrib_options attrib;         /* grouping and sites, as the diff's */
    uint64_t max_memory;              /* budget for the tables; 0 = unlimited */
    /* Replay the allocator (one snapshot only): under the recorded settings and each of
     * replay_options.alloc_confs (replay.h; the caller's --alloc-conf, --capacity, ...). */
    bool replay;
    sd_replay_options replay_options;
    /* Version 2. The profile the page's icicle is drawn from (the diff's, or the one- or
     * N-file profile; it must outlive the result): its stacks, side last minus side 0,
     * merged as the folded output merges them. NULL: no icicle (the ranks' page). */
    const sd_profile *profile;
} sd_report_data_options;
#define SD_REPORT_DATA_OPTIONS_INIT {SD_REPORT_DATA_OPTIONS_VERSION, {0}, 0, false, {0}, NULL}
sd_status sd_report_data_options_init(sd_report_data_options *o, unsigned version);

typedef struct sd_report_data sd_report_data;

/* The figures of snaps[0..n), which must outlive the result.
 * @return the data, or NULL with err (SD_EUSAGE: a bad option or pattern, a replay config
 * that does not parse; SD_ENOMEM; the source named in err when one file failed). */
sd_report_data *sd_report_data_create(const sd_snapshot *const *snaps, size_t n,
                                      const sd_report_data_options *opts, sd_error *err);
void sd_report_data_free(sd_report_data *d);

size_t sd_report_data_snapshot_count(const sd_report_data *d);
/* The peak of snapshot i (peak.h). */
const sd_peak *sd_report_data_peak(const sd_report_data *d, size_t i);
/* The live bytes after each trace entry of device index `dev` of snapshot i (the peak's
 * figure, sd_peak_live_series); NULL with *n = 0 when the device has no peak. */
const uint64_t *sd_report_data_live(const sd_report_data *d, size_t i, size_t dev, size_t *n);
/* The site of stack `stack` of snapshot i (sd_attrib_site_of_stack); NULL when the stack
 * is out of range. */
const sd_site *sd_report_data_site(const sd_report_data *d, size_t i, uint32_t stack);
/* Snapshot i's totals over its devices (sd_stats_total) and its last OOM. */
const sd_stats *sd_report_data_totals(const sd_report_data *d, size_t i);
const sd_groups_oom *sd_report_data_oom(const sd_report_data *d, size_t i);
/* The spread of the snapshots' totals, as the ranks of one job (sd_rank_spread_of_totals). */
const sd_rank_spread *sd_report_data_spread(const sd_report_data *d);
/* A stack of the icicle: the profile's stacks that read the same as folded stacks, merged
 * (the `diff --format folded` lines, render_diff.h). */
typedef struct sd_report_stack {
    const char *const *frames;   /* outermost first, as the folded line writes them */
    size_t n_frames;
    uint64_t bytes;              /* side last minus side 0; > 0 */
    /* Two sides, and its requested bytes did not move: it grew by allocator rounding
     * only, which the diff does not call growth (sd_diff_group_changed's rule). */
    bool rounding_only;
} sd_report_stack;
/* The stacks of opts.profile whose bytes grew from side 0 to its last side (one file: its
 * live stacks, side 0 being empty), the most bytes first (ties: by the folded text); NULL
 * with *n = 0 when the data was made without a profile. */
const sd_report_stack *sd_report_data_stacks(const sd_report_data *d, size_t *n);

/* The replay of the one snapshot; NULL without opts.replay, with several snapshots, or when
 * no device has a trace to replay. */
const sd_replay *sd_report_data_replay(const sd_report_data *d);

#ifdef __cplusplus
}
#endif

#endif
