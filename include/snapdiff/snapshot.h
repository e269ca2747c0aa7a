/* snapshot.h - one normalised model of a CUDA caching-allocator snapshot.
 *
 * Every layout PyTorch has written maps onto it: the bare list of segments (torch <= 1.13,
 * memory_snapshot()), 2.0 blocks with `history`, 2.1+ blocks with `frames`, trace entries
 * with or without frames. Per device: segments, blocks (in segment order, tiling each
 * segment), trace entries. Stacks are interned: identical frame sequences (innermost
 * first) get one stack id, whether or not the pickle shared the object, unless their
 * context (forward_frames, user_metadata, compile_context) differs. Stack id 0 is the
 * empty stack. Records are plain read-only structs; the snapshot itself is opaque and
 * self-contained: it keeps nothing of the pickle it was read from.
 */
#ifndef SNAPDIFF_SNAPSHOT_H
#define SNAPDIFF_SNAPSHOT_H

#include <stdbool.h>
#include "common.h"
#include "source.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sd_snapshot sd_snapshot;

typedef enum sd_block_state {
    SD_BLOCK_INACTIVE,
    SD_BLOCK_ALLOCATED,      /* "active_allocated" */
    SD_BLOCK_PENDING_FREE,   /* "active_pending_free" */
    SD_BLOCK_OTHER,          /* any other state string */
} sd_block_state;

typedef enum sd_trace_action {
    SD_ACT_ALLOC, SD_ACT_FREE_REQUESTED, SD_ACT_FREE_COMPLETED, SD_ACT_SEGMENT_ALLOC,
    SD_ACT_SEGMENT_FREE, SD_ACT_SEGMENT_MAP, SD_ACT_SEGMENT_UNMAP, SD_ACT_OOM,
    SD_ACT_SNAPSHOT, SD_ACT_ANNOTATE, SD_ACT_OTHER,
    SD_ACT_COUNT
} sd_trace_action;

typedef struct sd_frame {
    const char *filename;   /* NUL-terminated, never NULL ("" when absent) */
    const char *name;
    int64_t line;
} sd_frame;

typedef struct sd_segment {
    uint64_t address;
    uint64_t total_size;
    uint64_t stream;
    int64_t pool_id[2];      /* (0,0) = default pool or unknown */
    uint32_t first_block;    /* index into the device's block array */
    uint32_t n_blocks;
    uint32_t stack;          /* stack of the cudaMalloc (2.1+), else 0 */
    bool is_small;           /* segment_type "small" */
    bool is_expandable;
    bool has_pool_id;
} sd_segment;

typedef struct sd_block {
    uint64_t address;        /* from the file (2.1+) or segment start + prefix sum */
    uint64_t size;
    uint64_t requested_size; /* requested_size, else history[0].real_size, else size */
    uint32_t segment;        /* index into the device's segment array */
    uint32_t stack;
    uint8_t state;           /* sd_block_state */
} sd_block;

typedef struct sd_trace_entry {
    union {                  /* an oom entry has no address: the two share a slot */
        uint64_t addr;       /* every action but oom */
        uint64_t device_free; /* oom: the free device memory cudaMemGetInfo reported */
    };
    uint64_t size;           /* for oom: the request that failed */
    uint64_t stream;
    int64_t time_us;         /* valid when has_time */
    uint32_t stack;          /* the entry's frames (0 when it recorded none) */
    uint8_t action;          /* sd_trace_action */
    bool has_time;
    /* The entry's own pool_id (torch main 2026, PR #177717): 0 when it records none
     * (unknown, not the default pool); else 1 + its index for sd_snapshot_pool. Added in
     * 0.3's padding: the struct's size and every other field's offset are unchanged. */
    uint16_t pool;
} sd_trace_entry;

typedef struct sd_cuda_device {
    int64_t device;
    const sd_segment *segments; size_t n_segments;   /* sorted by address */
    const sd_block *blocks;     size_t n_blocks;
    const sd_trace_entry *trace; size_t n_trace;     /* oldest first */
} sd_cuda_device;

/* One recorded setting: a small owned tree, so that reports can show the dict as the
 * snapshot recorded it. Containers are kept four levels deep (deeper ones are empty), at
 * most SD_SETTINGS_MAX_NODES nodes in all; dict members with non-string keys are left
 * out. None, bytes and integers beyond 64 bits read as SD_SETTING_NONE. */
typedef enum sd_setting_type {
    SD_SETTING_NONE, SD_SETTING_BOOL, SD_SETTING_INT, SD_SETTING_FLOAT, SD_SETTING_STR,
    SD_SETTING_LIST,  /* lists and tuples */
    SD_SETTING_DICT,
} sd_setting_type;

enum { SD_SETTINGS_MAX_NODES = 4096 };

typedef struct sd_setting {
    const char *key;         /* a dict member's key (may hold NULs: key_len); else NULL */
    size_t key_len;
    uint8_t type;            /* sd_setting_type */
    bool b;                  /* BOOL */
    int64_t i;               /* INT */
    double f;                /* FLOAT */
    const char *str;         /* STR: UTF-8 as recorded (may hold NULs: str_len) */
    size_t str_len;
    const struct sd_setting *items; /* LIST, DICT: members in recorded order */
    size_t n_items;
} sd_setting;

/* roundup_power2_divisions: {"1": 0, "2": 0, ... "32768": 0}, per power-of-two size
 * interval in MiB, the number of divisions (0 = no rounding). */
typedef struct sd_roundup_division {
    uint64_t interval_mib;   /* the key as a number; 0 when it is not a decimal string */
    int64_t divisions;       /* 0 when the value is not an integer */
} sd_roundup_division;

typedef struct sd_allocator_settings {
    bool present;
    const char *alloc_conf;            /* PYTORCH_CUDA_ALLOC_CONF string or NULL */
    int64_t max_split_size;            /* -1 = unlimited; valid when has_max_split_size */
    double garbage_collection_threshold;
    bool expandable_segments;
    bool has_max_split_size, has_gc_threshold, has_expandable_segments;
    bool has_roundup_power2_divisions; /* recorded as a dict */
    const sd_roundup_division *roundup_power2_divisions;
    size_t n_roundup_power2_divisions;
    const sd_setting *recorded;        /* the whole dict (a SD_SETTING_DICT); NULL if absent */
} sd_allocator_settings;

/* One entry of `external_annotations` (torch 2.5+): a record_function scope's START or
 * END, with the device and time it was recorded for. */
typedef enum sd_annotation_stage { SD_STAGE_OTHER, SD_STAGE_START, SD_STAGE_END } sd_annotation_stage;

typedef struct sd_annotation {
    const char *name;        /* "" when absent */
    int64_t device;          /* -1 when absent */
    int64_t time_us;         /* valid when has_time */
    uint8_t stage;           /* sd_annotation_stage */
    bool has_time;
} sd_annotation;

#define SD_LOAD_OPTIONS_VERSION 1
typedef struct sd_load_options {
    unsigned version;   /* SD_LOAD_OPTIONS_VERSION (growable: common.h) */
    uint64_t max_memory;   /* budget for the load (value tree + model); 0 = unlimited */
} sd_load_options;
#define SD_LOAD_OPTIONS_INIT {SD_LOAD_OPTIONS_VERSION, 0}
sd_status sd_load_options_init(sd_load_options *opts, unsigned version);

/* Build the model from snapshot bytes. The bytes are only read during the call (the
 * snapshot keeps copies of what it needs).
 * @return the snapshot, or NULL with err filled (err->source set from `source`). */
sd_snapshot *sd_snapshot_load_buffer(const uint8_t *data, size_t len, const char *source,
                                     const sd_load_options *opts, sd_error *err);
/* Load member i of an opened input; the snapshot owns the bytes it read. */
sd_snapshot *sd_snapshot_load_input(sd_input *in, size_t i, const sd_load_options *opts,
                                    sd_error *err);
/* Convenience: open `spec`, require exactly one member, load it. */
sd_snapshot *sd_snapshot_load_file(const char *spec, const sd_load_options *opts,
                                   sd_error *err);
void sd_snapshot_free(sd_snapshot *s);

const char *sd_snapshot_source(const sd_snapshot *s);
bool sd_snapshot_is_legacy_list(const sd_snapshot *s);  /* top level was a bare list */
/* Read from a snapdiff summary (summary.h), not a snapshot: the model holds only part of
 * the trace, so replays and trace counts need the snapshot itself. */
bool sd_snapshot_is_summary(const sd_snapshot *s);
/* The snapshot it was read from: for a summary, the snapshot the summary was made from (as
 * named when it was made); else sd_snapshot_source. */
const char *sd_snapshot_origin(const sd_snapshot *s);
/* How many trace entries the snapshot recorded for device i: n_trace, except for a
 * summary, which keeps fewer than its snapshot had. */
uint64_t sd_snapshot_trace_recorded(const sd_snapshot *s, size_t i);

size_t sd_snapshot_device_count(const sd_snapshot *s);   /* sorted by device ordinal */
const sd_cuda_device *sd_snapshot_device(const sd_snapshot *s, size_t i);
/* `oom` entries in the traces of every device (0 without a trace). */
uint64_t sd_snapshot_oom_count(const sd_snapshot *s);
/* The keys this snapshot holds that upstream torch never writes: sd_snapshot_foreign_key
 * (experimental, below). */
#define SD_SNAPSHOT_FOREIGN_MAX 8

size_t sd_snapshot_stack_count(const sd_snapshot *s);
/* Frames of stack `id`, innermost first, as indices for sd_snapshot_frame. */
const uint32_t *sd_snapshot_stack(const sd_snapshot *s, uint32_t id, size_t *n_frames);
const sd_frame *sd_snapshot_frame(const sd_snapshot *s, uint32_t frame_id);

/* What newer torch records beside a block's or trace entry's frames. A stack id carries
 * it: equal frames with different context get different stack ids (the same frames). */
typedef struct sd_stack_context {
    uint32_t forward_stack;       /* forward_frames: the Python stack of the forward op
                                   * whose autograd node allocated this during backward;
                                   * 0 when none was recorded */
    const char *user_metadata;    /* "" when none */
    const char *compile_context;  /* "" when none */
} sd_stack_context;

/* The context of stack `id`; never NULL (an empty context when it has none). */
const sd_stack_context *sd_snapshot_stack_context(const sd_snapshot *s, uint32_t id);

const sd_allocator_settings *sd_snapshot_allocator_settings(const sd_snapshot *s);

/* `external_annotations`, in recorded order (entries that are not dicts are left out). */
size_t sd_snapshot_annotation_count(const sd_snapshot *s);
const sd_annotation *sd_snapshot_annotation(const sd_snapshot *s, size_t i);

/* Pinned host memory: `host_segments` and `host_traces` (torch's CachingHostAllocator,
 * recorded with _record_memory_history(record_pinned_host_memory=True)). A section of its
 * own, never a device: no device figure and no total over devices includes it. Its
 * segments are sorted by address and its blocks tile them as a device's do; device is -1.
 * NULL when the snapshot has neither key. */
const sd_cuda_device *sd_snapshot_host_memory(const sd_snapshot *s);

/* The trace actions the recording was told to skip (_record_memory_history(skip_actions=
 * [...])), as a mask of 1u << sd_trace_action; a name this library does not know sets the
 * SD_ACT_OTHER bit. @return false when the snapshot does not record skip_actions: whether
 * anything was skipped is then unknown (*mask is 0). */
bool sd_snapshot_skipped_actions(const sd_snapshot *s, uint32_t *mask);

/* The distinct pool ids trace entries record (`pool_id`: (0, 0) is the default pool, any
 * other a CUDA graph's or a MemPool's private pool), in the order first met; an entry's
 * `pool` is 1 + an index here. Past SD_SNAPSHOT_MAX_POOLS distinct ids an entry's pool
 * reads as unknown (a load warning says so). */
enum { SD_SNAPSHOT_MAX_POOLS = 65535 };
size_t sd_snapshot_pool_count(const sd_snapshot *s);
/* Pool i's id into id[2]. @return false (id untouched) when i is out of range. */
bool sd_snapshot_pool(const sd_snapshot *s, size_t i, int64_t id[2]);

/* Things that were inconsistent but did not stop the load ("segment 0x... at offset N:
 * blocks sum to X, total_size says Y"); also the note about bytes after STOP. */
size_t sd_snapshot_warning_count(const sd_snapshot *s);
const char *sd_snapshot_warning(const sd_snapshot *s, size_t i);

const char *sd_block_state_name(sd_block_state st);
const char *sd_trace_action_name(sd_trace_action a);

/* ---- Render tier (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_RENDER_API; exported in the node LIBSNAPDIFF_RENDER_0.3. Words and
 * layout for people, which change with the tool's output: no API promise past the
 * SONAME's. */
#ifdef SNAPDIFF_RENDER_API
/* The figures read from the trace that skipping the actions in `mask` makes unreliable,
 * as fixed phrases ("the trace's peak", ...), in a fixed order; at most cap are stored.
 * Figures read from the segments and blocks are never among them.
 * @return how many there are. */
size_t sd_skip_unreliable_figures(uint32_t mask, const char **figures, size_t cap);
#endif /* SNAPDIFF_RENDER_API */

/* ---- Experimental (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_EXPERIMENTAL; exported in the node LIBSNAPDIFF_EXPERIMENTAL_0.3. */
#ifdef SNAPDIFF_EXPERIMENTAL
/* Keys upstream torch never writes (torch/csrc/cuda/memory_snapshot.cpp), met in the
 * top-level dict, a segment, a block or a trace entry: a patched torch build, whose
 * allocator the replay's model may not follow. Distinct names as "where.key" (where is
 * snapshot, segment, block or trace), first met first, at most SD_SNAPSHOT_FOREIGN_MAX
 * kept; a summary keeps none. */
size_t sd_snapshot_foreign_key_count(const sd_snapshot *s);
const char *sd_snapshot_foreign_key(const sd_snapshot *s, size_t i);
#endif

#ifdef __cplusplus
}
#endif

#endif
