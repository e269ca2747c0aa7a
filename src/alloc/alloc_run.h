/* alloc_run.h - a snapshot's trace run through the allocator model, one device at a time
 * (alloc_run.c): the start state rebuilt from the snapshot, the fidelity pass, and one
 * free run per configuration. What a run reports is alloc.h's sd_replay_device. The
 * caller owns the memory the result points to (own) and names sites (label): the model
 * knows allocations, not the program's frames. Private to libsnapdiff. */
#ifndef SNAPDIFF_ALLOC_ALLOC_RUN_H
#define SNAPDIFF_ALLOC_ALLOC_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapdiff/alloc.h"

typedef struct sdp_alloc_run {
    const sd_snapshot *snap;
    const sd_alloc_conf *confs;      /* [0] the recorded settings, then one per what-if */
    const char *const *conf_text;    /* conf_text[c - 1] is what configuration c was given as */
    size_t n_confs;
    void *owner;
    /* Zeroed memory of `bytes` that lives as long as the owner; NULL when out of memory. */
    void *(*own)(void *owner, size_t bytes);
    /* The site of a stack as every view names it, owned by the owner: *out NULL for a
     * stack without frames. false when out of memory. */
    bool (*label)(void *owner, uint32_t stack, const char **out);
} sdp_alloc_run;

/* Run device d's trace: fills out (its arrays from run->own). o may be NULL.
 * @return SD_OK or SD_ENOMEM. */
sd_status sdp_alloc_run_device(const sdp_alloc_run *run, const sd_cuda_device *d,
                               const sd_replay_options *o, sd_replay_device *out);

#endif /* SNAPDIFF_ALLOC_ALLOC_RUN_H */
