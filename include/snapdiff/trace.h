/* trace.h - the recorded allocation history of one snapshot (`device_traces`), replayed.
 *
 * Per device (device = index in `device_traces`), the entries of a window (all of them, or
 * those between --since and --until) are replayed in order. An `alloc` makes a block live
 * at its address; the first `free_requested` or `free_completed` at that address releases
 * it (a requested free is the user's release, even while the allocator still waits on a
 * stream). Traces recorded with `skip_actions` (no free_requested) release at
 * free_completed. A free of an address that holds no block allocated inside the window
 * is a block allocated before the window: counted as an unknown free, and the window
 * "starts mid-run". A second alloc at an address whose block was never freed ends the
 * first one (its free was not recorded) and is counted too.
 *
 * Live bytes are the bytes allocated inside the window and not yet released: they start
 * at 0 at the window's first entry. The peak is peak.h's: it counts the blocks live when
 * recording began as well (window_peak_bytes is the live bytes' own maximum). Blocks alive at the end are grouped like the diff
 * (attrib.h); focus patterns filter the groups only, never the device totals.
 *
 * Phases: `snapshot` and `annotate` entries, and `external_annotations` of the device
 * (placed at the first entry recorded at or after their time), split the window; each
 * phase has its live-bytes growth. Definitions: docs/json-trace.md; tests/truth/truth_trace.py
 * replays the same events in Python.
 */
#ifndef SNAPDIFF_TRACE_H
#define SNAPDIFF_TRACE_H

#include <stdbool.h>
#include "attrib.h"
#include "category.h"
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sd_trace_bound_kind {
    SD_BOUND_NONE,      /* no bound */
    SD_BOUND_INDEX,     /* an entry index of the device's trace, 0 = the oldest */
    SD_BOUND_TIME,      /* a time_us as recorded (microseconds since the epoch) */
    SD_BOUND_OFFSET,    /* microseconds after the device's first recorded time */
} sd_trace_bound_kind;

typedef struct sd_trace_bound {
    sd_trace_bound_kind kind;
    int64_t value;
} sd_trace_bound;

#define SD_TRACE_OPTIONS_VERSION 1
typedef struct sd_trace_options {
    unsigned version;   /* SD_TRACE_OPTIONS_VERSION (growable: common.h) */
    sd_attrib_options attrib;
    /* The window: entries with since <= position < until (index, or time: entries without
     * a time are outside a time-bounded window). */
    sd_trace_bound since, until;
    uint64_t max_memory;             /* budget for the analysis' tables; 0 = unlimited */
} sd_trace_options;
#define SD_TRACE_OPTIONS_INIT \
    {SD_TRACE_OPTIONS_VERSION, SD_ATTRIB_OPTIONS_INIT, {SD_BOUND_NONE, 0}, {SD_BOUND_NONE, 0}, \
     0}
sd_status sd_trace_options_init(sd_trace_options *opts, unsigned version);

typedef enum sd_trace_warning_code {
    SD_TRACE_OVERFLOWED,      /* allocator_settings.trace_alloc_overflowed: entries were lost */
    SD_TRACE_STARTS_MID_RUN,  /* frees of blocks allocated before the window */
    SD_TRACE_UNRECORDED_FREE, /* an alloc at an address whose block was never freed */
    SD_TRACE_NO_TIMES,        /* the entries carry no time_us: no span, rates or time bounds */
    SD_TRACE_FREES_MISSING,   /* blocks the trace leaves alive at its end that the snapshot
                               * shows free: their frees were not recorded (skip_actions,
                               * which torch 2.11 does not write down, or lost) */
    SD_TRACE_WARNING_COUNT
} sd_trace_warning_code;

/* "ring-buffer-overflowed", "starts-mid-run", "unrecorded-free", "no-times",
 * "frees-missing". */
const char *sd_trace_warning_name(sd_trace_warning_code c);

typedef struct sd_trace_warning {
    sd_trace_warning_code code;
    uint64_t count;           /* entries concerned (0 for ring-buffer-overflowed, no-times) */
    uint64_t bytes;           /* their bytes */
} sd_trace_warning;

typedef struct sd_trace_group {
    const char *key;
    const sd_frame *site;     /* the site frame of the key's largest stack; NULL if none */
    uint32_t rep_stack;       /* that stack (0 = no frames) */
    uint64_t alive_bytes, alive_count;   /* allocated in the window, alive at its end */
    uint64_t alloc_bytes, alloc_count;   /* allocs in the window */
    uint64_t free_bytes, free_count;     /* of those allocs, released in the window */
} sd_trace_group;

typedef enum sd_trace_phase_kind {
    SD_PHASE_START,           /* the window's start */
    SD_PHASE_SNAPSHOT,        /* a `snapshot` entry */
    SD_PHASE_ANNOTATE,        /* an `annotate` entry */
    SD_PHASE_SCOPE_START,     /* an external annotation, stage START */
    SD_PHASE_SCOPE_END,       /* an external annotation, stage END (or no stage) */
} sd_trace_phase_kind;

/* "start", "snapshot", "annotate", "scope-start", "scope-end". */
const char *sd_trace_phase_kind_name(sd_trace_phase_kind k);

typedef struct sd_trace_phase {
    sd_trace_phase_kind kind;
    const char *name;         /* the external annotation's name; NULL otherwise */
    size_t first_entry;       /* index into the device's trace */
    size_t n_entries;
    bool has_time;
    int64_t start_us, end_us; /* first and last recorded time of the phase's entries */
    uint64_t live_start, live_end;   /* live bytes before its first entry, after its last */
    int64_t growth;           /* live_end - live_start */
    uint64_t alloc_count, alloc_bytes, free_count, free_bytes;
} sd_trace_phase;

/* The timeline by phase of a training step (category.h, docs/categories.md): a run of
 * consecutive entries of the window with one phase and step. Live bytes as the marker
 * phases count them (allocated inside the window and not yet released). */
typedef struct sd_trace_step_phase {
    sd_step_phase phase;
    uint32_t step;            /* 0: the trace shows no steps */
    size_t first_entry;       /* index into the device's trace */
    size_t n_entries;
    bool has_time;
    int64_t start_us, end_us; /* first and last recorded time of its entries */
    uint64_t live_start, live_end;
    int64_t growth;           /* live_end - live_start */
    uint64_t alloc_count, alloc_bytes, free_count, free_bytes;
    bool has_peak;            /* the peak's alloc (peak_entry) is one of its entries */
} sd_trace_step_phase;

/* A block allocated in the window and alive at its end. */
typedef struct sd_trace_block {
    uint64_t addr, size;
    size_t entry;             /* index of its alloc in the device's trace */
    uint32_t stack;
} sd_trace_block;

/* The window's entries of one pool, by the pool_id each entry records (torch main 2026,
 * PR #177717): (0, 0) is the default pool, any other a private pool (a CUDA graph's or a
 * MemPool's). Entries that record no pool_id are in none (no_pool_entries). */
typedef struct sd_trace_pool {
    int64_t pool_id[2];
    uint64_t entries;
    uint64_t alloc_count, alloc_bytes;     /* alloc entries, their requested bytes */
    uint64_t segment_bytes;                /* segment_alloc and segment_map bytes */
    uint64_t alive_count, alive_bytes;     /* of `alive`: blocks live at the window's end */
} sd_trace_pool;

typedef struct sd_trace_device {
    int64_t device;
    size_t total_entries;     /* entries in the device's trace */
    size_t first_entry, n_entries;   /* the window */
    uint64_t alive_bytes, alive_count;
    uint64_t alloc_bytes, alloc_count, free_bytes, free_count;
    uint64_t unknown_free_bytes, unknown_free_count;
    /* Entries and segment bytes per action: sd_trace_device_action_count and
     * sd_trace_device_segment_bytes (kept out of this struct: they grow with
     * sd_trace_action). */
    /* The peak (peak.h, docs/peak.md: blocks live when recording began included), reached
     * by the alloc at peak_entry. */
    bool has_peak;
    uint64_t peak_bytes;
    size_t peak_entry;
    bool peak_has_time;
    int64_t peak_time_us;
    uint32_t peak_stack;
    const char *peak_key;             /* its group key (NULL when no peak) */
    const sd_frame *peak_site;        /* its site frame; NULL if none */
    /* Time span of the window's timed entries; rates per second when the span is > 0. */
    bool has_span;
    int64_t first_time_us, last_time_us, span_us;
    bool has_rates;
    double allocs_per_s, alloc_bytes_per_s, frees_per_s;
    const sd_trace_warning *warnings; size_t n_warnings;
    const sd_trace_phase *phases; size_t n_phases;
    const sd_trace_group *groups; size_t n_groups;   /* largest alive_bytes first */
    const sd_trace_block *alive; size_t n_alive;     /* by address */
    /* The most bytes allocated inside the window live at once (live bytes as above);
     * not the peak. */
    uint64_t window_peak_bytes;
    uint64_t peak_start_bytes;        /* the peak's figure at the window's start */
    /* The peak's phase and step, and what was live then by category (peak.h's). */
    bool peak_has_phase;
    sd_step_phase peak_phase;
    uint32_t peak_step;               /* 0: the trace shows no steps */
    const sd_category_total *peak_categories; size_t n_peak_categories;
    /* The window's entries grouped by phase and step, in order (one run, phase other, when
     * the trace shows no phase). */
    const sd_trace_step_phase *step_phases; size_t n_step_phases;
    /* Added in 0.3 (the library owns this struct; fields only appended): the window's
     * entries per pool_id, in the order the snapshot first names each pool; none when no
     * entry of the window records a pool_id. */
    const sd_trace_pool *pools; size_t n_pools;
    uint64_t no_pool_entries;         /* the window's entries that record no pool_id */
} sd_trace_device;

typedef struct sd_trace sd_trace;

/* Replay every device that has trace entries. `s` must outlive the result (frames and
 * keys point into it or into the result).
 * @return the replay, or NULL with err (SD_EUSAGE: a bad pattern; SD_ENOMEM). */
sd_trace *sd_trace_create(const sd_snapshot *s, const sd_trace_options *opts, sd_error *err);
void sd_trace_free(sd_trace *t);

const sd_snapshot *sd_trace_snapshot(const sd_trace *t);
const sd_attrib *sd_trace_attrib(const sd_trace *t);
size_t sd_trace_device_count(const sd_trace *t);
const sd_trace_device *sd_trace_device_at(const sd_trace *t, size_t i);
/* Entries of action `a` in the device's window; 0 for an action past the ones this
 * library knows. `d` must be a pointer the trace handed out (not a copy). */
uint64_t sd_trace_device_action_count(const sd_trace_device *d, sd_trace_action a);
/* Bytes of the window's segment_alloc / segment_free / segment_map / segment_unmap
 * entries of action `a`; 0 for any other action. Same rules as above. */
uint64_t sd_trace_device_segment_bytes(const sd_trace_device *d, sd_trace_action a);

#ifdef __cplusplus
}
#endif

#endif
