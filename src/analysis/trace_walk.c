/* trace_walk.c - the window, the address table and the alloc/free state machine of a
 * trace replay (trace_walk.h), for peak.c and trace.c alike. */
#include "analysis/trace_walk.h"

#include <stdlib.h>
#include <string.h>

static size_t bound_index(const sd_cuda_device *d, const sd_trace_bound *b, bool upper)
{
    size_t n = d->n_trace;
    if (b->kind == SD_BOUND_NONE) return upper ? n : 0;
    if (b->kind == SD_BOUND_INDEX)
        return b->value < 0 ? 0 : (uint64_t)b->value > n ? n : (size_t)b->value;
    int64_t t = b->value;
    if (b->kind == SD_BOUND_OFFSET) {
        size_t i = 0;
        while (i < n && !d->trace[i].has_time) i++;
        if (i == n) return upper ? 0 : n;        /* no times: a time window is empty */
        t = sdp_i64_add_sat(d->trace[i].time_us, b->value);
    }
    /* The first entry recorded at or after t (entries are oldest first). */
    for (size_t i = 0; i < n; i++)
        if (d->trace[i].has_time && d->trace[i].time_us >= t) return i;
    return n;
}

void sdp_trace_window(const sd_cuda_device *d, const sd_trace_bound *since,
                      const sd_trace_bound *until, size_t *lo, size_t *hi)
{
    *lo = bound_index(d, since, false);
    *hi = bound_index(d, until, true);
    if (*hi < *lo) *hi = *lo;
}

/* ---------- the address table ---------- */

static uint64_t addr_hash(uint64_t a) { return sdp_hash_mix(SDP_HASH_SEED, a); }

static uint64_t addr_hash_of_id(const void *ctx, uint32_t id)
{
    return addr_hash(((const sdp_trace_walk *)ctx)->addrs[id].addr);
}

void sdp_trace_walk_init(sdp_trace_walk *w, sdp_arena *budget)
{
    memset(w, 0, sizeof *w);
    w->budget = budget;
}

sd_status sdp_trace_walk_reset(sdp_trace_walk *w)
{
    w->n_addrs = 0;
    sdp_htab_free(&w->index);
    return sdp_htab_init(&w->index, 1024, w->budget);
}

/* A trace this long reserves its address records' room (32 bytes a record, a record at
 * most per entry): a 3-million-entry trace has 250,000 addresses, 8 MiB of records, which
 * in 4 KiB pages cost a TLB miss per probe and a fault per page on this VM. */
enum { EXPECT_MIN_ENTRIES = 65536 };

void sdp_trace_walk_expect(sdp_trace_walk *w, size_t n)
{
    if (w->addrs || w->region.base || n < EXPECT_MIN_ENTRIES) return;
    if (n > SIZE_MAX / sizeof *w->addrs) return;
    sdp_region_reserve(&w->region, n * sizeof *w->addrs);
}

void sdp_trace_walk_free(sdp_trace_walk *w)
{
    sdp_htab_free(&w->index);
    if (w->region.base) sdp_region_release(&w->region);
    else free(w->addrs);
    w->addrs = NULL;
    w->n_addrs = w->addrs_cap = 0;
}

/* The record of `addr`, created (state SDP_ADDR_NONE) when new. */
static sdp_addr_rec *addr_find(sdp_trace_walk *w, uint64_t addr)
{
    uint64_t h = addr_hash(addr);
    size_t j = sdp_htab_first(&w->index, h);
    for (; w->index.slots[j]; j = sdp_htab_next(&w->index, j)) {
        sdp_addr_rec *r = &w->addrs[w->index.slots[j] - 1];
        if (r->addr == addr) return r;
    }
    if (w->n_addrs >= UINT32_MAX - 1 || sdp_htab_reserve_one(&w->index, addr_hash_of_id, w) ||
        sdp_grow_in_region((void **)&w->addrs, &w->addrs_cap, w->n_addrs + 1, sizeof *w->addrs,
                           w->budget, &w->region))
        return NULL;
    j = sdp_htab_first(&w->index, h);
    while (w->index.slots[j]) j = sdp_htab_next(&w->index, j);
    sdp_htab_put(&w->index, j, (uint32_t)w->n_addrs);
    sdp_addr_rec *r = &w->addrs[w->n_addrs++];
    memset(r, 0, sizeof *r);
    r->addr = addr;
    return r;
}

const sdp_addr_rec *sdp_trace_walk_live(const sdp_trace_walk *w, uint64_t addr)
{
    uint64_t h = addr_hash(addr);
    for (size_t j = sdp_htab_first(&w->index, h); w->index.slots[j];
         j = sdp_htab_next(&w->index, j)) {
        const sdp_addr_rec *r = &w->addrs[w->index.slots[j] - 1];
        if (r->addr == addr) return r->state == SDP_ADDR_LIVE ? r : NULL;
    }
    return NULL;
}

/* ---------- the state machine ---------- */

sd_status sdp_trace_walk_entry(sdp_trace_walk *w, const sd_trace_entry *e, size_t i,
                               sdp_walk_step *out)
{
    out->released = false;
    out->early = false;
    out->id = UINT32_MAX;
    bool requested = e->action == SD_ACT_FREE_REQUESTED;
    if (e->action != SD_ACT_ALLOC && !requested && e->action != SD_ACT_FREE_COMPLETED)
        return SD_OK;
    sdp_addr_rec *a = addr_find(w, e->addr);
    if (!a) return SD_ENOMEM;
    out->id = (uint32_t)(a - w->addrs);
    if (a->state == SDP_ADDR_LIVE) {
        out->released = true;
        out->old = *a;
    }
    if (e->action == SD_ACT_ALLOC) {
        *a = (sdp_addr_rec){.addr = e->addr, .size = e->size, .entry = i, .stack = e->stack,
                            .state = SDP_ADDR_LIVE};
    } else if (a->state == SDP_ADDR_PENDING && !requested) {
        a->state = SDP_ADDR_NONE;       /* the requested free, done */
    } else {
        out->early = !out->released;    /* no block live there: one from before the walk */
        a->state = requested ? SDP_ADDR_PENDING : SDP_ADDR_NONE;
    }
    return SD_OK;
}
