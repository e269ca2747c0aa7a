/* series.h - trends over N snapshots: which groups grow, which only swing.
 *
 * Input: one group table per snapshot (groups.h), in the series' order. Per group (key
 * and device; zero bytes where a snapshot holds none of it):
 *
 *   - slope: the Theil-Sen estimate, the median of (b[j] - b[i]) / (x[j] - x[i]) over all
 *     pairs i < j, with x the snapshot index (bytes per snapshot) and, with steps, the
 *     step of each snapshot (bytes per step);
 *   - the Mann-Kendall trend test: S = sum over i < j of sign(b[j] - b[i]); its variance
 *     with ties, n(n-1)(2n+5)/18 - sum over tied groups of t(t-1)(2t+5)/18; z = (S - 1)
 *     / sqrt(var) for S > 0, (S + 1) / sqrt(var) for S < 0, else 0; the two-sided p-value
 *     erfc(|z| / sqrt 2) and confidence = 1 - p;
 *   - the verdict, first match wins:
 *       growing    confidence >= min_confidence, S > 0 and slope >= min_slope
 *       shrinking  confidence >= min_confidence, S < 0 and slope <= -min_slope
 *       noisy      the bytes' range (max - min) > min_slope * (n - 1): it moved more
 *                  than a leak at the smallest slope would have over the series
 *       flat       otherwise.
 *
 * The allocated total's floor, the lower edge of the sawtooth: the Theil-Sen line through
 * the snapshots that lie on or below the Theil-Sen line of all of them; its slope per
 * snapshot (and per step). Reserved memory is reported alongside with its own slope and
 * no verdict: the allocator keeping a cache is not a leak.
 *
 * Capacity: with a capacity, the snapshots (and steps) until the last snapshot's allocated
 * total plus the growing groups' combined slope reaches it.
 *
 * A series borrows its tables (keys and sites point into them): free it first.
 */
#ifndef SNAPDIFF_SERIES_H
#define SNAPDIFF_SERIES_H

#include "groups.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sd_series sd_series;

typedef enum sd_trend {
    SD_TREND_GROWING, SD_TREND_SHRINKING, SD_TREND_NOISY, SD_TREND_FLAT, SD_TREND_COUNT
} sd_trend;

/* "growing", "shrinking", "noisy", "flat"; NULL when out of range. */
const char *sd_trend_name(sd_trend t);

/* The defaults: documented in docs/json-series.md and snapdiff(1). */
#define SD_SERIES_DEFAULT_MIN_SLOPE (256u << 10)   /* bytes per snapshot */
#define SD_SERIES_DEFAULT_CONFIDENCE 0.99
#define SD_SERIES_MIN_SNAPSHOTS 3                  /* the fewest a series is made of */

#define SD_SERIES_OPTIONS_VERSION 1
typedef struct sd_series_options {
    unsigned version;   /* SD_SERIES_OPTIONS_VERSION (growable: common.h) */
    const uint64_t *steps;     /* [n] strictly increasing training steps, or NULL */
    uint64_t min_slope;        /* bytes per snapshot (SD_SERIES_DEFAULT_MIN_SLOPE) */
    double min_confidence;     /* 0..1 (SD_SERIES_DEFAULT_CONFIDENCE) */
    uint64_t capacity;         /* device memory for the estimate; 0 = none */
} sd_series_options;
#define SD_SERIES_OPTIONS_INIT \
    {SD_SERIES_OPTIONS_VERSION, NULL, SD_SERIES_DEFAULT_MIN_SLOPE, SD_SERIES_DEFAULT_CONFIDENCE, 0}
sd_status sd_series_options_init(sd_series_options *opts, unsigned version);

/* A trend of one sequence (a group's bytes, or a total). */
typedef struct sd_series_trend {
    double slope;              /* Theil-Sen, bytes per snapshot */
    bool has_step_slope;
    double slope_per_step;     /* Theil-Sen, bytes per step (with steps) */
    int64_t mk_s;              /* Mann-Kendall S */
    double mk_var;             /* its variance, ties corrected */
    double mk_z;
    double p_value;            /* two-sided */
    double confidence;         /* 1 - p_value */
} sd_series_trend;

typedef struct sd_series_group {
    const char *key;
    int64_t device;
    const sd_group_row *rep;   /* the row in the last snapshot that holds the group */
    const uint64_t *bytes;     /* [n] */
    uint64_t min_bytes, max_bytes;
    sd_series_trend trend;
    sd_trend verdict;
} sd_series_group;

typedef struct sd_series_snapshot {
    const char *source;
    bool has_time; int64_t time_us;
    bool has_step; uint64_t step;
    uint64_t allocated, reserved;   /* over every device */
    sd_groups_oom oom;              /* its oom entries (groups.h; count 0: none) */
    /* Added in 0.3 (the library owns this struct): its pinned host memory, in neither
     * figure above (sd_groups_host); zeros when !has_host. */
    bool has_host;
    uint64_t host_allocated, host_reserved;
} sd_series_snapshot;

typedef struct sd_series_floor {
    double slope;                   /* bytes per snapshot */
    bool has_step_slope;
    double slope_per_step;
    double first_bytes, last_bytes; /* the floor line at the first and the last snapshot */
    size_t n_points;                /* snapshots on or below the line of all */
} sd_series_floor;

typedef struct sd_series_capacity {
    bool has_estimate;              /* a capacity was given and some group grows */
    uint64_t capacity;
    double growing_slope;           /* the growing groups' slopes, summed, per snapshot */
    bool has_step_slope;
    double growing_slope_per_step;
    uint64_t snapshots_left;        /* ceil((capacity - last allocated) / slope); 0 if full */
    bool has_steps_left;
    uint64_t steps_left;
} sd_series_capacity;

/* Analyse tables[0..n) (n >= 3).
 * @return the series, or NULL with err (SD_EUSAGE: fewer than 3 snapshots, steps not
 * strictly increasing, a confidence outside 0..1; SD_ENOMEM). */
sd_series *sd_series_create(const sd_groups *const *tables, size_t n,
                            const sd_series_options *opts, sd_error *err);
void sd_series_free(sd_series *s);

const sd_series_options *sd_series_options_used(const sd_series *s);  /* defaults filled */
size_t sd_series_snapshot_count(const sd_series *s);
const sd_series_snapshot *sd_series_snapshot_at(const sd_series *s, size_t i);
/* Groups culprit first: growing (largest slope first), shrinking (most negative first),
 * noisy (widest range first),
 * flat (largest peak first); ties by key and device. */
size_t sd_series_group_count(const sd_series *s);
const sd_series_group *sd_series_group_at(const sd_series *s, size_t i);
size_t sd_series_verdict_count(const sd_series *s, sd_trend t);
const sd_series_trend *sd_series_allocated_trend(const sd_series *s);
const sd_series_trend *sd_series_reserved_trend(const sd_series *s);
const sd_series_floor *sd_series_floor_of(const sd_series *s);
const sd_series_capacity *sd_series_capacity_of(const sd_series *s);
/* The highest confidence the trend test can reach with this many snapshots (a strictly
 * monotonic series): below min_confidence, nothing can be growing or shrinking. */
double sd_series_max_confidence(const sd_series *s);

/* ---- Experimental (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_EXPERIMENTAL; exported in the node LIBSNAPDIFF_EXPERIMENTAL_0.3, with no
 * API or ABI promise (they may change in any release). */
#ifdef SNAPDIFF_EXPERIMENTAL
/* The statistics themselves, for tests and other analyses. x may be NULL (0, 1, 2, ...).
 * Pairs with equal x are left out of the slope. @return false when no pair counts or
 * memory ran out (n(n-1)/2 doubles are needed). */
bool sd_theil_sen(const double *x, const double *y, size_t n, double *slope);
void sd_mann_kendall(const double *y, size_t n, sd_series_trend *out);
#endif /* SNAPDIFF_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif
