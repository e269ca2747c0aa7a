/* alloc_model.h - the caching allocator model (alloc_model.c): blocks tiling segments, a
 * treap of free blocks per pool ordered (stream, size, address) as torch's
 * BlockComparatorSize orders them, and the rules of CUDACachingAllocator.cpp that placing
 * a request needs. The allocator layer's own (src/alloc/), below the analyses that run
 * it: sd_replay, frag's OOM what-ifs and plan. Private to libsnapdiff. */
#ifndef SNAPDIFF_ALLOC_ALLOC_MODEL_H
#define SNAPDIFF_ALLOC_ALLOC_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "snapdiff/alloc.h"

#define SDP_NIL UINT32_MAX
#define SDP_KMIN_BLOCK 512ULL
#define SDP_KSMALL_SIZE (1ULL << 20)
#define SDP_KSMALL_BUFFER (2ULL << 20)
#define SDP_KLARGE_BUFFER (20ULL << 20)
#define SDP_KMIN_LARGE_ALLOC (10ULL << 20)
#define SDP_KROUND_LARGE (2ULL << 20)

/* 2 MiB pages in the small pool's expandable segments, 20 MiB in the large pool's
 * (torch's ExpandableSegment segment_size: kSmallBuffer, kLargeBuffer). */
#define SDP_ES_ADDRESS_SPACE (1ULL << 40)

typedef struct sdp_alloc_block {
    uint64_t addr, size, stream, gc_base;
    uint64_t pend_key;        /* pending: the caller's key, handed back when a sync frees it */
    uint32_t prev, next;      /* neighbours in the segment */
    uint32_t l, r, prio;      /* treap of free blocks */
    uint32_t seg;
    uint16_t pool;            /* private pool * 2 + small */
    uint8_t allocated, live;
    uint8_t mapped;           /* 0: unmapped address space of an expandable segment (torch's
                               * Block::mapped); such a block is never in the free tree */
    uint8_t pending;          /* freed by the program, its stream's events not yet done */
} sdp_alloc_block;

typedef struct sdp_alloc_seg {
    uint64_t addr, size, stream;   /* size: mapped bytes */
    uint64_t va;                   /* address space: [addr, addr + va) holds every block
                                    * (= size but for an expandable segment) */
    uint32_t head, tail;           /* first and last block; SDP_NIL when none */
    uint32_t live_pos;             /* index in live[] */
    uint16_t pool;
    uint8_t expandable;
} sdp_alloc_seg;

typedef struct sdp_amap_slot {
    uint64_t key;
    uint32_t val;                    /* SDP_NIL: empty */
} sdp_amap_slot;

typedef struct sdp_amap {           /* address -> block index, open addressing; key and
                                     * value side by side: one cache line per probe */
    sdp_amap_slot *slots;
    size_t cap, count;
} sdp_amap;

typedef struct sdp_alloc {
    const sd_alloc_conf *conf;
    sdp_alloc_block *b; size_t nb, capb; uint32_t free_b;
    sdp_alloc_seg *s; size_t ns, caps;
    uint32_t *live; size_t nlive, caplive;   /* live segments */
    uint32_t *root; uint64_t *gc_count; size_t npools;
    sdp_amap by_addr;                /* block start -> block (kept when track_addr) */
    bool track_addr;
    uint64_t reserved, allocated, capacity;   /* capacity 0 = unknown */
    uint64_t next_fake;              /* addresses of the model's own new segments */
    uint64_t addr_hint;              /* where cudaMalloc put the next segment, if known */
    bool has_hint;
    uint64_t segment_allocs, retries;
    uint32_t *pend; size_t npend, cappend;     /* blocks marked pending (may be stale) */
    uint64_t *synced; size_t nsynced, capsynced;  /* keys of pending blocks a sync freed */
    uint32_t rng;
    bool nomem;
} sdp_alloc;

bool sdp_amap_init(sdp_amap *m, size_t hint);
void sdp_amap_free(sdp_amap *m);
uint32_t sdp_amap_get(const sdp_amap *m, uint64_t key);
bool sdp_amap_put(sdp_amap *m, uint64_t key, uint32_t val);
uint32_t sdp_amap_del(sdp_amap *m, uint64_t key);

bool sdp_alloc_init(sdp_alloc *m, const sd_alloc_conf *conf, size_t npools, bool track_addr);
void sdp_alloc_free(sdp_alloc *m);

uint64_t sdp_alloc_round_size(const sd_alloc_conf *c, uint64_t size);
uint64_t sdp_alloc_segment_size(uint64_t size);
bool sdp_alloc_should_split(const sdp_alloc *m, uint32_t blk, uint64_t size);

/* The bytes the allocator may reserve: the capacity, or the per-process memory fraction
 * of it; 0 = unknown. */
uint64_t sdp_alloc_limit(const sdp_alloc *m);

/* A segment of free memory. @return the segment index, SDP_NIL when out of memory. */
uint32_t sdp_alloc_add_segment(sdp_alloc *m, uint64_t addr, uint64_t size, uint64_t stream,
                              uint16_t pool, bool expandable);
/* Carve [addr, addr + size) out of the free block that holds it, allocated; exact: split
 * at addr + size whatever should_split says (a block as the snapshot shows it), else by
 * torch's rule. @return the block, or SDP_NIL when no free block holds it. */
uint32_t sdp_alloc_carve(sdp_alloc *m, uint32_t free_blk, uint64_t addr, uint64_t size,
                        bool exact);
/* torch's get_free_block; take: remove it from the free tree. */
uint32_t sdp_alloc_get_free_block(sdp_alloc *m, uint16_t pool, uint64_t stream, uint64_t size,
                                 bool take);
/* torch's alloc_found_block: split by should_split, mark allocated. */
void sdp_alloc_alloc_found(sdp_alloc *m, uint32_t blk, uint64_t size);
/* torch's free_block: coalesce with free neighbours, back into the free tree. */
void sdp_alloc_free_block(sdp_alloc *m, uint32_t blk);
/* A wholly free segment (one free block) back to the device. */
void sdp_alloc_release_segment(sdp_alloc *m, uint32_t seg);
/* release_cached_blocks: pending frees synchronized, then every wholly free segment of the
 * default pools released (private pools stay: their graphs are taken as alive), and in
 * expandable segments every whole free page of every free block unmapped. */
void sdp_alloc_release_cached(sdp_alloc *m);
/* The whole of malloc: best fit, GC, new segment, the two releases and the retry.
 * @return the allocated block, or SDP_NIL when it runs out of memory. */
uint32_t sdp_alloc_malloc(sdp_alloc *m, uint64_t req, uint64_t stream, uint16_t private_pool);
/* An expandable segment: [base, base + va) of address space, none of it mapped. */
uint32_t sdp_alloc_add_expandable(sdp_alloc *m, uint64_t base, uint64_t va, uint64_t stream,
                                 uint16_t pool);
/* The expandable segment whose address space holds addr, or SDP_NIL. */
uint32_t sdp_alloc_expandable_holding(const sdp_alloc *m, uint64_t addr);
/* Map [addr, addr + size) of expandable segment seg, which must be unmapped: it becomes a
 * free block, merged with free mapped neighbours (torch's map_block). @return the free
 * block that holds it, or SDP_NIL. */
uint32_t sdp_alloc_map_range(sdp_alloc *m, uint32_t seg, uint64_t addr, uint64_t size);
/* Unmap [addr, addr + size), which must lie in one free mapped block of an expandable
 * segment (torch's unmap_block once the pages are chosen). @return false when it does not. */
bool sdp_alloc_unmap_range(sdp_alloc *m, uint32_t seg, uint64_t addr, uint64_t size);
/* torch's try_allocate_expandable_block without doing it: where the request would go
 * (0 when a new expandable segment would be made) and how many bytes it would map. */
void sdp_alloc_expandable_plan(const sdp_alloc *m, uint16_t pool, uint64_t stream, uint64_t size,
                              uint64_t *addr, uint64_t *map_bytes);
/* Up to n free blocks of the pool and stream that could hold size bytes, best fit first.
 * @return how many. */
size_t sdp_alloc_free_near(const sdp_alloc *m, uint16_t pool, uint64_t stream, uint64_t size,
                          sd_replay_free_block *out, size_t n);
/* The block of segment seg that holds addr, or SDP_NIL. */
uint32_t sdp_alloc_block_at(const sdp_alloc *m, uint32_t seg, uint64_t addr);

/* The program freed allocated block x, but its stream's events have not completed (a
 * free_requested before its free_completed): it stays out of reach until completed, or
 * until a sync under memory pressure (synchronize_and_free_events) frees it; `key` is then
 * appended to m->synced. */
void sdp_alloc_request_free(sdp_alloc *m, uint32_t x, uint64_t key);
/* torch's synchronize_and_free_events: every pending block freed. */
void sdp_alloc_sync_pending(sdp_alloc *m);
/* torch's empty_cache(): release_cached_blocks. */
#define sdp_alloc_empty_cache sdp_alloc_release_cached

/* torch's release_available_cached_blocks (max_split_size set): @return true when it
 * released enough for the request. */
bool sdp_alloc_release_available(sdp_alloc *m, uint16_t pool, uint64_t stream, uint64_t size);

/* Free bytes in segments that hold allocated blocks, and the largest free block. */
void sdp_alloc_free_figures(const sdp_alloc *m, uint64_t *stranded, uint64_t *largest);

#endif
