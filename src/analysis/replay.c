/* replay.c - sd_replay: the state at the trace's start rebuilt, the fidelity pass that
 * follows the recorded choices, and the free-running what-ifs (replay_model.c). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "replay_model.h"
#include "snapdiff/replay.h"

enum { DEFAULT_POINTS = 256, MAX_POINTS = 4096 };

struct sd_replay {
    const sd_snapshot *snap;
    sd_replay_device *devices;
    size_t n_devices;
    void **owned;              /* every array the results point to */
    size_t n_owned, cap_owned;
    sd_alloc_conf *confs;      /* [0] recorded, then one per option */
    const char *const *conf_text;
    size_t n_confs;
};

const char *sd_replay_warning_name(sd_replay_warning_code c)
{
    static const char *const names[] = {"unknown-free", "overlapping-alloc", "unknown-segment",
                                        "ring-buffer-wrapped", "bad-start-block"};
    return (unsigned)c < SD_REPLAY_WARNING_COUNT ? names[c] : "?";
}

static void *own(sd_replay *r, size_t bytes)
{
    if (r->n_owned == r->cap_owned) {
        size_t n = r->cap_owned ? r->cap_owned * 2 : 32;
        void **p = realloc(r->owned, n * sizeof *p);
        if (!p) return NULL;
        r->owned = p;
        r->cap_owned = n;
    }
    void *q = calloc(1, bytes ? bytes : 1);
    if (q) r->owned[r->n_owned++] = q;
    return q;
}

/* ---- the start state ---- */

typedef struct start_seg {
    uint64_t addr, size, stream;
    uint16_t pool;
    bool expandable;
} start_seg;

typedef struct start_blk {
    uint64_t addr, size, stream;
    bool size_known;           /* from the snapshot; else rounded from a free's request */
} start_blk;

typedef struct start_state {
    start_seg *segs; size_t nsegs;
    start_blk *blks; size_t nblks;
    uint64_t reserved, allocated;
} start_state;

static int cmp_seg(const void *a, const void *b)
{
    uint64_t x = ((const start_seg *)a)->addr, y = ((const start_seg *)b)->addr;
    return x < y ? -1 : x > y;
}

static int cmp_blk(const void *a, const void *b)
{
    uint64_t x = ((const start_blk *)a)->addr, y = ((const start_blk *)b)->addr;
    return x < y ? -1 : x > y;
}

static bool push(void **p, size_t *n, size_t *cap, const void *item, size_t elem)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        void *q = realloc(*p, c * elem);
        if (!q) return false;
        *p = q;
        *cap = c;
    }
    memcpy((char *)*p + *n * elem, item, elem);
    (*n)++;
    return true;
}

/* Private pools: index 0 is the default pool, then one per distinct segment_pool_id. */
typedef struct pools {
    int64_t (*ids)[2];
    size_t n;
} pools;

static uint16_t pool_index(pools *p, const sd_segment *g)
{
    if (!g->has_pool_id || (g->pool_id[0] == 0 && g->pool_id[1] == 0)) return 0;
    for (size_t i = 1; i < p->n; i++)
        if (p->ids[i][0] == g->pool_id[0] && p->ids[i][1] == g->pool_id[1]) return (uint16_t)i;
    return 0;
}

static bool collect_pools(const sd_cuda_device *d, pools *p)
{
    p->ids = malloc((d->n_segments + 1) * sizeof *p->ids);
    if (!p->ids) return false;
    p->n = 1;
    p->ids[0][0] = p->ids[0][1] = 0;
    for (size_t i = 0; i < d->n_segments && p->n < 1000; i++) {
        const sd_segment *g = &d->segments[i];
        if (pool_index(p, g) == 0 && g->has_pool_id && (g->pool_id[0] || g->pool_id[1])) {
            p->ids[p->n][0] = g->pool_id[0];
            p->ids[p->n][1] = g->pool_id[1];
            p->n++;
        }
    }
    return true;
}

/* The snapshot's segment at addr (segments are sorted by address), or NULL. */
static const sd_segment *end_segment_at(const sd_cuda_device *d, uint64_t addr)
{
    size_t lo = 0, hi = d->n_segments;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->segments[mid].address < addr) lo = mid + 1;
        else hi = mid;
    }
    return lo < d->n_segments && d->segments[lo].address == addr ? &d->segments[lo] : NULL;
}

static uint8_t release_action(const sd_cuda_device *d)
{
    for (size_t i = 0; i < d->n_trace; i++)
        if (d->trace[i].action == SD_ACT_FREE_COMPLETED) return SD_ACT_FREE_COMPLETED;
    return SD_ACT_FREE_REQUESTED;
}

static bool is_block_live(uint8_t st) { return st == SD_BLOCK_ALLOCATED || st == SD_BLOCK_PENDING_FREE; }

static void start_state_free(start_state *st)
{
    free(st->segs);
    free(st->blks);
}

/* Fix the sizes of blocks known only from a free's request: rounded, and the rest of
 * the gap when no free block could be there (torch never leaves a free block of <= 1 MiB
 * in the large pool, nor under 512 B in the small one). Drop blocks that overlap. */
static void tile_start(start_state *st, const sd_alloc_conf *rec, uint64_t *bad)
{
    if (st->nsegs > 1) qsort(st->segs, st->nsegs, sizeof *st->segs, cmp_seg);
    if (st->nblks > 1) qsort(st->blks, st->nblks, sizeof *st->blks, cmp_blk);
    size_t w = 0;
    for (size_t i = 0; i < st->nsegs; i++) {
        if (w && st->segs[i].addr < st->segs[w - 1].addr + st->segs[w - 1].size) {
            (*bad)++;
            continue;
        }
        st->segs[w++] = st->segs[i];
    }
    st->nsegs = w;
    size_t si = 0, out = 0;
    for (size_t i = 0; i < st->nblks; i++) {
        start_blk b = st->blks[i];
        while (si < st->nsegs && st->segs[si].addr + st->segs[si].size <= b.addr) si++;
        if (si == st->nsegs || b.addr < st->segs[si].addr) {
            (*bad)++;
            continue;
        }
        const start_seg *g = &st->segs[si];
        uint64_t seg_end = g->addr + g->size;
        uint64_t next = seg_end;
        if (i + 1 < st->nblks && st->blks[i + 1].addr < next) next = st->blks[i + 1].addr;
        if (out && st->blks[out - 1].addr + st->blks[out - 1].size > b.addr) {
            (*bad)++;
            continue;
        }
        if (!b.size_known) {
            b.size = sdp_round_size(rec, b.size);
            bool small = g->size <= SDP_KSMALL_BUFFER && !g->expandable;
            if (b.size < next - b.addr) {
                uint64_t rest = next - b.addr - b.size;
                if (small ? rest < SDP_KMIN_BLOCK : rest <= SDP_KSMALL_SIZE) b.size += rest;
            }
        }
        if (b.size > seg_end - b.addr) b.size = seg_end - b.addr;
        st->blks[out++] = b;
    }
    st->nblks = out;
    st->reserved = st->allocated = 0;
    for (size_t i = 0; i < st->nsegs; i++) st->reserved += st->segs[i].size;
    for (size_t i = 0; i < st->nblks; i++) st->allocated += st->blks[i].size;
}

/* The segment addresses of the snapshot's other devices (their segments, and the segments
 * their traces make): a segment event of this device at one of them is another device's. */
static bool other_segments(const sd_snapshot *s, const sd_cuda_device *self, sdp_amap *out)
{
    if (!sdp_amap_init(out, 64)) return false;
    for (size_t i = 0; i < sd_snapshot_device_count(s); i++) {
        const sd_cuda_device *d = sd_snapshot_device(s, i);
        if (d == self) continue;
        for (size_t k = 0; k < d->n_segments; k++)
            if (!sdp_amap_put(out, d->segments[k].address, 1)) return false;
        for (size_t k = 0; k < d->n_trace; k++)
            if ((d->trace[k].action == SD_ACT_SEGMENT_ALLOC ||
                 d->trace[k].action == SD_ACT_SEGMENT_MAP) &&
                !sdp_amap_put(out, d->trace[k].addr, 1))
                return false;
    }
    return true;
}

static sd_status rebuild_start(const sd_cuda_device *d, pools *pl, const sd_alloc_conf *rec,
                               const sdp_amap *others, start_state *st, uint64_t *bad)
{
    memset(st, 0, sizeof *st);
    size_t cap_s = 0, cap_b = 0;
    sdp_amap first, seen_seg;
    /* Sized by growth: distinct addresses are far fewer than entries. */
    if (!sdp_amap_init(&first, 1024) || !sdp_amap_init(&seen_seg, 64)) {
        sdp_amap_free(&first);
        sdp_amap_free(&seen_seg);
        return SD_ENOMEM;
    }
    uint8_t rel = release_action(d);
    bool ok = true;
    for (size_t i = 0; i < d->n_trace && ok; i++) {
        const sd_trace_entry *e = &d->trace[i];
        if (e->action == SD_ACT_ALLOC) {
            if (sdp_amap_get(&first, e->addr) == SDP_NIL) ok = sdp_amap_put(&first, e->addr, 1);
        } else if (e->action == rel) {
            if (sdp_amap_get(&first, e->addr) == SDP_NIL) {
                start_blk b = {e->addr, e->size, e->stream, false};
                ok = sdp_amap_put(&first, e->addr, 2) &&
                     push((void **)&st->blks, &st->nblks, &cap_b, &b, sizeof b);
            }
        } else if (e->action == SD_ACT_SEGMENT_ALLOC || e->action == SD_ACT_SEGMENT_MAP) {
            if (sdp_amap_get(&seen_seg, e->addr) == SDP_NIL) ok = sdp_amap_put(&seen_seg, e->addr, 1);
        } else if (e->action == SD_ACT_SEGMENT_FREE || e->action == SD_ACT_SEGMENT_UNMAP) {
            if (sdp_amap_get(&seen_seg, e->addr) == SDP_NIL &&
                sdp_amap_get(others, e->addr) != SDP_NIL) {
                /* another device's segment: not ours (counted when the replay meets it) */
            } else if (sdp_amap_get(&seen_seg, e->addr) == SDP_NIL) {
                const sd_segment *g = end_segment_at(d, e->addr);
                start_seg s = {e->addr, e->size, e->stream, g ? pool_index(pl, g) : 0,
                               e->action == SD_ACT_SEGMENT_UNMAP};
                ok = sdp_amap_put(&seen_seg, e->addr, 2) &&
                     push((void **)&st->segs, &st->nsegs, &cap_s, &s, sizeof s);
            }
        }
    }
    for (size_t i = 0; i < d->n_segments && ok; i++) {
        const sd_segment *g = &d->segments[i];
        if (sdp_amap_get(&seen_seg, g->address) != SDP_NIL) continue;
        start_seg s = {g->address, g->total_size, g->stream, pool_index(pl, g), g->is_expandable};
        ok = push((void **)&st->segs, &st->nsegs, &cap_s, &s, sizeof s);
        for (uint32_t k = 0; k < g->n_blocks && ok; k++) {
            const sd_block *b = &d->blocks[g->first_block + k];
            if (!is_block_live(b->state) || sdp_amap_get(&first, b->address) != SDP_NIL) continue;
            start_blk sb = {b->address, b->size, g->stream, true};
            ok = push((void **)&st->blks, &st->nblks, &cap_b, &sb, sizeof sb);
        }
    }
    sdp_amap_free(&first);
    sdp_amap_free(&seen_seg);
    if (!ok) {
        start_state_free(st);
        memset(st, 0, sizeof *st);
        return SD_ENOMEM;
    }
    tile_start(st, rec, bad);
    return SD_OK;
}

/* Build the start state into a model. by_rec: the live blocks by their (recorded)
 * address, for the free-running replay. */
static bool load_start(sdp_rsim *m, const start_state *st, sdp_amap *by_rec)
{
    size_t bi = 0;
    for (size_t i = 0; i < st->nsegs; i++) {
        const start_seg *g = &st->segs[i];
        uint16_t pool = (uint16_t)(g->pool * 2 + (g->size <= SDP_KSMALL_BUFFER && !g->expandable));
        if (pool >= m->npools) pool = 0;
        uint32_t s = sdp_rsim_add_segment(m, g->addr, g->size, g->stream, pool, g->expandable);
        if (s == SDP_NIL) return false;
        while (bi < st->nblks && st->blks[bi].addr < g->addr + g->size) {
            const start_blk *b = &st->blks[bi++];
            uint32_t x = sdp_rsim_carve(m, m->s[s].tail, b->addr, b->size, true);
            if (x == SDP_NIL) continue;
            if (by_rec && !sdp_amap_put(by_rec, b->addr, x)) return false;
        }
    }
    return !m->nomem;
}

/* ---- timelines ---- */

typedef struct tline {
    sd_replay_point *pts;
    size_t n, npts, n_entries;
    size_t k, next_start;      /* the current bucket, and the first entry of the next */
    bool *used;
} tline;

/* The first entry of bucket k: entries e with e * npts / n_entries == k. */
static size_t tl_start(const tline *t, size_t k)
{
    return (size_t)(((unsigned __int128)k * t->n_entries + t->npts - 1) / t->npts);
}

static bool tl_init(tline *t, size_t npts, size_t n_entries)
{
    if (npts > n_entries) npts = n_entries ? n_entries : 1;
    t->npts = npts;
    t->n = 0;
    t->n_entries = n_entries ? n_entries : 1;
    t->k = 0;
    t->next_start = tl_start(t, 1);
    t->pts = calloc(npts, sizeof *t->pts);
    t->used = calloc(npts, sizeof *t->used);
    return t->pts && t->used;
}

static void tl_note(tline *t, size_t entry, uint64_t reserved)
{
    /* Entries come in order: a division only when a bucket ends. */
    while (entry >= t->next_start && t->k + 1 < t->npts) {
        t->k++;
        t->next_start = tl_start(t, t->k + 1);
    }
    size_t k = t->k;
    sd_replay_point *p = &t->pts[k];
    if (!t->used[k] || reserved > p->reserved_bytes) p->reserved_bytes = reserved;
    p->entry = entry;
    t->used[k] = true;
}

/* Into memory the replay owns, empty buckets left out. */
static sd_replay_point *tl_finish(sd_replay *r, tline *t, size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; i < t->npts; i++)
        if (t->used[i]) t->pts[k++] = t->pts[i];
    sd_replay_point *out = own(r, k * sizeof *out);
    if (out) memcpy(out, t->pts, k * sizeof *out);
    *n = out ? k : 0;
    free(t->pts);
    free(t->used);
    return out;
}

/* ---- the recorded figures ---- */

static uint64_t sub_sat(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

static bool recorded_walk(sd_replay *r, const sd_cuda_device *d, sd_replay_device *out,
                          size_t npts, uint64_t *oom_capacity)
{
    tline t;
    if (!tl_init(&t, npts, d->n_trace)) return false;
    uint64_t res = out->start_reserved_bytes;
    out->recorded_peak_reserved_bytes = res;
    *oom_capacity = 0;
    for (size_t i = 0; i < d->n_trace; i++) {
        const sd_trace_entry *e = &d->trace[i];
        switch (e->action) {
        case SD_ACT_SEGMENT_ALLOC: case SD_ACT_SEGMENT_MAP:
            res += e->size;
            out->recorded_segment_allocs++;
            break;
        case SD_ACT_SEGMENT_FREE: case SD_ACT_SEGMENT_UNMAP:
            res = sub_sat(res, e->size);
            break;
        case SD_ACT_OOM:
            if (!out->recorded_ooms) *oom_capacity = res + e->device_free;
            out->recorded_ooms++;
            break;
        case SD_ACT_ALLOC:
            out->allocs++;
            break;
        default:
            break;
        }
        if (res > out->recorded_peak_reserved_bytes) out->recorded_peak_reserved_bytes = res;
        tl_note(&t, i, res);
    }
    out->recorded_end_reserved_bytes = res;
    out->recorded_timeline = tl_finish(r, &t, &out->n_recorded_timeline);
    return true;
}

/* ---- fidelity ---- */

typedef struct pending {
    uint64_t addr, size, stream;
    uint16_t pool;
    bool expandable;
} pending;

typedef struct fid {
    sdp_rsim m;
    const sd_cuda_device *d;
    pools *pl;
    pending *pend; size_t npend, cap_pend;
    sd_replay_device *out;
    uint16_t *alloc_pp;        /* private pool of each alloc entry (NULL: all default) */
} fid;

static void flush_pending(fid *f)
{
    for (size_t i = 0; i < f->npend; i++) {
        const pending *p = &f->pend[i];
        if (p->expandable) {
            uint32_t s = sdp_rsim_expandable_ending_at(&f->m, p->addr);
            if (s != SDP_NIL) {
                sdp_rsim_grow(&f->m, s, p->size);
                continue;
            }
        }
        sdp_rsim_add_segment(&f->m, p->addr, p->size, p->stream, p->pool, p->expandable);
    }
    f->npend = 0;
}

/* The live segment whose range holds addr (a scan: only for traces that do not add up). */
static uint32_t block_holding(const sdp_rsim *m, uint64_t addr)
{
    for (size_t i = 0; i < m->nlive; i++) {
        const sdp_rseg *g = &m->s[m->live[i]];
        if (addr < g->addr || addr >= g->addr + g->size) continue;
        for (uint32_t x = g->head; x != SDP_NIL; x = m->b[x].next)
            if (addr >= m->b[x].addr && addr < m->b[x].addr + m->b[x].size) return x;
    }
    return SDP_NIL;
}

static void fid_alloc(fid *f, size_t i, const sd_trace_entry *e)
{
    sdp_rsim *m = &f->m;
    uint64_t size = sdp_round_size(m->conf, e->size);
    bool small = size <= SDP_KSMALL_SIZE;
    sd_replay_choice rec = {false, e->addr, 0}, model = {false, 0, 0};
    uint16_t pp = 0;
    for (size_t k = 0; k < f->npend; k++)
        if (e->addr >= f->pend[k].addr && e->addr < f->pend[k].addr + f->pend[k].size) {
            rec.new_segment = true;
            rec.segment_bytes = f->pend[k].size;
            pp = f->pend[k].pool / 2;
        }
    if (!rec.new_segment) {
        uint32_t x = sdp_amap_get(&m->by_addr, e->addr);
        if (x != SDP_NIL) pp = m->b[x].pool / 2;
    }
    if (f->alloc_pp) f->alloc_pp[i] = pp;
    uint16_t pool = (uint16_t)(pp * 2 + small);
    uint32_t y = sdp_rsim_get_free_block(m, pool, e->stream, size, false);
    if (y == SDP_NIL) {
        model.new_segment = true;
        model.segment_bytes = m->conf->expandable_segments ? 0 : sdp_allocation_size(size);
    } else {
        model.address = m->b[y].addr;
    }
    flush_pending(f);
    /* Follow the recorded choice. */
    uint32_t x = sdp_amap_get(&m->by_addr, e->addr);
    if (x != SDP_NIL && m->b[x].allocated) {
        f->out->warnings[SD_REPLAY_OVERLAP]++;
        sdp_rsim_free_block(m, x);
        x = sdp_amap_get(&m->by_addr, e->addr);
    }
    if (x == SDP_NIL || m->b[x].addr != e->addr) x = block_holding(m, e->addr);
    if (x == SDP_NIL || m->b[x].allocated) f->out->warnings[SD_REPLAY_OVERLAP]++;
    else sdp_rsim_carve(m, x, e->addr, size, false);
    /* Compare. */
    f->out->placements_checked++;
    bool match = model.new_segment ? rec.new_segment : (!rec.new_segment && model.address == rec.address);
    if (model.new_segment || rec.new_segment) {
        f->out->segment_decisions_checked++;
        if (model.new_segment && rec.new_segment &&
            (model.segment_bytes == 0 || model.segment_bytes == rec.segment_bytes))
            f->out->segment_decisions_matched++;
    }
    if (match) {
        f->out->placements_matched++;
    } else if (!f->out->has_first_mismatch) {
        f->out->has_first_mismatch = true;
        f->out->first_mismatch = (sd_replay_mismatch){i, e->size, e->stream, model, rec};
    }
}

static bool fidelity(fid *f, const start_state *st, const sd_alloc_conf *rec)
{
    const sd_cuda_device *d = f->d;
    if (!sdp_rsim_init(&f->m, rec, f->pl->n * 2, true) || !load_start(&f->m, st, NULL)) return false;
    uint8_t rel = release_action(d);
    for (size_t i = 0; i < d->n_trace && !f->m.nomem; i++) {
        const sd_trace_entry *e = &d->trace[i];
        if (e->action == SD_ACT_ALLOC) {
            fid_alloc(f, i, e);
        } else if (e->action == rel) {
            flush_pending(f);
            uint32_t x = sdp_amap_get(&f->m.by_addr, e->addr);
            if (x == SDP_NIL || !f->m.b[x].allocated) f->out->warnings[SD_REPLAY_UNKNOWN_FREE]++;
            else sdp_rsim_free_block(&f->m, x);
        } else if (e->action == SD_ACT_SEGMENT_ALLOC || e->action == SD_ACT_SEGMENT_MAP) {
            const sd_segment *g = end_segment_at(d, e->addr);
            pending p = {e->addr, e->size, e->stream, (uint16_t)((g ? pool_index(f->pl, g) : 0) * 2 +
                         (e->size <= SDP_KSMALL_BUFFER && e->action == SD_ACT_SEGMENT_ALLOC)),
                         e->action == SD_ACT_SEGMENT_MAP};
            if (!push((void **)&f->pend, &f->npend, &f->cap_pend, &p, sizeof p)) return false;
        } else if (e->action == SD_ACT_SEGMENT_FREE) {
            flush_pending(f);
            uint32_t x = sdp_amap_get(&f->m.by_addr, e->addr);
            if (x != SDP_NIL && !f->m.b[x].allocated && f->m.b[x].prev == SDP_NIL &&
                f->m.b[x].next == SDP_NIL && f->m.s[f->m.b[x].seg].size == e->size)
                sdp_rsim_release_segment(&f->m, f->m.b[x].seg);
            else
                f->out->warnings[SD_REPLAY_UNKNOWN_SEGMENT]++;
        } else if (e->action == SD_ACT_SEGMENT_UNMAP) {
            flush_pending(f);
            uint32_t s = sdp_rsim_expandable_ending_at(&f->m, e->addr + e->size);
            if (s == SDP_NIL || !sdp_rsim_shrink(&f->m, s, e->size))
                f->out->warnings[SD_REPLAY_UNKNOWN_SEGMENT]++;
        }
    }
    return !f->m.nomem;
}

/* ---- free-running ---- */

typedef struct run_out {
    sd_replay_oom *ooms; size_t n_ooms, cap_ooms;
    sd_replay_oom_outcome *outc; size_t n_outc, cap_outc;
} run_out;

static bool free_run(sd_replay *r, const sd_cuda_device *d, const start_state *st, size_t npools,
                     const uint16_t *alloc_pp, sd_replay_config *cfg, size_t npts)
{
    sdp_rsim m = {0};
    sdp_amap by_rec = {0};
    tline t = {0};
    run_out ro = {0};
    bool ok = sdp_rsim_init(&m, &cfg->conf, npools, false) &&
              sdp_amap_init(&by_rec, st->nblks + 1024) && tl_init(&t, npts, d->n_trace);
    m.capacity = cfg->capacity_bytes;
    ok = ok && load_start(&m, st, &by_rec);
    uint8_t rel = release_action(d);
    cfg->peak_reserved_bytes = m.reserved;
    cfg->peak_entry = 0;
    for (size_t i = 0; ok && i < d->n_trace; i++) {
        const sd_trace_entry *e = &d->trace[i];
        if (e->action == SD_ACT_ALLOC) {
            uint32_t old = sdp_amap_del(&by_rec, e->addr);
            if (old != SDP_NIL) sdp_rsim_free_block(&m, old);
            uint32_t x = sdp_rsim_malloc(&m, e->size, e->stream, alloc_pp ? alloc_pp[i] : 0);
            m.has_hint = false;
            if (x != SDP_NIL) {
                ok = sdp_amap_put(&by_rec, e->addr, x);
            } else if (!m.nomem) {
                sd_replay_oom o = {i, e->size, e->stack};
                ok = push((void **)&ro.ooms, &ro.n_ooms, &ro.cap_ooms, &o, sizeof o);
            }
        } else if (e->action == rel) {
            uint32_t x = sdp_amap_del(&by_rec, e->addr);
            if (x != SDP_NIL) sdp_rsim_free_block(&m, x);
        } else if (e->action == SD_ACT_SEGMENT_ALLOC) {
            m.addr_hint = e->addr;
            m.has_hint = true;
        } else if (e->action == SD_ACT_SEGMENT_FREE) {
            if (i == 0 || d->trace[i - 1].action != SD_ACT_SEGMENT_FREE) sdp_rsim_release_cached(&m);
        } else if (e->action == SD_ACT_OOM) {
            /* The request that failed, replayed; released at once when it succeeds (the
             * trace cannot say how long it would have lived). */
            uint32_t x = sdp_rsim_malloc(&m, e->size, e->stream, 0);
            sd_replay_oom_outcome oc = {i, e->size, e->stack, x != SDP_NIL};
            ok = push((void **)&ro.outc, &ro.n_outc, &ro.cap_outc, &oc, sizeof oc);
            if (x != SDP_NIL) {
                if (m.reserved > cfg->peak_reserved_bytes) {
                    cfg->peak_reserved_bytes = m.reserved;
                    cfg->peak_entry = i;
                }
                sdp_rsim_free_block(&m, x);
            } else if (ok && !m.nomem) {
                sd_replay_oom o = {i, e->size, e->stack};
                ok = push((void **)&ro.ooms, &ro.n_ooms, &ro.cap_ooms, &o, sizeof o);
            }
        }
        if (m.reserved > cfg->peak_reserved_bytes) {
            cfg->peak_reserved_bytes = m.reserved;
            cfg->peak_entry = i;
        }
        tl_note(&t, i, m.reserved);
        if (m.nomem) ok = false;
    }
    if (ok) {
        cfg->end_reserved_bytes = m.reserved;
        cfg->segment_allocs = m.segment_allocs;
        cfg->alloc_retries = m.retries;
        sdp_rsim_free_figures(&m, &cfg->stranded_bytes, &cfg->largest_free_bytes);
        cfg->timeline = tl_finish(r, &t, &cfg->n_timeline);
        sd_replay_oom *oo = own(r, ro.n_ooms * sizeof *oo);
        sd_replay_oom_outcome *oc = own(r, ro.n_outc * sizeof *oc);
        ok = oo && oc && cfg->timeline;
        if (ok) {
            if (ro.n_ooms) memcpy(oo, ro.ooms, ro.n_ooms * sizeof *oo);
            if (ro.n_outc) memcpy(oc, ro.outc, ro.n_outc * sizeof *oc);
            cfg->ooms = oo;
            cfg->n_ooms = ro.n_ooms;
            cfg->oom_outcomes = oc;
            cfg->n_oom_outcomes = ro.n_outc;
        }
    } else {
        free(t.pts);
        free(t.used);
    }
    free(ro.ooms);
    free(ro.outc);
    sdp_amap_free(&by_rec);
    sdp_rsim_free(&m);
    return ok;
}

/* ---- trust ---- */

/* A device's what-ifs are advice only when the model, run under the settings the
 * recording used, reproduces the recording: >= 99% of placements, every segment
 * decision, and the peak reserved to the byte. */
static void judge_trust(sd_replay_device *d)
{
    d->trusted = false;
    if (!d->n_configs) {
        d->untrusted_why = "the replay did not run";
    } else if (d->placements_checked &&
               d->placements_matched * 100 < d->placements_checked * 99) {
        d->untrusted_why = "the recorded settings' replay places fewer than 99% of requests "
                           "where the allocator did";
    } else if (d->segment_decisions_matched != d->segment_decisions_checked) {
        d->untrusted_why = "the recorded settings' replay departs from the allocator's "
                           "segment decisions";
    } else if (d->configs[0].peak_reserved_bytes != d->recorded_peak_reserved_bytes) {
        d->untrusted_why = "the recorded settings' replay does not reproduce the recorded "
                           "peak reserved";
    } else {
        d->trusted = true;
        d->untrusted_why = NULL;
    }
}

/* ---- per device ---- */

static bool ring_wrapped(const sd_snapshot *s)
{
    const sd_allocator_settings *st = sd_snapshot_allocator_settings(s);
    if (!st || !st->recorded) return false;
    for (size_t i = 0; i < st->recorded->n_items; i++) {
        const sd_setting *x = &st->recorded->items[i];
        if (x->key && x->key_len == 22 && memcmp(x->key, "trace_alloc_overflowed", 22) == 0)
            return (x->type == SD_SETTING_BOOL && x->b) || (x->type == SD_SETTING_INT && x->i != 0);
    }
    return false;
}

typedef struct fid_job {
    fid *f;
    const start_state *st;
    const sd_alloc_conf *rec;
    bool ok;
} fid_job;

static void *fid_main(void *arg)
{
    fid_job *j = arg;
    j->ok = fidelity(j->f, j->st, j->rec);
    return NULL;
}

static sd_status replay_device(sd_replay *r, const sd_cuda_device *d, const sd_replay_options *o,
                               sd_replay_device *out)
{
    size_t npts = o && o->timeline_points ? o->timeline_points : DEFAULT_POINTS;
    if (npts > MAX_POINTS) npts = MAX_POINTS;
    out->device = d->device;
    out->entries = d->n_trace;
    if (ring_wrapped(r->snap)) out->warnings[SD_REPLAY_RING_WRAPPED] = 1;
    pools pl;
    if (!collect_pools(d, &pl)) return SD_ENOMEM;
    start_state st;
    sdp_amap others = {0};
    sd_status status = other_segments(r->snap, d, &others)
        ? rebuild_start(d, &pl, &r->confs[0], &others, &st, &out->warnings[SD_REPLAY_BAD_START])
        : SD_ENOMEM;
    sdp_amap_free(&others);
    if (status != SD_OK) {
        free(pl.ids);
        return status;
    }
    fid f = {.d = d, .pl = &pl, .out = out};
    uint64_t oom_cap = 0;
    if (status == SD_OK) {
        out->start_reserved_bytes = st.reserved;
        out->start_allocated_bytes = st.allocated;
        if (!recorded_walk(r, d, out, npts, &oom_cap)) status = SD_ENOMEM;
    }
    if (status == SD_OK && pl.n > 1) {
        f.alloc_pp = calloc(d->n_trace ? d->n_trace : 1, sizeof *f.alloc_pp);
        if (!f.alloc_pp) status = SD_ENOMEM;
    }
    /* The fidelity pass and the free-running ones only read the start state: with one
     * private pool the free runs need nothing from it (alloc_pp), and it runs beside them. */
    fid_job fj = {&f, &st, &r->confs[0], true};
    pthread_t fid_thread;
    bool fid_threaded = false;
    if (status == SD_OK) {
        fid_threaded = !f.alloc_pp && pthread_create(&fid_thread, NULL, fid_main, &fj) == 0;
        if (!fid_threaded && !fidelity(&f, &st, &r->confs[0])) status = SD_ENOMEM;
    }
    uint64_t cap = 0;
    out->capacity_source = SD_REPLAY_CAPACITY_UNKNOWN;
    if (o && o->capacity) {
        cap = o->capacity;
        out->capacity_source = SD_REPLAY_CAPACITY_GIVEN;
    } else if (oom_cap) {
        cap = oom_cap;
        out->capacity_source = SD_REPLAY_CAPACITY_OOM_ENTRY;
    }
    sd_replay_config *cfgs = status == SD_OK ? own(r, r->n_confs * sizeof *cfgs) : NULL;
    if (status == SD_OK && !cfgs) status = SD_ENOMEM;
    for (size_t c = 0; status == SD_OK && c < r->n_confs; c++) {
        cfgs[c].alloc_conf = c ? r->conf_text[c - 1] : "recorded";
        cfgs[c].conf = r->confs[c];
        cfgs[c].capacity_bytes = cap;
        if (!free_run(r, d, &st, pl.n * 2, f.alloc_pp, &cfgs[c], npts)) status = SD_ENOMEM;
    }
    if (fid_threaded) {
        pthread_join(fid_thread, NULL);
        if (!fj.ok) status = SD_ENOMEM;
    }
    sdp_rsim_free(&f.m);
    free(f.pend);
    out->configs = cfgs;
    out->n_configs = status == SD_OK ? r->n_confs : 0;
    judge_trust(out);
    free(f.alloc_pp);
    free(pl.ids);
    start_state_free(&st);
    return status;
}

sd_replay *sd_replay_create(const sd_snapshot *s, const sd_replay_options *opts, sd_error *err)
{
    if (sd_snapshot_is_summary(s)) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                 "a summary keeps only part of the trace: replay needs the snapshot itself");
        return NULL;
    }
    sd_replay *r = calloc(1, sizeof *r);
    if (!r) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    r->snap = s;
    size_t nc = opts ? opts->n_alloc_confs : 0;
    r->n_confs = nc + 1;
    r->conf_text = opts ? opts->alloc_confs : NULL;
    r->confs = own(r, r->n_confs * sizeof *r->confs);
    if (!r->confs) goto nomem;
    sd_alloc_conf_recorded(s, &r->confs[0]);
    for (size_t i = 0; i < nc; i++)
        if (sd_alloc_conf_parse(opts->alloc_confs[i], &r->confs[i + 1], err) != SD_OK) {
            sd_replay_free(r);
            return NULL;
        }
    size_t nd = sd_snapshot_device_count(s);
    r->devices = own(r, nd * sizeof *r->devices);
    if (!r->devices) goto nomem;
    for (size_t i = 0; i < nd; i++) {
        const sd_cuda_device *d = sd_snapshot_device(s, i);
        if (!d->n_trace) continue;
        if (replay_device(r, d, opts, &r->devices[r->n_devices]) != SD_OK) goto nomem;
        r->n_devices++;
    }
    return r;
nomem:
    sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory while replaying the trace");
    sd_replay_free(r);
    return NULL;
}

void sd_replay_free(sd_replay *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_owned; i++) free(r->owned[i]);
    free(r->owned);
    free(r);
}

const sd_snapshot *sd_replay_snapshot(const sd_replay *r) { return r->snap; }
size_t sd_replay_device_count(const sd_replay *r) { return r->n_devices; }
const sd_replay_device *sd_replay_device_at(const sd_replay *r, size_t i)
{
    return i < r->n_devices ? &r->devices[i] : NULL;
}
