/* peak.c - the peak of each device (peak.h, docs/peak.md).
 *
 * One replay of the whole trace per device (trace_walk.h: the rules trace.c uses too) gives the
 * relative live bytes after each entry (allocs add, releases and frees of blocks from
 * before the trace take away), the blocks alive at the end and the frees of blocks from
 * before the trace. The blocks live when recording began are then known: the snapshot's
 * ALLOCATED blocks at no address alive at the end of the replay ("leftovers"), and those
 * early frees. Their bytes are a constant under the whole trace, so the peak entry is the
 * argmax of the relative figure. The table at an entry is a second replay up to it.
 */
#include <stdlib.h>

#include "base/base.h"
#include "diff_internal.h"
#include "trace_walk.h"
#include "levers_internal.h"
#include "snapdiff/category.h"
#include "snapdiff/peak.h"

#define KEY_UNSET UINT32_MAX
#define KEY_NONE (UINT32_MAX - 1)   /* dropped by a focus pattern */

#define ENTRY_NONE UINT32_MAX       /* a block never released in the trace */

typedef struct key_rec {
    const char *text;
    uint64_t hash;
} key_rec;

typedef struct dev_state {
    size_t index;                 /* in the snapshot's device list */
    bool phase_has[SD_STEP_PHASE_COUNT];    /* the peak of each phase, as rel and entry */
    int64_t phase_best[SD_STEP_PHASE_COUNT];
    size_t phase_entry[SD_STEP_PHASE_COUNT];
    uint32_t *leftovers; size_t n_leftovers;    /* block indices */
    size_t *early_frees; size_t n_early;        /* entry indices */
    uint32_t *released;           /* per alloc entry: the entry that released it, or
                                   * ENTRY_NONE (NULL when the trace is too long) */
    uint32_t *addr_id;            /* per entry: an alloc's address record in the walk (the
                                   * order first seen), UINT32_MAX for other actions; NULL
                                   * when the trace is too long or the budget too small.
                                   * With `released` it gives the live set at any entry
                                   * without a second replay (live_from_records). */
    size_t n_addrs;               /* the walk's address records after the whole trace */
    struct step_best { bool has; int64_t best; size_t entry; } *steps;   /* by step */
    size_t n_steps, steps_cap;
} dev_state;

typedef struct stack_acc {
    uint64_t bytes, blocks, requested;
    uint64_t cat_size;            /* the largest block's size, and its category */
    uint8_t cat;
} stack_acc;
typedef struct key_acc { uint64_t bytes, blocks, requested, rep_bytes; uint32_t rep; } key_acc;

struct sd_peak {
    const sd_snapshot *snap;
    sd_attrib *attrib;
    sdp_arena arena;
    sd_peak_device *devices;
    dev_state *states;
    size_t n_devices;
    /* keys, per stack id */
    size_t n_stacks;
    uint32_t *stack_key;
    key_rec *keys;
    size_t n_keys, keys_cap;
    sdp_htab key_index;
    const sd_frame **frames, **fwd_frames;
    uint8_t *kinds, *fwd_kinds;
    size_t frames_cap, kinds_cap, fwd_cap, fwd_kinds_cap;
    sdp_sbuf key;
    /* scratch */
    sdp_trace_walk walk;          /* the replay's address table */
    stack_acc *stacks;            /* per stack id */
    uint32_t *touched; size_t n_touched, touched_cap;
    uint32_t *ktouched; size_t n_ktouched, ktouched_cap;
    uint32_t *slot; size_t slot_cap;    /* per address record: its live alloc entry */
    /* categories (category.h) of the table being built */
    sd_phases *phases;
    sd_category_total cats[SD_CATEGORY_COUNT];
    /* the levers of the moment being tabled (levers.h), fed every live block; or NULL */
    sd_levers *visit;
    uint64_t max_memory;
};

#define DOING "finding the peak"   /* what sdp_nomem says failed */

/* ---------- keys: the diff's, with forward_frames ---------- */

static uint64_t key_hash(const char *s, size_t n)
{
    uint64_t h = sdp_hash_bytes(SDP_HASH_SEED, s, n);
    return h ^ (h >> 29);
}

static uint64_t key_hash_of_id(const void *ctx, uint32_t id)
{
    return ((const sd_peak *)ctx)->keys[id].hash;
}

static sd_status load_view(sd_peak *p, uint32_t stack, const sd_frame ***frames,
                           uint8_t **kinds, size_t *fcap, size_t *kcap, sdp_stack_view *v,
                           bool *focused)
{
    size_t n = 0;
    const uint32_t *ids = sd_snapshot_stack(p->snap, stack, &n);
    if (sdp_grow((void **)frames, fcap, n ? n : 1, sizeof **frames, &p->arena) ||
        sdp_grow((void **)kinds, kcap, n ? n : 1, 1, &p->arena))
        return SD_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const sd_frame *f = sd_snapshot_frame(p->snap, ids[i]);
        (*frames)[i] = f;
        (*kinds)[i] = (uint8_t)sd_attrib_classify(p->attrib, f);
        if (focused && !*focused) *focused = sd_attrib_frame_focused(p->attrib, f);
    }
    *v = (sdp_stack_view){*frames, *kinds, n, sd_snapshot_stack_context(p->snap, stack)};
    return SD_OK;
}

/* The stack and its forward_frames, as the attribution reads them. */
static sd_status load_stack(sd_peak *p, uint32_t stack, sdp_stack_view *v, sdp_stack_view *fwd,
                            bool *focused)
{
    *focused = !sd_attrib_has_focus(p->attrib);
    if (load_view(p, stack, &p->frames, &p->kinds, &p->frames_cap, &p->kinds_cap, v, focused))
        return SD_ENOMEM;
    uint32_t f = sd_snapshot_stack_context(p->snap, stack)->forward_stack;
    *fwd = (sdp_stack_view){NULL, NULL, 0, NULL};
    if (f && load_view(p, f, &p->fwd_frames, &p->fwd_kinds, &p->fwd_cap, &p->fwd_kinds_cap,
                       fwd, NULL))
        return SD_ENOMEM;
    fwd->ctx = NULL;
    return SD_OK;
}

static sd_status key_find(sd_peak *p, const char *text, size_t len, uint32_t *out)
{
    uint64_t h = key_hash(text, len);
    size_t j = sdp_htab_first(&p->key_index, h);
    for (; p->key_index.slots[j]; j = sdp_htab_next(&p->key_index, j)) {
        const key_rec *k = &p->keys[p->key_index.slots[j] - 1];
        if (k->hash == h && strcmp(k->text, text) == 0) {
            *out = p->key_index.slots[j] - 1;
            return SD_OK;
        }
    }
    if (p->n_keys >= KEY_NONE - 1 || sdp_htab_reserve_one(&p->key_index, key_hash_of_id, p) ||
        sdp_grow((void **)&p->keys, &p->keys_cap, p->n_keys + 1, sizeof *p->keys, &p->arena))
        return SD_ENOMEM;
    char *copy = sdp_arena_strndup(&p->arena, text, len);
    if (!copy) return SD_ENOMEM;
    p->keys[p->n_keys] = (key_rec){copy, h};
    j = sdp_htab_first(&p->key_index, h);
    while (p->key_index.slots[j]) j = sdp_htab_next(&p->key_index, j);
    sdp_htab_put(&p->key_index, j, (uint32_t)p->n_keys);
    *out = (uint32_t)p->n_keys++;
    return SD_OK;
}

/* The key id of `stack` (KEY_NONE when a focus pattern drops it), computed once. */
static sd_status key_of_stack(sd_peak *p, uint32_t stack, uint32_t *out)
{
    if (stack >= p->n_stacks) stack = 0;
    if (p->stack_key[stack] != KEY_UNSET) {
        *out = p->stack_key[stack];
        return SD_OK;
    }
    sdp_stack_view v, fwd;
    bool focused;
    if (load_stack(p, stack, &v, &fwd, &focused)) return SD_ENOMEM;
    uint32_t k = KEY_NONE;
    if (focused) {
        sdp_sbuf_reset(&p->key);
        sdp_attrib_key_view(p->attrib, &v, fwd.n ? &fwd : NULL, &p->key);
        if (p->key.failed || key_find(p, sdp_sbuf_str(&p->key), p->key.len, &k))
            return SD_ENOMEM;
    }
    p->stack_key[stack] = k;
    *out = k;
    return SD_OK;
}

static sd_status site_of_stack(sd_peak *p, uint32_t stack, sd_site *out)
{
    sdp_stack_view v, fwd;
    bool focused;
    if (load_stack(p, stack, &v, &fwd, &focused)) return SD_ENOMEM;
    sdp_attrib_site_view(&v, fwd.n ? &fwd : NULL, out);
    return SD_OK;
}

/* ---------- tables ---------- */

static void table_begin(sd_peak *p)
{
    for (size_t i = 0; i < p->n_touched; i++) p->stacks[p->touched[i]] = (stack_acc){0};
    p->n_touched = 0;
    memset(p->cats, 0, sizeof p->cats);
}

/* A live block of device index `dev`: its category, and its bytes by stack. */
static sd_status table_add(sd_peak *p, size_t dev, const sd_block_life *life, uint64_t size,
                           uint64_t requested)
{
    sd_evidence ev;
    sd_category c = sd_category_of(p->phases, dev, life, &ev);
    sd_category_total *t = &p->cats[c];
    t->bytes += size;
    t->blocks++;
    if (ev == SD_EVIDENCE_FRAMES) t->frames_bytes += size;
    else if (ev == SD_EVIDENCE_LIFETIME || ev == SD_EVIDENCE_NO_BACKWARD) t->lifetime_bytes += size;
    else if (ev == SD_EVIDENCE_SIZE) t->size_bytes += size;
    if (ev == SD_EVIDENCE_NO_BACKWARD) t->no_backward_bytes += size;
    if (p->visit && sdp_levers_add(p->visit, life, size, c)) return SD_ENOMEM;
    uint32_t stack = life->stack;
    if (stack >= p->n_stacks) stack = 0;
    stack_acc *a = &p->stacks[stack];
    if (!a->blocks) {
        if (sdp_grow((void **)&p->touched, &p->touched_cap, p->n_touched + 1,
                     sizeof *p->touched, &p->arena))
            return SD_ENOMEM;
        p->touched[p->n_touched++] = stack;
    }
    if (!a->blocks || size > a->cat_size) {
        a->cat_size = size;
        a->cat = (uint8_t)c;
    }
    a->bytes += size;
    a->blocks++;
    a->requested += requested;
    return SD_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_group(const void *a, const void *b)
{
    const sd_peak_group *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* The categories of the table, in category order, those with blocks only. */
static sd_status categories_end(sd_peak *p, sd_peak_table *out)
{
    size_t n = 0;
    for (size_t c = 0; c < SD_CATEGORY_COUNT; c++) n += p->cats[c].blocks > 0;
    sd_category_total *cats = sdp_arena_alloc(&p->arena, (n ? n : 1) * sizeof *cats);
    if (!cats) return SD_ENOMEM;
    n = 0;
    for (size_t c = 0; c < SD_CATEGORY_COUNT; c++) {
        if (!p->cats[c].blocks) continue;
        cats[n] = p->cats[c];
        cats[n++].category = (sd_category)c;
    }
    out->categories = cats;
    out->n_categories = n;
    return SD_OK;
}

/* The touched stacks summed by key into `out` (arena-owned). */
static sd_status table_end(sd_peak *p, sd_peak_table *out)
{
    memset(out, 0, sizeof *out);
    /* Stacks by id, so a representative tie goes to the lowest id. */
    if (p->n_touched > 1) qsort(p->touched, p->n_touched, sizeof *p->touched, cmp_u32);
    p->n_ktouched = 0;
    for (size_t i = 0; i < p->n_touched; i++) {
        uint32_t s = p->touched[i], k;
        const stack_acc *a = &p->stacks[s];
        out->bytes += a->bytes;
        out->blocks += a->blocks;
        if (key_of_stack(p, s, &k)) return SD_ENOMEM;
        if (k == KEY_NONE) continue;
        if (sdp_grow((void **)&p->ktouched, &p->ktouched_cap, p->n_ktouched + 1,
                     sizeof *p->ktouched, &p->arena))
            return SD_ENOMEM;
        p->ktouched[p->n_ktouched++] = k;
    }
    key_acc *acc = calloc(p->n_keys ? p->n_keys : 1, sizeof *acc);
    if (!acc) return SD_ENOMEM;
    size_t n_groups = 0;
    for (size_t i = 0; i < p->n_touched; i++) {
        uint32_t s = p->touched[i];
        uint32_t k = p->stack_key[s];
        if (k == KEY_NONE) continue;
        const stack_acc *a = &p->stacks[s];
        key_acc *g = &acc[k];
        if (!g->blocks) n_groups++;
        if (!g->blocks || a->bytes > g->rep_bytes) {
            g->rep = s;
            g->rep_bytes = a->bytes;
        }
        g->bytes += a->bytes;
        g->blocks += a->blocks;
        g->requested += a->requested;
    }
    sd_peak_group *groups = sdp_arena_alloc(&p->arena, (n_groups ? n_groups : 1) * sizeof *groups);
    if (!groups) {
        free(acc);
        return SD_ENOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < p->n_ktouched; i++) {
        uint32_t k = p->ktouched[i];
        key_acc *g = &acc[k];
        if (!g->blocks) continue;     /* already written */
        sd_peak_group *o = &groups[n++];
        memset(o, 0, sizeof *o);
        *o = (sd_peak_group){.key = p->keys[k].text, .bytes = g->bytes, .blocks = g->blocks,
                             .requested = g->requested, .rep_stack = g->rep,
                             .category = (sd_category)p->stacks[g->rep].cat};
        if (site_of_stack(p, g->rep, &o->rep_site)) {
            free(acc);
            return SD_ENOMEM;
        }
        g->blocks = 0;
    }
    free(acc);
    if (n > 1) qsort(groups, n, sizeof *groups, cmp_group);
    out->groups = groups;
    out->n_groups = n;
    return categories_end(p, out);
}

/* ---------- the replay ---------- */

/* An entry index as the per-entry tables keep it (uint32_t), ENTRY_NONE past them. */
static uint32_t entry32(size_t i) { return i < ENTRY_NONE ? (uint32_t)i : ENTRY_NONE; }

/* Live-byte arithmetic wraps (two's complement through uint64_t): a hostile size near
 * 2^63 must not be undefined behaviour, and every add is undone by its matching free. */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_neg(uint64_t size) { return (int64_t)(0 - size); }

/* One entry (index i), by the walk's rules. *delta: the change of live bytes; *early: the
 * entry freed a block from before the trace; *released: the alloc entry of the block it
 * released (ENTRY_NONE when none); *addr (when not NULL): the entry's address record. */
static sd_status replay_step(sd_peak *p, const sd_trace_entry *e, size_t i, int64_t *delta,
                             bool *early, uint32_t *released, uint32_t *addr)
{
    sdp_walk_step s;
    if (sdp_trace_walk_entry(&p->walk, e, i, &s)) return SD_ENOMEM;
    if (addr) *addr = s.id;
    *delta = 0;
    *early = s.early;
    *released = ENTRY_NONE;
    if (s.released) {
        *delta = wrap_neg(s.old.size);
        *released = entry32(s.old.entry);
    }
    if (s.early) *delta = wrap_neg(e->size);
    if (e->action == SD_ACT_ALLOC) *delta = wrap_add(*delta, (int64_t)e->size);
    return SD_OK;
}

/* What the trace knows of a block allocated in it at entry `entry`. */
static sd_block_life life_in_trace(const dev_state *ds, uint32_t stack, uint32_t entry)
{
    sd_block_life l = {.stack = stack, .stack_is_alloc = true, .has_trace = true};
    if (entry == ENTRY_NONE || !ds->released) return l;
    l.in_trace = true;
    l.alloc_entry = entry;
    l.freed = ds->released[entry] != ENTRY_NONE;
    l.free_entry = l.freed ? ds->released[entry] : 0;
    return l;
}

/* The snapshot's ALLOCATED blocks; with a trace, after walk_device_trace (whose end state says
 * which of them the trace allocated). */
static sd_status end_table(sd_peak *p, const sd_cuda_device *d, sd_peak_device *dv)
{
    table_begin(p);
    const dev_state *ds = &p->states[dv - p->devices];
    for (size_t b = 0; b < d->n_blocks; b++) {
        const sd_block *bl = &d->blocks[b];
        if (bl->state != SD_BLOCK_ALLOCATED) continue;
        dv->allocated_bytes += bl->size;
        sd_block_life l = {.stack = bl->stack, .stack_is_alloc = true, .has_trace = dv->has_trace,
                           .size = bl->requested_size ? bl->requested_size : bl->size};
        const sdp_addr_rec *r = dv->has_trace ? sdp_trace_walk_live(&p->walk, bl->address) : NULL;
        if (r) l = life_in_trace(ds, bl->stack, entry32(r->entry));
        if (table_add(p, (size_t)(dv - p->devices), &l, bl->size, bl->requested_size))
            return SD_ENOMEM;
    }
    return table_end(p, &dv->at_end);
}

/* The peak of each step seen, after the walk: a step is complete when a later one
 * follows it in the trace, or the trace ends in its optimizer run. */
static sd_status step_peaks(sd_peak *p, const sd_cuda_device *d, sd_peak_device *dv,
                            const dev_state *ds, uint64_t base)
{
    size_t n = 0;
    for (size_t k = 1; k < ds->n_steps; k++) n += ds->steps[k].has;
    if (!n) return SD_OK;
    sd_peak_step *out = sdp_arena_alloc(&p->arena, n * sizeof *out);
    if (!out) return SD_ENOMEM;
    size_t dev = (size_t)(dv - p->devices);
    sd_step_phase last_phase = SD_IN_OTHER;
    uint32_t last_step = 0;
    if (d->n_trace) sd_phases_at(p->phases, dev, d->n_trace - 1, &last_phase, &last_step);
    n = 0;
    for (size_t k = 1; k < ds->n_steps; k++) {
        if (!ds->steps[k].has) continue;
        out[n++] = (sd_peak_step){
            .step = (uint32_t)k, .bytes = base + (uint64_t)ds->steps[k].best,
            .entry = ds->steps[k].entry,
            .complete = k < last_step || (k == last_step && last_phase == SD_IN_OPTIMIZER)};
    }
    dv->step_peaks = out;
    dv->n_step_peaks = n;
    return SD_OK;
}

/* The whole trace once: the peak, the early frees and the leftovers. */
static sd_status walk_device_trace(sd_peak *p, const sd_cuda_device *d, sd_peak_device *dv,
                               dev_state *ds, const sd_peak_options *o)
{
    size_t n = d->n_trace, lo, hi;
    sdp_trace_window(d, &o->since, &o->until, &lo, &hi);
    dv->total_entries = n;
    dv->first_entry = lo;
    dv->n_entries = hi - lo;
    if (sdp_trace_walk_reset(&p->walk)) return SD_ENOMEM;
    if (n < ENTRY_NONE) {
        /* From the arena: arrays this big get a chunk of their own in huge pages (arena.c),
         * which fault 2 MiB at a time instead of 4 KiB (3,000 faults a side on 3 million
         * entries, in malloc's pages). */
        if (!(ds->released = sdp_arena_alloc(&p->arena, n * sizeof *ds->released)))
            return SD_ENOMEM;
        memset(ds->released, 0xff, n * sizeof *ds->released);   /* ENTRY_NONE */
        /* Optional: without it (a budget this small) live_table replays instead. */
        if ((ds->addr_id = sdp_arena_alloc(&p->arena, n * sizeof *ds->addr_id)) != NULL)
            memset(ds->addr_id, 0xff, n * sizeof *ds->addr_id);
    }
    int64_t rel = 0, rel_lo = 0, best = 0;
    size_t early_cap = 0;
    for (size_t i = 0; i < n; i++) {
        const sd_trace_entry *e = &d->trace[i];
        int64_t delta;
        bool early;
        uint32_t released, addr;
        if (i == lo) rel_lo = rel;
        if (replay_step(p, e, i, &delta, &early, &released, &addr)) return SD_ENOMEM;
        if (released != ENTRY_NONE && ds->released) ds->released[released] = (uint32_t)i;
        if (e->action == SD_ACT_ALLOC && ds->addr_id) ds->addr_id[i] = addr;
        rel = wrap_add(rel, delta);
        if (early) {
            if (sdp_grow((void **)&ds->early_frees, &early_cap, ds->n_early + 1,
                         sizeof *ds->early_frees, &p->arena))
                return SD_ENOMEM;
            ds->early_frees[ds->n_early++] = i;
        }
        if (e->action == SD_ACT_ALLOC && i >= lo && i < hi) {
            sd_step_phase ph;
            uint32_t step;
            sd_phases_at(p->phases, (size_t)(dv - p->devices), i, &ph, &step);
            if (step) {
                if (step >= ds->n_steps) {
                    if (sdp_grow((void **)&ds->steps, &ds->steps_cap, (size_t)step + 1,
                                 sizeof *ds->steps, &p->arena))
                        return SD_ENOMEM;
                    memset(ds->steps + ds->n_steps, 0,
                           ((size_t)step + 1 - ds->n_steps) * sizeof *ds->steps);
                    ds->n_steps = (size_t)step + 1;
                }
                struct step_best *sb = &ds->steps[step];
                if (!sb->has || rel > sb->best) *sb = (struct step_best){true, rel, i};
            }
            if (!ds->phase_has[ph] || rel > ds->phase_best[ph]) {
                ds->phase_has[ph] = true;
                ds->phase_best[ph] = rel;
                ds->phase_entry[ph] = i;
            }
            dv->window_alloc_bytes += e->size;
            if (!dv->has_peak || rel > best) {
                dv->has_peak = true;
                best = rel;
                dv->peak_entry = i;
            }
        }
    }
    if (lo >= n) rel_lo = rel;
    ds->n_addrs = p->walk.n_addrs;
    /* Leftovers: ALLOCATED blocks at no address the replay holds live at the end. */
    uint64_t base = 0;
    size_t left_cap = 0;
    for (size_t b = 0; b < d->n_blocks; b++) {
        const sd_block *bl = &d->blocks[b];
        if (bl->state != SD_BLOCK_ALLOCATED) continue;
        if (sdp_trace_walk_live(&p->walk, bl->address)) continue;
        if (sdp_grow((void **)&ds->leftovers, &left_cap, ds->n_leftovers + 1,
                     sizeof *ds->leftovers, &p->arena))
            return SD_ENOMEM;
        ds->leftovers[ds->n_leftovers++] = (uint32_t)b;
        base += bl->size;
    }
    for (size_t k = 0; k < ds->n_early; k++) base += d->trace[ds->early_frees[k]].size;
    dv->start_bytes = base;
    dv->window_start_bytes = base + (uint64_t)rel_lo;
    if (step_peaks(p, d, dv, ds, base)) return SD_ENOMEM;
    if (dv->has_peak) {
        const sd_trace_entry *e = &d->trace[dv->peak_entry];
        dv->peak_bytes = base + (uint64_t)best;
        dv->peak_has_time = e->has_time;
        dv->peak_time_us = e->has_time ? e->time_us : 0;
        dv->peak_stack = e->stack < p->n_stacks ? e->stack : 0;
        uint32_t k;
        if (key_of_stack(p, dv->peak_stack, &k)) return SD_ENOMEM;
        if (k == KEY_NONE) {
            /* Focus dropped it from the groups; the allocation still has its key. */
            sdp_stack_view v, fwd;
            bool focused;
            if (load_stack(p, dv->peak_stack, &v, &fwd, &focused)) return SD_ENOMEM;
            sdp_sbuf_reset(&p->key);
            sdp_attrib_key_view(p->attrib, &v, fwd.n ? &fwd : NULL, &p->key);
            if (p->key.failed) return SD_ENOMEM;
            dv->peak_key = sdp_arena_strndup(&p->arena, sdp_sbuf_str(&p->key), p->key.len);
            if (!dv->peak_key) return SD_ENOMEM;
        } else {
            dv->peak_key = p->keys[k].text;
        }
        if (site_of_stack(p, dv->peak_stack, &dv->peak_site)) return SD_ENOMEM;
    }
    return SD_OK;
}

/* The blocks of the trace live after entry `entry`, added to the table in the order of
 * their address records, as a replay up to `entry` would leave them in the walk's table:
 * an alloc k <= entry is live then unless released at or before `entry` (the walk of the
 * whole trace is the same walk up to `entry`, so its `released` and address records hold
 * for the prefix too, and an address holds one live block at a time). One pass over two
 * arrays of 4 bytes per entry, with no address hashing: the peak and each phase's peak
 * (the diff asks for up to five tables a side) used to replay the trace once each. */
static sd_status live_from_records(sd_peak *p, size_t i, const sd_cuda_device *d,
                                   size_t entry)
{
    const dev_state *ds = &p->states[i];
    if (sdp_grow((void **)&p->slot, &p->slot_cap, ds->n_addrs ? ds->n_addrs : 1,
                 sizeof *p->slot, &p->arena))
        return SD_ENOMEM;
    memset(p->slot, 0xff, ds->n_addrs * sizeof *p->slot);   /* ENTRY_NONE: none live */
    size_t end = entry < d->n_trace ? entry + 1 : d->n_trace;
    for (size_t k = 0; k < end; k++) {
        uint32_t a = ds->addr_id[k];
        if (a == UINT32_MAX) continue;                       /* not an alloc */
        uint32_t r = ds->released[k];
        if (r == ENTRY_NONE || r > entry) p->slot[a] = (uint32_t)k;
    }
    for (size_t a = 0; a < ds->n_addrs; a++) {
        uint32_t k = p->slot[a];
        if (k == ENTRY_NONE) continue;
        const sd_trace_entry *e = &d->trace[k];
        sd_block_life l = life_in_trace(ds, e->stack, k);
        if (table_add(p, i, &l, e->size, 0)) return SD_ENOMEM;
    }
    return SD_OK;
}

/* Live after entry `entry`: the leftovers, the early-freed blocks not yet freed, and the
 * blocks of the trace alive then (from the first walk's records when it kept them, else
 * by a replay up to `entry`). */
static sd_status live_table(sd_peak *p, size_t i, size_t entry, sd_peak_table *out)
{
    const sd_cuda_device *d = sd_snapshot_device(p->snap, p->states[i].index);
    const dev_state *ds = &p->states[i];
    bool records = ds->addr_id && ds->released;
    if (!records && sdp_trace_walk_reset(&p->walk)) return SD_ENOMEM;
    for (size_t k = 0; !records && k <= entry && k < d->n_trace; k++) {
        int64_t delta;
        bool early;
        uint32_t released;
        if (replay_step(p, &d->trace[k], k, &delta, &early, &released, NULL))
            return SD_ENOMEM;
    }
    table_begin(p);
    for (size_t k = 0; k < ds->n_leftovers; k++) {
        const sd_block *bl = &d->blocks[ds->leftovers[k]];
        sd_block_life l = {.stack = bl->stack, .stack_is_alloc = true, .has_trace = true,
                           .size = bl->requested_size ? bl->requested_size : bl->size};
        if (table_add(p, i, &l, bl->size, 0)) return SD_ENOMEM;
    }
    for (size_t k = 0; k < ds->n_early; k++) {
        if (ds->early_frees[k] <= entry) continue;
        const sd_trace_entry *e = &d->trace[ds->early_frees[k]];
        /* Allocated before recording: its entry's frames may be the free's (torch records
         * the free's stack with context "all"), so they name neither its site nor its
         * category: <no stack>, decided by lifetime. */
        sd_block_life l = {.stack = 0, .has_trace = true, .freed = true,
                           .free_entry = ds->early_frees[k]};
        if (table_add(p, i, &l, e->size, 0)) return SD_ENOMEM;
    }
    if (records) {
        if (live_from_records(p, i, d, entry)) return SD_ENOMEM;
        return table_end(p, out);
    }
    for (size_t k = 0; k < p->walk.n_addrs; k++) {
        const sdp_addr_rec *a = &p->walk.addrs[k];
        if (a->state != SDP_ADDR_LIVE) continue;
        sd_block_life l = life_in_trace(ds, a->stack, entry32(a->entry));
        if (table_add(p, i, &l, a->size, 0)) return SD_ENOMEM;
    }
    return table_end(p, out);
}

/* live_table, and the levers of that moment (levers.h, owned by the caller). */
static sd_status peak_levers(sd_peak *p, size_t i, size_t entry, sd_peak_table *out,
                             sd_levers **levers)
{
    *levers = sdp_levers_begin(p->snap, p->phases, p->attrib, i, entry, p->max_memory);
    if (!*levers) return SD_ENOMEM;
    p->visit = *levers;
    sd_status st = live_table(p, i, entry, out);
    p->visit = NULL;
    if (!st) st = sdp_levers_end(*levers);
    if (!st) st = sdp_levers_judge(*levers, false, 0, NULL, 0);
    return st;
}

sd_status sdp_peak_live_levers(sd_peak *p, size_t i, size_t entry, sd_peak_table *out,
                               sd_levers **levers)
{
    *levers = NULL;
    if (!p || i >= p->n_devices || entry >= p->devices[i].total_entries) return SD_EUSAGE;
    sd_status st = peak_levers(p, i, entry, out, levers);
    if (st) {
        sd_levers_free(*levers);
        *levers = NULL;
    }
    return st;
}

/* The peak of each phase, after walk_device_trace. */
static sd_status phase_peaks(sd_peak *p, size_t i)
{
    sd_peak_device *dv = &p->devices[i];
    const dev_state *ds = &p->states[i];
    size_t n = 0;
    for (size_t ph = 0; ph < SD_STEP_PHASE_COUNT; ph++) n += ds->phase_has[ph];
    sd_peak_phase *out = sdp_arena_alloc(&p->arena, (n ? n : 1) * sizeof *out);
    if (!out) return SD_ENOMEM;
    n = 0;
    for (size_t ph = 0; ph < SD_STEP_PHASE_COUNT; ph++) {
        if (!ds->phase_has[ph]) continue;
        sd_peak_phase *x = &out[n++];
        memset(x, 0, sizeof *x);
        x->phase = (sd_step_phase)ph;
        x->entry = ds->phase_entry[ph];
        x->bytes = dv->start_bytes + (uint64_t)ds->phase_best[ph];
        sd_phases_at(p->phases, i, x->entry, NULL, &x->step);
        if (live_table(p, i, x->entry, &x->at)) return SD_ENOMEM;
    }
    dv->phase_peaks = out;
    dv->n_phase_peaks = n;
    return SD_OK;
}

/* ---------- the handle ---------- */

static sd_status peak_build(sd_peak *p, const sd_peak_options *o)
{
    p->n_stacks = sd_snapshot_stack_count(p->snap);
    if (!p->n_stacks) p->n_stacks = 1;
    size_t nd = sd_snapshot_device_count(p->snap);
    if (!sdp_arena_charge(&p->arena, (uint64_t)p->n_stacks * (sizeof *p->stacks + 4)))
        return SD_ENOMEM;
    p->stacks = calloc(p->n_stacks, sizeof *p->stacks);
    p->stack_key = malloc(p->n_stacks * sizeof *p->stack_key);
    p->devices = sdp_arena_alloc(&p->arena, (nd ? nd : 1) * sizeof *p->devices);
    p->states = sdp_arena_alloc(&p->arena, (nd ? nd : 1) * sizeof *p->states);
    if (!p->stacks || !p->stack_key || !p->devices || !p->states ||
        sdp_htab_init(&p->key_index, 64, &p->arena))
        return SD_ENOMEM;
    for (size_t s = 0; s < p->n_stacks; s++) p->stack_key[s] = KEY_UNSET;
    size_t longest = 0;
    for (size_t i = 0; i < nd; i++)
        if (sd_snapshot_device(p->snap, i)->n_trace > longest)
            longest = sd_snapshot_device(p->snap, i)->n_trace;
    sdp_trace_walk_expect(&p->walk, longest);
    memset(p->devices, 0, (nd ? nd : 1) * sizeof *p->devices);
    memset(p->states, 0, (nd ? nd : 1) * sizeof *p->states);
    for (size_t i = 0; i < nd; i++) {
        const sd_cuda_device *d = sd_snapshot_device(p->snap, i);
        sd_peak_device *dv = &p->devices[i];
        p->states[i].index = i;
        p->n_devices = i + 1;
        dv->device = d->device;
        dv->has_trace = d->n_trace > 0;
        if (dv->has_trace && walk_device_trace(p, d, dv, &p->states[i], o)) return SD_ENOMEM;
        if (end_table(p, d, dv)) return SD_ENOMEM;
        if (!dv->has_trace) continue;
        if (dv->has_peak) {
            sd_step_phase ph;
            dv->peak_has_phase = sd_phases_at(p->phases, i, dv->peak_entry, &ph, &dv->peak_step);
            dv->peak_phase = ph;
            if (peak_levers(p, i, dv->peak_entry, &dv->at_peak, (sd_levers **)&dv->levers))
                return SD_ENOMEM;
            if (o->phase_peaks && phase_peaks(p, i)) return SD_ENOMEM;
        }
    }
    return SD_OK;
}

sd_peak *sd_peak_create(const sd_snapshot *s, const sd_peak_options *opts, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_PEAK_OPTIONS_VERSION, "sd_peak_options", err)) return NULL;
    if (!s || !opts) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "sd_peak_create: no snapshot");
        return NULL;
    }
    sd_peak *p = calloc(1, sizeof *p);
    if (!p) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    p->snap = s;
    sdp_arena_init(&p->arena, opts->max_memory);
    p->max_memory = opts->max_memory;
    sdp_trace_walk_init(&p->walk, &p->arena);
    p->attrib = sd_attrib_create(&opts->attrib, err);
    if (p->attrib) p->phases = sd_phases_create(s, err);
    if (!p->attrib || !p->phases) {
        sd_peak_free(p);
        return NULL;
    }
    if (peak_build(p, opts) != SD_OK) {
        sdp_nomem(err, DOING);
        sd_peak_free(p);
        return NULL;
    }
    return p;
}

void sd_peak_free(sd_peak *p)
{
    if (!p) return;
    sd_attrib_free(p->attrib);
    sdp_htab_free(&p->key_index);
    sdp_trace_walk_free(&p->walk);
    sdp_sbuf_free(&p->key);
    for (size_t i = 0; i < p->n_devices; i++) {
        sd_levers_free((sd_levers *)p->devices[i].levers);
        free(p->states[i].leftovers);
        free(p->states[i].early_frees);
        free(p->states[i].steps);   /* released and addr_id live in the arena */
    }
    sd_phases_free(p->phases);
    free(p->stack_key);
    free(p->stacks);
    free(p->keys);
    free(p->frames);
    free(p->kinds);
    free(p->fwd_frames);
    free(p->fwd_kinds);
    free(p->touched);
    free(p->ktouched);
    free(p->slot);
    sdp_arena_free(&p->arena);
    free(p);
}

const sd_snapshot *sd_peak_snapshot(const sd_peak *p) { return p->snap; }
const sd_phases *sd_peak_phases(const sd_peak *p) { return p->phases; }
const sd_attrib *sd_peak_attrib(const sd_peak *p) { return p->attrib; }
size_t sd_peak_device_count(const sd_peak *p) { return p->n_devices; }

const sd_peak_device *sd_peak_device_at(const sd_peak *p, size_t i)
{
    return i < p->n_devices ? &p->devices[i] : NULL;
}

const sd_peak_device *sd_peak_device_find(const sd_peak *p, int64_t device)
{
    for (size_t i = 0; i < p->n_devices; i++)
        if (p->devices[i].device == device) return &p->devices[i];
    return NULL;
}

sd_status sd_peak_live_at(sd_peak *p, size_t i, size_t entry, sd_peak_table *out,
                          sd_error *err)
{
    sd_error_clear(err);
    if (!p || i >= p->n_devices || entry >= p->devices[i].total_entries)
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "sd_peak_live_at: no such entry");
    if (live_table(p, i, entry, out)) return sdp_nomem(err, DOING);
    return SD_OK;
}

sd_status sd_peak_live_series(sd_peak *p, size_t i, uint64_t *live, size_t n, sd_error *err)
{
    sd_error_clear(err);
    if (!p || i >= p->n_devices || (n && !live))
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "sd_peak_live_series: no such device");
    const sd_cuda_device *d = sd_snapshot_device(p->snap, p->states[i].index);
    if (sdp_trace_walk_reset(&p->walk)) return sdp_nomem(err, DOING);
    int64_t cur = (int64_t)p->devices[i].start_bytes;
    for (size_t k = 0; k < d->n_trace && k < n; k++) {
        int64_t delta;
        bool early;
        uint32_t released;
        if (replay_step(p, &d->trace[k], k, &delta, &early, &released, NULL))
            return sdp_nomem(err, DOING);
        cur = wrap_add(cur, delta);
        live[k] = cur > 0 ? (uint64_t)cur : 0;
    }
    return SD_OK;
}
