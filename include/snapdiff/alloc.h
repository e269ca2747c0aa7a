/* alloc.h - the caching allocator model's public face: an allocator configuration
 * (PYTORCH_CUDA_ALLOC_CONF as torch parses it, or as a snapshot recorded it) and the
 * records a run of the model over a snapshot's trace reports (sd_replay_device and what
 * it holds). The model itself is private (src/alloc/); sd_replay, in replay.h, runs it over
 * a snapshot and is the way to read these records.
 */
#ifndef SNAPDIFF_ALLOC_H
#define SNAPDIFF_ALLOC_H

#include <stdbool.h>
#include "common.h"
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* roundup_power2_divisions has one value per power-of-two interval of MiB: [0] for sizes
 * below 2 MiB, [1] for 2-4 MiB, ... [15] for 32 GiB and above (torch's 16 intervals). */
enum { SD_ALLOC_CONF_INTERVALS = 16 };

/* One allocator configuration. */
typedef struct sd_alloc_conf {
    bool expandable_segments;
    uint64_t max_split_size;         /* bytes; UINT64_MAX = unlimited (torch's default) */
    double garbage_collection_threshold;   /* 0 = off; acts only with memory_fraction */
    uint32_t roundup_power2_divisions[SD_ALLOC_CONF_INTERVALS];   /* 0 = plain rounding */
    uint64_t max_non_split_rounding; /* bytes an oversize block may exceed a request by
                                      * (max_non_split_rounding_mb, torch 2.6+); 20 MiB */
    double memory_fraction;          /* torch.cuda.set_per_process_memory_fraction (or the
                                      * per_process_memory_fraction key); 0 = not set */
} sd_alloc_conf;

/* torch's defaults: no expandable segments, unlimited split, no GC, plain rounding. */
void sd_alloc_conf_default(sd_alloc_conf *c);
/* Parse a PYTORCH_CUDA_ALLOC_CONF string ("expandable_segments:True,max_split_size_mb:512",
 * "roundup_power2_divisions:[256:1,>:4]", "garbage_collection_threshold:0.6"). Keys it does
 * not name keep torch's defaults, as the variable does. Other keys torch knows (backend,
 * pinned_*, release_lock_on_cudamalloc, ...) are accepted and have no effect here.
 * @return SD_OK, or SD_EUSAGE with err saying which key or value is wrong. */
sd_status sd_alloc_conf_parse(const char *text, sd_alloc_conf *out, sd_error *err);
/* The same as torch VERSION parses it: torch is major * 100 + minor (209 for 2.9), 0 for
 * the newest rules. What differs (c10/cuda/CUDAAllocatorConfig.cpp before 2.9,
 * c10/core/AllocatorConfig.cpp's AcceleratorAllocatorConfig from 2.9):
 * max_split_size_mb > 20 before 2.9, >= 20 from it; a list's ">" item fills from the last
 * named interval (that one too) before 2.9, from the one after it from 2.9;
 * max_non_split_rounding_mb is unknown (refused) before 2.6, per_process_memory_fraction
 * before 2.9. Versions before 2.0 are refused (SD_EUSAGE). */
sd_status sd_alloc_conf_parse_torch(const char *text, unsigned torch, sd_alloc_conf *out,
                                    sd_error *err);
/* "2.9" -> 209; false when text is not MAJOR.MINOR with 2 <= MAJOR <= 9, MINOR < 100. */
bool sd_torch_version_parse(const char *text, unsigned *out);
/* The settings the snapshot recorded (allocator_settings, torch 2.3+); torch's defaults
 * for what it did not record. */
void sd_alloc_conf_recorded(const sd_snapshot *s, sd_alloc_conf *out);

#define SD_REPLAY_OPTIONS_VERSION 1
typedef struct sd_replay_options {
    unsigned version;   /* SD_REPLAY_OPTIONS_VERSION (growable: common.h) */
    const char *const *alloc_confs;  /* PYTORCH_CUDA_ALLOC_CONF strings, one config each */
    size_t n_alloc_confs;
    uint64_t capacity;               /* bytes the allocator may reserve; 0 = from an oom
                                      * entry (reserved then + device_free), else unknown */
    size_t timeline_points;          /* reserved-over-time points per config; 0 = 256 */
    uint64_t max_memory;             /* budget for the replay's tables; 0 = unlimited */
    double memory_fraction;          /* set_per_process_memory_fraction for every config
                                      * that does not set one; 0 = none */
    unsigned torch_version;          /* the --alloc-conf strings parsed as this torch does
                                      * (sd_alloc_conf_parse_torch); 0 = the newest rules */
} sd_replay_options;
#define SD_REPLAY_OPTIONS_INIT {SD_REPLAY_OPTIONS_VERSION, NULL, 0, 0, 0, 0, 0, 0}
sd_status sd_replay_options_init(sd_replay_options *opts, unsigned version);

typedef enum sd_replay_capacity_source {
    SD_REPLAY_CAPACITY_UNKNOWN,             /* no OOM prediction */
    SD_REPLAY_CAPACITY_GIVEN,               /* the option */
    SD_REPLAY_CAPACITY_OOM_ENTRY,           /* reserved at the first oom entry plus its device_free */
} sd_replay_capacity_source;

/* Traces that do not add up: counted, the replay goes on. */
typedef enum sd_replay_warning_code {
    SD_REPLAY_UNKNOWN_FREE,          /* a free of no live block */
    SD_REPLAY_OVERLAP,               /* an alloc inside a live block, or not in any segment */
    SD_REPLAY_UNKNOWN_SEGMENT,       /* a segment event that matches no segment of this
                                      * device (another device's, or a wrong size) */
    SD_REPLAY_RING_WRAPPED,          /* trace_alloc_overflowed: entries were lost */
    SD_REPLAY_BAD_START,             /* a block at the start outside or across segments */
    SD_REPLAY_WARNING_COUNT
} sd_replay_warning_code;

/* "unknown-free", "overlapping-alloc", "unknown-segment", "ring-buffer-wrapped",
 * "bad-start-block". */
const char *sd_replay_warning_name(sd_replay_warning_code c);

/* Why a device's fidelity is low, or what its trust rests on (docs/json-replay.md,
 * "trust_reasons"): bits of sd_replay_device.trust_reasons. The first four are why a device
 * is not trusted; the rest are said whatever the verdict. */
typedef enum sd_replay_trust_reason {
    SD_TRUST_NOT_RUN,            /* the replay did not run */
    SD_TRUST_FEW_PLACEMENTS,     /* under 99% of placements matched */
    SD_TRUST_SEGMENT_DECISIONS,  /* a segment decision differs */
    SD_TRUST_PEAK_DIFFERS,       /* the peak reserved is not reproduced */
    SD_TRUST_PLACEMENTS_ONLY,    /* a warm start with no segment event: 0 segment decisions
                                  * to check, the trust rests on placements alone */
    SD_TRUST_NOTHING_CHECKED,    /* a warm start with no alloc and no segment event: nothing
                                  * to check but the peak reserved */
    SD_TRUST_NON_UPSTREAM_KEYS,  /* keys upstream torch never writes
                                  * (sd_snapshot_foreign_key): a patched build */
    SD_TRUST_NPU_STREAMS,        /* no segment or entry on stream 0 and no time_us: the
                                  * stream ids of torch_npu's NPUCachingAllocator, another
                                  * allocator than the one modelled */
    SD_TRUST_REASON_COUNT
} sd_replay_trust_reason;

/* "not-run", "placements-below-99pct", "segment-decisions-differ", "peak-differs",
 * "placements-only", "nothing-checked", "non-upstream-keys", "npu-streams"; NULL past the
 * last. */
const char *sd_replay_trust_reason_name(sd_replay_trust_reason r);

typedef struct sd_replay_choice {
    bool new_segment;                /* a new segment (cudaMalloc / map) */
    uint64_t address;                /* the block's address (a new segment's: 0 in the model) */
    uint64_t segment_bytes;          /* new_segment: its size */
} sd_replay_choice;

/* A free block the model saw when it placed a request. */
typedef struct sd_replay_free_block {
    uint64_t address, bytes;
    uint64_t expandable_bytes;       /* bytes plus the unmapped space after it (expandable
                                      * segments' best fit), else bytes */
} sd_replay_free_block;

enum { SD_REPLAY_SEEN = 4 };

typedef struct sd_replay_mismatch {
    size_t entry;                    /* index in the device's trace */
    uint64_t request_bytes;          /* as recorded (before rounding) */
    uint64_t stream;
    sd_replay_choice model, recorded;
    /* The request's pool and stream at that moment: the smallest free blocks that could
     * hold it, in the allocator's best-fit order. */
    sd_replay_free_block seen[SD_REPLAY_SEEN];
    size_t n_seen;
} sd_replay_mismatch;

typedef struct sd_replay_point {
    size_t entry;                    /* the last entry of the bucket */
    uint64_t reserved_bytes;         /* the highest reserved in the bucket */
} sd_replay_point;

typedef struct sd_replay_oom {
    size_t entry;
    uint64_t request_bytes;          /* as the entry recorded it */
    uint32_t stack;                  /* the entry's frames (0 = none) */
    const char *label;               /* its site as every view names it (attrib.h,
                                      * sd_site_text); NULL without frames */
} sd_replay_oom;

/* A recorded `oom` entry under one config: does the request succeed there? */
typedef struct sd_replay_oom_outcome {
    size_t entry;
    uint64_t request_bytes;
    uint32_t stack;
    bool succeeds;
    uint64_t headroom_bytes;         /* succeeds: what the limit leaves after the request
                                      * (0 when the capacity is unknown) */
    const char *label;               /* the request's site, as sd_replay_oom's */
} sd_replay_oom_outcome;

typedef struct sd_replay_config {
    const char *alloc_conf;          /* "recorded" for the first, else the string given */
    sd_alloc_conf conf;
    uint64_t capacity_bytes;         /* 0 = unknown */
    uint64_t peak_reserved_bytes;
    size_t peak_entry;
    uint64_t end_reserved_bytes;
    uint64_t segment_allocs;         /* cudaMallocs, and maps of expandable segments */
    uint64_t alloc_retries;          /* cached segments released and the request retried */
    const sd_replay_oom *ooms; size_t n_ooms;   /* requests that ran out of memory */
    /* torch raises OutOfMemoryError at the first of them and the job stops there: the
     * peak reserved and the retries up to and with it are what torch would have reported
     * (memory_stats' reserved_bytes.all.peak, num_alloc_retries). The trace's later
     * requests are the recorded run's, not the job's; with no OOM, the run's figures. */
    uint64_t stop_peak_reserved_bytes;
    uint64_t stop_alloc_retries;
    const sd_replay_oom_outcome *oom_outcomes; size_t n_oom_outcomes;  /* recorded ooms */
    uint64_t stranded_bytes;         /* free bytes in segments that hold live blocks, end */
    uint64_t largest_free_bytes;     /* the largest free block at the end */
    bool gc_needs_fraction;          /* garbage_collection_threshold set, but no memory
                                      * fraction: torch runs no GC, nor does the replay */
    const sd_replay_point *timeline; size_t n_timeline;
} sd_replay_config;

typedef struct sd_replay_device {
    int64_t device;
    size_t entries, allocs;
    uint64_t start_reserved_bytes, start_allocated_bytes;
    /* Recorded: start reserved plus segment_alloc/map minus segment_free/unmap. */
    uint64_t recorded_peak_reserved_bytes, recorded_end_reserved_bytes;
    uint64_t recorded_segment_allocs;        /* segment_alloc and segment_map entries */
    size_t recorded_ooms;
    const sd_replay_point *recorded_timeline; size_t n_recorded_timeline;
    /* Fidelity */
    uint64_t placements_checked, placements_matched;
    uint64_t segment_decisions_checked, segment_decisions_matched;
    bool has_first_mismatch;
    sd_replay_mismatch first_mismatch;
    /* Trust: the recorded settings' own replay matches >= 99% of placements and every
     * segment decision, and its simulated peak reserved equals the recorded one (compared
     * only when the recorded settings ran as recorded: trust_peak_compared is false under
     * a --capacity or --memory-fraction the recording did not have). Only a trusted
     * device's what-ifs may be quoted as advice; untrusted_why says why not (NULL when
     * trusted). */
    bool trusted;
    const char *untrusted_why;
    bool trust_peak_compared;
    /* Bits 1u << sd_replay_trust_reason: why the fidelity is low or what the trust rests
     * on (a trusted warm start with no segment event is trusted on placements only). */
    uint32_t trust_reasons;
    /* The window creates no segment: it starts with its memory reserved, and a what-if
     * can show only how that memory is reused, not how much a run from empty would need. */
    bool warm_start;
    sd_replay_capacity_source capacity_source;
    uint64_t warnings[SD_REPLAY_WARNING_COUNT];
    const sd_replay_config *configs; size_t n_configs;   /* "recorded" first */
} sd_replay_device;

/* ---- Render (docs/architecture.md, "Tiers"): declared only where the includer defines
 * SNAPDIFF_RENDER_API; exported in the node LIBSNAPDIFF_RENDER_0.3. */
#ifdef SNAPDIFF_RENDER_API
/* The reason in a sentence (static). */
const char *sd_replay_trust_reason_text(sd_replay_trust_reason r);
#endif

#ifdef __cplusplus
}
#endif

#endif /* SNAPDIFF_ALLOC_H */
