/* peak_diff.c - two snapshots compared at their peaks (peak.h). */
#include <pthread.h>
#include <stdlib.h>

#include "base/base.h"
#include "analysis/diff_internal.h"
#include "snapdiff/peak.h"

struct sd_peak_diff {
    sdp_arena arena;              /* the category and phase tables */
    sd_peak *sides[2];
    sd_peak_diff_device *devices;
    size_t n_devices;
    sd_peak_diff_group **tables;   /* one malloc'd array per device */
};

static int cmp_key(const void *a, const void *b)
{
    return strcmp((*(const sd_peak_group *const *)a)->key, (*(const sd_peak_group *const *)b)->key);
}

static int cmp_delta(const void *a, const void *b)
{
    const sd_peak_diff_group *x = a, *y = b;
    uint64_t ax = x->delta_bytes < 0 ? (uint64_t)-x->delta_bytes : (uint64_t)x->delta_bytes;
    uint64_t ay = y->delta_bytes < 0 ? (uint64_t)-y->delta_bytes : (uint64_t)y->delta_bytes;
    if (ax != ay) return ax > ay ? -1 : 1;
    if (x->delta_bytes != y->delta_bytes) return x->delta_bytes > y->delta_bytes ? -1 : 1;
    return strcmp(x->key, y->key);
}

static const sd_peak_group **by_key(const sd_peak_table *t)
{
    const sd_peak_group **v = malloc((t->n_groups ? t->n_groups : 1) * sizeof *v);
    if (!v) return NULL;
    for (size_t i = 0; i < t->n_groups; i++) v[i] = &t->groups[i];
    if (t->n_groups > 1) qsort(v, t->n_groups, sizeof *v, cmp_key);
    return v;
}

/* The union of both tables at the peak, by key. */
static sd_status merge(sd_peak_diff *pd, sd_peak_diff_device *dv, sd_peak_diff_group **out)
{
    const sd_peak_table *to = &dv->old->at_peak, *tn = &dv->new_->at_peak;
    const sd_peak_group **a = by_key(to), **b = by_key(tn);
    sd_peak_diff_group *g = malloc((to->n_groups + tn->n_groups + 1) * sizeof *g);
    if (!a || !b || !g) {
        free(a);
        free(b);
        free(g);
        return SD_ENOMEM;
    }
    size_t i = 0, j = 0, n = 0;
    while (i < to->n_groups || j < tn->n_groups) {
        int c = i == to->n_groups ? 1 : j == tn->n_groups ? -1 : strcmp(a[i]->key, b[j]->key);
        sd_peak_diff_group *x = &g[n++];
        memset(x, 0, sizeof *x);
        if (c <= 0) {
            x->key = a[i]->key;
            x->old_bytes = a[i]->bytes;
            x->old_blocks = a[i]->blocks;
            x->rep_snapshot = sd_peak_snapshot(pd->sides[0]);
            x->rep_stack = a[i]->rep_stack;
            x->rep_site = a[i]->rep_site;
            i++;
        }
        if (c >= 0) {
            x->key = b[j]->key;
            x->new_bytes = b[j]->bytes;
            x->new_blocks = b[j]->blocks;
            x->rep_snapshot = sd_peak_snapshot(pd->sides[1]);
            x->rep_stack = b[j]->rep_stack;
            x->rep_site = b[j]->rep_site;
            j++;
        }
        x->delta_bytes = (int64_t)x->new_bytes - (int64_t)x->old_bytes;
    }
    free(a);
    free(b);
    if (n > 1) qsort(g, n, sizeof *g, cmp_delta);
    *out = g;
    dv->groups = g;
    dv->n_groups = n;
    return SD_OK;
}

/* Every category with blocks in either table, in category order. */
static sd_status categories_merge(sd_peak_diff *pd, const sd_peak_table *to,
                                  const sd_peak_table *tn, const sd_peak_diff_category **out,
                                  size_t *n_out)
{
    sd_peak_diff_category *c = sdp_arena_alloc(&pd->arena, SD_CATEGORY_COUNT * sizeof *c);
    if (!c) return SD_ENOMEM;
    size_t n = 0;
    for (size_t k = 0; k < SD_CATEGORY_COUNT; k++) {
        sd_peak_diff_category x = {.category = (sd_category)k};
        bool any = false;
        for (size_t i = 0; to && i < to->n_categories; i++)
            if (to->categories[i].category == x.category) {
                x.old_bytes = to->categories[i].bytes;
                any = true;
            }
        for (size_t i = 0; tn && i < tn->n_categories; i++)
            if (tn->categories[i].category == x.category) {
                x.new_bytes = tn->categories[i].bytes;
                any = true;
            }
        if (!any) continue;
        x.delta_bytes = (int64_t)x.new_bytes - (int64_t)x.old_bytes;
        c[n++] = x;
    }
    *out = c;
    *n_out = n;
    return SD_OK;
}

/* The category with the largest sign * delta > 0, else the largest on that side. */
static sd_category lead(const sd_peak_diff_category *c, size_t n, int sign)
{
    size_t best = n;
    int64_t most = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t d = sign * c[i].delta_bytes;
        if (d > most) {
            most = d;
            best = i;
        }
    }
    if (best < n) return c[best].category;
    uint64_t big = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = sign < 0 ? c[i].old_bytes : c[i].new_bytes;
        if (best == n || b > big) {
            big = b;
            best = i;
        }
    }
    return best < n ? c[best].category : SD_CAT_OTHER;
}

static const sd_peak_phase *phase_of(const sd_peak_device *d, sd_step_phase ph)
{
    for (size_t i = 0; i < d->n_phase_peaks; i++)
        if (d->phase_peaks[i].phase == ph) return &d->phase_peaks[i];
    return NULL;
}

/* The categories at the two peaks, and the peak of each phase either side has. */
static sd_status phases_merge(sd_peak_diff *pd, sd_peak_diff_device *dv)
{
    if (categories_merge(pd, &dv->old->at_peak, &dv->new_->at_peak, &dv->categories,
                         &dv->n_categories))
        return SD_ENOMEM;
    dv->phases_differ = dv->old->peak_has_phase && dv->new_->peak_has_phase &&
                        dv->old->peak_phase != dv->new_->peak_phase;
    dv->old_lead = lead(dv->categories, dv->n_categories, -1);
    dv->new_lead = lead(dv->categories, dv->n_categories, 1);
    sd_peak_diff_phase *ph = sdp_arena_alloc(&pd->arena, SD_STEP_PHASE_COUNT * sizeof *ph);
    if (!ph) return SD_ENOMEM;
    size_t n = 0;
    for (size_t k = 0; k < SD_STEP_PHASE_COUNT; k++) {
        const sd_peak_phase *o = phase_of(dv->old, (sd_step_phase)k);
        const sd_peak_phase *w = phase_of(dv->new_, (sd_step_phase)k);
        if (!o && !w) continue;
        sd_peak_diff_phase *x = &ph[n++];
        memset(x, 0, sizeof *x);
        x->phase = (sd_step_phase)k;
        x->has_old = o != NULL;
        x->has_new = w != NULL;
        x->old_peak_bytes = o ? o->bytes : 0;
        x->new_peak_bytes = w ? w->bytes : 0;
        if (categories_merge(pd, o ? &o->at : NULL, w ? &w->at : NULL, &x->categories,
                             &x->n_categories))
            return SD_ENOMEM;
    }
    dv->phases = ph;
    dv->n_phases = n;
    return SD_OK;
}

/* The last complete step of a side, 0 when none. */
static uint32_t last_complete(const sd_peak_device *d)
{
    uint32_t s = 0;
    for (size_t i = 0; i < d->n_step_peaks; i++)
        if (d->step_peaks[i].complete) s = d->step_peaks[i].step;
    return s;
}

static const sd_peak_step *step_of(const sd_peak_device *d, uint32_t step)
{
    for (size_t i = 0; i < d->n_step_peaks; i++)
        if (d->step_peaks[i].step == step) return &d->step_peaks[i];
    return NULL;
}

/* Issue 36: the steps of the two peaks; when they differ, the steady step's peaks (the
 * last complete step both hold) and the categories live at them. */
static sd_status steps_compare(sd_peak_diff *pd, sd_peak_diff_device *dv)
{
    dv->old_step = dv->old->peak_has_phase ? dv->old->peak_step : 0;
    dv->new_step = dv->new_->peak_has_phase ? dv->new_->peak_step : 0;
    if (!dv->old_step || !dv->new_step || dv->old_step == dv->new_step) return SD_OK;
    uint32_t a = last_complete(dv->old), b = last_complete(dv->new_);
    uint32_t steady = a < b ? a : b;
    const sd_peak_step *so = steady ? step_of(dv->old, steady) : NULL;
    const sd_peak_step *sn = steady ? step_of(dv->new_, steady) : NULL;
    if (!so || !sn) return SD_OK;
    sd_peak_table to, tn;
    size_t io = (size_t)(dv->old - sd_peak_device_at(pd->sides[0], 0));
    size_t in = (size_t)(dv->new_ - sd_peak_device_at(pd->sides[1], 0));
    /* The first table lives in the side's arena: the second call does not reuse it. */
    if (sd_peak_live_at(pd->sides[0], io, so->entry, &to, NULL) ||
        sd_peak_live_at(pd->sides[1], in, sn->entry, &tn, NULL))
        return SD_ENOMEM;
    dv->steady_step = steady;
    dv->old_steady_bytes = so->bytes;
    dv->new_steady_bytes = sn->bytes;
    dv->old_steady_entry = so->entry;
    dv->new_steady_entry = sn->entry;
    return categories_merge(pd, &to, &tn, &dv->steady_categories, &dv->n_steady_categories);
}

static size_t with_peak(const sd_peak *p, const sd_peak_device **only)
{
    size_t n = 0;
    for (size_t i = 0; p && i < sd_peak_device_count(p); i++)
        if (sd_peak_device_at(p, i)->has_peak) {
            n++;
            *only = sd_peak_device_at(p, i);
        }
    return n;
}

static sd_status pair_devices(sd_peak_diff *pd)
{
    const sd_peak *po = pd->sides[0], *pn = pd->sides[1];
    size_t cap = sd_peak_device_count(po) + 1;
    pd->devices = calloc(cap, sizeof *pd->devices);
    pd->tables = calloc(cap, sizeof *pd->tables);
    if (!pd->devices || !pd->tables) return SD_ENOMEM;
    for (size_t i = 0; i < sd_peak_device_count(po); i++) {
        const sd_peak_device *o = sd_peak_device_at(po, i);
        const sd_peak_device *n = sd_peak_device_find(pn, o->device);
        if (!o->has_peak || !n || !n->has_peak) continue;
        pd->devices[pd->n_devices++] = (sd_peak_diff_device){.device_old = o->device,
                                                             .device_new = n->device,
                                                             .old = o, .new_ = n};
    }
    const sd_peak_device *oo = NULL, *nn = NULL;
    if (pd->n_devices == 0 && with_peak(po, &oo) == 1 && with_peak(pn, &nn) == 1)
        pd->devices[pd->n_devices++] = (sd_peak_diff_device){.device_old = oo->device,
                                                             .device_new = nn->device,
                                                             .old = oo, .new_ = nn};
    for (size_t i = 0; i < pd->n_devices; i++) {
        sd_peak_diff_device *dv = &pd->devices[i];
        dv->delta_bytes = (int64_t)dv->new_->peak_bytes - (int64_t)dv->old->peak_bytes;
        if (merge(pd, dv, &pd->tables[i]) || phases_merge(pd, dv) || steps_compare(pd, dv))
            return SD_ENOMEM;
    }
    return SD_OK;
}

/* One side's peak, made on a thread of its own. */
typedef struct side_job {
    const sd_snapshot *snap;
    const sd_peak_options *opts;
    sd_peak *out;
    sd_error err;
} side_job;

static void *side_main(void *arg)
{
    side_job *j = arg;
    j->out = sd_peak_create(j->snap, j->opts, &j->err);
    return NULL;
}

/* Both peaks at once: each replays its own trace (the larger part of a diff of two big
 * snapshots) and shares nothing with the other (its own arena and attribution; the
 * snapshots are only read). Without a thread, one after the other. */
static void create_sides(sd_peak_diff *pd, const sd_snapshot *old_snap,
                         const sd_snapshot *new_snap, const sd_peak_options *opts, sd_error *err)
{
    side_job job = {.snap = new_snap, .opts = opts};
    sd_error_clear(&job.err);
    pthread_t t;
    bool threaded = pthread_create(&t, NULL, side_main, &job) == 0;
    pd->sides[0] = sd_peak_create(old_snap, opts, err);
    if (threaded) pthread_join(t, NULL);
    else side_main(&job);
    pd->sides[1] = job.out;
    if (pd->sides[0] && !job.out && err && err->code == SD_OK) *err = job.err;
}

sd_peak_diff *sdp_peak_diff_create(const sd_snapshot *old_snap, const sd_snapshot *new_snap,
                                   const sd_peak_options *opts, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_PEAK_OPTIONS_VERSION, "sd_peak_options", err)) return NULL;
    if (!old_snap || !new_snap || !opts) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "peak diff: two snapshots needed");
        return NULL;
    }
    sd_peak_diff *pd = calloc(1, sizeof *pd);
    if (!pd) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    sdp_arena_init(&pd->arena, opts->max_memory);
    sd_peak_options with_phases = *opts;
    with_phases.phase_peaks = true;     /* the diff compares the phases' peaks too */
    create_sides(pd, old_snap, new_snap, &with_phases, err);
    if (!pd->sides[0] || !pd->sides[1]) {
        sdp_peak_diff_free(pd);
        return NULL;
    }
    if (pair_devices(pd)) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory comparing the peaks");
        sdp_peak_diff_free(pd);
        return NULL;
    }
    return pd;
}

void sdp_peak_diff_free(sd_peak_diff *pd)
{
    if (!pd) return;
    for (size_t i = 0; pd->tables && i < pd->n_devices; i++) free(pd->tables[i]);
    free(pd->tables);
    free(pd->devices);
    sd_peak_free(pd->sides[0]);
    sd_peak_free(pd->sides[1]);
    sdp_arena_free(&pd->arena);
    free(pd);
}

unsigned sd_peak_diff_sides(const sd_peak_diff *pd)
{
    const sd_peak_device *x;
    return (with_peak(pd->sides[0], &x) ? 1u : 0u) | (with_peak(pd->sides[1], &x) ? 2u : 0u);
}

const sd_peak *sd_peak_diff_side(const sd_peak_diff *pd, int side)
{
    return side == 0 || side == 1 ? pd->sides[side] : NULL;
}

size_t sd_peak_diff_device_count(const sd_peak_diff *pd) { return pd->n_devices; }

const sd_peak_diff_device *sd_peak_diff_device_at(const sd_peak_diff *pd, size_t i)
{
    return i < pd->n_devices ? &pd->devices[i] : NULL;
}
