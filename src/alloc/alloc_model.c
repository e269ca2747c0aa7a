/* alloc_model.c - a small model of torch's CUDACachingAllocator (c10/cuda/
 * CUDACachingAllocator.cpp, torch 2.x), enough to place requests as it does:
 *   round_size (512 B, roundup_power2_divisions), get_allocation_size (2 MiB small
 *   segments, 20 MiB below 10 MiB, else rounded to 2 MiB), get_free_block (best fit by
 *   (stream, size, address) in the request's pool; max_split_size: oversize blocks only for
 *   requests >= max_split_size and less than 20 MiB smaller), should_split (>= 512 B left
 *   in the small pool or with expandable segments, > 1 MiB in the large pool and only
 *   below max_split_size), free_block coalescing, release_available_cached_blocks,
 *   release_cached_blocks (with synchronize_and_free_events) and the retry,
 *   garbage_collect_cached_blocks, and expandable segments as torch runs them: one
 *   reserved address range per (pool, stream) mapped and unmapped in pages (2 MiB small,
 *   20 MiB large), best fit by the size a block can expand to (get_free_block),
 *   find_expandable_block / try_allocate_expandable_block / map_block filling the
 *   lowest-address room, and unmap_block releasing every whole free page of a free block.
 * Free blocks of each pool sit in a treap ordered as BlockComparatorSize orders
 * std::set<Block*>: a lookup is a descent, never a scan. */
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc_model.h"

/* ---- address map ---- */

static size_t amap_slot(const sdp_amap *m, uint64_t key)
{
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    return (size_t)(h ^ (h >> 29)) & (m->cap - 1);
}

bool sdp_amap_init(sdp_amap *m, size_t hint)
{
    size_t cap = 64;
    while (cap < hint * 2) cap <<= 1;
    m->slots = malloc(cap * sizeof *m->slots);
    m->cap = cap;
    m->count = 0;
    if (!m->slots) return false;
    for (size_t i = 0; i < cap; i++) m->slots[i].val = SDP_NIL;
    return true;
}

void sdp_amap_free(sdp_amap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

uint32_t sdp_amap_get(const sdp_amap *m, uint64_t key)
{
    for (size_t j = amap_slot(m, key);; j = (j + 1) & (m->cap - 1)) {
        if (m->slots[j].val == SDP_NIL) return SDP_NIL;
        if (m->slots[j].key == key) return m->slots[j].val;
    }
}

static bool amap_grow(sdp_amap *m)
{
    sdp_amap n;
    if (!sdp_amap_init(&n, m->cap)) {
        sdp_amap_free(&n);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].val != SDP_NIL) sdp_amap_put(&n, m->slots[i].key, m->slots[i].val);
    sdp_amap_free(m);
    *m = n;
    return true;
}

bool sdp_amap_put(sdp_amap *m, uint64_t key, uint32_t val)
{
    if ((m->count + 1) * 2 > m->cap && !amap_grow(m)) return false;
    size_t j = amap_slot(m, key);
    for (; m->slots[j].val != SDP_NIL; j = (j + 1) & (m->cap - 1))
        if (m->slots[j].key == key) {
            m->slots[j].val = val;
            return true;
        }
    m->slots[j].key = key;
    m->slots[j].val = val;
    m->count++;
    return true;
}

/* Linear probing without tombstones: the entries after the hole move back into it. */
uint32_t sdp_amap_del(sdp_amap *m, uint64_t key)
{
    size_t j = amap_slot(m, key);
    for (;; j = (j + 1) & (m->cap - 1)) {
        if (m->slots[j].val == SDP_NIL) return SDP_NIL;
        if (m->slots[j].key == key) break;
    }
    uint32_t val = m->slots[j].val;
    m->slots[j].val = SDP_NIL;
    m->count--;
    for (size_t k = (j + 1) & (m->cap - 1); m->slots[k].val != SDP_NIL; k = (k + 1) & (m->cap - 1)) {
        size_t home = amap_slot(m, m->slots[k].key);
        bool between = j <= k ? (home > j && home <= k) : (home > j || home <= k);
        if (between) continue;
        m->slots[j] = m->slots[k];
        m->slots[k].val = SDP_NIL;
        j = k;
    }
    return val;
}

/* ---- the allocator's size rules ---- */

static unsigned log2_floor(uint64_t v)
{
    return 63u - (unsigned)__builtin_clzll(v);
}

static uint32_t divisions_for(const sd_alloc_conf *c, uint64_t size)
{
    unsigned log_size = log2_floor(size), start = 20;
    unsigned idx = log_size > start ? log_size - start : 0;
    if (idx >= SD_ALLOC_CONF_INTERVALS) idx = SD_ALLOC_CONF_INTERVALS - 1;
    return c->roundup_power2_divisions[idx];
}

static uint64_t roundup_power2_next_division(uint64_t size, uint64_t divisions)
{
    if ((size & (size - 1)) == 0) return size;
    uint64_t floor2 = 1ULL << log2_floor(size);
    uint64_t step = floor2 >> log2_floor(divisions);
    if (step == 0) return floor2 << 1;
    uint64_t down = size & ~(step - 1);
    return down == size ? size : down + step;
}

uint64_t sdp_alloc_round_size(const sd_alloc_conf *c, uint64_t size)
{
    if (size < SDP_KMIN_BLOCK) return SDP_KMIN_BLOCK;
    uint32_t div = divisions_for(c, size);
    if (div > 1 && size > SDP_KMIN_BLOCK * div) return roundup_power2_next_division(size, div);
    if (size > UINT64_MAX - SDP_KMIN_BLOCK) return size;
    return SDP_KMIN_BLOCK * ((size + SDP_KMIN_BLOCK - 1) / SDP_KMIN_BLOCK);
}

uint64_t sdp_alloc_segment_size(uint64_t size)
{
    if (size <= SDP_KSMALL_SIZE) return SDP_KSMALL_BUFFER;
    if (size < SDP_KMIN_LARGE_ALLOC) return SDP_KLARGE_BUFFER;
    if (size > UINT64_MAX - SDP_KROUND_LARGE) return size;
    return SDP_KROUND_LARGE * ((size + SDP_KROUND_LARGE - 1) / SDP_KROUND_LARGE);
}

static bool pool_is_small(uint16_t pool) { return pool & 1; }

bool sdp_alloc_should_split(const sdp_alloc *m, uint32_t blk, uint64_t size)
{
    const sdp_alloc_block *b = &m->b[blk];
    uint64_t remaining = b->size - size;
    if (pool_is_small(b->pool) || m->conf->expandable_segments) return remaining >= SDP_KMIN_BLOCK;
    return size < m->conf->max_split_size && remaining > SDP_KSMALL_SIZE;
}

/* ---- the free-block treap ---- */

static bool key_less(const sdp_alloc_block *a, uint64_t stream, uint64_t size, uint64_t addr)
{
    if (a->stream != stream) return a->stream < stream;
    if (a->size != size) return a->size < size;
    return a->addr < addr;
}

static bool blk_less(const sdp_alloc_block *a, const sdp_alloc_block *b)
{
    return key_less(a, b->stream, b->size, b->addr);
}

static uint32_t t_merge(sdp_alloc_block *b, uint32_t x, uint32_t y)
{
    if (x == SDP_NIL) return y;
    if (y == SDP_NIL) return x;
    if (b[x].prio > b[y].prio) {
        b[x].r = t_merge(b, b[x].r, y);
        return x;
    }
    b[y].l = t_merge(b, x, b[y].l);
    return y;
}

/* Split t into keys < x's (out l) and the rest (out r). */
static void t_split(sdp_alloc_block *b, uint32_t t, const sdp_alloc_block *x, uint32_t *l, uint32_t *r)
{
    if (t == SDP_NIL) {
        *l = *r = SDP_NIL;
        return;
    }
    if (blk_less(&b[t], x)) {
        t_split(b, b[t].r, x, &b[t].r, r);
        *l = t;
    } else {
        t_split(b, b[t].l, x, l, &b[t].l);
        *r = t;
    }
}

static uint32_t t_insert(sdp_alloc_block *b, uint32_t t, uint32_t x)
{
    if (t == SDP_NIL) return x;
    if (b[x].prio > b[t].prio) {
        t_split(b, t, &b[x], &b[x].l, &b[x].r);
        return x;
    }
    if (blk_less(&b[x], &b[t])) b[t].l = t_insert(b, b[t].l, x);
    else b[t].r = t_insert(b, b[t].r, x);
    return t;
}

static uint32_t t_erase(sdp_alloc_block *b, uint32_t t, uint32_t x)
{
    if (t == SDP_NIL) return SDP_NIL;
    if (t == x) return t_merge(b, b[t].l, b[t].r);
    if (blk_less(&b[x], &b[t])) b[t].l = t_erase(b, b[t].l, x);
    else b[t].r = t_erase(b, b[t].r, x);
    return t;
}

/* The first free block not less than the key. */
static uint32_t t_lower_bound(const sdp_alloc_block *b, uint32_t t, uint64_t stream, uint64_t size,
                              uint64_t addr)
{
    uint32_t res = SDP_NIL;
    while (t != SDP_NIL) {
        if (!key_less(&b[t], stream, size, addr)) {
            res = t;
            t = b[t].l;
        } else {
            t = b[t].r;
        }
    }
    return res;
}

/* The last free block less than the key. */
static uint32_t t_before(const sdp_alloc_block *b, uint32_t t, uint64_t stream, uint64_t size,
                         uint64_t addr)
{
    uint32_t res = SDP_NIL;
    while (t != SDP_NIL) {
        if (key_less(&b[t], stream, size, addr)) {
            res = t;
            t = b[t].r;
        } else {
            t = b[t].l;
        }
    }
    return res;
}

static void tree_add(sdp_alloc *m, uint32_t x)
{
    sdp_alloc_block *b = &m->b[x];
    b->l = b->r = SDP_NIL;
    m->root[b->pool] = t_insert(m->b, m->root[b->pool], x);
    b->gc_base = m->gc_count[b->pool];
}

static void tree_del(sdp_alloc *m, uint32_t x)
{
    m->root[m->b[x].pool] = t_erase(m->b, m->root[m->b[x].pool], x);
}

/* ---- blocks and segments ---- */

bool sdp_alloc_init(sdp_alloc *m, const sd_alloc_conf *conf, size_t npools, bool track_addr)
{
    memset(m, 0, sizeof *m);
    m->conf = conf;
    m->free_b = SDP_NIL;
    m->npools = npools;
    m->root = malloc(npools * sizeof *m->root);
    m->gc_count = calloc(npools, sizeof *m->gc_count);
    m->track_addr = track_addr;
    m->rng = 0x2545f491u;
    m->next_fake = 1ULL << 60;
    if (!m->root || !m->gc_count) return false;
    for (size_t i = 0; i < npools; i++) m->root[i] = SDP_NIL;
    if (track_addr && !sdp_amap_init(&m->by_addr, 1024)) return false;
    return true;
}

void sdp_alloc_free(sdp_alloc *m)
{
    free(m->b);
    free(m->s);
    free(m->live);
    free(m->root);
    free(m->gc_count);
    free(m->pend);
    free(m->synced);
    sdp_amap_free(&m->by_addr);
    memset(m, 0, sizeof *m);
}

static uint32_t next_prio(sdp_alloc *m)
{
    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 17;
    m->rng ^= m->rng << 5;
    return m->rng;
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t n = *cap ? *cap * 2 : 256;
    while (n < need) n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

static uint32_t new_block(sdp_alloc *m, uint64_t addr, uint64_t size, uint64_t stream,
                          uint32_t seg, uint16_t pool)
{
    uint32_t x;
    if (m->free_b != SDP_NIL) {
        x = m->free_b;
        m->free_b = m->b[x].next;
    } else {
        if (m->nb >= SDP_NIL - 1 || !grow((void **)&m->b, &m->capb, m->nb + 1, sizeof *m->b)) {
            m->nomem = true;
            return SDP_NIL;
        }
        x = (uint32_t)m->nb++;
    }
    m->b[x] = (sdp_alloc_block){.addr = addr, .size = size, .stream = stream, .prev = SDP_NIL,
                         .next = SDP_NIL, .l = SDP_NIL, .r = SDP_NIL, .prio = next_prio(m),
                         .seg = seg, .pool = pool, .live = 1, .mapped = 1};
    if (m->track_addr && !sdp_amap_put(&m->by_addr, addr, x)) m->nomem = true;
    return x;
}

static void drop_block(sdp_alloc *m, uint32_t x)
{
    if (m->track_addr && sdp_amap_get(&m->by_addr, m->b[x].addr) == x)
        sdp_amap_del(&m->by_addr, m->b[x].addr);
    m->b[x].live = 0;
    m->b[x].next = m->free_b;
    m->free_b = x;
}

static void readdress(sdp_alloc *m, uint32_t x, uint64_t addr)
{
    if (m->track_addr) {
        if (sdp_amap_get(&m->by_addr, m->b[x].addr) == x) sdp_amap_del(&m->by_addr, m->b[x].addr);
        if (!sdp_amap_put(&m->by_addr, addr, x)) m->nomem = true;
    }
    m->b[x].addr = addr;
}

uint32_t sdp_alloc_add_segment(sdp_alloc *m, uint64_t addr, uint64_t size, uint64_t stream,
                              uint16_t pool, bool expandable)
{
    if (m->ns >= SDP_NIL - 1 || !grow((void **)&m->s, &m->caps, m->ns + 1, sizeof *m->s) ||
        !grow((void **)&m->live, &m->caplive, m->nlive + 1, sizeof *m->live)) {
        m->nomem = true;
        return SDP_NIL;
    }
    uint32_t s = (uint32_t)m->ns++;
    m->s[s] = (sdp_alloc_seg){.addr = addr, .size = size, .va = size, .stream = stream,
                         .head = SDP_NIL, .tail = SDP_NIL, .live_pos = (uint32_t)m->nlive,
                         .pool = pool, .expandable = expandable};
    m->live[m->nlive++] = s;
    if (size) {
        uint32_t x = new_block(m, addr, size, stream, s, pool);
        if (x == SDP_NIL) return SDP_NIL;
        m->s[s].head = m->s[s].tail = x;
        tree_add(m, x);
    }
    m->reserved += size;
    return s;
}

static void unlink_segment(sdp_alloc *m, uint32_t s)
{
    uint32_t pos = m->s[s].live_pos, last = m->live[--m->nlive];
    m->live[pos] = last;
    m->s[last].live_pos = pos;
    m->s[s].live_pos = SDP_NIL;
}

void sdp_alloc_release_segment(sdp_alloc *m, uint32_t s)
{
    sdp_alloc_seg *g = &m->s[s];
    if (g->live_pos == SDP_NIL) return;
    if (g->head != SDP_NIL) {
        tree_del(m, g->head);
        drop_block(m, g->head);
    }
    m->reserved -= g->size;
    g->head = g->tail = SDP_NIL;
    g->size = 0;
    unlink_segment(m, s);
}

/* Split block x at offset `at`: x keeps [addr, addr+at), a new block after it the rest.
 * Neither is in the tree. */
static uint32_t split_after(sdp_alloc *m, uint32_t x, uint64_t at)
{
    sdp_alloc_block b = m->b[x];
    uint32_t y = new_block(m, b.addr + at, b.size - at, b.stream, b.seg, b.pool);
    if (y == SDP_NIL) return SDP_NIL;
    sdp_alloc_block *bx = &m->b[x], *by = &m->b[y];
    by->mapped = bx->mapped;
    by->prev = x;
    by->next = bx->next;
    if (bx->next != SDP_NIL) m->b[bx->next].prev = y;
    else m->s[bx->seg].tail = y;
    bx->next = y;
    bx->size = at;
    return y;
}

void sdp_alloc_alloc_found(sdp_alloc *m, uint32_t x, uint64_t size)
{
    if (size < m->b[x].size && sdp_alloc_should_split(m, x, size)) {
        uint32_t rest = split_after(m, x, size);
        if (rest != SDP_NIL) tree_add(m, rest);
    }
    m->b[x].allocated = 1;
    m->allocated += m->b[x].size;
}

uint32_t sdp_alloc_carve(sdp_alloc *m, uint32_t x, uint64_t addr, uint64_t size, bool exact)
{
    sdp_alloc_block *b = &m->b[x];
    if (b->allocated || !b->mapped || addr < b->addr || addr >= b->addr + b->size) return SDP_NIL;
    tree_del(m, x);
    if (addr > b->addr) {
        uint32_t y = split_after(m, x, addr - m->b[x].addr);
        if (y == SDP_NIL) {
            tree_add(m, x);
            return SDP_NIL;
        }
        tree_add(m, x);
        x = y;
    }
    if (size > m->b[x].size) size = m->b[x].size;
    if (exact && size < m->b[x].size) {
        uint32_t rest = split_after(m, x, size);
        if (rest != SDP_NIL) tree_add(m, rest);
        m->b[x].allocated = 1;
        m->allocated += m->b[x].size;
        return x;
    }
    sdp_alloc_alloc_found(m, x, size);
    return x;
}

/* Coalesce free neighbour `src` into `dst` (torch's try_merge_blocks). */
static void merge_into(sdp_alloc *m, uint32_t dst, uint32_t src)
{
    sdp_alloc_block *d = &m->b[dst], *s = &m->b[src];
    if (s->mapped) tree_del(m, src);
    sdp_alloc_seg *g = &m->s[d->seg];
    if (d->prev == src) {
        d->prev = s->prev;
        if (s->prev != SDP_NIL) m->b[s->prev].next = dst;
        else g->head = dst;
        uint64_t a = s->addr;
        d->size += s->size;
        drop_block(m, src);
        readdress(m, dst, a);
    } else {
        d->next = s->next;
        if (s->next != SDP_NIL) m->b[s->next].prev = dst;
        else g->tail = dst;
        d->size += s->size;
        drop_block(m, src);
    }
}

/* try_merge_blocks' test: a free neighbour in the same mapped state. */
static bool mergeable(const sdp_alloc *m, uint32_t dst, uint32_t src)
{
    return src != SDP_NIL && !m->b[src].allocated && m->b[src].mapped == m->b[dst].mapped;
}

void sdp_alloc_free_block(sdp_alloc *m, uint32_t x)
{
    sdp_alloc_block *b = &m->b[x];
    if (!b->allocated) return;
    b->allocated = 0;
    b->pending = 0;
    m->allocated -= b->size;
    if (mergeable(m, x, b->prev)) merge_into(m, x, m->b[x].prev);
    if (mergeable(m, x, m->b[x].next)) merge_into(m, x, m->b[x].next);
    tree_add(m, x);
}

void sdp_alloc_request_free(sdp_alloc *m, uint32_t x, uint64_t key)
{
    if (!m->b[x].allocated || m->b[x].pending) return;
    if (!grow((void **)&m->pend, &m->cappend, m->npend + 1, sizeof *m->pend)) {
        m->nomem = true;
        return;
    }
    m->b[x].pending = 1;
    m->b[x].pend_key = key;
    m->pend[m->npend++] = x;
}

void sdp_alloc_sync_pending(sdp_alloc *m)
{
    for (size_t i = 0; i < m->npend; i++) {
        uint32_t x = m->pend[i];
        if (!m->b[x].live || !m->b[x].pending) continue;   /* completed since */
        if (!grow((void **)&m->synced, &m->capsynced, m->nsynced + 1, sizeof *m->synced)) {
            m->nomem = true;
            return;
        }
        m->synced[m->nsynced++] = m->b[x].pend_key;
        sdp_alloc_free_block(m, x);
    }
    m->npend = 0;
}

static bool whole_segment(const sdp_alloc *m, uint32_t x)
{
    const sdp_alloc_block *b = &m->b[x];
    return !b->allocated && b->prev == SDP_NIL && b->next == SDP_NIL &&
           !m->s[b->seg].expandable;
}

uint64_t sdp_alloc_limit(const sdp_alloc *m)
{
    double f = m->conf->memory_fraction;
    if (!m->capacity || !(f > 0.0 && f < 1.0)) return m->capacity;
    return (uint64_t)(f * (double)m->capacity);
}

/* torch runs garbage_collect_cached_blocks only when a memory fraction is set
 * (set_fraction): its threshold is a share of allowed_memory_maximum. */
static bool gc_active(const sdp_alloc *m)
{
    return m->conf->garbage_collection_threshold > 0 && m->conf->memory_fraction > 0 &&
           m->capacity;
}

/* The size an expandable block could grow to: itself plus the unmapped space after it
 * (get_free_block's expandable_size). */
static uint64_t expandable_size(const sdp_alloc *m, uint32_t x)
{
    uint32_t n = m->b[x].next;
    return m->b[x].size + (n != SDP_NIL && !m->b[n].mapped ? m->b[n].size : 0);
}

static uint32_t tree_next(const sdp_alloc *m, uint16_t pool, uint32_t x)
{
    return t_lower_bound(m->b, m->root[pool], m->b[x].stream, m->b[x].size, m->b[x].addr + 1);
}

size_t sdp_alloc_free_near(const sdp_alloc *m, uint16_t pool, uint64_t stream, uint64_t size,
                          sd_replay_free_block *out, size_t n)
{
    size_t k = 0;
    if (pool >= m->npools) return 0;
    for (uint32_t x = t_lower_bound(m->b, m->root[pool], stream, size, 0);
         x != SDP_NIL && k < n && m->b[x].stream == stream; x = tree_next(m, pool, x)) {
        bool es = m->s[m->b[x].seg].expandable;
        out[k++] = (sd_replay_free_block){m->b[x].addr, m->b[x].size,
                                          es ? expandable_size(m, x) : m->b[x].size};
    }
    return k;
}

uint32_t sdp_alloc_get_free_block(sdp_alloc *m, uint16_t pool, uint64_t stream, uint64_t size,
                                 bool take)
{
    if (take && gc_active(m)) m->gc_count[pool]++;
    uint32_t x = t_lower_bound(m->b, m->root[pool], stream, size, 0);
    /* Expandable blocks are skipped when expandable segments are off (torch honours a
     * setting turned off after they were made). */
    while (x != SDP_NIL && m->b[x].stream == stream && m->s[m->b[x].seg].expandable &&
           !m->conf->expandable_segments)
        x = t_lower_bound(m->b, m->root[pool], stream, m->b[x].size, m->b[x].addr + 1);
    if (x == SDP_NIL || m->b[x].stream != stream) return SDP_NIL;
    if (m->s[m->b[x].seg].expandable && m->conf->expandable_segments) {
        /* Best fit by the size a block can expand to: walk on while the next block in
         * size order could expand to less. */
        for (uint32_t n = tree_next(m, pool, x);
             m->s[m->b[x].seg].expandable && n != SDP_NIL && m->b[n].stream == stream &&
             expandable_size(m, n) < expandable_size(m, x);
             n = tree_next(m, pool, x))
            x = n;
    }
    uint64_t msz = m->conf->max_split_size;
    if (size < msz && m->b[x].size >= msz) return SDP_NIL;
    if (size >= msz && m->b[x].size >= size + m->conf->max_non_split_rounding) return SDP_NIL;
    if (take) tree_del(m, x);
    return x;
}

/* ---- expandable segments ---- */

static uint64_t es_page(const sdp_alloc_seg *g)
{
    return (g->pool & 1) ? SDP_KSMALL_BUFFER : SDP_KLARGE_BUFFER;
}

uint32_t sdp_alloc_add_expandable(sdp_alloc *m, uint64_t base, uint64_t va, uint64_t stream,
                                 uint16_t pool)
{
    uint32_t s = sdp_alloc_add_segment(m, base, 0, stream, pool, true);
    if (s == SDP_NIL || !va) return s;
    uint32_t x = new_block(m, base, va, stream, s, pool);
    if (x == SDP_NIL) return SDP_NIL;
    m->b[x].mapped = 0;
    m->s[s].head = m->s[s].tail = x;
    m->s[s].va = va;
    return s;
}

uint32_t sdp_alloc_expandable_holding(const sdp_alloc *m, uint64_t addr)
{
    for (size_t i = 0; i < m->nlive; i++) {
        const sdp_alloc_seg *g = &m->s[m->live[i]];
        if (g->expandable && addr >= g->addr && addr - g->addr < g->va) return m->live[i];
    }
    return SDP_NIL;
}

uint32_t sdp_alloc_block_at(const sdp_alloc *m, uint32_t seg, uint64_t addr)
{
    if (m->track_addr) {
        uint32_t x = sdp_amap_get(&m->by_addr, addr);
        if (x != SDP_NIL && m->b[x].seg == seg) return x;
    }
    for (uint32_t x = m->s[seg].head; x != SDP_NIL; x = m->b[x].next)
        if (addr >= m->b[x].addr && addr - m->b[x].addr < m->b[x].size) return x;
    return SDP_NIL;
}

/* Cut [addr, addr + size) out of block x (neither part in the tree): @return the block
 * that is exactly that range. */
static uint32_t isolate(sdp_alloc *m, uint32_t x, uint64_t addr, uint64_t size)
{
    if (addr > m->b[x].addr) {
        uint32_t y = split_after(m, x, addr - m->b[x].addr);
        if (y == SDP_NIL) return SDP_NIL;
        if (m->b[x].mapped) tree_add(m, x);
        x = y;
    }
    if (size < m->b[x].size) {
        uint32_t y = split_after(m, x, size);
        if (y == SDP_NIL) return SDP_NIL;
        if (m->b[y].mapped) tree_add(m, y);
    }
    return x;
}

uint32_t sdp_alloc_map_range(sdp_alloc *m, uint32_t seg, uint64_t addr, uint64_t size)
{
    uint32_t x = sdp_alloc_block_at(m, seg, addr);
    if (x == SDP_NIL || m->b[x].mapped || m->b[x].addr + m->b[x].size - addr < size) return SDP_NIL;
    x = isolate(m, x, addr, size);
    if (x == SDP_NIL) return SDP_NIL;
    m->b[x].mapped = 1;
    if (mergeable(m, x, m->b[x].prev)) merge_into(m, x, m->b[x].prev);
    if (mergeable(m, x, m->b[x].next)) merge_into(m, x, m->b[x].next);
    tree_add(m, x);
    m->s[seg].size += size;
    m->reserved += size;
    return x;
}

bool sdp_alloc_unmap_range(sdp_alloc *m, uint32_t seg, uint64_t addr, uint64_t size)
{
    uint32_t x = sdp_alloc_block_at(m, seg, addr);
    if (x == SDP_NIL || !m->b[x].mapped || m->b[x].allocated ||
        m->b[x].addr + m->b[x].size - addr < size)
        return false;
    tree_del(m, x);
    x = isolate(m, x, addr, size);
    if (x == SDP_NIL) return false;
    m->b[x].mapped = 0;
    if (mergeable(m, x, m->b[x].prev)) merge_into(m, x, m->b[x].prev);
    if (mergeable(m, x, m->b[x].next)) merge_into(m, x, m->b[x].next);
    m->s[seg].size -= size;
    m->reserved -= size;
    return true;
}

/* torch's unmap_block: the whole pages inside free block x go back to the device. */
static void unmap_block(sdp_alloc *m, uint32_t x)
{
    const sdp_alloc_seg *g = &m->s[m->b[x].seg];
    uint64_t page = es_page(g), off = m->b[x].addr - g->addr;
    uint64_t begin = (off + page - 1) / page * page, end = (off + m->b[x].size) / page * page;
    if (begin < end) sdp_alloc_unmap_range(m, m->b[x].seg, g->addr + begin, end - begin);
}

/* torch's map_block: map the pages that cover `size` bytes from the start of unmapped
 * block x. @return the free block that then holds them, or SDP_NIL when the device is
 * full. */
static uint32_t map_block(sdp_alloc *m, uint32_t x, uint64_t size)
{
    uint32_t seg = m->b[x].seg;
    uint64_t page = es_page(&m->s[seg]);
    uint64_t bytes = (size + page - 1) / page * page;
    if (bytes > m->b[x].size) bytes = m->b[x].size;
    uint64_t limit = sdp_alloc_limit(m);
    if (limit && m->reserved + bytes > limit) return SDP_NIL;
    m->segment_allocs++;
    return sdp_alloc_map_range(m, seg, m->b[x].addr, bytes);
}

static bool allocatable(const sdp_alloc *m, uint32_t x)
{
    return x != SDP_NIL && !m->b[x].allocated;
}

/* find_expandable_block: the lowest-address unmapped block of the pool and stream (or the
 * free block just before it) with room for size bytes from there; SDP_NIL when none. */
static uint32_t find_expandable(const sdp_alloc *m, uint16_t pool, uint64_t stream, uint64_t size)
{
    uint32_t found = SDP_NIL;
    uint64_t found_addr = UINT64_MAX;
    for (size_t i = 0; i < m->nlive; i++) {
        uint32_t s = m->live[i];
        const sdp_alloc_seg *g = &m->s[s];
        if (!g->expandable || g->pool != pool || g->stream != stream || g->addr >= found_addr)
            continue;
        for (uint32_t c = g->head; c != SDP_NIL; c = m->b[c].next) {
            if (m->b[c].mapped) continue;
            uint32_t start = allocatable(m, m->b[c].prev) ? m->b[c].prev : c;
            uint64_t bytes = 0;
            for (uint32_t b = start; bytes < size && allocatable(m, b); b = m->b[b].next)
                bytes += m->b[b].size;
            if (bytes >= size) {
                found = start;
                found_addr = g->addr;
                break;
            }
        }
    }
    return found;
}

void sdp_alloc_expandable_plan(const sdp_alloc *m, uint16_t pool, uint64_t stream, uint64_t size,
                              uint64_t *addr, uint64_t *map_bytes)
{
    uint64_t page = (pool & 1) ? SDP_KSMALL_BUFFER : SDP_KLARGE_BUFFER;
    uint32_t c = find_expandable(m, pool, stream, size);
    *addr = 0;
    *map_bytes = (size + page - 1) / page * page;
    if (c == SDP_NIL) return;
    *addr = m->b[c].addr;
    uint64_t have = 0, mapped = 0;
    for (uint32_t b = c; b != SDP_NIL && have < size; b = m->b[b].next) {
        if (m->b[b].mapped) {
            have += m->b[b].size;
            continue;
        }
        uint64_t take = (size - have + page - 1) / page * page;
        if (take > m->b[b].size) take = m->b[b].size;
        mapped += take;
        have += take;
        if (take < m->b[b].size) break;
    }
    *map_bytes = mapped;
}

/* A new expandable segment for the pool and stream: at the address the recording's first
 * map of it used, when known; else past every real address. */
static uint32_t new_expandable(sdp_alloc *m, uint16_t pool, uint64_t stream)
{
    uint64_t base = m->next_fake;
    if (m->has_hint && sdp_alloc_expandable_holding(m, m->addr_hint) == SDP_NIL) {
        base = m->addr_hint;
    } else {
        m->next_fake += SDP_ES_ADDRESS_SPACE;
    }
    m->has_hint = false;
    return sdp_alloc_add_expandable(m, base, SDP_ES_ADDRESS_SPACE, stream, pool);
}

/* try_allocate_expandable_block: map what the candidate lacks, page by page, from its
 * start; the mapped block is taken out of the free tree. */
static uint32_t alloc_expandable(sdp_alloc *m, uint16_t pool, uint64_t stream, uint64_t size)
{
    uint32_t c = find_expandable(m, pool, stream, size);
    if (c == SDP_NIL) {
        uint32_t s = new_expandable(m, pool, stream);
        if (s == SDP_NIL) return SDP_NIL;
        c = m->s[s].head;
    }
    if (!m->b[c].mapped) {
        c = map_block(m, c, size < m->b[c].size ? size : m->b[c].size);
        if (c == SDP_NIL) return SDP_NIL;
    }
    while (m->b[c].size < size) {
        uint32_t n = m->b[c].next;
        if (n == SDP_NIL || m->b[n].mapped) return SDP_NIL;
        uint64_t rest = size - m->b[c].size;
        c = map_block(m, n, rest < m->b[n].size ? rest : m->b[n].size);
        if (c == SDP_NIL) return SDP_NIL;
    }
    tree_del(m, c);
    return c;
}

/* ---- releases ---- */

void sdp_alloc_release_cached(sdp_alloc *m)
{
    sdp_alloc_sync_pending(m);
    for (size_t i = 0; i < m->nlive;) {
        uint32_t s = m->live[i];
        const sdp_alloc_seg *g = &m->s[s];
        if (g->pool >= 2) {           /* a private pool */
            i++;
            continue;
        }
        if (g->expandable) {
            /* unmap_block only merges unmapped blocks into the one it unmaps, so the
             * free mapped blocks met further on are still there. */
            for (uint32_t x = g->head; x != SDP_NIL;) {
                uint32_t next = m->b[x].next;
                if (m->b[x].mapped && !m->b[x].allocated) unmap_block(m, x);
                x = next;
            }
            i++;
        } else if (g->head != SDP_NIL && whole_segment(m, g->head)) {
            sdp_alloc_release_segment(m, s);   /* live[i] now holds another segment */
        } else {
            i++;
        }
    }
}

static void release_block_segment(sdp_alloc *m, uint32_t x)
{
    sdp_alloc_release_segment(m, m->b[x].seg);
}

/* torch's release_available_cached_blocks: with max_split_size set, release the smallest
 * oversize cached segment that covers the request, else the largest ones (never an
 * expandable one) until they do. */
bool sdp_alloc_release_available(sdp_alloc *m, uint16_t pool, uint64_t stream, uint64_t size)
{
    uint64_t msz = m->conf->max_split_size;
    if (msz == UINT64_MAX) return false;
    uint64_t key = size < msz ? msz : size;
    uint32_t x = t_lower_bound(m->b, m->root[pool], stream, key, 0);
    if (x != SDP_NIL && m->b[x].stream == stream && !m->s[m->b[x].seg].expandable) {
        if (!whole_segment(m, x)) return false;
        release_block_segment(m, x);
        return true;
    }
    uint64_t released = 0;
    x = t_before(m->b, m->root[pool], stream, key, 0);
    while (released < key && x != SDP_NIL && m->b[x].size >= msz && m->b[x].stream == stream) {
        uint32_t before = t_before(m->b, m->root[pool], stream, m->b[x].size, m->b[x].addr);
        if (whole_segment(m, x)) {
            released += m->b[x].size;
            release_block_segment(m, x);
        }
        x = before;
    }
    return released >= key;
}

static void collect_free(const sdp_alloc_block *b, uint32_t t, uint32_t *out, size_t *n)
{
    while (t != SDP_NIL) {
        collect_free(b, b[t].l, out, n);
        out[(*n)++] = t;
        t = b[t].r;
    }
}

/* torch's garbage_collect_cached_blocks, over the default large pool: free whole cached
 * segments of above-average age until reserved is back under the threshold. */
static void garbage_collect(sdp_alloc *m)
{
    uint64_t threshold = (uint64_t)(m->conf->garbage_collection_threshold *
                                    (double)sdp_alloc_limit(m));
    if (m->reserved <= threshold) return;
    uint64_t target = m->reserved - threshold, reclaimed = 0;
    size_t n = 0;
    uint32_t *all = malloc((m->nb ? m->nb : 1) * sizeof *all);
    if (!all) {
        m->nomem = true;
        return;
    }
    collect_free(m->b, m->root[0], all, &n);
    double total_age = 0;
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (whole_segment(m, all[i])) {
            total_age += (double)(m->gc_count[0] - m->b[all[i]].gc_base);
            count++;
        }
    bool freed = true;
    while (reclaimed < target && freed && count > 0) {
        double threshold_age = total_age / (double)count;
        freed = false;
        for (size_t i = 0; i < n; i++) {
            uint32_t x = all[i];
            if (x == SDP_NIL || !whole_segment(m, x)) continue;
            double age = (double)(m->gc_count[0] - m->b[x].gc_base);
            if (age < threshold_age) continue;
            freed = true;
            reclaimed += m->b[x].size;
            total_age -= age;
            count--;
            all[i] = SDP_NIL;
            release_block_segment(m, x);
        }
    }
    free(all);
}

/* torch's alloc_block: a new segment (cudaMalloc), or more pages of an expandable one. */
static uint32_t alloc_block(sdp_alloc *m, uint16_t pool, uint64_t stream, uint64_t size)
{
    /* Private pools (CUDA graphs, MemPool) take cudaMalloc segments whatever the setting
     * (alloc_block: expandable segments only when !owner_PrivatePool). */
    if (m->conf->expandable_segments && pool < 2) return alloc_expandable(m, pool, stream, size);
    uint64_t bytes = sdp_alloc_segment_size(size);
    uint64_t limit = sdp_alloc_limit(m);
    if (limit && m->reserved + bytes > limit) return SDP_NIL;
    /* The address only orders blocks of equal size (best fit's last key): where the
     * recording's cudaMalloc put this request's segment, when it made one; else past
     * every real address. */
    uint64_t addr = m->addr_hint;
    if (!m->has_hint) {
        addr = m->next_fake;
        m->next_fake += (bytes + SDP_KROUND_LARGE - 1) / SDP_KROUND_LARGE * SDP_KROUND_LARGE;
    }
    m->has_hint = false;
    uint32_t s = sdp_alloc_add_segment(m, addr, bytes, stream, pool, false);
    if (s == SDP_NIL) return SDP_NIL;
    m->segment_allocs++;
    uint32_t x = m->s[s].head;
    tree_del(m, x);
    return x;
}

uint32_t sdp_alloc_malloc(sdp_alloc *m, uint64_t req, uint64_t stream, uint16_t private_pool)
{
    uint64_t size = sdp_alloc_round_size(m->conf, req);
    uint16_t pool = (uint16_t)(private_pool * 2 + (size <= SDP_KSMALL_SIZE));
    if (pool >= m->npools) pool = size <= SDP_KSMALL_SIZE;
    uint32_t x = sdp_alloc_get_free_block(m, pool, stream, size, true);
    if (x == SDP_NIL) {
        if (gc_active(m)) garbage_collect(m);
        x = alloc_block(m, pool, stream, size);
        if (x == SDP_NIL && sdp_alloc_release_available(m, pool, stream, size))
            x = alloc_block(m, pool, stream, size);
        if (x == SDP_NIL && !m->nomem) {
            sdp_alloc_release_cached(m);
            m->retries++;
            x = alloc_block(m, pool, stream, size);
        }
        if (x == SDP_NIL) return SDP_NIL;
    }
    sdp_alloc_alloc_found(m, x, size);
    return x;
}

/* Bytes of free block x that lie in whole pages of its expandable segment: what
 * unmap_block would hand back (frag.c's expandable_pages, on the model's blocks). */
static uint64_t whole_free_pages(const sdp_alloc *m, const sdp_alloc_seg *g, uint32_t x)
{
    uint64_t page = es_page(g), off = m->b[x].addr - g->addr;
    uint64_t begin = (off + page - 1) / page * page, end = (off + m->b[x].size) / page * page;
    return end > begin ? end - begin : 0;
}

/* Stranded as frag counts it (docs/counting.md): the free bytes empty_cache() would not
 * release. A plain segment releases all of its free bytes only when it holds no live
 * block; an expandable one releases the whole free pages of each free block, live blocks
 * or not. */
void sdp_alloc_free_figures(const sdp_alloc *m, uint64_t *stranded, uint64_t *largest)
{
    *stranded = *largest = 0;
    for (size_t i = 0; i < m->nlive; i++) {
        const sdp_alloc_seg *g = &m->s[m->live[i]];
        uint64_t free_bytes = 0, pages = 0;
        bool used = false;
        for (uint32_t x = g->head; x != SDP_NIL; x = m->b[x].next) {
            if (!m->b[x].mapped) continue;
            if (m->b[x].allocated) {
                used = true;
            } else {
                free_bytes += m->b[x].size;
                if (g->expandable) pages += whole_free_pages(m, g, x);
                if (m->b[x].size > *largest) *largest = m->b[x].size;
            }
        }
        if (g->pool >= 2) *stranded += free_bytes;   /* a private pool keeps its memory */
        else if (g->expandable) *stranded += free_bytes - pages;
        else if (used) *stranded += free_bytes;
    }
}
