/* model.h - the inside of sd_snapshot, shared by snapshot.c (public face), take.c (the
 * records taken while the pickle is parsed), model.c (building the rest from the pickle)
 * and intern.c (strings, frames and stacks).
 *
 * Two lifetimes: the model (struct sd_snapshot: its arena, interned strings, records)
 * lives until sd_snapshot_free; the pickle side (struct sdp_load: the value tree, the
 * caches keyed by value address) lives only during the load and is freed before
 * sd_snapshot_load_* returns, so a loaded snapshot holds nothing of the pickle. */
#ifndef SNAPDIFF_MODEL_H
#define SNAPDIFF_MODEL_H

#include <stdatomic.h>

#include "pickle/value.h"
#include "snapdiff/snapshot.h"

enum { SDP_MODEL_MAX_WARNINGS = 64 };

/* An interned string: the model's copy, NUL-terminated. */
typedef struct sdp_str {
    const char *p;
    size_t len;
} sdp_str;

/* Direct-mapped cache slot: value bits (an address in the pickle arena) -> id + 1. */
typedef struct sdp_id_slot {
    uint64_t bits;
    uint32_t id1;
} sdp_id_slot;

/* What a load needs and the loaded model does not. */
typedef struct sdp_ctx_rec {
    uint32_t base, id;
    sd_stack_context ctx;
} sdp_ctx_rec;

/* Records of one kind, in chunks of 2^16 that never move (take.c). */
typedef struct sdp_rec_store {
    uint8_t **chunks;
    size_t n, chunks_cap;
} sdp_rec_store;

typedef struct sdp_load {
    sdp_arena pickle;              /* the value tree; also the budget the model is charged to */
    sd_value root;
    uint64_t trailing;
    int proto;
    sd_error *err;
    uint64_t ctx_offset;           /* innermost container being read: errors about a
                                    * scalar inside it point here */
    /* Recently seen frames lists and frame dicts, by value bits (intern.c): thousands of
     * blocks and trace entries point at the same shared objects, and this keeps those
     * lookups in cache instead of touching each object's header, far away in the arena. */
    sdp_id_slot stack_cache[1 << 16];
    sdp_id_slot frame_cache[1 << 14];
    struct { uint64_t bits; uint8_t action; } action_cache[8]; /* action strings are shared */
    uint8_t (*layouts)[16];        /* per record shape: which field each key fills */
    size_t n_layouts, layouts_cap;
    /* Blocks and segments taken while parsing (take.c), in chunks of the value tree's
     * arena: read into the model's arrays by the build, in the order it always read them. */
    sdp_rec_store blocks, segments;
    /* The last trace entry's frames, interned at the next take (take.c, record_take):
     * the stack cache line it needs is fetched meanwhile instead of waited for. */
    bool deferred;
    uint32_t defer_rec;
    uint64_t defer_frames, defer_offset;
    /* Each new stack's frames list as it was written, value bits (intern.c): most entries
     * of a real trace bring a new list of frames already seen, and a list of the same
     * frame objects is the same stack, found without interning its frames one by one. */
    sdp_htab list_index;           /* ids of list_recs */
    struct sdp_list_rec { uint32_t start, n, stack; } *list_recs;
    size_t n_list_recs, list_recs_cap;
    uint64_t *list_bits;           /* the lists' items, one after another */
    size_t n_list_bits, list_bits_cap;
} sdp_load;

struct sd_snapshot {
    sdp_arena arena;               /* the model: devices, segments, blocks, strings, settings */
    char *source;
    bool legacy_list;

    sd_cuda_device *devices;
    size_t n_devices;

    sdp_str *strings;              /* the interned string pool (malloc) */
    size_t n_strings, strings_cap;
    sdp_htab string_index;
    sd_frame *frames;              /* interned frames (malloc); strings from the pool */
    size_t n_frames, frames_cap;
    sdp_htab frame_index;
    uint32_t *stack_frames;        /* all stacks' frame ids, back to back */
    size_t n_stack_frames, stack_frames_cap;
    uint32_t *stack_start;         /* stack i = stack_frames[stack_start[i] .. stack_start[i+1]) */
    size_t n_stacks, stacks_cap;
    sdp_htab stack_index;

    /* Stacks with context (forward_frames, user_metadata, compile_context): each distinct
     * (frames, context) is a stack id of its own, with the frames of its base stack;
     * stack_ctx[id] holds the context (ids >= n_stack_ctx have none). */
    sd_stack_context *stack_ctx;
    size_t n_stack_ctx, stack_ctx_cap;
    struct sdp_ctx_rec *ctx_recs;  /* the distinct contexts, for the index */
    size_t n_ctx_recs, ctx_recs_cap;
    sdp_htab ctx_index;

    sd_trace_entry *records;       /* trace entries, taken over while parsing (malloc, or
                                    * records_region when that has a base) */
    size_t n_records, records_cap;
    sdp_region records_region;     /* a big input's records grow here, never moved */

    int64_t (*pools)[2];           /* pool ids trace entries name (malloc), first met first */
    size_t n_pools, pools_cap;
    uint16_t last_pool;            /* the last entry's pool: most entries share one */
    bool pools_full;               /* SD_SNAPSHOT_MAX_POOLS reached (warned) */
    sdp_htab pool_index;           /* pool id -> index in pools, while loading */

    sd_allocator_settings settings;
    /* Keys upstream torch never writes, "where.key" (sd_snapshot_foreign_key; model.c). */
    char *foreign_keys[SD_SNAPSHOT_FOREIGN_MAX];
    size_t n_foreign_keys;
    sd_annotation *annotations;    /* external_annotations, in the arena */
    size_t n_annotations;

    /* host_segments / host_traces: pinned host memory, never one of the devices */
    sd_cuda_device host;
    bool has_host;
    uint32_t skip_mask;            /* skip_actions: 1u << sd_trace_action */
    bool has_skip;

    char *warnings[SDP_MODEL_MAX_WARNINGS];
    size_t n_warnings;
    uint64_t warnings_dropped;

    sdp_load *load;                /* during a load only */
    bool is_summary;               /* read from a snapdiff summary (summary_read.c) */
    const char *origin;            /* a summary's: the snapshot it was made from (arena) */
    uint64_t *trace_recorded;      /* a summary's, per device: the entries its snapshot had */

    /* The directory site labels drop (memo.h): filled by the analysis on first use. */
    _Atomic int label_prefix_state;
    const char *label_prefix;
    size_t label_prefix_len;
};

/* intern.c */
sd_status sdp_intern_init(sd_snapshot *s);
void sdp_intern_free(sd_snapshot *s);
/* The model's copy of a string (its bytes up to the first NUL, as sd_frame shows them). */
sd_status sdp_intern_string(sd_snapshot *s, const char *p, size_t n, const char **out);
/* Stack id of a frames list (cached on the list, so shared lists cost one lookup). */
sd_status sdp_intern_stack(sd_snapshot *s, const sd_value *frames, uint32_t *id);
/* Start fetching the cache line that sdp_intern_stack will look at for these frames. */
void sdp_intern_prefetch(sd_snapshot *s, uint64_t frames_bits);
/* The stack id of `base` with a context: `base` itself when the context is empty.
 * forward is a stack id (0: none); the strings are interned ones (or ""). */
sd_status sdp_intern_context(sd_snapshot *s, uint32_t base, uint32_t forward,
                             const char *user_metadata, const char *compile_context,
                             uint32_t *id);
/* Free the lookup tables once the load is done. */
void sdp_intern_drop_indexes(sd_snapshot *s);

/* take.c: the records taken while parsing */
/* The hook that turns trace-entry, block and segment dicts into records while the pickle
 * is parsed. */
sdp_record_hook sdp_model_record_hook(sd_snapshot *s);
/* A segment as the build reads it, from its dict or its record. */
typedef struct sdp_raw_segment {
    sd_segment seg;
    int64_t device;
    uint64_t offset;         /* of the segment's dict */
    const sd_value *blocks;  /* list */
} sdp_raw_segment;
/* What read_block / read_segment / the trace reader make of record `index`, and of a dict
 * that stayed a trace entry. */
sd_status sdp_take_read_block(sd_snapshot *s, uint32_t index, sd_block *b, bool *has_addr);
sd_status sdp_take_block_as_trace(sd_snapshot *s, uint32_t index, sd_trace_entry *e);
sd_status sdp_take_read_segment(sd_snapshot *s, uint32_t index, sdp_raw_segment *r);
sd_status sdp_take_read_trace_entry(sd_snapshot *s, const sd_value *v, sd_trace_entry *e);
/* The sd_trace_action an action string names (SD_ACT_OTHER for any other value). */
uint8_t sdp_take_action_of(const sd_value *x);
/* The trace records once parsing is done: their unused tail given back; and freed. */
void sdp_model_trim_records(sd_snapshot *s);
void sdp_model_free_records(sd_snapshot *s);

/* model.c */
/* Typed readers shared with take.c: an integer field (error naming key and dict), the
 * context of a stack, a value that must be a dict (*st set when it is not). */
sd_status sdp_model_get_int(sd_snapshot *s, const sd_value *dict, const sd_value *v,
                            const char *key, int64_t *out);
sd_status sdp_model_add_context(sd_snapshot *s, const sd_value *forward, const sd_value *meta,
                                const sd_value *cctx, uint32_t *stack);
const sd_value *sdp_model_need_dict(sd_snapshot *s, const sd_value *v, const char *what,
                                    sd_status *st);
/* A value that must be a pair of integers (segment_pool_id, a trace entry's pool_id): an
 * error naming key and dict (NULL: the container being read) when it is not. */
sd_status sdp_model_get_pair(sd_snapshot *s, const sd_value *dict, const sd_value *v,
                             const char *key, int64_t out[2]);
/* The entry pool index (1 + index into s->pools) of a pool id, added when new; 0 past
 * SD_SNAPSHOT_MAX_POOLS ids (warned once). */
sd_status sdp_model_pool_of(sd_snapshot *s, const int64_t id[2], uint16_t *pool);
sd_status sdp_model_build(sd_snapshot *s);
/* Model memory during a load: from the model's arena, charged to the load's budget. */
void *sdp_model_alloc(sd_snapshot *s, size_t size);
sd_status sdp_model_grow(sd_snapshot *s, void **buf, size_t *cap, size_t need, size_t elem);
void sdp_model_warn(sd_snapshot *s, const char *fmt, ...) SDP_PRINTF(2, 3);
/* Where a dict's keys come from, for the keys upstream torch writes (model.c). */
typedef enum sdp_key_where { SDP_KEYS_TOP, SDP_KEYS_SEGMENT, SDP_KEYS_BLOCK,
                             SDP_KEYS_TRACE } sdp_key_where;
/* Note key k of a dict of that kind when upstream torch never writes it. */
void sdp_model_note_key(sd_snapshot *s, sdp_key_where where, const sd_value *k);
sd_status sdp_model_fail(sd_snapshot *s, const sd_value *where, const char *fmt, ...)
    SDP_PRINTF(3, 4);
/* Make c->items readable: a run of records (sdp_cont.run) gets its array, from the load's
 * arena. Every reader of a list's items calls it first; a device's trace, the one list
 * that is a run in practice, is read as a run instead (records_in_order). */
sd_status sdp_model_items(sd_snapshot *s, const sdp_cont *c);

/* summary_read.c: fill s from a summary's bytes (s->load set up as for a pickle). */
sd_status sdp_summary_build(sd_snapshot *s, const uint8_t *data, size_t len, sd_error *err);

#endif
