/* model.c - from the pickle tree to devices, segments, blocks and trace entries.
 *
 * Each dict is read in one pass over its pairs (keys are matched by length and bytes),
 * unknown keys are ignored, and a value of the wrong type is an error that names the
 * key and the byte offset of the dict it sits in. Inconsistencies that do not stop the
 * analysis (blocks that do not tile their segment) become warnings naming the segment.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/model.h"

#define KEY_IS(k, lit) sdp_str_eq(*(k), lit, sizeof(lit) - 1)

void *sdp_model_alloc(sd_snapshot *s, size_t size)
{
    if (!sdp_arena_charge(&s->load->pickle, size)) return NULL;
    return sdp_arena_alloc(&s->arena, size);
}

sd_status sdp_model_grow(sd_snapshot *s, void **buf, size_t *cap, size_t need, size_t elem)
{
    if (sdp_grow(buf, cap, need, elem, &s->load->pickle) == SD_OK) return SD_OK;
    return sdp_fail(s->load->err, SD_ENOMEM, s->load->ctx_offset,
                    "memory budget exhausted building the model");
}

static char *model_strndup(sd_snapshot *s, const char *p, size_t n)
{
    char *copy = sdp_model_alloc(s, n + 1);
    if (!copy) return NULL;
    memcpy(copy, p, n);
    copy[n] = 0;
    return copy;
}

void sdp_model_warn(sd_snapshot *s, const char *fmt, ...)
{
    if (s->n_warnings >= SDP_MODEL_MAX_WARNINGS) {
        s->warnings_dropped++;
        return;
    }
    char text[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    char *copy = model_strndup(s, text, strlen(text));
    if (copy) s->warnings[s->n_warnings++] = copy;
}

sd_status sdp_model_fail(sd_snapshot *s, const sd_value *where, const char *fmt, ...)
{
    char text[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    uint64_t off = where && sdp_cont_of(*where) ? sd_value_offset(where) : s->load->ctx_offset;
    return sdp_fail(s->load->err, SD_ESNAPSHOT, off, "%s", text);
}

sd_status sdp_model_items(sd_snapshot *s, const sdp_cont *c)
{
    if (sdp_cont_items_gone(c)) /* a snapshot never reuses a frames list as anything else */
        return sdp_fail(s->load->err, SD_ESNAPSHOT, c->offset, "this list, a stack's frames, "
                        "is read again as another kind of list");
    if (!c->run) return SD_OK;
    /* The tree belongs to the load, which is what is reading it: giving a run its items
     * changes how the list is stored, not what it holds. */
    sd_status st = sdp_cont_flatten(&s->load->pickle, (sdp_cont *)(uintptr_t)c, 0);
    if (st) return sdp_fail(s->load->err, st, c->offset, "memory budget exhausted reading a list");
    return SD_OK;
}

/* ---------- typed field readers ---------- */

sd_status sdp_model_get_int(sd_snapshot *s, const sd_value *dict, const sd_value *v,
                            const char *key, int64_t *out)
{
    if (sdp_int_of(*v, out)) return SD_OK;
    if (sdp_type(*v) == SDP_BIGINT)
        return sdp_model_fail(s, dict, "'%s' is an integer too large for 64 bits", key);
    return sdp_model_fail(s, dict, "'%s' should be an integer", key);
}

static sd_status get_size(sd_snapshot *s, const sd_value *dict, const sd_value *v,
                          const char *key, uint64_t *out)
{
    int64_t x = 0;
    sd_status st = sdp_model_get_int(s, dict, v, key, &x);
    if (st) return st;
    if (x < 0) return sdp_model_fail(s, dict, "'%s' is negative (%" PRId64 ")", key, x);
    *out = (uint64_t)x;
    return SD_OK;
}

static bool str_is(const sd_value *v, const char *lit)
{
    return sdp_str_eq(*v, lit, strlen(lit));
}

/* ---------- keys upstream torch writes (torch/csrc/cuda/memory_snapshot.cpp) ----------
 * Any other key is a patched build's (sd_snapshot_foreign_key). Keys of older torch
 * (history) and of newer torch main (pool_id, host_*) count as upstream. */
static const char *const TOP_KEYS[] = {"segments", "device_traces", "allocator_settings",
                                       "external_annotations", "host_segments",
                                       "host_traces", "skip_actions", NULL};
static const char *const SEGMENT_KEYS[] = {"device", "address", "total_size",
                                           "allocated_size", "active_size", "requested_size",
                                           "stream", "segment_type", "segment_pool_id",
                                           "is_expandable", "frames", "blocks", NULL};
static const char *const BLOCK_KEYS[] = {"size", "address", "requested_size", "state",
                                         "frames", "history", "forward_frames",
                                         "user_metadata", "compile_context", NULL};
static const char *const TRACE_KEYS[] = {"action", "addr", "size", "stream", "device_free",
                                         "time_us", "frames", "forward_frames",
                                         "user_metadata", "compile_context", "pool_id", NULL};

void sdp_model_note_key(sd_snapshot *s, sdp_key_where where, const sd_value *k)
{
    static const char *const *const lists[] = {TOP_KEYS, SEGMENT_KEYS, BLOCK_KEYS, TRACE_KEYS};
    static const char *const names[] = {"snapshot", "segment", "block", "trace"};
    for (const char *const *p = lists[where]; *p; p++)
        if (str_is(k, *p)) return;
    const sdp_blob *b = sdp_blob_of(*k);
    char name[96];
    int n = b && b->type == SDP_STR
                ? snprintf(name, sizeof name, "%s.%.*s", names[where],
                           (int)(b->len < 64 ? b->len : 64), (const char *)b->data)
                : snprintf(name, sizeof name, "%s.<not a string>", names[where]);
    if (n < 0) return;
    for (size_t i = 0; i < s->n_foreign_keys; i++)
        if (strcmp(s->foreign_keys[i], name) == 0) return;
    if (s->n_foreign_keys == SD_SNAPSHOT_FOREIGN_MAX) return;
    char *copy = model_strndup(s, name, strlen(name));
    /* Control characters shown as '?': the name goes to a terminal. */
    for (char *c = copy; c && *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    if (copy) s->foreign_keys[s->n_foreign_keys++] = copy;
}

const sd_value *sdp_model_need_dict(sd_snapshot *s, const sd_value *v, const char *what,
                                    sd_status *st)
{
    if (sdp_type(*v) != SDP_DICT)
        *st = sdp_model_fail(s, v, "%s is a %s, expected a dict", what,
                             sdp_type(*v) == SDP_LIST ? "list" : "scalar");
    return v;
}

/* ---------- blocks ---------- */

/* An optional context string: its interned copy, "" when absent or not a string. */
static sd_status context_str(sd_snapshot *s, const sd_value *x, const char **out)
{
    *out = "";
    if (!x || sdp_type(*x) != SDP_STR) return SD_OK;
    const sdp_blob *b = sdp_blob_of(*x);
    return b->len ? sdp_intern_string(s, b->data, b->len, out) : SD_OK;
}

/* forward_frames, user_metadata, compile_context (newer torch) onto the stack id. */
sd_status sdp_model_add_context(sd_snapshot *s, const sd_value *forward, const sd_value *meta,
                                const sd_value *cctx, uint32_t *stack)
{
    uint32_t fwd = 0;
    const char *m, *c;
    sd_status st = SD_OK;
    /* Optional: anything but a list of frames (None, a string) is no forward stack. */
    const sdp_cont *fc = forward ? sdp_cont_of(*forward) : NULL;
    if (fc && fc->type != SDP_DICT) st = sdp_intern_stack(s, forward, &fwd);
    if (!st) st = context_str(s, meta, &m);
    if (!st) st = context_str(s, cctx, &c);
    if (!st) st = sdp_intern_context(s, *stack, fwd, m, c, stack);
    return st;
}

static sd_status read_history(sd_snapshot *s, const sd_value *blk, const sd_value *hist,
                              sd_block *b, bool has_requested)
{
    const sdp_cont *hc = sdp_cont_of(*hist);
    if (!hc || hc->type != SDP_LIST) return sdp_model_fail(s, blk, "'history' should be a list");
    if (hc->n == 0) return SD_OK;
    SDP_TRY(sdp_model_items(s, hc));
    const sd_value *h0 = &hc->items[0]; /* newest first: the allocation of record */
    if (sdp_type(*h0) != SDP_DICT) return sdp_model_fail(s, blk, "a 'history' entry is not a dict");
    const sd_value *real = sd_value_dict_get(h0, "real_size");
    if (real && !has_requested) {
        sd_status st = get_size(s, h0, real, "real_size", &b->requested_size);
        if (st) return st;
    }
    const sd_value *frames = sd_value_dict_get(h0, "frames");
    if (b->stack) return SD_OK; /* 'frames' on the block itself wins */
    if (!frames) {
        sdp_model_warn(s, "block at offset %" PRIu64 ": 'history' entry without frames",
                       sd_value_offset(blk));
        return SD_OK;
    }
    return sdp_intern_stack(s, frames, &b->stack);
}

static sd_status read_block(sd_snapshot *s, const sd_value *v, sd_block *b, bool *has_addr)
{
    sd_status st = SD_OK;
    sdp_model_need_dict(s, v, "a block", &st);
    if (st) return st;
    s->load->ctx_offset = sd_value_offset(v);
    const sdp_cont *c = sdp_cont_of(*v);
    const sd_value *frames = NULL, *history = NULL, *forward = NULL;
    const sd_value *meta = NULL, *cctx = NULL;
    bool has_size = false, has_requested = false;
    memset(b, 0, sizeof *b);
    b->state = SD_BLOCK_OTHER;
    *has_addr = false;
    for (uint32_t i = 0; i < c->n && !st; i++) {
        const sd_value *k = sdp_dict_key(c, i), *x = sdp_dict_val(c, i);
        if (KEY_IS(k, "size")) { st = get_size(s, v, x, "size", &b->size); has_size = true; }
        else if (KEY_IS(k, "address")) { st = get_size(s, v, x, "address", &b->address); *has_addr = true; }
        else if (KEY_IS(k, "requested_size")) { st = get_size(s, v, x, "requested_size", &b->requested_size); has_requested = true; }
        else if (KEY_IS(k, "state")) {
            if (str_is(x, "active_allocated")) b->state = SD_BLOCK_ALLOCATED;
            else if (str_is(x, "inactive")) b->state = SD_BLOCK_INACTIVE;
            else if (str_is(x, "active_pending_free")) b->state = SD_BLOCK_PENDING_FREE;
            else if (sdp_type(*x) != SDP_STR) st = sdp_model_fail(s, v, "block 'state' should be a string");
        }
        else if (KEY_IS(k, "frames")) frames = x;
        else if (KEY_IS(k, "history")) history = x;
        else if (KEY_IS(k, "forward_frames")) forward = x;
        else if (KEY_IS(k, "user_metadata")) meta = x;
        else if (KEY_IS(k, "compile_context")) cctx = x;
        else sdp_model_note_key(s, SDP_KEYS_BLOCK, k);
    }
    if (st) return st;
    if (!has_size) return sdp_model_fail(s, v, "block has no 'size'");
    if (!has_requested) b->requested_size = b->size; /* history[0].real_size may refine it */
    if (frames) st = sdp_intern_stack(s, frames, &b->stack);
    if (!st && history) st = read_history(s, v, history, b, has_requested);
    if (!st && (forward || meta || cctx)) st = sdp_model_add_context(s, forward, meta, cctx, &b->stack);
    return st;
}

/* ---------- segments ---------- */

sd_status sdp_model_get_pair(sd_snapshot *s, const sd_value *dict, const sd_value *v,
                             const char *key, int64_t out[2])
{
    const sdp_cont *c = sdp_cont_of(*v);
    if (!c || c->type == SDP_DICT || c->n != 2)
        return sdp_model_fail(s, dict, "'%s' should be a pair of integers", key);
    SDP_TRY(sdp_model_items(s, c));
    for (int i = 0; i < 2; i++) {
        sd_status st = sdp_model_get_int(s, dict, &c->items[i], key, &out[i]);
        if (st) return st;
    }
    return SD_OK;
}

static uint64_t pool_hash(const int64_t id[2])
{
    return sdp_hash_mix(sdp_hash_mix(SDP_HASH_SEED, (uint64_t)id[0]), (uint64_t)id[1]);
}

static uint64_t pool_hash_id(const void *ctx, uint32_t id)
{
    const sd_snapshot *s = ctx;
    return pool_hash(s->pools[id]);
}

sd_status sdp_model_pool_of(sd_snapshot *s, const int64_t id[2], uint16_t *pool)
{
    size_t last = s->last_pool;
    if (last && s->pools[last - 1][0] == id[0] && s->pools[last - 1][1] == id[1]) {
        *pool = (uint16_t)last;
        return SD_OK;
    }
    /* A run has few pools (one per captured graph or MemPool), but a hostile file may name
     * 65,535 of them in turn: looked up by hash, never by a scan per entry. */
    sdp_htab *t = &s->pool_index;
    size_t j = sdp_htab_first(t, pool_hash(id));
    for (; t->slots[j]; j = sdp_htab_next(t, j)) {
        const int64_t *p = s->pools[t->slots[j] - 1];
        if (p[0] == id[0] && p[1] == id[1]) {
            *pool = s->last_pool = (uint16_t)t->slots[j];
            return SD_OK;
        }
    }
    *pool = 0;
    if (s->n_pools >= SD_SNAPSHOT_MAX_POOLS) {
        if (!s->pools_full)
            sdp_model_warn(s, "trace entries name more than %d pool ids: the pool of an entry "
                           "naming a later one reads as unknown", SD_SNAPSHOT_MAX_POOLS);
        s->pools_full = true;
        return SD_OK;
    }
    if (sdp_grow((void **)&s->pools, &s->pools_cap, s->n_pools + 1, sizeof *s->pools,
                 &s->load->pickle) != SD_OK)
        return sdp_fail(s->load->err, SD_ENOMEM, s->load->ctx_offset,
                        "memory budget exhausted building the model");
    s->pools[s->n_pools][0] = id[0];
    s->pools[s->n_pools][1] = id[1];
    sdp_htab_put(t, j, (uint32_t)s->n_pools);
    *pool = s->last_pool = (uint16_t)++s->n_pools;
    return sdp_htab_reserve_one(t, pool_hash_id, s)
               ? sdp_fail(s->load->err, SD_ENOMEM, s->load->ctx_offset,
                          "memory budget exhausted building the model")
               : SD_OK;
}

static sd_status read_pool_id(sd_snapshot *s, const sd_value *seg, const sd_value *x,
                              sd_segment *out)
{
    sd_status st = sdp_model_get_pair(s, seg, x, "segment_pool_id", out->pool_id);
    if (!st) out->has_pool_id = true;
    return st;
}

static sd_status read_segment(sd_snapshot *s, const sd_value *v, sdp_raw_segment *r)
{
    sd_status st = SD_OK;
    sdp_model_need_dict(s, v, "a segment", &st);
    if (st) return st;
    s->load->ctx_offset = sd_value_offset(v);
    memset(r, 0, sizeof *r);
    r->offset = sd_value_offset(v);
    bool has_addr = false, has_total = false;
    const sdp_cont *c = sdp_cont_of(*v);
    for (uint32_t i = 0; i < c->n && !st; i++) {
        const sd_value *k = sdp_dict_key(c, i), *x = sdp_dict_val(c, i);
        int64_t tmp = 0;
        if (KEY_IS(k, "device")) st = sdp_model_get_int(s, v, x, "device", &r->device);
        else if (KEY_IS(k, "address")) { st = get_size(s, v, x, "address", &r->seg.address); has_addr = true; }
        else if (KEY_IS(k, "total_size")) { st = get_size(s, v, x, "total_size", &r->seg.total_size); has_total = true; }
        else if (KEY_IS(k, "stream")) { st = sdp_model_get_int(s, v, x, "stream", &tmp); r->seg.stream = (uint64_t)tmp; }
        else if (KEY_IS(k, "segment_type")) r->seg.is_small = str_is(x, "small");
        else if (KEY_IS(k, "is_expandable")) r->seg.is_expandable = sd_value_bool(x);
        else if (KEY_IS(k, "segment_pool_id")) st = read_pool_id(s, v, x, &r->seg);
        else if (KEY_IS(k, "frames")) st = sdp_intern_stack(s, x, &r->seg.stack);
        else if (KEY_IS(k, "blocks")) {
            if (sdp_type(*x) != SDP_LIST) st = sdp_model_fail(s, v, "segment 'blocks' should be a list");
            r->blocks = x;
        }
        else sdp_model_note_key(s, SDP_KEYS_SEGMENT, k);
    }
    if (st) return st;
    if (!has_addr) return sdp_model_fail(s, v, "segment has no 'address'");
    if (!has_total) return sdp_model_fail(s, v, "segment has no 'total_size'");
    return SD_OK;
}

/* Segment i of the segments list: a record, or a dict read as ever. */
static sd_status read_segment_item(sd_snapshot *s, const sdp_cont *list, size_t i,
                                   sdp_raw_segment *r)
{
    sd_value v;
    if (list->run) v = sdp_record_value(list->run - 1u, (uint64_t)list->cap + i);
    else v = list->items[i];
    if (sdp_type(v) == SDP_RECORD && sdp_record_class(v) == SDP_REC_SEGMENT)
        return sdp_take_read_segment(s, sdp_record_index(v), r);
    return read_segment(s, &list->items[i], r);
}

static int cmp_sdp_raw_segment(const void *a, const void *b)
{
    const sdp_raw_segment *x = a, *y = b;
    if (x->device != y->device) return x->device < y->device ? -1 : 1;
    if (x->seg.address != y->seg.address) return x->seg.address < y->seg.address ? -1 : 1;
    return 0;
}

/* Blocks of one segment, appended to the device's block array; addresses filled in for
 * layouts that do not store them; the tiling checked. */
static sd_status build_segment_blocks(sd_snapshot *s, sdp_raw_segment *r, sd_block *out,
                                      uint32_t seg_index, size_t *n_out)
{
    const sdp_cont *bl = r->blocks ? sdp_cont_of(*r->blocks) : NULL;
    size_t n = bl ? bl->n : 0;
    bool run = bl && bl->run == 1 + SDP_REC_BLOCK; /* blocks taken one after another */
    if (bl && !run) SDP_TRY(sdp_model_items(s, bl));
    uint64_t cursor = r->seg.address, sum = 0;
    bool outside = false, gap = false;
    uint64_t gap_at = 0, gap_expected = 0; /* the first block not where the last one ended */
    for (size_t i = 0; i < n; i++) {
        sd_block *b = &out[i];
        bool has_addr;
        s->load->ctx_offset = sd_value_offset(r->blocks);
        sd_status st;
        if (run)
            st = sdp_take_read_block(s, bl->cap + (uint32_t)i, b, &has_addr);
        else if (sdp_type(bl->items[i]) == SDP_RECORD &&
                 sdp_record_class(bl->items[i]) == SDP_REC_BLOCK)
            st = sdp_take_read_block(s, sdp_record_index(bl->items[i]), b, &has_addr);
        else
            st = read_block(s, &bl->items[i], b, &has_addr);
        if (st) return st;
        if (!has_addr) b->address = cursor;
        else if (b->address != cursor && !gap) {
            gap = true;
            gap_at = b->address;
            gap_expected = cursor;
        }
        if (b->address < r->seg.address || b->address - r->seg.address > r->seg.total_size ||
            b->size > r->seg.total_size - (b->address - r->seg.address))
            outside = true;
        b->segment = seg_index;
        cursor = b->address + b->size;
        sum += b->size;
    }
    if (outside)
        sdp_model_warn(s, "segment 0x%" PRIx64 " (offset %" PRIu64 "): a block lies outside the "
                       "segment", r->seg.address, r->offset);
    else if (gap)
        sdp_model_warn(s, "segment 0x%" PRIx64 " (offset %" PRIu64 "): blocks do not tile it: a "
                       "block starts at 0x%" PRIx64 " where the one before ends at 0x%" PRIx64
                       " (%s)", r->seg.address, r->offset, gap_at, gap_expected,
                       gap_at < gap_expected ? "they overlap" : "a hole");
    else if (sum != r->seg.total_size)
        sdp_model_warn(s, "segment 0x%" PRIx64 " (offset %" PRIu64 "): blocks sum to %" PRIu64
                       " bytes, total_size says %" PRIu64, r->seg.address,
                       r->offset, sum, r->seg.total_size);
    *n_out = n;
    return SD_OK;
}

/* ---------- devices ---------- */

static int cmp_device(const void *a, const void *b)
{
    const sd_cuda_device *x = a, *y = b;
    return x->device < y->device ? -1 : x->device > y->device;
}

/* Devices come from sorted segments first, then from trace lists in ascending order, so
 * the array stays two sorted runs: lookups are binary searches, never a scan (a file may
 * name a million devices). */
static sd_cuda_device *find_device(sd_snapshot *s, int64_t dev, size_t lo, size_t hi)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->devices[mid].device == dev) return &s->devices[mid];
        if (s->devices[mid].device < dev) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* CUDA device ordinals are small; a file naming thousands of devices is not a snapshot,
 * and would turn every report into pages of nothing. */
enum { MAX_DEVICE_ORDINAL = 4095 };

static sd_cuda_device *append_device(sd_snapshot *s, int64_t dev, size_t *cap)
{
    if (s->n_devices == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        sd_cuda_device *nd = sdp_model_alloc(s, ncap * sizeof *nd);
        if (!nd) return NULL;
        if (s->n_devices) memcpy(nd, s->devices, s->n_devices * sizeof *nd);
        s->devices = nd;
        *cap = ncap;
    }
    s->devices[s->n_devices] = (sd_cuda_device){.device = dev};
    return &s->devices[s->n_devices++];
}

/* Where a segment's blocks and device are, beside the segment itself. */
typedef struct sdp_seg_side {
    int64_t device;
    uint64_t offset;
    const sd_value *blocks;
} sdp_seg_side;

/* Order segs (and side) by (device, address), as the model keeps them. Files list them
 * in that order already (torch does): then nothing moves and nothing is allocated, and
 * equal keys keep their order, as the (merge) sort below keeps them. */
static sd_status sort_segments(sd_snapshot *s, const sd_value *list, sd_segment *segs,
                               sdp_seg_side *side, size_t n)
{
    bool sorted = true;
    for (size_t i = 1; i < n && sorted; i++)
        sorted = side[i - 1].device < side[i].device ||
                 (side[i - 1].device == side[i].device && segs[i - 1].address <= segs[i].address);
    if (sorted) return SD_OK;
    sdp_raw_segment *raw = malloc(n * sizeof *raw);
    if (!raw || !sdp_arena_charge(&s->load->pickle, n * sizeof *raw)) {
        free(raw);
        return sdp_model_fail(s, list, "memory budget exhausted reading segments");
    }
    for (size_t i = 0; i < n; i++)
        raw[i] = (sdp_raw_segment){segs[i], side[i].device, side[i].offset, side[i].blocks};
    qsort(raw, n, sizeof *raw, cmp_sdp_raw_segment);
    for (size_t i = 0; i < n; i++) {
        segs[i] = raw[i].seg;
        side[i] = (sdp_seg_side){raw[i].device, raw[i].offset, raw[i].blocks};
    }
    sdp_arena_uncharge(&s->load->pickle, n * sizeof *raw);
    free(raw);
    return SD_OK;
}

static sd_status build_segments(sd_snapshot *s, const sd_value *list, size_t *dev_cap)
{
    const sdp_cont *lc = sdp_cont_of(*list);
    size_t n = lc->n;
    if (lc->run != 1 + SDP_REC_SEGMENT) SDP_TRY(sdp_model_items(s, lc));
    if (!n) return SD_OK;
    sdp_seg_side *side = malloc(n * sizeof *side);
    if (!side || !sdp_arena_charge(&s->load->pickle, n * sizeof *side)) {
        free(side);
        return sdp_model_fail(s, list, "memory budget exhausted reading segments");
    }
    sd_status st = SD_OK;
    sd_segment *segs = sdp_model_alloc(s, n * sizeof *segs);
    sd_block *blocks = NULL;
    if (!segs) st = sdp_model_fail(s, list, "memory budget exhausted building blocks");
    size_t total_blocks = 0;
    for (size_t i = 0; i < n && !st; i++) {
        sdp_raw_segment r;
        s->load->ctx_offset = sd_value_offset(list);
        st = read_segment_item(s, lc, i, &r);
        if (st) break;
        segs[i] = r.seg;
        side[i] = (sdp_seg_side){r.device, r.offset, r.blocks};
        total_blocks += r.blocks ? sdp_cont_of(*r.blocks)->n : 0;
    }
    if (!st && n > 1) st = sort_segments(s, list, segs, side, n);
    if (!st) {
        /* Never NULL, even for no blocks: &blocks[0] below must not be NULL + 0 (UB). */
        blocks = sdp_model_alloc(s, total_blocks * sizeof *blocks);
        if (!blocks) st = sdp_model_fail(s, list, "memory budget exhausted building blocks");
    }
    /* Segments are sorted by (device, address): each device takes a contiguous run. */
    size_t bi = 0;
    for (size_t i = 0; i < n && !st;) {
        if (side[i].device < 0 || side[i].device > MAX_DEVICE_ORDINAL) {
            st = sdp_fail(s->load->err, SD_ELIMIT, side[i].offset, "device ordinal "
                          "%" PRId64 " is outside 0..%d", side[i].device, MAX_DEVICE_ORDINAL);
            break;
        }
        sd_cuda_device *d = append_device(s, side[i].device, dev_cap); /* sorted by device */
        if (!d) {
            st = sdp_model_fail(s, list, "memory budget exhausted");
            break;
        }
        d->segments = &segs[i];
        d->blocks = &blocks[bi];
        size_t first = i;
        for (; i < n && side[i].device == d->device && !st; i++) {
            size_t nb = 0;
            sdp_raw_segment r = {segs[i], side[i].device, side[i].offset, side[i].blocks};
            segs[i].first_block = (uint32_t)(bi - (size_t)(d->blocks - blocks));
            st = build_segment_blocks(s, &r, &blocks[bi], (uint32_t)(i - first), &nb);
            segs[i].n_blocks = (uint32_t)nb;
            bi += nb;
        }
        d->n_segments = i - first;
        d->n_blocks = (size_t)(&blocks[bi] - d->blocks);
    }
    sdp_arena_uncharge(&s->load->pickle, n * sizeof *side);
    free(side);
    return st;
}

/* The usual case: the list's entries were taken as consecutive records, so the device's
 * trace is a slice of the record array and nothing is copied. */
static sd_trace_entry *records_in_order(sd_snapshot *s, const sdp_cont *list)
{
    if (list->run) return list->run == 1 + SDP_REC_TRACE ? s->records + list->cap : NULL;
    if (sdp_cont_items_gone(list)) return NULL; /* sdp_model_items says why */
    uint32_t first = 0;
    for (uint32_t i = 0; i < list->n; i++) {
        if (sdp_type(list->items[i]) != SDP_RECORD ||
            sdp_record_class(list->items[i]) != SDP_REC_TRACE)
            return NULL;
        uint32_t idx = sdp_record_index(list->items[i]);
        if (i == 0) first = idx;
        else if (idx != first + i) return NULL;
    }
    return s->records + first;
}

static sd_status trace_item(sd_snapshot *s, const sd_value *v, sd_trace_entry *e);

/* A trace list that starts as the last records taken, in order, then goes on with other
 * items (entries fetched again from the memo: a later snapshot of the same job): the rest
 * is appended to the records, in their region (which never moves), so the device's trace
 * is still a slice of the records and only the rest is copied. *out stays NULL when the
 * list is not like that (the caller copies it all). */
static sd_status records_then_tail(sd_snapshot *s, const sdp_cont *list, sd_trace_entry **out)
{
    *out = NULL;
    size_t n = list->n, k = 0;
    if (!s->records_region.base || !n || sdp_type(list->items[0]) != SDP_RECORD ||
        sdp_record_class(list->items[0]) != SDP_REC_TRACE)
        return SD_OK;
    uint32_t first = sdp_record_index(list->items[0]);
    while (k < n && sdp_type(list->items[k]) == SDP_RECORD &&
           sdp_record_class(list->items[k]) == SDP_REC_TRACE &&
           sdp_record_index(list->items[k]) == first + k)
        k++;
    size_t have = s->n_records, room = s->records_region.size / sizeof *s->records;
    if (first + k != have || n - k > room - have) return SD_OK;
    if (sdp_grow_in_region((void **)&s->records, &s->records_cap, have + (n - k),
                           sizeof *s->records, &s->load->pickle, &s->records_region) != SD_OK)
        return sdp_fail(s->load->err, SD_ENOMEM, list->offset, "memory budget exhausted reading traces");
    for (size_t i = k; i < n; i++) {
        s->load->ctx_offset = list->offset;
        sd_status st = trace_item(s, &list->items[i], &s->records[s->n_records]);
        if (st) return st;
        s->n_records++;
    }
    *out = s->records + first;
    return SD_OK;
}

static sd_status trace_item(sd_snapshot *s, const sd_value *v, sd_trace_entry *e)
{
    if (sdp_type(*v) == SDP_RECORD) {
        if (sdp_record_class(*v) == SDP_REC_BLOCK)
            return sdp_take_block_as_trace(s, sdp_record_index(*v), e);
        *e = s->records[sdp_record_index(*v)];
        return SD_OK;
    }
    return sdp_take_read_trace_entry(s, v, e);
}

/* The entries of one non-empty trace list (a device's, or host_traces): a slice of the
 * records when they were taken in order, else read into the model. */
static sd_status read_trace_list(sd_snapshot *s, const sd_value *list, sd_trace_entry **out)
{
    const sdp_cont *lc = sdp_cont_of(*list);
    size_t n = lc->n;
    sd_trace_entry *entries = records_in_order(s, lc);
    if (!entries) {
        SDP_TRY(sdp_model_items(s, lc));
        sd_status st = records_then_tail(s, lc, &entries);
        if (st) return st;
    }
    if (!entries) {
        entries = sdp_model_alloc(s, n * sizeof *entries);
        if (!entries) return sdp_model_fail(s, list, "memory budget exhausted reading traces");
        for (size_t i = 0; i < n; i++) {
            s->load->ctx_offset = lc->offset;
            sd_status st = trace_item(s, &lc->items[i], &entries[i]);
            if (st) return st;
        }
    }
    *out = entries;
    return SD_OK;
}

static sd_status build_traces(sd_snapshot *s, const sd_value *traces, size_t *dev_cap)
{
    size_t n_seg_devices = s->n_devices;
    s->load->ctx_offset = sd_value_offset(&s->load->root);
    const sdp_cont *c = sdp_cont_of(*traces);
    if (!c || c->type != SDP_LIST)
        return sdp_model_fail(s, traces, "'device_traces' should be a list of lists");
    SDP_TRY(sdp_model_items(s, c));
    for (uint32_t dev = 0; dev < c->n; dev++) {
        const sd_value *list = &c->items[dev];
        const sdp_cont *lc = sdp_cont_of(*list);
        s->load->ctx_offset = c->offset;
        if (!lc || lc->type != SDP_LIST)
            return sdp_model_fail(s, traces, "'device_traces' entry %u is not a list", dev);
        size_t n = lc->n;
        if (n == 0) continue;
        if (dev > MAX_DEVICE_ORDINAL)
            return sdp_fail(s->load->err, SD_ELIMIT, c->offset, "'device_traces' has non-empty "
                            "lists past device %d", MAX_DEVICE_ORDINAL);
        sd_trace_entry *entries;
        sd_status st = read_trace_list(s, list, &entries);
        if (st) return st;
        sd_cuda_device *d = find_device(s, dev, 0, n_seg_devices);
        if (!d) d = append_device(s, dev, dev_cap);
        if (!d) return sdp_model_fail(s, list, "memory budget exhausted");
        d->trace = entries;
        d->n_trace = n;
    }
    return SD_OK;
}

/* ---------- pinned host memory ---------- */

/* host_segments: segment dicts as a device's (the CachingHostAllocator's blocks), kept
 * apart from the devices; their `device` key, if any, is not a CUDA device and is not
 * read as one. */
static sd_status build_host_segments(sd_snapshot *s, const sd_value *list)
{
    const sdp_cont *lc = sdp_cont_of(*list);
    if (!lc || lc->type != SDP_LIST) {
        sdp_model_warn(s, "'host_segments' is not a list; ignored");
        return SD_OK;
    }
    if (lc->run != 1 + SDP_REC_SEGMENT) SDP_TRY(sdp_model_items(s, lc));
    size_t n = lc->n, total_blocks = 0;
    sdp_raw_segment *raw = malloc((n ? n : 1) * sizeof *raw);
    if (!raw || !sdp_arena_charge(&s->load->pickle, n * sizeof *raw)) {
        free(raw);
        return sdp_model_fail(s, list, "memory budget exhausted reading host segments");
    }
    sd_status st = SD_OK;
    for (size_t i = 0; i < n && !st; i++) {
        s->load->ctx_offset = sd_value_offset(list);
        st = read_segment_item(s, lc, i, &raw[i]);
        raw[i].device = 0; /* one address space: ordered by address alone */
        if (!st) total_blocks += raw[i].blocks ? sdp_cont_of(*raw[i].blocks)->n : 0;
    }
    if (!st && n > 1) qsort(raw, n, sizeof *raw, cmp_sdp_raw_segment);
    sd_segment *segs = st ? NULL : sdp_model_alloc(s, (n ? n : 1) * sizeof *segs);
    sd_block *blocks = segs ? sdp_model_alloc(s, (total_blocks ? total_blocks : 1) * sizeof *blocks)
                            : NULL;
    if (!st && (!segs || !blocks))
        st = sdp_model_fail(s, list, "memory budget exhausted reading host segments");
    size_t bi = 0;
    for (size_t i = 0; i < n && !st; i++) {
        size_t nb = 0;
        segs[i] = raw[i].seg;
        segs[i].first_block = (uint32_t)bi;
        st = build_segment_blocks(s, &raw[i], &blocks[bi], (uint32_t)i, &nb);
        segs[i].n_blocks = (uint32_t)nb;
        bi += nb;
    }
    sdp_arena_uncharge(&s->load->pickle, n * sizeof *raw);
    free(raw);
    if (st) return st;
    s->host.segments = segs;
    s->host.n_segments = n;
    s->host.blocks = blocks;
    s->host.n_blocks = bi;
    return SD_OK;
}

/* host_traces: one list of trace entries, oldest first (the host allocator is one, not
 * one per device). A list of lists is left out with a warning rather than read as a
 * layout it may not be (the torch source at hand does not show host_traces written). */
static sd_status build_host_traces(sd_snapshot *s, const sd_value *list)
{
    const sdp_cont *lc = sdp_cont_of(*list);
    if (!lc || lc->type != SDP_LIST) {
        sdp_model_warn(s, "'host_traces' is not a list; ignored");
        return SD_OK;
    }
    if (!lc->n) return SD_OK;
    if (!lc->run) {
        SDP_TRY(sdp_model_items(s, lc));
        if (sdp_type(lc->items[0]) == SDP_LIST) {
            sdp_model_warn(s, "'host_traces' is a list of lists, not of trace entries; ignored");
            return SD_OK;
        }
    }
    sd_trace_entry *entries;
    sd_status st = read_trace_list(s, list, &entries);
    if (st) return st;
    s->host.trace = entries;
    s->host.n_trace = lc->n;
    return SD_OK;
}

static sd_status build_host(sd_snapshot *s, const sd_value *segments, const sd_value *traces)
{
    s->has_host = true;
    s->host.device = -1;
    sd_status st = segments ? build_host_segments(s, segments) : SD_OK;
    if (!st && traces) st = build_host_traces(s, traces);
    return st;
}

/* ---------- skip_actions ---------- */

/* skip_actions: a list of action names, at the top level or among the allocator settings
 * (snapshot-format.md section 1: a newer _record_memory_history argument). Not a list of
 * strings: not read (unknown beats a wrong list), with a warning. */
static void read_skip_actions(sd_snapshot *s, const sd_value *v)
{
    const sdp_cont *c = sdp_cont_of(*v);
    if (!c || (c->type != SDP_LIST && c->type != SDP_TUPLE) ||
        sdp_model_items(s, c) != SD_OK) {
        sdp_model_warn(s, "'skip_actions' is not a list of action names; ignored");
        return;
    }
    uint32_t mask = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        if (sdp_type(c->items[i]) != SDP_STR) {
            sdp_model_warn(s, "'skip_actions' is not a list of action names; ignored");
            return;
        }
        mask |= 1u << sdp_take_action_of(&c->items[i]);
    }
    s->skip_mask = mask;
    s->has_skip = true;
    if (!mask) return;
    char acts[256] = "", figs[512] = "";
    size_t na = 0, nf = 0;
    for (unsigned a = 0; a < SD_ACT_COUNT; a++)
        if (mask & (1u << a))
            na += (size_t)snprintf(acts + na, na < sizeof acts ? sizeof acts - na : 0, "%s%s",
                                   na ? ", " : "", sd_trace_action_name((sd_trace_action)a));
    const char *f[16];
    size_t n = sd_skip_unreliable_figures(mask, f, 16);
    for (size_t i = 0; i < n && i < 16; i++)
        nf += (size_t)snprintf(figs + nf, nf < sizeof figs ? sizeof figs - nf : 0, "%s%s",
                               nf ? ", " : "", f[i]);
    sdp_model_warn(s, "the recording skipped %s (skip_actions): unreliable: %s", acts,
                   n ? figs : "nothing snapdiff reads");
}

/* ---------- allocator settings ---------- */

/* Copy a value into the model as a setting, containers `depth` levels deep; *budget counts
 * the nodes left, so a shared-object "billion laughs" costs SD_SETTINGS_MAX_NODES at most. */
static sd_status copy_setting(sd_snapshot *s, const sd_value *v, int depth, size_t *budget,
                              sd_setting *out)
{
    const sdp_cont *c = sdp_cont_of(*v);
    switch (sdp_type(*v)) {
    case SDP_BOOL: out->type = SD_SETTING_BOOL; out->b = sd_value_bool(v); return SD_OK;
    case SDP_INT: out->type = SD_SETTING_INT; out->i = sd_value_int(v); return SD_OK;
    case SDP_FLOAT: out->type = SD_SETTING_FLOAT; out->f = sd_value_float(v); return SD_OK;
    case SDP_STR: {
        const sdp_blob *b = sdp_blob_of(*v);
        out->type = SD_SETTING_STR;
        out->str = model_strndup(s, b->data, b->len);
        out->str_len = b->len;
        return out->str ? SD_OK : sdp_model_fail(s, NULL, "memory budget exhausted");
    }
    case SDP_LIST: case SDP_TUPLE: out->type = SD_SETTING_LIST; break;
    case SDP_DICT: out->type = SD_SETTING_DICT; break;
    default: out->type = SD_SETTING_NONE; return SD_OK;
    }
    size_t n = 0;
    for (uint32_t i = 0; depth > 0 && i < c->n; i++)
        n += c->type != SDP_DICT || sdp_type(*sdp_dict_key(c, i)) == SDP_STR;
    if (n > *budget) n = *budget;
    if (c->type != SDP_DICT && n) SDP_TRY(sdp_model_items(s, c));
    *budget -= n;
    if (!n) return SD_OK;
    sd_setting *items = sdp_model_alloc(s, n * sizeof *items);
    if (!items) return sdp_model_fail(s, NULL, "memory budget exhausted");
    memset(items, 0, n * sizeof *items);
    size_t k = 0;
    for (uint32_t i = 0; i < c->n && k < n; i++) {
        const sd_value *x = c->type == SDP_DICT ? sdp_dict_val(c, i) : &c->items[i];
        if (c->type == SDP_DICT) {
            const sdp_blob *key = sdp_blob_of(*sdp_dict_key(c, i));
            if (!key || key->type != SDP_STR) continue;
            items[k].key = model_strndup(s, key->data, key->len);
            items[k].key_len = key->len;
            if (!items[k].key) return sdp_model_fail(s, NULL, "memory budget exhausted");
        }
        sd_status st = copy_setting(s, x, depth - 1, budget, &items[k++]);
        if (st) return st;
    }
    out->items = items;
    out->n_items = k;
    return SD_OK;
}

/* roundup_power2_divisions as torch 2.3+ records it: {"1": 0, "2": 0, ...}. */
static sd_status read_roundup(sd_snapshot *s, const sd_value *v)
{
    sd_allocator_settings *a = &s->settings;
    const sdp_cont *c = sdp_cont_of(*v);
    if (!c || c->type != SDP_DICT) return SD_OK;
    sd_roundup_division *d = c->n ? sdp_model_alloc(s, c->n * sizeof *d) : NULL;
    if (c->n && !d) return sdp_model_fail(s, NULL, "memory budget exhausted");
    for (uint32_t i = 0; i < c->n; i++) {
        const sdp_blob *key = sdp_blob_of(*sdp_dict_key(c, i));
        uint64_t mib = 0;
        for (uint32_t j = 0; key && key->type == SDP_STR && j < key->len; j++) {
            unsigned digit = (unsigned char)key->data[j] - '0';
            if (digit > 9 || mib > (UINT64_MAX - 9) / 10) { mib = 0; break; }
            mib = mib * 10 + digit;
        }
        d[i] = (sd_roundup_division){.interval_mib = mib,
                                     .divisions = sd_value_int(sdp_dict_val(c, i))};
    }
    a->has_roundup_power2_divisions = true;
    a->roundup_power2_divisions = d;
    a->n_roundup_power2_divisions = c->n;
    return SD_OK;
}

static sd_status read_settings(sd_snapshot *s, const sd_value *v)
{
    sd_allocator_settings *a = &s->settings;
    if (sdp_type(*v) != SDP_DICT) {
        sdp_model_warn(s, "'allocator_settings' is not a dict; ignored");
        return SD_OK;
    }
    a->present = true;
    const sd_value *x;
    if ((x = sd_value_dict_get(v, "PYTORCH_CUDA_ALLOC_CONF")) && sdp_type(*x) == SDP_STR) {
        const sdp_blob *b = sdp_blob_of(*x);
        a->alloc_conf = model_strndup(s, b->data, strlen(b->data)); /* a C string, as before */
        if (!a->alloc_conf) return sdp_model_fail(s, NULL, "memory budget exhausted");
    }
    if ((x = sd_value_dict_get(v, "max_split_size")) && sdp_type(*x) == SDP_INT) {
        a->max_split_size = sd_value_int(x);
        a->has_max_split_size = true;
    }
    if ((x = sd_value_dict_get(v, "garbage_collection_threshold")) &&
        (sdp_type(*x) == SDP_FLOAT || sdp_type(*x) == SDP_INT)) {
        a->garbage_collection_threshold = sd_value_float(x);
        a->has_gc_threshold = true;
    }
    if ((x = sd_value_dict_get(v, "expandable_segments")) &&
        (sdp_type(*x) == SDP_BOOL || sdp_type(*x) == SDP_INT)) {
        a->expandable_segments = sd_value_bool(x);
        a->has_expandable_segments = true;
    }
    sd_status st = SD_OK;
    if ((x = sd_value_dict_get(v, "roundup_power2_divisions"))) st = read_roundup(s, x);
    if (st) return st;
    sd_setting *tree = sdp_model_alloc(s, sizeof *tree);
    if (!tree) return sdp_model_fail(s, NULL, "memory budget exhausted");
    memset(tree, 0, sizeof *tree);
    size_t budget = SD_SETTINGS_MAX_NODES;
    st = copy_setting(s, v, 4, &budget, tree);
    a->recorded = tree;
    return st;
}

/* ---------- external annotations ---------- */

static sd_status read_annotations(sd_snapshot *s, const sd_value *v)
{
    const sdp_cont *c = sdp_cont_of(*v);
    if (!c || (c->type != SDP_LIST && c->type != SDP_TUPLE)) {
        sdp_model_warn(s, "'external_annotations' is not a list; ignored");
        return SD_OK;
    }
    if (!c->n) return SD_OK;
    SDP_TRY(sdp_model_items(s, c));
    sd_annotation *a = sdp_model_alloc(s, c->n * sizeof *a);
    if (!a) return sdp_model_fail(s, v, "memory budget exhausted");
    size_t k = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        const sd_value *item = &c->items[i], *x;
        if (sdp_type(*item) != SDP_DICT) continue;
        sd_annotation *e = &a[k++];
        *e = (sd_annotation){.name = "", .device = -1};
        if ((x = sd_value_dict_get(item, "name")) && sdp_type(*x) == SDP_STR) {
            const sdp_blob *b = sdp_blob_of(*x);
            char *name = model_strndup(s, b->data, strlen(b->data));
            if (!name) return sdp_model_fail(s, v, "memory budget exhausted");
            e->name = name;
        }
        if ((x = sd_value_dict_get(item, "stage")) && sdp_type(*x) == SDP_STR) {
            const sdp_blob *b = sdp_blob_of(*x);
            e->stage = strcmp(b->data, "START") == 0 ? SD_STAGE_START
                     : strcmp(b->data, "END") == 0 ? SD_STAGE_END : SD_STAGE_OTHER;
        }
        if ((x = sd_value_dict_get(item, "device")) && sdp_type(*x) == SDP_INT)
            e->device = sd_value_int(x);
        if ((x = sd_value_dict_get(item, "time_us")) && sdp_type(*x) == SDP_INT) {
            e->time_us = sd_value_int(x);
            e->has_time = true;
        }
    }
    s->annotations = a;
    s->n_annotations = k;
    return SD_OK;
}

sd_status sdp_model_build(sd_snapshot *s)
{
    const sd_value *root = &s->load->root, *segments = NULL, *traces = NULL, *settings = NULL,
                  *annotations = NULL, *host_segments = NULL, *host_traces = NULL,
                  *skip = NULL;
    s->load->ctx_offset = sd_value_offset(root);
    if (sdp_type(*root) == SDP_LIST) {
        segments = root; /* torch <= 1.13, or pickle.dump(memory_snapshot()) */
        s->legacy_list = true;
    } else if (sdp_type(*root) == SDP_DICT) {
        segments = sd_value_dict_get(root, "segments");
        traces = sd_value_dict_get(root, "device_traces");
        settings = sd_value_dict_get(root, "allocator_settings");
        annotations = sd_value_dict_get(root, "external_annotations");
        host_segments = sd_value_dict_get(root, "host_segments");
        host_traces = sd_value_dict_get(root, "host_traces");
        skip = sd_value_dict_get(root, "skip_actions");
        const sdp_cont *rc = sdp_cont_of(*root);
        for (uint32_t i = 0; rc && i < rc->n; i++)
            sdp_model_note_key(s, SDP_KEYS_TOP, sdp_dict_key(rc, i));
        if (!skip && settings && sdp_type(*settings) == SDP_DICT)
            skip = sd_value_dict_get(settings, "skip_actions");
        if (!segments)
            return sdp_model_fail(s, root, "not a memory snapshot: the top-level dict has no "
                                  "'segments' key");
        if (sdp_type(*segments) != SDP_LIST)
            return sdp_model_fail(s, root, "not a memory snapshot: 'segments' is not a list");
    } else {
        return sdp_fail(s->load->err, SD_ESNAPSHOT, 0, "not a memory snapshot: the pickle holds a "
                        "%s, expected a dict with 'segments' or a list of segments",
                        sdp_type(*root) == SDP_STR ? "string"
                        : sdp_type(*root) == SDP_TUPLE ? "tuple" : "scalar");
    }
    sd_status st = SD_OK;
    size_t dev_cap = 0;
    st = build_segments(s, segments, &dev_cap);
    if (!st && traces) st = build_traces(s, traces, &dev_cap);
    if (st) return st;
    if (settings) st = read_settings(s, settings);
    if (st) return st;
    if (annotations) st = read_annotations(s, annotations);
    if (st) return st;
    if (host_segments || host_traces) st = build_host(s, host_segments, host_traces);
    if (st) return st;
    if (skip) read_skip_actions(s, skip);
    if (s->n_devices > 1) qsort(s->devices, s->n_devices, sizeof *s->devices, cmp_device);
    return SD_OK;
}
