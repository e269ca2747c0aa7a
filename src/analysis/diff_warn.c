/* diff_warn.c - what makes a comparison doubtful, decided here and worded by the
 * renderers: two files that share no allocation site (two programs, or an edited one), or
 * little of it; files from different devices or allocator settings; a trace whose ring
 * buffer overflowed; live memory mostly without a stack; OLD and NEW in the wrong order.
 * Definitions: docs/json-diff.md, "Warnings"; tests/truth_diff.py mirrors them.
 */
#include <stdlib.h>

#include "analysis/diff_internal.h"
#include "snapdiff/peak.h"

typedef struct warn_list {
    sd_diff_warning *items;
    size_t n;
} warn_list;

static sd_diff_warning *add(warn_list *l, sd_diff_warning_code code, int side)
{
    sd_diff_warning *w = &l->items[l->n++];
    memset(w, 0, sizeof *w);
    w->code = code;
    w->side = side;
    w->device = -1;
    return w;
}

static double pct_of(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static bool is_no_stack(const sd_diff_group *g) { return strcmp(g->key, SD_NO_STACK) == 0; }

/* Sites with live bytes on each side (`<no stack>` is no site), and those on both: by
 * the profile's keys, over all devices (a site is the same line on any device). */
static void site_warnings(const sd_diff *d, warn_list *l)
{
    const sd_profile *p = sd_diff_profile(d);
    uint64_t n_old = 0, n_new = 0, shared = 0, all = 0, bytes = 0, of_bytes = 0;
    for (size_t i = 0; i < sd_profile_key_count(p); i++) {
        const sd_profile_key *k = sd_profile_key_at(p, i);
        uint64_t ob = k->sides[0].bytes, nb = k->sides[1].bytes;
        if (strcmp(k->key, SD_NO_STACK) == 0 || (!ob && !nb)) continue;
        n_old += ob > 0;
        n_new += nb > 0;
        all++;
        of_bytes += ob + nb;
        if (ob && nb) {
            shared++;
            bytes += ob + nb;
        }
    }
    if (!n_old || !n_new) return;          /* one side has no site at all: nothing to say */
    double pct = pct_of(bytes, of_bytes);
    if (shared && pct >= SD_DIFF_FEW_SHARED_PCT) return;
    sd_diff_warning *w = add(l, shared ? SD_WARN_FEW_SHARED_SITES : SD_WARN_NO_SHARED_SITE, -1);
    w->count = shared;
    w->of_count = all;
    w->bytes = bytes;
    w->of_bytes = of_bytes;
    w->pct = pct;
}

static void device_warnings(const sd_diff *d, warn_list *l)
{
    for (size_t i = 0; i < sd_diff_device_count(d); i++) {
        const sd_diff_device *dd = sd_diff_device_at(d, i);
        if (dd->in_old == dd->in_new) continue;
        const sd_stats *st = dd->in_old ? &dd->old_stats : &dd->new_stats;
        if (!st->reserved_bytes && !st->allocated_bytes) continue;   /* no memory: no matter */
        sd_diff_warning *w = add(l, SD_WARN_DEVICES_DIFFER, dd->in_old ? 0 : 1);
        w->device = dd->device;
        w->bytes = st->allocated_bytes;
    }
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The first recorded setting that differs between two recorded settings, or NULL. */
static const char *setting_differs(const sd_allocator_settings *a, const sd_allocator_settings *b)
{
    if (!a || !b || !a->present || !b->present) return NULL;
    if (!same_str(a->alloc_conf, b->alloc_conf)) return "PYTORCH_CUDA_ALLOC_CONF";
    if (a->has_expandable_segments && b->has_expandable_segments &&
        a->expandable_segments != b->expandable_segments)
        return "expandable_segments";
    if (a->has_max_split_size && b->has_max_split_size && a->max_split_size != b->max_split_size)
        return "max_split_size";
    if (a->has_gc_threshold && b->has_gc_threshold &&
        a->garbage_collection_threshold != b->garbage_collection_threshold)
        return "garbage_collection_threshold";
    return NULL;
}

static bool key_is(const sd_setting *m, const char *name)
{
    size_t n = strlen(name);
    return m->key && m->key_len == n && memcmp(m->key, name, n) == 0;
}

/* allocator_settings.trace_alloc_overflowed (or trace_overflowed) recorded as true. */
static bool trace_overflowed(const sd_snapshot *s)
{
    const sd_allocator_settings *st = s ? sd_snapshot_allocator_settings(s) : NULL;
    const sd_setting *rec = st && st->present ? st->recorded : NULL;
    if (!rec || rec->type != SD_SETTING_DICT) return false;
    for (size_t i = 0; i < rec->n_items; i++) {
        const sd_setting *m = &rec->items[i];
        if (!key_is(m, "trace_alloc_overflowed") && !key_is(m, "trace_overflowed")) continue;
        if ((m->type == SD_SETTING_BOOL && m->b) || (m->type == SD_SETTING_INT && m->i))
            return true;
    }
    return false;
}

/* The newest time_us of any trace entry of s. */
static bool newest_time(const sd_snapshot *s, int64_t *out)
{
    bool any = false;
    for (size_t i = 0; s && i < sd_snapshot_device_count(s); i++) {
        const sd_cuda_device *dev = sd_snapshot_device(s, i);
        for (size_t k = 0; k < dev->n_trace; k++) {
            const sd_trace_entry *e = &dev->trace[k];
            if (!e->has_time || (any && e->time_us <= *out)) continue;
            *out = e->time_us;
            any = true;
        }
    }
    return any;
}

static void no_stack_warnings(const sd_diff *d, warn_list *l, bool has_old)
{
    const sd_profile *p = sd_diff_profile(d);
    uint64_t none[2] = {0, 0};
    for (size_t i = 0; i < sd_diff_group_count(d); i++) {
        const sd_diff_group *g = sd_diff_group_at(d, i);
        if (!is_no_stack(g)) continue;
        none[0] += g->old_bytes;
        none[1] += g->new_bytes;
    }
    for (int side = has_old ? 0 : 1; side < 2; side++) {
        uint64_t live = sd_profile_total(p, (size_t)side)->bytes;
        double pct = pct_of(none[side], live);
        if (!none[side] || pct <= SD_DIFF_NO_STACK_PCT) continue;
        sd_diff_warning *w = add(l, SD_WARN_MOSTLY_NO_STACK, side);
        w->bytes = none[side];
        w->of_bytes = live;
        w->pct = pct;
    }
}

size_t sdp_diff_warning_cap(const sd_diff *d)
{
    return SD_WARN_COUNT + 4 + sd_diff_device_count(d);   /* two per side at most, + devices */
}

size_t sdp_diff_warnings(const sd_diff *d, const sd_snapshot *old_snap,
                         const sd_snapshot *new_snap, sd_diff_warning *out)
{
    warn_list l = {out, 0};
    if (old_snap) {
        /* sites by a site-like key; whole stacks differ too easily to say anything */
        if (sd_attrib_group_by(sd_diff_attrib(d)) != SD_GROUP_STACK) site_warnings(d, &l);
        device_warnings(d, &l);
        const char *which = setting_differs(sd_snapshot_allocator_settings(old_snap),
                                            sd_snapshot_allocator_settings(new_snap));
        if (which) add(&l, SD_WARN_SETTINGS_DIFFER, -1)->setting = which;
    }
    for (int side = old_snap ? 0 : 1; side < 2; side++)
        if (trace_overflowed(side ? new_snap : old_snap)) add(&l, SD_WARN_TRACE_OVERFLOWED, side);
    no_stack_warnings(d, &l, old_snap != NULL);
    int64_t t_old = 0, t_new = 0;
    if (old_snap && newest_time(old_snap, &t_old) && newest_time(new_snap, &t_new) &&
        t_new < t_old) {
        sd_diff_warning *w = add(&l, SD_WARN_SWAPPED, -1);
        w->old_time_us = t_old;
        w->new_time_us = t_new;
    }
    const sd_peak_diff *pk = sd_diff_peak(d);
    unsigned sides = pk ? sd_peak_diff_sides(pk) : 0;
    if (sides == 1 || sides == 2) add(&l, SD_WARN_PEAK_ONE_SIDE, sides == 1 ? 0 : 1);
    return l.n;
}

const char *sd_diff_warning_name(sd_diff_warning_code c)
{
    switch (c) {
    case SD_WARN_NO_SHARED_SITE: return "no_shared_site";
    case SD_WARN_FEW_SHARED_SITES: return "few_shared_sites";
    case SD_WARN_DEVICES_DIFFER: return "devices_differ";
    case SD_WARN_SETTINGS_DIFFER: return "settings_differ";
    case SD_WARN_TRACE_OVERFLOWED: return "trace_overflowed";
    case SD_WARN_MOSTLY_NO_STACK: return "mostly_no_stack";
    case SD_WARN_SWAPPED: return "swapped";
    case SD_WARN_PEAK_ONE_SIDE: return "peak_one_side";
    case SD_WARN_COUNT: break;
    }
    return NULL;
}
