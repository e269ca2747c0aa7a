/* plan.c - sd_plan: the peak at a size not yet recorded, from recordings at other sizes
 * (plan.h, docs/plan.md).
 *
 * An eager program asks for the same allocations in the same order at every size; only
 * their sizes change. So each allocation of the base recording (the one nearest the
 * target) is found in the others by its site and its rank among that site's allocations
 * (a diff's pairing, not the trace index: a kernel may add a workspace at some sizes), its
 * size fitted across the recordings, and the base trace replayed with the predicted sizes
 * by the peak's own rules (docs/peak.md) and through the allocator model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc_model.h"
#include "alloc/alloc_run.h"
#include "base/base.h"
#include "snapdiff/attrib.h"
#include "snapdiff/category.h"
#include "snapdiff/peak.h"
#include "snapdiff/plan.h"
#include "snapdiff/replay.h"

enum { DEFAULT_SITES = 10, MIN_ALIGNED_PCT = 50 };

/* amap values past the entry indices: a block from before recording, released. */
#define RELEASED (SDP_NIL - 1)

struct sd_plan {
    double at;
    bool is_whatif;
    sd_plan_whatif whatif;
    uint64_t capacity;
    const char **sources;        /* the recordings, owned copies */
    double *sizes;
    size_t n_recordings;
    const char *check_source;
    sd_plan_device *devices;
    size_t n_devices;
    void **owned;                /* every array and label the results point to */
    size_t n_owned, cap_owned;
    sd_attrib *rules;            /* the default rules, to name sites */
};

const char *sd_plan_fit_name(sd_plan_fit f)
{
    static const char *const names[] = {"constant", "power", "quadratic", "unaligned"};
    return (unsigned)f < SD_PLAN_FIT_COUNT ? names[f] : NULL;
}

sd_status sd_plan_options_init(sd_plan_options *opts, unsigned version)
{
    static const sd_plan_options tmpl = SD_PLAN_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_PLAN_OPTIONS_VERSION);
}

static void *own(sd_plan *p, size_t bytes)
{
    if (p->n_owned == p->cap_owned) {
        size_t n = p->cap_owned ? p->cap_owned * 2 : 32;
        void **q = realloc(p->owned, n * sizeof *q);
        if (!q) return NULL;
        p->owned = q;
        p->cap_owned = n;
    }
    void *m = calloc(1, bytes ? bytes : 1);
    if (m) p->owned[p->n_owned++] = m;
    return m;
}

static void *own_cb(void *owner, size_t bytes) { return own(owner, bytes); }

static const char *own_copy(sd_plan *p, const char *text)
{
    size_t n = strlen(text ? text : "");
    char *c = own(p, n + 1);
    if (c) memcpy(c, text ? text : "", n);
    return c ? c : "";
}

/* The site of a stack as every view names it (attrib.h), owned by the plan. */
static bool site_label(sd_plan *p, const sd_snapshot *s, uint32_t stack, const char **out)
{
    *out = NULL;
    if (!stack) return true;
    if (!p->rules) {
        sd_attrib_options ao = SD_ATTRIB_OPTIONS_INIT;
        p->rules = sd_attrib_create(&ao, NULL);
        if (!p->rules) return false;
    }
    sd_site site;
    sd_attrib_site_of_stack(p->rules, s, stack, &site);
    if (site.site < 0) return true;
    char buf[512];
    size_t n = sd_site_text(s, stack, &site, buf, sizeof buf);
    if (n >= sizeof buf) n = sizeof buf - 1;
    char *copy = own(p, n + 1);
    if (!copy) return false;
    memcpy(copy, buf, n);
    *out = copy;
    return true;
}

/* The allocator run names no site: the plan reports its peak, not its OOMs' sites. */
static bool no_label(void *owner, uint32_t stack, const char **out)
{
    (void)owner;
    (void)stack;
    *out = NULL;
    return true;
}

/* ---- aligning the recordings ---- */

/* An allocation's identity across recordings: its frames' files and function names
 * (Python frames when it has any, else every frame), not their lines: an edit above the
 * call moves every line below it, and the allocation is still the same one. */
static bool is_python(const char *file)
{
    size_t n = strlen(file);
    return n > 3 && memcmp(file + n - 3, ".py", 3) == 0;
}

static uint64_t stack_key(const sd_snapshot *s, uint32_t stack)
{
    size_t n = 0;
    const uint32_t *frames = stack ? sd_snapshot_stack(s, stack, &n) : NULL;
    bool python = false;
    for (size_t k = 0; k < n && !python; k++) python = is_python(sd_snapshot_frame(s, frames[k])->filename);
    uint64_t h = SDP_HASH_SEED;
    for (size_t k = 0; k < n; k++) {
        const sd_frame *f = sd_snapshot_frame(s, frames[k]);
        if (python && !is_python(f->filename)) continue;
        h = sdp_hash_bytes(h, f->filename, strlen(f->filename) + 1);
        h = sdp_hash_bytes(h, f->name, strlen(f->name) + 1);
    }
    return h;
}

typedef struct arec {
    uint64_t key;     /* stack_key */
    uint64_t size;
    size_t entry;     /* in its recording's trace */
} arec;

static int cmp_arec(const void *a, const void *b)
{
    const arec *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* The allocs of d by (key, order): records of one key are consecutive, in trace order,
 * so the k-th of a run is that site's k-th allocation. */
static arec *alloc_records(const sd_snapshot *s, const sd_cuda_device *d, size_t *n)
{
    uint64_t *keys = calloc(sd_snapshot_stack_count(s) + 1, sizeof *keys);
    arec *r = malloc((d->n_trace ? d->n_trace : 1) * sizeof *r);
    if (!keys || !r) {
        free(keys);
        free(r);
        return NULL;
    }
    size_t m = 0;
    for (size_t i = 0; i < d->n_trace; i++) {
        const sd_trace_entry *e = &d->trace[i];
        if (e->action != SD_ACT_ALLOC) continue;
        uint32_t st = e->stack < sd_snapshot_stack_count(s) ? e->stack : 0;
        if (!keys[st]) keys[st] = stack_key(s, st) | 1;   /* 0: not computed yet */
        r[m++] = (arec){keys[st], e->size, i};
    }
    free(keys);
    qsort(r, m, sizeof *r, cmp_arec);
    *n = m;
    return r;
}

/* ---- fitting one allocation's size ---- */

typedef struct point {
    double x, y;
    double dist;      /* |x - target|: qsort takes no context, so the point carries it */
} point;

/* Nearest the target first; of two as near, the larger size (as the base is chosen). */
static int cmp_near(const void *a, const void *b)
{
    const point *x = a, *y = b;
    if (x->dist != y->dist) return x->dist < y->dist ? -1 : 1;
    return x->x > y->x ? -1 : x->x < y->x;
}

static double power_through(point a, point b, double x)
{
    if (a.y <= 0 || b.y <= 0) return b.y + (b.y - a.y) / (b.x - a.x) * (x - b.x);
    double e = log(b.y / a.y) / log(b.x / a.x);
    return b.y * pow(x / b.x, e);
}

static double quadratic_through(const point *p, double x)
{
    double v = 0;
    for (int i = 0; i < 3; i++) {
        double l = p[i].y;
        for (int j = 0; j < 3; j++)
            if (j != i) l *= (x - p[j].x) / (p[i].x - p[j].x);
        v += l;
    }
    return v;
}

/* Predict the size at `at` from m >= 2 points (sorted nearest first by the caller).
 * A power law through the two nearest; with a third point it must predict that one within
 * the allocator's rounding, else the quadratic through the three nearest. */
static double fit(const point *p, size_t m, double at, sd_plan_fit *how)
{
    bool same = true;
    for (size_t k = 1; k < m; k++) same = same && p[k].y == p[0].y;
    if (same) {
        *how = SD_PLAN_CONSTANT;
        return p[0].y;
    }
    *how = SD_PLAN_POWER;
    double v = power_through(p[1], p[0], at);
    if (m < 3) return v;
    double check = power_through(p[1], p[0], p[2].x);
    if (fabs(check - p[2].y) <= fmax(512.0, 0.01 * p[2].y)) return v;
    *how = SD_PLAN_QUADRATIC;
    return quadratic_through(p, at);
}

/* ---- one device ---- */

typedef struct side {
    const sd_snapshot *s;
    const sd_cuda_device *d;
    double x;
    arec *recs;
    size_t n_recs;
    size_t rec;       /* its index among the recordings given */
} side;

static const sd_cuda_device *device_of(const sd_snapshot *s, int64_t ordinal)
{
    for (size_t i = 0; i < sd_snapshot_device_count(s); i++) {
        const sd_cuda_device *d = sd_snapshot_device(s, i);
        if (d->device == ordinal) return d;
    }
    return NULL;
}

/* Predicted sizes of the base trace's allocs (pred[entry]); fills the fit counts. */
static sd_status predict_sizes(side *sides, size_t n, size_t base, double at, uint64_t *pred,
                               sd_plan_device *out, sd_error *err)
{
    size_t *pos = calloc(n, sizeof *pos);
    point *pts = malloc(n * sizeof *pts);
    if (!pos || !pts) {
        free(pos);
        free(pts);
        return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    }
    const side *b = &sides[base];
    size_t aligned = 0;
    sd_status st = SD_OK;
    size_t ord = 0;   /* r's rank among its site's allocations: records of a key are consecutive */
    for (size_t k = 0; k < b->n_recs && st == SD_OK; k++) {
        const arec *r = &b->recs[k];
        ord = k && b->recs[k - 1].key == r->key ? ord + 1 : 0;
        size_t m = 0;
        bool rounded = true;
        for (size_t j = 0; j < n; j++) {
            const side *o = &sides[j];
            if (j == base) {
                pts[m++] = (point){o->x, (double)r->size, 0};
                rounded = rounded && r->size % SDP_KMIN_BLOCK == 0;
                continue;
            }
            /* o's records of this key start at the first with key >= r->key */
            while (pos[j] < o->n_recs && o->recs[pos[j]].key < r->key) pos[j]++;
            size_t q = pos[j] + ord;
            if (q < o->n_recs && o->recs[q].key == r->key) {
                pts[m++] = (point){o->x, (double)o->recs[q].size, 0};
                rounded = rounded && o->recs[q].size % SDP_KMIN_BLOCK == 0;
            }
        }
        sd_plan_fit how = SD_PLAN_UNALIGNED;
        double v = (double)r->size;
        if (m >= 2) {
            aligned++;
            for (size_t q = 0; q < m; q++) pts[q].dist = fabs(pts[q].x - at);
            qsort(pts, m, sizeof *pts, cmp_near);
            v = fit(pts, m, at, &how);
        }
        out->fit_counts[how]++;
        if (!(v >= 0) || v > 0x1p60) {
            st = sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                          "the fit cannot reach %g: the allocation at trace entry %zu of the "
                          "recording at %g would be %.0f bytes",
                          at, r->entry, b->x, v);
            break;
        }
        uint64_t u = (uint64_t)llround(v);
        if (rounded) u = (u + SDP_KMIN_BLOCK - 1) / SDP_KMIN_BLOCK * SDP_KMIN_BLOCK;
        pred[r->entry] = u;
    }
    free(pos);
    free(pts);
    if (st == SD_OK && b->n_recs && aligned * 100 < b->n_recs * MIN_ALIGNED_PCT)
        st = sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                      "only %zu of the %zu allocations of device %lld align across the "
                      "recordings: are they one program at different sizes?",
                      aligned, b->n_recs, (long long)b->d->device);
    out->allocs = b->n_recs;
    return st;
}

static bool is_free(uint8_t a) { return a == SD_ACT_FREE_REQUESTED || a == SD_ACT_FREE_COMPLETED; }

/* Walk the base trace with the predicted sizes by the peak's rules (docs/peak.md), up to
 * entry `stop` (SIZE_MAX: all), leaving the live blocks in `live` (address -> alloc entry,
 * or RELEASED). pred[i] is an alloc's size, and a free's when it releases a block from
 * before recording. @return false when out of memory. */
static bool walk(const sd_cuda_device *d, const uint64_t *pred, uint64_t start, size_t stop,
                 sdp_amap *live, uint64_t *peak, size_t *peak_entry, uint64_t *now)
{
    uint64_t cur = start;
    *peak = 0;
    *peak_entry = 0;
    for (size_t i = 0; i < d->n_trace && i <= stop; i++) {
        const sd_trace_entry *e = &d->trace[i];
        if (e->action == SD_ACT_ALLOC) {
            uint32_t v = sdp_amap_get(live, e->addr);
            if (v != SDP_NIL && v != RELEASED) cur -= pred[v];   /* its free was not recorded */
            if (!sdp_amap_put(live, e->addr, (uint32_t)i)) return false;
            cur += pred[i];
            if (cur > *peak) {
                *peak = cur;
                *peak_entry = i;
            }
        } else if (is_free(e->action)) {
            uint32_t v = sdp_amap_get(live, e->addr);
            if (v == RELEASED) continue;
            /* a block from before recording: pred[i] is its size (the free's, or scaled) */
            cur -= v == SDP_NIL ? (pred[i] <= cur ? pred[i] : cur) : pred[v];
            if (!sdp_amap_put(live, e->addr, RELEASED)) return false;
        }
    }
    *now = cur;
    return true;
}

/* ---- the sites at the predicted peak ---- */

typedef struct live_blk { uint32_t stack; uint64_t bytes, base_bytes; } live_blk;

static int cmp_live_stack(const void *a, const void *b)
{
    const live_blk *x = a, *y = b;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_site_bytes(const void *a, const void *b)
{
    const sd_plan_site *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* By label (unlabelled last, by stack), so that equal labels are neighbours. */
static int cmp_site_label(const void *a, const void *b)
{
    const sd_plan_site *x = a, *y = b;
    if (!x->label || !y->label) {
        if (x->label || y->label) return x->label ? -1 : 1;
        return x->stack < y->stack ? -1 : x->stack > y->stack;
    }
    int c = strcmp(x->label, y->label);
    return c ? c : (x->stack < y->stack ? -1 : x->stack > y->stack);
}

/* Group the trace blocks live in `live` by stack; what the trace did not allocate (live
 * before recording) is the site of stack 0. */
static sd_status peak_sites(sd_plan *p, const sd_snapshot *s, const sd_cuda_device *d,
                            const uint64_t *pred, const sdp_amap *live, uint64_t live_bytes,
                            size_t keep, sd_plan_device *out)
{
    live_blk *b = malloc((live->count + 1) * sizeof *b);
    if (!b) return SD_ENOMEM;
    size_t n = 0;
    uint64_t traced = 0, traced_base = 0;
    for (size_t k = 0; k < live->cap; k++) {
        uint32_t v = live->slots[k].val;
        if (v == SDP_NIL || v == RELEASED) continue;
        b[n++] = (live_blk){d->trace[v].stack, pred[v], d->trace[v].size};
        traced += pred[v];
        traced_base += d->trace[v].size;
    }
    qsort(b, n, sizeof *b, cmp_live_stack);
    sd_plan_site *sites = own(p, (n + 1) * sizeof *sites);
    if (!sites) {
        free(b);
        return SD_ENOMEM;
    }
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        if (!m || sites[m - 1].stack != b[k].stack || !b[k].stack) sites[m++].stack = b[k].stack;
        sites[m - 1].bytes += b[k].bytes;
        sites[m - 1].base_bytes += b[k].base_bytes;
        sites[m - 1].blocks++;
    }
    if (live_bytes > traced) {
        uint64_t before = live_bytes - traced;
        sites[m++] = (sd_plan_site){0, NULL, before, 0, before};
    }
    (void)traced_base;
    free(b);
    /* one row per label: stacks that differ below the user's frame are one site to a user */
    for (size_t k = 0; k < m; k++)
        if (!site_label(p, s, sites[k].stack, &sites[k].label)) return SD_ENOMEM;
    qsort(sites, m, sizeof *sites, cmp_site_label);
    size_t u = 0;
    for (size_t k = 0; k < m; k++) {
        if (u && sites[k].label && sites[u - 1].label && !strcmp(sites[k].label, sites[u - 1].label)) {
            sites[u - 1].bytes += sites[k].bytes;
            sites[u - 1].base_bytes += sites[k].base_bytes;
            sites[u - 1].blocks += sites[k].blocks;
            continue;
        }
        sites[u++] = sites[k];
    }
    m = u;
    qsort(sites, m, sizeof *sites, cmp_site_bytes);
    if (m > keep) m = keep;
    out->sites = sites;
    out->n_sites = m;
    return SD_OK;
}

/* ---- the allocator run over the predicted trace ---- */

/* The predicted trace run through the allocator model under the recorded settings:
 * its peak reserved (with no limit); with a capacity, run again under it for the first
 * request that would fail (*oom_entry SIZE_MAX: none). */
static sd_status model_run(sd_plan *p, const sd_snapshot *s, const sd_cuda_device *d,
                           const uint64_t *pred, uint64_t capacity, bool *ran,
                           uint64_t *peak_reserved, size_t *oom_entry)
{
    *ran = false;
    *peak_reserved = 0;
    *oom_entry = SIZE_MAX;
    sd_trace_entry *t = malloc((d->n_trace ? d->n_trace : 1) * sizeof *t);
    if (!t) return SD_ENOMEM;
    memcpy(t, d->trace, d->n_trace * sizeof *t);
    /* Frees carry their block's size: keep them in step with the predicted allocs. */
    sdp_amap at = {0};
    if (!sdp_amap_init(&at, 1024)) {
        free(t);
        return SD_ENOMEM;
    }
    bool ok = true;
    for (size_t i = 0; i < d->n_trace && ok; i++) {
        if (t[i].action == SD_ACT_ALLOC) {
            t[i].size = pred[i];
            ok = sdp_amap_put(&at, t[i].addr, (uint32_t)i);
        } else if (is_free(t[i].action)) {
            uint32_t v = sdp_amap_get(&at, t[i].addr);
            t[i].size = v != SDP_NIL ? pred[v] : pred[i];
        }
    }
    sdp_amap_free(&at);
    sd_alloc_conf rec;
    sd_alloc_conf_recorded(s, &rec);
    sdp_alloc_run run = {s, &rec, NULL, 1, p, own_cb, no_label};
    sd_cuda_device dev = *d;
    dev.trace = t;
    sd_replay_options ro = SD_REPLAY_OPTIONS_INIT;
    ro.timeline_points = 16;
    sd_replay_device rd;
    memset(&rd, 0, sizeof rd);
    sd_status st = ok ? sdp_alloc_run_device(&run, &dev, &ro, &rd) : SD_ENOMEM;
    if (st == SD_OK && rd.n_configs) {
        *ran = true;
        *peak_reserved = rd.configs[0].peak_reserved_bytes;
    }
    if (st == SD_OK && capacity) {
        ro.capacity = capacity;
        memset(&rd, 0, sizeof rd);
        st = sdp_alloc_run_device(&run, &dev, &ro, &rd);
        if (st == SD_OK && rd.n_configs && rd.configs[0].n_ooms)
            *oom_entry = rd.configs[0].ooms[0].entry;
    }
    free(t);
    return st;
}

/* fits, headroom: the model's run under the capacity and the predicted peak reserved
 * (allocated when the reserved is unknown). */
static void judge_fit(sd_plan_device *out, uint64_t capacity)
{
    if (!capacity) return;
    uint64_t need = out->reserved_known ? out->predicted_peak_reserved_bytes
                                        : out->predicted_peak_allocated_bytes;
    out->fits_known = true;
    out->fits = !out->oom_predicted && need <= capacity;
    out->headroom_bytes = (int64_t)capacity - (int64_t)need;
}

/* The predicted peak allocated and what is live there (the walk, twice), and its site. */
static sd_status peak_of(sd_plan *p, const sd_snapshot *s, const sd_cuda_device *d,
                         const uint64_t *pred, const sd_plan_options *o, sd_plan_device *out)
{
    sdp_amap live = {0};
    uint64_t now = 0, peak2 = 0;
    size_t entry2 = 0;
    sd_status st = sdp_amap_init(&live, 1024) ? SD_OK : SD_ENOMEM;
    if (st == SD_OK && !walk(d, pred, out->start_bytes, SIZE_MAX, &live,
                             &out->predicted_peak_allocated_bytes, &out->peak_entry, &now))
        st = SD_ENOMEM;
    sdp_amap_free(&live);
    /* again, up to the peak: what is live there */
    if (st == SD_OK && !sdp_amap_init(&live, 1024)) st = SD_ENOMEM;
    if (st == SD_OK && !walk(d, pred, out->start_bytes, out->peak_entry, &live, &peak2, &entry2, &now))
        st = SD_ENOMEM;
    size_t keep = o && o->top_sites ? o->top_sites : DEFAULT_SITES;
    if (st == SD_OK) st = peak_sites(p, s, d, pred, &live, now, keep, out);
    sdp_amap_free(&live);
    if (st == SD_OK && out->predicted_peak_allocated_bytes) {
        out->peak_stack = d->trace[out->peak_entry].stack;
        if (!site_label(p, s, out->peak_stack, &out->peak_label)) st = SD_ENOMEM;
    }
    return st;
}

static sd_status plan_device(sd_plan *p, side *sides, size_t n, double at,
                             const sd_plan_options *o, sd_plan_device *out, sd_error *err)
{
    /* the base: the recording nearest the target (the larger one on a tie) */
    size_t base = 0;
    for (size_t j = 1; j < n; j++) {
        double dj = fabs(sides[j].x - at), db = fabs(sides[base].x - at);
        if (dj < db || (dj == db && sides[j].x > sides[base].x)) base = j;
    }
    const side *b = &sides[base];
    out->device = b->d->device;
    out->base = b->rec;
    if (b->d->n_trace >= RELEASED)
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "device %lld: too many trace entries",
                        (long long)b->d->device);
    sd_peak_options po = SD_PEAK_OPTIONS_INIT;
    sd_peak *pk = sd_peak_create(b->s, &po, err);
    if (!pk) return err && err->code ? err->code : SD_ENOMEM;
    const sd_peak_device *pd = sd_peak_device_find(pk, b->d->device);
    out->start_bytes = pd ? pd->start_bytes : 0;
    sd_peak_free(pk);

    uint64_t *pred = malloc((b->d->n_trace ? b->d->n_trace : 1) * sizeof *pred);
    if (!pred) return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < b->d->n_trace; i++) pred[i] = b->d->trace[i].size;
    sd_status st = predict_sizes(sides, n, base, at, pred, out, err);
    if (st == SD_OK) st = peak_of(p, b->s, b->d, pred, o, out);
    uint64_t cap = o ? o->capacity : 0;
    if (st == SD_OK)
        st = model_run(p, b->s, b->d, pred, cap, &out->reserved_known,
                       &out->predicted_peak_reserved_bytes, &out->oom_entry);
    out->oom_predicted = out->oom_entry != SIZE_MAX;
    if (!out->oom_predicted) out->oom_entry = 0;
    free(pred);
    if (st == SD_ENOMEM && !(err && err->code)) sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    if (st == SD_OK) judge_fit(out, cap);
    return st;
}

/* The end of both constructors: a plan with no device is an error, and a failed one is
 * freed with its error said. */
static sd_plan *plan_finish(sd_plan *p, sd_status st, sd_error *err)
{
    if (st == SD_OK && !p->n_devices)
        st = sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                      "no device has a trace: record with torch.cuda.memory._record_memory_history()");
    if (st != SD_OK) {
        if (st == SD_ENOMEM && !(err && err->code)) sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        sd_plan_free(p);
        return NULL;
    }
    return p;
}

sd_plan *sd_plan_create(const sd_snapshot *const *snaps, const double *sizes, size_t n,
                        double at, const sd_plan_options *opts, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_PLAN_OPTIONS_VERSION, "sd_plan_options", err)) return NULL;
    if (n < 2) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "a plan needs two recordings or more, at different sizes");
        return NULL;
    }
    if (!(at > 0) || !isfinite(at)) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "the target size must be a positive number");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(sizes[i] > 0) || !isfinite(sizes[i])) {
            sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "size %g of recording %zu is not a positive number",
                     sizes[i], i + 1);
            return NULL;
        }
        for (size_t j = 0; j < i; j++)
            if (sizes[j] == sizes[i]) {
                sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                         "recordings %zu and %zu have the same size %g: each must be recorded at its own size",
                         j + 1, i + 1, sizes[i]);
                return NULL;
            }
        if (sd_snapshot_is_summary(snaps[i])) {
            sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                     "recording %zu is a summary, which keeps only part of the trace: plan needs the snapshot", i + 1);
            return NULL;
        }
    }
    sd_plan *p = calloc(1, sizeof *p);
    side *sides = calloc(n, sizeof *sides);
    if (!p || !sides) {
        free(p);
        free(sides);
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    p->at = at;
    p->capacity = opts ? opts->capacity : 0;
    p->n_recordings = n;
    p->sources = own(p, n * sizeof *p->sources);
    p->sizes = own(p, n * sizeof *p->sizes);
    for (size_t i = 0; p->sources && p->sizes && i < n; i++) {
        p->sizes[i] = sizes[i];
        p->sources[i] = own_copy(p, sd_snapshot_source(snaps[i]));
    }
    size_t nd = sd_snapshot_device_count(snaps[0]);
    p->devices = own(p, (nd + 1) * sizeof *p->devices);
    sd_status st = p->devices ? SD_OK : SD_ENOMEM;
    for (size_t i = 0; i < nd && st == SD_OK; i++) {
        const sd_cuda_device *d0 = sd_snapshot_device(snaps[0], i);
        if (!d0->n_trace) continue;
        size_t m = 0;
        for (size_t j = 0; j < n && st == SD_OK; j++) {
            const sd_cuda_device *d = device_of(snaps[j], d0->device);
            if (!d || !d->n_trace) continue;
            sides[m] = (side){snaps[j], d, sizes[j], NULL, 0, j};
            sides[m].recs = alloc_records(snaps[j], d, &sides[m].n_recs);
            if (!sides[m].recs) st = SD_ENOMEM;
            m++;
        }
        if (st == SD_OK && m < 2) {
            st = sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                          "device %lld has a trace in fewer than two recordings", (long long)d0->device);
        }
        if (st == SD_OK) st = plan_device(p, sides, m, at, opts, &p->devices[p->n_devices], err);
        if (st == SD_OK) p->n_devices++;
        for (size_t j = 0; j < m; j++) free(sides[j].recs);
        memset(sides, 0, n * sizeof *sides);
    }
    free(sides);
    return plan_finish(p, st, err);
}

void sd_plan_free(sd_plan *p)
{
    if (!p) return;
    sd_attrib_free(p->rules);
    for (size_t i = 0; i < p->n_owned; i++) free(p->owned[i]);
    free(p->owned);
    free(p);
}

double sd_plan_target(const sd_plan *p) { return p->at; }
const sd_plan_whatif *sd_plan_whatif_of(const sd_plan *p) { return p->is_whatif ? &p->whatif : NULL; }
uint64_t sd_plan_capacity(const sd_plan *p) { return p->capacity; }
size_t sd_plan_recording_count(const sd_plan *p) { return p->n_recordings; }
const char *sd_plan_recording_source(const sd_plan *p, size_t i)
{
    return i < p->n_recordings && p->sources ? p->sources[i] : NULL;
}
double sd_plan_recording_size(const sd_plan *p, size_t i)
{
    return i < p->n_recordings && p->sizes ? p->sizes[i] : 0;
}
const char *sd_plan_check_source(const sd_plan *p) { return p->check_source; }
size_t sd_plan_device_count(const sd_plan *p) { return p->n_devices; }
const sd_plan_device *sd_plan_device_at(const sd_plan *p, size_t i)
{
    return i < p->n_devices ? &p->devices[i] : NULL;
}

/* ---- against a real recording, and the largest size that fits ---- */

static double error_pct(uint64_t predicted, uint64_t real)
{
    return real ? 100.0 * ((double)predicted - (double)real) / (double)real : 0.0;
}

sd_status sd_plan_check(sd_plan *p, const sd_snapshot *real, sd_error *err)
{
    sd_error_clear(err);
    sd_peak_options po = SD_PEAK_OPTIONS_INIT;
    sd_peak *pk = sd_peak_create(real, &po, err);
    if (!pk) return err && err->code ? err->code : SD_ENOMEM;
    sd_replay_options ro = SD_REPLAY_OPTIONS_INIT;
    ro.timeline_points = 16;
    sd_replay *r = sd_replay_create(real, &ro, err);
    if (!r) {
        sd_peak_free(pk);
        return err && err->code ? err->code : SD_ENOMEM;
    }
    for (size_t i = 0; i < p->n_devices; i++) {
        sd_plan_device *d = &p->devices[i];
        const sd_peak_device *pd = sd_peak_device_find(pk, d->device);
        if (!pd || !pd->has_peak) continue;
        d->check_known = true;
        d->check_peak_allocated_bytes = pd->peak_bytes;
        d->check_allocated_error_pct = error_pct(d->predicted_peak_allocated_bytes, pd->peak_bytes);
        for (size_t k = 0; k < sd_replay_device_count(r); k++) {
            const sd_replay_device *rd = sd_replay_device_at(r, k);
            if (rd->device != d->device) continue;
            d->check_peak_reserved_bytes = rd->recorded_peak_reserved_bytes;
            d->check_reserved_error_pct =
                error_pct(d->predicted_peak_reserved_bytes, rd->recorded_peak_reserved_bytes);
        }
    }
    sd_replay_free(r);
    sd_peak_free(pk);
    p->check_source = own_copy(p, sd_snapshot_source(real));
    return SD_OK;
}

/* Does the plan at `at` fit the capacity on every device? -1 on error (err set). */
static int fits_at(const sd_snapshot *const *snaps, const double *sizes, size_t n, double at,
                   const sd_plan_options *o, sd_error *err)
{
    sd_plan *p = sd_plan_create(snaps, sizes, n, at, o, err);
    if (!p) return -1;
    int ok = 1;
    for (size_t i = 0; i < p->n_devices; i++) ok = ok && p->devices[i].fits;
    sd_plan_free(p);
    return ok;
}

sd_status sd_plan_largest_fit(const sd_snapshot *const *snaps, const double *sizes, size_t n,
                              const sd_plan_options *opts, double *largest, sd_error *err)
{
    sd_error_clear(err);
    *largest = 0;
    if (!opts || !opts->capacity)
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "the largest size that fits needs a capacity");
    double top = 1;
    for (size_t i = 0; i < n; i++) top = fmax(top, floor(sizes[i]));
    /* lo fits (or is 0), hi does not (or is the search's end) */
    double lo = 0, hi = 0, limit = top * 1048576.0;
    int f = fits_at(snaps, sizes, n, top, opts, err);
    if (f < 0) return err->code;
    if (f) {
        lo = top;
        for (hi = top * 2; hi <= limit; hi *= 2) {
            f = fits_at(snaps, sizes, n, hi, opts, err);
            if (f < 0) {
                /* a size the fit cannot reach is past what fits */
                if (err->code != SD_EUSAGE) return err->code;
                sd_error_clear(err);
                break;
            }
            if (!f) break;
            lo = hi;
        }
        if (hi > limit) {
            *largest = lo;
            return SD_OK;
        }
    } else {
        hi = top;
    }
    while (hi - lo > 1) {
        double mid = floor((lo + hi) / 2);
        f = fits_at(snaps, sizes, n, mid, opts, err);
        if (f < 0) {
            if (err->code != SD_EUSAGE) return err->code;
            sd_error_clear(err);
            f = 0;
        }
        if (f) lo = mid;
        else hi = mid;
    }
    *largest = lo;
    return SD_OK;
}

/* ---- one recording, what if ---- */

#define NO_FREE SIZE_MAX

/* The factor a what-if puts on a category's bytes. */
static double factor_of(const sd_plan_whatif *w, sd_category c)
{
    double k = w->batch_scale > 0 ? w->batch_scale : 1.0;
    double n = w->shard_ranks > 1 ? (double)w->shard_ranks : 1.0;
    switch (c) {
    case SD_CAT_ACTIVATIONS:
    case SD_CAT_TEMPORARIES: return k;
    case SD_CAT_OPTIMIZER_STATE: return w->zero_stage >= 1 ? 1.0 / n : 1.0;
    case SD_CAT_GRADIENTS: return w->zero_stage >= 2 ? 1.0 / n : 1.0;
    case SD_CAT_PARAMETERS: return w->zero_stage >= 3 ? 1.0 / n : 1.0;
    /* parameters and optimizer state the sizes cannot tell apart: both shard at stage 3 */
    case SD_CAT_MODEL_STATE: return w->zero_stage >= 3 ? 1.0 / n : 1.0;
    default: return 1.0;     /* pre_trace, persistent, other: not known to scale */
    }
}

static uint64_t scaled(uint64_t bytes, double f)
{
    return f == 1.0 ? bytes : (uint64_t)llround((double)bytes * f);
}

/* Each alloc's free entry (NO_FREE: live at the end), by the peak's release rule; the
 * addresses live at the end are left in `live`. */
static bool frees_of(const sd_cuda_device *d, size_t *free_of, sdp_amap *live)
{
    for (size_t i = 0; i < d->n_trace; i++) {
        const sd_trace_entry *e = &d->trace[i];
        free_of[i] = NO_FREE;
        uint32_t v = sdp_amap_get(live, e->addr);
        if (e->action == SD_ACT_ALLOC) {
            if (v != SDP_NIL && v != RELEASED) free_of[v] = i;   /* its free was not recorded */
            if (!sdp_amap_put(live, e->addr, (uint32_t)i)) return false;
        } else if (is_free(e->action) && v != RELEASED) {
            if (v != SDP_NIL) free_of[v] = i;
            if (!sdp_amap_put(live, e->addr, RELEASED)) return false;
        }
    }
    return true;
}

/* pred[] and the start for device index `di` under w: every alloc and every block from
 * before recording scaled by its category. *start_changed: a block from before
 * recording changed size. */
static sd_status scale_device(size_t di, const sd_cuda_device *d,
                              const sd_phases *ph, const sd_plan_whatif *w, uint64_t *pred,
                              sd_plan_device *out, bool *start_changed)
{
    size_t *free_of = malloc((d->n_trace ? d->n_trace : 1) * sizeof *free_of);
    sdp_amap live = {0};
    if (!free_of || !sdp_amap_init(&live, 1024) || !frees_of(d, free_of, &live)) {
        free(free_of);
        sdp_amap_free(&live);
        return SD_ENOMEM;
    }
    *start_changed = false;
    uint64_t start = out->start_bytes, largest_param = 0;
    sdp_amap seen = {0};      /* addresses released once already: a second free is not a block */
    bool ok = sdp_amap_init(&seen, 1024);
    for (size_t i = 0; ok && i < d->n_trace; i++) {
        const sd_trace_entry *e = &d->trace[i];
        pred[i] = e->size;
        sd_evidence ev;
        if (e->action == SD_ACT_ALLOC) {
            sd_block_life l = {.stack = e->stack, .stack_is_alloc = true, .has_trace = true,
                               .in_trace = true, .alloc_entry = i,
                               .freed = free_of[i] != NO_FREE, .free_entry = free_of[i]};
            sd_category c = sd_category_of(ph, di, &l, &ev);
            if (c == SD_CAT_PARAMETERS && e->size > largest_param) largest_param = e->size;
            pred[i] = scaled(e->size, factor_of(w, c));
            ok = sdp_amap_put(&seen, e->addr, 0);
        } else if (is_free(e->action) && sdp_amap_get(&seen, e->addr) == SDP_NIL) {
            /* a block from before recording, released here: decided by lifetime */
            sd_block_life l = {.stack = e->stack, .stack_is_alloc = false, .has_trace = true,
                               .freed = true, .free_entry = i};
            sd_category c = sd_category_of(ph, di, &l, &ev);
            pred[i] = scaled(e->size, factor_of(w, c));
            start = start - e->size + pred[i];
            *start_changed = *start_changed || pred[i] != e->size;
            ok = sdp_amap_put(&seen, e->addr, 0);
        }
    }
    /* the snapshot's blocks the trace did not allocate: live before recording, to the end */
    for (size_t b = 0; ok && b < d->n_blocks; b++) {
        const sd_block *bl = &d->blocks[b];
        if (bl->state != SD_BLOCK_ALLOCATED) continue;
        uint32_t v = sdp_amap_get(&live, bl->address);
        if (v != SDP_NIL && v != RELEASED) continue;
        sd_block_life l = {.stack = bl->stack, .stack_is_alloc = true, .has_trace = true,
                           .size = bl->requested_size};   /* the evidence by size */
        sd_evidence ev;
        sd_category c = sd_category_of(ph, di, &l, &ev);
        if (c == SD_CAT_PARAMETERS && bl->size > largest_param) largest_param = bl->size;
        uint64_t x = scaled(bl->size, factor_of(w, c));
        start = start - bl->size + x;
        *start_changed = *start_changed || x != bl->size;
    }
    if (ok && w->zero_stage >= 3 && w->shard_ranks > 1) {
        /* FSDP gathers a unit's full parameters before its forward and backward: at
         * least the largest parameter block, live while any unit runs */
        out->allgather_bytes = largest_param;
        start += largest_param;
        *start_changed = *start_changed || largest_param;
    }
    out->start_bytes = start;
    free(free_of);
    sdp_amap_free(&live);
    sdp_amap_free(&seen);
    return ok ? SD_OK : SD_ENOMEM;
}

static sd_status whatif_device(sd_plan *p, const sd_snapshot *s, size_t di,
                               const sd_plan_whatif *w, const sd_phases *ph,
                               const sd_plan_options *o, sd_plan_device *out, sd_error *err)
{
    const sd_cuda_device *d = sd_snapshot_device(s, di);
    out->device = d->device;
    out->base = 0;
    if (d->n_trace >= RELEASED)
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "device %lld: too many trace entries",
                        (long long)d->device);
    sd_peak_options po = SD_PEAK_OPTIONS_INIT;
    sd_peak *pk = sd_peak_create(s, &po, err);
    if (!pk) return err && err->code ? err->code : SD_ENOMEM;
    const sd_peak_device *pd = sd_peak_device_find(pk, d->device);
    out->start_bytes = pd ? pd->start_bytes : 0;
    out->recorded_peak_allocated_bytes = pd && pd->has_peak ? pd->peak_bytes : 0;
    sd_peak_free(pk);
    sd_replay_options ro = SD_REPLAY_OPTIONS_INIT;
    ro.timeline_points = 16;
    sd_replay *r = sd_replay_create(s, &ro, err);
    if (!r) return err && err->code ? err->code : SD_ENOMEM;
    for (size_t k = 0; k < sd_replay_device_count(r); k++)
        if (sd_replay_device_at(r, k)->device == d->device)
            out->recorded_peak_reserved_bytes = sd_replay_device_at(r, k)->recorded_peak_reserved_bytes;
    sd_replay_free(r);

    uint64_t *pred = malloc((d->n_trace ? d->n_trace : 1) * sizeof *pred);
    uint64_t *same = malloc((d->n_trace ? d->n_trace : 1) * sizeof *same);
    sd_status st = pred && same ? SD_OK : SD_ENOMEM;
    bool start_changed = false;
    if (st == SD_OK) st = scale_device(di, d, ph, w, pred, out, &start_changed);
    out->allocs = 0;
    for (size_t i = 0; i < d->n_trace; i++) {
        if (d->trace[i].action != SD_ACT_ALLOC) continue;
        out->allocs++;
        if (pred && pred[i] != d->trace[i].size) out->scaled_allocs++;
    }
    if (st == SD_OK) st = peak_of(p, s, d, pred, o, out);
    /* reserved: the recorded peak plus what the change moves in the model's run */
    uint64_t cap = o ? o->capacity : 0, changed = 0, unchanged = 0;
    bool ran_changed = false, ran_same = false;
    size_t oom = SIZE_MAX, no_oom = SIZE_MAX;
    for (size_t i = 0; st == SD_OK && i < d->n_trace; i++) same[i] = d->trace[i].size;
    if (st == SD_OK) st = model_run(p, s, d, pred, cap, &ran_changed, &changed, &oom);
    if (st == SD_OK) st = model_run(p, s, d, same, 0, &ran_same, &unchanged, &no_oom);
    if (st == SD_OK && ran_changed && ran_same && !start_changed) {
        out->reserved_known = true;
        int64_t moved = (int64_t)changed - (int64_t)unchanged;
        int64_t v = (int64_t)out->recorded_peak_reserved_bytes + moved;
        out->predicted_peak_reserved_bytes = v > 0 ? (uint64_t)v : 0;
    }
    out->oom_predicted = oom != SIZE_MAX;
    out->oom_entry = out->oom_predicted ? oom : 0;
    free(pred);
    free(same);
    if (st == SD_ENOMEM && !(err && err->code)) sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    if (st == SD_OK) judge_fit(out, cap);
    return st;
}

sd_plan *sd_plan_create_whatif(const sd_snapshot *s, const sd_plan_whatif *w,
                               const sd_plan_options *opts, sd_error *err)
{
    sd_error_clear(err);
    sd_plan_whatif none = SD_PLAN_WHATIF_INIT;
    if (!w) w = &none;
    if (sdp_options_check(opts, SD_PLAN_OPTIONS_VERSION, "sd_plan_options", err) ||
        sdp_options_check(w, SD_PLAN_WHATIF_VERSION, "sd_plan_whatif", err))
        return NULL;
    if (!(w->batch_scale >= 0) || !isfinite(w->batch_scale)) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "the batch scale must be a positive number");
        return NULL;
    }
    if (w->zero_stage > 3 || (w->zero_stage && w->shard_ranks < 2) ||
        (w->shard_ranks > 1 && !w->zero_stage)) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                 "sharding needs both the ranks (2 or more) and a ZeRO stage (1, 2 or 3)");
        return NULL;
    }
    if (sd_snapshot_is_summary(s)) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                 "a summary keeps only part of the trace: plan needs the snapshot itself");
        return NULL;
    }
    sd_plan *p = calloc(1, sizeof *p);
    if (!p) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    p->is_whatif = true;
    p->whatif = *w;
    p->whatif.version = SD_PLAN_WHATIF_VERSION;
    p->capacity = opts ? opts->capacity : 0;
    p->n_recordings = 1;
    p->sources = own(p, sizeof *p->sources);
    p->sizes = own(p, sizeof *p->sizes);
    if (p->sources) p->sources[0] = own_copy(p, sd_snapshot_source(s));
    size_t nd = sd_snapshot_device_count(s);
    p->devices = own(p, (nd + 1) * sizeof *p->devices);
    sd_phases *ph = sd_phases_create(s, err);
    sd_status st = p->devices && p->sources && p->sizes && ph ? SD_OK : SD_ENOMEM;
    for (size_t i = 0; i < nd && st == SD_OK; i++) {
        if (!sd_snapshot_device(s, i)->n_trace) continue;
        st = whatif_device(p, s, i, &p->whatif, ph, opts, &p->devices[p->n_devices], err);
        if (st == SD_OK) p->n_devices++;
    }
    sd_phases_free(ph);
    return plan_finish(p, st, err);
}
