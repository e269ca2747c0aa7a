/* diff_warn.c - what makes a comparison doubtful, decided here and worded by the
 * renderers: two files that share no allocation site (two programs, or an edited one), or
 * little of it; files from different devices or allocator settings; a trace whose ring
 * buffer overflowed; live memory mostly without a stack; OLD and NEW in the wrong order.
 * Definitions: docs/json-diff.md, "Warnings"; tests/truth/truth_diff.py mirrors them.
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
        /* A moved site (diff_moved.c) is one site: counted once, at its NEW key. */
        uint32_t mate = sdp_diff_moved_partner(d, i);
        if (mate != SD_PROFILE_NO_KEY && !nb) {
            of_bytes += ob;
            bytes += ob;
            continue;
        }
        all++;
        of_bytes += ob + nb;
        if (mate != SD_PROFILE_NO_KEY) {
            shared++;
            bytes += ob + nb;
        } else if (ob && nb) {
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

/* The files pair as ranks of one job: a device of OLD compared with another ordinal of NEW
 * (one device per file, diff.c). Ranks record at the same time. */
static bool paired_as_ranks(const sd_diff *d)
{
    for (size_t i = 0; i < sd_diff_device_count(d); i++) {
        const sd_diff_device *dd = sd_diff_device_at(d, i);
        if (dd->in_old && dd->in_new && dd->device != dd->device_new) return true;
    }
    return false;
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
    /* Ranks of one job run side by side: which dumped last says nothing of their order. */
    int64_t t_old = 0, t_new = 0;
    if (old_snap && !paired_as_ranks(d) && newest_time(old_snap, &t_old) &&
        newest_time(new_snap, &t_new) && t_new < t_old) {
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

/* ---- one run twice, or two runs (docs/json-diff.md, "compared_as") ---- */

/* NEW's allocated bytes with a site at sites OLD also has, in % of NEW's bytes with a
 * site; 100 when NEW has none (nothing says otherwise). By the diff's keys. */
static double shared_new_pct(const sd_diff *d)
{
    const sd_profile *p = sd_diff_profile(d);
    uint64_t all = 0, shared = 0;
    for (size_t i = 0; i < sd_profile_key_count(p); i++) {
        const sd_profile_key *k = sd_profile_key_at(p, i);
        if (strcmp(k->key, SD_NO_STACK) == 0) continue;
        all += k->sides[1].bytes;
        if (k->sides[0].bytes || sdp_diff_moved_partner(d, i) != SD_PROFILE_NO_KEY)
            shared += k->sides[1].bytes;
    }
    return all ? pct_of(shared, all) : 100.0;
}

enum { SCRIPTS_MAX = 32 };

typedef struct script_set {
    const char *file[SCRIPTS_MAX];
    size_t n;
    bool overflow;            /* too many to compare: say nothing */
} script_set;

/* The files of the outermost user frame of every stack of s (the script that ran). */
static void scripts_of(const sd_attrib *a, const sd_snapshot *s, script_set *set)
{
    for (uint32_t id = 1; id < sd_snapshot_stack_count(s) && !set->overflow; id++) {
        size_t n = 0;
        const uint32_t *fr = sd_snapshot_stack(s, id, &n);
        const sd_frame *outer = NULL;
        for (size_t k = n; k-- > 0 && !outer;) {
            const sd_frame *f = sd_snapshot_frame(s, fr[k]);
            if (f && sd_attrib_classify(a, f) == SD_FRAME_USER) outer = f;
        }
        if (!outer) continue;
        size_t j = 0;
        while (j < set->n && strcmp(set->file[j], outer->filename) != 0) j++;
        if (j < set->n) continue;
        if (set->n == SCRIPTS_MAX) set->overflow = true;
        else set->file[set->n++] = outer->filename;
    }
}

/* Both sides name their scripts and no script is on both. */
static bool scripts_differ(const sd_attrib *a, const sd_snapshot *o, const sd_snapshot *n)
{
    script_set so = {.n = 0}, sn = {.n = 0};
    scripts_of(a, o, &so);
    scripts_of(a, n, &sn);
    if (so.overflow || sn.overflow || !so.n || !sn.n) return false;
    for (size_t i = 0; i < so.n; i++)
        for (size_t j = 0; j < sn.n; j++)
            if (strcmp(so.file[i], sn.file[j]) == 0) return false;
    return true;
}

/* The trace holds an allocation made in a forward (its site a user line, not in the
 * backward) and one made in the backward (an autograd node, or the backward of a line). */
static bool covers_a_step(const sd_attrib *a, const sd_snapshot *s)
{
    bool fwd = false, bwd = false;
    for (size_t i = 0; i < sd_snapshot_device_count(s); i++) {
        const sd_cuda_device *dev = sd_snapshot_device(s, i);
        for (size_t k = 0; k < dev->n_trace && !(fwd && bwd); k++) {
            const sd_trace_entry *e = &dev->trace[k];
            if (e->action != SD_ACT_ALLOC || !e->stack) continue;
            sd_site st;
            sd_attrib_site_of_stack(a, s, e->stack, &st);
            if (st.backward || st.how == SD_SITE_AUTOGRAD || st.how == SD_SITE_ACCUMULATE_GRAD)
                bwd = true;
            else if (st.is_user && st.how == SD_SITE_FRAME)
                fwd = true;
        }
    }
    return fwd && bwd;
}

static uint64_t magnitude(int64_t v) { return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; }

/* The peaks moved more than twice as much as allocated at the end: the difference is in
 * the transient (a setting changed), not in what stays (a leak moves both alike). */
static bool peaks_moved_more(const sd_diff *d)
{
    const sd_peak_diff *pd = sd_diff_peak(d);
    size_t n = pd ? sd_peak_diff_device_count(pd) : 0;
    if (!n) return false;
    int64_t peak = 0;
    for (size_t i = 0; i < n; i++) peak += sd_peak_diff_device_at(pd, i)->delta_bytes;
    uint64_t end = magnitude(sd_diff_totals_of(d)->delta.allocated);
    return magnitude(peak) / 2 > end;
}

void sdp_diff_compare(const sd_diff *d, const sd_snapshot *old_snap,
                      const sd_snapshot *new_snap, int at, sd_diff_comparison *out)
{
    memset(out, 0, sizeof *out);
    out->shared_new_pct = 100.0;
    if (!old_snap) return;
    out->ranks = paired_as_ranks(d);
    const sd_attrib *a = sd_diff_attrib(d);
    if (sd_attrib_group_by(a) != SD_GROUP_STACK) {
        out->shared_new_pct = shared_new_pct(d);
        if (out->shared_new_pct < SD_DIFF_TWO_RUNS_SHARED_PCT) out->why |= SD_TWO_RUNS_FEW_SHARED;
    }
    for (size_t i = 0; i < sd_diff_warning_count(d); i++)
        if (sd_diff_warning_at(d, i)->code == SD_WARN_SWAPPED) out->why |= SD_TWO_RUNS_SWAPPED;
    if (scripts_differ(a, old_snap, new_snap)) out->why |= SD_TWO_RUNS_SCRIPTS;
    if (peaks_moved_more(d) && covers_a_step(a, old_snap) && covers_a_step(a, new_snap))
        out->why |= SD_TWO_RUNS_STEPS;
    out->two_runs = out->why != 0;
    if (at == SD_DIFF_AT_END || at == SD_DIFF_AT_PEAK) {
        out->forced = true;
        out->two_runs = at == SD_DIFF_AT_PEAK;
        out->why = out->two_runs ? SD_TWO_RUNS_FORCED : 0;
    }
}

const char *sd_diff_two_runs_reason_name(unsigned bit)
{
    switch (bit) {
    case SD_TWO_RUNS_FEW_SHARED: return "few_shared_sites_new";
    case SD_TWO_RUNS_SWAPPED: return "swapped";
    case SD_TWO_RUNS_SCRIPTS: return "scripts_differ";
    case SD_TWO_RUNS_STEPS: return "both_cover_a_step";
    case SD_TWO_RUNS_FORCED: return "forced";
    default: return NULL;
    }
}
