/* take.c - the records the model takes over while the pickle is parsed (the record hook):
 * trace entries, blocks and segments, straight from the parser into compact records, never
 * as dicts; and the trace records' storage (a region that never moves). The build
 * (model.c) reads the block and segment records into the model's arrays.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/model.h"

static bool str_is(const sd_value *v, const char *lit)
{
    return sdp_str_eq(*v, lit, strlen(lit));
}

/* ---------- record stores ---------- */

enum { STORE_CHUNK_LOG2 = 16, STORE_CHUNK = 1 << STORE_CHUNK_LOG2 };

/* A new record of `elem` bytes at the end of the store, NULL when the budget is spent. */
static void *store_add(sdp_load *L, sdp_rec_store *st, size_t elem)
{
    size_t chunk = st->n >> STORE_CHUNK_LOG2;
    if ((st->n & (STORE_CHUNK - 1)) == 0) {
        if (chunk == st->chunks_cap) {
            size_t ncap = st->chunks_cap ? 2 * st->chunks_cap : 16;
            uint8_t **nt = sdp_arena_alloc(&L->pickle, ncap * sizeof *nt);
            if (!nt) return NULL;
            if (chunk) memcpy(nt, st->chunks, chunk * sizeof *nt);
            st->chunks = nt;
            st->chunks_cap = ncap;
        }
        st->chunks[chunk] = sdp_arena_alloc(&L->pickle, elem * STORE_CHUNK);
        if (!st->chunks[chunk]) return NULL;
    }
    return st->chunks[chunk] + (st->n++ & (STORE_CHUNK - 1)) * elem;
}

static const void *store_at(const sdp_rec_store *st, size_t elem, uint32_t i)
{
    return st->chunks[i >> STORE_CHUNK_LOG2] + (i & (STORE_CHUNK - 1)) * elem;
}

/* ---------- blocks straight from the parser ----------
 * A dict whose keys are block keys only (address, size, requested_size, state, frames),
 * each once, with a size, is taken as a 40-byte block record when its values are what
 * read_block accepts; its frames are interned by the build, in the order they always
 * were. Anything else stays a dict, and the build reads it (and reports it) as before. */
enum { BF_ADDRESS = 1, BF_SIZE, BF_REQUESTED, BF_STATE, BF_FRAMES };
enum { BLOCK_KIND = 0x80000000u, SEGMENT_KIND = 0x40000000u };
enum { BR_HAS_ADDR = 1, BR_HAS_REQUESTED = 2 };

typedef struct sdp_block_rec {
    uint64_t address, size, requested_size;
    uint64_t frames;          /* value bits of 'frames'; 0 when absent */
    uint64_t packed;          /* dict offset << 16 | state << 8 | BR_ flags */
} sdp_block_rec;

static uint8_t block_field_of(const sd_value *k)
{
    static const struct { const char *key; uint8_t field; } fields[] = {
        {"address", BF_ADDRESS}, {"size", BF_SIZE}, {"requested_size", BF_REQUESTED},
        {"state", BF_STATE}, {"frames", BF_FRAMES}};
    for (size_t i = 0; i < SDP_ARRAY_LEN(fields); i++)
        if (sdp_str_eq(*k, fields[i].key, strlen(fields[i].key))) return fields[i].field;
    return 0;
}

/* The layout of a block dict's keys, false when they are not a block's. */
static bool block_layout(const sd_value *keys, uint32_t n, uint8_t layout[16])
{
    unsigned seen = 0;
    if (n > 5) return false;
    for (uint32_t i = 0; i < n; i++) {
        layout[i] = block_field_of(&keys[i]);
        if (!layout[i] || (seen & 1u << layout[i])) return false;
        seen |= 1u << layout[i];
    }
    return (seen & 1u << BF_SIZE) != 0;
}

static const sdp_block_rec *block_rec(const sdp_load *L, uint32_t i)
{
    return store_at(&L->blocks, sizeof(sdp_block_rec), i);
}

static bool block_size_of(sd_value x, uint64_t *out)
{
    int64_t v;
    if ((x.bits & SDP_TAG_MASK) == SDP_TAG_INT) v = (int64_t)x.bits >> 3;
    else if (!sdp_int_of(x, &v)) return false;
    *out = (uint64_t)v;
    return v >= 0;
}

static uint8_t block_state_of(const sd_value *x)
{
    if (str_is(x, "active_allocated")) return SD_BLOCK_ALLOCATED;
    if (str_is(x, "inactive")) return SD_BLOCK_INACTIVE;
    if (str_is(x, "active_pending_free")) return SD_BLOCK_PENDING_FREE;
    return SD_BLOCK_OTHER;
}

/* A block dict's pairs into a block record; *rec stays 0 when a value is not what
 * read_block accepts (the dict is then built and read, and its error reported, as ever). */
static sd_status block_take(sd_snapshot *s, const uint8_t *layout, const sd_value *kv,
                            size_t n, uint64_t offset, sd_value *rec)
{
    sdp_load *L = s->load;
    sdp_block_rec r = {0, 0, 0, 0, 0};
    uint64_t state = SD_BLOCK_OTHER, flags = 0;
    rec->bits = 0;
    for (size_t i = 0; i < n; i++) {
        sd_value x = kv[2 * i + 1];
        switch (layout[i]) {
        case BF_ADDRESS: if (!block_size_of(x, &r.address)) return SD_OK; flags |= BR_HAS_ADDR; break;
        case BF_SIZE: if (!block_size_of(x, &r.size)) return SD_OK; break;
        case BF_REQUESTED:
            if (!block_size_of(x, &r.requested_size)) return SD_OK;
            flags |= BR_HAS_REQUESTED;
            break;
        case BF_STATE:
            if (sdp_type(x) != SDP_STR) return SD_OK;
            state = block_state_of(&x);
            break;
        default: r.frames = x.bits; break;
        }
    }
    if (offset >= (uint64_t)1 << 47 || L->blocks.n >= UINT32_MAX) return SD_OK;
    r.packed = offset << 16 | state << 8 | flags;
    uint32_t index = (uint32_t)L->blocks.n;
    sdp_block_rec *slot = store_add(L, &L->blocks, sizeof r);
    if (!slot) return sdp_fail(L->err, SD_ENOMEM, offset, "memory budget exhausted building the model");
    *slot = r;
    *rec = sdp_record_value(SDP_REC_BLOCK, index);
    return SD_OK;
}

/* What read_block makes of a block record. */
static sd_status read_block_rec(sd_snapshot *s, const sdp_block_rec *r, sd_block *b,
                                bool *has_addr)
{
    s->load->ctx_offset = r->packed >> 16;
    memset(b, 0, sizeof *b);
    b->address = r->address;
    b->size = r->size;
    b->requested_size = (r->packed & BR_HAS_REQUESTED) ? r->requested_size : r->size;
    b->state = (uint8_t)(r->packed >> 8);
    *has_addr = (r->packed & BR_HAS_ADDR) != 0;
    if (!r->frames) return SD_OK;
    sd_value frames = {r->frames};
    return sdp_intern_stack(s, &frames, &b->stack);
}

/* What read_trace_entry makes of a block record (its dict in a trace list): a trace entry
 * of action "other" with the block's size and frames ('address' is not 'addr'). */
static sd_status trace_of_block_rec(sd_snapshot *s, const sdp_block_rec *r, sd_trace_entry *e)
{
    memset(e, 0, sizeof *e);
    e->action = SD_ACT_OTHER;
    e->size = r->size;
    s->load->ctx_offset = r->packed >> 16;
    if (!r->frames) return SD_OK;
    sd_value frames = {r->frames};
    return sdp_intern_stack(s, &frames, &e->stack);
}

/* ---------- segments straight from the parser ----------
 * A dict whose keys are segment keys only, each once, with an address, a total_size and
 * blocks, is taken as a segment record when its values are what read_segment accepts;
 * its frames are interned by the build (pass 1, in list order, as read_segment does). */
enum { SF_DEVICE = 1, SF_ADDRESS, SF_TOTAL, SF_ALLOCATED, SF_ACTIVE, SF_REQUESTED, SF_STREAM,
       SF_TYPE, SF_POOL, SF_EXPANDABLE, SF_BLOCKS, SF_FRAMES };
enum { SR_SMALL = 1, SR_EXPANDABLE = 2, SR_POOL = 4 };

typedef struct sdp_segment_rec {
    uint64_t address, total_size, stream;
    int64_t pool_id[2];
    int64_t device;
    sd_value blocks;          /* the list */
    uint64_t frames;          /* value bits of 'frames'; 0 when absent */
    uint64_t packed;          /* dict offset << 16 | SR_ flags */
} sdp_segment_rec;

static bool segment_layout(const sd_value *keys, uint32_t n, uint8_t layout[16])
{
    static const char *const names[] = {
        [SF_DEVICE] = "device", [SF_ADDRESS] = "address", [SF_TOTAL] = "total_size",
        [SF_ALLOCATED] = "allocated_size", [SF_ACTIVE] = "active_size",
        [SF_REQUESTED] = "requested_size", [SF_STREAM] = "stream",
        [SF_TYPE] = "segment_type", [SF_POOL] = "segment_pool_id",
        [SF_EXPANDABLE] = "is_expandable", [SF_BLOCKS] = "blocks", [SF_FRAMES] = "frames"};
    unsigned seen = 0;
    if (n > 16) return false;
    for (uint32_t i = 0; i < n; i++) {
        layout[i] = 0;
        for (uint8_t f = SF_DEVICE; f <= SF_FRAMES && !layout[i]; f++)
            if (sdp_str_eq(keys[i], names[f], strlen(names[f]))) layout[i] = f;
        if (!layout[i] || (seen & 1u << layout[i])) return false;
        seen |= 1u << layout[i];
    }
    unsigned need = 1u << SF_ADDRESS | 1u << SF_TOTAL | 1u << SF_BLOCKS;
    return (seen & need) == need;
}

static sd_status segment_take(sd_snapshot *s, const uint8_t *layout, const sd_value *kv,
                              size_t n, uint64_t offset, sd_value *rec)
{
    sdp_load *L = s->load;
    sdp_segment_rec r;
    memset(&r, 0, sizeof r);
    uint64_t flags = 0;
    int64_t v;
    rec->bits = 0;
    for (size_t i = 0; i < n; i++) {
        sd_value x = kv[2 * i + 1];
        const sdp_cont *c;
        switch (layout[i]) {
        case SF_DEVICE: if (!sdp_int_of(x, &r.device)) return SD_OK; break;
        case SF_ADDRESS: if (!block_size_of(x, &r.address)) return SD_OK; break;
        case SF_TOTAL: if (!block_size_of(x, &r.total_size)) return SD_OK; break;
        case SF_STREAM: if (!sdp_int_of(x, &v)) return SD_OK; r.stream = (uint64_t)v; break;
        case SF_TYPE: if (str_is(&x, "small")) flags |= SR_SMALL; break;
        case SF_EXPANDABLE: if (sd_value_bool(&x)) flags |= SR_EXPANDABLE; break;
        case SF_POOL:
            c = sdp_cont_of(x);
            if (!c || c->type == SDP_DICT || c->n != 2 || c->run || !c->items ||
                !sdp_int_of(c->items[0], &r.pool_id[0]) || !sdp_int_of(c->items[1], &r.pool_id[1]))
                return SD_OK;
            flags |= SR_POOL;
            break;
        case SF_BLOCKS: if (sdp_type(x) != SDP_LIST) return SD_OK; r.blocks = x; break;
        case SF_FRAMES: r.frames = x.bits; break;
        default: break; /* allocated_size, active_size, requested_size: not read */
        }
    }
    if (offset >= (uint64_t)1 << 47 || L->segments.n >= UINT32_MAX) return SD_OK;
    r.packed = offset << 16 | flags;
    uint32_t index = (uint32_t)L->segments.n;
    sdp_segment_rec *slot = store_add(L, &L->segments, sizeof r);
    if (!slot) return sdp_fail(L->err, SD_ENOMEM, offset, "memory budget exhausted building the model");
    *slot = r;
    *rec = sdp_record_value(SDP_REC_SEGMENT, index);
    return SD_OK;
}

/* What read_segment makes of a segment record. */
static sd_status read_segment_rec(sd_snapshot *s, const sdp_segment_rec *rec, sdp_raw_segment *r)
{
    memset(r, 0, sizeof *r);
    r->offset = rec->packed >> 16;
    s->load->ctx_offset = r->offset;
    r->device = rec->device;
    r->blocks = &rec->blocks;
    r->seg.address = rec->address;
    r->seg.total_size = rec->total_size;
    r->seg.stream = rec->stream;
    r->seg.pool_id[0] = rec->pool_id[0];
    r->seg.pool_id[1] = rec->pool_id[1];
    r->seg.has_pool_id = (rec->packed & SR_POOL) != 0;
    r->seg.is_small = (rec->packed & SR_SMALL) != 0;
    r->seg.is_expandable = (rec->packed & SR_EXPANDABLE) != 0;
    if (!rec->frames) return SD_OK;
    sd_value frames = {rec->frames};
    return sdp_intern_stack(s, &frames, &r->seg.stack);
}

/* ---------- trace entries ---------- */

uint8_t sdp_take_action_of(const sd_value *x)
{
    static const char *const names[] = {
        [SD_ACT_ALLOC] = "alloc", [SD_ACT_FREE_REQUESTED] = "free_requested",
        [SD_ACT_FREE_COMPLETED] = "free_completed", [SD_ACT_SEGMENT_ALLOC] = "segment_alloc",
        [SD_ACT_SEGMENT_FREE] = "segment_free", [SD_ACT_SEGMENT_MAP] = "segment_map",
        [SD_ACT_SEGMENT_UNMAP] = "segment_unmap", [SD_ACT_OOM] = "oom",
        [SD_ACT_SNAPSHOT] = "snapshot", [SD_ACT_ANNOTATE] = "annotate"};
    for (uint8_t a = 0; a < SD_ACT_OTHER; a++)
        if (str_is(x, names[a])) return a;
    return SD_ACT_OTHER;
}

/* ---------- the record hook: trace entries straight from the parser ---------- */

/* Each trace-entry shape is decoded once into a layout: the field each key position fills.
 * Taking a record is then a switch per value, with no string compares. */
enum { F_OTHER, F_ACTION, F_ADDR, F_SIZE, F_STREAM, F_DEVICE_FREE, F_TIME, F_FRAMES,
       F_FORWARD, F_META, F_CCTX, F_POOL };

static uint8_t field_of(const sd_value *k)
{
    static const struct { const char *key; uint8_t field; } fields[] = {
        {"action", F_ACTION}, {"addr", F_ADDR}, {"size", F_SIZE}, {"stream", F_STREAM},
        {"device_free", F_DEVICE_FREE}, {"time_us", F_TIME}, {"frames", F_FRAMES},
        {"forward_frames", F_FORWARD}, {"user_metadata", F_META}, {"compile_context", F_CCTX},
        {"pool_id", F_POOL}};
    for (size_t i = 0; i < SDP_ARRAY_LEN(fields); i++)
        if (sdp_str_eq(*k, fields[i].key, strlen(fields[i].key))) return fields[i].field;
    return F_OTHER;
}

/* Every entry names its action with the same few shared strings: compare pointers first. */
static uint8_t cached_action(sd_snapshot *s, const sd_value *x)
{
    size_t slot = (size_t)(x->bits >> 3) & 7;
    sdp_load *L = s->load;
    if (sdp_is_ptr(*x) && L->action_cache[slot].bits == x->bits) return L->action_cache[slot].action;
    uint8_t a = sdp_take_action_of(x);
    if (sdp_is_ptr(*x)) {
        L->action_cache[slot].bits = x->bits;
        L->action_cache[slot].action = a;
    }
    return a;
}

static uint32_t record_kind(void *ctx, const sd_value *keys, uint32_t n)
{
    sd_snapshot *s = ctx;
    sdp_load *L = s->load;
    uint8_t layout[16] = {0};
    bool is_trace = false;
    for (uint32_t i = 0; i < n && i < 16; i++) {
        layout[i] = field_of(&keys[i]);
        is_trace |= layout[i] == F_ACTION; /* only trace entries have an action */
    }
    for (uint32_t i = 0; is_trace && i < n; i++)   /* a patched build's keys (model.c) */
        if (i >= 16 || layout[i] == F_OTHER) sdp_model_note_key(s, SDP_KEYS_TRACE, &keys[i]);
    uint32_t cls = 0;
    if (!is_trace) {
        if (block_layout(keys, n, layout)) cls = BLOCK_KIND;
        else if (segment_layout(keys, n, layout)) cls = SEGMENT_KIND;
        else return 0;
    }
    /* 65536 shapes at most; past that a dict stays a dict: slower, still correct. */
    if (L->n_layouts >= 65536) return 0;
    if (sdp_grow((void **)&L->layouts, &L->layouts_cap, L->n_layouts + 1, sizeof *L->layouts,
                 &L->pickle) != SD_OK)
        return 0;
    /* The layout every entry of a 2.1+ snapshot has gets a straight-line decoder
     * (record_take); byte 15 is free, since such an entry has 6 keys. */
    static const uint8_t usual[6] = {F_ACTION, F_ADDR, F_SIZE, F_STREAM, F_TIME, F_FRAMES};
    if (!cls && n == 6 && memcmp(layout, usual, sizeof usual) == 0) layout[15] = 1;
    memcpy(L->layouts[L->n_layouts], layout, sizeof layout);
    return (uint32_t)++L->n_layouts | cls;
}

/* addr and device_free share a slot in sd_trace_entry: both are kept until the action is
 * known, whatever the key order. */
typedef struct taking {
    sd_trace_entry *e;
    uint64_t addr, dfree;
    bool has_dfree;
    bool may_defer;           /* frames may be left for the next take (record_take) */
    uint64_t deferred;        /* the frames so left (value bits), 0 when none */
    const sd_value *forward, *meta, *cctx;   /* context, applied once the frames are known */
} taking;

/* pool_id: a pair of integers, kept as an index into the snapshot's pool table (most
 * entries of a trace name the same few pools). */
static sd_status take_pool(sd_snapshot *s, const sd_value *x, sd_trace_entry *e)
{
    int64_t id[2];
    sd_status st = sdp_model_get_pair(s, NULL, x, "pool_id", id);
    return st ? st : sdp_model_pool_of(s, id, &e->pool);
}

static sd_status take_field(sd_snapshot *s, uint8_t field, const sd_value *x, taking *t)
{
    sd_trace_entry *e = t->e;
    int64_t v = 0;
    static const char *const names[] = {"", "action", "addr", "size", "stream", "device_free",
                                        "time_us", "frames"};
    switch (field) {
    case F_ACTION: e->action = cached_action(s, x); return SD_OK;
    case F_FRAMES:
        if (t->may_defer && sdp_is_ptr(*x)) {
            t->deferred = x->bits;
            return SD_OK;
        }
        t->deferred = 0;
        return sdp_intern_stack(s, x, &e->stack);
    case F_FORWARD: t->forward = x; return SD_OK;
    case F_META: t->meta = x; return SD_OK;
    case F_CCTX: t->cctx = x; return SD_OK;
    case F_POOL: return take_pool(s, x, e);
    case F_OTHER: return SD_OK;
    default: break;
    }
    if (!sdp_int_of(*x, &v)) return sdp_model_get_int(s, NULL, x, names[field], &v);
    switch (field) {
    case F_ADDR: t->addr = (uint64_t)v; break;
    case F_SIZE: e->size = (uint64_t)v; break;
    case F_STREAM: e->stream = (uint64_t)v; break;
    case F_DEVICE_FREE: t->dfree = (uint64_t)v; t->has_dfree = true; break;
    case F_TIME: e->time_us = v; e->has_time = true; break;
    }
    return SD_OK;
}

/* The one trace-entry decoder: the values of one entry, vals[i * stride], filled into e
 * by the layout of its keys. The record hook calls it for entries taken while parsing; the
 * model build for the few that stayed dicts (protocol 0/1, entries filled piecemeal). */
static sd_status decode_trace(sd_snapshot *s, const uint8_t *layout, const sd_value *vals,
                              size_t stride, size_t n, sd_trace_entry *e, uint64_t *defer)
{
    memset(e, 0, sizeof *e);
    e->action = SD_ACT_OTHER;
    taking t = {.e = e, .may_defer = defer != NULL};
    for (size_t i = 0; i < n; i++) {
        const sd_value *x = &vals[i * stride];
        if ((x->bits & SDP_TAG_MASK) == SDP_TAG_INT) { /* most values: a small int, inline */
            int64_t v = (int64_t)x->bits >> 3;
            switch (layout[i]) {
            case F_ADDR: t.addr = (uint64_t)v; continue;
            case F_SIZE: e->size = (uint64_t)v; continue;
            case F_STREAM: e->stream = (uint64_t)v; continue;
            case F_TIME: e->time_us = v; e->has_time = true; continue;
            default: break;
            }
        }
        sd_status st = take_field(s, layout[i], x, &t);
        if (st) return st;
    }
    e->addr = e->action == SD_ACT_OOM && t.has_dfree ? t.dfree : t.addr; /* they share a slot */
    if (t.forward || t.meta || t.cctx) {
        if (t.deferred) { /* the context needs the stack now */
            sd_value frames = {t.deferred};
            sd_status st = sdp_intern_stack(s, &frames, &e->stack);
            if (st) return st;
        }
        return sdp_model_add_context(s, t.forward, t.meta, t.cctx, &e->stack);
    }
    if (defer) *defer = t.deferred;
    return SD_OK;
}

/* A trace entry takes at least 5 bytes of pickle (EMPTY_DICT, a memo get of its 'action'
 * key, DUP, SETITEM), so a big input's records get a region for len / 5 of them: they
 * grow in place, never copied (region.c). */
enum { RECORDS_REGION_MIN_INPUT = 1 << 20, MIN_RECORD_BYTES = 5 };

static void record_begin(void *ctx, size_t input_len)
{
    sd_snapshot *s = ctx;
    if (input_len < RECORDS_REGION_MIN_INPUT || s->records || s->records_region.base) return;
    size_t n = input_len / MIN_RECORD_BYTES + 1;
    if (n > UINT32_MAX) n = UINT32_MAX;
    if (n > SIZE_MAX / sizeof *s->records) return; /* a 32-bit address space: the heap */
    sdp_region_reserve(&s->records_region, n * sizeof *s->records);
}

void sdp_model_trim_records(sd_snapshot *s)
{
    if (!s->n_records || s->n_records == s->records_cap) return;
    if (s->records_region.base) {
        sdp_region_drop_tail(&s->records_region, s->n_records * sizeof *s->records);
        return;
    }
    sd_trace_entry *nr = realloc(s->records, s->n_records * sizeof *nr);
    if (!nr) return;
    s->records = nr;
    s->records_cap = s->n_records;
}

void sdp_model_free_records(sd_snapshot *s)
{
    if (s->records_region.base) sdp_region_release(&s->records_region);
    else free(s->records);
    s->records = NULL;
    s->n_records = s->records_cap = 0;
}

/* Intern the frames the last trace entry left for later: entries are taken in file order,
 * so stacks are interned in the order they always were. */
static sd_status record_flush(void *ctx)
{
    sd_snapshot *s = ctx;
    sdp_load *L = s->load;
    if (!L->deferred) return SD_OK;
    L->deferred = false;
    L->ctx_offset = L->defer_offset;
    sd_value frames = {L->defer_frames};
    return sdp_intern_stack(s, &frames, &s->records[L->defer_rec].stack);
}

static sd_status record_take(void *ctx, uint32_t kind, const sd_value *kv, size_t n_pairs,
                             uint64_t offset, sd_value *rec)
{
    sd_snapshot *s = ctx;
    if (s->load->deferred) {
        sd_status st = record_flush(s);
        if (st) return st;
    }
    if (kind & BLOCK_KIND)
        return block_take(s, s->load->layouts[(kind & ~BLOCK_KIND) - 1], kv, n_pairs, offset, rec);
    if (kind & SEGMENT_KIND)
        return segment_take(s, s->load->layouts[(kind & ~SEGMENT_KIND) - 1], kv, n_pairs, offset,
                            rec);
    rec->bits = 0;
    if (s->n_records >= UINT32_MAX)
        return sdp_fail(s->load->err, SD_ELIMIT, offset, "more than 2^32 trace entries");
    s->load->ctx_offset = offset;
    if (s->n_records == s->records_cap &&
        sdp_grow_in_region((void **)&s->records, &s->records_cap, s->n_records + 1,
                           sizeof *s->records, &s->load->pickle, &s->records_region) != SD_OK)
        return sdp_fail(s->load->err, SD_ENOMEM, s->load->ctx_offset,
                        "memory budget exhausted building the model");
    uint64_t frames = 0;
    const uint8_t *layout = s->load->layouts[kind - 1];
    sd_trace_entry *e = &s->records[s->n_records];
    /* The usual entry (action, addr, size, stream, time_us, frames; small ints and a frames
     * list): what decode_trace would make of it, without a loop or a switch. */
    if (layout[15] && (kv[3].bits & kv[5].bits & kv[7].bits & kv[9].bits & SDP_TAG_MASK) == SDP_TAG_INT &&
        ((kv[3].bits | kv[5].bits | kv[7].bits | kv[9].bits) & (SDP_TAG_MASK & ~SDP_TAG_INT)) == 0 &&
        sdp_is_ptr(kv[11])) {
        memset(e, 0, sizeof *e);
        e->action = cached_action(s, &kv[1]);
        e->addr = (uint64_t)((int64_t)kv[3].bits >> 3);
        e->size = (uint64_t)((int64_t)kv[5].bits >> 3);
        e->stream = (uint64_t)((int64_t)kv[7].bits >> 3);
        e->time_us = (int64_t)kv[9].bits >> 3;
        e->has_time = true;
        frames = kv[11].bits;
    } else {
        sd_status st = decode_trace(s, layout, kv + 1, 2, n_pairs, e, &frames);
        if (st) return st;
    }
    if (frames) {
        sdp_load *L = s->load;
        L->deferred = true;
        L->defer_rec = (uint32_t)s->n_records;
        L->defer_frames = frames;
        L->defer_offset = offset;
        sdp_intern_prefetch(s, frames);
    }
    *rec = sdp_record_value(SDP_REC_TRACE, s->n_records++);
    return SD_OK;
}

/* A trace entry that stayed a dict: its layout is worked out for this entry alone. */
sd_status sdp_take_read_trace_entry(sd_snapshot *s, const sd_value *v, sd_trace_entry *e)
{
    sd_status st = SD_OK;
    sdp_model_need_dict(s, v, "a trace entry", &st);
    if (st) return st;
    s->load->ctx_offset = sd_value_offset(v);
    const sdp_cont *c = sdp_cont_of(*v);
    uint8_t *layout = c->n ? malloc(c->n) : NULL;
    if (c->n && !layout) return sdp_fail(s->load->err, SD_ENOMEM, c->offset, "out of memory");
    for (uint32_t i = 0; i < c->n; i++) {
        layout[i] = field_of(sdp_dict_key(c, i));
        if (layout[i] == F_OTHER) sdp_model_note_key(s, SDP_KEYS_TRACE, sdp_dict_key(c, i));
    }
    st = decode_trace(s, layout, c->n ? sdp_dict_val(c, 0) : NULL, c->shape ? 1 : 2, c->n, e,
                      NULL);
    free(layout);
    return st;
}

sdp_record_hook sdp_model_record_hook(sd_snapshot *s)
{
    return (sdp_record_hook){.ctx = s, .begin = record_begin, .kind = record_kind,
                             .take = record_take, .flush = record_flush};
}


sd_status sdp_take_read_block(sd_snapshot *s, uint32_t index, sd_block *b, bool *has_addr)
{
    return read_block_rec(s, block_rec(s->load, index), b, has_addr);
}

sd_status sdp_take_block_as_trace(sd_snapshot *s, uint32_t index, sd_trace_entry *e)
{
    return trace_of_block_rec(s, block_rec(s->load, index), e);
}

sd_status sdp_take_read_segment(sd_snapshot *s, uint32_t index, sdp_raw_segment *r)
{
    return read_segment_rec(s, store_at(&s->load->segments, sizeof(sdp_segment_rec), index), r);
}
