/* peak.h - the peak of a device: the most memory allocated at once in the recorded window.
 *
 * The one definition (docs/peak.md), used by trace, report, top and diff:
 *
 *   live(i) = the blocks live when recording began
 *               (the snapshot's ALLOCATED blocks not allocated in the trace, and the blocks
 *                freed in the trace that were allocated before it)
 *           + the allocations made in the trace up to entry i, less those released,
 *   at block sizes. The peak is the largest live(i) over the `alloc` entries of the window
 *   (the first such entry on ties), with its entry index, time_us and the allocation (its
 *   stack, key and site) that reached it.
 *
 * Releases follow trace.h's replay rules exactly: the first free_requested or
 * free_completed at an address releases its block; an alloc at an address whose block was
 * never freed ends the older block (its free was not recorded); a free at an address that
 * holds no block allocated in the trace releases a block from before it (its entry's size;
 * not its frames, which may be the free's: such a block is grouped under <no stack>).
 *
 * The live blocks at any entry are grouped like the diff (attrib.h: group-by, depth,
 * hide/show/focus, native node names, forward_frames); focus filters the groups only,
 * never the device totals. "Bytes allocated inside the window" (trace.h's alloc_bytes) is
 * another figure.
 */
#ifndef SNAPDIFF_PEAK_H
#define SNAPDIFF_PEAK_H

#include <stdbool.h>
#include "attrib.h"
#include "category.h"
#include "levers.h"
#include "snapshot.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_PEAK_OPTIONS_VERSION 1
typedef struct sd_peak_options {
    unsigned version;   /* SD_PEAK_OPTIONS_VERSION (growable: common.h) */
    sd_attrib_options attrib;
    /* The window in which the peak is sought (trace.h's bounds); the blocks live at its
     * start are those live at the trace's start plus the net of the entries before it. */
    sd_trace_bound since, until;
    uint64_t max_memory;            /* budget for the tables; 0 = unlimited */
    /* Also find the peak of each phase (category.h): one more replay per phase. */
    bool phase_peaks;
} sd_peak_options;
#define SD_PEAK_OPTIONS_INIT \
    {SD_PEAK_OPTIONS_VERSION, SD_ATTRIB_OPTIONS_INIT, {SD_BOUND_NONE, 0}, {SD_BOUND_NONE, 0}, \
     0, false}
sd_status sd_peak_options_init(sd_peak_options *opts, unsigned version);

/* Bytes and blocks of one group key live at one moment. */
typedef struct sd_peak_group {
    const char *key;
    uint64_t bytes, blocks;
    uint64_t requested;             /* requested bytes (end table only; else = bytes) */
    uint32_t rep_stack;             /* the stack with the most bytes (0 = no frames) */
    sd_site rep_site;               /* its site (with forward_frames) */
    sd_category category;           /* the category of rep_stack's largest block */
} sd_peak_group;

/* The live blocks at one moment, by key, largest first (then key). */
typedef struct sd_peak_table {
    uint64_t bytes, blocks;         /* every live block (focus does not filter these) */
    const sd_peak_group *groups; size_t n_groups;
    /* Every live block by category (category.h, docs/categories.md), in category order,
     * those with blocks only: their bytes add up to `bytes`, focus or not. */
    const sd_category_total *categories; size_t n_categories;
} sd_peak_table;

/* The most memory allocated at once during the allocs of one phase (forward, backward,
 * optimizer, other) in the window, the same figure as the peak's, and what was live then. */
typedef struct sd_peak_phase {
    sd_step_phase phase;
    uint64_t bytes;
    size_t entry;                   /* the alloc that reached it (first on ties) */
    uint32_t step;                  /* its step; 0 when the trace shows none */
    sd_peak_table at;               /* live then, by key and by category */
} sd_peak_phase;

/* The peak inside one step of the window (issue 36: like steps compared). */
typedef struct sd_peak_step {
    uint32_t step;                  /* 1, 2, ... (category.h) */
    bool complete;                  /* an optimizer run ends it in the trace */
    uint64_t bytes;
    size_t entry;                   /* the alloc that reached it (first on ties) */
} sd_peak_step;

typedef struct sd_peak_device {
    int64_t device;
    uint64_t allocated_bytes;       /* the snapshot's ALLOCATED blocks (the end state) */
    sd_peak_table at_end;           /* those blocks by key */
    bool has_trace;                 /* the device recorded trace entries */
    size_t total_entries, first_entry, n_entries;   /* the trace and the window */
    uint64_t start_bytes;           /* live when recording began (entry 0) */
    uint64_t window_start_bytes;    /* live at the window's first entry */
    uint64_t window_alloc_bytes;    /* bytes allocated inside the window (another figure) */
    bool has_peak;                  /* the window holds an alloc */
    uint64_t peak_bytes;
    size_t peak_entry;
    bool peak_has_time;
    int64_t peak_time_us;
    uint32_t peak_stack;            /* the allocation that reached it */
    const char *peak_key;           /* its key (NULL when no peak) */
    sd_site peak_site;
    sd_peak_table at_peak;          /* live at the peak entry by key (empty when no peak) */
    /* The phase of the peak entry and its step (category.h: 0 when the trace shows no
     * steps); peak_has_phase false when the phases are unknown. */
    bool peak_has_phase;
    sd_step_phase peak_phase;
    uint32_t peak_step;
    /* With sd_peak_options.phase_peaks: the peak of each phase that has an alloc in the
     * window, in phase order (the overall peak is one of them). */
    const sd_peak_phase *phase_peaks; size_t n_phase_peaks;
    /* Issue 36: the levers at the peak (levers.h: what a model change frees then, with the
     * bytes), owned by the peak; NULL when no peak. A peak has no shortfall. */
    const struct sd_levers *levers;
    /* Issue 36: the peak of each step with an alloc in the window, in step order (none
     * when the trace shows no steps). */
    const sd_peak_step *step_peaks; size_t n_step_peaks;
} sd_peak_device;

typedef struct sd_peak sd_peak;

/* Every device of the snapshot (with or without a trace). `s` must outlive the result.
 * @return the peaks, or NULL with err (SD_EUSAGE: a bad pattern; SD_ENOMEM). */
sd_peak *sd_peak_create(const sd_snapshot *s, const sd_peak_options *opts, sd_error *err);
void sd_peak_free(sd_peak *p);

const sd_snapshot *sd_peak_snapshot(const sd_peak *p);
const sd_attrib *sd_peak_attrib(const sd_peak *p);
size_t sd_peak_device_count(const sd_peak *p);
const sd_peak_device *sd_peak_device_at(const sd_peak *p, size_t i);
/* The device with ordinal `device`, or NULL. */
const sd_peak_device *sd_peak_device_find(const sd_peak *p, int64_t device);

/* The live blocks after trace entry `entry` (inclusive) of device index `i`, by key (the
 * OOM explanation's "what was live then"). The table is owned by `p` and valid until p is
 * freed. @return SD_OK, SD_EUSAGE (no such device or entry), SD_ENOMEM. */
sd_status sd_peak_live_at(sd_peak *p, size_t i, size_t entry, sd_peak_table *out,
                          sd_error *err);

/* The peak's live bytes after each trace entry of device index `i`: live[k] for k below
 * min(n, total_entries) (the report's timeline). @return SD_OK, SD_EUSAGE, SD_ENOMEM. */
sd_status sd_peak_live_series(sd_peak *p, size_t i, uint64_t *live, size_t n, sd_error *err);

/* ---- Two snapshots compared at their peaks (the diff's "at the peak" section) ----------
 * Devices pair by ordinal; when none pairs and each side has one device with a peak, those
 * two pair whatever their ordinals (rank r usually holds device r). The groups are the
 * union of both tables at the peak, by key, the largest |delta| first (then key); without
 * --focus their deltas add up to the peak delta. */
typedef struct sd_peak_diff_group {
    const char *key;
    uint64_t old_bytes, new_bytes, old_blocks, new_blocks;
    int64_t delta_bytes;
    const sd_snapshot *rep_snapshot;  /* the side its site is read from (NEW's when there) */
    uint32_t rep_stack;
    sd_site rep_site;
} sd_peak_diff_group;

/* One category at both peaks (or at both peaks of one phase). */
typedef struct sd_peak_diff_category {
    sd_category category;
    uint64_t old_bytes, new_bytes;
    int64_t delta_bytes;
} sd_peak_diff_category;

/* The peaks of one phase in OLD and NEW (a side without an alloc in the phase: has_* false,
 * its bytes 0), by category. */
typedef struct sd_peak_diff_phase {
    sd_step_phase phase;
    bool has_old, has_new;
    uint64_t old_peak_bytes, new_peak_bytes;
    const sd_peak_diff_category *categories; size_t n_categories;
} sd_peak_diff_phase;

typedef struct sd_peak_diff_device {
    int64_t device_old, device_new;
    const sd_peak_device *old, *new_;   /* both with has_peak */
    int64_t delta_bytes;                /* new peak - old peak */
    const sd_peak_diff_group *groups; size_t n_groups;
    /* Issue 26: the categories at the two peaks (every category live at either, in
     * category order; they add up to the peaks), the peak of each phase of either side, and
     * whether the two peaks fall in different phases (both phases known). */
    const sd_peak_diff_category *categories; size_t n_categories;
    const sd_peak_diff_phase *phases; size_t n_phases;
    bool phases_differ;
    /* What makes each peak: the category that holds the most more bytes at that side's
     * peak than at the other's (the largest at that side's peak when none holds more). */
    sd_category old_lead, new_lead;
    /* Issue 36: the steps of the two peaks (0: the trace shows none). When both are known
     * and differ, the table above compares unlike moments: steady_step is then the last
     * complete step both traces hold (0: none), with each side's peak inside it and the
     * categories live at those two peaks. */
    uint32_t old_step, new_step;
    uint32_t steady_step;
    uint64_t old_steady_bytes, new_steady_bytes;
    size_t old_steady_entry, new_steady_entry;
    const sd_peak_diff_category *steady_categories; size_t n_steady_categories;
} sd_peak_diff_device;

typedef struct sd_peak_diff sd_peak_diff;

/* Both snapshots' peaks (either may lack a trace: then no device pairs). The diff makes
 * and owns it (sd_diff_peak, diff.h); it lives as long as the diff. */
/* Which sides have a peak on some device: bit 0 OLD, bit 1 NEW. */
unsigned sd_peak_diff_sides(const sd_peak_diff *d);
/* The whole peak analysis of one side (0 OLD, 1 NEW). Unused by the tool, which reads the
 * comparison only; kept because it is a library user's one way to a side's own tables. */
const sd_peak *sd_peak_diff_side(const sd_peak_diff *d, int side);
size_t sd_peak_diff_device_count(const sd_peak_diff *d);
const sd_peak_diff_device *sd_peak_diff_device_at(const sd_peak_diff *d, size_t i);

/* ---- Experimental (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_EXPERIMENTAL; exported in the node LIBSNAPDIFF_EXPERIMENTAL_0.3, with no
 * API or ABI promise (they may change in any release). */
#ifdef SNAPDIFF_EXPERIMENTAL
/* The phases and steps the peak's categories were decided with (category.h). */
const sd_phases *sd_peak_phases(const sd_peak *p);
#endif /* SNAPDIFF_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif
