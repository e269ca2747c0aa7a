/* diff.c - group the live blocks of two snapshots by allocation site and compare.
 *
 * Per block the work is O(1) amortised: each interned stack is classified and keyed once
 * (its group index is cached per stack id, the kind of each frame per frame id), group
 * keys are found through a hash table, and kept blocks are matched in diff_kept.c.
 * Figures follow docs/json-diff.md; tests/truth_diff.py recomputes them.
 */
#include <stdlib.h>

#include "analysis/diff_internal.h"

enum { GROUP_UNKNOWN = UINT32_MAX, GROUP_NONE = UINT32_MAX - 1 };
enum { KIND_UNKNOWN = 0xFF, FOCUS_UNKNOWN = 0, FOCUS_NO = 1, FOCUS_YES = 2 };

typedef struct group {
    sd_diff_group pub;
    uint64_t hash;
    uint64_t rep_bytes[2];         /* [0] old, [1] new: bytes of the best stack so far */
    uint32_t rep_stack[2];
    bool has_rep[2];
} group;

/* One snapshot's caches. */
typedef struct side {
    const sd_snapshot *snap;       /* NULL for an absent baseline */
    uint32_t *stack_group;         /* per stack id: group index, GROUP_UNKNOWN/NONE */
    uint64_t *stack_bytes;         /* per stack id: ALLOCATED bytes counted in groups */
    size_t n_stacks;
    uint8_t *frame_kind;           /* per frame id: sd_frame_kind or KIND_UNKNOWN */
    uint8_t *frame_focus;          /* per frame id: FOCUS_* */
    size_t n_frame_slots;
} side;

struct sd_diff {
    sd_attrib *attrib;
    sdp_arena arena;               /* keys, folded lines; also charged for the tables */
    side sides[2];                 /* [0] old, [1] new */

    group *groups;
    size_t n_groups, groups_cap;
    uint32_t *slots;               /* key hash table: group index + 1, 0 = empty */
    size_t slots_cap;              /* power of two */
    group **sorted;
    size_t n_growth, n_shrink;

    sd_diff_device *devices;
    size_t n_devices;
    sd_diff_totals totals;

    const sd_frame **scratch_frames;   /* one stack's frames while it is keyed */
    uint8_t *scratch_kinds;
    size_t scratch_cap;
    sdp_sbuf key;

    sd_folded_line *folded;
    size_t n_folded;
    bool folded_done;
    sd_error *err;
};

/* ---------- memory ---------- */

static void *diff_calloc(sd_diff *d, size_t n, size_t elem)
{
    if (n == 0) n = 1;
    if (n > SIZE_MAX / elem || !sdp_arena_charge(&d->arena, (uint64_t)n * elem)) {
        sdp_fail(d->err, SD_ENOMEM, SD_NO_OFFSET, "memory budget exhausted while diffing");
        return NULL;
    }
    void *p = calloc(n, elem);
    if (!p) sdp_fail(d->err, SD_ENOMEM, SD_NO_OFFSET, "out of memory while diffing");
    return p;
}

static bool diff_grow(sd_diff *d, void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) ncap *= 2;
    if (ncap > SIZE_MAX / elem / 2 ||
        !sdp_arena_charge(&d->arena, (uint64_t)(ncap - *cap) * elem)) {
        sdp_fail(d->err, SD_ENOMEM, SD_NO_OFFSET, "memory budget exhausted while diffing");
        return false;
    }
    void *nb = realloc(*buf, ncap * elem);
    if (!nb) {
        sdp_fail(d->err, SD_ENOMEM, SD_NO_OFFSET, "out of memory while diffing");
        return false;
    }
    *buf = nb;
    *cap = ncap;
    return true;
}

static uint64_t hash_str(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

/* ---------- sides ---------- */

static sd_status side_init(sd_diff *d, side *sd, const sd_snapshot *s)
{
    sd->snap = s;
    if (!s) return SD_OK;
    sd->n_stacks = sd_snapshot_stack_count(s);
    sd->stack_group = diff_calloc(d, sd->n_stacks, sizeof *sd->stack_group);
    sd->stack_bytes = diff_calloc(d, sd->n_stacks, sizeof *sd->stack_bytes);
    if (!sd->stack_group || !sd->stack_bytes) return d->err->code;
    for (size_t i = 0; i < sd->n_stacks; i++) sd->stack_group[i] = GROUP_UNKNOWN;
    return SD_OK;
}

static void side_free(side *sd)
{
    free(sd->stack_group);
    free(sd->stack_bytes);
    free(sd->frame_kind);
    free(sd->frame_focus);
}

/* Make the per-frame caches cover frame id `id`. */
static bool side_frame_slots(sd_diff *d, side *sd, uint32_t id)
{
    if (id < sd->n_frame_slots) return true;
    size_t old = sd->n_frame_slots, cap = old, cap2 = old;
    if (!diff_grow(d, (void **)&sd->frame_kind, &cap, (size_t)id + 1, 1) ||
        !diff_grow(d, (void **)&sd->frame_focus, &cap2, (size_t)id + 1, 1))
        return false;
    memset(sd->frame_kind + old, KIND_UNKNOWN, cap - old);
    memset(sd->frame_focus + old, FOCUS_UNKNOWN, cap - old);
    sd->n_frame_slots = cap;
    return true;
}

/* Load stack `id` into the scratch arrays, kinds from the per-frame cache.
 * *focused: some frame matches a focus pattern (true when there are none). */
static bool load_stack(sd_diff *d, side *sd, uint32_t id, size_t *n, bool *focused)
{
    const uint32_t *ids = sd_snapshot_stack(sd->snap, id, n);
    size_t cap = d->scratch_cap, cap2 = d->scratch_cap;
    if (!diff_grow(d, (void **)&d->scratch_frames, &cap, *n, sizeof *d->scratch_frames) ||
        !diff_grow(d, (void **)&d->scratch_kinds, &cap2, *n, 1))
        return false;
    d->scratch_cap = cap;
    bool want_focus = sdp_attrib_has_focus(d->attrib);
    *focused = !want_focus;
    for (size_t i = 0; i < *n; i++) {
        uint32_t fid = ids[i];
        if (!side_frame_slots(d, sd, fid)) return false;
        const sd_frame *f = sd_snapshot_frame(sd->snap, fid);
        if (sd->frame_kind[fid] == KIND_UNKNOWN)
            sd->frame_kind[fid] = (uint8_t)sd_attrib_classify(d->attrib, f);
        if (want_focus && !*focused) {
            if (sd->frame_focus[fid] == FOCUS_UNKNOWN)
                sd->frame_focus[fid] = sd_attrib_frame_focused(d->attrib, f) ? FOCUS_YES
                                                                             : FOCUS_NO;
            *focused = sd->frame_focus[fid] == FOCUS_YES;
        }
        d->scratch_frames[i] = f;
        d->scratch_kinds[i] = sd->frame_kind[fid];
    }
    return true;
}

/* ---------- groups ---------- */

static bool slots_rehash(sd_diff *d)
{
    size_t ncap = d->slots_cap ? d->slots_cap * 2 : 1024;
    uint32_t *slots = diff_calloc(d, ncap, sizeof *slots);
    if (!slots) return false;
    for (size_t i = 0; i < d->n_groups; i++) {
        size_t j = d->groups[i].hash & (ncap - 1);
        while (slots[j]) j = (j + 1) & (ncap - 1);
        slots[j] = (uint32_t)i + 1;
    }
    free(d->slots);
    d->slots = slots;
    d->slots_cap = ncap;
    return true;
}

/* Index of the group with this key, created when new. */
static bool group_find(sd_diff *d, const char *key, size_t len, uint32_t *out)
{
    if ((d->n_groups + 1) * 2 > d->slots_cap && !slots_rehash(d)) return false;
    uint64_t h = hash_str(key, len);
    size_t j = h & (d->slots_cap - 1);
    for (; d->slots[j]; j = (j + 1) & (d->slots_cap - 1)) {
        const group *g = &d->groups[d->slots[j] - 1];
        if (g->hash == h && strcmp(g->pub.key, key) == 0) {
            *out = d->slots[j] - 1;
            return true;
        }
    }
    if (d->n_groups >= GROUP_NONE - 1) {
        sdp_fail(d->err, SD_ELIMIT, SD_NO_OFFSET, "too many groups");
        return false;
    }
    if (!diff_grow(d, (void **)&d->groups, &d->groups_cap, d->n_groups + 1, sizeof *d->groups))
        return false;
    char *copy = sdp_arena_strndup(&d->arena, key, len);
    if (!copy) {
        sdp_fail(d->err, SD_ENOMEM, SD_NO_OFFSET, "memory budget exhausted while diffing");
        return false;
    }
    group *g = &d->groups[d->n_groups];
    memset(g, 0, sizeof *g);
    g->pub.key = copy;
    g->hash = h;
    d->slots[j] = (uint32_t)d->n_groups + 1;
    *out = (uint32_t)d->n_groups++;
    return true;
}

/* Group index of a stack (GROUP_NONE when a focus filter drops it), cached per stack. */
static bool group_of_stack(sd_diff *d, side *sd, uint32_t stack, uint32_t *out)
{
    if (stack < sd->n_stacks && sd->stack_group[stack] != GROUP_UNKNOWN) {
        *out = sd->stack_group[stack];
        return true;
    }
    size_t n;
    bool focused;
    if (!load_stack(d, sd, stack, &n, &focused)) return false;
    uint32_t gid = GROUP_NONE;
    if (focused) {
        sdp_sbuf_reset(&d->key);
        sdp_attrib_key_kinds(d->attrib, d->scratch_frames, d->scratch_kinds, n, &d->key);
        if (d->key.failed) {
            sdp_fail(d->err, SD_ENOMEM, SD_NO_OFFSET, "out of memory while diffing");
            return false;
        }
        if (!group_find(d, sdp_sbuf_str(&d->key), d->key.len, &gid)) return false;
    }
    if (stack < sd->n_stacks) sd->stack_group[stack] = gid;
    *out = gid;
    return true;
}

/* Charge every ALLOCATED block of one side to its group. */
static bool group_side(sd_diff *d, int which)
{
    side *sd = &d->sides[which];
    if (!sd->snap) return true;
    for (size_t i = 0; i < sd_snapshot_device_count(sd->snap); i++) {
        const sd_device *dev = sd_snapshot_device(sd->snap, i);
        for (size_t k = 0; k < dev->n_blocks; k++) {
            const sd_block *b = &dev->blocks[k];
            if (b->state != SD_BLOCK_ALLOCATED) continue;
            uint32_t gid;
            if (!group_of_stack(d, sd, b->stack, &gid)) return false;
            if (gid == GROUP_NONE) continue;
            sd_diff_group *g = &d->groups[gid].pub;
            if (which) {
                g->new_bytes += b->size;
                g->new_blocks++;
            } else {
                g->old_bytes += b->size;
                g->old_blocks++;
            }
            if (b->stack < sd->n_stacks) sd->stack_bytes[b->stack] += b->size;
        }
    }
    return true;
}

/* The representative stack of each group: most bytes in new, else in old. */
static bool pick_representatives(sd_diff *d)
{
    for (int w = 0; w < 2; w++) {
        side *sd = &d->sides[w];
        for (size_t s = 0; s < sd->n_stacks; s++) {
            uint32_t gid = sd->stack_group[s];
            if (gid >= GROUP_NONE || sd->stack_bytes[s] == 0) continue;
            group *g = &d->groups[gid];
            if (!g->has_rep[w] || sd->stack_bytes[s] > g->rep_bytes[w]) {
                g->has_rep[w] = true;
                g->rep_bytes[w] = sd->stack_bytes[s];
                g->rep_stack[w] = (uint32_t)s;
            }
        }
    }
    for (size_t i = 0; i < d->n_groups; i++) {
        group *g = &d->groups[i];
        int w = g->has_rep[1] ? 1 : 0;
        g->pub.delta_bytes = (int64_t)(g->pub.new_bytes - g->pub.old_bytes);
        g->pub.delta_blocks = (int64_t)(g->pub.new_blocks - g->pub.old_blocks);
        g->pub.rep_site.site = g->pub.rep_site.via = -1;
        if (!g->has_rep[w]) continue;
        side *sd = &d->sides[w];
        size_t n;
        bool focused;
        if (!load_stack(d, sd, g->rep_stack[w], &n, &focused)) return false;
        g->pub.rep_snapshot = sd->snap;
        g->pub.rep_stack = g->rep_stack[w];
        sdp_attrib_site_kinds(d->scratch_frames, d->scratch_kinds, n, &g->pub.rep_site);
    }
    return true;
}

static int category(const sd_diff_group *g)
{
    return g->delta_bytes > 0 ? 0 : g->delta_bytes < 0 ? 1 : 2;
}

static int group_cmp(const void *pa, const void *pb)
{
    const sd_diff_group *a = &(*(group *const *)pa)->pub;
    const sd_diff_group *b = &(*(group *const *)pb)->pub;
    int ca = category(a), cb = category(b);
    if (ca != cb) return ca < cb ? -1 : 1;
    if (ca == 0 && a->delta_bytes != b->delta_bytes) return a->delta_bytes > b->delta_bytes ? -1 : 1;
    if (ca == 1 && a->delta_bytes != b->delta_bytes) return a->delta_bytes < b->delta_bytes ? -1 : 1;
    if (ca == 2 && a->new_bytes != b->new_bytes) return a->new_bytes > b->new_bytes ? -1 : 1;
    return strcmp(a->key, b->key);
}

static bool sort_groups(sd_diff *d)
{
    d->sorted = diff_calloc(d, d->n_groups, sizeof *d->sorted);
    if (!d->sorted) return false;
    for (size_t i = 0; i < d->n_groups; i++) d->sorted[i] = &d->groups[i];
    qsort(d->sorted, d->n_groups, sizeof *d->sorted, group_cmp);
    for (size_t i = 0; i < d->n_groups; i++) {
        int c = category(&d->sorted[i]->pub);
        d->n_growth += c == 0;
        d->n_shrink += c == 1;
        d->totals.group_old_bytes += d->sorted[i]->pub.old_bytes;
        d->totals.group_new_bytes += d->sorted[i]->pub.new_bytes;
    }
    return true;
}

/* ---------- devices ---------- */

static size_t device_slot(const sd_diff *d, int64_t ordinal)
{
    for (size_t i = 0; i < d->n_devices; i++)
        if (d->devices[i].device == ordinal) return i;
    return SIZE_MAX;
}

static int device_cmp(const void *pa, const void *pb)
{
    const sd_diff_device *a = pa, *b = pb;
    return a->device < b->device ? -1 : a->device > b->device;
}

/* The union of both snapshots' devices, with their stats. */
static bool collect_devices(sd_diff *d)
{
    size_t cap = 0;
    for (int w = 0; w < 2; w++) {
        const sd_snapshot *s = d->sides[w].snap;
        if (!s) continue;
        for (size_t i = 0; i < sd_snapshot_device_count(s); i++) {
            const sd_device *dev = sd_snapshot_device(s, i);
            size_t k = device_slot(d, dev->device);
            if (k == SIZE_MAX) {
                if (!diff_grow(d, (void **)&d->devices, &cap, d->n_devices + 1,
                               sizeof *d->devices))
                    return false;
                k = d->n_devices++;
                memset(&d->devices[k], 0, sizeof d->devices[k]);
                d->devices[k].device = dev->device;
                d->devices[k].old_stats.device = d->devices[k].new_stats.device = dev->device;
            }
            sd_diff_device *dd = &d->devices[k];
            if (w) {
                dd->in_new = true;
                sd_stats_device(dev, &dd->new_stats);
            } else {
                dd->in_old = true;
                sd_stats_device(dev, &dd->old_stats);
            }
        }
    }
    if (d->n_devices) qsort(d->devices, d->n_devices, sizeof *d->devices, device_cmp);
    return true;
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
            const sd_device *dev = sd_snapshot_device(sn, i);
            if (dev->device != dd->device) continue;
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
    dd->steps_to_capacity = now >= dd->capacity ? 0
                                                : ceil_div(dd->capacity - now, (uint64_t)dd->per_step);
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
        device_capacity(o, dd, d->sides[1].snap);
        t->blocks.kept += dd->blocks.kept;
        t->blocks.added += dd->blocks.added;
        t->blocks.freed += dd->blocks.freed;
        if (dd->has_steps_to_capacity &&
            (!t->has_steps_to_capacity || dd->steps_to_capacity < t->steps_to_capacity)) {
            t->has_steps_to_capacity = true;
            t->steps_to_capacity = dd->steps_to_capacity;
        }
    }
    if (o->steps) {
        int64_t delta = (int64_t)(t->new_stats.allocated_bytes - t->old_stats.allocated_bytes);
        t->has_per_step = true;
        t->per_step = delta / (int64_t)o->steps;
        t->per_step_exact = (double)delta / (double)o->steps;
    }
}

/* ---------- public ---------- */

sd_diff *sd_diff_create(const sd_snapshot *old_snap, const sd_snapshot *new_snap,
                        const sd_diff_options *opts, sd_error *err)
{
    if (!new_snap || !opts) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "sd_diff_create: no snapshot");
        return NULL;
    }
    sd_diff *d = calloc(1, sizeof *d);
    if (!d) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    d->err = err;
    sdp_arena_init(&d->arena, opts->max_memory);
    d->attrib = sd_attrib_create(&opts->attrib, err);
    bool ok = d->attrib && side_init(d, &d->sides[0], old_snap) == SD_OK &&
              side_init(d, &d->sides[1], new_snap) == SD_OK && group_side(d, 0) &&
              group_side(d, 1) && pick_representatives(d) && sort_groups(d) &&
              collect_devices(d) &&
              sdp_kept_match(d->sides[0].snap, d->sides[1].snap, d->devices, d->n_devices,
                             &d->arena, err) == SD_OK;
    if (!ok) {
        sd_diff_free(d);
        return NULL;
    }
    compute_totals(d, opts);
    d->err = NULL;
    return d;
}

void sd_diff_free(sd_diff *d)
{
    if (!d) return;
    sd_attrib_free(d->attrib);
    side_free(&d->sides[0]);
    side_free(&d->sides[1]);
    free(d->groups);
    free(d->slots);
    free(d->sorted);
    free(d->devices);
    free(d->scratch_frames);
    free(d->scratch_kinds);
    sdp_sbuf_free(&d->key);
    free(d->folded);
    sdp_arena_free(&d->arena);
    free(d);
}

const sd_diff_totals *sd_diff_totals_of(const sd_diff *d) { return &d->totals; }
size_t sd_diff_device_count(const sd_diff *d) { return d->n_devices; }
const sd_diff_device *sd_diff_device_at(const sd_diff *d, size_t i)
{
    return i < d->n_devices ? &d->devices[i] : NULL;
}
size_t sd_diff_group_count(const sd_diff *d) { return d->n_groups; }
size_t sd_diff_growth_count(const sd_diff *d) { return d->n_growth; }
size_t sd_diff_shrink_count(const sd_diff *d) { return d->n_shrink; }
const sd_diff_group *sd_diff_group_at(const sd_diff *d, size_t i)
{
    return i < d->n_groups ? &d->sorted[i]->pub : NULL;
}
const sd_attrib *sd_diff_attrib(const sd_diff *d) { return d->attrib; }

sd_status sd_diff_folded(sd_diff *d, const sd_folded_line **lines, size_t *n, sd_error *err)
{
    if (!d->folded_done) {
        sdp_side_bytes sides[2];
        for (int w = 0; w < 2; w++) {
            sides[w].snap = d->sides[w].snap;
            sides[w].stack_bytes = d->sides[w].stack_bytes;
            sides[w].n_stacks = d->sides[w].n_stacks;
        }
        sd_status st = sdp_folded_build(&sides[0], &sides[1], &d->arena, &d->folded,
                                        &d->n_folded, err);
        if (st) return st;
        d->folded_done = true;
    }
    *lines = d->folded;
    *n = d->n_folded;
    return SD_OK;
}
