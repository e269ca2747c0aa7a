/* stats.h - the totals every other analysis starts from. */
#ifndef SNAPDIFF_STATS_H
#define SNAPDIFF_STATS_H

#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sd_stats {
    int64_t device;                  /* -1 for the total over devices */
    uint64_t segments, segments_large, segments_small, segments_expandable;
    uint64_t blocks;
    uint64_t reserved_bytes;         /* sum of segment total_size */
    uint64_t allocated_bytes;        /* blocks active_allocated */
    uint64_t active_bytes;           /* allocated + pending-free */
    uint64_t requested_bytes;        /* requested size of active blocks */
    uint64_t pending_free_bytes;     /* blocks active_pending_free */
    uint64_t inactive_bytes;         /* blocks inactive */
    uint64_t trace_entries;          /* per action: sd_stats_device_actions */
    int64_t first_time_us, last_time_us; /* valid when has_time */
    int has_time;
} sd_stats;

/* Totals of one device. */
void sd_stats_device(const sd_cuda_device *dev, sd_stats *out);
/* Sum of b into a (a->device becomes -1; time span widened). */
void sd_stats_add(sd_stats *a, const sd_stats *b);
/* Totals over every device of the snapshot. */
void sd_stats_total(const sd_snapshot *s, sd_stats *out);
/* The trace entries of each action, counts[a] for every a < n (n: the caller's
 * SD_ACT_COUNT). An action past the ones this library knows counts 0; an entry of an
 * action it does not know counts as SD_ACT_OTHER. Not in sd_stats: the counts grow
 * with sd_trace_action, and a struct callers embed must not. */
void sd_stats_device_actions(const sd_cuda_device *dev, uint64_t *counts, size_t n);
/* The same over every device of the snapshot. */
void sd_stats_total_actions(const sd_snapshot *s, uint64_t *counts, size_t n);
/* 100 * allocated / reserved; 0 when nothing is reserved. */
double sd_stats_allocated_pct(const sd_stats *st);

#ifdef __cplusplus
}
#endif

#endif
