/* curve.c - leak or noise from logged memory figures (curve.h): the baseline, the lower
 * edge's slope and test, verdicts, capacity, the gap, ranks and the gate.
 *
 * The statistics are series.h's (Theil-Sen, Mann-Kendall); Sen's interval is added here.
 * Every fit runs on at most 32 window floors, so the cost does not grow with the log. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"
#include "logs/log_line.h"
#include "logs/log_read.h"
#include "snapdiff/curve.h"
#include "snapdiff/gate.h"
#include "snapdiff/series.h"
#include "snapdiff/units.h"

#define MAX_WINDOWS 32
#define MIN_AFTER_BASELINE 8
#define EARLY_STEPS 200.0
#define EARLY_PCT 5.0

/* The points a picture of one series needs (sd_curve_series_plot). */
typedef struct plot_store {
    double x[SD_CURVE_PLOT_POINTS], lo[SD_CURVE_PLOT_POINTS], hi[SD_CURVE_PLOT_POINTS];
    size_t n;
    double floor_x[MAX_WINDOWS], floor_bytes[MAX_WINDOWS];
    size_t n_floors;
} plot_store;

struct sd_curve {
    sd_curve_options opts;
    plot_store *plots;          /* one per series */
    sd_curve_file *files;
    size_t n_files;
    sd_curve_series *series;
    size_t n_series;
    sd_curve_ranks ranks;
    sd_curve_limit_result limits[SD_CURVE_LIMIT_COUNT];
    size_t n_limits;
    bool pass;
    sd_curve_oom *ooms;
    size_t n_ooms;
    uint64_t ooms_seen;
};

static const char *const verdict_names[SD_CURVE_VERDICT_COUNT] = {
    "growing", "flat", "shrinking", "noisy", NULL};

const char *sd_curve_verdict_name(sd_curve_verdict v)
{
    return (unsigned)v < SD_CURVE_VERDICT_COUNT ? verdict_names[v] : NULL;
}

/* ---------- statistics ---------- */

static int dbl_cmp(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static double median_of(double *v, size_t n)
{
    if (!n) return 0;
    if (n > 1) qsort(v, n, sizeof *v, dbl_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Sen's 95% interval of the Theil-Sen slope: the pairwise slopes ranked (N - C) / 2 and
 * (N + C) / 2 + 1, C = 1.96 sqrt(var S). */
static bool sen_interval(const double *x, const double *y, size_t n, double var, double *lo,
                         double *hi)
{
    size_t cap = n * (n - 1) / 2;
    double *s = malloc((cap ? cap : 1) * sizeof *s);
    if (!s) return false;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (x[j] != x[i]) s[k++] = (y[j] - y[i]) / (x[j] - x[i]);
    if (!k) {
        free(s);
        return false;
    }
    if (k > 1) qsort(s, k, sizeof *s, dbl_cmp);
    double c = 1.96 * sqrt(var);
    double m1 = ((double)k - c) / 2, m2 = ((double)k + c) / 2 + 1;
    long i1 = lround(m1) - 1, i2 = lround(m2) - 1;
    if (i1 < 0) i1 = 0;
    if (i2 > (long)k - 1) i2 = (long)k - 1;
    if (i2 < i1) i2 = i1;
    *lo = s[i1];
    *hi = s[i2];
    free(s);
    return true;
}

/* A fitted trend of (x, y)[0..n). */
typedef struct fit {
    double slope, low, high, intercept, confidence;
    int64_t s;
} fit;

static bool fit_line(const double *x, const double *y, size_t n, fit *f)
{
    memset(f, 0, sizeof *f);
    if (n < 2) return false;
    sd_series_trend t;
    memset(&t, 0, sizeof t);
    sd_mann_kendall(y, n, &t);
    f->confidence = t.confidence;
    f->s = t.mk_s;
    if (!sd_theil_sen(x, y, n, &f->slope)) return false;
    if (!sen_interval(x, y, n, t.mk_var, &f->low, &f->high)) return false;
    double *r = malloc(n * sizeof *r);
    if (!r) return false;
    for (size_t i = 0; i < n; i++) r[i] = y[i] - f->slope * x[i];
    f->intercept = median_of(r, n);
    free(r);
    return true;
}

/* ---------- one series ---------- */

typedef struct sample_view {
    const double *x, *lo, *hi, *gap;
    size_t *order;              /* indices sorted by x */
    size_t n;
} sample_view;

typedef struct keyed { double x; size_t i; } keyed;

static int keyed_cmp(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    if (a->x != b->x) return (a->x > b->x) - (a->x < b->x);
    return (a->i > b->i) - (a->i < b->i);
}

/* v->order: the samples by x, ties in arrival order (no global state: thread-safe). */
static bool sort_by_x(sample_view *v)
{
    keyed *k = malloc((v->n ? v->n : 1) * sizeof *k);
    v->order = malloc((v->n ? v->n : 1) * sizeof *v->order);
    if (!k || !v->order) {
        free(k);
        return false;
    }
    for (size_t i = 0; i < v->n; i++) k[i] = (keyed){v->x[i], i};
    if (v->n > 1) qsort(k, v->n, sizeof *k, keyed_cmp);
    for (size_t i = 0; i < v->n; i++) v->order[i] = k[i].i;
    free(k);
    return true;
}

static double baseline_x_of(const sd_curve_options *o, double first, double last, bool seconds,
                            bool *short_run)
{
    double span = last - first;
    double tenth = first + span / 10;
    *short_run = false;
    if (o->has_baseline_step) {
        if (o->baseline_step < last) return o->baseline_step;
        *short_run = true;
        return tenth;
    }
    if (seconds) return tenth;
    double b = first + SD_CURVE_DEFAULT_BASELINE_STEP;   /* a resumed run warms up again */
    return b <= first + span / 2 ? b : tenth;
}

static void sparkline(sd_curve_series *s, const sample_view *v)
{
    for (int k = 0; k < SD_CURVE_SPARK; k++) s->spark_lo[k] = s->spark_hi[k] = NAN;
    double span = s->last_x - s->first_x;
    for (size_t i = 0; i < v->n; i++) {
        size_t j = v->order[i];
        int k = span > 0 ? (int)((v->x[j] - s->first_x) / span * SD_CURVE_SPARK) : 0;
        if (k >= SD_CURVE_SPARK) k = SD_CURVE_SPARK - 1;
        if (k < 0) k = 0;
        s->spark_lo[k] = isnan(s->spark_lo[k]) ? v->lo[j] : fmin(s->spark_lo[k], v->lo[j]);
        s->spark_hi[k] = isnan(s->spark_hi[k]) ? v->hi[j] : fmax(s->spark_hi[k], v->hi[j]);
    }
}

/* The samples in buckets of equal x range, for a picture (sparkline()'s, finer). */
static void plot_points(plot_store *p, const sd_curve_series *s, const sample_view *v)
{
    double span = s->last_x - s->first_x;
    size_t cur = (size_t)-1;
    p->n = 0;
    for (size_t i = 0; i < v->n; i++) {
        size_t j = v->order[i];
        double t = span > 0 ? (v->x[j] - s->first_x) / span * SD_CURVE_PLOT_POINTS : 0;
        /* compared before the cast: a NaN or an overflowing double never reaches it */
        size_t k = t >= 0 && t < SD_CURVE_PLOT_POINTS ? (size_t)t
                   : t >= SD_CURVE_PLOT_POINTS ? SD_CURVE_PLOT_POINTS - 1 : 0;
        if (k != cur || p->n == 0) {
            cur = k;
            p->x[p->n] = v->x[j];
            p->lo[p->n] = v->lo[j];
            p->hi[p->n] = v->hi[j];
            p->n++;
            continue;
        }
        p->lo[p->n - 1] = fmin(p->lo[p->n - 1], v->lo[j]);
        p->hi[p->n - 1] = fmax(p->hi[p->n - 1], v->hi[j]);
    }
}

typedef struct windows {
    double fx[MAX_WINDOWS], floor[MAX_WINDOWS], peak[MAX_WINDOWS];
    double gx[MAX_WINDOWS], gap[MAX_WINDOWS];
    size_t n, n_gap;
} windows;

/* The samples from index `from` (in x order) in windows of equal x range. */
static void window_floors(const sample_view *v, size_t from, windows *w)
{
    memset(w, 0, sizeof *w);
    size_t m = v->n - from;
    size_t nw = m >= 4 * MAX_WINDOWS ? MAX_WINDOWS : m / 4 > 4 ? m / 4 : 4;
    double x0 = v->x[v->order[from]], x1 = v->x[v->order[v->n - 1]];
    double width = (x1 - x0) / (double)nw;
    size_t cur = (size_t)-1;
    for (size_t i = from; i < v->n; i++) {
        size_t j = v->order[i];
        size_t k = width > 0 ? (size_t)((v->x[j] - x0) / width) : 0;
        if (k >= nw) k = nw - 1;
        if (k != cur) {
            cur = k;
            w->fx[w->n] = v->x[j];
            w->floor[w->n] = v->lo[j];
            w->peak[w->n] = v->hi[j];
            w->gap[w->n_gap] = NAN;
            w->n++;
            w->n_gap++;
        }
        size_t a = w->n - 1;
        if (v->lo[j] < w->floor[a]) {
            w->floor[a] = v->lo[j];
            w->fx[a] = v->x[j];
        }
        w->peak[a] = fmax(w->peak[a], v->hi[j]);
        if (!isnan(v->gap[j]) && (isnan(w->gap[a]) || v->gap[j] < w->gap[a])) {
            w->gap[a] = v->gap[j];
            w->gx[a] = v->x[j];
        }
    }
    /* gaps: keep the windows that have one, in order */
    size_t g = 0;
    for (size_t a = 0; a < w->n_gap; a++)
        if (!isnan(w->gap[a])) {
            w->gap[g] = w->gap[a];
            w->gx[g] = w->gx[a];
            g++;
        }
    w->n_gap = g;
}

static void decide(sd_curve_series *s, const sd_curve_options *o, const windows *w,
                   const fit *f, double span)
{
    s->windows = w->n;
    s->slope = f->slope;
    s->low = f->low;
    s->high = f->high;
    s->confidence = f->confidence;
    s->mk_s = f->s;
    double rmin = INFINITY, rmax = -INFINITY;
    for (size_t a = 0; a < w->n; a++) {
        double r = w->floor[a] - (f->intercept + f->slope * w->fx[a]);
        rmin = fmin(rmin, r);
        rmax = fmax(rmax, r);
    }
    s->stray = w->n ? rmax - rmin : 0;
    double min_growth = (double)o->min_growth;
    double noisy = fmax(4 * min_growth, 0.01 * s->baseline_bytes);
    if (f->confidence >= o->min_confidence && f->s > 0 && f->low > 0 &&
        f->slope * span >= min_growth)
        s->verdict = SD_CURVE_GROWING;
    else if (f->confidence >= o->min_confidence && f->s < 0 && f->high < 0 &&
             -f->slope * span >= min_growth)
        s->verdict = SD_CURVE_SHRINKING;
    else if (s->stray > noisy)
        s->verdict = SD_CURVE_NOISY;
    else
        s->verdict = SD_CURVE_FLAT;
}

static void capacity_of(sd_curve_series *s, const sd_curve_options *o, const sdp_log_series *in)
{
    uint64_t cap = o->capacity ? o->capacity : in->has_total ? (uint64_t)in->total : 0;
    if (!cap) return;
    s->has_capacity = true;
    s->capacity = cap;
    s->threshold = o->threshold;
    bool grows = s->verdict == SD_CURVE_GROWING && s->slope > 0;
    double targets[2] = {(double)cap, o->threshold * (double)cap};
    double *out[2] = {&s->to_capacity, &s->to_threshold};
    bool *has[2] = {&s->has_to_capacity, &s->has_to_threshold};
    for (int k = 0; k < 2; k++) {
        if (s->peak_last >= targets[k]) {
            *has[k] = true;
            *out[k] = 0;
        } else if (grows) {
            *has[k] = true;
            *out[k] = ceil((targets[k] - s->peak_last) / s->slope);
        }
    }
}

static void gap_of(sd_curve_series *s, const sd_curve_options *o, const windows *w, double span)
{
    fit g;
    if (w->n_gap < 4 || !fit_line(w->gx, w->gap, w->n_gap, &g)) return;
    s->has_gap = true;
    s->gap_first = w->gap[0];
    s->gap_last = w->gap[w->n_gap - 1];
    s->gap_slope = g.slope;
    s->gap_confidence = g.confidence;
    s->gap_growing = g.confidence >= o->min_confidence && g.s > 0 && g.low > 0 &&
                     g.slope * span >= (double)o->min_growth;
}

static sd_status analyse_series(sd_curve_series *s, plot_store *plot,
                                const sdp_log_series *in, const sd_curve_options *o,
                                sd_error *err)
{
    sample_view v = {in->x, in->lo, in->hi, in->gap, NULL, in->n};
    if (!sort_by_x(&v)) {
        free(v.order);
        return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    }
    s->samples = in->n_raw;
    s->stride = in->stride;
    s->axis_seconds = in->axis == SDP_AXIS_SECOND;
    s->x_name = in->axis == SDP_AXIS_SECOND ? "second" : in->axis == SDP_AXIS_SAMPLE ? "sample"
                                                                                     : "step";
    s->measure = sdp_log_measure_name(in->measure);
    s->maximum = in->measure == SDP_LOG_MAX_ALLOCATED || in->measure == SDP_LOG_MAX_RESERVED;
    s->run = in->run;
    s->first_x = in->x[v.order[0]];
    s->last_x = in->x[v.order[v.n - 1]];
    s->first_bytes = in->lo[v.order[0]];
    s->last_bytes = in->lo[v.order[v.n - 1]];
    s->peak = 0;
    for (size_t i = 0; i < v.n; i++) s->peak = fmax(s->peak, in->hi[i]);
    s->has_reserved = in->has_reserved; s->reserved_last = in->reserved_last;
    s->has_max_allocated = in->has_max_alloc; s->max_allocated_last = in->max_alloc_last;
    s->has_retries = in->has_retries;
    s->retries_first = in->retries_first; s->retries_last = in->retries_last;
    s->has_ooms = in->has_ooms; s->ooms_first = in->ooms_first; s->ooms_last = in->ooms_last;
    sparkline(s, &v);
    plot_points(plot, s, &v);
    s->baseline_x = baseline_x_of(o, s->first_x, s->last_x, s->axis_seconds, &s->baseline_short);
    size_t from = 0;
    while (from < v.n && in->x[v.order[from]] < s->baseline_x) from++;
    s->verdict = SD_CURVE_UNDECIDED;
    s->peak_last = s->peak;
    if (v.n - from < MIN_AFTER_BASELINE) {
        s->baseline_bytes = from < v.n ? in->lo[v.order[from]] : s->last_bytes;
        free(v.order);
        capacity_of(s, o, in);
        return SD_OK;
    }
    windows w;
    window_floors(&v, from, &w);
    s->baseline_x = in->x[v.order[from]];
    s->baseline_bytes = w.floor[0];
    s->floor_last = w.floor[w.n - 1];
    s->peak_last = w.peak[w.n - 1];
    plot->n_floors = w.n;
    memcpy(plot->floor_x, w.fx, w.n * sizeof *w.fx);
    memcpy(plot->floor_bytes, w.floor, w.n * sizeof *w.floor);
    double span = s->last_x - s->baseline_x;
    fit f;
    if (w.n < 3 || !(span > 0) || !fit_line(w.fx, w.floor, w.n, &f)) {
        /* every sample at a few x (a step that never moves): no line to fit */
        free(v.order);
        capacity_of(s, o, in);
        return SD_OK;
    }
    decide(s, o, &w, &f, span);
    if (s->baseline_bytes > 0) {
        s->has_growth_pct = true;
        s->growth_pct = 100 * (s->floor_last - s->baseline_bytes) / s->baseline_bytes;
        if (!s->axis_seconds) {
            s->has_early = true;
            s->early_pct = 100 * f.slope * fmin(EARLY_STEPS, span) / s->baseline_bytes;
            s->early_warning = s->verdict == SD_CURVE_GROWING && s->early_pct > EARLY_PCT;
        }
    }
    capacity_of(s, o, in);
    gap_of(s, o, &w, span);
    free(v.order);
    return SD_OK;
}

/* ---------- ranks ---------- */

/* The series compared as ranks: those with a verdict, on the first such series' axis
 * (slopes per step and per second do not compare). */
static bool in_ranks(const sd_curve *c, const sd_curve_series *s)
{
    if (s->verdict == SD_CURVE_UNDECIDED) return false;
    for (size_t i = 0; i < c->n_series; i++)
        if (c->series[i].verdict != SD_CURVE_UNDECIDED)
            return strcmp(c->series[i].x_name, s->x_name) == 0;
    return false;
}

static void ranks_of(sd_curve *c)
{
    sd_curve_ranks *r = &c->ranks;
    memset(r, 0, sizeof *r);
    size_t n = 0;
    double *sl = malloc((c->n_series ? c->n_series : 1) * sizeof *sl);
    double *bl = malloc((c->n_series ? c->n_series : 1) * sizeof *bl);
    double *dv = malloc((c->n_series ? c->n_series : 1) * sizeof *dv);
    double *sp = malloc((c->n_series ? c->n_series : 1) * sizeof *sp);
    if (!sl || !bl || !dv || !sp) goto out;
    for (size_t i = 0; i < c->n_series; i++) {
        const sd_curve_series *s = &c->series[i];
        if (!in_ranks(c, s)) continue;
        sl[n] = s->slope;
        bl[n] = s->baseline_bytes;
        sp[n] = s->last_x - s->baseline_x;
        r->slope_min = n ? fmin(r->slope_min, s->slope) : s->slope;
        r->slope_max = n ? fmax(r->slope_max, s->slope) : s->slope;
        n++;
    }
    r->count = n;
    if (n < 3) goto out;   /* two ranks: which one is off cannot be told */
    r->slope_median = median_of(sl, n);
    r->baseline_median = median_of(bl, n);
    double span = median_of(sp, n);
    for (size_t i = 0, k = 0; i < c->n_series; i++)
        if (in_ranks(c, &c->series[i]))
            dv[k++] = fabs(c->series[i].slope - r->slope_median);
    r->slope_mad = median_of(dv, n);
    for (size_t i = 0, k = 0; i < c->n_series; i++)
        if (in_ranks(c, &c->series[i]))
            dv[k++] = fabs(c->series[i].baseline_bytes - r->baseline_median);
    r->baseline_mad = median_of(dv, n);
    double slope_floor = span > 0 ? (double)c->opts.min_growth / span : 0;
    double base_floor = fmax((double)c->opts.min_growth, 0.01 * r->baseline_median);
    for (size_t i = 0; i < c->n_series; i++) {
        sd_curve_series *s = &c->series[i];
        if (!in_ranks(c, s)) continue;
        double ds = s->slope - r->slope_median, db = s->baseline_bytes - r->baseline_median;
        s->slope_dev = r->slope_mad > 0 ? 0.6745 * ds / r->slope_mad : 0;
        s->baseline_dev = r->baseline_mad > 0 ? 0.6745 * db / r->baseline_mad : 0;
        s->slope_outlier = fabs(ds) > slope_floor &&
                           (r->slope_mad > 0 ? fabs(s->slope_dev) > 3.5 : true);
        s->baseline_outlier = fabs(db) > base_floor &&
                              (r->baseline_mad > 0 ? fabs(s->baseline_dev) > 3.5 : true);
        r->outliers += s->slope_outlier || s->baseline_outlier;
    }
out:
    free(sl);
    free(bl);
    free(dv);
    free(sp);
}

/* ---------- the gate ---------- */

static void judge(sd_curve *c)
{
    const sd_curve_limits *l = &c->opts.limits;
    c->pass = true;
    const bool has[SD_CURVE_LIMIT_COUNT] = {l->has_max_per_step, l->has_max_growth_pct,
                                             l->has_max_fraction};
    static const char *const names[SD_CURVE_LIMIT_COUNT] = {"max-per-step", "max-growth-pct",
                                                             "max-fraction"};
    for (int id = 0; id < SD_CURVE_LIMIT_COUNT; id++) {
        if (!has[id]) continue;
        sd_curve_limit_result *r = &c->limits[c->n_limits++];
        memset(r, 0, sizeof *r);
        r->id = (sd_curve_limit_id)id;
        r->name = names[id];
        r->limit = id == SD_CURVE_LIMIT_MAX_PER_STEP ? (double)l->max_per_step
                   : id == SD_CURVE_LIMIT_MAX_GROWTH_PCT ? l->max_growth_pct : l->max_fraction;
        r->measured = -INFINITY;
        for (size_t i = 0; i < c->n_series; i++) {
            const sd_curve_series *s = &c->series[i];
            double m;
            bool projected = false;
            if (id == SD_CURVE_LIMIT_MAX_PER_STEP) {
                if (strcmp(s->x_name, "step") != 0 || s->verdict == SD_CURVE_UNDECIDED) continue;
                m = s->verdict == SD_CURVE_GROWING ? s->slope : 0;   /* only a proven rise */
            } else if (id == SD_CURVE_LIMIT_MAX_GROWTH_PCT) {
                if (!s->has_growth_pct) continue;
                m = s->growth_pct;
            } else {
                if (!s->has_capacity) continue;
                m = s->peak / (double)s->capacity;
                if (l->horizon && s->verdict == SD_CURVE_GROWING) {
                    double ahead = (s->peak_last + s->slope * (double)l->horizon) /
                                   (double)s->capacity;
                    if (ahead > m) {
                        projected = ahead > r->limit && m <= r->limit;
                        m = ahead;
                    }
                }
            }
            if (!r->measurable || m > r->measured) {
                r->measured = m;
                r->series = i;
                r->projected = projected;
            }
            r->measurable = true;
        }
        r->pass = !r->measurable || r->measured <= r->limit;
        if (!r->measurable) r->measured = 0;
        c->pass = c->pass && r->pass;
    }
}

/* ---------- create ---------- */

static sd_status check_options(sd_curve_options *o, sd_error *err)
{
    if (!o->threshold) o->threshold = SD_CURVE_DEFAULT_THRESHOLD;
    if (!o->min_confidence) o->min_confidence = SD_CURVE_DEFAULT_CONFIDENCE;
    if (!o->min_growth) o->min_growth = SD_CURVE_DEFAULT_MIN_GROWTH;
    if (!o->max_samples) o->max_samples = SD_CURVE_DEFAULT_MAX_SAMPLES;
    if (!(o->threshold > 0 && o->threshold <= 1))
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "threshold must be in (0, 1]");
    if (!(o->min_confidence > 0 && o->min_confidence < 1))
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "confidence must be in (0, 1)");
    if (o->max_samples < 16)
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "max_samples must be at least 16");
    if (o->has_baseline_step && !(o->baseline_step >= 0 && isfinite(o->baseline_step)))
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "bad baseline step");
    return SD_OK;
}

static sdp_log_format read_format(sd_curve_format f)
{
    switch (f) {
    case SD_CURVE_FORMAT_TEXT: return SDP_LOG_TEXT;
    case SD_CURVE_FORMAT_JSONL: return SDP_LOG_JSONL;
    case SD_CURVE_FORMAT_CSV: return SDP_LOG_CSV;
    case SD_CURVE_FORMAT_NVIDIA_SMI: return SDP_LOG_NVSMI;
    case SD_CURVE_FORMAT_AUTO: break;
    }
    return SDP_LOG_AUTO;
}

/* Several files without a rank field: each file is a rank (its name's rank, else its
 * position). */
static void name_ranks(sd_curve *c, const char *const *paths)
{
    if (c->n_files < 2) return;
    for (size_t i = 0; i < c->n_series; i++) {
        sd_curve_series *s = &c->series[i];
        if (s->rank >= 0 || s->gpu >= 0) continue;
        size_t f = 0;
        while (f < c->n_files && c->files[f].path != s->source) f++;
        int64_t named = -1;
        const char *p = paths[f];
        for (const char *q = p; *q; q++)
            if (strncmp(q, "rank", 4) == 0) {
                const char *d = q + 4;
                if (*d == '_' || *d == '-' || *d == '.') d++;
                if (isdigit((unsigned char)*d)) named = strtoll(d, NULL, 10);
            }
        s->rank = named >= 0 ? named : (int64_t)f;
    }
}

sd_curve *sd_curve_create(const char *const *paths, size_t n, const sd_curve_options *opts,
                          sd_error *err)
{
    sd_error_clear(err);
    return sd_curve_create_pattern(paths, n, opts, NULL, err);
}

sd_curve *sd_curve_create_pattern(const char *const *paths, size_t n,
                                  const sd_curve_options *opts, const char *pattern,
                                  sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_CURVE_OPTIONS_VERSION, "sd_curve_options", err)) return NULL;
    if (sdp_options_check(opts ? &opts->limits : NULL, SD_CURVE_LIMITS_VERSION, "sd_curve_limits", err))
        return NULL;
    if (!paths || n == 0) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "no log given");
        return NULL;
    }
    sd_curve *c = calloc(1, sizeof *c);
    if (!c) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    if (opts) c->opts = *opts;
    if (check_options(&c->opts, err) != SD_OK) {
        free(c);
        return NULL;
    }
    c->files = calloc(n, sizeof *c->files);
    sdp_log log;
    sdp_log_init(&log, c->opts.max_samples);
    log.pattern = pattern;
    sd_status st = c->files ? SD_OK : sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    for (size_t i = 0; st == SD_OK && i < n; i++) {
        sdp_log_file_info info;
        st = sdp_log_read(&log, paths[i], i, read_format(c->opts.format), &info, err);
        c->files[i] = (sd_curve_file){paths[i],
                                      info.preset ? info.preset : sdp_log_format_name(info.format),
                                      info.lines,
                                      info.samples, info.bad_lines, info.first_bad_line,
                                      info.first_bad_why};
        c->n_files = i + 1;
    }
    if (st == SD_OK && log.n_ooms) {
        c->ooms = calloc(log.n_ooms, sizeof *c->ooms);
        if (!c->ooms) st = sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        for (size_t i = 0; c->ooms && i < log.n_ooms; i++) {
            const sdp_log_oom *o = &log.ooms[i];
            c->ooms[i] = (sd_curve_oom){paths[o->file], o->line, o->rank, o->gpu, o->kind,
                                        o->tried, o->capacity, o->free, o->in_use,
                                        o->allocated, o->reserved_unallocated};
        }
        c->n_ooms = c->ooms ? log.n_ooms : 0;
    }
    c->ooms_seen = log.ooms_seen;
    if (st == SD_OK) {
        sdp_log_finish(&log);
        c->series = calloc(log.n_series ? log.n_series : 1, sizeof *c->series);
        c->plots = calloc(log.n_series ? log.n_series : 1, sizeof *c->plots);
        if (!c->series || !c->plots) st = sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    }
    for (size_t i = 0; st == SD_OK && i < log.n_series; i++) {
        sd_curve_series *s = &c->series[i];
        s->source = paths[log.series[i].file];
        s->rank = log.series[i].rank;
        s->gpu = log.series[i].gpu;
        st = analyse_series(s, &c->plots[i], &log.series[i], &c->opts, err);
        c->n_series = i + 1;
    }
    sdp_log_free(&log);
    if (st != SD_OK) {
        sd_curve_free(c);
        return NULL;
    }
    name_ranks(c, paths);
    ranks_of(c);
    judge(c);
    return c;
}

void sd_curve_free(sd_curve *c)
{
    if (!c) return;
    free(c->files);
    free(c->series);
    free(c->plots);
    free(c->ooms);
    free(c);
}

size_t sd_curve_file_count(const sd_curve *c) { return c->n_files; }
size_t sd_curve_oom_count(const sd_curve *c) { return c->n_ooms; }
uint64_t sd_curve_oom_total(const sd_curve *c) { return c->ooms_seen; }
const sd_curve_oom *sd_curve_oom_at(const sd_curve *c, size_t i)
{
    return i < c->n_ooms ? &c->ooms[i] : NULL;
}
const sd_curve_file *sd_curve_file_at(const sd_curve *c, size_t i)
{
    return i < c->n_files ? &c->files[i] : NULL;
}
size_t sd_curve_series_count(const sd_curve *c) { return c->n_series; }
const sd_curve_series *sd_curve_series_at(const sd_curve *c, size_t i)
{
    return i < c->n_series ? &c->series[i] : NULL;
}
const sd_curve_ranks *sd_curve_ranks_of(const sd_curve *c) { return &c->ranks; }
const sd_curve_options *sd_curve_options_used(const sd_curve *c) { return &c->opts; }
size_t sd_curve_limit_count(const sd_curve *c) { return c->n_limits; }
const sd_curve_limit_result *sd_curve_limit_at(const sd_curve *c, size_t i)
{
    return i < c->n_limits ? &c->limits[i] : NULL;
}
bool sd_curve_pass(const sd_curve *c) { return c->pass; }

bool sd_curve_series_plot(const sd_curve *c, size_t i, sd_curve_plot *out)
{
    if (!c || i >= c->n_series || !out) return false;
    const plot_store *p = &c->plots[i];
    *out = (sd_curve_plot){p->n, p->x, p->lo, p->hi, p->n_floors, p->floor_x, p->floor_bytes};
    return true;
}

/* ---------- the limits file (check --config's; its syntax: base/limits_file.c) ---------- */

static bool parse_ratio(const char *v, double lo, double hi, double *out)
{
    if (!*v) return false;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || *end || !(d >= lo && d <= hi)) return false;
    *out = d;
    return true;
}

static sd_status bad_value(sd_error *err, const sdp_limits_line *at, const char *key,
                           const char *value, const char *what)
{
    return sdp_limits_file_fail(err, at, "%s: '%.80s' is not %s", key, value, what);
}

/* check's own keys (gate.h's one table, and steps): skipped here, read by check. */
static bool is_check_key(const char *k)
{
    sd_limit_id id;
    return strcmp(k, "steps") == 0 || sd_limit_find(k, &id);
}

static sd_status limits_pair(void *ctx, const char *k, const char *v, const sdp_limits_line *at,
                             sd_error *err)
{
    sd_curve_limits *f = ctx;
    uint64_t u;
    if (strcmp(k, "max-per-step") == 0) {
        if (!sd_parse_size(v, &u)) return bad_value(err, at, k, v, "a size (e.g. 64KiB)");
        f->has_max_per_step = true;
        f->max_per_step = u;
    } else if (strcmp(k, "max-growth-pct") == 0) {
        if (!parse_ratio(v, 0, 1e12, &f->max_growth_pct))
            return bad_value(err, at, k, v, "a percentage of at least 0");
        f->has_max_growth_pct = true;
    } else if (strcmp(k, "max-fraction") == 0) {
        if (!parse_ratio(v, 0, 1, &f->max_fraction))
            return bad_value(err, at, k, v, "a number from 0 to 1");
        f->has_max_fraction = true;
    } else if (strcmp(k, "horizon") == 0) {
        double d;
        if (!parse_ratio(v, 1, 1e15, &d) || d != floor(d))
            return bad_value(err, at, k, v, "a positive number of steps");
        f->horizon = (uint64_t)d;
    } else if (!is_check_key(k)) {
        return sdp_limits_file_fail(err, at, "unknown limit '%.60s' (curve reads max-per-step, "
                                    "max-growth-pct, max-fraction, horizon)", k);
    }
    return SD_OK;
}

sd_status sd_curve_limits_parse(const char *text, size_t len, const char *path,
                                sd_curve_limits *limits, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(limits, SD_CURVE_LIMITS_VERSION, "sd_curve_limits", err))
        return SD_EUSAGE;
    sd_curve_limits file;
    memset(&file, 0, sizeof file);
    SDP_TRY(sdp_limits_file_read(text, len, path, limits_pair, &file, err));
    if (file.has_max_per_step && !limits->has_max_per_step) {
        limits->has_max_per_step = true;
        limits->max_per_step = file.max_per_step;
    }
    if (file.has_max_growth_pct && !limits->has_max_growth_pct) {
        limits->has_max_growth_pct = true;
        limits->max_growth_pct = file.max_growth_pct;
    }
    if (file.has_max_fraction && !limits->has_max_fraction) {
        limits->has_max_fraction = true;
        limits->max_fraction = file.max_fraction;
    }
    if (file.horizon && !limits->horizon) limits->horizon = file.horizon;
    return SD_OK;
}

/* ---------- formats and GPUs ---------- */

static const struct { const char *name, *example, *figure; } generic_formats[] = {
    {"text", "step=1200 alloc=23.41G reserved=30.02G (also step: 5 | mem_alloc 812.5 MiB)",
     "allocated, reserved, ... by name; G, GB, GiB are 2^30, M, MB, MiB 2^20, a bare number "
     "bytes (or the name's _mib, _gb suffix)"},
    {"jsonl", "{\"step\": 10, \"allocated_bytes.all.current\": 25769803776, "
              "\"reserved_bytes.all.current\": 32212254720}",
     "torch.cuda.memory_stats() keys or allocated, reserved, ... by name: bytes"},
    {"csv", "global_step,loss,allocated_mib,reserved_mib",
     "a header naming a step or time column and memory columns; the unit from the name's "
     "suffix"},
    {"hf-trainer-state", "trainer_state.json: {\"log_history\": [{\"step\": 10, \"loss\": 2.1, "
                         "\"memory_allocated\": 9664724992}, ...]}",
     "each log_history entry (Trainer.log) read as a JSON line: the names above, "
     "\"memory/max_reserved(GiB)\" keys too"},
    {"wandb", "wandb-events.jsonl: {\"system.gpu.0.memoryAllocatedBytes\": 43486543872, "
              "\"system.gpu.0.memoryAllocated\": 50.6, \"_timestamp\": 1714567890.0}",
     "device_used per GPU N from memoryAllocatedBytes (NVML's used, every process); "
     "memoryAllocated alone is a percentage: no figure"},
    {"nvidia-smi", "timestamp, index, memory.used [MiB], memory.total [MiB] (csv or "
                   "csv,nounits)",
     "device_used per GPU (memory.free is turned into used by memory.total): the header's "
     "[MiB]"},
};

bool sd_curve_format_at(size_t i, const char **name, const char **example, const char **figure)
{
    size_t g = SDP_ARRAY_LEN(generic_formats);
    if (i < g) {
        *name = generic_formats[i].name;
        *example = generic_formats[i].example;
        *figure = generic_formats[i].figure;
        return true;
    }
    if (i - g >= sdp_log_preset_total) return false;
    *name = sdp_log_presets[i - g].name;
    *example = sdp_log_presets[i - g].example;
    *figure = sdp_log_presets[i - g].figure;
    return true;
}

/* The total capacity torch reports for each GPU (cudaGetDeviceProperties' totalGlobalMem,
 * as its OOM message prints it: "GPU 0 has a total capacity of 79.15 GiB"), in MiB. It is
 * less than the marketing size and than nvidia-smi's memory.total. */
static const struct { const char *name; double mib; } gpus[] = {
    {"A100-40GB", 40335}, {"A100-80GB", 81050}, {"H100", 81009}, {"H100-80GB", 81009},
    {"H200", 143166},   /* nvidia-smi's 143771 MiB less the driver's share, as on H100 */
    {"L40S", 45486}, {"L40", 45466}, {"A10", 22518}, {"A6000", 48681},
    {"RTX4090", 24207}, {"RTX3090", 24259}, {"T4", 15104},
    {"V100-16GB", 16148}, {"V100-32GB", 32512},
};

bool sd_gpu_capacity(const char *name, uint64_t *bytes)
{
    if (!name) return false;
    char want[32];
    size_t n = 0;
    for (const char *p = name; *p && n < sizeof want - 1; p++)
        if (*p != '-' && *p != '_' && *p != ' ') want[n++] = (char)toupper((unsigned char)*p);
    want[n] = '\0';
    for (size_t i = 0; i < SDP_ARRAY_LEN(gpus); i++) {
        char have[32];
        size_t k = 0;
        for (const char *p = gpus[i].name; *p; p++)
            if (*p != '-') have[k++] = *p;
        have[k] = '\0';
        if (strcmp(have, want) == 0) {
            *bytes = (uint64_t)(gpus[i].mib * 1048576.0);
            return true;
        }
    }
    return false;
}
