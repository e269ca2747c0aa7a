/* hash.c - the one hash function and the one open-addressing table of libsnapdiff.
 *
 * The table stores ids (uint32_t), not keys: the caller owns the records and says how to
 * hash one by id, so frames, stacks, groups and addresses all share this code. */
#include <stdlib.h>

#include "base/base.h"

uint64_t sdp_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull; /* FNV-1a */
    return h;
}

uint64_t sdp_hash_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* Tables of 1 MiB and more are mapped in huge pages (region.c): their probes land on
 * random slots, and in 4 KiB pages a replay of a 3-million-entry trace (a 2 MiB table)
 * spent as long in TLB misses and first-touch faults as in the rest of its work. */
enum { TABLE_MAP_BYTES = 1024 * 1024 };

static sd_status table_alloc(uint32_t **slots, size_t cap, sdp_arena *budget, size_t *mapped)
{
    if (cap > SIZE_MAX / sizeof **slots) return SD_ENOMEM;
    if (budget && !sdp_arena_charge(budget, (uint64_t)cap * sizeof **slots)) return SD_ENOMEM;
    *mapped = 0;
    if (cap * sizeof **slots >= TABLE_MAP_BYTES)     /* fresh pages read as zero */
        *slots = sdp_map_aligned(cap * sizeof **slots, false, mapped);
    else
        *slots = calloc(cap, sizeof **slots);
    if (!*slots) {
        if (budget) sdp_arena_uncharge(budget, (uint64_t)cap * sizeof **slots);
        return SD_ENOMEM;
    }
    return SD_OK;
}

static void table_free(uint32_t *slots, size_t mapped)
{
    if (mapped) sdp_unmap(slots, mapped);
    else free(slots);
}

sd_status sdp_htab_init(sdp_htab *t, size_t cap_hint, sdp_arena *budget)
{
    size_t cap = 64;
    while (cap < cap_hint * 2 && cap < ((size_t)1 << 40)) cap *= 2;
    t->cap = cap;
    t->count = 0;
    t->budget = budget;
    return table_alloc(&t->slots, cap, budget, &t->mapped);
}

void sdp_htab_free(sdp_htab *t)
{
    if (t->budget && t->slots) sdp_arena_uncharge(t->budget, (uint64_t)t->cap * sizeof *t->slots);
    table_free(t->slots, t->mapped);
    t->slots = NULL;
    t->cap = t->count = t->mapped = 0;
}

sd_status sdp_htab_reserve_one(sdp_htab *t, sdp_id_hash_fn hash, const void *ctx)
{
    if ((t->count + 1) * 2 <= t->cap) return SD_OK;
    if (t->cap > SIZE_MAX / 2) return SD_ENOMEM;
    size_t ncap = t->cap * 2;
    uint32_t *slots;
    size_t mapped;
    sd_status st = table_alloc(&slots, ncap, t->budget, &mapped);
    if (st != SD_OK) return st;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i]) continue;
        size_t j = sdp_htab_slot(hash(ctx, t->slots[i] - 1), ncap);
        while (slots[j]) j = (j + 1) & (ncap - 1);
        slots[j] = t->slots[i];
    }
    if (t->budget) sdp_arena_uncharge(t->budget, (uint64_t)t->cap * sizeof *t->slots);
    table_free(t->slots, t->mapped);
    t->slots = slots;
    t->mapped = mapped;
    t->cap = ncap;
    return SD_OK;
}
