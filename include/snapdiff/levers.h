/* levers.h - what a PyTorch engineer would change to free memory at one moment (a peak, an
 * oom), each with the bytes it frees then, computed from the trace (issue 36).
 *
 * The moment's live blocks (peak.h's rule) by category (category.h) and frames give each
 * lever's bytes (docs/levers.md has every formula):
 *  - activation checkpointing of the repeated module holding the most saved activations:
 *    its activations less the largest call's (the one recomputed at a time);
 *  - a micro-batch or sequence halved: half the activations and the forward and backward
 *    temporaries;
 *  - a chunked or fused loss: the blocks made at the loss (cross_entropy, log_softmax,
 *    nll_loss frames, the loss line's casts, the loss's backward);
 *  - fused=True / foreach=False: the `_multi_tensor_*` temporaries of torch/optim (fused=True
 *    makes none; foreach=False keeps one tensor's at a time, the largest: of_bytes -
 *    less_bytes);
 *  - zero_grad(set_to_none=True): the gradients live at a forward moment;
 *  - sharding over N ranks (ZeRO-1 the optimizer state, ZeRO-2 and gradients, ZeRO-3 / FSDP
 *    and parameters): X * (1 - 1/N), quoted at N = 2 and 8;
 *  - the allocator settings frag's replay tried, with their replayed headroom (an oom only).
 * A lever whose bytes the trace cannot support is not given, nor one freeing under
 * SD_LEVERS_MIN_BYTES (1 MiB). The levers are ranked by bytes, largest first (allocator settings, which free no
 * live memory, last). With a shortfall (an oom's), each says whether it alone closes it.
 */
#ifndef SNAPDIFF_LEVERS_H
#define SNAPDIFF_LEVERS_H

#include <stdbool.h>
#include "common.h"
#include "attrib.h"
#include "category.h"
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A model lever freeing fewer bytes than this is not given. */
#define SD_LEVERS_MIN_BYTES (1024ULL * 1024)

typedef enum sd_lever_kind {
    SD_LEVER_KIND_CHECKPOINT,     /* "activation-checkpointing" */
    SD_LEVER_KIND_HALF_BATCH,     /* "halve-micro-batch" */
    SD_LEVER_KIND_CHUNKED_LOSS,   /* "chunked-loss" */
    SD_LEVER_KIND_OPTIM_FOREACH,  /* "optimizer-foreach-off" */
    SD_LEVER_KIND_ZERO_GRAD_NONE, /* "zero-grad-set-to-none" */
    SD_LEVER_KIND_SHARD_OPTIM,    /* "shard-optimizer-state" (ZeRO-1) */
    SD_LEVER_KIND_SHARD_GRADS,    /* "shard-gradients" (ZeRO-2: state and gradients) */
    SD_LEVER_KIND_SHARD_PARAMS,   /* "shard-parameters" (ZeRO-3 / FSDP: all three) */
    SD_LEVER_KIND_ALLOCATOR,      /* "allocator-setting" (alloc_conf names which) */
    SD_LEVER_KIND_COUNT
} sd_lever_kind;

/* The names above; NULL past the count. */
const char *sd_lever_kind_name(sd_lever_kind k);

/* A site a lever's bytes come from: a frame of a stack (its site index names the frame:
 * for a module, the line that calls it), with the lever's bytes there. */
#define SD_LEVER_SITES 3
typedef struct sd_lever_site {
    uint32_t stack;
    sd_site site;
    uint64_t bytes;
} sd_lever_site;

typedef struct sd_lever {
    sd_lever_kind kind;
    sd_category category;       /* the category most of its bytes are */
    bool has_bytes;             /* false: an allocator setting without a replayed figure */
    uint64_t bytes;             /* freed at the moment */
    /* The arithmetic: bytes = of_bytes - less_bytes (checkpoint: the module's activations
     * and its largest call's), of_bytes (foreach: fused=True's; foreach=False frees of_bytes
     * - less_bytes, less_bytes the largest temporary), of_bytes / 2
     * (half batch; of_bytes = activations + temporaries, less_bytes its activations),
     * of_bytes (loss, zero_grad), of_bytes * (1 - 1/2) (shard; bytes_8_ranks at N = 8). */
    uint64_t of_bytes, less_bytes;
    uint32_t calls;             /* checkpoint: calls of the module live at the moment */
    uint64_t bytes_8_ranks;     /* shard: freed over 8 ranks (bytes: over 2) */
    uint32_t ranks_needed;      /* shard: the fewest ranks that close the shortfall; 0 none */
    /* With a shortfall: does this lever alone close it. */
    bool has_enough, enough;
    /* SD_LEVER_KIND_ALLOCATOR: the setting, whether the request fits under it and the
     * headroom replayed at its peak (bytes: the reserved bytes it saves at the peak). */
    const char *alloc_conf;
    bool fits, has_headroom;
    uint64_t headroom_bytes;
    sd_lever_site sites[SD_LEVER_SITES];
    size_t n_sites;
} sd_lever;

typedef struct sd_levers sd_levers;

/* ---- Experimental (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_EXPERIMENTAL; exported in the node LIBSNAPDIFF_EXPERIMENTAL_0.3. New in
 * 0.3 (issue 36): the set of levers and their arithmetic may still change. */
#ifdef SNAPDIFF_EXPERIMENTAL
size_t sd_levers_count(const sd_levers *l);
/* Lever i, ranked (largest bytes first), or NULL. */
const sd_lever *sd_levers_at(const sd_levers *l, size_t i);
/* The shortfall the levers were judged against; false when there is none (a peak). */
bool sd_levers_shortfall(const sd_levers *l, uint64_t *bytes);
void sd_levers_free(sd_levers *l);
#endif

#ifdef __cplusplus
}
#endif

#endif
