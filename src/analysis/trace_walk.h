/* trace_walk.h - the one walk over `device_traces` that peak.c and trace.c share (not
 * installed): the window an entry range covers, and the address table with the alloc/free
 * state machine that says which block each entry makes live or releases.
 *
 * The rules (torch's CUDACachingAllocator records, per device, alloc, free_requested and
 * free_completed by block address): an alloc makes a block live at its address, and
 * releases the block already live there (its free was not recorded: the ring buffer
 * dropped it). free_requested releases the live block and leaves the address pending
 * until its free_completed; a free of an address with no live block frees a block from
 * before the trace (or the window), of the entry's size. */
#ifndef SNAPDIFF_ANALYSIS_TRACE_WALK_H
#define SNAPDIFF_ANALYSIS_TRACE_WALK_H

#include "base/base.h"
#include "snapdiff/snapshot.h"
#include "snapdiff/trace.h"

enum { SDP_ADDR_NONE, SDP_ADDR_LIVE, SDP_ADDR_PENDING };

/* One record per address ever seen; `state` says what is there now. */
typedef struct sdp_addr_rec {
    uint64_t addr, size;     /* size, entry, stack: the last block made live there */
    size_t entry;            /* the alloc entry that made it live */
    uint32_t stack;          /* as the entry gives it (callers clamp to their stacks) */
    uint8_t state;
} sdp_addr_rec;

typedef struct sdp_trace_walk {
    sdp_addr_rec *addrs;     /* in the order first seen */
    size_t n_addrs, addrs_cap;
    sdp_htab index;
    sdp_arena *budget;
    sdp_region region;       /* where addrs grows in place, when reserved (expect) */
} sdp_trace_walk;

/* What one entry did. */
typedef struct sdp_walk_step {
    bool released;           /* it released the live block `old` (on an alloc: a free that
                              * was not recorded) */
    bool early;              /* it freed a block from before the walk, of the entry's size */
    sdp_addr_rec old;        /* the block released, as it was */
    uint32_t id;             /* the entry's address record (its index in `addrs`, the order
                              * first seen); UINT32_MAX for an action the walk ignores */
} sdp_walk_step;

/* Entries [*lo, *hi) of the device that the window since..until covers. */
void sdp_trace_window(const sd_cuda_device *d, const sd_trace_bound *since,
                      const sd_trace_bound *until, size_t *lo, size_t *hi);

void sdp_trace_walk_init(sdp_trace_walk *w, sdp_arena *budget);
/* A walk of up to n entries is coming: reserve room for its address records in place
 * (huge pages, base/region.c), where the trace is long enough for it to matter. Before the
 * first reset; without it (or when the space cannot be had) they grow on the heap. */
void sdp_trace_walk_expect(sdp_trace_walk *w, size_t n);
/* An empty table, for a walk from the trace's start. */
sd_status sdp_trace_walk_reset(sdp_trace_walk *w);
void sdp_trace_walk_free(sdp_trace_walk *w);
/* Entry e (index i) through the state machine; other actions do nothing. */
sd_status sdp_trace_walk_entry(sdp_trace_walk *w, const sd_trace_entry *e, size_t i,
                               sdp_walk_step *out);
/* The block live at `addr` now, or NULL. */
const sdp_addr_rec *sdp_trace_walk_live(const sdp_trace_walk *w, uint64_t addr);

#endif
