/* intern.c - one id per distinct frame and per distinct stack.
 *
 * Since torch 2.1 the pickle shares each unique frame dict and stack list, so the first
 * sight of a container is cached on it (sdp_cont.aux) and every later reference is O(1).
 * Older files repeat equal frames as separate objects; the content hash tables make those
 * one id too, which is what lets grouping work by content, never by object identity.
 */
#include <stdlib.h>

#include "model/model.h"

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull; /* FNV-1a */
    return h;
}

static uint64_t hash_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static sd_status grow(sd_snapshot *s, void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return SD_OK;
    size_t ncap = *cap ? *cap * 2 : 64;
    while (ncap < need) ncap *= 2;
    if (ncap > SIZE_MAX / elem / 2 || !sdp_arena_charge(&s->arena, (ncap - *cap) * elem))
        return sdp_model_fail(s, NULL, "memory budget exhausted while interning stacks");
    void *nb = realloc(*buf, ncap * elem);
    if (!nb) return sdp_model_fail(s, NULL, "out of memory while interning stacks");
    *buf = nb;
    *cap = ncap;
    return SD_OK;
}

static sd_status table_init(sd_snapshot *s, intern_table *t)
{
    t->cap = 1024;
    t->count = 0;
    if (!sdp_arena_charge(&s->arena, t->cap * sizeof *t->slots)) return SD_ENOMEM;
    t->slots = calloc(t->cap, sizeof *t->slots);
    return t->slots ? SD_OK : SD_ENOMEM;
}

/* Keep the load factor under 1/2; rehash with the caller's hash of each stored id. */
typedef uint64_t (*id_hash_fn)(const sd_snapshot *s, uint32_t id);

static sd_status table_maybe_grow(sd_snapshot *s, intern_table *t, id_hash_fn hash)
{
    if ((t->count + 1) * 2 <= t->cap) return SD_OK;
    size_t ncap = t->cap * 2;
    if (!sdp_arena_charge(&s->arena, ncap * sizeof *t->slots))
        return sdp_model_fail(s, NULL, "memory budget exhausted while interning stacks");
    uint32_t *slots = calloc(ncap, sizeof *slots);
    if (!slots) return sdp_model_fail(s, NULL, "out of memory while interning stacks");
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i]) continue;
        size_t j = hash(s, t->slots[i] - 1) & (ncap - 1);
        while (slots[j]) j = (j + 1) & (ncap - 1);
        slots[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->cap = ncap;
    return SD_OK;
}

/* ---------- frames ---------- */

static uint64_t frame_hash(const sd_frame *f)
{
    uint64_t h = hash_bytes(0xcbf29ce484222325ull, f->filename, strlen(f->filename));
    h = hash_bytes(h ^ 0xff, f->name, strlen(f->name));
    return hash_mix(h, (uint64_t)f->line);
}

static uint64_t frame_hash_id(const sd_snapshot *s, uint32_t id) { return frame_hash(&s->frames[id]); }

static const char *frame_str(sd_snapshot *s, const sd_value *dict, const char *key, bool *ok)
{
    (void)s;
    const sd_value *v = sd_value_dict_get(dict, key);
    if (!v || sdp_type(*v) == SDP_NONE) return "";
    if (sdp_type(*v) != SDP_STR) {
        *ok = false;
        return "";
    }
    return sdp_blob_of(*v)->data; /* arena copy, NUL-terminated, lives with the snapshot */
}

static sd_status intern_frame_slow(sd_snapshot *s, const sd_value *v, uint32_t *id);

/* Frame dicts and stack lists are shared objects: look them up by pointer before touching
 * them, in a direct-mapped cache of `1 << bits` slots (value bits -> id + 1). */
typedef struct { uint64_t bits; uint32_t id1; } id_slot;

static size_t cache_slot(uint64_t bits, unsigned log2_slots)
{
    return (size_t)((bits >> 3) * 0x9e3779b97f4a7c15ull >> (64 - log2_slots));
}

static bool cache_get(void *cache, unsigned log2_slots, uint64_t bits, uint32_t *id)
{
    const id_slot *e = (const id_slot *)cache + cache_slot(bits, log2_slots);
    if (e->bits != bits || !e->id1) return false;
    *id = e->id1 - 1;
    return true;
}

static void cache_put(void *cache, unsigned log2_slots, const sd_value *v, uint32_t id)
{
    if (!sdp_is_ptr(*v)) return;
    id_slot *e = (id_slot *)cache + cache_slot(v->bits, log2_slots);
    e->bits = v->bits;
    e->id1 = id + 1;
}

static sd_status intern_frame(sd_snapshot *s, const sd_value *v, uint32_t *id)
{
    if (cache_get(s->frame_cache, 14, v->bits, id)) return SD_OK;
    sd_status st = intern_frame_slow(s, v, id);
    if (st == SD_OK) cache_put(s->frame_cache, 14, v, *id);
    return st;
}

static sd_status intern_frame_slow(sd_snapshot *s, const sd_value *v, uint32_t *id)
{
    sdp_cont *c = sdp_cont_of(*v);
    if (!c || c->type != SDP_DICT)
        return sdp_model_fail(s, v, "a stack frame is not a dict");
    if (c->aux) {
        *id = c->aux - 1;
        return SD_OK;
    }
    bool ok = true;
    sd_frame f = {.filename = frame_str(s, v, "filename", &ok), .name = frame_str(s, v, "name", &ok)};
    const sd_value *line = sd_value_dict_get(v, "line");
    f.line = line ? sd_value_int(line) : 0;
    if (!ok) return sdp_model_fail(s, v, "a stack frame has a non-string filename or name");
    uint64_t h = frame_hash(&f);
    intern_table *t = &s->frame_index;
    size_t j = h & (t->cap - 1);
    for (; t->slots[j]; j = (j + 1) & (t->cap - 1)) {
        const sd_frame *g = &s->frames[t->slots[j] - 1];
        if (g->line == f.line && strcmp(g->filename, f.filename) == 0 && strcmp(g->name, f.name) == 0) {
            *id = t->slots[j] - 1;
            c->aux = *id + 1;
            return SD_OK;
        }
    }
    if (s->n_frames >= UINT32_MAX - 1) return sdp_model_fail(s, v, "too many distinct frames");
    sd_status st = grow(s, (void **)&s->frames, &s->frames_cap, s->n_frames + 1, sizeof *s->frames);
    if (st) return st;
    *id = (uint32_t)s->n_frames;
    s->frames[s->n_frames++] = f;
    t->slots[j] = *id + 1;
    t->count++;
    c->aux = *id + 1;
    return table_maybe_grow(s, t, frame_hash_id);
}

/* ---------- stacks ---------- */

static uint64_t stack_hash_ids(const uint32_t *ids, size_t n)
{
    uint64_t h = 0x84222325cbf29ce4ull ^ n;
    for (size_t i = 0; i < n; i++) h = hash_mix(h, ids[i]);
    return h;
}

static uint64_t stack_hash_id(const sd_snapshot *s, uint32_t id)
{
    return stack_hash_ids(s->stack_frames + s->stack_start[id],
                          s->stack_start[id + 1] - s->stack_start[id]);
}

sd_status sdp_intern_init(sd_snapshot *s)
{
    if (table_init(s, &s->frame_index) || table_init(s, &s->stack_index) ||
        grow(s, (void **)&s->stack_start, &s->stacks_cap, 2, sizeof *s->stack_start))
        return sdp_model_fail(s, NULL, "out of memory");
    /* Stack 0: the empty stack. */
    s->stack_start[0] = 0;
    s->stack_start[1] = 0;
    s->n_stacks = 1;
    return SD_OK;
}

void sdp_intern_free(sd_snapshot *s)
{
    free(s->frames);
    free(s->frame_index.slots);
    free(s->stack_frames);
    free(s->stack_start);
    free(s->stack_index.slots);
}

static sd_status intern_stack_slow(sd_snapshot *s, const sd_value *frames, uint32_t *id);

sd_status sdp_intern_stack(sd_snapshot *s, const sd_value *frames, uint32_t *id)
{
    if (cache_get(s->stack_cache, 16, frames->bits, id)) return SD_OK;
    sd_status st = intern_stack_slow(s, frames, id);
    if (st == SD_OK) cache_put(s->stack_cache, 16, frames, *id);
    return st;
}

static sd_status intern_stack_slow(sd_snapshot *s, const sd_value *frames, uint32_t *id)
{
    sdp_cont *c = sdp_cont_of(*frames);
    if (!c || c->type == SDP_DICT) return sdp_model_fail(s, frames, "'frames' is not a list");
    if (c->aux) {
        *id = c->aux - 1;
        return SD_OK;
    }
    if (c->n == 0) {
        *id = 0;
        c->aux = 1;
        return SD_OK;
    }
    /* Append the frame ids at the end of the pool; drop them again if the stack exists. */
    size_t start = s->n_stack_frames;
    sd_status st = grow(s, (void **)&s->stack_frames, &s->stack_frames_cap, start + c->n,
                        sizeof *s->stack_frames);
    if (st) return st;
    for (uint32_t i = 0; i < c->n; i++) {
        s->ctx_offset = c->offset;
        st = intern_frame(s, &c->items[i], &s->stack_frames[start + i]);
        if (st) return st;
    }
    const uint32_t *ids = s->stack_frames + start;
    uint64_t h = stack_hash_ids(ids, c->n);
    intern_table *t = &s->stack_index;
    size_t j = h & (t->cap - 1);
    for (; t->slots[j]; j = (j + 1) & (t->cap - 1)) {
        uint32_t other = t->slots[j] - 1;
        size_t on = s->stack_start[other + 1] - s->stack_start[other];
        if (on == c->n && memcmp(s->stack_frames + s->stack_start[other], ids,
                                 c->n * sizeof *ids) == 0) {
            *id = other;
            c->aux = other + 1;
            return SD_OK; /* n_stack_frames unchanged: the ids are dropped */
        }
    }
    if (s->n_stacks >= UINT32_MAX - 2) return sdp_model_fail(s, frames, "too many distinct stacks");
    st = grow(s, (void **)&s->stack_start, &s->stacks_cap, s->n_stacks + 2, sizeof *s->stack_start);
    if (st) return st;
    s->n_stack_frames = start + c->n;
    *id = (uint32_t)s->n_stacks;
    s->stack_start[s->n_stacks + 1] = (uint32_t)s->n_stack_frames;
    s->n_stacks++;
    t->slots[j] = *id + 1;
    t->count++;
    c->aux = *id + 1;
    return table_maybe_grow(s, t, stack_hash_id);
}
