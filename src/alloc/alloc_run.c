/* alloc_run.c - a snapshot's trace run through the allocator model (alloc_model.c), one
 * device at a time: the state at the trace's first entry rebuilt, the fidelity pass that
 * follows the recorded choices, and the free-running what-ifs, one per configuration
 * (alloc_run.h). sd_replay (analysis/replay.c) and frag's OOM what-ifs read the result. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc_model.h"
#include "alloc/alloc_run.h"
#include "base/base.h"

enum { DEFAULT_POINTS = 256, MAX_POINTS = 4096 };

const char *sd_replay_warning_name(sd_replay_warning_code c)
{
    static const char *const names[] = {"unknown-free", "overlapping-alloc", "unknown-segment",
                                        "ring-buffer-wrapped", "bad-start-block"};
    return (unsigned)c < SD_REPLAY_WARNING_COUNT ? names[c] : "?";
}

const char *sd_replay_trust_reason_name(sd_replay_trust_reason r)
{
    static const char *const names[] = {"not-run", "placements-below-99pct",
                                        "segment-decisions-differ", "peak-differs",
                                        "placements-only", "nothing-checked",
                                        "non-upstream-keys", "npu-streams"};
    return (unsigned)r < SD_TRUST_REASON_COUNT ? names[r] : NULL;
}

const char *sd_replay_trust_reason_text(sd_replay_trust_reason r)
{
    static const char *const texts[] = {
        "the replay did not run",
        "the recorded settings' replay places fewer than 99% of requests where the "
        "allocator did",
        "the recorded settings' replay departs from the allocator's segment decisions",
        "the recorded settings' replay does not reproduce the recorded peak reserved",
        "a warm start with no segment event: no segment decision to check, trusted on "
        "placements only",
        "a warm start with no alloc and no segment event: no placement and no segment "
        "decision to check, trusted on the peak reserved only",
        "the snapshot has keys upstream torch never writes (a patched torch build, whose "
        "allocator the model may not follow)",
        "no segment or trace entry is on stream 0 and the entries carry no time_us: "
        "torch_npu's stream ids (the NPU caching allocator, not the CUDA one modelled)"};
    return (unsigned)r < SD_TRUST_REASON_COUNT ? texts[r] : NULL;
}

/* Zeroed memory the results point to, freed with the run's owner. */
static void *own(const sdp_alloc_run *r, size_t bytes) { return r->own(r->owner, bytes); }

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

/* An expandable segment's reserved address range: [base, base + va). */
typedef struct start_es {
    uint64_t base, va, stream;
    uint16_t pool;
} start_es;

typedef struct start_state {
    start_seg *segs; size_t nsegs;   /* cudaMalloc segments, and the ranges of expandable
                                      * segments mapped at the start (expandable set) */
    start_blk *blks; size_t nblks;
    start_es *es; size_t nes;
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

/* Private pools: index 0 is the default pool, then one per distinct segment_pool_id or
 * pool_id an entry records. by_entry maps an entry's pool (sd_trace_entry.pool) to its
 * index here; NO_POOL when the entry names none and its pool is inferred. */
enum { NO_POOL = UINT16_MAX, MAX_PRIVATE_POOLS = 1000 };

typedef struct pools {
    int64_t (*ids)[2];
    size_t n;
    uint16_t *by_entry;        /* [sd_snapshot_pool_count + 1] */
} pools;

static uint16_t pool_index_of(const pools *p, const int64_t id[2])
{
    if (id[0] == 0 && id[1] == 0) return 0;
    for (size_t i = 1; i < p->n; i++)
        if (p->ids[i][0] == id[0] && p->ids[i][1] == id[1]) return (uint16_t)i;
    return 0;
}

static uint16_t pool_index(const pools *p, const sd_segment *g)
{
    return g->has_pool_id ? pool_index_of(p, g->pool_id) : 0;
}

/* The pool the entry records, or NO_POOL. */
static uint16_t entry_pool(const pools *p, const sd_trace_entry *e)
{
    return p->by_entry[e->pool];
}

static void add_pool(pools *p, const int64_t id[2])
{
    if ((id[0] || id[1]) && pool_index_of(p, id) == 0 && p->n < MAX_PRIVATE_POOLS) {
        p->ids[p->n][0] = id[0];
        p->ids[p->n][1] = id[1];
        p->n++;
    }
}

static bool collect_pools(const sd_snapshot *s, const sd_cuda_device *d, pools *p)
{
    size_t ns = sd_snapshot_pool_count(s);
    p->ids = malloc((d->n_segments + ns + 1) * sizeof *p->ids);
    p->by_entry = malloc((ns + 1) * sizeof *p->by_entry);
    if (!p->ids || !p->by_entry) {
        free(p->ids);
        free(p->by_entry);
        return false;
    }
    p->n = 1;
    p->ids[0][0] = p->ids[0][1] = 0;
    for (size_t i = 0; i < d->n_segments; i++)
        if (d->segments[i].has_pool_id) add_pool(p, d->segments[i].pool_id);
    p->by_entry[0] = NO_POOL;
    for (size_t i = 0; i < ns; i++) {
        int64_t id[2];
        sd_snapshot_pool(s, i, id);
        add_pool(p, id);
        uint16_t k = pool_index_of(p, id);
        /* a private pool past the cap is inferred, never put in the default one */
        p->by_entry[i + 1] = k || (id[0] == 0 && id[1] == 0) ? k : NO_POOL;
    }
    return true;
}

static void pools_free(pools *p)
{
    free(p->ids);
    free(p->by_entry);
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
    free(st->es);
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
            b.size = sdp_alloc_round_size(rec, b.size);
            bool small = g->size <= SDP_KSMALL_BUFFER && !g->expandable;
            if (b.size < next - b.addr) {
                uint64_t rest = next - b.addr - b.size;
                /* with expandable segments every split leaving >= 512 B is made */
            if ((small || g->expandable) ? rest < SDP_KMIN_BLOCK : rest <= SDP_KSMALL_SIZE)
                b.size += rest;
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

/* ---- expandable segments at the start ---- */

/* A set of disjoint address ranges, sorted. */
typedef struct ranges {
    uint64_t (*r)[2];
    size_t n, cap;
} ranges;

static bool ranges_add(ranges *rs, uint64_t lo, uint64_t hi)
{
    if (lo >= hi) return true;
    /* Absorb every range that touches [lo, hi), then insert in order. */
    size_t w = 0, at = SIZE_MAX;
    for (size_t i = 0; i < rs->n; i++) {
        uint64_t a = rs->r[i][0], b = rs->r[i][1];
        if (b < lo || a > hi) {
            if (a > hi && at == SIZE_MAX) at = w;
            rs->r[w][0] = a;
            rs->r[w][1] = b;
            w++;
            continue;
        }
        if (a < lo) lo = a;
        if (b > hi) hi = b;
    }
    rs->n = w;
    if (at == SIZE_MAX) at = w;
    uint64_t item[2] = {lo, hi};
    if (!push((void **)&rs->r, &rs->n, &rs->cap, item, sizeof item)) return false;
    memmove(&rs->r[at + 1], &rs->r[at], (rs->n - 1 - at) * sizeof rs->r[0]);
    rs->r[at][0] = lo;
    rs->r[at][1] = hi;
    return true;
}

static bool ranges_sub(ranges *rs, uint64_t lo, uint64_t hi)
{
    for (size_t i = 0; i < rs->n; i++) {
        uint64_t a = rs->r[i][0], b = rs->r[i][1];
        if (b <= lo || a >= hi) continue;
        if (a < lo && b > hi) {       /* a hole in the middle: two ranges */
            rs->r[i][1] = lo;
            uint64_t item[2] = {hi, b};
            if (!push((void **)&rs->r, &rs->n, &rs->cap, item, sizeof item)) return false;
            memmove(&rs->r[i + 2], &rs->r[i + 1], (rs->n - 2 - i) * sizeof rs->r[0]);
            rs->r[i + 1][0] = hi;
            rs->r[i + 1][1] = b;
            return true;
        }
        if (a < lo) rs->r[i][1] = lo;
        else if (b > hi) rs->r[i][0] = hi;
        else {
            memmove(&rs->r[i], &rs->r[i + 1], (rs->n - 1 - i) * sizeof rs->r[0]);
            rs->n--;
            i--;
        }
    }
    return true;
}

/* Where an expandable segment is known to be, and what it is: a range the snapshot shows,
 * or a map the trace records (its pool is that of the request it was made for). */
typedef struct es_anchor {
    uint64_t addr, stream;
    bool small;
} es_anchor;

static int cmp_anchor(const void *a, const void *b)
{
    uint64_t x = ((const es_anchor *)a)->addr, y = ((const es_anchor *)b)->addr;
    return x < y ? -1 : x > y;
}

/* The pool of the request a run of maps at entry i was made for: the next alloc's. */
static bool map_is_small(const sd_cuda_device *d, const sd_alloc_conf *rec, size_t i)
{
    for (size_t k = i + 1; k < d->n_trace; k++) {
        const sd_trace_entry *e = &d->trace[k];
        if (e->action == SD_ACT_ALLOC || e->action == SD_ACT_OOM)
            return sdp_alloc_round_size(rec, e->size) <= SDP_KSMALL_SIZE;
        if (e->action != SD_ACT_SEGMENT_MAP) break;
    }
    return false;
}

/* The expandable segments at the trace's start: the ranges mapped then are the snapshot's
 * expandable ranges with the window's maps undone and its unmaps put back (walking the
 * trace backwards); one segment per run of anchors of one pool and stream in address
 * order (torch keeps one per pool and stream), its address space reaching to the next. */
static bool expandable_start(const sd_cuda_device *d, const sd_alloc_conf *rec, start_state *st,
                             size_t *cap_s)
{
    ranges rs = {0};
    es_anchor *an = NULL;
    size_t nan = 0, cap_an = 0, cap_es = 0;
    bool ok = true;
    for (size_t i = 0; i < d->n_segments && ok; i++) {
        const sd_segment *g = &d->segments[i];
        if (!g->is_expandable) continue;
        es_anchor a = {g->address, g->stream, g->is_small};
        ok = ranges_add(&rs, g->address, g->address + g->total_size) &&
             push((void **)&an, &nan, &cap_an, &a, sizeof a);
    }
    for (size_t i = d->n_trace; i-- > 0 && ok;) {
        const sd_trace_entry *e = &d->trace[i];
        if (e->action == SD_ACT_SEGMENT_MAP) {
            es_anchor a = {e->addr, e->stream, map_is_small(d, rec, i)};
            ok = ranges_sub(&rs, e->addr, e->addr + e->size) &&
                 push((void **)&an, &nan, &cap_an, &a, sizeof a);
        } else if (e->action == SD_ACT_SEGMENT_UNMAP) {
            ok = ranges_add(&rs, e->addr, e->addr + e->size);
        }
    }
    if (ok && nan) {
        qsort(an, nan, sizeof *an, cmp_anchor);
        size_t ri = 0;
        for (size_t i = 0; i < nan && ok; i++) {
            if (i && an[i].small == an[i - 1].small && an[i].stream == an[i - 1].stream) continue;
            size_t j = i + 1;   /* the next run's first anchor */
            while (j < nan && an[j].small == an[i].small && an[j].stream == an[i].stream) j++;
            uint64_t base = an[i].addr, end = j < nan ? an[j].addr : UINT64_MAX;
            /* Ranges below the first run belong to it: they lower its base. */
            if (st->nes == 0 && rs.n && rs.r[0][0] < base) base = rs.r[0][0];
            uint64_t va = end - base < SDP_ES_ADDRESS_SPACE ? end - base : SDP_ES_ADDRESS_SPACE;
            start_es es = {base, va, an[i].stream, (uint16_t)an[i].small};
            ok = push((void **)&st->es, &st->nes, &cap_es, &es, sizeof es);
            for (; ok && ri < rs.n && rs.r[ri][0] < end; ri++) {
                uint64_t hi = rs.r[ri][1] < end ? rs.r[ri][1] : end;
                start_seg sg = {rs.r[ri][0], hi - rs.r[ri][0], an[i].stream, 0, true};
                ok = push((void **)&st->segs, &st->nsegs, cap_s, &sg, sizeof sg);
            }
        }
    }
    free(rs.r);
    free(an);
    return ok;
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
        } else if (e->action == SD_ACT_SEGMENT_ALLOC) {
            if (sdp_amap_get(&seen_seg, e->addr) == SDP_NIL) ok = sdp_amap_put(&seen_seg, e->addr, 1);
        } else if (e->action == SD_ACT_SEGMENT_FREE) {
            if (sdp_amap_get(&seen_seg, e->addr) == SDP_NIL &&
                sdp_amap_get(others, e->addr) != SDP_NIL) {
                /* another device's segment: not ours (counted when the replay meets it) */
            } else if (sdp_amap_get(&seen_seg, e->addr) == SDP_NIL) {
                const sd_segment *g = end_segment_at(d, e->addr);
                uint16_t pool = entry_pool(pl, e);
                if (pool == NO_POOL) pool = g ? pool_index(pl, g) : 0;
                start_seg s = {e->addr, e->size, e->stream, pool, false};
                ok = sdp_amap_put(&seen_seg, e->addr, 2) &&
                     push((void **)&st->segs, &st->nsegs, &cap_s, &s, sizeof s);
            }
        }
    }
    for (size_t i = 0; i < d->n_segments && ok; i++) {
        const sd_segment *g = &d->segments[i];
        if (!g->is_expandable) {
            if (sdp_amap_get(&seen_seg, g->address) != SDP_NIL) continue;
            start_seg s = {g->address, g->total_size, g->stream, pool_index(pl, g), false};
            ok = push((void **)&st->segs, &st->nsegs, &cap_s, &s, sizeof s);
        }
        /* An expandable segment's mapped ranges at the start are found apart
         * (expandable_start); its blocks not allocated in the window were live then. */
        for (uint32_t k = 0; k < g->n_blocks && ok; k++) {
            const sd_block *b = &d->blocks[g->first_block + k];
            if (!is_block_live(b->state) || sdp_amap_get(&first, b->address) != SDP_NIL) continue;
            start_blk sb = {b->address, b->size, g->stream, true};
            ok = push((void **)&st->blks, &st->nblks, &cap_b, &sb, sizeof sb);
        }
    }
    sdp_amap_free(&first);
    sdp_amap_free(&seen_seg);
    ok = ok && expandable_start(d, rec, st, &cap_s);
    if (!ok) {
        start_state_free(st);
        memset(st, 0, sizeof *st);
        return SD_ENOMEM;
    }
    tile_start(st, rec, bad);
    return SD_OK;
}

/* The expandable segment of the start state that holds addr, or SDP_NIL. */
static uint32_t start_es_holding(const sdp_alloc *m, const start_state *st, uint64_t addr)
{
    (void)st;
    return sdp_alloc_expandable_holding(m, addr);
}

/* Build the start state into a model. by_rec: the live blocks by their (recorded)
 * address, for the free-running replay. */
static bool load_start(sdp_alloc *m, const start_state *st, sdp_amap *by_rec)
{
    for (size_t i = 0; i < st->nes; i++)
        if (sdp_alloc_add_expandable(m, st->es[i].base, st->es[i].va, st->es[i].stream,
                                    st->es[i].pool) == SDP_NIL)
            return false;
    size_t bi = 0;
    for (size_t i = 0; i < st->nsegs; i++) {
        const start_seg *g = &st->segs[i];
        uint32_t cur;
        if (g->expandable) {
            uint32_t es = start_es_holding(m, st, g->addr);
            cur = es == SDP_NIL ? SDP_NIL : sdp_alloc_map_range(m, es, g->addr, g->size);
        } else {
            uint16_t pool = (uint16_t)(g->pool * 2 + (g->size <= SDP_KSMALL_BUFFER));
            if (pool >= m->npools) pool = 0;
            uint32_t s = sdp_alloc_add_segment(m, g->addr, g->size, g->stream, pool, false);
            if (s == SDP_NIL) return false;
            cur = m->s[s].head;
        }
        /* Blocks come in address order: the free block that holds the next one is the
         * remainder of the last carve, or one after it. */
        while (bi < st->nblks && st->blks[bi].addr < g->addr + g->size) {
            const start_blk *b = &st->blks[bi++];
            while (cur != SDP_NIL && b->addr - m->b[cur].addr >= m->b[cur].size) cur = m->b[cur].next;
            if (cur == SDP_NIL) break;
            uint32_t x = sdp_alloc_carve(m, cur, b->addr, b->size, true);
            if (x == SDP_NIL) continue;
            cur = x;
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
static sd_replay_point *tl_finish(const sdp_alloc_run *r, tline *t, size_t *n)
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

static bool recorded_walk(const sdp_alloc_run *r, const sd_cuda_device *d, sd_replay_device *out,
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
    sdp_alloc m;
    const sd_cuda_device *d;
    pools *pl;
    pending *pend; size_t npend, cap_pend;
    sd_replay_device *out;
    uint16_t *alloc_pp;        /* private pool of each alloc entry (NULL: all default) */
} fid;

/* The address space a new expandable segment at base may take: up to the next one. */
static uint64_t es_room(const sdp_alloc *m, uint64_t base)
{
    uint64_t room = SDP_ES_ADDRESS_SPACE;
    for (size_t i = 0; i < m->nlive; i++) {
        const sdp_alloc_seg *g = &m->s[m->live[i]];
        if (g->expandable && g->addr > base && g->addr - base < room) room = g->addr - base;
    }
    return room;
}

/* Apply the segment events recorded before an alloc. small: the pool of the request they
 * were made for (-1: not known, no alloc followed). */
static void flush_pending(fid *f, int small)
{
    for (size_t i = 0; i < f->npend; i++) {
        const pending *p = &f->pend[i];
        if (!p->expandable) {
            sdp_alloc_add_segment(&f->m, p->addr, p->size, p->stream, p->pool, p->expandable);
            continue;
        }
        uint32_t s = sdp_alloc_expandable_holding(&f->m, p->addr);
        if (s == SDP_NIL) {
            uint16_t pool = (uint16_t)(small > 0);
            s = sdp_alloc_add_expandable(&f->m, p->addr, es_room(&f->m, p->addr), p->stream, pool);
        }
        if (s == SDP_NIL || sdp_alloc_map_range(&f->m, s, p->addr, p->size) == SDP_NIL)
            f->out->warnings[SD_REPLAY_UNKNOWN_SEGMENT]++;
    }
    f->npend = 0;
}

/* The live segment whose range holds addr (a scan: only for traces that do not add up). */
static uint32_t block_holding(const sdp_alloc *m, uint64_t addr)
{
    for (size_t i = 0; i < m->nlive; i++) {
        const sdp_alloc_seg *g = &m->s[m->live[i]];
        if (addr < g->addr || addr >= g->addr + g->size) continue;
        for (uint32_t x = g->head; x != SDP_NIL; x = m->b[x].next)
            if (addr >= m->b[x].addr && addr < m->b[x].addr + m->b[x].size) return x;
    }
    return SDP_NIL;
}

static void fid_alloc(fid *f, size_t i, const sd_trace_entry *e)
{
    sdp_alloc *m = &f->m;
    uint64_t size = sdp_alloc_round_size(m->conf, e->size);
    bool small = size <= SDP_KSMALL_SIZE;
    sd_replay_choice rec = {false, e->addr, 0}, model = {false, 0, 0};
    uint16_t pp = 0;
    bool mapped = false;
    for (size_t k = 0; k < f->npend; k++) {
        if (f->pend[k].expandable) {
            /* maps made for this request: it may start in the free block before them */
            mapped = rec.new_segment = true;
            rec.segment_bytes += f->pend[k].size;
        } else if (e->addr >= f->pend[k].addr && e->addr < f->pend[k].addr + f->pend[k].size) {
            rec.new_segment = true;
            rec.segment_bytes = f->pend[k].size;
            pp = f->pend[k].pool / 2;
        }
    }
    if (!rec.new_segment) {
        uint32_t x = sdp_amap_get(&m->by_addr, e->addr);
        if (x != SDP_NIL) pp = m->b[x].pool / 2;
    }
    /* The entry's own pool_id, when it records one, over the pool inferred from where the
     * block landed. */
    if (entry_pool(f->pl, e) != NO_POOL) pp = entry_pool(f->pl, e);
    if (f->alloc_pp) f->alloc_pp[i] = pp;
    uint16_t pool = (uint16_t)(pp * 2 + small);
    uint32_t y = sdp_alloc_get_free_block(m, pool, e->stream, size, false);
    bool model_maps = y == SDP_NIL && m->conf->expandable_segments && pool < 2;
    if (model_maps) {
        model.new_segment = true;
        sdp_alloc_expandable_plan(m, pool, e->stream, size, &model.address, &model.segment_bytes);
    } else if (y == SDP_NIL) {
        model.new_segment = true;
        model.segment_bytes = sdp_alloc_segment_size(size);
    } else {
        model.address = m->b[y].addr;
    }
    /* Compare, before the recorded choice changes the state the model saw. */
    f->out->placements_checked++;
    /* A new cudaMalloc segment's address is the driver's; a map's is the allocator's (0
     * in the model: a new expandable segment, whose address is the driver's too). */
    bool addr_known = !model.new_segment || (model_maps && model.address != 0);
    bool match = model.new_segment == rec.new_segment && model_maps == mapped &&
                 (!addr_known || model.address == rec.address);
    if (model.new_segment || rec.new_segment) {
        f->out->segment_decisions_checked++;
        if (model.new_segment && rec.new_segment && model_maps == mapped &&
            model.segment_bytes == rec.segment_bytes)
            f->out->segment_decisions_matched++;
    }
    if (match) {
        f->out->placements_matched++;
    } else if (!f->out->has_first_mismatch) {
        f->out->has_first_mismatch = true;
        sd_replay_mismatch *mm = &f->out->first_mismatch;
        *mm = (sd_replay_mismatch){i, e->size, e->stream, model, rec, {{0}}, 0};
        mm->n_seen = sdp_alloc_free_near(m, pool, e->stream, size, mm->seen, SD_REPLAY_SEEN);
    }
    flush_pending(f, small);
    /* Follow the recorded choice. */
    uint32_t x = sdp_amap_get(&m->by_addr, e->addr);
    if (x != SDP_NIL && m->b[x].allocated) {
        f->out->warnings[SD_REPLAY_OVERLAP]++;
        sdp_alloc_free_block(m, x);
        x = sdp_amap_get(&m->by_addr, e->addr);
    }
    if (x == SDP_NIL || m->b[x].addr != e->addr) x = block_holding(m, e->addr);
    if (x == SDP_NIL || m->b[x].allocated) f->out->warnings[SD_REPLAY_OVERLAP]++;
    else sdp_alloc_carve(m, x, e->addr, size, false);
}

static bool fidelity(fid *f, const start_state *st, const sd_alloc_conf *rec)
{
    const sd_cuda_device *d = f->d;
    if (!sdp_alloc_init(&f->m, rec, f->pl->n * 2, true) || !load_start(&f->m, st, NULL)) return false;
    uint8_t rel = release_action(d);
    for (size_t i = 0; i < d->n_trace && !f->m.nomem; i++) {
        const sd_trace_entry *e = &d->trace[i];
        if (e->action == SD_ACT_ALLOC) {
            fid_alloc(f, i, e);
        } else if (e->action == rel) {
            flush_pending(f, -1);
            uint32_t x = sdp_amap_get(&f->m.by_addr, e->addr);
            if (x == SDP_NIL || !f->m.b[x].allocated) f->out->warnings[SD_REPLAY_UNKNOWN_FREE]++;
            else sdp_alloc_free_block(&f->m, x);
        } else if (e->action == SD_ACT_SEGMENT_ALLOC || e->action == SD_ACT_SEGMENT_MAP) {
            const sd_segment *g = end_segment_at(d, e->addr);
            uint16_t pp = entry_pool(f->pl, e);
            if (pp == NO_POOL) pp = g ? pool_index(f->pl, g) : 0;
            pending p = {e->addr, e->size, e->stream,
                         (uint16_t)(pp * 2 + (e->size <= SDP_KSMALL_BUFFER)),
                         e->action == SD_ACT_SEGMENT_MAP};
            if (!push((void **)&f->pend, &f->npend, &f->cap_pend, &p, sizeof p)) return false;
        } else if (e->action == SD_ACT_SEGMENT_FREE) {
            flush_pending(f, -1);
            uint32_t x = sdp_amap_get(&f->m.by_addr, e->addr);
            if (x != SDP_NIL && !f->m.b[x].allocated && f->m.b[x].prev == SDP_NIL &&
                f->m.b[x].next == SDP_NIL && f->m.s[f->m.b[x].seg].size == e->size)
                sdp_alloc_release_segment(&f->m, f->m.b[x].seg);
            else
                f->out->warnings[SD_REPLAY_UNKNOWN_SEGMENT]++;
        } else if (e->action == SD_ACT_SEGMENT_UNMAP) {
            flush_pending(f, -1);
            uint32_t s = sdp_alloc_expandable_holding(&f->m, e->addr);
            if (s == SDP_NIL || !sdp_alloc_unmap_range(&f->m, s, e->addr, e->size))
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

/* ---- recorded releases ---- */

enum { REL_NONE, REL_PROGRAM, REL_ALLOCATOR };

static bool is_release(uint8_t a) { return a == SD_ACT_SEGMENT_FREE || a == SD_ACT_SEGMENT_UNMAP; }

static bool stack_names(const sd_snapshot *s, uint32_t stack, const char *name)
{
    size_t n = 0;
    const uint32_t *fr = stack ? sd_snapshot_stack(s, stack, &n) : NULL;
    for (size_t k = 0; k < n; k++) {
        const sd_frame *f = sd_snapshot_frame(s, fr[k]);
        if (f && strcmp(f->name, name) == 0) return true;
    }
    return false;
}

/* Who made the run of releases starting at entry i: the program (torch.cuda.empty_cache(),
 * in the frames when they were recorded), or the allocator on its own (the OOM retry's
 * release_available_cached_blocks / release_cached_blocks, or garbage collection: their
 * frames are the request's, and a new segment or an oom follows at once). */
static uint8_t release_kind(const sd_snapshot *s, const sd_cuda_device *d, size_t i)
{
    bool framed = false;
    size_t k = i;
    for (; k < d->n_trace && is_release(d->trace[k].action); k++) {
        if (stack_names(s, d->trace[k].stack, "empty_cache")) return REL_PROGRAM;
        framed |= d->trace[k].stack != 0;
    }
    if (framed) return REL_ALLOCATOR;
    uint8_t next = k < d->n_trace ? d->trace[k].action : SD_ACT_OTHER;
    return next == SD_ACT_SEGMENT_ALLOC || next == SD_ACT_SEGMENT_MAP || next == SD_ACT_OOM
               ? REL_ALLOCATOR : REL_PROGRAM;
}

/* The request an allocator-made release at entry i was made for, and the bytes the run
 * released. */
static const sd_trace_entry *release_request(const sd_cuda_device *d, size_t i, uint64_t *bytes)
{
    *bytes = 0;
    size_t k = i;
    for (; k < d->n_trace && is_release(d->trace[k].action); k++) *bytes += d->trace[k].size;
    for (; k < d->n_trace; k++) {
        uint8_t a = d->trace[k].action;
        if (a == SD_ACT_ALLOC || a == SD_ACT_OOM) return &d->trace[k];
        if (a != SD_ACT_SEGMENT_ALLOC && a != SD_ACT_SEGMENT_MAP) break;
    }
    return NULL;
}

/* Under the recorded settings, a release the allocator made is replayed as it was made:
 * release_available_cached_blocks for the request, then release_cached_blocks when the
 * recording released more than that. */
static void replay_allocator_release(sdp_alloc *m, const sd_cuda_device *d, size_t i)
{
    uint64_t bytes;
    const sd_trace_entry *req = release_request(d, i, &bytes);
    uint64_t before = m->reserved;
    if (req) {
        uint64_t size = sdp_alloc_round_size(m->conf, req->size);
        sdp_alloc_release_available(m, (uint16_t)(size <= SDP_KSMALL_SIZE), req->stream, size);
    }
    if (before - m->reserved < bytes) {
        sdp_alloc_release_cached(m);
        m->retries++;
    }
}

/* Pending blocks a sync freed leave the map of recorded addresses. */
static void drain_synced(sdp_alloc *m, sdp_amap *by_rec)
{
    for (size_t k = 0; k < m->nsynced; k++) sdp_amap_del(by_rec, m->synced[k]);
    m->nsynced = 0;
}

/* The job stops at its first OOM (torch raises OutOfMemoryError): what torch would have
 * reported by then. The failed request's own release and retry are in m. */
static void note_stop(sd_replay_config *cfg, const run_out *ro, const sdp_alloc *m)
{
    if (ro->n_ooms) return;
    cfg->stop_peak_reserved_bytes = cfg->peak_reserved_bytes > m->reserved
                                        ? cfg->peak_reserved_bytes : m->reserved;
    cfg->stop_alloc_retries = m->retries;
}

static bool free_run(const sdp_alloc_run *r, const sd_cuda_device *d, const start_state *st, size_t npools,
                     const uint16_t *alloc_pp, sd_replay_config *cfg, size_t npts, bool recorded)
{
    sdp_alloc m = {0};
    sdp_amap by_rec = {0};
    tline t = {0};
    run_out ro = {0};
    bool ok = sdp_alloc_init(&m, &cfg->conf, npools, false) &&
              sdp_amap_init(&by_rec, st->nblks + 1024) && tl_init(&t, npts, d->n_trace);
    m.capacity = cfg->capacity_bytes;
    ok = ok && load_start(&m, st, &by_rec);
    uint8_t rel = release_action(d);
    uint64_t limit = sdp_alloc_limit(&m);
    cfg->peak_reserved_bytes = m.reserved;
    cfg->peak_entry = 0;
    /* A recorded oom request that succeeds here lives until the program's next request:
     * the trace cannot say how long it would have lived, and freed at once it would end a
     * trace that stops at the oom as free memory counted stranded. */
    uint32_t oom_live = SDP_NIL;
    for (size_t i = 0; ok && i < d->n_trace; i++) {
        const sd_trace_entry *e = &d->trace[i];
        if (oom_live != SDP_NIL && (e->action == SD_ACT_ALLOC || e->action == SD_ACT_OOM)) {
            sdp_alloc_free_block(&m, oom_live);
            oom_live = SDP_NIL;
        }
        if (e->action == SD_ACT_ALLOC) {
            uint32_t old = sdp_amap_del(&by_rec, e->addr);
            if (old != SDP_NIL) sdp_alloc_free_block(&m, old);
            uint32_t x = sdp_alloc_malloc(&m, e->size, e->stream, alloc_pp ? alloc_pp[i] : 0);
            m.has_hint = false;
            drain_synced(&m, &by_rec);
            if (x != SDP_NIL) {
                ok = sdp_amap_put(&by_rec, e->addr, x);
            } else if (!m.nomem) {
                note_stop(cfg, &ro, &m);
                sd_replay_oom o = {i, e->size, e->stack, NULL};
                ok = push((void **)&ro.ooms, &ro.n_ooms, &ro.cap_ooms, &o, sizeof o);
            }
        } else if (e->action == rel) {
            uint32_t x = sdp_amap_del(&by_rec, e->addr);
            if (x != SDP_NIL) sdp_alloc_free_block(&m, x);
        } else if (e->action == SD_ACT_FREE_REQUESTED) {
            /* freed by the program, not reusable until free_completed (or a sync) */
            uint32_t x = sdp_amap_get(&by_rec, e->addr);
            if (x != SDP_NIL) sdp_alloc_request_free(&m, x, e->addr);
        } else if (e->action == SD_ACT_SEGMENT_ALLOC || e->action == SD_ACT_SEGMENT_MAP) {
            m.addr_hint = e->addr;
            m.has_hint = true;
        } else if (is_release(e->action)) {
            if (i == 0 || !is_release(d->trace[i - 1].action)) {
                uint8_t kind = release_kind(r->snap, d, i);
                if (kind == REL_PROGRAM) sdp_alloc_empty_cache(&m);
                else if (recorded && !limit) replay_allocator_release(&m, d, i);
                drain_synced(&m, &by_rec);
            }
        } else if (e->action == SD_ACT_OOM) {
            /* The request that failed, replayed (oom_live when it succeeds). */
            uint32_t x = sdp_alloc_malloc(&m, e->size, e->stream, 0);
            drain_synced(&m, &by_rec);
            sd_replay_oom_outcome oc = {i, e->size, e->stack, x != SDP_NIL, 0, NULL};
            if (x != SDP_NIL && limit > m.reserved) oc.headroom_bytes = limit - m.reserved;
            ok = push((void **)&ro.outc, &ro.n_outc, &ro.cap_outc, &oc, sizeof oc);
            if (x != SDP_NIL) {
                if (m.reserved > cfg->peak_reserved_bytes) {
                    cfg->peak_reserved_bytes = m.reserved;
                    cfg->peak_entry = i;
                }
                oom_live = x;
            } else if (ok && !m.nomem) {
                note_stop(cfg, &ro, &m);
                sd_replay_oom o = {i, e->size, e->stack, NULL};
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
        if (!ro.n_ooms) {
            cfg->stop_peak_reserved_bytes = cfg->peak_reserved_bytes;
            cfg->stop_alloc_retries = m.retries;
        }
        sdp_alloc_free_figures(&m, &cfg->stranded_bytes, &cfg->largest_free_bytes);
        cfg->timeline = tl_finish(r, &t, &cfg->n_timeline);
        sd_replay_oom *oo = own(r, ro.n_ooms * sizeof *oo);
        sd_replay_oom_outcome *oc = own(r, ro.n_outc * sizeof *oc);
        ok = oo && oc && cfg->timeline;
        if (ok) {
            if (ro.n_ooms) memcpy(oo, ro.ooms, ro.n_ooms * sizeof *oo);
            if (ro.n_outc) memcpy(oc, ro.outc, ro.n_outc * sizeof *oc);
            for (size_t k = 0; ok && k < ro.n_ooms; k++) ok = r->label(r->owner, oo[k].stack, &oo[k].label);
            for (size_t k = 0; ok && k < ro.n_outc; k++) ok = r->label(r->owner, oc[k].stack, &oc[k].label);
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
    sdp_alloc_free(&m);
    return ok;
}

/* ---- trust ---- */

/* A device's what-ifs are advice only when the model, run under the settings the
 * recording used, reproduces the recording: >= 99% of placements, every segment
 * decision, and the peak reserved to the byte. */
/* The peak is compared when the recorded settings ran as recorded, or reached it anyway:
 * under a --capacity or --memory-fraction the recording never had that changes their
 * replay, it is a what-if too, and trust rests on the fidelity pass (placements and
 * segment decisions) alone. */
static void judge_trust(sd_replay_device *d, bool recorded_as_run)
{
    d->trusted = false;
    d->trust_peak_compared =
        recorded_as_run ||
        (d->n_configs && d->configs[0].peak_reserved_bytes == d->recorded_peak_reserved_bytes);
    sd_replay_trust_reason why = SD_TRUST_REASON_COUNT;
    if (!d->n_configs) why = SD_TRUST_NOT_RUN;
    else if (d->placements_checked && d->placements_matched * 100 < d->placements_checked * 99)
        why = SD_TRUST_FEW_PLACEMENTS;
    else if (d->segment_decisions_matched != d->segment_decisions_checked)
        why = SD_TRUST_SEGMENT_DECISIONS;
    else if (d->trust_peak_compared &&
             d->configs[0].peak_reserved_bytes != d->recorded_peak_reserved_bytes)
        why = SD_TRUST_PEAK_DIFFERS;
    if (why != SD_TRUST_REASON_COUNT) {
        d->untrusted_why = sd_replay_trust_reason_text(why);
        d->trust_reasons |= 1u << why;
        return;
    }
    d->trusted = true;
    d->untrusted_why = NULL;
    /* 0 of 0 segment decisions is no evidence: the trust rests on placements alone. */
    if (d->warm_start && !d->segment_decisions_checked)
        d->trust_reasons |= 1u << (d->placements_checked ? SD_TRUST_PLACEMENTS_ONLY
                                                         : SD_TRUST_NOTHING_CHECKED);
}

/* What the snapshot says about the allocator that wrote it, whatever the verdict: keys of
 * a patched build, torch_npu's stream ids (its default stream is a real aclrtStream, never
 * 0, and its trace entries carry no time_us: torch_npu/csrc/npu/memory_snapshot.cpp). */
static uint32_t snapshot_reasons(const sd_snapshot *s, const sd_cuda_device *d)
{
    uint32_t r = 0;
    if (sd_snapshot_foreign_key_count(s)) r |= 1u << SD_TRUST_NON_UPSTREAM_KEYS;
    size_t n = 0;
    for (size_t i = 0; i < d->n_segments; i++, n++)
        if (!d->segments[i].stream) return r;
    for (size_t i = 0; i < d->n_trace; i++, n++) {
        const sd_trace_entry *e = &d->trace[i];
        if (e->has_time) return r;
        if (!e->stream && e->action != SD_ACT_OOM && e->action != SD_ACT_SNAPSHOT) return r;
    }
    if (n) r |= 1u << SD_TRUST_NPU_STREAMS;
    return r;
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

sd_status sdp_alloc_run_device(const sdp_alloc_run *r, const sd_cuda_device *d, const sd_replay_options *o,
                               sd_replay_device *out)
{
    size_t npts = o && o->timeline_points ? o->timeline_points : DEFAULT_POINTS;
    if (npts > MAX_POINTS) npts = MAX_POINTS;
    out->device = d->device;
    out->entries = d->n_trace;
    if (ring_wrapped(r->snap)) out->warnings[SD_REPLAY_RING_WRAPPED] = 1;
    pools pl;
    if (!collect_pools(r->snap, d, &pl)) return SD_ENOMEM;
    start_state st;
    sdp_amap others = {0};
    sd_status status = other_segments(r->snap, d, &others)
        ? rebuild_start(d, &pl, &r->confs[0], &others, &st, &out->warnings[SD_REPLAY_BAD_START])
        : SD_ENOMEM;
    sdp_amap_free(&others);
    if (status != SD_OK) {
        pools_free(&pl);
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
        cfgs[c].gc_needs_fraction = cfgs[c].conf.garbage_collection_threshold > 0 &&
                                    !(cfgs[c].conf.memory_fraction > 0);
        if (!free_run(r, d, &st, pl.n * 2, f.alloc_pp, &cfgs[c], npts, c == 0)) status = SD_ENOMEM;
    }
    if (fid_threaded) {
        pthread_join(fid_thread, NULL);
        if (!fj.ok) status = SD_ENOMEM;
    }
    sdp_alloc_free(&f.m);
    free(f.pend);
    out->configs = cfgs;
    out->n_configs = status == SD_OK ? r->n_confs : 0;
    out->warm_start = out->recorded_segment_allocs == 0;
    out->trust_reasons = snapshot_reasons(r->snap, d);
    judge_trust(out, out->capacity_source != SD_REPLAY_CAPACITY_GIVEN &&
                         !(o && o->memory_fraction > 0));
    free(f.alloc_pp);
    pools_free(&pl);
    start_state_free(&st);
    return status;
}
