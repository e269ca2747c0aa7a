/* diff.c - compare the live blocks of two snapshots, grouped by allocation site.
 *
 * The groups are the keys of a two-sided profile (profile.c: per block O(1), string work
 * per distinct stack); kept blocks are matched in diff_kept.c. This file adds the
 * comparison: devices, deltas, per-step growth, capacity and the verdicts on them.
 * Figures follow docs/json-diff.md; tests/truth/truth_diff.py recomputes them.
 */
#include <stdlib.h>

#include "analysis/diff_internal.h"
#include "snapdiff/peak.h"

struct sd_diff {
    sd_profile *profile;           /* side 0 old, side 1 new */
    sdp_arena arena;               /* budget for the diff's own tables */
    const sd_snapshot *snaps[2];   /* [0] old (may be NULL), [1] new */
    sd_peak_diff *peak;            /* both at their peaks; NULL: no OLD, or no trace */

    sd_diff_group *groups;         /* one per (profile key, device) with live blocks */
    sd_diff_group **sorted;
    size_t n_groups;
    size_t n_growth, n_shrink;
    size_t devices_with_memory;    /* groups are per device; > 1: the text splits */
    size_t *group_cell;            /* per group: key index * n_devices + device index */
    uint32_t *moved_partner;       /* per profile key: its moved pair's key (diff_moved.c) */

    sd_diff_device *devices;
    size_t n_devices, devices_cap;
    sd_diff_totals totals;
    sd_diff_host host;             /* valid when host.in_old || host.in_new */
    sd_diff_warning *warnings;     /* diff_warn.c */
    size_t n_warnings;
    sd_diff_comparison comparison; /* diff_warn.c */
};

/* ---------- memory ---------- */

/* new - old as a signed delta (two's complement: exact whenever the result fits). */
static int64_t delta_of(uint64_t new_v, uint64_t old_v) { return (int64_t)(new_v - old_v); }

#define DOING "diffing"   /* what sdp_nomem says failed */

static void *diff_calloc(sd_diff *d, size_t n, size_t elem)
{
    if (n == 0) n = 1;
    if (n > SIZE_MAX / elem || !sdp_arena_charge(&d->arena, (uint64_t)n * elem)) return NULL;
    return calloc(n, elem);
}

/* ---------- groups: the profile's keys, compared ---------- */

static size_t device_slot(const sd_diff *d, int64_t ordinal);
static size_t device_slot_of(const sd_diff *d, size_t side, int64_t ordinal);

/* The devices with live memory in either file, in ordinal order (d->devices is sorted):
 * groups are split by them, so that a 3-GPU job never sums a site over devices. */
static size_t memory_devices(const sd_diff *d, size_t *slot_of)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n_devices; i++) {
        const sd_diff_device *dd = &d->devices[i];
        bool mem = dd->old_stats.allocated_bytes || dd->new_stats.allocated_bytes;
        slot_of[i] = mem ? n++ : SIZE_MAX;
    }
    return n;
}

/* Sum the live blocks of one side into the (key, device) groups. */
static void add_side(sd_diff *d, size_t side, const size_t *slot_of, size_t n_mem)
{
    const sd_snapshot *s = d->snaps[side];
    if (!s) return;
    for (size_t i = 0; i < sd_snapshot_device_count(s); i++) {
        const sd_cuda_device *dev = sd_snapshot_device(s, i);
        size_t slot = device_slot_of(d, side, dev->device);
        if (slot == SIZE_MAX) continue;
        size_t di = slot_of[slot];
        if (di == SIZE_MAX) continue;
        for (size_t b = 0; b < dev->n_blocks; b++) {
            const sd_block *blk = &dev->blocks[b];
            if (blk->state != SD_BLOCK_ALLOCATED) continue;
            uint32_t k = sd_profile_stack_key(d->profile, side, blk->stack);
            if (k == SD_PROFILE_NO_KEY) continue;
            sd_diff_group *g = &d->groups[(size_t)k * n_mem + di];
            if (side) {
                g->new_bytes += blk->size;
                g->new_blocks++;
                g->new_requested_bytes += blk->requested_size;
            } else {
                g->old_bytes += blk->size;
                g->old_blocks++;
                g->old_requested_bytes += blk->requested_size;
            }
        }
    }
}

/* One group per profile key and device with live memory of that key. */
static sd_status make_groups(sd_diff *d, sd_error *err)
{
    const sd_profile *p = d->profile;
    size_t n_keys = sd_profile_key_count(p);
    size_t *slot_of = calloc(d->n_devices ? d->n_devices : 1, sizeof *slot_of);
    if (!slot_of) return sdp_nomem(err, DOING);
    size_t n_mem = memory_devices(d, slot_of);
    d->devices_with_memory = n_mem;
    if (n_mem && n_keys > SIZE_MAX / n_mem) {
        free(slot_of);
        return sdp_nomem(err, DOING);
    }
    d->groups = diff_calloc(d, n_keys * n_mem, sizeof *d->groups);
    d->group_cell = diff_calloc(d, n_keys * n_mem, sizeof *d->group_cell);
    if (!d->groups || !d->group_cell) {
        free(slot_of);
        return sdp_nomem(err, DOING);
    }
    add_side(d, 0, slot_of, n_mem);
    add_side(d, 1, slot_of, n_mem);
    d->n_groups = 0;
    for (size_t i = 0; i < n_keys * n_mem; i++) {
        sd_diff_group g = d->groups[i];
        if (!g.old_blocks && !g.new_blocks) continue;
        const sd_profile_key *k = sd_profile_key_at(p, i / n_mem);
        size_t di = i % n_mem;
        for (size_t s = 0; s < d->n_devices; s++)
            if (slot_of[s] == di) {
                g.device = d->devices[s].device;
                d->group_cell[d->n_groups] = (i / n_mem) * d->n_devices + s;
            }
        g.key = k->key;
        g.delta_bytes = delta_of(g.new_bytes, g.old_bytes);
        g.delta_blocks = delta_of(g.new_blocks, g.old_blocks);
        g.delta_requested_bytes = delta_of(g.new_requested_bytes, g.old_requested_bytes);
        g.rep_site = k->rep_site;
        if (k->has_rep) {
            g.rep_snapshot = d->snaps[k->rep_side];
            g.rep_stack = k->rep_stack;
        }
        d->groups[d->n_groups++] = g;     /* compacting in place: n_groups <= i */
    }
    free(slot_of);
    return SD_OK;
}

/* Code that moved is not growth (diff_moved.c). */
static sd_status pair_moved(sd_diff *d, sd_error *err)
{
    size_t n_keys = sd_profile_key_count(d->profile);
    d->moved_partner = diff_calloc(d, n_keys, sizeof *d->moved_partner);
    if (!d->moved_partner) return sdp_nomem(err, DOING);
    if (!d->snaps[0]) {
        for (size_t k = 0; k < n_keys; k++) d->moved_partner[k] = SD_PROFILE_NO_KEY;
        return SD_OK;
    }
    return sdp_diff_pair_moved(d->groups, &d->n_groups, d->group_cell, d->n_devices,
                               d->moved_partner, n_keys, sd_profile_attrib(d->profile),
                               &d->totals.moved_groups, &d->arena, err);
}

uint32_t sdp_diff_moved_partner(const sd_diff *d, size_t k)
{
    return d->moved_partner && k < sd_profile_key_count(d->profile) ? d->moved_partner[k]
                                                                    : SD_PROFILE_NO_KEY;
}

/* Identical live memory: the same allocated bytes on every device and every group (moved
 * ones paired) the same on both sides. */
static bool live_identical(const sd_diff *d)
{
    if (!d->snaps[0]) return false;
    for (size_t i = 0; i < d->n_devices; i++)
        if (d->devices[i].old_stats.allocated_bytes != d->devices[i].new_stats.allocated_bytes)
            return false;
    for (size_t i = 0; i < d->n_groups; i++) {
        const sd_diff_group *g = &d->groups[i];
        if (g->delta_bytes || g->delta_blocks || g->delta_requested_bytes) return false;
    }
    return true;
}

bool sd_diff_group_changed(const sd_diff_group *g)
{
    return g->delta_bytes != 0 && g->delta_requested_bytes != 0;
}

static int category(const sd_diff_group *g)
{
    if (!sd_diff_group_changed(g)) return 2;
    return g->delta_bytes > 0 ? 0 : 1;
}

static int group_cmp(const void *pa, const void *pb)
{
    const sd_diff_group *a = *(const sd_diff_group *const *)pa;
    const sd_diff_group *b = *(const sd_diff_group *const *)pb;
    int ca = category(a), cb = category(b);
    if (ca != cb) return ca < cb ? -1 : 1;
    bool same = a->delta_bytes == b->delta_bytes;
    if (ca == 0 && !same) return a->delta_bytes > b->delta_bytes ? -1 : 1;
    if (ca == 1 && !same) return a->delta_bytes < b->delta_bytes ? -1 : 1;
    if (ca == 2 && a->new_bytes != b->new_bytes) return a->new_bytes > b->new_bytes ? -1 : 1;
    int c = strcmp(a->key, b->key);
    if (c) return c;
    return a->device < b->device ? -1 : a->device > b->device;
}

static sd_status sort_groups(sd_diff *d, sd_error *err)
{
    d->sorted = diff_calloc(d, d->n_groups, sizeof *d->sorted);
    if (!d->sorted) return sdp_nomem(err, DOING);
    for (size_t i = 0; i < d->n_groups; i++) d->sorted[i] = &d->groups[i];
    qsort(d->sorted, d->n_groups, sizeof *d->sorted, group_cmp);
    for (size_t i = 0; i < d->n_groups; i++) {
        int c = category(d->sorted[i]);
        d->n_growth += c == 0;
        d->n_shrink += c == 1;
    }
    d->totals.group_old_bytes = sd_profile_total(d->profile, 0)->bytes;
    d->totals.group_new_bytes = sd_profile_total(d->profile, 1)->bytes;
    return SD_OK;
}

/* ---------- kept blocks, per device and per group ---------- */

static sd_status match_kept(sd_diff *d, sd_error *err)
{
    size_t n_keys = sd_profile_key_count(d->profile);
    if (d->n_devices && n_keys > SIZE_MAX / d->n_devices) return sdp_nomem(err, DOING);
    uint64_t *kept = diff_calloc(d, n_keys * d->n_devices, sizeof *kept);
    if (!kept) return sdp_nomem(err, DOING);
    sd_status st = sdp_kept_match(d->snaps[0], d->snaps[1], d->devices, d->n_devices,
                                  d->profile, kept, &d->arena, err);
    for (size_t i = 0; i < d->n_groups; i++) d->groups[i].kept_blocks = kept[d->group_cell[i]];
    free(kept);
    return st;
}

/* ---------- patterns of the growing groups ---------- */

static sd_status classify_groups(sd_diff *d, sd_error *err)
{
    const sd_attrib *a = sd_profile_attrib(d->profile);
    const sd_frame **frames = NULL;
    size_t cap = 0;
    sd_status st = SD_OK;
    for (size_t i = 0; i < d->n_growth && !st; i++) {
        sd_diff_group *g = d->sorted[i];
        size_t n = 0;
        const uint32_t *ids = NULL;
        if (g->rep_snapshot) ids = sd_snapshot_stack(g->rep_snapshot, g->rep_stack, &n);
        if (n && sdp_grow((void **)&frames, &cap, n, sizeof *frames, &d->arena)) {
            st = sdp_nomem(err, DOING);
            break;
        }
        for (size_t k = 0; k < n; k++) frames[k] = sd_snapshot_frame(g->rep_snapshot, ids[k]);
        sd_pattern_growth shape = {.old_bytes = g->old_bytes, .new_bytes = g->new_bytes,
                                   .old_blocks = g->old_blocks, .new_blocks = g->new_blocks,
                                   .kept_blocks = g->kept_blocks};
        g->pattern = sd_pattern_classify(a, frames, n, &shape);
    }
    free(frames);
    return st;
}

/* ---------- devices ---------- */

static size_t device_slot(const sd_diff *d, int64_t ordinal)
{
    for (size_t i = 0; i < d->n_devices; i++)
        if (d->devices[i].device == ordinal) return i;
    return SIZE_MAX;
}

/* The slot of a device as `side` numbers it (NEW's ordinal may be paired with OLD's). */
static size_t device_slot_of(const sd_diff *d, size_t side, int64_t ordinal)
{
    for (size_t i = 0; i < d->n_devices; i++)
        if (side ? d->devices[i].in_new && d->devices[i].device_new == ordinal
                 : d->devices[i].device == ordinal)
            return i;
    return SIZE_MAX;
}

/* The one device of s that holds anything (segments or trace entries), or NULL when none
 * or several do: a rank's file lists every visible GPU but uses its own. */
static const sd_cuda_device *sole_device(const sd_snapshot *s)
{
    const sd_cuda_device *found = NULL;
    for (size_t i = 0; s && i < sd_snapshot_device_count(s); i++) {
        const sd_cuda_device *dev = sd_snapshot_device(s, i);
        if (!dev->n_segments && !dev->n_trace) continue;
        if (found) return NULL;
        found = dev;
    }
    return found;
}

static int device_cmp(const void *pa, const void *pb)
{
    const sd_diff_device *a = pa, *b = pb;
    return a->device < b->device ? -1 : a->device > b->device;
}

/* The union of both snapshots' devices, with their stats. When each file uses one device
 * and their ordinals differ, the two are one device (ranks of a job: rank r on device r);
 * NEW's other, empty devices then keep their own ordinals unless OLD's one is taken. */
static sd_status collect_devices(sd_diff *d, sd_error *err)
{
    const sd_cuda_device *so = sole_device(d->snaps[0]), *sn = sole_device(d->snaps[1]);
    bool pair = so && sn && so->device != sn->device;
    for (int w = 0; w < 2; w++) {
        const sd_snapshot *s = d->snaps[w];
        if (!s) continue;
        for (size_t i = 0; i < sd_snapshot_device_count(s); i++) {
            const sd_cuda_device *dev = sd_snapshot_device(s, i);
            if (w && pair && dev != sn && dev->device == so->device) continue;   /* empty */
            int64_t as = w && pair && dev == sn ? so->device : dev->device;
            size_t k = device_slot(d, as);
            if (k == SIZE_MAX) {
                if (sdp_grow((void **)&d->devices, &d->devices_cap, d->n_devices + 1,
                             sizeof *d->devices, &d->arena))
                    return sdp_nomem(err, DOING);
                k = d->n_devices++;
                memset(&d->devices[k], 0, sizeof d->devices[k]);
                d->devices[k].device = dev->device;
                d->devices[k].old_stats.device = d->devices[k].new_stats.device = dev->device;
            }
            sd_diff_device *dd = &d->devices[k];
            if (w) {
                dd->device_new = dev->device;
                dd->in_new = true;
                sd_stats_device(dev, &dd->new_stats);
            } else {
                dd->device_new = dev->device;
                dd->in_old = true;
                sd_stats_device(dev, &dd->old_stats);
            }
        }
    }
    if (d->n_devices) qsort(d->devices, d->n_devices, sizeof *d->devices, device_cmp);
    return SD_OK;
}

/* ---------- totals, steps and capacity ---------- */

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

static void device_capacity(const sd_diff_options *o, sd_diff_device *dd, const sd_snapshot *sn)
{
    if (o->capacity) {
        dd->capacity = o->capacity;
        dd->capacity_source = SD_CAPACITY_GIVEN;
    } else if (dd->in_new) {
        /* The driver's free memory at the last OOM plus what the allocator held: an
         * estimate of the device's usable total (other processes are not counted). */
        for (size_t i = 0; i < sd_snapshot_device_count(sn); i++) {
            const sd_cuda_device *dev = sd_snapshot_device(sn, i);
            if (dev->device != dd->device_new) continue;
            for (size_t k = dev->n_trace; k-- > 0;) {
                if (dev->trace[k].action != SD_ACT_OOM) continue;
                dd->capacity = dev->trace[k].device_free + dd->new_stats.reserved_bytes;
                dd->capacity_source = SD_CAPACITY_OOM;
                break;
            }
        }
    }
    if (!o->steps) return;
    int64_t delta = (int64_t)(dd->new_stats.allocated_bytes - dd->old_stats.allocated_bytes);
    dd->per_step = delta / (int64_t)o->steps;
    if (dd->per_step <= 0 || dd->capacity_source == SD_CAPACITY_NONE) return;
    uint64_t now = dd->new_stats.allocated_bytes;
    dd->has_steps_to_capacity = true;
    dd->steps_to_capacity =
        now >= dd->capacity ? 0 : ceil_div(dd->capacity - now, (uint64_t)dd->per_step);
}

static sd_stats_delta stats_delta(const sd_stats *o, const sd_stats *n)
{
    return (sd_stats_delta){
        .allocated = delta_of(n->allocated_bytes, o->allocated_bytes),
        .reserved = delta_of(n->reserved_bytes, o->reserved_bytes),
        .active = delta_of(n->active_bytes, o->active_bytes),
        .requested = delta_of(n->requested_bytes, o->requested_bytes),
        .pending_free = delta_of(n->pending_free_bytes, o->pending_free_bytes),
    };
}

/* The verdicts a reader wants under the figures: do the groups add up, when is it full. */
static void decide(sd_diff *d)
{
    sd_diff_totals *t = &d->totals;
    t->groups_delta = delta_of(t->group_new_bytes, t->group_old_bytes);
    t->pattern = d->snaps[0] ? sd_pattern_of_totals(t->delta.allocated, t->delta.reserved)
                             : SD_PATTERN_NONE;
    t->sum_check = sd_attrib_has_focus(sd_profile_attrib(d->profile)) ? SD_SUM_FOCUS
                   : t->groups_delta == t->delta.allocated            ? SD_SUM_EXACT
                                                                      : SD_SUM_MISMATCH;
    if (!t->has_per_step) t->outlook = SD_OUTLOOK_NO_STEPS;
    else if (t->has_steps_to_capacity)
        t->outlook = t->steps_to_capacity == 0 ? SD_OUTLOOK_FULL : SD_OUTLOOK_REACHED;
    else if (t->per_step <= 0) t->outlook = SD_OUTLOOK_NOT_GROWING;
    else t->outlook = SD_OUTLOOK_NO_CAPACITY;
}

/* The host sections, apart from every device figure. */
static void compute_host(sd_diff *d)
{
    sd_diff_host *h = &d->host;
    const sd_cuda_device *oh = d->snaps[0] ? sd_snapshot_host_memory(d->snaps[0]) : NULL;
    const sd_cuda_device *nh = sd_snapshot_host_memory(d->snaps[1]);
    h->in_old = oh != NULL;
    h->in_new = nh != NULL;
    if (oh) sd_stats_device(oh, &h->old_stats);
    if (nh) sd_stats_device(nh, &h->new_stats);
    h->old_stats.device = h->new_stats.device = -1;
    h->delta = stats_delta(&h->old_stats, &h->new_stats);
}

static void compute_totals(sd_diff *d, const sd_diff_options *o)
{
    sd_diff_totals *t = &d->totals;
    /* The sums of the device stats (what sd_stats_total computes, without a second pass
     * over every block). */
    t->old_stats.device = t->new_stats.device = -1;
    for (size_t i = 0; i < d->n_devices; i++) {
        sd_diff_device *dd = &d->devices[i];
        if (dd->in_old) sd_stats_add(&t->old_stats, &dd->old_stats);
        if (dd->in_new) sd_stats_add(&t->new_stats, &dd->new_stats);
        dd->delta = stats_delta(&dd->old_stats, &dd->new_stats);
        device_capacity(o, dd, d->snaps[1]);
        t->blocks.kept += dd->blocks.kept;
        t->blocks.added += dd->blocks.added;
        t->blocks.freed += dd->blocks.freed;
        if (dd->has_steps_to_capacity &&
            (!t->has_steps_to_capacity || dd->steps_to_capacity < t->steps_to_capacity)) {
            t->has_steps_to_capacity = true;
            t->steps_to_capacity = dd->steps_to_capacity;
            t->capacity_device = i;
        }
    }
    t->delta = stats_delta(&t->old_stats, &t->new_stats);
    compute_host(d);
    t->new_ooms = sd_snapshot_oom_count(d->snaps[1]);
    t->live_identical = live_identical(d);
    if (d->snaps[0]) sd_frag_brief_of(d->snaps[0], &t->old_frag);
    sd_frag_brief_of(d->snaps[1], &t->new_frag);
    t->steps = o->steps;
    if (o->steps) {
        int64_t delta = t->delta.allocated;
        t->has_per_step = true;
        t->per_step = delta / (int64_t)o->steps;
        t->per_step_exact = (double)delta / (double)o->steps;
    }
    decide(d);
}

/* ---------- public ---------- */

static sd_status diff_build(sd_diff *d, const sd_diff_options *opts, sd_error *err)
{
    sd_profile_options po = {.attrib = opts->attrib, .max_memory = opts->max_memory};
    d->profile = sd_profile_create(d->snaps, 2, &po, err);
    if (!d->profile) return SD_ENOMEM;   /* err filled by the profile */
    sd_status st = collect_devices(d, err);
    if (!st) st = make_groups(d, err);
    if (!st) st = pair_moved(d, err);
    if (!st) st = sort_groups(d, err);
    if (!st) st = match_kept(d, err);
    if (!st) st = classify_groups(d, err);
    if (!st) compute_totals(d, opts);
    return st;
}

static bool has_trace(const sd_snapshot *s)
{
    for (size_t i = 0; i < sd_snapshot_device_count(s); i++)
        if (sd_snapshot_device(s, i)->n_trace) return true;
    return false;
}

const sd_peak_diff *sd_diff_peak(const sd_diff *d) { return d->peak; }
const sd_diff_comparison *sd_diff_comparison_of(const sd_diff *d) { return &d->comparison; }

/* The fragmentation pattern only when it holds (issue 19): not when the peaks moved with
 * reserved (a different transient peak grows the cache, not fragmentation), and not when
 * NEW holds too little free memory for it (`frag` would call it compact or full). */
static void refine_pattern(sd_diff *d)
{
    sd_diff_totals *t = &d->totals;
    if (t->pattern != SD_PATTERN_FRAGMENTATION) return;
    uint64_t tenth = (uint64_t)t->delta.reserved / 10;
    size_t n = d->peak ? sd_peak_diff_device_count(d->peak) : 0;
    int64_t peak = 0;
    for (size_t i = 0; i < n; i++) peak += sd_peak_diff_device_at(d->peak, i)->delta_bytes;
    uint64_t moved = peak < 0 ? (uint64_t)0 - (uint64_t)peak : (uint64_t)peak;
    if (n && moved > tenth) {
        t->pattern = SD_PATTERN_NONE;
        t->reserved_with_peak = true;
        t->peak_delta = peak;
        return;
    }
    if (t->new_frag.total_free < tenth || t->new_frag.total_free == 0)
        t->pattern = SD_PATTERN_NONE;
}

sd_diff *sd_diff_create(const sd_snapshot *old_snap, const sd_snapshot *new_snap,
                        const sd_diff_options *opts, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_DIFF_OPTIONS_VERSION, "sd_diff_options", err)) return NULL;
    if (!new_snap || !opts) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "sd_diff_create: no snapshot");
        return NULL;
    }
    sd_diff *d = calloc(1, sizeof *d);
    if (!d) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    d->snaps[0] = old_snap;
    d->snaps[1] = new_snap;
    sdp_arena_init(&d->arena, opts->max_memory);
    /* Every step reports through its return value and fills err only when there is one:
     * a NULL err is accepted throughout (it used to be dereferenced here). */
    if (diff_build(d, opts, err) != SD_OK) {
        sd_diff_free(d);
        return NULL;
    }
    /* A summary keeps only the trace entries the end-state diff reads: no peak from it. */
    if (old_snap && !sd_snapshot_is_summary(old_snap) && !sd_snapshot_is_summary(new_snap) &&
        (has_trace(old_snap) || has_trace(new_snap))) {
        sd_peak_options po;
        memset(&po, 0, sizeof po);
        po.attrib = opts->attrib;
        po.max_memory = opts->max_memory;
        d->peak = sdp_peak_diff_create(old_snap, new_snap, &po, err);
        if (!d->peak) {
            sd_diff_free(d);
            return NULL;
        }
    }
    refine_pattern(d);
    d->warnings = diff_calloc(d, sdp_diff_warning_cap(d), sizeof *d->warnings);
    if (!d->warnings) {
        sdp_nomem(err, DOING);
        sd_diff_free(d);
        return NULL;
    }
    d->n_warnings = sdp_diff_warnings(d, old_snap, new_snap, d->warnings);
    sdp_diff_compare(d, old_snap, new_snap, opts->at, &d->comparison);
    return d;
}

void sd_diff_free(sd_diff *d)
{
    if (!d) return;
    sd_profile_free(d->profile);
    sdp_peak_diff_free(d->peak);
    free(d->groups);
    free(d->group_cell);
    free(d->moved_partner);
    free(d->sorted);
    free(d->devices);
    free(d->warnings);
    sdp_arena_free(&d->arena);
    free(d);
}

const sd_diff_host *sd_diff_host_of(const sd_diff *d)
{
    return d->host.in_old || d->host.in_new ? &d->host : NULL;
}

const sd_diff_totals *sd_diff_totals_of(const sd_diff *d) { return &d->totals; }
size_t sd_diff_device_count(const sd_diff *d) { return d->n_devices; }
const sd_diff_device *sd_diff_device_at(const sd_diff *d, size_t i)
{
    return i < d->n_devices ? &d->devices[i] : NULL;
}
size_t sd_diff_group_count(const sd_diff *d) { return d->n_groups; }
size_t sd_diff_warning_count(const sd_diff *d) { return d->n_warnings; }
size_t sd_diff_memory_device_count(const sd_diff *d) { return d->devices_with_memory; }

const sd_diff_warning *sd_diff_warning_at(const sd_diff *d, size_t i)
{
    return i < d->n_warnings ? &d->warnings[i] : NULL;
}
size_t sd_diff_growth_count(const sd_diff *d) { return d->n_growth; }
size_t sd_diff_shrink_count(const sd_diff *d) { return d->n_shrink; }
const sd_diff_group *sd_diff_group_at(const sd_diff *d, size_t i)
{
    return i < d->n_groups ? d->sorted[i] : NULL;
}
const sd_profile *sd_diff_profile(const sd_diff *d) { return d->profile; }
const sd_attrib *sd_diff_attrib(const sd_diff *d) { return sd_profile_attrib(d->profile); }
