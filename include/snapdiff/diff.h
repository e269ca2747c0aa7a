/* diff.h - what grew between two snapshots, grouped by where it was allocated.
 *
 * The diff compares the keys of a two-sided profile (profile.h; keys: attrib.h) and adds
 * what only a comparison has: per device and overall stats and their deltas, kept / new /
 * freed blocks, growth per step, the steps until the device is full, and whether the
 * groups add up. Every figure and decision is here; renderers (text, JSON, folded) only
 * word and lay them out. Definitions in docs/json-diff.md; tests/truth/truth_diff.py computes
 * the same figures in Python.
 *
 * A diff borrows both snapshots: free the diff before them. Every group's figures sum
 * over ALLOCATED blocks only, so the group deltas add up to the allocated delta (unless a
 * focus filter drops blocks).
 */
#ifndef SNAPDIFF_DIFF_H
#define SNAPDIFF_DIFF_H

#include <stdbool.h>
#include "attrib.h"
#include "frag.h"
#include "pattern.h"
#include "profile.h"
#include "snapshot.h"
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The diff ------------------------------------------------------------------------ */

typedef struct sd_diff sd_diff;

#define SD_DIFF_OPTIONS_VERSION 1
typedef struct sd_diff_options {
    unsigned version;   /* SD_DIFF_OPTIONS_VERSION (growable: common.h) */
    sd_attrib_options attrib;
    uint64_t steps;           /* steps between the snapshots; 0 = unknown */
    uint64_t capacity;        /* bytes per device; 0 = estimate from `oom` entries if any */
    uint64_t max_memory;      /* budget for the profile's and the diff's tables (each); 0 = none */
    int at;                   /* sd_diff_at: which view leads; 0 = decide from the files */
} sd_diff_options;
#define SD_DIFF_OPTIONS_INIT {SD_DIFF_OPTIONS_VERSION, SD_ATTRIB_OPTIONS_INIT, 0, 0, 0, 0}
sd_status sd_diff_options_init(sd_diff_options *opts, unsigned version);

/* Which comparison leads (`--at`): the end states (one run at two points in time) or the
 * peaks (two runs, e.g. two configurations). AUTO decides from the files
 * (sd_diff_comparison_of). */
typedef enum sd_diff_at { SD_DIFF_AT_AUTO, SD_DIFF_AT_END, SD_DIFF_AT_PEAK } sd_diff_at;

typedef enum sd_capacity_source {
    SD_CAPACITY_NONE,         /* unknown: no steps to capacity */
    SD_CAPACITY_GIVEN,        /* from the options */
    SD_CAPACITY_OOM,          /* estimate: last oom entry's device_free + reserved */
} sd_capacity_source;

typedef struct sd_diff_counts {
    uint64_t kept;            /* ALLOCATED in both: same device, address, size and stack */
    uint64_t added;           /* ALLOCATED in new only */
    uint64_t freed;           /* ALLOCATED in old only */
} sd_diff_counts;

/* new - old of each figure of sd_stats. */
typedef struct sd_stats_delta {
    int64_t allocated, reserved, active, requested, pending_free;
} sd_stats_delta;

typedef struct sd_diff_device {
    int64_t device;
    bool in_old, in_new;
    sd_stats old_stats, new_stats;      /* zeros on the side that lacks the device */
    sd_diff_counts blocks;
    uint64_t capacity;
    sd_capacity_source capacity_source;
    bool has_steps_to_capacity;         /* steps given, growth > 0, capacity known */
    uint64_t steps_to_capacity;         /* ceil((capacity - allocated) / per_step) */
    int64_t per_step;                   /* allocated delta / steps, toward zero */
    sd_stats_delta delta;               /* new_stats - old_stats */
    /* NEW's ordinal of this device: `device` (OLD's) unless each file holds one device and
     * their ordinals differ (rank r on device r): those two are compared as one. */
    int64_t device_new;
} sd_diff_device;

/* Do the group deltas add up to the allocated delta? */
typedef enum sd_sum_check {
    SD_SUM_EXACT,             /* they do (the invariant) */
    SD_SUM_FOCUS,             /* a focus filter dropped blocks: they hold a part of it */
    SD_SUM_MISMATCH,          /* they do not: a bug, shown in red */
} sd_sum_check;

/* What the steps say about running out of memory (the first device to run out). */
typedef enum sd_diff_outlook {
    SD_OUTLOOK_NO_STEPS,      /* no steps given: nothing per step */
    SD_OUTLOOK_NOT_GROWING,   /* per step <= 0 */
    SD_OUTLOOK_NO_CAPACITY,   /* growing, no capacity known (give one) */
    SD_OUTLOOK_FULL,          /* already at or above the capacity */
    SD_OUTLOOK_REACHED,       /* capacity reached in steps_to_capacity steps */
} sd_diff_outlook;

typedef struct sd_diff_totals {
    sd_stats old_stats, new_stats;      /* over all devices */
    sd_diff_counts blocks;
    bool has_per_step;
    int64_t per_step;                   /* allocated delta / steps, toward zero */
    double per_step_exact;
    bool has_steps_to_capacity;
    uint64_t steps_to_capacity;         /* the first device to reach its capacity */
    /* Group sums (differ from the allocated figures only under a focus filter). */
    uint64_t group_old_bytes, group_new_bytes;
    sd_stats_delta delta;               /* new_stats - old_stats */
    int64_t groups_delta;               /* group_new_bytes - group_old_bytes */
    sd_sum_check sum_check;
    uint64_t steps;                     /* as given in the options; 0 = none */
    sd_diff_outlook outlook;
    /* The device that reaches its capacity first (the index for sd_diff_device_at);
     * valid when has_steps_to_capacity. */
    size_t capacity_device;
    uint64_t new_ooms;                  /* `oom` trace entries of NEW, all devices */
    sd_frag_brief old_frag, new_frag;   /* fragmentation of each side (zeros: no old) */
    /* The diff-level pattern (pattern.h): SD_PATTERN_FRAGMENTATION or SD_PATTERN_NONE.
     * Fragmentation holds only when reserved grew (sd_pattern_of_totals) while neither
     * allocated nor, when both peaks are known, the peak moved by more than a tenth of it,
     * and NEW holds free memory (cached or stranded, frag.h) of at least that tenth. */
    sd_pattern pattern;
    /* Reserved grew by as much as fragmentation needs, but the peaks moved with it
     * (peak_delta: NEW's peak - OLD's, summed over the paired devices): what it was. */
    bool reserved_with_peak;
    int64_t peak_delta;
    /* Groups paired as moved code (sd_diff_group.moved), and whether the two files' live
     * memory is identical: an OLD, the same allocated bytes on every device, and every
     * group (moved ones paired) with the same bytes, blocks and requested bytes on both
     * sides (docs/json-diff.md, live_identical). */
    size_t moved_groups;
    bool live_identical;
} sd_diff_totals;

/* Pinned host memory (snapshot.h, sd_snapshot_host_memory) of each side: its own section,
 * never in a device's figures nor in the totals. */
typedef struct sd_diff_host {
    bool in_old, in_new;                /* the side has a host section */
    sd_stats old_stats, new_stats;      /* zeros on a side without one; device -1 */
    sd_stats_delta delta;               /* new_stats - old_stats */
} sd_diff_host;

typedef struct sd_diff_group {
    const char *key;
    int64_t device;           /* groups are per (key, device): a site on three GPUs is three
                               * groups, never summed over devices */
    uint64_t old_bytes, old_blocks, new_bytes, new_blocks;
    int64_t delta_bytes, delta_blocks;
    /* What the program asked for (requested sizes): a group whose requested bytes did not
     * change is neither growth nor shrinkage, whatever delta_bytes says (allocator
     * rounding: the same tensors landed in blocks of other sizes). */
    uint64_t old_requested_bytes, new_requested_bytes;
    int64_t delta_requested_bytes;
    uint64_t kept_blocks;               /* blocks of NEW already live in OLD (kept) */
    /* The stack with the most bytes in the new snapshot (old when none there). */
    const sd_snapshot *rep_snapshot;
    uint32_t rep_stack;
    sd_site rep_site;                   /* site and via indices in that stack */
    /* The known pattern of a growing group, from its representative stack and growth
     * (pattern.h); SD_PATTERN_NONE when none is clear and for groups that did not grow. */
    sd_pattern pattern;
    /* Code that moved (an edit above it), not growth: OLD had this group's site in the same
     * function with the same stack shape, at other lines, and nothing at this key, while
     * NEW has nothing at OLD's key. The two are one group: old_* are OLD's figures, key
     * and rep_* NEW's; moved_file and moved_line are OLD's site frame (its line may equal
     * NEW's when only a caller moved). Groups of one function and shape are paired in
     * line order, and only when OLD and NEW have as many of them (docs/json-diff.md). */
    bool moved;
    const char *moved_file;
    int64_t moved_line;
} sd_diff_group;

/* ---- Warnings: what makes the comparison itself doubtful (docs/json-diff.md). --------- */

typedef enum sd_diff_warning_code {
    SD_WARN_NO_SHARED_SITE,   /* the two files share no allocation site: two programs? */
    SD_WARN_FEW_SHARED_SITES, /* shared sites hold under SD_DIFF_FEW_SHARED_PCT of the bytes */
    SD_WARN_DEVICES_DIFFER,   /* a device with memory in one file only (device, side) */
    SD_WARN_SETTINGS_DIFFER,  /* the recorded allocator settings differ (setting) */
    SD_WARN_TRACE_OVERFLOWED, /* the trace ring buffer of a file overflowed (side) */
    SD_WARN_MOSTLY_NO_STACK,  /* most live bytes of a file have no stack (side) */
    SD_WARN_SWAPPED,          /* the traces' times say NEW is older than OLD */
    SD_WARN_PEAK_ONE_SIDE,    /* only `side` recorded a trace: no comparison at the peak */
    SD_WARN_COUNT
} sd_diff_warning_code;

#define SD_DIFF_FEW_SHARED_PCT 50.0   /* few_shared_sites below this share of live bytes */
#define SD_DIFF_NO_STACK_PCT 50.0     /* mostly_no_stack above this share of live bytes */

typedef struct sd_diff_warning {
    sd_diff_warning_code code;
    int side;                 /* 0 OLD, 1 NEW; -1 when the warning is about both */
    int64_t device;           /* devices_differ: the device found on `side` only; else -1 */
    uint64_t count, of_count; /* sites: shared sites, of all sites with live bytes */
    uint64_t bytes, of_bytes; /* sites: live bytes (both sides) at shared sites, of all;
                               * mostly_no_stack: bytes without a stack, of the side's */
    double pct;               /* 100 * bytes / of_bytes */
    int64_t old_time_us, new_time_us;  /* swapped: the newest trace time of each file */
    const char *setting;      /* settings_differ: the first setting that differs (static) */
} sd_diff_warning;

/* "no_shared_site", "few_shared_sites", "devices_differ", "settings_differ",
 * "trace_overflowed", "mostly_no_stack", "swapped", "peak_one_side": the stable codes. */
const char *sd_diff_warning_name(sd_diff_warning_code c);

/* Why two files are compared as two runs rather than one run twice (docs/json-diff.md,
 * "compared_as"): a bit set of these reasons, any one of which suffices. */
enum {
    SD_TWO_RUNS_FEW_SHARED = 1u << 0,   /* under SD_DIFF_TWO_RUNS_SHARED_PCT of NEW's
                                         * allocated bytes (with a site) at sites OLD has */
    SD_TWO_RUNS_SWAPPED = 1u << 1,      /* the `swapped` warning: NEW's trace is older */
    SD_TWO_RUNS_SCRIPTS = 1u << 2,      /* no outermost user frame's file in common */
    SD_TWO_RUNS_STEPS = 1u << 3,        /* both traces cover a step (forward and backward) */
    SD_TWO_RUNS_FORCED = 1u << 4,       /* `--at peak` */
};
#define SD_DIFF_TWO_RUNS_SHARED_PCT (100.0 / 3.0)

typedef struct sd_diff_comparison {
    bool two_runs;            /* lead with the peaks */
    bool forced;              /* by the options (`--at`), not decided from the files */
    unsigned why;             /* SD_TWO_RUNS_* bits (0 when one run) */
    double shared_new_pct;    /* NEW's allocated bytes with a site at sites OLD also has, % */
    bool ranks;               /* the files pair as ranks of one job (one device each, other
                               * ordinals): never `swapped`, and the text words the
                               * two-runs view for ranks */
} sd_diff_comparison;

/* "few_shared_sites_new", "swapped", "scripts_differ", "both_cover_a_step", "forced":
 * the stable names of the SD_TWO_RUNS_* bit `bit`, or NULL. */
const char *sd_diff_two_runs_reason_name(unsigned bit);

/* Compare old (may be NULL: an empty baseline) with new. Both must outlive the diff.
 * @return the diff, or NULL with err filled (bad pattern, memory). */
sd_diff *sd_diff_create(const sd_snapshot *old_snap, const sd_snapshot *new_snap,
                        const sd_diff_options *opts, sd_error *err);
void sd_diff_free(sd_diff *d);

const sd_diff_totals *sd_diff_totals_of(const sd_diff *d);
/* The pinned host memory of both sides; NULL when neither has a host section. */
const sd_diff_host *sd_diff_host_of(const sd_diff *d);
size_t sd_diff_device_count(const sd_diff *d);          /* union of both, by ordinal */
const sd_diff_device *sd_diff_device_at(const sd_diff *d, size_t i);

/* Groups in report order: growth (largest first), shrinking (most negative first), then
 * unchanged (largest first); ties by key. Growth and shrinking are by delta_bytes among
 * the groups whose requested bytes changed; the rest is unchanged (sd_diff_group_changed). */
size_t sd_diff_group_count(const sd_diff *d);
size_t sd_diff_growth_count(const sd_diff *d);
size_t sd_diff_shrink_count(const sd_diff *d);
const sd_diff_group *sd_diff_group_at(const sd_diff *d, size_t i);
/* Devices with live memory in either file; more than one: the text report splits its
 * tables by device. */
size_t sd_diff_memory_device_count(const sd_diff *d);
/* Did the group grow or shrink? false when delta_bytes is 0 or only allocator rounding
 * moved it (the requested bytes are the same). */
bool sd_diff_group_changed(const sd_diff_group *g);

/* The two-sided profile the groups come from (side 0 old, side 1 new): per-stack figures
 * for folded stacks and other renderers. */
const sd_profile *sd_diff_profile(const sd_diff *d);
/* The warnings about the comparison, in code order. */
size_t sd_diff_warning_count(const sd_diff *d);
const sd_diff_warning *sd_diff_warning_at(const sd_diff *d, size_t i);
const sd_attrib *sd_diff_attrib(const sd_diff *d);
/* Both snapshots compared at their peaks (peak.h, docs/peak.md): NULL when there is no
 * OLD or neither side recorded a trace; no device pairs when only one side did. */
struct sd_peak_diff;
const struct sd_peak_diff *sd_diff_peak(const sd_diff *d);
/* One run twice, or two runs (lead with the peak)? Never NULL. */
const sd_diff_comparison *sd_diff_comparison_of(const sd_diff *d);

#ifdef __cplusplus
}
#endif

#endif
