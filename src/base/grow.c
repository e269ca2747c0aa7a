/* grow.c - the one way a buffer grows in libsnapdiff: doubling, overflow-checked, and
 * charged against the memory budget before the allocation is made, so a hostile count
 * turns into SD_ENOMEM, never into the OOM killer. */
#include <stdlib.h>

#include "base/base.h"

sd_status sdp_grow(void **buf, size_t *cap, size_t need, size_t elem, sdp_arena *budget)
{
    if (need <= *cap) return SD_OK;
    if (elem == 0) return SD_EUSAGE;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem) return SD_ENOMEM;
        ncap *= 2;
    }
    if (budget && !sdp_arena_charge(budget, (uint64_t)(ncap - *cap) * elem)) return SD_ENOMEM;
    void *nb = realloc(*buf, ncap * elem);
    if (!nb) {
        if (budget) sdp_arena_uncharge(budget, (uint64_t)(ncap - *cap) * elem);
        return SD_ENOMEM;
    }
    *buf = nb;
    *cap = ncap;
    return SD_OK;
}

sd_status sdp_grow_in_region(void **buf, size_t *cap, size_t need, size_t elem,
                             sdp_arena *budget, sdp_region *r)
{
    if (!r->base) return sdp_grow(buf, cap, need, elem, budget);
    if (need <= *cap) return SD_OK;
    if (elem == 0) return SD_EUSAGE;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem) return SD_ENOMEM;
        ncap *= 2;
    }
    size_t room = r->size / elem;
    if (ncap > room) ncap = room < need ? need : room;
    if (budget && !sdp_arena_charge(budget, (uint64_t)(ncap - *cap) * elem)) return SD_ENOMEM;
    if (ncap <= room) {           /* grows in place: the pages come as they are written */
        *buf = r->base;
        *cap = ncap;
        return SD_OK;
    }
    /* Past what was reserved (a bound that was wrong): move to the heap for good. */
    void *nb = malloc(ncap * elem);
    if (!nb) {
        if (budget) sdp_arena_uncharge(budget, (uint64_t)(ncap - *cap) * elem);
        return SD_ENOMEM;
    }
    if (*cap) memcpy(nb, r->base, *cap * elem);
    sdp_region_release(r);
    *buf = nb;
    *cap = ncap;
    return SD_OK;
}
