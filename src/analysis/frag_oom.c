/* frag_oom.c - the out-of-memory events of a trace, and the free memory at each one.
 *
 * The snapshot is the allocator's state at the end of the trace. To know the free blocks
 * at an oom we walk the trace backwards from the snapshot and undo each entry: an alloc
 * frees its block again, a free_completed makes it live again, a segment_alloc removes
 * the segment, a segment_free brings it back, segment_map/unmap shrink and grow
 * expandable ranges. The trace records requested sizes, not block sizes, so a block
 * brought back by undoing free_completed gets its request rounded up to 512 bytes; blocks
 * that exist in the snapshot keep their exact size. An entry that contradicts the later
 * state (an alloc whose block is not live later, ...) stops the undo; older ooms are
 * then judged from the snapshot, with the entry and the contradiction that stopped it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "alloc/alloc_model.h"
#include "analysis/frag_internal.h"
#include "analysis/levers_internal.h"
#include "base/base.h"

/* ---- a map: address -> segment or live block ----------------------------------- *
 * Records in an array, found through the library's one hash table (sdp_htab). A removed
 * record stays in the table as a tombstone (live = false) until a later insert whose probe
 * passes it takes it over, so no cluster is ever broken. Memory is charged to the
 * analysis' budget. */

typedef struct rslot {
    uint64_t key, size, stream;
    uint32_t stack;            /* a live block's stack (0: not known) */
    bool live, small, dflt;
} rslot;

typedef struct rmap {
    sdp_htab tab;
    rslot *recs;
    size_t n_recs, cap_recs;   /* records, tombstones included */
    size_t n;                  /* live records */
    sdp_arena *budget;
} rmap;

static uint64_t rmap_hash(uint64_t key) { return sdp_hash_mix(SDP_HASH_SEED, key); }

static uint64_t rmap_hash_id(const void *ctx, uint32_t id)
{
    const rmap *m = ctx;
    return rmap_hash(m->recs[id].key);
}

static bool rmap_init(rmap *m, size_t expect, sdp_arena *budget)
{
    memset(m, 0, sizeof *m);
    m->budget = budget;
    return sdp_htab_init(&m->tab, expect, budget) == SD_OK &&
           sdp_grow((void **)&m->recs, &m->cap_recs, expect ? expect : 1, sizeof *m->recs,
                    budget) == SD_OK;
}

static void rmap_free(rmap *m)
{
    sdp_htab_free(&m->tab);
    if (m->recs) sdp_arena_uncharge(m->budget, (uint64_t)m->cap_recs * sizeof *m->recs);
    free(m->recs);
    m->recs = NULL;
    m->n_recs = m->cap_recs = m->n = 0;
}

static rslot *rmap_find(const rmap *m, uint64_t key)
{
    for (size_t j = sdp_htab_first(&m->tab, rmap_hash(key)); m->tab.slots[j];
         j = sdp_htab_next(&m->tab, j)) {
        rslot *r = &m->recs[m->tab.slots[j] - 1];
        if (r->live && r->key == key) return r;
    }
    return NULL;
}

/* Insert or overwrite. @return false when memory runs out. */
static bool rmap_put(rmap *m, const rslot *v)
{
    rslot *r = rmap_find(m, v->key);
    if (!r) {                          /* a tombstone on the key's probe path, or a new id */
        size_t j = sdp_htab_first(&m->tab, rmap_hash(v->key));
        for (; m->tab.slots[j] && m->recs[m->tab.slots[j] - 1].live;
             j = sdp_htab_next(&m->tab, j)) {}
        if (m->tab.slots[j]) {
            r = &m->recs[m->tab.slots[j] - 1];
        } else {
            if (m->n_recs >= UINT32_MAX - 1 ||
                sdp_htab_reserve_one(&m->tab, rmap_hash_id, m) != SD_OK ||
                sdp_grow((void **)&m->recs, &m->cap_recs, m->n_recs + 1, sizeof *m->recs,
                         m->budget) != SD_OK)
                return false;
            uint32_t id = (uint32_t)m->n_recs++;
            m->recs[id].key = v->key;  /* the rehash above may have moved the empty slot */
            j = sdp_htab_first(&m->tab, rmap_hash(v->key));
            while (m->tab.slots[j]) j = sdp_htab_next(&m->tab, j);
            sdp_htab_put(&m->tab, j, id);
            r = &m->recs[id];
        }
        m->n++;
    }
    *r = *v;
    r->live = true;
    return true;
}

static void rmap_del(rmap *m, rslot *r)
{
    r->live = false;
    m->n--;
}

/* ---- the undo state --------------------------------------------------------------- */

typedef struct undo_state {
    rmap segs;             /* segment address -> size, stream, small, default pool */
    rmap busy;             /* live (not inactive) block address -> size, stack */
    uint64_t (*sorted)[3]; /* busy blocks by address (address, size, stack), rebuilt per
                            * evaluated oom */
    size_t cap_sorted;
    sdp_arena *budget;
} undo_state;

static void undo_state_free(undo_state *r)
{
    rmap_free(&r->segs);
    rmap_free(&r->busy);
    if (r->sorted) sdp_arena_uncharge(r->budget, (uint64_t)r->cap_sorted * sizeof *r->sorted);
    free(r->sorted);
    r->sorted = NULL;
}

static bool undo_state_init(undo_state *r, const sd_cuda_device *dev, sdp_arena *budget)
{
    memset(r, 0, sizeof *r);
    r->budget = budget;
    if (!rmap_init(&r->segs, dev->n_segments, budget) ||
        !rmap_init(&r->busy, dev->n_blocks, budget))
        return false;
    for (size_t i = 0; i < dev->n_segments; i++) {
        const sd_segment *seg = &dev->segments[i];
        rslot v = {.key = seg->address, .size = seg->total_size, .stream = seg->stream,
                   .small = seg->is_small, .dflt = sdp_frag_default_pool(seg)};
        if (!rmap_put(&r->segs, &v)) return false;
        for (uint32_t k = 0; k < seg->n_blocks; k++) {
            const sd_block *b = &dev->blocks[seg->first_block + k];
            rslot bv = {.key = b->address, .size = b->size, .stack = b->stack};
            if (b->state != SD_BLOCK_INACTIVE && !rmap_put(&r->busy, &bv)) return false;
        }
    }
    return true;
}

static uint64_t round_request(uint64_t size)
{
    return size < 512 ? 512 : (size + 511) / 512 * 512;
}

typedef enum undo_result { UNDO_OK, UNDO_CONFLICT, UNDO_NOMEM } undo_result;

static undo_result undo_map(undo_state *r, const sd_trace_entry *e, sd_replay_stop *why)
{
    rslot *seg = rmap_find(&r->segs, e->addr);
    if (seg) {                                   /* the range starts a segment */
        if (seg->size < e->size) {
            *why = SD_REPLAY_MAP_TOO_BIG;
            return UNDO_CONFLICT;
        }
        rslot rest = *seg;
        rmap_del(&r->segs, seg);
        if (rest.size == e->size) return UNDO_OK;
        rest.key = e->addr + e->size;
        rest.size -= e->size;
        return rmap_put(&r->segs, &rest) ? UNDO_OK : UNDO_NOMEM;
    }
    for (size_t i = 0; i < r->segs.n_recs; i++) {  /* the range ends a segment */
        rslot *s = &r->segs.recs[i];
        if (s->live && s->key + s->size == e->addr + e->size && s->key < e->addr) {
            s->size -= e->size;
            return UNDO_OK;
        }
    }
    *why = SD_REPLAY_MAP_NO_SEGMENT;
    return UNDO_CONFLICT;
}

static undo_result undo_unmap(undo_state *r, const sd_trace_entry *e)
{
    rslot *before = NULL;
    for (size_t i = 0; i < r->segs.n_recs && !before; i++) {
        rslot *s = &r->segs.recs[i];
        if (s->live && s->key + s->size == e->addr) before = s;
    }
    rslot *after = rmap_find(&r->segs, e->addr + e->size);
    if (before) {
        before->size += e->size;
        if (after) {
            before->size += after->size;
            rmap_del(&r->segs, after);
        }
        return UNDO_OK;
    }
    rslot v = {.key = e->addr, .size = e->size, .stream = e->stream,
               .small = e->size <= SDP_FRAG_SMALL_PAGE, .dflt = true};
    if (after) {
        v.size += after->size;
        v.stream = after->stream;
        v.small = after->small;
        v.dflt = after->dflt;
        rmap_del(&r->segs, after);
    }
    return rmap_put(&r->segs, &v) ? UNDO_OK : UNDO_NOMEM;
}

/* Undo one entry. On UNDO_CONFLICT *why says what contradicted the later state. */
static undo_result undo(undo_state *r, const sd_trace_entry *e, sd_replay_stop *why)
{
    rslot *hit;
    switch ((sd_trace_action)e->action) {
    case SD_ACT_ALLOC:
        hit = rmap_find(&r->busy, e->addr);
        if (!hit) break;
        rmap_del(&r->busy, hit);
        return UNDO_OK;
    case SD_ACT_FREE_REQUESTED:
        if (!rmap_find(&r->busy, e->addr)) break;
        return UNDO_OK;
    case SD_ACT_FREE_COMPLETED: {
        if (rmap_find(&r->busy, e->addr)) {
            *why = SD_REPLAY_BLOCK_LIVE_LATER;
            return UNDO_CONFLICT;
        }
        rslot v = {.key = e->addr, .size = round_request(e->size), .stack = e->stack};
        return rmap_put(&r->busy, &v) ? UNDO_OK : UNDO_NOMEM;
    }
    case SD_ACT_SEGMENT_ALLOC:
        hit = rmap_find(&r->segs, e->addr);
        if (!hit) {
            *why = SD_REPLAY_NO_SEGMENT_LATER;
            return UNDO_CONFLICT;
        }
        rmap_del(&r->segs, hit);
        return UNDO_OK;
    case SD_ACT_SEGMENT_FREE: {
        if (rmap_find(&r->segs, e->addr)) {
            *why = SD_REPLAY_SEGMENT_LATER;
            return UNDO_CONFLICT;
        }
        rslot v = {.key = e->addr, .size = e->size, .stream = e->stream,
                   .small = e->size <= SDP_FRAG_SMALL_PAGE, .dflt = true};
        return rmap_put(&r->segs, &v) ? UNDO_OK : UNDO_NOMEM;
    }
    case SD_ACT_SEGMENT_MAP:
        return undo_map(r, e, why);
    case SD_ACT_SEGMENT_UNMAP:
        return undo_unmap(r, e);
    default:
        return UNDO_OK;
    }
    *why = SD_REPLAY_NO_BLOCK_LATER;
    return UNDO_CONFLICT;
}

/* ---- free memory at one point ----------------------------------------------------- */

typedef struct free_sum {
    uint64_t largest, total;
} free_sum;

static void add_run(free_sum *fs, uint64_t run)
{
    fs->total += run;
    if (run > fs->largest) fs->largest = run;
}

static int cmp_block(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The busy blocks of the replayed state by address into r->sorted. @return their count,
 * or SIZE_MAX when memory runs out. */
static size_t sort_busy(undo_state *r)
{
    size_t n = 0;
    if (sdp_grow((void **)&r->sorted, &r->cap_sorted, r->busy.n ? r->busy.n : 1,
                 sizeof *r->sorted, r->budget) != SD_OK)
        return SIZE_MAX;
    for (size_t i = 0; i < r->busy.n_recs; i++) {
        if (!r->busy.recs[i].live) continue;
        r->sorted[n][0] = r->busy.recs[i].key;
        r->sorted[n][1] = r->busy.recs[i].size;
        r->sorted[n][2] = r->busy.recs[i].stack;
        n++;
    }
    qsort(r->sorted, n, sizeof *r->sorted, cmp_block);
    return n;
}

/* The free bytes of segment s in the replayed state (s minus the live blocks overlapping
 * it; r->sorted holds n busy blocks by address), each run handed to fs when given.
 * *busy: whether a live block overlaps it. */
static uint64_t segment_free(const undo_state *r, size_t n, const rslot *s, free_sum *fs,
                             bool *busy)
{
    uint64_t end = s->key + s->size, pos = s->key, free = 0;
    size_t lo = 0, hi = n;                   /* first busy block starting after s->key */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->sorted[mid][0] <= s->key) lo = mid + 1;
        else hi = mid;
    }
    *busy = false;
    for (size_t k = lo ? lo - 1 : 0; k < n && r->sorted[k][0] < end; k++) {
        uint64_t b_lo = r->sorted[k][0], b_hi = b_lo + r->sorted[k][1];
        if (b_hi <= pos) continue;
        *busy = true;
        if (b_lo > pos) {
            free += b_lo - pos;
            if (fs) add_run(fs, b_lo - pos);
        }
        pos = b_hi;
    }
    if (end > pos) {
        free += end - pos;
        if (fs) add_run(fs, end - pos);
    }
    return free;
}

/* Free runs of the replayed state in segments of the default pool, the oom's stream and
 * size class (fs), and the allocator's free memory over every segment (o). The busy
 * blocks stay sorted in r->sorted (*n_busy of them) for the sites at the oom. */
static bool undo_free_runs(undo_state *r, sd_frag_oom *o, free_sum *fs, size_t *n_busy)
{
    size_t n = sort_busy(r);
    if (n == SIZE_MAX) return false;
    for (size_t i = 0; i < r->segs.n_recs; i++) {
        const rslot *s = &r->segs.recs[i];
        if (!s->live) continue;
        bool mine = s->dflt && s->stream == o->stream && s->small == o->small_pool, busy;
        uint64_t free = segment_free(r, n, s, mine ? fs : NULL, &busy);
        if (busy) o->stranded_free_bytes += free;
        else o->cached_free_bytes += free;
    }
    *n_busy = n;
    return true;
}

static void snapshot_free_runs(const sd_cuda_device *dev, sd_frag_oom *o, free_sum *fs)
{
    for (size_t i = 0; i < dev->n_segments; i++) {
        const sd_segment *seg = &dev->segments[i];
        bool mine = sdp_frag_default_pool(seg) && seg->stream == o->stream
                    && seg->is_small == o->small_pool;
        uint64_t free = 0;
        bool busy = false;
        for (uint32_t k = 0; k < seg->n_blocks; k++) {
            const sd_block *b = &dev->blocks[seg->first_block + k];
            if (b->state != SD_BLOCK_INACTIVE) {
                busy = true;
                continue;
            }
            free += b->size;
            if (mine) add_run(fs, b->size);
        }
        if (busy) o->stranded_free_bytes += free;
        else o->cached_free_bytes += free;
    }
}

/* cudaMalloc would have found the request's segment (sdp_alloc_segment_size of the rounded
 * request, as alloc_block asks) on a device with this much free: the refusal was the
 * process's limit (set_fraction's allowed_memory_maximum in alloc_block), not the
 * device's. The slack covers the driver's own needs. */
static bool device_had_room(const sd_frag_oom *o)
{
    sd_alloc_conf plain;
    sd_alloc_conf_default(&plain);
    uint64_t segment = sdp_alloc_segment_size(sdp_alloc_round_size(&plain, o->request_bytes));
    return o->device_free_bytes > segment + SD_FRAG_PROCESS_LIMIT_SLACK;
}

/* The verdict from the figures (frag.h, docs/oom.md). */
static sd_oom_cause cause_of(const sd_frag_oom *o)
{
    uint64_t request = o->request_bytes, devfree = o->process_limit ? 0 : o->device_free_bytes;
    if (o->largest_free_bytes >= request) return SD_OOM_UNCLEAR;
    uint64_t all = devfree + o->allocator_free_bytes;
    if (all >= request) return SD_OOM_FRAGMENTATION;
    return o->allocator_free_bytes * 2 >= request - devfree ? SD_OOM_BOTH : SD_OOM_CAPACITY;
}

/* ---- the walk --------------------------------------------------------------------- */

/* The line that asked: the site of the entry's stack by the diff's rule (attrib.h). */
static bool oom_site(sd_frag *f, sd_frag_oom *o)
{
    o->site = (sd_site){.site = -1, .via = -1};
    size_t n = 0;
    const uint32_t *ids = o->stack ? sd_snapshot_stack(f->snap, o->stack, &n) : NULL;
    if (!ids || !n) return true;
    const sd_frame **frames = sdp_frag_calloc(f, n, sizeof *frames);
    if (!frames) return false;
    for (size_t k = 0; k < n; k++) frames[k] = sd_snapshot_frame(f->snap, ids[k]);
    sd_attrib_site(f->attrib, frames, n, &o->site);
    return true;
}

/* The lever for a site of category c (sd_frag_lever_code); false for the categories no
 * model change cuts (pre_trace, persistent, other). The loss is told by its site's name. */
static bool lever_of(sd_category c, const char *key, sd_frag_lever_code *out)
{
    switch (c) {
    case SD_CAT_ACTIVATIONS: *out = SD_LEVER_CHECKPOINTING; return true;
    case SD_CAT_OPTIMIZER_STATE: *out = SD_LEVER_SHARD_OPTIMIZER; return true;
    case SD_CAT_GRADIENTS: case SD_CAT_PARAMETERS: *out = SD_LEVER_SHARD_WEIGHTS; return true;
    case SD_CAT_TEMPORARIES:
        if (strstr(key, "cross_entropy") || strstr(key, "log_softmax") || strstr(key, "loss"))
            *out = SD_LEVER_FUSED_LOSS;
        else if (strstr(key, "optim"))
            *out = SD_LEVER_FOREACH_OFF;
        else
            *out = SD_LEVER_SMALLER_BATCH;
        return true;
    default: return false;
    }
}

const char *sd_frag_lever_name(sd_frag_lever_code c)
{
    switch (c) {
    case SD_LEVER_CHECKPOINTING: return "activation-checkpointing";
    case SD_LEVER_FUSED_LOSS: return "fused-cross-entropy";
    case SD_LEVER_FOREACH_OFF: return "foreach-false";
    case SD_LEVER_SHARD_OPTIMIZER: return "shard-optimizer-state";
    case SD_LEVER_SHARD_WEIGHTS: return "shard-or-lower-precision";
    case SD_LEVER_SMALLER_BATCH: return "smaller-micro-batch";
    }
    return "smaller-micro-batch";
}

/* What was live at the oom by category, and the levers of its largest sites. */
static sd_status oom_levers(sd_frag *f, sd_frag_oom *o, const sd_peak_table *t)
{
    sd_category_total *cats = sdp_frag_calloc(f, t->n_categories ? t->n_categories : 1,
                                              sizeof *cats);
    sd_frag_lever *lv = sdp_frag_calloc(f, SD_FRAG_LEVERS, sizeof *lv);
    if (!cats || !lv) return SD_ENOMEM;
    memcpy(cats, t->categories, t->n_categories * sizeof *cats);
    o->categories = cats;
    o->n_categories = t->n_categories;
    size_t n = 0;
    for (size_t g = 0; g < t->n_groups && n < SD_FRAG_LEVERS; g++) {
        const sd_peak_group *x = &t->groups[g];
        sd_frag_lever_code code;
        if (!x->rep_stack || x->rep_site.site < 0 || !lever_of(x->category, x->key, &code))
            continue;
        lv[n++] = (sd_frag_lever){.category = x->category, .stack = x->rep_stack,
                                  .site = x->rep_site, .bytes = x->bytes, .lever = code};
    }
    o->levers = lv;
    o->n_levers = n;
    return SD_OK;
}

/* The live blocks after the oom's entry by the one peak rule (peak.h), grouped by site:
 * every site with frames into the arena, the largest SD_FRAG_OOM_SITES into o->sites. */
static sd_status oom_live(sd_frag *f, size_t peak_dev, sd_frag_oom *o)
{
    sd_peak_table t;
    sd_levers *lv = NULL;
    if (sdp_peak_live_levers(f->peak, peak_dev, o->trace_index, &t, &lv)) return SD_ENOMEM;
    o->model_levers = lv;       /* freed by sd_frag_free */
    o->live_known = true;
    o->live_bytes = t.bytes;
    o->live_blocks = t.blocks;
    sd_frag_live_site *all = sdp_frag_calloc(f, t.n_groups ? t.n_groups : 1, sizeof *all);
    if (!all) return SD_ENOMEM;
    size_t n = 0;
    for (size_t g = 0; g < t.n_groups; g++) {
        const sd_peak_group *x = &t.groups[g];
        if (!x->rep_stack || x->rep_site.site < 0) continue;   /* no frames: no site */
        all[n++] = (sd_frag_live_site){.stack = x->rep_stack, .site = x->rep_site,
                                       .bytes = x->bytes, .blocks = x->blocks};
    }
    o->all_sites = all;
    o->n_all_sites = n;
    for (size_t i = 0; i < n && i < SD_FRAG_OOM_SITES; i++) o->sites[o->n_sites++] = all[i];
    return oom_levers(f, o, &t);
}

/* What was live at each of the last SD_FRAG_OOM_REPLAY_LIMIT ooms (fewer on a long trace:
 * SD_FRAG_OOM_LIVE_STEPS trace entries replayed in all): one walk per oom from the
 * trace's start (sd_peak_live_at), so the limit bounds the time. */
sd_status sdp_frag_peak(sd_frag *f)
{
    if (!f->peak)
        f->peak = sd_peak_create(f->snap, &(sd_peak_options){
            .attrib = {.group_by = SD_GROUP_SITE}, .max_memory = f->opts.max_memory}, NULL);
    return f->peak ? SD_OK : SD_ENOMEM;
}

static sd_status ooms_live(sd_frag *f, const sd_cuda_device *dev, sd_frag_oom *ooms,
                           size_t count)
{
    if (sdp_frag_peak(f)) return SD_ENOMEM;
    const sd_peak_device *pd = sd_peak_device_find(f->peak, dev->device);
    if (!pd) return SD_OK;
    size_t peak_dev = (size_t)(pd - sd_peak_device_at(f->peak, 0));
    size_t limit = SD_FRAG_OOM_LIVE_STEPS / (dev->n_trace ? dev->n_trace : 1);
    if (limit > SD_FRAG_OOM_REPLAY_LIMIT) limit = SD_FRAG_OOM_REPLAY_LIMIT;
    if (limit < 1) limit = 1;
    size_t from = count > limit ? count - limit : 0;
    for (size_t i = from; i < count; i++)
        if (oom_live(f, peak_dev, &ooms[i])) return SD_ENOMEM;
    return SD_OK;
}

static void start_event(sd_frag_oom *o, size_t i, const sd_trace_entry *e)
{
    memset(o, 0, sizeof *o);
    o->trace_index = i;
    o->has_time = e->has_time;
    o->time_us = e->has_time ? e->time_us : 0;
    o->request_bytes = e->size;
    o->device_free_bytes = e->device_free;
    o->stream = e->stream;
    o->small_pool = e->size <= SDP_FRAG_SMALL_REQUEST;
    o->stack = e->stack;
}

sd_status sdp_frag_ooms(sd_frag *f, const sd_cuda_device *dev, sd_frag_oom **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t count = 0, first = 0;
    for (size_t i = dev->n_trace; i-- > 0;)
        if (dev->trace[i].action == SD_ACT_OOM) {
            count++;
            first = i;
        }
    if (!count) return SD_OK;
    sd_frag_oom *ooms = sdp_frag_calloc(f, count, sizeof *ooms);
    undo_state r;
    if (!ooms) return SD_ENOMEM;
    if (!undo_state_init(&r, dev, &f->mem)) goto nomem;
    sd_frag_oom failure = {.stop = SD_REPLAY_DONE};   /* where the undo stopped */
    size_t k = count;                            /* events are filled newest first */
    /* Past the oldest oom the undo goes on to the trace's first entry, to learn whether
     * the trace reaches back to the run's start. */
    for (size_t i = dev->n_trace; i-- > 0;) {
        const sd_trace_entry *e = &dev->trace[i];
        if (i < first && failure.stop != SD_REPLAY_DONE) break;
        if (e->action == SD_ACT_OOM) {
            sd_frag_oom *o = &ooms[--k];
            free_sum fs = {0, 0};
            start_event(o, i, e);
            if (!oom_site(f, o)) goto nomem;
            if (failure.stop == SD_REPLAY_DONE && count - k <= SD_FRAG_OOM_REPLAY_LIMIT) {
                size_t n_busy = 0;
                if (!undo_free_runs(&r, o, &fs, &n_busy)) goto nomem;
                o->replayed = true;
            } else {
                snapshot_free_runs(dev, o, &fs);
                o->stop = failure.stop != SD_REPLAY_DONE ? failure.stop : SD_REPLAY_PAST_LIMIT;
                o->stop_index = failure.stop_index;
                o->stop_action = failure.stop_action;
                o->stop_addr = failure.stop_addr;
            }
            o->largest_free_bytes = fs.largest;
            o->free_bytes = fs.total;
            o->allocator_free_bytes = o->cached_free_bytes + o->stranded_free_bytes;
            o->process_limit = device_had_room(o);
            o->cause = cause_of(o);
        }
        if (failure.stop != SD_REPLAY_DONE) continue;
        sd_replay_stop why = SD_REPLAY_DONE;
        undo_result u = undo(&r, e, &why);
        if (u == UNDO_NOMEM) goto nomem;
        if (u == UNDO_CONFLICT) {
            failure.stop = why;
            failure.stop_index = i;
            failure.stop_action = e->action;
            failure.stop_addr = e->addr;
        }
    }
    /* Every entry undone, back to a state with nothing live and nothing reserved: the
     * trace covers the run's start. */
    bool at_start = failure.stop == SD_REPLAY_DONE && r.busy.n == 0 && r.segs.n == 0;
    for (size_t i = 0; i < count; i++) ooms[i].at_run_start = at_start && ooms[i].replayed;
    undo_state_free(&r);
    if (ooms_live(f, dev, ooms, count)) return SD_ENOMEM;
    *out = ooms;
    *n = count;
    return SD_OK;
nomem:
    undo_state_free(&r);
    return SD_ENOMEM;
}

const char *sd_oom_cause_name(sd_oom_cause c)
{
    switch (c) {
    case SD_OOM_FRAGMENTATION: return "fragmentation";
    case SD_OOM_CAPACITY: return "capacity";
    case SD_OOM_UNCLEAR: return "unclear";
    case SD_OOM_BOTH: return "both";
    }
    return "unclear";
}
