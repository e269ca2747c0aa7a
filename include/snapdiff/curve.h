/* curve.h - leak or noise from the memory figures a training log already holds.
 *
 * Input: training logs (text lines such as `step=1200 alloc=23.41G reserved=30.02G`,
 * JSON Lines, CSV with a header, nvidia-smi CSV; plain or gzip, "-" for stdin), read line
 * by line with bounded memory. One series per (file, rank) or, for nvidia-smi, per
 * (file, GPU index). Definitions (docs/json-curve.md):
 *
 *   - baseline: after warm-up, at x = baseline_step (default 200) when that leaves at
 *     least half of the run after it, else at the first 10% of the run; nothing before
 *     it is ever called growth;
 *   - the lower edge: the samples after the baseline in (up to 32) windows of equal x
 *     range; each window's floor is its lowest figure; the Theil-Sen slope of the floors
 *     with Sen's 95% interval, and the Mann-Kendall test on them (series.h's statistics);
 *   - verdict, first match wins: growing (confidence >= min_confidence, S > 0, the
 *     interval's low end > 0, slope * span >= min_growth), shrinking (the mirror), noisy
 *     (the floors stray from the line by more than max(4 * min_growth, 1% of the
 *     baseline)), flat;
 *   - growth vs baseline: 100 * (last window's floor - baseline) / baseline;
 *   - steps to capacity / threshold: from the last window's peak, at the floor's slope,
 *     for a growing series (0 when already there);
 *   - ranks: median and MAD of the slopes and baselines; a rank is an outlier when
 *     0.6745 * |v - median| / MAD > 3.5, or, with MAD 0, when it differs from the median
 *     by more than the smallest growth (slopes) or 1% (baselines).
 */
#ifndef SNAPDIFF_CURVE_H
#define SNAPDIFF_CURVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sd_curve sd_curve;

typedef enum sd_curve_format {
    SD_CURVE_FORMAT_AUTO, SD_CURVE_FORMAT_TEXT, SD_CURVE_FORMAT_JSONL, SD_CURVE_FORMAT_CSV,
    SD_CURVE_FORMAT_NVIDIA_SMI
} sd_curve_format;

typedef enum sd_curve_verdict {
    SD_CURVE_GROWING, SD_CURVE_FLAT, SD_CURVE_SHRINKING, SD_CURVE_NOISY,
    SD_CURVE_UNDECIDED,        /* fewer than 8 samples after the baseline */
    SD_CURVE_VERDICT_COUNT
} sd_curve_verdict;

/* "growing", "flat", "shrinking", "noisy"; NULL for undecided or out of range. */
const char *sd_curve_verdict_name(sd_curve_verdict v);

#define SD_CURVE_DEFAULT_BASELINE_STEP 200
#define SD_CURVE_DEFAULT_THRESHOLD 0.85
#define SD_CURVE_DEFAULT_CONFIDENCE 0.99
#define SD_CURVE_DEFAULT_MIN_GROWTH (1u << 20)   /* bytes over the run after the baseline */
#define SD_CURVE_DEFAULT_MAX_SAMPLES 32768       /* kept per series; more are merged */
#define SD_CURVE_SPARK 48                        /* buckets of the sparkline */

/* The gate's limits (each optional). */
#define SD_CURVE_LIMITS_VERSION 1
typedef struct sd_curve_limits {
    unsigned version;   /* SD_CURVE_LIMITS_VERSION (growable: common.h) */
    bool has_max_per_step; uint64_t max_per_step;      /* floor slope, bytes per step */
    bool has_max_growth_pct; double max_growth_pct;    /* vs the baseline, percent */
    bool has_max_fraction; double max_fraction;        /* of the capacity, 0..1 */
    uint64_t horizon;                                  /* steps ahead for max_fraction; 0 = none */
} sd_curve_limits;
#define SD_CURVE_LIMITS_INIT {SD_CURVE_LIMITS_VERSION, false, 0, false, 0, false, 0, 0}
sd_status sd_curve_limits_init(sd_curve_limits *opts, unsigned version);

#define SD_CURVE_OPTIONS_VERSION 1
typedef struct sd_curve_options {
    unsigned version;   /* SD_CURVE_OPTIONS_VERSION (growable: common.h) */
    sd_curve_format format;       /* AUTO: detected per file */
    bool has_baseline_step;
    double baseline_step;         /* x of the baseline (steps; seconds on a time axis) */
    uint64_t capacity;            /* device memory; 0 = nvidia-smi's memory.total, or none */
    double threshold;             /* 0 < t <= 1 (SD_CURVE_DEFAULT_THRESHOLD when 0) */
    double min_confidence;        /* 0 = SD_CURVE_DEFAULT_CONFIDENCE */
    uint64_t min_growth;          /* 0 = SD_CURVE_DEFAULT_MIN_GROWTH */
    size_t max_samples;           /* 0 = SD_CURVE_DEFAULT_MAX_SAMPLES (at least 16) */
    sd_curve_limits limits;
} sd_curve_options;
#define SD_CURVE_OPTIONS_INIT \
    {SD_CURVE_OPTIONS_VERSION, SD_CURVE_FORMAT_AUTO, false, 0, 0, 0, 0, 0, 0, \
     SD_CURVE_LIMITS_INIT}
sd_status sd_curve_options_init(sd_curve_options *opts, unsigned version);

/* What one input gave. */
typedef struct sd_curve_file {
    const char *path;
    const char *format;           /* "text", "jsonl", "csv", "nvidia-smi", or the framework
                                     preset read: "torchtitan", "megatron", ... (--format-list) */
    uint64_t lines, samples;
    uint64_t bad_lines;           /* lines that looked like figures and could not be read */
    uint64_t first_bad_line;      /* 1-based, 0 = none */
    const char *first_bad_why;
} sd_curve_file;

typedef struct sd_curve_series {
    const char *source;           /* the input's path */
    int64_t rank;                 /* -1: none (a single file without a rank field) */
    int64_t gpu;                  /* nvidia-smi's GPU index, else -1 */
    bool axis_seconds;            /* x is seconds (nvidia-smi), else steps */
    const char *measure;          /* "allocated", "reserved" (no allocated figure), "used" */
    uint64_t samples;             /* read */
    uint64_t stride;              /* read per kept sample (1 unless merged) */
    double first_x, last_x;
    double first_bytes, last_bytes;   /* the first and last sample's figure (lowest in its bucket) */
    double baseline_x, baseline_bytes;
    bool baseline_short;          /* the asked baseline step left too little: 10% used */
    size_t windows;               /* floors fitted */
    double slope, low, high;      /* bytes per x unit; Sen's 95% interval */
    double confidence;            /* Mann-Kendall, 1 - p */
    int64_t mk_s;
    double floor_last;            /* the last window's floor */
    double stray;                 /* largest - smallest floor residual from the line */
    double peak;                  /* highest figure of the whole run */
    double peak_last;             /* highest figure of the last window */
    sd_curve_verdict verdict;
    bool has_growth_pct; double growth_pct;
    bool has_early; double early_pct; bool early_warning;   /* first 200 steps, > 5% */
    bool has_capacity; uint64_t capacity; double threshold;
    bool has_to_capacity; double to_capacity;     /* steps (seconds) until the peak reaches it */
    bool has_to_threshold; double to_threshold;
    bool has_gap; double gap_first, gap_last, gap_slope, gap_confidence; bool gap_growing;
    bool has_reserved; double reserved_last;
    bool has_max_allocated; double max_allocated_last;
    bool has_retries; double retries_first, retries_last;
    bool has_ooms; double ooms_first, ooms_last;
    bool slope_outlier; double slope_dev;         /* modified z (or 0 with MAD 0) */
    bool baseline_outlier; double baseline_dev;
    double spark_lo[SD_CURVE_SPARK], spark_hi[SD_CURVE_SPARK];   /* NaN: empty bucket */
    /* appended for issue 27 (compatible: the library allocates the series) */
    const char *x_name;           /* "step", "second", or "sample": the log has no step
                                     beside its figures, x is the sample's index */
    bool maximum;                 /* the measure is a running or per-interval maximum
                                     (max_allocated, max_reserved): growth is a creep of
                                     the peak, not a leak */
    int64_t run;                  /* 0; 1, 2... each time the step counter went back */
} sd_curve_series;

typedef struct sd_curve_ranks {
    size_t count;                 /* series with a verdict */
    double slope_median, slope_mad, slope_min, slope_max;
    double baseline_median, baseline_mad;
    size_t outliers;
} sd_curve_ranks;

typedef enum sd_curve_limit_id {
    SD_CURVE_LIMIT_MAX_PER_STEP, SD_CURVE_LIMIT_MAX_GROWTH_PCT, SD_CURVE_LIMIT_MAX_FRACTION,
    SD_CURVE_LIMIT_COUNT
} sd_curve_limit_id;

typedef struct sd_curve_limit_result {
    sd_curve_limit_id id;
    const char *name;             /* "max-per-step", "max-growth-pct", "max-fraction" */
    bool measurable;              /* false: no series could be measured (no capacity...) */
    double measured;              /* the worst series' figure */
    double limit;
    size_t series;                /* the worst series */
    bool projected;               /* max-fraction: reached only within the horizon */
    bool pass;
} sd_curve_limit_result;

/* An out-of-memory error the logs print (CUDA/HIP/XPU out of memory, torch.OutOfMemoryError):
 * where, and the figures its message gives (NaN where it gives none). */
typedef struct sd_curve_oom {
    const char *path;
    uint64_t line;                /* 1-based */
    int64_t rank, gpu;            /* -1: not said */
    const char *kind;             /* "CUDA", "HIP", "XPU", "device" */
    double tried, capacity, free, in_use, allocated, reserved_unallocated;   /* bytes */
} sd_curve_oom;

/* The OOMs seen (the first 256 kept, in order; count: all of them). */
size_t sd_curve_oom_count(const sd_curve *c);
uint64_t sd_curve_oom_total(const sd_curve *c);
const sd_curve_oom *sd_curve_oom_at(const sd_curve *c, size_t i);

/* The log formats read (--format-list): name, a line as it comes, and what its figure is
 * with its unit rule. @return false when i is out of range. */
bool sd_curve_format_at(size_t i, const char **name, const char **example, const char **figure);

/* Read paths[0..n) and analyse them. @return NULL with err: SD_EIO (cannot open),
 * SD_ESNAPSHOT (a file without any memory figure: the message names what was looked
 * for), SD_EUSAGE (bad options), SD_ELIMIT, SD_ENOMEM. */
sd_curve *sd_curve_create(const char *const *paths, size_t n, const sd_curve_options *opts,
                          sd_error *err);
/* The same, reading only the lines that match pattern: a POSIX extended regular expression
 * whose groups are named (?P<name>...) or (?<name>...): step, time, rank, gpu, allocated,
 * reserved, max_allocated, max_reserved, used, free, total (figures, with or without their
 * unit) and unit (the unit of the figures that have none; else bytes). No step or time
 * group: x is the sample's index. NULL: as sd_curve_create. SD_EUSAGE for a pattern that
 * does not compile, names an unknown group or no memory figure. */
sd_curve *sd_curve_create_pattern(const char *const *paths, size_t n,
                                  const sd_curve_options *opts, const char *pattern,
                                  sd_error *err);
void sd_curve_free(sd_curve *c);

size_t sd_curve_file_count(const sd_curve *c);
const sd_curve_file *sd_curve_file_at(const sd_curve *c, size_t i);
/* Series in input order, then by rank or GPU. */
size_t sd_curve_series_count(const sd_curve *c);
const sd_curve_series *sd_curve_series_at(const sd_curve *c, size_t i);
const sd_curve_ranks *sd_curve_ranks_of(const sd_curve *c);
const sd_curve_options *sd_curve_options_used(const sd_curve *c);   /* defaults filled */
/* The limits asked for, judged (in limit order); pass when every one passed. */
size_t sd_curve_limit_count(const sd_curve *c);
const sd_curve_limit_result *sd_curve_limit_at(const sd_curve *c, size_t i);
bool sd_curve_pass(const sd_curve *c);

/* Limits from a `check --config` file: `key = value` lines, `#` comments. Curve reads
 * max-per-step, max-growth-pct, max-fraction and horizon; check's other keys are
 * skipped. Values already set in *limits win (the command line). @return SD_OK, or
 * SD_EFORMAT naming the line ("path:3"). */
sd_status sd_curve_limits_parse(const char *text, size_t len, const char *path,
                                sd_curve_limits *limits, sd_error *err);

/* ---- Experimental (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_EXPERIMENTAL; exported in the node LIBSNAPDIFF_EXPERIMENTAL_0.3, with no
 * API or ABI promise (they may change in any release). */
#ifdef SNAPDIFF_EXPERIMENTAL
/* A GPU's usable memory by name ("A100-80GB", "H100", "h200", "RTX4090"...): the total
 * capacity torch reports for it (what its OOM message prints). @return false when the name
 * is not known. */
bool sd_gpu_capacity(const char *name, uint64_t *bytes);
#endif /* SNAPDIFF_EXPERIMENTAL */

/* ---- Render tier (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_RENDER_API; exported in the node LIBSNAPDIFF_RENDER_0.3. Words and
 * layout for people, which change with the tool's output: no API promise past the
 * SONAME's. */
#ifdef SNAPDIFF_RENDER_API
/* What a picture of series i needs, bounded whatever the log's length: the samples in at
 * most SD_CURVE_PLOT_POINTS buckets of equal x range (each: the x of its first sample, its
 * lowest and highest figure), and the lower edge: the window floors the slope is fitted to
 * (x of the lowest sample, its figure; none when the series has no verdict). The arrays
 * live as long as the curve. @return false when i is out of range. */
#define SD_CURVE_PLOT_POINTS 400
typedef struct sd_curve_plot {
    size_t n_points;
    const double *x, *lo, *hi;
    size_t n_floors;
    const double *floor_x, *floor_bytes;
} sd_curve_plot;
bool sd_curve_series_plot(const sd_curve *c, size_t i, sd_curve_plot *out);
#endif /* SNAPDIFF_RENDER_API */

#ifdef __cplusplus
}
#endif

#endif
