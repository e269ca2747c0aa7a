/* series.c - trends over N group tables (series.h): Theil-Sen slopes, the Mann-Kendall
 * test, the verdicts, the allocated floor and the capacity estimate.
 *
 * Groups are the union of the tables' (key, device) rows; each group's bytes are looked
 * up in every table (zero where it holds none). Everything here is O(n^2) per group in
 * the number of snapshots, which stays small (tens to hundreds).
 */
#include <math.h>
#include <stdlib.h>

#include "base/base.h"
#include "snapdiff/series.h"

struct sd_series {
    sd_series_options opts;
    uint64_t *steps;                /* [n] copy, or NULL */
    size_t n;
    sd_series_snapshot *snaps;
    sd_series_group *groups;
    size_t n_groups;
    uint64_t *bytes;                /* [n_groups * n] */
    size_t verdicts[SD_TREND_COUNT];
    sd_series_trend allocated, reserved;
    sd_series_floor floor;
    sd_series_capacity capacity;
    double max_confidence;
};

static const char *const trend_names[SD_TREND_COUNT] = {"growing", "shrinking", "noisy",
                                                        "flat"};

const char *sd_trend_name(sd_trend t)
{
    return (unsigned)t < SD_TREND_COUNT ? trend_names[t] : NULL;
}

/* ---------- the statistics ---------- */

static int dbl_cmp(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static double median_sorted(const double *v, size_t n)
{
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double x_at(const double *x, size_t i) { return x ? x[i] : (double)i; }

bool sd_theil_sen(const double *x, const double *y, size_t n, double *slope)
{
    if (n < 2 || n - 1 > SIZE_MAX / n / 2 / sizeof(double)) return false;
    double *s = malloc(n * (n - 1) / 2 * sizeof *s);
    if (!s) return false;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            double dx = x_at(x, j) - x_at(x, i);
            if (dx != 0) s[k++] = (y[j] - y[i]) / dx;
        }
    if (k) {
        qsort(s, k, sizeof *s, dbl_cmp);
        *slope = median_sorted(s, k);
    }
    free(s);
    return k > 0;
}

/* The median of y[i] - slope * x[i] over the indices idx[0..m) (all when idx is NULL). */
static bool intercept(const double *x, const double *y, const size_t *idx, size_t m,
                      double slope, double *out)
{
    double *r = malloc((m ? m : 1) * sizeof *r);
    if (!r) return false;
    for (size_t k = 0; k < m; k++) {
        size_t i = idx ? idx[k] : k;
        r[k] = y[i] - slope * x_at(x, i);
    }
    qsort(r, m, sizeof *r, dbl_cmp);
    *out = m ? median_sorted(r, m) : 0;
    free(r);
    return true;
}

static double variance_of(size_t n) { return (double)n * (n - 1) * (2.0 * n + 5) / 18; }

void sd_mann_kendall(const double *y, size_t n, sd_series_trend *out)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) s += (y[j] > y[i]) - (y[j] < y[i]);
    double var = n >= 2 ? variance_of(n) : 0;
    /* ties: runs of equal values (counted on a sorted copy) */
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (v) {
        memcpy(v, y, n * sizeof *v);
        qsort(v, n, sizeof *v, dbl_cmp);
        for (size_t i = 0; i < n;) {
            size_t j = i;
            while (j < n && v[j] == v[i]) j++;
            double t = (double)(j - i);
            if (t > 1) var -= t * (t - 1) * (2 * t + 5) / 18;
            i = j;
        }
        free(v);
    }
    out->mk_s = s;
    out->mk_var = var > 0 ? var : 0;
    out->mk_z = 0;
    if (out->mk_var > 0 && s != 0)
        out->mk_z = (double)(s > 0 ? s - 1 : s + 1) / sqrt(out->mk_var);
    out->p_value = erfc(fabs(out->mk_z) / sqrt(2.0));
    out->confidence = 1 - out->p_value;
}

/* Both slopes and the test of y[0..n). */
static bool trend_of(const sd_series *se, const double *y, sd_series_trend *t)
{
    memset(t, 0, sizeof *t);
    sd_mann_kendall(y, se->n, t);
    if (!sd_theil_sen(NULL, y, se->n, &t->slope)) return false;
    if (se->steps) {
        double *x = malloc(se->n * sizeof *x);
        if (!x) return false;
        for (size_t i = 0; i < se->n; i++) x[i] = (double)se->steps[i];
        t->has_step_slope = sd_theil_sen(x, y, se->n, &t->slope_per_step);
        free(x);
        if (!t->has_step_slope) return false;
    }
    return true;
}

/* ---------- groups ---------- */

static int row_ptr_cmp(const void *pa, const void *pb)
{
    const sd_group_row *a = *(const sd_group_row *const *)pa;
    const sd_group_row *b = *(const sd_group_row *const *)pb;
    int c = strcmp(a->key, b->key);
    if (c) return c;
    return (a->device > b->device) - (a->device < b->device);
}

#define DOING "analysing the series"   /* what sdp_nomem says failed */

/* The union of the tables' rows, one group per (key, device). */
static sd_status collect_groups(sd_series *se, const sd_groups *const *tables, sd_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < se->n; i++) total += sd_groups_row_count(tables[i]);
    const sd_group_row **all = malloc((total ? total : 1) * sizeof *all);
    if (!all) return sdp_nomem(err, DOING);
    size_t k = 0;
    for (size_t i = 0; i < se->n; i++)
        for (size_t r = 0; r < sd_groups_row_count(tables[i]); r++)
            all[k++] = sd_groups_row(tables[i], r);
    qsort(all, total, sizeof *all, row_ptr_cmp);
    size_t n_groups = 0;
    for (size_t i = 0; i < total; i++) n_groups += i == 0 || row_ptr_cmp(&all[i - 1], &all[i]);
    se->groups = calloc(n_groups ? n_groups : 1, sizeof *se->groups);
    se->bytes = n_groups && n_groups > SIZE_MAX / se->n / sizeof(uint64_t)
                    ? NULL : calloc(n_groups ? n_groups * se->n : 1, sizeof *se->bytes);
    if (!se->groups || !se->bytes) {
        free(all);
        return sdp_nomem(err, DOING);
    }
    for (size_t i = 0; i < total; i++)
        if (i == 0 || row_ptr_cmp(&all[i - 1], &all[i])) {
            sd_series_group *g = &se->groups[se->n_groups];
            g->key = all[i]->key;
            g->device = all[i]->device;
            g->bytes = se->bytes + se->n_groups * se->n;
            se->n_groups++;
        }
    free(all);
    for (size_t gi = 0; gi < se->n_groups; gi++) {
        sd_series_group *g = &se->groups[gi];
        uint64_t *b = se->bytes + gi * se->n;
        for (size_t i = 0; i < se->n; i++) {
            const sd_group_row *r = sd_groups_find(tables[i], g->key, g->device);
            b[i] = r ? r->bytes : 0;
            if (r) g->rep = r;
        }
    }
    return SD_OK;
}

static sd_trend decide(const sd_series *se, const sd_series_group *g)
{
    const sd_series_trend *t = &g->trend;
    double min = (double)se->opts.min_slope;
    bool sure = t->confidence >= se->opts.min_confidence;
    if (sure && t->mk_s > 0 && t->slope > 0 && t->slope >= min) return SD_TREND_GROWING;
    if (sure && t->mk_s < 0 && t->slope < 0 && -t->slope >= min) return SD_TREND_SHRINKING;
    if ((double)(g->max_bytes - g->min_bytes) > min * (double)(se->n - 1)) return SD_TREND_NOISY;
    return SD_TREND_FLAT;
}

static sd_status analyse_groups(sd_series *se, sd_error *err)
{
    double *y = malloc(se->n * sizeof *y);
    if (!y) return sdp_nomem(err, DOING);
    for (size_t gi = 0; gi < se->n_groups; gi++) {
        sd_series_group *g = &se->groups[gi];
        g->min_bytes = UINT64_MAX;
        for (size_t i = 0; i < se->n; i++) {
            y[i] = (double)g->bytes[i];
            if (g->bytes[i] < g->min_bytes) g->min_bytes = g->bytes[i];
            if (g->bytes[i] > g->max_bytes) g->max_bytes = g->bytes[i];
        }
        if (!trend_of(se, y, &g->trend)) {
            free(y);
            return sdp_nomem(err, DOING);
        }
        g->verdict = decide(se, g);
        se->verdicts[g->verdict]++;
    }
    free(y);
    return SD_OK;
}

static int cmp_u64(uint64_t a, uint64_t b) { return (a > b) - (a < b); }

static int group_cmp(const void *pa, const void *pb)
{
    const sd_series_group *a = pa, *b = pb;
    if (a->verdict != b->verdict) return (int)a->verdict - (int)b->verdict;
    int c = 0;
    switch (a->verdict) {
    case SD_TREND_GROWING: c = dbl_cmp(&b->trend.slope, &a->trend.slope); break;
    case SD_TREND_SHRINKING: c = dbl_cmp(&a->trend.slope, &b->trend.slope); break;
    case SD_TREND_NOISY:
        c = cmp_u64(b->max_bytes - b->min_bytes, a->max_bytes - a->min_bytes);
        break;
    default: break;
    }
    if (!c) c = cmp_u64(b->max_bytes, a->max_bytes);
    if (!c) c = strcmp(a->key, b->key);
    if (!c) c = (a->device > b->device) - (a->device < b->device);
    return c;
}

/* ---------- totals: floor, reserved, capacity ---------- */

static sd_status analyse_floor(sd_series *se, sd_error *err)
{
    size_t n = se->n;
    double *y = malloc(n * sizeof *y), *x = malloc(n * sizeof *x);
    double *ly = malloc(n * sizeof *ly), *lx = malloc(n * sizeof *lx);
    size_t *idx = malloc(n * sizeof *idx);
    sd_status st = y && x && ly && lx && idx ? SD_OK : sdp_nomem(err, DOING);
    for (size_t i = 0; st == SD_OK && i < n; i++) {
        y[i] = (double)se->snaps[i].reserved;
        x[i] = se->steps ? (double)se->steps[i] : (double)i;
    }
    if (st == SD_OK && !trend_of(se, y, &se->reserved)) st = sdp_nomem(err, DOING);
    for (size_t i = 0; st == SD_OK && i < n; i++) y[i] = (double)se->snaps[i].allocated;
    if (st == SD_OK && !trend_of(se, y, &se->allocated)) st = sdp_nomem(err, DOING);
    double a = 0;
    if (st == SD_OK && !intercept(NULL, y, NULL, n, se->allocated.slope, &a))
        st = sdp_nomem(err, DOING);
    size_t m = 0;
    for (size_t i = 0; st == SD_OK && i < n; i++)
        if (y[i] <= a + se->allocated.slope * (double)i) {
            idx[m] = i;
            ly[m] = y[i];
            lx[m] = x[i];
            m++;
        }
    sd_series_floor *f = &se->floor;
    f->n_points = m;
    if (st == SD_OK && m >= 2) {
        double *ix = malloc(m * sizeof *ix);
        if (!ix) st = sdp_nomem(err, DOING);
        for (size_t k = 0; ix && k < m; k++) ix[k] = (double)idx[k];
        double fa = 0;
        if (st == SD_OK && (!sd_theil_sen(ix, ly, m, &f->slope) ||
                            !intercept(NULL, y, idx, m, f->slope, &fa)))
            st = sdp_nomem(err, DOING);
        f->first_bytes = fa;
        f->last_bytes = fa + f->slope * (double)(n - 1);
        if (st == SD_OK && se->steps)
            f->has_step_slope = sd_theil_sen(lx, ly, m, &f->slope_per_step);
        free(ix);
    } else if (st == SD_OK) {   /* every point above the line: cannot happen, but be total */
        f->slope = se->allocated.slope;
        f->first_bytes = f->last_bytes = y[0];
    }
    free(y);
    free(x);
    free(ly);
    free(lx);
    free(idx);
    return st;
}

static uint64_t ceil_div_d(double need, double per)
{
    double q = ceil(need / per);
    return q >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)q;
}

static void analyse_capacity(sd_series *se)
{
    sd_series_capacity *c = &se->capacity;
    c->capacity = se->opts.capacity;
    c->has_step_slope = se->steps != NULL;
    for (size_t gi = 0; gi < se->n_groups; gi++) {
        const sd_series_group *g = &se->groups[gi];
        if (g->verdict != SD_TREND_GROWING) continue;
        c->growing_slope += g->trend.slope;
        if (g->trend.has_step_slope && g->trend.slope_per_step > 0)
            c->growing_slope_per_step += g->trend.slope_per_step;
    }
    if (!c->capacity || c->growing_slope <= 0) return;
    uint64_t now = se->snaps[se->n - 1].allocated;
    double left = now >= c->capacity ? 0 : (double)(c->capacity - now);
    c->has_estimate = true;
    c->snapshots_left = left > 0 ? ceil_div_d(left, c->growing_slope) : 0;
    if (c->has_step_slope && c->growing_slope_per_step > 0) {
        c->has_steps_left = true;
        c->steps_left = left > 0 ? ceil_div_d(left, c->growing_slope_per_step) : 0;
    }
}

/* ---------- the series ---------- */

static sd_status check_options(const sd_series_options *o, size_t n, sd_error *err)
{
    if (n < SD_SERIES_MIN_SNAPSHOTS)
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "a series needs at least %d snapshots "
                        "(got %zu)", SD_SERIES_MIN_SNAPSHOTS, n);
    if (!(o->min_confidence >= 0 && o->min_confidence <= 1))
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "the confidence must be within 0..1");
    for (size_t i = 1; o->steps && i < n; i++)
        if (o->steps[i] <= o->steps[i - 1])
            return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                            "steps must increase from one snapshot to the next "
                            "(snapshot %zu: %llu after %llu)", i + 1,
                            (unsigned long long)o->steps[i],
                            (unsigned long long)o->steps[i - 1]);
    return SD_OK;
}

static void fill_snapshots(sd_series *se, const sd_groups *const *tables)
{
    for (size_t i = 0; i < se->n; i++) {
        sd_series_snapshot *s = &se->snaps[i];
        s->source = sd_groups_source(tables[i]);
        s->has_time = sd_groups_last_time(tables[i], &s->time_us);
        s->has_step = se->steps != NULL;
        s->step = se->steps ? se->steps[i] : 0;
        s->oom = *sd_groups_oom_of(tables[i]);
        for (size_t d = 0; d < sd_groups_device_count(tables[i]); d++) {
            s->allocated += sd_groups_device(tables[i], d)->allocated;
            s->reserved += sd_groups_device(tables[i], d)->reserved;
        }
        const sd_group_device *h = sd_groups_host(tables[i]);
        if (h) {
            s->has_host = true;
            s->host_allocated = h->allocated;
            s->host_reserved = h->reserved;
        }
    }
}

sd_series *sd_series_create(const sd_groups *const *tables, size_t n,
                            const sd_series_options *opts, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_SERIES_OPTIONS_VERSION, "sd_series_options", err))
        return NULL;
    sd_series_options o = opts ? *opts
                               : (sd_series_options){.min_slope = SD_SERIES_DEFAULT_MIN_SLOPE,
                                                     .min_confidence = SD_SERIES_DEFAULT_CONFIDENCE};
    if (!tables || check_options(&o, n, err) != SD_OK) {
        if (!tables) sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "sd_series_create: no tables");
        return NULL;
    }
    sd_series *se = calloc(1, sizeof *se);
    if (!se) {
        sdp_nomem(err, DOING);
        return NULL;
    }
    se->n = n;
    se->opts = o;
    se->snaps = calloc(n, sizeof *se->snaps);
    if (o.steps) {
        se->steps = malloc(n * sizeof *se->steps);
        if (se->steps) memcpy(se->steps, o.steps, n * sizeof *se->steps);
    }
    se->opts.steps = se->steps;
    sd_status st = se->snaps && (!o.steps || se->steps) ? SD_OK : sdp_nomem(err, DOING);
    if (st == SD_OK) {
        fill_snapshots(se, tables);
        st = collect_groups(se, tables, err);
    }
    if (st == SD_OK) st = analyse_groups(se, err);
    if (st == SD_OK) st = analyse_floor(se, err);
    if (st != SD_OK) {
        sd_series_free(se);
        return NULL;
    }
    qsort(se->groups, se->n_groups, sizeof *se->groups, group_cmp);
    analyse_capacity(se);
    double best = (double)n * (n - 1) / 2 - 1;
    se->max_confidence = 1 - erfc(best / sqrt(variance_of(n)) / sqrt(2.0));
    return se;
}

void sd_series_free(sd_series *s)
{
    if (!s) return;
    free(s->steps);
    free(s->snaps);
    free(s->groups);
    free(s->bytes);
    free(s);
}

const sd_series_options *sd_series_options_used(const sd_series *s) { return &s->opts; }
size_t sd_series_snapshot_count(const sd_series *s) { return s->n; }
const sd_series_snapshot *sd_series_snapshot_at(const sd_series *s, size_t i)
{
    return i < s->n ? &s->snaps[i] : NULL;
}
size_t sd_series_group_count(const sd_series *s) { return s->n_groups; }
const sd_series_group *sd_series_group_at(const sd_series *s, size_t i)
{
    return i < s->n_groups ? &s->groups[i] : NULL;
}
size_t sd_series_verdict_count(const sd_series *s, sd_trend t)
{
    return (unsigned)t < SD_TREND_COUNT ? s->verdicts[t] : 0;
}
const sd_series_trend *sd_series_allocated_trend(const sd_series *s) { return &s->allocated; }
const sd_series_trend *sd_series_reserved_trend(const sd_series *s) { return &s->reserved; }
const sd_series_floor *sd_series_floor_of(const sd_series *s) { return &s->floor; }
const sd_series_capacity *sd_series_capacity_of(const sd_series *s) { return &s->capacity; }
double sd_series_max_confidence(const sd_series *s) { return s->max_confidence; }
