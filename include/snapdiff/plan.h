/* plan.h - will it fit? The peak of a run not yet made, from recordings of the same
 * program at other values of one size (sequence length, batch, image side, ...).
 *
 * The recordings are aligned allocation by allocation (the same site, by file and function
 * name so that an edit that moved lines does not break it, and the same order at that
 * site), each allocation's size is fitted as a function of the size value (constant, a
 * power law through two recordings, an exact quadratic through three when the power law
 * does not hold), and the trace the program would record at the target value is built
 * from the recording nearest to it and walked with the peak's own rules (docs/peak.md):
 * the predicted peak allocated is the same figure `trace` and `top` print for a real
 * recording. The same trace is run through the allocator model (alloc.h) under the
 * recorded settings for the predicted peak reserved. docs/plan.md has the rules and what
 * a prediction cannot show.
 */
#ifndef SNAPDIFF_EXPERIMENTAL
#error "snapdiff/plan.h is in libsnapdiff's experimental tier, with no API or ABI promise (docs/architecture.md, \"Tiers\"): define SNAPDIFF_EXPERIMENTAL before including it"
#endif

#ifndef SNAPDIFF_PLAN_H
#define SNAPDIFF_PLAN_H

#include <stdbool.h>
#include "common.h"
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_PLAN_OPTIONS_VERSION 1
typedef struct sd_plan_options {
    unsigned version;       /* SD_PLAN_OPTIONS_VERSION (growable: common.h) */
    uint64_t capacity;      /* bytes the device has; 0 = unknown (fits is not judged) */
    size_t top_sites;       /* sites kept at the predicted peak; 0 = 10 */
} sd_plan_options;
#define SD_PLAN_OPTIONS_INIT {SD_PLAN_OPTIONS_VERSION, 0, 0}
sd_status sd_plan_options_init(sd_plan_options *opts, unsigned version);

/* How an allocation's size was predicted. */
typedef enum sd_plan_fit {
    SD_PLAN_CONSTANT,       /* the same size in every recording */
    SD_PLAN_POWER,          /* size = a * x^b through the two recordings nearest the target */
    SD_PLAN_QUADRATIC,      /* size = a + b x + c x^2 through the three nearest */
    SD_PLAN_UNALIGNED,      /* found in the base recording only: kept at its size */
    SD_PLAN_FIT_COUNT
} sd_plan_fit;

/* "constant", "power", "quadratic", "unaligned"; NULL past the count. */
const char *sd_plan_fit_name(sd_plan_fit f);

/* One site at the predicted peak: the predicted bytes of the blocks it holds then. */
typedef struct sd_plan_site {
    uint32_t stack;         /* in the base recording (sd_plan_base); 0: live before recording */
    const char *label;      /* its site as every view names it; NULL for stack 0 */
    uint64_t bytes, blocks;
    uint64_t base_bytes;    /* the same blocks' bytes in the base recording */
} sd_plan_site;

typedef struct sd_plan_device {
    int64_t device;
    size_t base;                      /* index of the recording the trace is built from */
    size_t allocs;                    /* allocations in the base recording's trace */
    size_t fit_counts[SD_PLAN_FIT_COUNT];   /* how many of them each fit predicted */
    uint64_t start_bytes;             /* live when recording began (kept as recorded) */
    uint64_t predicted_peak_allocated_bytes;
    size_t peak_entry;                /* the base trace's alloc entry that reaches it */
    uint32_t peak_stack;
    const char *peak_label;           /* the site of that alloc; NULL without frames */
    /* The allocator model run over the predicted trace, recorded settings: 0 when the
     * model could not run it (reserved_known false). */
    bool reserved_known;
    uint64_t predicted_peak_reserved_bytes;
    /* With a capacity: the allocator model run again under it. fits: no request runs out
     * of memory there (the cache emptied and retried as torch does) and the predicted peak
     * reserved (else allocated) is within it; headroom: capacity less that peak (negative:
     * short by); oom_entry: the base trace's entry of the first request that would fail. */
    bool fits_known, fits;
    int64_t headroom_bytes;
    bool oom_predicted;
    size_t oom_entry;
    const sd_plan_site *sites; size_t n_sites;   /* largest first, one per label */
    /* A what-if plan (sd_plan_create_whatif): the recording's own peak allocated
     * (docs/peak.md) and recorded peak reserved (docs/json-replay.md). The predicted
     * reserved is the recorded one plus what the change moves in the allocator model's
     * run (the same trace at recorded and at changed sizes), so no change is the
     * recording to the byte; reserved_known is false when memory live before recording
     * changes size (the model's start state is rebuilt from the recording's blocks). */
    uint64_t recorded_peak_allocated_bytes, recorded_peak_reserved_bytes;
    uint64_t allgather_bytes;         /* ZeRO-3: the all-gather buffer added */
    size_t scaled_allocs;             /* the trace's allocs whose size the what-if changed */
    /* After sd_plan_check: the real recording's figures at the target, and the error
     * (predicted - real) / real in percent. */
    bool check_known;
    uint64_t check_peak_allocated_bytes, check_peak_reserved_bytes;
    double check_allocated_error_pct, check_reserved_error_pct;
} sd_plan_device;

/* One recording, what if: each allocation of the trace and each block live before it is
 * scaled by its category (category.h, decided by the same rules every view uses). */
#define SD_PLAN_WHATIF_VERSION 1
typedef struct sd_plan_whatif {
    unsigned version;       /* SD_PLAN_WHATIF_VERSION (growable: common.h) */
    double batch_scale;     /* K: activations and temporaries times K; 0 or 1: unchanged */
    unsigned shard_ranks;   /* N ranks sharing the model state (ZeRO, FSDP); 0, 1: none */
    unsigned zero_stage;    /* with shard_ranks: 1 optimizer state / N, 2 also gradients,
                             * 3 also parameters (FSDP), plus one all-gather buffer the
                             * size of the largest parameter block */
} sd_plan_whatif;
#define SD_PLAN_WHATIF_INIT {SD_PLAN_WHATIF_VERSION, 0, 0, 0}

typedef struct sd_plan sd_plan;

/* Predict the peak at size value `at` from n >= 2 recordings `snaps[i]` made at size
 * values `sizes[i]` (distinct, positive). Every snapshot must outlive the result.
 * @return the plan, or NULL with err: SD_EUSAGE for sizes that are not distinct and
 * positive, fewer than two recordings, a recording without a trace, recordings of
 * different programs (under half of the base's allocations align) or a target the fit
 * cannot reach (a predicted size below zero); SD_ENOMEM. */
sd_plan *sd_plan_create(const sd_snapshot *const *snaps, const double *sizes, size_t n,
                        double at, const sd_plan_options *opts, sd_error *err);
void sd_plan_free(sd_plan *p);

/* What if the program that recorded `s` ran with `w` changed: the plan of each device
 * with a trace. With nothing changed, the plan is the recording: its peak allocated and
 * recorded peak reserved to the byte. @return the plan, or NULL with err (SD_EUSAGE: a
 * summary, no trace, a scale that is not positive, a ZeRO stage outside 1-3 or without
 * ranks; SD_ENOMEM). */
sd_plan *sd_plan_create_whatif(const sd_snapshot *s, const sd_plan_whatif *w,
                               const sd_plan_options *opts, sd_error *err);
/* The what-if the plan was made with; NULL for a plan from several recordings. */
const sd_plan_whatif *sd_plan_whatif_of(const sd_plan *p);

/* Set each device's check_* figures from `real`, a recording made at the target: its
 * peak (peak.h) and its recorded peak reserved (replay.h). A device `real` does not have
 * stays unchecked. `real` need not outlive the plan. @return SD_OK, SD_EUSAGE (a summary),
 * SD_ENOMEM. */
sd_status sd_plan_check(sd_plan *p, const sd_snapshot *real, sd_error *err);

/* The largest whole size value whose predicted peak (reserved where the allocator model
 * ran, else allocated) fits opts->capacity on every device, searched between 1 and 2^20
 * times the largest recorded value. @return SD_OK with *largest (0 when not even 1
 * fits), or the errors of sd_plan_create; SD_EUSAGE without a capacity. */
sd_status sd_plan_largest_fit(const sd_snapshot *const *snaps, const double *sizes, size_t n,
                              const sd_plan_options *opts, double *largest, sd_error *err);

double sd_plan_target(const sd_plan *p);
uint64_t sd_plan_capacity(const sd_plan *p);            /* opts->capacity; 0 = none */
size_t sd_plan_recording_count(const sd_plan *p);
const char *sd_plan_recording_source(const sd_plan *p, size_t i);   /* as loaded */
double sd_plan_recording_size(const sd_plan *p, size_t i);
const char *sd_plan_check_source(const sd_plan *p);     /* NULL before sd_plan_check */
size_t sd_plan_device_count(const sd_plan *p);
const sd_plan_device *sd_plan_device_at(const sd_plan *p, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* SNAPDIFF_PLAN_H */
