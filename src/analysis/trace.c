/* trace.c - the replay of `device_traces` (trace.h).
 *
 * One pass per device over the window's entries: the walk of trace_walk.h (a table of
 * addresses, one record per address ever seen, its state toggled: nothing, live block,
 * pending free; the rules peak.c uses too) and figures per stack id. Keys are computed afterwards, once per stack that allocated, so the string
 * work is per distinct stack, never per entry.
 */
#include <stdlib.h>

#include "base/base.h"
#include "analysis/diff_internal.h"
#include "analysis/trace_walk.h"
#include "snapdiff/peak.h"
#include "snapdiff/trace.h"

typedef struct stack_fig {
    uint64_t alive_bytes, alive_count, alloc_bytes, alloc_count, free_bytes, free_count;
} stack_fig;

typedef struct group_rec {
    sd_trace_group pub;
    uint64_t hash;
    uint64_t rep_bytes, rep_alloc;
} group_rec;

/* A device as the trace keeps it: the public part first (sd_trace_device_at hands out its
 * address), the per-action figures after it, out of the public layout because they grow
 * with sd_trace_action. */
typedef struct trace_dev {
    sd_trace_device pub;
    uint64_t count[SD_ACT_COUNT];           /* entries of each action in the window */
    uint64_t segment_bytes[SD_ACT_COUNT];   /* bytes of segment_alloc/free/map/unmap */
} trace_dev;

static trace_dev *dev_of(sd_trace_device *dv) { return (trace_dev *)dv; }

struct sd_trace {
    const sd_snapshot *snap;
    sd_attrib *attrib;
    sd_peak *peak;           /* the one peak, over the same window */
    sdp_arena arena;
    trace_dev *devices;
    size_t n_devices;
    /* scratch, reused per device */
    sdp_trace_walk walk;
    stack_fig *stacks;       /* per stack id */
    size_t n_stacks;
    group_rec *groups;
    size_t n_groups, groups_cap;
    sdp_htab group_index;
    const sd_frame **frames;
    size_t frames_cap;
    char *key;
    size_t key_cap;
};

const char *sd_trace_warning_name(sd_trace_warning_code c)
{
    static const char *const names[] = {"ring-buffer-overflowed", "starts-mid-run",
                                        "unrecorded-free", "no-times", "frees-missing"};
    return (unsigned)c < SDP_ARRAY_LEN(names) ? names[c] : "unknown";
}

const char *sd_trace_phase_kind_name(sd_trace_phase_kind k)
{
    static const char *const names[] = {"start", "snapshot", "annotate", "scope-start",
                                        "scope-end"};
    return (unsigned)k < SDP_ARRAY_LEN(names) ? names[k] : "unknown";
}

#define DOING "replaying the trace"   /* what sdp_nomem says failed */

/* ---------- phases ---------- */

static sd_status phase_open(sd_trace *t, sd_trace_phase **ph, size_t *n, size_t *cap,
                            sd_trace_phase_kind kind, const char *name, size_t entry,
                            uint64_t live)
{
    if (*n && (*ph)[*n - 1].n_entries == 0) {    /* an empty phase: the new marker wins */
        (*ph)[*n - 1].kind = kind;
        (*ph)[*n - 1].name = name;
        return SD_OK;
    }
    if (sdp_grow((void **)ph, cap, *n + 1, sizeof **ph, &t->arena)) return SD_ENOMEM;
    sd_trace_phase *p = &(*ph)[(*n)++];
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->name = name;
    p->first_entry = entry;
    p->live_start = p->live_end = live;
    return SD_OK;
}

/* An external annotation of the device being replayed, sorted by time. */
typedef struct ann_ref { int64_t time_us; size_t index; } ann_ref;

static int cmp_ann(const void *a, const void *b)
{
    const ann_ref *x = a, *y = b;
    if (x->time_us != y->time_us) return x->time_us < y->time_us ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* ---------- keys ---------- */

static uint64_t key_hash_of_id(const void *ctx, uint32_t id)
{
    return ((const sd_trace *)ctx)->groups[id].hash;
}

/* The frames of `stack` into t->frames. */
static sd_status load_frames(sd_trace *t, uint32_t stack, size_t *n)
{
    const uint32_t *ids = sd_snapshot_stack(t->snap, stack, n);
    if (sdp_grow((void **)&t->frames, &t->frames_cap, *n ? *n : 1, sizeof *t->frames, &t->arena))
        return SD_ENOMEM;
    for (size_t i = 0; i < *n; i++) t->frames[i] = sd_snapshot_frame(t->snap, ids[i]);
    return SD_OK;
}

/* The key of `stack` into t->key; *focused: it passes the focus patterns. */
static sd_status stack_key(sd_trace *t, uint32_t stack, bool *focused, size_t *len)
{
    size_t n;
    if (load_frames(t, stack, &n)) return SD_ENOMEM;
    *focused = !sd_attrib_has_focus(t->attrib);
    for (size_t i = 0; i < n && !*focused; i++)
        *focused = sd_attrib_frame_focused(t->attrib, t->frames[i]);
    /* The diff's and the peak's key: with forward_frames and the stack's context, so that
     * a backward stack gets the same group in every command. */
    sdp_sbuf b = {0};
    if (!sdp_attrib_key_of_stack(t->attrib, t->snap, stack, &b)) {
        sdp_sbuf_free(&b);
        return SD_ENOMEM;
    }
    const char *k = sdp_sbuf_str(&b);
    size_t need = strlen(k);
    if (need >= t->key_cap && sdp_grow((void **)&t->key, &t->key_cap, need + 1, 1, &t->arena)) {
        sdp_sbuf_free(&b);
        return SD_ENOMEM;
    }
    memcpy(t->key, k, need + 1);
    *len = need;
    sdp_sbuf_free(&b);
    return SD_OK;
}

/* The site frame of `stack`, or NULL. */
static const sd_frame *stack_site(sd_trace *t, uint32_t stack)
{
    size_t n;
    if (load_frames(t, stack, &n) || n == 0) return NULL;
    sd_site site;
    sd_attrib_site(t->attrib, t->frames, n, &site);
    return site.site >= 0 && (size_t)site.site < n ? t->frames[site.site] : NULL;
}

static sd_status group_of(sd_trace *t, const char *key, size_t len, group_rec **out)
{
    uint64_t h = sdp_hash_bytes(SDP_HASH_SEED, key, len);
    size_t j = sdp_htab_first(&t->group_index, h);
    for (; t->group_index.slots[j]; j = sdp_htab_next(&t->group_index, j)) {
        group_rec *g = &t->groups[t->group_index.slots[j] - 1];
        if (g->hash == h && strcmp(g->pub.key, key) == 0) {
            *out = g;
            return SD_OK;
        }
    }
    if (t->n_groups >= UINT32_MAX - 1 ||
        sdp_htab_reserve_one(&t->group_index, key_hash_of_id, t) ||
        sdp_grow((void **)&t->groups, &t->groups_cap, t->n_groups + 1, sizeof *t->groups,
                 &t->arena))
        return SD_ENOMEM;
    char *copy = sdp_arena_strndup(&t->arena, key, len);
    if (!copy) return SD_ENOMEM;
    j = sdp_htab_first(&t->group_index, h);
    while (t->group_index.slots[j]) j = sdp_htab_next(&t->group_index, j);
    sdp_htab_put(&t->group_index, j, (uint32_t)t->n_groups);
    group_rec *g = &t->groups[t->n_groups++];
    memset(g, 0, sizeof *g);
    g->pub.key = copy;
    g->hash = h;
    *out = g;
    return SD_OK;
}

static int cmp_group(const void *a, const void *b)
{
    const sd_trace_group *x = a, *y = b;
    if (x->alive_bytes != y->alive_bytes) return x->alive_bytes > y->alive_bytes ? -1 : 1;
    if (x->alloc_bytes != y->alloc_bytes) return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
    return strcmp(x->key, y->key);
}

static int cmp_block(const void *a, const void *b)
{
    const sd_trace_block *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static sd_status make_groups(sd_trace *t, sd_trace_device *dv)
{
    t->n_groups = 0;
    sdp_htab_free(&t->group_index);
    if (sdp_htab_init(&t->group_index, 64, &t->arena)) return SD_ENOMEM;
    for (size_t s = 0; s < t->n_stacks; s++) {
        const stack_fig *f = &t->stacks[s];
        if (!f->alloc_count) continue;
        bool focused;
        size_t len;
        group_rec *g;
        if (stack_key(t, (uint32_t)s, &focused, &len)) return SD_ENOMEM;
        if (!focused) continue;
        if (group_of(t, t->key, len, &g)) return SD_ENOMEM;
        g->pub.alive_bytes += f->alive_bytes;
        g->pub.alive_count += f->alive_count;
        g->pub.alloc_bytes += f->alloc_bytes;
        g->pub.alloc_count += f->alloc_count;
        g->pub.free_bytes += f->free_bytes;
        g->pub.free_count += f->free_count;
        /* The representative: the stack with the most alive bytes, then allocated bytes. */
        if (g->pub.alloc_count == f->alloc_count || f->alive_bytes > g->rep_bytes ||
            (f->alive_bytes == g->rep_bytes && f->alloc_bytes > g->rep_alloc)) {
            g->pub.rep_stack = (uint32_t)s;
            g->rep_bytes = f->alive_bytes;
            g->rep_alloc = f->alloc_bytes;
        }
    }
    sd_trace_group *out = sdp_arena_alloc(&t->arena, (t->n_groups ? t->n_groups : 1) * sizeof *out);
    if (!out) return SD_ENOMEM;
    for (size_t i = 0; i < t->n_groups; i++) {
        out[i] = t->groups[i].pub;
        out[i].site = stack_site(t, out[i].rep_stack);
    }
    qsort(out, t->n_groups, sizeof *out, cmp_group);
    dv->groups = out;
    dv->n_groups = t->n_groups;
    return SD_OK;
}

/* ---------- the replay of one device ---------- */

static bool overflowed(const sd_snapshot *s)
{
    const sd_setting *rec = sd_snapshot_allocator_settings(s)->recorded;
    for (size_t i = 0; rec && rec->type == SD_SETTING_DICT && i < rec->n_items; i++) {
        const sd_setting *x = &rec->items[i];
        if (!x->key || strcmp(x->key, "trace_alloc_overflowed") != 0) continue;
        return (x->type == SD_SETTING_BOOL && x->b) || (x->type == SD_SETTING_INT && x->i != 0);
    }
    return false;
}

typedef struct replay {
    sd_trace_phase *phases;
    size_t n_phases, phases_cap;
    sd_trace_step_phase *runs;      /* the timeline by phase and step */
    size_t n_runs, runs_cap;
    uint64_t live;
    uint64_t unrecorded_count, unrecorded_bytes;
} replay;

/* A stack id of the trace, or 0 (no stack) when the snapshot has no such stack. */
static uint32_t stack_id(const sd_trace *t, uint32_t stack) { return stack < t->n_stacks ? stack : 0; }

static void release(sd_trace *t, sd_trace_device *dv, replay *r, const sdp_addr_rec *a)
{
    stack_fig *f = &t->stacks[stack_id(t, a->stack)];
    f->alive_bytes -= a->size;
    f->alive_count--;
    f->free_bytes += a->size;
    f->free_count++;
    dv->free_bytes += a->size;
    dv->free_count++;
    r->live -= a->size;
    sd_trace_phase *p = &r->phases[r->n_phases - 1];
    p->free_bytes += a->size;
    p->free_count++;
}

static sd_status step(sd_trace *t, const sd_cuda_device *d, sd_trace_device *dv, replay *r,
                      size_t i)
{
    const sd_trace_entry *e = &d->trace[i];
    uint8_t act = e->action < SD_ACT_COUNT ? e->action : SD_ACT_OTHER;
    dev_of(dv)->count[act]++;
    sdp_walk_step w;
    if (sdp_trace_walk_entry(&t->walk, e, i, &w)) return SD_ENOMEM;
    switch (act) {
    case SD_ACT_ALLOC: {
        if (w.released) {               /* its free was not recorded */
            r->unrecorded_count++;
            r->unrecorded_bytes += w.old.size;
            release(t, dv, r, &w.old);
        }
        stack_fig *f = &t->stacks[stack_id(t, e->stack)];
        f->alive_bytes += e->size;
        f->alive_count++;
        f->alloc_bytes += e->size;
        f->alloc_count++;
        dv->alloc_bytes += e->size;
        dv->alloc_count++;
        r->live += e->size;
        sd_trace_phase *p = &r->phases[r->n_phases - 1];
        p->alloc_bytes += e->size;
        p->alloc_count++;
        if (r->live > dv->window_peak_bytes) dv->window_peak_bytes = r->live;
        break;
    }
    case SD_ACT_FREE_REQUESTED:
    case SD_ACT_FREE_COMPLETED:
        if (w.released) {
            release(t, dv, r, &w.old);
        } else if (w.early) {           /* a block from before the window */
            dv->unknown_free_count++;
            dv->unknown_free_bytes += e->size;
        }
        break;
    case SD_ACT_SEGMENT_ALLOC: case SD_ACT_SEGMENT_FREE:
    case SD_ACT_SEGMENT_MAP: case SD_ACT_SEGMENT_UNMAP:
        dev_of(dv)->segment_bytes[act] += e->size;
        break;
    default:
        break;
    }
    return SD_OK;
}

/* The run of entry i by phase and step: the last one, or a new one when either changed. */
static sd_trace_step_phase *run_of(sd_trace *t, replay *r, size_t dev_index, size_t i)
{
    sd_step_phase ph;
    uint32_t stp;
    sd_phases_at(sd_peak_phases(t->peak), dev_index, i, &ph, &stp);
    sd_trace_step_phase *last = r->n_runs ? &r->runs[r->n_runs - 1] : NULL;
    if (last && last->phase == ph && last->step == stp) return last;
    if (sdp_grow((void **)&r->runs, &r->runs_cap, r->n_runs + 1, sizeof *r->runs, &t->arena))
        return NULL;
    sd_trace_step_phase *x = &r->runs[r->n_runs++];
    memset(x, 0, sizeof *x);
    x->phase = ph;
    x->step = stp;
    x->first_entry = i;
    x->live_start = x->live_end = r->live;
    return x;
}

/* Entry i into its run: what step() added to the device's counts, the live bytes after. */
static sd_status run_add(sd_trace *t, const sd_cuda_device *d, sd_trace_device *dv, replay *r,
                         size_t dev_index, size_t i)
{
    sd_trace_step_phase *x = run_of(t, r, dev_index, i);
    if (!x) return SD_ENOMEM;
    uint64_t ac = dv->alloc_count, ab = dv->alloc_bytes, fc = dv->free_count,
             fb = dv->free_bytes;
    sd_status st = step(t, d, dv, r, i);
    x->alloc_count += dv->alloc_count - ac;
    x->alloc_bytes += dv->alloc_bytes - ab;
    x->free_count += dv->free_count - fc;
    x->free_bytes += dv->free_bytes - fb;
    x->n_entries++;
    x->live_end = r->live;
    x->growth = (int64_t)(x->live_end - x->live_start);
    const sd_trace_entry *e = &d->trace[i];
    if (e->has_time) {
        if (!x->has_time) x->start_us = e->time_us;
        x->has_time = true;
        x->end_us = e->time_us;
    }
    return st;
}

/* The one peak (peak.h), computed over the same window. */
static sd_status take_peak(sd_trace *t, sd_trace_device *dv)
{
    const sd_peak_device *pd = sd_peak_device_find(t->peak, dv->device);
    if (!pd || !pd->has_peak) return SD_OK;
    dv->has_peak = true;
    dv->peak_bytes = pd->peak_bytes;
    dv->peak_entry = pd->peak_entry;
    dv->peak_has_time = pd->peak_has_time;
    dv->peak_time_us = pd->peak_time_us;
    dv->peak_stack = pd->peak_stack < t->n_stacks ? pd->peak_stack : 0;
    dv->peak_start_bytes = pd->window_start_bytes;
    dv->peak_has_phase = pd->peak_has_phase;
    dv->peak_phase = pd->peak_phase;
    dv->peak_step = pd->peak_step;
    dv->peak_categories = pd->at_peak.categories;
    dv->n_peak_categories = pd->at_peak.n_categories;
    return SD_OK;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

/* Blocks the trace leaves alive at its end (the snapshot's moment) that the snapshot's
 * segments do not hold allocated: the trace lacks their frees. torch 2.11 records
 * skip_actions nowhere, so a trace without frees is known only by this. @return true:
 * out of memory. */
static bool frees_missing(const sd_cuda_device *d, const sd_trace_block *alive, size_t n_alive,
                          uint64_t *count, uint64_t *bytes)
{
    *count = *bytes = 0;
    if (!n_alive || !d->n_segments) return false;
    uint64_t *held = malloc((d->n_blocks ? d->n_blocks : 1) * sizeof *held);
    if (!held) return true;
    size_t n = 0;
    for (size_t k = 0; k < d->n_blocks; k++)
        if (d->blocks[k].state == SD_BLOCK_ALLOCATED || d->blocks[k].state == SD_BLOCK_PENDING_FREE)
            held[n++] = d->blocks[k].address;
    qsort(held, n, sizeof *held, cmp_u64);
    for (size_t k = 0; k < n_alive; k++)
        if (!bsearch(&alive[k].addr, held, n, sizeof *held, cmp_u64)) {
            (*count)++;
            *bytes += alive[k].size;
        }
    free(held);
    return false;
}

/* The window's entries per pool_id they record (sd_trace_pool), and the live blocks' by
 * the pool of the alloc that made them. */
static sd_status tally_pools(sd_trace *t, const sd_cuda_device *d, sd_trace_device *dv,
                             size_t lo, size_t hi)
{
    size_t ns = sd_snapshot_pool_count(t->snap);
    if (!ns) {
        dv->no_pool_entries = hi - lo;
        return SD_OK;
    }
    sd_trace_pool *by = calloc(ns, sizeof *by);
    if (!by) return SD_ENOMEM;
    for (size_t i = lo; i < hi; i++) {
        const sd_trace_entry *e = &d->trace[i];
        if (!e->pool) {
            dv->no_pool_entries++;
            continue;
        }
        sd_trace_pool *p = &by[e->pool - 1];
        p->entries++;
        if (e->action == SD_ACT_ALLOC) {
            p->alloc_count++;
            p->alloc_bytes += e->size;
        } else if (e->action == SD_ACT_SEGMENT_ALLOC || e->action == SD_ACT_SEGMENT_MAP) {
            p->segment_bytes += e->size;
        }
    }
    for (size_t k = 0; k < dv->n_alive; k++) {
        size_t at = dv->alive[k].entry;
        uint16_t pool = at < d->n_trace ? d->trace[at].pool : 0;
        if (!pool) continue;
        by[pool - 1].alive_count++;
        by[pool - 1].alive_bytes += dv->alive[k].size;
    }
    size_t n = 0;
    for (size_t k = 0; k < ns; k++) n += by[k].entries != 0;
    sd_trace_pool *out = n ? sdp_arena_alloc(&t->arena, n * sizeof *out) : NULL;
    if (n && !out) {
        free(by);
        return SD_ENOMEM;
    }
    n = 0;
    for (size_t k = 0; k < ns; k++) {
        if (!by[k].entries) continue;
        out[n] = by[k];
        sd_snapshot_pool(t->snap, k, out[n].pool_id);
        n++;
    }
    free(by);
    dv->pools = out;
    dv->n_pools = n;
    return SD_OK;
}

static sd_status replay_device(sd_trace *t, size_t dev_index, sd_trace_device *dv,
                               const sd_trace_options *o, sd_error *err)
{
    const sd_cuda_device *d = sd_snapshot_device(t->snap, dev_index);
    dv->device = d->device;
    dv->total_entries = d->n_trace;
    size_t lo, hi;
    sdp_trace_window(d, &o->since, &o->until, &lo, &hi);
    dv->first_entry = lo;
    dv->n_entries = hi - lo;

    memset(t->stacks, 0, t->n_stacks * sizeof *t->stacks);
    sdp_trace_walk_expect(&t->walk, d->n_trace);   /* room in place for a long trace */
    if (sdp_trace_walk_reset(&t->walk)) return sdp_nomem(err, DOING);

    /* This device's external annotations, by time. */
    size_t n_ann = 0, ann_cap = 0;
    ann_ref *ann = NULL;
    for (size_t k = 0; k < sd_snapshot_annotation_count(t->snap); k++) {
        const sd_annotation *x = sd_snapshot_annotation(t->snap, k);
        if (!x->has_time || x->device != d->device) continue;
        if (sdp_grow((void **)&ann, &ann_cap, n_ann + 1, sizeof *ann, &t->arena)) {
            free(ann);
            return sdp_nomem(err, DOING);
        }
        ann[n_ann++] = (ann_ref){x->time_us, k};
    }
    if (n_ann > 1) qsort(ann, n_ann, sizeof *ann, cmp_ann);

    replay r = {0};
    sd_status st = phase_open(t, &r.phases, &r.n_phases, &r.phases_cap, SD_PHASE_START, NULL,
                              lo, 0);
    size_t next_ann = 0;
    bool seen_time = false;
    for (size_t i = lo; !st && i < hi; i++) {
        const sd_trace_entry *e = &d->trace[i];
        if (e->has_time) {
            /* Annotations before the window's first time are outside it. */
            while (!seen_time && next_ann < n_ann &&
                   ann[next_ann].time_us < e->time_us)
                next_ann++;
            for (; !st && next_ann < n_ann; next_ann++) {
                const sd_annotation *x = sd_snapshot_annotation(t->snap, ann[next_ann].index);
                if (x->time_us > e->time_us) break;
                st = phase_open(t, &r.phases, &r.n_phases, &r.phases_cap,
                                x->stage == SD_STAGE_START ? SD_PHASE_SCOPE_START
                                                           : SD_PHASE_SCOPE_END,
                                x->name, i, r.live);
            }
            seen_time = true;
            if (!dv->has_span) dv->first_time_us = e->time_us;
            dv->has_span = true;
            dv->last_time_us = e->time_us;
        }
        if (!st && (e->action == SD_ACT_SNAPSHOT || e->action == SD_ACT_ANNOTATE)) {
            /* an annotate entry's annotation is its user_metadata (the entry's context) */
            const char *note = e->action == SD_ACT_ANNOTATE
                                   ? sd_snapshot_stack_context(t->snap, e->stack)->user_metadata
                                   : NULL;
            st = phase_open(t, &r.phases, &r.n_phases, &r.phases_cap,
                            e->action == SD_ACT_SNAPSHOT ? SD_PHASE_SNAPSHOT : SD_PHASE_ANNOTATE,
                            note && *note ? note : NULL, i, r.live);
        }
        if (st) break;
        st = run_add(t, d, dv, &r, dev_index, i);
        sd_trace_phase *p = &r.phases[r.n_phases - 1];
        p->n_entries++;
        p->live_end = r.live;
        if (e->has_time) {
            if (!p->has_time) p->start_us = e->time_us;
            p->has_time = true;
            p->end_us = e->time_us;
        }
    }
    free(ann);
    dv->phases = r.phases;      /* malloc'd (charged to the budget); freed with the trace */
    dv->n_phases = r.n_phases;
    dv->step_phases = r.runs;   /* the same */
    dv->n_step_phases = r.n_runs;
    if (st) return sdp_nomem(err, DOING);
    for (size_t k = 0; k < r.n_phases; k++)
        r.phases[k].growth = (int64_t)(r.phases[k].live_end - r.phases[k].live_start);
    dv->alive_bytes = r.live;

    if (dv->has_span) {
        dv->span_us = sdp_i64_sub_sat(dv->last_time_us, dv->first_time_us);
        if (dv->span_us > 0) {
            double sec = (double)dv->span_us / 1e6;
            dv->has_rates = true;
            dv->allocs_per_s = (double)dv->alloc_count / sec;
            dv->alloc_bytes_per_s = (double)dv->alloc_bytes / sec;
            dv->frees_per_s = (double)dv->free_count / sec;
        }
    }

    /* The blocks alive at the end, by address. */
    size_t n_alive = 0;
    for (size_t k = 0; k < t->walk.n_addrs; k++) n_alive += t->walk.addrs[k].state == SDP_ADDR_LIVE;
    sd_trace_block *alive = sdp_arena_alloc(&t->arena, (n_alive ? n_alive : 1) * sizeof *alive);
    if (!alive) return sdp_nomem(err, DOING);
    n_alive = 0;
    for (size_t k = 0; k < t->walk.n_addrs; k++) {
        const sdp_addr_rec *a = &t->walk.addrs[k];
        if (a->state != SDP_ADDR_LIVE) continue;
        alive[n_alive++] = (sd_trace_block){.addr = a->addr, .size = a->size, .entry = a->entry,
                                            .stack = stack_id(t, a->stack)};
    }
    qsort(alive, n_alive, sizeof *alive, cmp_block);
    dv->alive = alive;
    dv->n_alive = dv->alive_count = n_alive;
    if (tally_pools(t, d, dv, lo, hi)) return sdp_nomem(err, DOING);

    /* Warnings. */
    sd_trace_warning *w = sdp_arena_alloc(&t->arena, SD_TRACE_WARNING_COUNT * sizeof *w);
    if (!w) return sdp_nomem(err, DOING);
    size_t nw = 0;
    if (overflowed(t->snap)) w[nw++] = (sd_trace_warning){SD_TRACE_OVERFLOWED, 0, 0};
    if (dv->unknown_free_count)
        w[nw++] = (sd_trace_warning){SD_TRACE_STARTS_MID_RUN, dv->unknown_free_count,
                                     dv->unknown_free_bytes};
    if (r.unrecorded_count)
        w[nw++] = (sd_trace_warning){SD_TRACE_UNRECORDED_FREE, r.unrecorded_count,
                                     r.unrecorded_bytes};
    if (dv->n_entries && !dv->has_span) w[nw++] = (sd_trace_warning){SD_TRACE_NO_TIMES, 0, 0};
    if (hi == d->n_trace) {
        uint64_t count = 0, bytes = 0;
        if (frees_missing(d, alive, n_alive, &count, &bytes)) return sdp_nomem(err, DOING);
        if (count) w[nw++] = (sd_trace_warning){SD_TRACE_FREES_MISSING, count, bytes};
    }
    dv->warnings = w;
    dv->n_warnings = nw;

    if (make_groups(t, dv)) return sdp_nomem(err, DOING);
    if (take_peak(t, dv)) return sdp_nomem(err, DOING);
    for (size_t k = 0; dv->has_peak && k < r.n_runs; k++)
        r.runs[k].has_peak = dv->peak_entry >= r.runs[k].first_entry &&
                             dv->peak_entry < r.runs[k].first_entry + r.runs[k].n_entries;
    if (dv->has_peak) {
        bool focused;
        size_t len;
        if (stack_key(t, dv->peak_stack, &focused, &len)) return sdp_nomem(err, DOING);
        dv->peak_key = sdp_arena_strndup(&t->arena, t->key, len);
        if (!dv->peak_key) return sdp_nomem(err, DOING);
        dv->peak_site = stack_site(t, dv->peak_stack);
    }
    return SD_OK;
}

/* ---------- the handle ---------- */

static sd_status trace_build(sd_trace *t, const sd_trace_options *o, sd_error *err)
{
    t->attrib = sd_attrib_create(&o->attrib, err);
    if (!t->attrib) return err ? err->code : SD_EUSAGE;
    sd_peak_options po = {.attrib = o->attrib, .since = o->since, .until = o->until,
                          .max_memory = o->max_memory};
    t->peak = sd_peak_create(t->snap, &po, err);
    if (!t->peak) return err ? err->code : SD_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < sd_snapshot_device_count(t->snap); i++)
        n += sd_snapshot_device(t->snap, i)->n_trace > 0;
    t->n_stacks = sd_snapshot_stack_count(t->snap);
    if (!t->n_stacks) t->n_stacks = 1;
    if (!sdp_arena_charge(&t->arena, (uint64_t)t->n_stacks * sizeof *t->stacks))
        return sdp_nomem(err, DOING);
    t->stacks = calloc(t->n_stacks, sizeof *t->stacks);
    t->devices = sdp_arena_alloc(&t->arena, (n ? n : 1) * sizeof *t->devices);
    if (!t->stacks || !t->devices) return sdp_nomem(err, DOING);
    memset(t->devices, 0, (n ? n : 1) * sizeof *t->devices);
    for (size_t i = 0; i < sd_snapshot_device_count(t->snap); i++) {
        const sd_cuda_device *d = sd_snapshot_device(t->snap, i);
        if (!d->n_trace) continue;
        sd_status st = replay_device(t, i, &t->devices[t->n_devices++].pub, o, err);
        if (st) return st;
    }
    return SD_OK;
}

sd_trace *sd_trace_create(const sd_snapshot *s, const sd_trace_options *opts, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_TRACE_OPTIONS_VERSION, "sd_trace_options", err)) return NULL;
    if (!s || !opts) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "sd_trace_create: no snapshot");
        return NULL;
    }
    sd_trace *t = calloc(1, sizeof *t);
    if (!t) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    t->snap = s;
    sdp_arena_init(&t->arena, opts->max_memory);
    sdp_trace_walk_init(&t->walk, &t->arena);
    if (trace_build(t, opts, err) != SD_OK) {
        sd_trace_free(t);
        return NULL;
    }
    return t;
}

void sd_trace_free(sd_trace *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n_devices; i++) {
        free((void *)t->devices[i].pub.phases);
        free((void *)t->devices[i].pub.step_phases);
    }
    sd_attrib_free(t->attrib);
    sd_peak_free(t->peak);
    sdp_trace_walk_free(&t->walk);
    sdp_htab_free(&t->group_index);
    free(t->stacks);
    free(t->groups);
    free(t->frames);
    free(t->key);
    sdp_arena_free(&t->arena);
    free(t);
}

const sd_snapshot *sd_trace_snapshot(const sd_trace *t) { return t->snap; }
const sd_attrib *sd_trace_attrib(const sd_trace *t) { return t->attrib; }
size_t sd_trace_device_count(const sd_trace *t) { return t->n_devices; }

const sd_trace_device *sd_trace_device_at(const sd_trace *t, size_t i)
{
    return i < t->n_devices ? &t->devices[i].pub : NULL;
}

uint64_t sd_trace_device_action_count(const sd_trace_device *d, sd_trace_action a)
{
    return d && (unsigned)a < SD_ACT_COUNT ? ((const trace_dev *)d)->count[a] : 0;
}

uint64_t sd_trace_device_segment_bytes(const sd_trace_device *d, sd_trace_action a)
{
    return d && (unsigned)a < SD_ACT_COUNT ? ((const trace_dev *)d)->segment_bytes[a] : 0;
}
