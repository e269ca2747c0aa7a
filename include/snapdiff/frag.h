/* frag.h - fragmentation of the caching allocator's reserved memory.
 *
 * Is the gap between reserved and allocated memory fragmentation (free bytes in pieces too
 * small for the requests), growth (no free room at all), or neither; how bad; what would
 * help. Figures per device, per pool, per stream and in total; a histogram of free-block
 * sizes; what empty_cache() would release; the out-of-memory events of the trace with the
 * largest free block at that moment; a verdict and advice that fit the recorded allocator
 * settings. Definitions: docs/json-frag.md.
 */
#ifndef SNAPDIFF_FRAG_H
#define SNAPDIFF_FRAG_H

#include <stdbool.h>
#include "attrib.h"
#include "category.h"
#include "levers.h"
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The brief: what `snapdiff OLD NEW` prints as a one-line delta. ------------------ */

typedef struct sd_frag_brief {
    uint64_t reserved;       /* sum of segment total_size, all devices */
    uint64_t allocated;      /* sum of ALLOCATED block sizes */
    uint64_t gap;            /* reserved - allocated */
    uint64_t total_free;     /* sum of INACTIVE block sizes */
    uint64_t largest_free;   /* largest INACTIVE block */
    double index;            /* 1 - largest_free / total_free; 0 when nothing is free */
} sd_frag_brief;

/* Totals over all devices of `s`. Never fails. */
void sd_frag_brief_of(const sd_snapshot *s, sd_frag_brief *out);

/* ---- The full analysis. ---------------------------------------------------------- */

#define SD_FRAG_BUCKETS 22          /* < 1 KiB, [1 KiB, 2 KiB), ..., [512 MiB, 1 GiB), >= 1 GiB */
#define SD_FRAG_DEFAULT_GAP_PCT 30.0
#define SD_FRAG_DEFAULT_INDEX 0.5
#define SD_FRAG_OOM_REPLAY_LIMIT 64 /* replay figures for the last 64 oom entries per device */
/* What was live at an oom costs one replay of the trace up to it: at most this many trace
 * entries in all per device (the last 64 ooms of a trace under ~780,000 entries, fewer
 * of a longer one, at least the last). */
#define SD_FRAG_OOM_LIVE_STEPS 50000000ULL
/* Fragmented needs at least this much stranded free memory (free bytes inside segments
 * that also hold live blocks), and at least SD_FRAG_MIN_STRANDED_PCT of reserved: less
 * than that is not worth an engineer's night, and free memory in wholly free segments is
 * a cache the allocator releases itself before an oom. */
#define SD_FRAG_MIN_STRANDED (256ULL * 1024 * 1024)
#define SD_FRAG_MIN_STRANDED_PCT 10
/* With a trace, fragmentation is judged by what it cost at the peak (issue 26): the
 * recorded peak reserved minus the peak of live bytes. It is material at this many bytes
 * and this share of the peak reserved, both. */
#define SD_FRAG_MIN_COST (256ULL * 1024 * 1024)
#define SD_FRAG_MIN_COST_PCT 10

#define SD_FRAG_OPTIONS_VERSION 1
typedef struct sd_frag_options {
    unsigned version;   /* SD_FRAG_OPTIONS_VERSION (growable: common.h) */
    double gap_threshold_pct;   /* fragmented needs gap >= this % of reserved */
    double index_threshold;     /* ... and stranded_index >= this */
    uint64_t max_memory;        /* budget for the analysis' own memory; 0 = unlimited */
    /* Do not replay the trace (replay.h) for the allocator-settings advice and the oom
     * outcomes: the advice is then the generic one, as for a file without a trace. */
    bool skip_replay;
} sd_frag_options;
#define SD_FRAG_OPTIONS_INIT \
    {SD_FRAG_OPTIONS_VERSION, SD_FRAG_DEFAULT_GAP_PCT, SD_FRAG_DEFAULT_INDEX, 0, false}
sd_status sd_frag_options_init(sd_frag_options *opts, unsigned version);

/* One histogram bucket: free (inactive) blocks with min_bytes <= size < max_bytes. */
typedef struct sd_frag_bucket {
    uint64_t min_bytes;
    uint64_t max_bytes;         /* exclusive; 0 = no upper bound (the >= 1 GiB bucket) */
    uint64_t blocks, bytes;
} sd_frag_bucket;

/* The figures of one group of segments (a device, a pool, a stream, or all). */
typedef struct sd_frag_figures {
    uint64_t segments, blocks, free_blocks;
    uint64_t reserved_bytes;          /* sum of segment total_size */
    uint64_t allocated_bytes;         /* ALLOCATED block sizes */
    uint64_t gap_bytes;               /* reserved - allocated (0 if negative) */
    double gap_pct;                   /* 100 * gap / reserved; 0 when nothing reserved */
    uint64_t internal_waste_bytes;    /* sum max(0, size - requested) over ALLOCATED */
    uint64_t external_free_bytes;     /* INACTIVE block sizes */
    uint64_t pending_free_bytes;      /* PENDING_FREE block sizes */
    uint64_t largest_free_bytes;      /* largest INACTIVE block */
    double fragmentation_index;       /* 1 - largest_free / external_free; 0 if none free */
    uint64_t free_below_1mib_bytes;   /* INACTIVE bytes in blocks < 1 MiB */
    uint64_t median_allocated_bytes;  /* sorted ALLOCATED sizes [(n-1)/2]; 0 if none */
    uint64_t free_below_median_bytes; /* INACTIVE bytes in blocks < that median */
    uint64_t empty_cache_releasable_bytes; /* what torch.cuda.empty_cache() would release */
    uint64_t stranded_free_bytes;     /* INACTIVE bytes empty_cache() would not release */
    uint64_t largest_stranded_bytes;  /* largest stranded part of one INACTIVE block */
    double stranded_index;            /* 1 - largest_stranded / stranded; 0 if none */
    sd_frag_bucket histogram[SD_FRAG_BUCKETS];
    /* The free tail of live expandable segments (issue 36): the whole free pages of
     * default-pool expandable segments that hold a live block. Part of
     * empty_cache_releasable_bytes (release_blocks unmaps them), never of a wholly free
     * segment: cached memory, but in a segment that is in use. */
    uint64_t expandable_tail_bytes;
} sd_frag_figures;

typedef struct sd_frag_pool {
    char name[48];              /* "large", "small", "pool (a,b)" */
    int64_t pool_id[2];         /* (0,0) for the default large and small pools */
    sd_frag_figures fig;
} sd_frag_pool;

typedef struct sd_frag_stream {
    uint64_t stream;
    sd_frag_figures fig;
} sd_frag_stream;

typedef enum sd_frag_verdict {
    SD_FRAG_COMPACT,            /* neither of the below */
    SD_FRAG_FULL,               /* live tensors fill reserved, no free room: any growth
                                 * is live memory, not fragmentation (one snapshot cannot
                                 * show a leak) */
    SD_FRAG_FRAGMENTED,         /* free memory exists, in pieces */
} sd_frag_verdict;

/* From the oom's figures (docs/oom.md): "all free" is the device's free memory plus the
 * allocator's (allocator_free_bytes), "a piece" the largest free block of the request's
 * pool and stream. */
typedef enum sd_oom_cause {
    SD_OOM_FRAGMENTATION,       /* all free >= request, no piece large enough */
    SD_OOM_CAPACITY,            /* all free < request: not enough memory at all */
    SD_OOM_UNCLEAR,             /* a free block >= request existed in the state we know */
    SD_OOM_BOTH,                /* all free < request, and the allocator's free memory
                                 * would have covered at least half of what the device
                                 * lacked (2 * allocator free >= request - device free) */
} sd_oom_cause;

/* A site live at an oom, by the diff's site rule: its bytes and blocks in the state the
 * oom figures come from. The largest SD_FRAG_OOM_SITES, largest first. */
#define SD_FRAG_OOM_SITES 5
typedef struct sd_frag_live_site {
    uint32_t stack;             /* a stack of the site (sd_snapshot_stack), for its label */
    sd_site site;               /* sd_attrib_site_of_stack of that stack */
    uint64_t bytes, blocks;     /* live blocks (block sizes) attributed to the site */
} sd_frag_live_site;

/* Why an oom event was not replayed: the replay is limited, or stopped at a trace entry
 * that contradicts the later state (every kind after SD_REPLAY_PAST_LIMIT). */
typedef enum sd_replay_stop {
    SD_REPLAY_DONE,             /* replayed */
    SD_REPLAY_PAST_LIMIT,       /* older than the last SD_FRAG_OOM_REPLAY_LIMIT ooms */
    SD_REPLAY_MAP_TOO_BIG,      /* segment_map: the segment it starts is smaller */
    SD_REPLAY_MAP_NO_SEGMENT,   /* segment_map: no segment holds the mapping */
    SD_REPLAY_BLOCK_LIVE_LATER, /* free_completed: the block is live later */
    SD_REPLAY_NO_SEGMENT_LATER, /* segment_alloc: no such segment later */
    SD_REPLAY_SEGMENT_LATER,    /* segment_free: the segment exists later */
    SD_REPLAY_NO_BLOCK_LATER,   /* alloc, free_requested: no live block there later */
} sd_replay_stop;

/* The standard model-side lever for memory of one category live at an oom (issue 26). */
typedef enum sd_frag_lever_code {
    SD_LEVER_CHECKPOINTING,     /* activations: activation checkpointing, a smaller
                                 * micro-batch or sequence */
    SD_LEVER_FUSED_LOSS,        /* logits and loss: chunked or fused cross-entropy */
    SD_LEVER_FOREACH_OFF,       /* optimizer temporaries: foreach=False */
    SD_LEVER_SHARD_OPTIMIZER,   /* optimizer state: sharding (ZeRO/FSDP), a lower-precision
                                 * optimizer */
    SD_LEVER_SHARD_WEIGHTS,     /* gradients, parameters: sharding, lower precision */
    SD_LEVER_SMALLER_BATCH,     /* other temporaries: a smaller micro-batch or sequence */
} sd_frag_lever_code;

/* "activation-checkpointing", "fused-cross-entropy", "foreach-false",
 * "shard-optimizer-state", "shard-or-lower-precision", "smaller-micro-batch". */
const char *sd_frag_lever_name(sd_frag_lever_code c);

/* A site live at an oom with its category and the lever that could free its bytes. */
typedef struct sd_frag_lever {
    sd_category category;
    uint32_t stack;             /* the site's stack (sd_snapshot_stack), for its label */
    sd_site site;
    uint64_t bytes;
    sd_frag_lever_code lever;
} sd_frag_lever;

/* An allocator setting replayed at an oom (replay.h, only from a trusted replay). */
typedef struct sd_frag_whatif {
    const char *alloc_conf;     /* "expandable_segments:True", "max_split_size_mb:512" */
    bool fits;                  /* the oom's request succeeds under it */
    bool has_headroom;          /* the device's capacity is known */
    uint64_t headroom_bytes;    /* capacity minus the peak reserved replayed under it */
    bool enough;                /* headroom >= 5% of the capacity: else "not enough for
                                 * the next step" */
    /* Issue 36: the reserved bytes the setting saves at the replayed peak (the recorded
     * settings' peak reserved minus its own; 0 when it saves none). */
    bool has_saved;
    uint64_t saved_bytes;
} sd_frag_whatif;

#define SD_FRAG_LEVERS 5            /* at most this many levers per oom */
#define SD_FRAG_HEADROOM_PCT 5      /* a setting buying less is "not enough for the next step" */

#define SD_FRAG_PROCESS_LIMIT_SLACK (1ull << 30)

typedef struct sd_frag_oom {
    size_t trace_index;         /* in the device's trace */
    int64_t time_us; bool has_time;
    uint64_t request_bytes;     /* the request that failed */
    uint64_t device_free_bytes; /* what cudaMemGetInfo reported */
    uint64_t stream;
    bool small_pool;            /* request <= 1 MiB */
    uint64_t largest_free_bytes;/* largest free block of that stream and pool */
    uint64_t free_bytes;        /* all free bytes of that stream and pool */
    bool replayed;              /* state rebuilt by replaying the trace back to the oom;
                                 * false: taken from the snapshot, for the reason in stop */
    sd_replay_stop stop;        /* SD_REPLAY_DONE when replayed */
    size_t stop_index;          /* a contradiction: the trace entry that stopped the replay, */
    uint8_t stop_action;        /* its action (sd_trace_action) */
    uint64_t stop_addr;         /* and its address */
    sd_oom_cause cause;
    uint32_t stack;             /* the oom entry's frames (sd_snapshot_stack of the frag's
                                 * snapshot; 0 when it recorded none) */
    sd_site site;               /* the line that asked, by the diff's site rule
                                 * (sd_attrib_site, default options): site.site is an
                                 * index into that stack, -1 when there is none */
    /* The allocator's free memory, all pools and streams: wholly free cached segments and
     * free space stranded in segments with live blocks (allocator_free = their sum). */
    uint64_t allocator_free_bytes, cached_free_bytes, stranded_free_bytes;
    /* The trace reaches back to the run's start (the replay undid every entry, and before
     * the first nothing was live): an oom before any steady state, nothing to compare. */
    bool at_run_start;
    /* The device had room: device_free_bytes exceeds the segment the request needed by
     * more than SD_FRAG_PROCESS_LIMIT_SLACK, so cudaMalloc was not what refused it. The
     * limit was the process's own (torch.cuda.set_per_process_memory_fraction, which the
     * snapshot does not record): D does not count in the cause or the arithmetic (the
     * headroom the limit left is unknown, less than that segment), live_share is not
     * computed, and the replay's outcomes (which take the capacity from device_free) are
     * not quoted (replay_known false): snapdiff replay needs the limit given. */
    bool process_limit;
    /* What was live at the oom, by site: the one peak rule (peak.h, sd_peak_live_at: the
     * blocks live before recording began count) after the oom's trace entry. live_bytes
     * counts every live block; the sites are those with frames, the largest first: the
     * largest SD_FRAG_OOM_SITES in sites, every one in all_sites. live_known is false for
     * an oom older than the last SD_FRAG_OOM_REPLAY_LIMIT (fewer on a long trace:
     * SD_FRAG_OOM_LIVE_STEPS) (then every live figure is 0). */
    uint64_t live_bytes, live_blocks;
    sd_frag_live_site sites[SD_FRAG_OOM_SITES];
    size_t n_sites;
    bool live_known;
    const sd_frag_live_site *all_sites;
    size_t n_all_sites;
    /* The replay's outcome for this entry (replay.h, capacity from the oom entry): would the
     * request have succeeded under expandable_segments:True, under max_split_size_mb:512.
     * replay_known is false when the replay did not run (no fragmentation to weigh, or
     * skip_replay) or has no outcome for the entry. */
    bool replay_known;
    bool succeeds_expandable, succeeds_max_split;
    /* The arithmetic (issue 26): R = request_bytes, D = device_free_bytes, W =
     * cached_free_bytes (wholly free), S = stranded_free_bytes, L = live_bytes.
     * shortfall_bytes = R - (D + W) when positive: what live memory would have had to be
     * freed for the request to fit without the stranded space; live_share = L / (L + D +
     * W + S), the live bytes' share of the memory the program could reach (0 when
     * !live_known). */
    uint64_t shortfall_bytes;
    double live_share;
    /* What was live by category (live_known only), and the levers: the largest sites of
     * the categories a model change can cut, each with its lever (at most SD_FRAG_LEVERS,
     * largest first). */
    const sd_category_total *categories; size_t n_categories;
    const sd_frag_lever *levers; size_t n_levers;
    /* Each replayed setting (whatif_trusted: the device's replay is trusted; else none, and
     * whatif_untrusted_why says why when the replay ran). */
    bool whatif_trusted;
    const char *whatif_untrusted_why;
    const sd_frag_whatif *whatif; size_t n_whatif;
    /* Issue 36: the levers at the oom in the model's terms (levers.h), each with the bytes
     * it frees then and whether it alone closes the shortfall (shortfall_bytes, or the
     * request when the free memory covered it), allocator settings last; NULL when what
     * was live is not computed. Owned by the frag analysis. */
    const struct sd_levers *model_levers;
} sd_frag_oom;

/* ---- Why the verdict, and what would help: data, worded by the renderers. ---------- */

/* The deciding test of a verdict (docs/json-frag.md, "The verdict"). */
typedef enum sd_frag_reason {
    SD_FRAG_WHY_NOTHING_RESERVED, /* compact: no memory reserved at all */
    SD_FRAG_WHY_OOM,              /* fragmented: an oom failed with enough free memory */
    SD_FRAG_WHY_STRANDED,         /* fragmented: gap, stranded memory and its index over */
    SD_FRAG_WHY_TINY_LARGEST,     /* full: gap under, largest free block < room_bytes */
    SD_FRAG_WHY_LITTLE_FREE,      /* full: gap under, free under free_threshold_pct */
    SD_FRAG_WHY_ROOM_TO_SPARE,    /* compact: gap under its threshold */
    SD_FRAG_WHY_LARGE_PIECES,     /* compact: gap and stranded over, stranded index under */
    SD_FRAG_WHY_NOT_STRANDED,     /* compact: gap over, stranded under the floor or share
                                   * (the rest is cached in wholly free segments) */
    SD_FRAG_WHY_COST,             /* fragmented: with a trace, the cost at the peak is
                                   * material (cost_over) */
    SD_FRAG_WHY_CACHED_FOR_REUSE, /* compact: the end state looks fragmented, or reserved
                                   * minus live at the peak is material, but the cost that
                                   * decides (the trusted replay's when there is one) is
                                   * not: the free memory is cache the next step reuses */
} sd_frag_reason;

/* The reason with every number it quotes, so that a renderer can word and mark them up. */
typedef struct sd_frag_why {
    sd_frag_reason reason;
    int64_t device;               /* the total over several devices: the device that decided
                                   * it (the most severe); -1 otherwise */
    const sd_frag_oom *oom;       /* SD_FRAG_WHY_OOM: the latest fragmentation oom */
    uint64_t reserved_bytes, gap_bytes;
    double gap_pct, gap_threshold_pct;
    bool gap_over;                /* gap_pct >= gap_threshold_pct */
    double index, index_threshold;  /* index: the stranded_index */
    bool index_over;              /* index >= index_threshold */
    uint64_t stranded_bytes, largest_stranded_bytes;
    double stranded_pct, stranded_threshold_pct;   /* of reserved */
    uint64_t stranded_floor_bytes;/* SD_FRAG_MIN_STRANDED */
    bool stranded_over;           /* stranded >= the floor and >= the share */
    uint64_t cached_bytes;        /* what empty_cache() would release: free bytes in
                                   * wholly free segments and expandable_tail_bytes */
    uint64_t free_bytes;
    double free_pct, free_threshold_pct;           /* of reserved */
    uint64_t largest_free_bytes;
    uint64_t room_bytes;          /* a largest free block under this is "no free room" */
    /* With a trace (has_cost): the cost at the peak (sd_frag_device's figures) and the
     * test it met or not: cost_over = cost >= cost_floor_bytes and cost_pct >=
     * cost_threshold_pct. */
    bool has_cost;
    uint64_t peak_reserved_bytes, peak_live_bytes, cost_bytes;
    bool peak_has_phase;          /* the peak's phase and step (sd_frag_device's) */
    sd_step_phase peak_phase;
    uint32_t peak_step;
    double cost_pct, cost_threshold_pct;
    uint64_t cost_floor_bytes;
    bool cost_over;
    /* The trusted replay's cost (sd_frag_device.cost_replay_bytes), which then decides
     * cost_over in place of cost_bytes. */
    bool has_cost_replay;
    uint64_t cost_replay_bytes;
    /* No trace with an alloc (!has_cost) and no oom decided: the verdict rests on the end
     * state alone, the weaker evidence (issue 26); the words say how to get a better one. */
    bool end_state_only;
    /* Of cached_bytes, the free tail of live expandable segments (sd_frag_figures): the
     * words never call it wholly free segments. */
    uint64_t expandable_tail_bytes;
} sd_frag_why;

typedef enum sd_frag_advice_code {
    SD_ADVICE_EXPANDABLE_SEGMENTS, /* set expandable_segments:True (settings_recorded) */
    SD_ADVICE_MAX_SPLIT_SIZE,      /* max_split_size_mb:512: bytes of the of_bytes stranded
                                    * sit in large segments carved up by small tensors */
    SD_ADVICE_FIXED_SHAPES,        /* bucket or pad inputs: free_blocks over n_buckets
                                    * histogram buckets, first_bucket to last_bucket */
    SD_ADVICE_ROUND_SIZES,         /* expandable segments already on: round sizes up */
    SD_ADVICE_GROWTH,              /* full: compare two snapshots to see what grows */
    SD_ADVICE_NO_EMPTY_CACHE,      /* empty_cache() would return only bytes of of_bytes
                                    * (given only when bytes is under half of of_bytes) */
    SD_ADVICE_OOM_AT_START,        /* an oom for lack of capacity at the run's start:
                                    * bytes requested, of_bytes free in all; shrink the
                                    * largest sites live at the oom (in place of GROWTH) */
    SD_ADVICE_REPLAY_NO_SETTING,   /* the replay shows no setting avoids the oom entries:
                                    * ooms recorded, ooms_avoided the most any config
                                    * avoided (0) */
} sd_frag_advice_code;

typedef struct sd_frag_advice {
    sd_frag_advice_code code;
    bool settings_recorded;       /* the snapshot recorded the allocator settings */
    uint64_t bytes, of_bytes;
    uint64_t free_blocks;
    size_t n_buckets, first_bucket, last_bucket;
    /* The replay's measured outcome (replay.h) quoted by the allocator-settings advice when
     * the device has a trace: peak reserved replayed under the recorded settings (the
     * replay's "recorded" config, as its verdict lines quote it) and under the setting the
     * advice names, and of the ooms recorded oom entries how many would have succeeded. */
    bool replayed;
    uint64_t recorded_peak_reserved_bytes, peak_reserved_bytes;
    size_t ooms, ooms_avoided;
    /* The replay began warm (sd_replay_device.warm_start): its segments were cut before the
     * trace, so it measures how a setting reuses them, not the layout a run started with
     * the setting would have. */
    bool replay_warm_start;
} sd_frag_advice;

/* ---- The segment map: the segments of a device with the most free memory stranded,
 * in pages. ---------------------------------------------------------------------- */

#define SD_FRAG_MAP_SEGMENTS 16     /* a map shows 16 segments, most stranded first */
#define SD_FRAG_MAP_COLUMNS 64      /* and at most 64 pages per segment */
#define SD_FRAG_POOL_NAME 48

/* Bytes of one page of a segment by block state; span < page size for the last page. */
typedef struct sd_frag_page {
    uint64_t allocated, pending, free, span;
} sd_frag_page;

/* How full a page is: the map's one character. */
typedef enum sd_frag_page_fill {
    SD_PAGE_NONE,                 /* no bytes of the segment */
    SD_PAGE_FREE,                 /* nothing live */
    SD_PAGE_PENDING,              /* nothing allocated, some pending-free */
    SD_PAGE_LOW,                  /* allocated under 25% */
    SD_PAGE_HALF,                 /* allocated 25% to 75% */
    SD_PAGE_FULL,                 /* allocated 75% or more */
} sd_frag_page_fill;

/* Consecutive blocks of a segment in one state, as the picture draws them. */
typedef struct sd_frag_run {
    uint64_t bytes;
    uint32_t blocks;
    uint8_t state;                /* sd_block_state */
} sd_frag_run;

typedef struct sd_frag_map_row {
    uint32_t segment;             /* index into the device's segments */
    uint64_t address, total_size;
    char pool[SD_FRAG_POOL_NAME]; /* sd_frag_pool_name */
    bool expandable;
    uint64_t free_bytes;          /* INACTIVE block sizes of the segment */
    const sd_frag_page *pages; size_t n_pages;
    const sd_frag_run *runs; size_t n_runs;   /* the blocks in address order */
} sd_frag_map_row;

typedef struct sd_frag_map {
    size_t n_segments;            /* segments of the device; the map shows 16 of them */
    uint64_t page_bytes;          /* 2 MiB times a power of two: the largest row fits */
    const sd_frag_map_row *rows; size_t n_rows;   /* sd_frag_stranded_segments order */
} sd_frag_map;

/* One device, or the total (device == -1; no streams, no oom events, no map, pools
 * summed over devices by name). Strings and arrays belong to the sd_frag. */
typedef struct sd_frag_device {
    int64_t device;
    sd_frag_figures fig;
    uint64_t large_split_free_bytes;  /* free bytes in default large-pool segments >= 512
                                       * MiB that also hold live blocks */
    const sd_frag_pool *pools; size_t n_pools;
    const sd_frag_stream *streams; size_t n_streams;
    const sd_frag_oom *ooms; size_t n_ooms;
    sd_frag_verdict verdict;
    sd_frag_why why;                  /* what decided the verdict */
    const sd_frag_advice *advice; size_t n_advice;
    sd_frag_map map;
    /* What fragmentation cost at the peak (issue 26; docs/json-frag.md), for a device whose
     * trace has an alloc (has_cost; not for a summary): the recorded peak reserved (the
     * snapshot's segments less the trace's segment events, then the events in order)
     * minus the peak of live bytes (peak.h). has_cost_replay: the replay of the trace
     * ran and is trusted (replay.h), and cost_replay_bytes = the recorded peak reserved
     * minus the peak reserved replayed under expandable_segments:True (what a compacting
     * allocator would have saved; 0 when it would have saved nothing). */
    bool has_cost;
    uint64_t peak_reserved_bytes, peak_live_bytes, cost_bytes;
    bool has_cost_replay;
    uint64_t cost_replay_bytes;
    /* The phase and step of the peak of live bytes (peak.h's, has_cost only;
     * peak_has_phase false when the phases are unknown; step 0: no steps). */
    bool peak_has_phase;
    sd_step_phase peak_phase;
    uint32_t peak_step;
    /* Do the sizes of the requests vary across the trace's complete steps (category.h)?
     * -1 unknown (no trace, or fewer than two complete steps), 0 no, 1 yes. The bucketing
     * advice needs 1 when the device has a trace. */
    int request_sizes_vary;
} sd_frag_device;

typedef struct sd_frag sd_frag;

/* Analyse `s` (opts NULL = defaults). The result borrows nothing from `s` except through
 * sd_frag_snapshot(); free it before the snapshot anyway.
 * @return the result, or NULL with err filled (SD_ENOMEM, SD_EUSAGE for bad thresholds). */
sd_frag *sd_frag_create(const sd_snapshot *s, const sd_frag_options *opts, sd_error *err);
void sd_frag_free(sd_frag *f);

const sd_snapshot *sd_frag_snapshot(const sd_frag *f);
/* The site rule of the oom events' sites (the diff's, default options). */
const sd_attrib *sd_frag_attrib(const sd_frag *f);
const sd_frag_options *sd_frag_thresholds(const sd_frag *f);
size_t sd_frag_device_count(const sd_frag *f);          /* same order as the snapshot */
const sd_frag_device *sd_frag_device_at(const sd_frag *f, size_t i);
const sd_frag_device *sd_frag_total(const sd_frag *f);

/* The helpers the segment map and the histogram are built with (largest and stranded
 * segments, pages, pool names, buckets) are experimental: snapdiff/experimental.h. */

const char *sd_frag_verdict_name(sd_frag_verdict v);   /* "compact", "full", "fragmented" */
const char *sd_oom_cause_name(sd_oom_cause c);         /* "fragmentation", ... */

#ifdef __cplusplus
}
#endif

#endif
