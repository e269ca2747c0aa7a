/* profile.c - per-stack and per-key figures of N snapshots (profile.h).
 *
 * Two passes per side. The first walks every block once and adds the ALLOCATED ones to
 * their stack's figures: an array indexed by stack id, nothing else on the hot path. The
 * second visits each stack that holds a live block once: it classifies the frames (cached
 * per frame id), computes the key and adds the stack's figures to the key's. So the
 * string work is per distinct stack, never per block.
 */
#include <stdlib.h>

#include "analysis/diff_internal.h"
#include "snapdiff/profile.h"

enum { KIND_UNKNOWN = 0xFF, FOCUS_UNKNOWN = 0, FOCUS_NO = 1, FOCUS_YES = 2 };

typedef struct prof_side {
    const sd_snapshot *snap;       /* NULL for an absent side */
    sd_profile_figures *stacks;    /* per stack id */
    uint32_t *stack_key;           /* per stack id: key index or SD_PROFILE_NO_KEY */
    size_t n_stacks;
    uint8_t *frame_kind;           /* per frame id: sd_frame_kind or KIND_UNKNOWN */
    uint8_t *frame_focus;          /* per frame id: FOCUS_* */
    size_t n_frame_slots;
    sd_profile_figures total;
} prof_side;

typedef struct key_rec {
    sd_profile_key pub;            /* pub.sides == figs */
    sd_profile_figures *figs;      /* per side, in the arena: stable while keys[] grows */
    uint64_t hash;
    uint64_t rep_bytes;
} key_rec;

struct sd_profile {
    sd_attrib *attrib;
    sdp_arena arena;               /* key strings and figures; charged for the tables */
    prof_side *sides;
    size_t n_sides;
    key_rec *keys;
    size_t n_keys, keys_cap;
    sdp_htab key_index;            /* key text -> index into keys */
    const sd_frame **scratch_frames;   /* one stack's frames while it is keyed */
    uint8_t *scratch_kinds;
    size_t scratch_cap, scratch_kinds_cap;
    const sd_frame **fwd_frames;       /* its forward_frames, when it has them */
    uint8_t *fwd_kinds;
    size_t fwd_cap, fwd_kinds_cap;
    sdp_sbuf key;
};

/* ---------- memory: every table is charged to the profile's budget ---------- */

#define DOING "profiling"   /* what sdp_nomem says failed */

static void *charged_calloc(sd_profile *p, size_t n, size_t elem)
{
    if (n == 0) n = 1;
    if (n > SIZE_MAX / elem || !sdp_arena_charge(&p->arena, (uint64_t)n * elem)) return NULL;
    return calloc(n, elem);
}

static uint64_t key_hash(const char *s, size_t n)
{
    uint64_t h = sdp_hash_bytes(SDP_HASH_SEED, s, n);
    return h ^ (h >> 29);   /* FNV's low bits are weak; the table indexes by them */
}

static uint64_t key_hash_of_id(const void *ctx, uint32_t id)
{
    return ((const sd_profile *)ctx)->keys[id].hash;
}

/* ---------- pass 1: blocks into their stacks ---------- */

static sd_status side_init(sd_profile *p, prof_side *sd, const sd_snapshot *s, sd_error *err)
{
    sd->snap = s;
    if (!s) return SD_OK;
    sd->n_stacks = sd_snapshot_stack_count(s);
    sd->stacks = charged_calloc(p, sd->n_stacks, sizeof *sd->stacks);
    sd->stack_key = charged_calloc(p, sd->n_stacks, sizeof *sd->stack_key);
    if (!sd->stacks || !sd->stack_key) return sdp_nomem(err, DOING);
    memset(sd->stack_key, 0xFF, (sd->n_stacks ? sd->n_stacks : 1) * sizeof *sd->stack_key);
    return SD_OK;
}

static void side_free(prof_side *sd)
{
    free(sd->stacks);
    free(sd->stack_key);
    free(sd->frame_kind);
    free(sd->frame_focus);
}

static void add_blocks(prof_side *sd)
{
    for (size_t i = 0; i < sd_snapshot_device_count(sd->snap); i++) {
        const sd_cuda_device *dev = sd_snapshot_device(sd->snap, i);
        for (size_t k = 0; k < dev->n_blocks; k++) {
            const sd_block *b = &dev->blocks[k];
            if (b->state != SD_BLOCK_ALLOCATED) continue;
            /* The model interns every block's stack; an id out of range would be a
             * model bug, and counts as the empty stack rather than being lost. */
            uint32_t s = b->stack < sd->n_stacks ? b->stack : 0;
            sd_profile_figures *f = &sd->stacks[s];
            f->bytes += b->size;
            f->blocks++;
            f->requested += b->requested_size;
        }
    }
}

/* ---------- pass 2: stacks into their keys ---------- */

/* Make the per-frame caches cover frame id `id`. */
static sd_status side_frame_slots(sd_profile *p, prof_side *sd, uint32_t id)
{
    if (id < sd->n_frame_slots) return SD_OK;
    size_t old = sd->n_frame_slots, cap = old, cap2 = old;
    if (sdp_grow((void **)&sd->frame_kind, &cap, (size_t)id + 1, 1, &p->arena) ||
        sdp_grow((void **)&sd->frame_focus, &cap2, (size_t)id + 1, 1, &p->arena))
        return SD_ENOMEM;
    /* Both grew from the same capacity with the same element size: cap == cap2. */
    memset(sd->frame_kind + old, KIND_UNKNOWN, cap - old);
    memset(sd->frame_focus + old, FOCUS_UNKNOWN, cap - old);
    sd->n_frame_slots = cap;
    return SD_OK;
}

/* Load stack `id` into the scratch arrays, kinds from the per-frame cache.
 * *focused: some frame matches a focus pattern (true when there are none). */
static sd_status load_stack(sd_profile *p, prof_side *sd, uint32_t id, size_t *n,
                            bool *focused)
{
    const uint32_t *ids = sd_snapshot_stack(sd->snap, id, n);
    if (sdp_grow((void **)&p->scratch_frames, &p->scratch_cap, *n,
                 sizeof *p->scratch_frames, &p->arena) ||
        sdp_grow((void **)&p->scratch_kinds, &p->scratch_kinds_cap, *n, 1, &p->arena))
        return SD_ENOMEM;
    bool want_focus = sd_attrib_has_focus(p->attrib);
    *focused = !want_focus;
    for (size_t i = 0; i < *n; i++) {
        uint32_t fid = ids[i];
        if (side_frame_slots(p, sd, fid)) return SD_ENOMEM;
        const sd_frame *f = sd_snapshot_frame(sd->snap, fid);
        if (sd->frame_kind[fid] == KIND_UNKNOWN)
            sd->frame_kind[fid] = (uint8_t)sd_attrib_classify(p->attrib, f);
        if (want_focus && !*focused) {
            if (sd->frame_focus[fid] == FOCUS_UNKNOWN)
                sd->frame_focus[fid] = sd_attrib_frame_focused(p->attrib, f) ? FOCUS_YES
                                                                             : FOCUS_NO;
            *focused = sd->frame_focus[fid] == FOCUS_YES;
        }
        p->scratch_frames[i] = f;
        p->scratch_kinds[i] = sd->frame_kind[fid];
    }
    return SD_OK;
}

/* Index of the key `text`, created (with zero figures) when new. */
static sd_status key_find(sd_profile *p, const char *text, size_t len, uint32_t *out,
                          sd_error *err)
{
    uint64_t h = key_hash(text, len);
    size_t j = sdp_htab_first(&p->key_index, h);
    for (; p->key_index.slots[j]; j = sdp_htab_next(&p->key_index, j)) {
        const key_rec *k = &p->keys[p->key_index.slots[j] - 1];
        if (k->hash == h && strcmp(k->pub.key, text) == 0) {
            *out = p->key_index.slots[j] - 1;
            return SD_OK;
        }
    }
    if (p->n_keys >= SD_PROFILE_NO_KEY - 1)
        return sdp_fail(err, SD_ELIMIT, SD_NO_OFFSET, "too many groups");
    if (sdp_htab_reserve_one(&p->key_index, key_hash_of_id, p) ||
        sdp_grow((void **)&p->keys, &p->keys_cap, p->n_keys + 1, sizeof *p->keys, &p->arena))
        return sdp_nomem(err, DOING);
    char *copy = sdp_arena_strndup(&p->arena, text, len);
    sd_profile_figures *figs = sdp_arena_alloc(&p->arena, p->n_sides * sizeof *figs);
    if (!copy || !figs) return sdp_nomem(err, DOING);
    memset(figs, 0, p->n_sides * sizeof *figs);
    key_rec *k = &p->keys[p->n_keys];
    memset(k, 0, sizeof *k);
    k->pub.key = copy;
    k->pub.sides = k->figs = figs;
    k->hash = h;
    /* The table may have grown: find the empty slot again. */
    j = sdp_htab_first(&p->key_index, h);
    while (p->key_index.slots[j]) j = sdp_htab_next(&p->key_index, j);
    sdp_htab_put(&p->key_index, j, (uint32_t)p->n_keys);
    *out = (uint32_t)p->n_keys++;
    return SD_OK;
}

/* The forward_frames of stack `id` into fwd (n = 0 when it has none). */
static sd_status load_forward(sd_profile *p, prof_side *sd, uint32_t id, sdp_stack_view *fwd)
{
    uint32_t f = sd_snapshot_stack_context(sd->snap, id)->forward_stack;
    size_t n = 0;
    const uint32_t *ids = f ? sd_snapshot_stack(sd->snap, f, &n) : NULL;
    *fwd = (sdp_stack_view){NULL, NULL, 0, NULL};
    if (n == 0) return SD_OK;
    if (sdp_grow((void **)&p->fwd_frames, &p->fwd_cap, n, sizeof *p->fwd_frames, &p->arena) ||
        sdp_grow((void **)&p->fwd_kinds, &p->fwd_kinds_cap, n, 1, &p->arena))
        return SD_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        uint32_t fid = ids[i];
        if (side_frame_slots(p, sd, fid)) return SD_ENOMEM;
        const sd_frame *fr = sd_snapshot_frame(sd->snap, fid);
        if (sd->frame_kind[fid] == KIND_UNKNOWN)
            sd->frame_kind[fid] = (uint8_t)sd_attrib_classify(p->attrib, fr);
        p->fwd_frames[i] = fr;
        p->fwd_kinds[i] = sd->frame_kind[fid];
    }
    *fwd = (sdp_stack_view){p->fwd_frames, p->fwd_kinds, n, NULL};
    return SD_OK;
}

/* The key of one stack, or SD_PROFILE_NO_KEY when a focus filter drops it. */
static sd_status key_of_stack(sd_profile *p, prof_side *sd, uint32_t stack, uint32_t *out,
                              sd_error *err)
{
    size_t n;
    bool focused;
    *out = SD_PROFILE_NO_KEY;
    if (load_stack(p, sd, stack, &n, &focused)) return sdp_nomem(err, DOING);
    if (!focused) return SD_OK;
    sdp_stack_view v = {p->scratch_frames, p->scratch_kinds, n,
                        sd_snapshot_stack_context(sd->snap, stack)}, fwd;
    if (load_forward(p, sd, stack, &fwd)) return sdp_nomem(err, DOING);
    sdp_sbuf_reset(&p->key);
    sdp_attrib_key_view(p->attrib, &v, &fwd, &p->key);
    if (p->key.failed) return sdp_nomem(err, DOING);
    return key_find(p, sdp_sbuf_str(&p->key), p->key.len, out, err);
}

static void figures_add(sd_profile_figures *to, const sd_profile_figures *f)
{
    to->bytes += f->bytes;
    to->blocks += f->blocks;
    to->requested += f->requested;
}

static sd_status key_side(sd_profile *p, size_t w, sd_error *err)
{
    prof_side *sd = &p->sides[w];
    for (size_t s = 0; s < sd->n_stacks; s++) {
        if (sd->stacks[s].blocks == 0) continue;
        uint32_t k;
        sd_status st = key_of_stack(p, sd, (uint32_t)s, &k, err);
        if (st) return st;
        sd->stack_key[s] = k;
        if (k == SD_PROFILE_NO_KEY) continue;
        figures_add(&p->keys[k].figs[w], &sd->stacks[s]);
        figures_add(&sd->total, &sd->stacks[s]);
    }
    return SD_OK;
}

/* ---------- representatives ---------- */

/* The stack with the most bytes in the last side where the key has any. Sides are
 * visited last to first, so a key that found its stack in a later side keeps it. */
static sd_status pick_representatives(sd_profile *p, sd_error *err)
{
    for (size_t w = p->n_sides; w-- > 0;) {
        const prof_side *sd = &p->sides[w];
        for (size_t s = 0; s < sd->n_stacks; s++) {
            uint32_t k = sd->stack_key[s];
            if (k == SD_PROFILE_NO_KEY || sd->stacks[s].bytes == 0) continue;
            key_rec *r = &p->keys[k];
            if (r->pub.has_rep && (r->pub.rep_side != w || sd->stacks[s].bytes <= r->rep_bytes))
                continue;
            r->pub.has_rep = true;
            r->pub.rep_side = w;
            r->pub.rep_stack = (uint32_t)s;
            r->rep_bytes = sd->stacks[s].bytes;
        }
    }
    for (size_t i = 0; i < p->n_keys; i++) {
        sd_profile_key *k = &p->keys[i].pub;
        k->rep_site.site = k->rep_site.via = -1;
        if (!k->has_rep) continue;
        size_t n;
        bool focused;
        if (load_stack(p, &p->sides[k->rep_side], k->rep_stack, &n, &focused))
            return sdp_nomem(err, DOING);
        sdp_stack_view v = {p->scratch_frames, p->scratch_kinds, n, NULL}, fwd;
        if (load_forward(p, &p->sides[k->rep_side], k->rep_stack, &fwd))
            return sdp_nomem(err, DOING);
        sdp_attrib_site_view(&v, &fwd, &k->rep_site);
    }
    return SD_OK;
}

/* Each key's grew_every_side (profile.h). */
static void mark_steady_growth(sd_profile *p)
{
    size_t last = p->n_sides - 1;
    for (size_t i = 0; i < p->n_keys; i++) {
        sd_profile_key *k = &p->keys[i].pub;
        bool grew = k->sides[last].bytes > k->sides[0].bytes;
        for (size_t w = 1; w <= last && grew; w++) grew = k->sides[w].bytes >= k->sides[w - 1].bytes;
        k->grew_every_side = grew;
    }
}

/* ---------- public ---------- */

static sd_status profile_build(sd_profile *p, const sd_snapshot *const *snaps,
                               sd_error *err)
{
    if (sdp_htab_init(&p->key_index, 1024, &p->arena)) return sdp_nomem(err, DOING);
    for (size_t w = 0; w < p->n_sides; w++) {
        sd_status st = side_init(p, &p->sides[w], snaps[w], err);
        if (st) return st;
        if (snaps[w]) add_blocks(&p->sides[w]);
    }
    for (size_t w = 0; w < p->n_sides; w++) {
        sd_status st = key_side(p, w, err);
        if (st) return st;
    }
    sd_status st = pick_representatives(p, err);
    if (st == SD_OK) mark_steady_growth(p);
    return st;
}

sd_profile *sd_profile_create(const sd_snapshot *const *snaps, size_t n_sides,
                              const sd_profile_options *opts, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_PROFILE_OPTIONS_VERSION, "sd_profile_options", err))
        return NULL;
    bool any = false;
    for (size_t w = 0; snaps && w < n_sides; w++) any = any || snaps[w];
    if (!any || !opts) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "sd_profile_create: no snapshot");
        return NULL;
    }
    sd_profile *p = calloc(1, sizeof *p);
    if (p) p->sides = calloc(n_sides, sizeof *p->sides);
    if (!p || !p->sides) {
        free(p);
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    p->n_sides = n_sides;
    sdp_attrib_share_labels(snaps, n_sides);
    sdp_arena_init(&p->arena, opts->max_memory);
    p->attrib = sd_attrib_create(&opts->attrib, err);
    if (!p->attrib || profile_build(p, snaps, err) != SD_OK) {
        sd_profile_free(p);
        return NULL;
    }
    return p;
}

void sd_profile_free(sd_profile *p)
{
    if (!p) return;
    sd_attrib_free(p->attrib);
    for (size_t w = 0; w < p->n_sides; w++) side_free(&p->sides[w]);
    free(p->sides);
    free(p->keys);
    sdp_htab_free(&p->key_index);
    free(p->scratch_frames);
    free(p->scratch_kinds);
    free(p->fwd_frames);
    free(p->fwd_kinds);
    sdp_sbuf_free(&p->key);
    sdp_arena_free(&p->arena);
    free(p);
}

size_t sd_profile_side_count(const sd_profile *p) { return p->n_sides; }
const sd_snapshot *sd_profile_snapshot(const sd_profile *p, size_t side)
{
    return side < p->n_sides ? p->sides[side].snap : NULL;
}
const sd_attrib *sd_profile_attrib(const sd_profile *p) { return p->attrib; }

size_t sd_profile_stack_count(const sd_profile *p, size_t side)
{
    return side < p->n_sides ? p->sides[side].n_stacks : 0;
}

const sd_profile_figures *sd_profile_stack(const sd_profile *p, size_t side, uint32_t stack)
{
    static const sd_profile_figures zero;
    if (side >= p->n_sides || stack >= p->sides[side].n_stacks) return &zero;
    return &p->sides[side].stacks[stack];
}

uint32_t sd_profile_stack_key(const sd_profile *p, size_t side, uint32_t stack)
{
    if (side >= p->n_sides || stack >= p->sides[side].n_stacks) return SD_PROFILE_NO_KEY;
    return p->sides[side].stack_key[stack];
}

size_t sd_profile_key_count(const sd_profile *p) { return p->n_keys; }
const sd_profile_key *sd_profile_key_at(const sd_profile *p, size_t i)
{
    return i < p->n_keys ? &p->keys[i].pub : NULL;
}

const sd_profile_figures *sd_profile_total(const sd_profile *p, size_t side)
{
    static const sd_profile_figures zero;
    return side < p->n_sides ? &p->sides[side].total : &zero;
}
