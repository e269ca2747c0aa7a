/* groups.h - one snapshot reduced to its group table: per group key and device, the live
 * bytes, blocks and requested bytes, and a representative site. Self-contained: the table
 * owns every string it holds, so the snapshot can be freed as soon as the table is made.
 *
 * The house for analyses over many snapshots (series.h today; summaries and the CI check
 * next): each file is loaded, reduced to this table and freed, so N snapshots never need
 * N models in memory at once. Kept small on purpose, and documented field by field
 * because a later `summarize` command writes it out as msgpack:
 *
 *   - source, last_time_us: where it came from and the last trace time (if any);
 *   - devices: per device ordinal, allocated, reserved and requested bytes (the stats
 *     module's figures, stats.h), sorted by device;
 *   - rows: per (key, device) with at least one live block, sorted by key then device:
 *     bytes, blocks, requested, and the key's representative site frame and `via` frame
 *     (profile.h's representative stack: the stack with the most bytes of that key).
 *
 * Keys are those of the diff (attrib.h, profile.h) with the same options: group-by,
 * depth, hide/show/focus patterns. Only ALLOCATED blocks count.
 */
#ifndef SNAPDIFF_GROUPS_H
#define SNAPDIFF_GROUPS_H

#include "attrib.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sd_groups sd_groups;

typedef struct sd_group_row {
    const char *key;          /* the group key (owned by the table) */
    int64_t device;           /* device ordinal */
    uint64_t bytes;           /* sizes of the ALLOCATED blocks of this key on this device */
    uint64_t blocks;          /* how many */
    uint64_t requested;       /* their requested sizes */
    bool has_site;            /* the representative stack has a site frame */
    sd_frame site;            /* its site frame (strings owned by the table) */
    bool has_via;
    sd_frame via;             /* the innermost library frame below the site */
    bool has_rep;
    uint32_t rep_stack;       /* the representative stack: a stack id of the snapshot the
                               * table was made from (meaningful only beside it) */
} sd_group_row;

typedef struct sd_group_device {
    int64_t device;
    uint64_t allocated, reserved, requested;
} sd_group_device;

/* The out-of-memory entries of the snapshot's traces (issue 26: how many ranks died, at
 * which entry, on what request): how many, and the last one (the one a rank died of). */
typedef struct sd_groups_oom {
    uint64_t count;           /* `oom` entries over every device; 0: none (nothing else set) */
    int64_t device;           /* the last oom's device ordinal */
    size_t entry;             /* its index in the device's trace as recorded (a summary keeps
                               * the trace from the first oom on: counted from the end) */
    uint64_t request_bytes;   /* the request that failed */
    uint64_t device_free_bytes;   /* what cudaMemGetInfo reported */
    bool has_time;
    int64_t time_us;
} sd_groups_oom;

/* Reduce `snap` to its table. `max_memory` bounds the work tables (0 = unlimited).
 * @return the table, or NULL with err filled (SD_EUSAGE: a bad pattern, SD_ENOMEM). */
sd_groups *sd_groups_create(const sd_snapshot *snap, const sd_attrib_options *attrib,
                            uint64_t max_memory, sd_error *err);
void sd_groups_free(sd_groups *g);

const char *sd_groups_source(const sd_groups *g);
/* The last `time_us` of the snapshot's trace entries. @return false when none has one. */
bool sd_groups_last_time(const sd_groups *g, int64_t *time_us);

/* The snapshot's out-of-memory entries (never NULL). */
const sd_groups_oom *sd_groups_oom_of(const sd_groups *g);
/* The same figures read from a snapshot (what sd_groups_create keeps). Never fails. */
void sd_groups_oom_of_snapshot(const sd_snapshot *s, sd_groups_oom *out);

size_t sd_groups_device_count(const sd_groups *g);
const sd_group_device *sd_groups_device(const sd_groups *g, size_t i);
/* The snapshot's pinned host memory (sd_snapshot_host_memory; device -1): in no device
 * above. NULL when the snapshot has none. */
const sd_group_device *sd_groups_host(const sd_groups *g);

size_t sd_groups_row_count(const sd_groups *g);
const sd_group_row *sd_groups_row(const sd_groups *g, size_t i);
/* The row of (key, device), by binary search. NULL when the key held nothing there. */
const sd_group_row *sd_groups_find(const sd_groups *g, const char *key, int64_t device);

#ifdef __cplusplus
}
#endif

#endif
