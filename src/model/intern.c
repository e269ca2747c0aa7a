/* intern.c - one id per distinct frame and per distinct stack.
 *
 * Since torch 2.1 the pickle shares each unique frame dict and stack list, so the first
 * sight of a container is cached on it (sdp_cont.aux) and every later reference is O(1).
 * Older files repeat equal frames as separate objects; the content hash tables make those
 * one id too, which is what lets grouping work by content, never by object identity.
 */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

#define L(s) ((s)->load)

static sd_status grow(sd_snapshot *s, void **buf, size_t *cap, size_t need, size_t elem)
{
    return sdp_model_grow(s, buf, cap, need, elem);
}

#define DOING "interning stacks"   /* what sdp_nomem_at says failed */

/* ---------- strings ---------- */

static uint64_t string_hash_id(const void *ctx, uint32_t id)
{
    const sd_snapshot *s = ctx;
    return sdp_hash_bytes(SDP_HASH_SEED, s->strings[id].p, s->strings[id].len);
}

sd_status sdp_intern_string(sd_snapshot *s, const char *p, size_t n, const char **out)
{
    n = strnlen(p, n);
    uint64_t h = sdp_hash_bytes(SDP_HASH_SEED, p, n);
    sdp_htab *t = &s->string_index;
    size_t j = sdp_htab_first(t, h);
    for (; t->slots[j]; j = sdp_htab_next(t, j)) {
        const sdp_str *g = &s->strings[t->slots[j] - 1];
        if (g->len == n && memcmp(g->p, p, n) == 0) {
            *out = g->p;
            return SD_OK;
        }
    }
    if (s->n_strings >= UINT32_MAX - 1) return sdp_model_fail(s, NULL, "too many distinct strings");
    sd_status st = grow(s, (void **)&s->strings, &s->strings_cap, s->n_strings + 1,
                        sizeof *s->strings);
    if (st) return st;
    char *copy = sdp_model_alloc(s, n + 1);
    if (!copy) return sdp_nomem_at(L(s)->err, L(s)->ctx_offset, DOING);
    memcpy(copy, p, n);
    copy[n] = 0;
    uint32_t id = (uint32_t)s->n_strings++;
    s->strings[id] = (sdp_str){.p = copy, .len = n};
    sdp_htab_put(t, j, id);
    *out = copy;
    if (sdp_htab_reserve_one(t, string_hash_id, s))
        return sdp_nomem_at(L(s)->err, L(s)->ctx_offset, DOING);
    return SD_OK;
}

/* ---------- frames ---------- */

/* Frame strings are interned, so equal frames have equal pointers. */
static uint64_t frame_hash(const sd_frame *f)
{
    uint64_t h = sdp_hash_mix(SDP_HASH_SEED, (uint64_t)(uintptr_t)f->filename);
    h = sdp_hash_mix(h, (uint64_t)(uintptr_t)f->name);
    return sdp_hash_mix(h, (uint64_t)f->line);
}

static uint64_t frame_hash_id(const void *ctx, uint32_t id)
{
    return frame_hash(&((const sd_snapshot *)ctx)->frames[id]);
}

/* The model's copy of a frame's filename or name ("" when absent or None). */
static sd_status frame_str(sd_snapshot *s, const sd_value *dict, const char *key, bool *ok,
                           const char **out)
{
    const sd_value *v = sd_value_dict_get(dict, key);
    *out = "";
    if (!v || sdp_type(*v) == SDP_NONE) return SD_OK;
    if (sdp_type(*v) != SDP_STR) {
        *ok = false;
        return SD_OK;
    }
    const sdp_blob *b = sdp_blob_of(*v);
    return sdp_intern_string(s, b->data, b->len, out);
}

static sd_status intern_frame_slow(sd_snapshot *s, const sd_value *v, uint32_t *id);

/* Frame dicts and stack lists are shared objects: look them up by pointer before touching
 * them, in a cache of `1 << bits` slots (value bits -> id + 1), in sets of 4 ways (one
 * cache line): a direct-mapped one missed one lookup in eight on a 170 MB snapshot, two
 * lists taking turns at one slot, and each miss reads the list far away in the arena. */
enum { CACHE_WAYS = 4 };

static size_t cache_set(uint64_t bits, unsigned log2_slots)
{
    return (size_t)((bits >> 3) * 0x9e3779b97f4a7c15ull >> (64 - (log2_slots - 2))) * CACHE_WAYS;
}

static bool cache_get(const sdp_id_slot *cache, unsigned log2_slots, uint64_t bits, uint32_t *id)
{
    const sdp_id_slot *e = cache + cache_set(bits, log2_slots);
    for (unsigned w = 0; w < CACHE_WAYS; w++) {
        if (e[w].bits == bits && e[w].id1) {
            *id = e[w].id1 - 1;
            return true;
        }
    }
    return false;
}

static void cache_put(sdp_id_slot *cache, unsigned log2_slots, const sd_value *v, uint32_t id)
{
    if (!sdp_is_ptr(*v)) return;
    sdp_id_slot *e = cache + cache_set(v->bits, log2_slots);
    memmove(&e[1], &e[0], (CACHE_WAYS - 1) * sizeof *e); /* the oldest way goes */
    e[0].bits = v->bits;
    e[0].id1 = id + 1;
}

static sd_status intern_frame(sd_snapshot *s, const sd_value *v, uint32_t *id)
{
    if (cache_get(L(s)->frame_cache, 14, v->bits, id)) return SD_OK;
    sd_status st = intern_frame_slow(s, v, id);
    if (st == SD_OK) cache_put(L(s)->frame_cache, 14, v, *id);
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
    sd_frame f;
    sd_status st = frame_str(s, v, "filename", &ok, &f.filename);
    if (!st) st = frame_str(s, v, "name", &ok, &f.name);
    if (st) return st;
    const sd_value *line = sd_value_dict_get(v, "line");
    f.line = line ? sd_value_int(line) : 0;
    if (!ok) return sdp_model_fail(s, v, "a stack frame has a non-string filename or name");
    uint64_t h = frame_hash(&f);
    sdp_htab *t = &s->frame_index;
    size_t j = sdp_htab_first(t, h);
    for (; t->slots[j]; j = sdp_htab_next(t, j)) {
        const sd_frame *g = &s->frames[t->slots[j] - 1];
        if (g->line == f.line && g->filename == f.filename && g->name == f.name) {
            *id = t->slots[j] - 1;
            c->aux = *id + 1;
            return SD_OK;
        }
    }
    if (s->n_frames >= UINT32_MAX - 1) return sdp_model_fail(s, v, "too many distinct frames");
    st = grow(s, (void **)&s->frames, &s->frames_cap, s->n_frames + 1, sizeof *s->frames);
    if (st) return st;
    *id = (uint32_t)s->n_frames;
    s->frames[s->n_frames++] = f;
    sdp_htab_put(t, j, *id);
    c->aux = *id + 1;
    if (sdp_htab_reserve_one(t, frame_hash_id, s))
        return sdp_nomem_at(L(s)->err, L(s)->ctx_offset, DOING);
    return SD_OK;
}

/* ---------- stacks ---------- */

static uint64_t stack_hash_ids(const uint32_t *ids, size_t n)
{
    uint64_t h = 0x84222325cbf29ce4ull ^ n;
    for (size_t i = 0; i < n; i++) h = sdp_hash_mix(h, ids[i]);
    return h;
}

static uint64_t stack_hash_id(const void *ctx, uint32_t id)
{
    const sd_snapshot *s = ctx;
    return stack_hash_ids(s->stack_frames + s->stack_start[id],
                          s->stack_start[id + 1] - s->stack_start[id]);
}

sd_status sdp_intern_init(sd_snapshot *s)
{
    sdp_arena *budget = &L(s)->pickle;
    if (sdp_htab_init(&s->string_index, 512, budget) || sdp_htab_init(&s->frame_index, 512, budget) ||
        sdp_htab_init(&s->stack_index, 512, budget) || sdp_htab_init(&s->ctx_index, 16, budget) ||
        sdp_htab_init(&s->pool_index, 16, budget) ||
        sdp_htab_init(&L(s)->list_index, 512, budget) ||
        grow(s, (void **)&s->stack_start, &s->stacks_cap, 2, sizeof *s->stack_start))
        return sdp_fail(L(s)->err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    /* Stack 0: the empty stack. */
    s->stack_start[0] = 0;
    s->stack_start[1] = 0;
    s->n_stacks = 1;
    return SD_OK;
}

void sdp_intern_free(sd_snapshot *s)
{
    free(s->strings);
    free(s->frames);
    free(s->stack_frames);
    free(s->stack_start);
    free(s->stack_ctx);
    free(s->ctx_recs);
    sdp_intern_drop_indexes(s);
}

/* The hash tables only serve lookups while loading; the model keeps the arrays. */
void sdp_intern_drop_indexes(sd_snapshot *s)
{
    s->string_index.budget = s->frame_index.budget = s->stack_index.budget = NULL;
    s->ctx_index.budget = s->pool_index.budget = NULL;
    sdp_htab_free(&s->ctx_index);
    sdp_htab_free(&s->pool_index);
    sdp_htab_free(&s->string_index);
    sdp_htab_free(&s->frame_index);
    sdp_htab_free(&s->stack_index);
    if (L(s)) {
        L(s)->list_index.budget = NULL;
        sdp_htab_free(&L(s)->list_index);
        free(L(s)->list_recs);
        free(L(s)->list_bits);
        L(s)->list_recs = NULL;
        L(s)->list_bits = NULL;
    }
}

static sd_status intern_stack_slow(sd_snapshot *s, const sd_value *frames, uint32_t *id);

void sdp_intern_prefetch(sd_snapshot *s, uint64_t frames_bits)
{
    __builtin_prefetch(L(s)->stack_cache + cache_set(frames_bits, 16));
}

sd_status sdp_intern_stack(sd_snapshot *s, const sd_value *frames, uint32_t *id)
{
    if (cache_get(L(s)->stack_cache, 16, frames->bits, id)) return SD_OK;
    sd_status st = intern_stack_slow(s, frames, id);
    if (st == SD_OK) cache_put(L(s)->stack_cache, 16, frames, *id);
    return st;
}

/* ---------- stacks by the frame objects of their list ---------- */

static uint64_t list_hash(const sd_value *items, size_t n)
{
    uint64_t h = SDP_HASH_SEED ^ n;
    for (size_t i = 0; i < n; i++) h = (h ^ items[i].bits) * 0x9e3779b97f4a7c15ull;
    return h ^ h >> 29;
}

static uint64_t list_hash_id(const void *ctx, uint32_t id)
{
    const sdp_load *Ld = ((const sd_snapshot *)ctx)->load;
    const struct sdp_list_rec *r = &Ld->list_recs[id];
    return list_hash((const sd_value *)(Ld->list_bits + r->start), r->n);
}

/* The stack a list of these very frame objects was interned as; false if none was. */
static bool stack_of_list(const sd_snapshot *s, const sdp_cont *c, uint64_t h, uint32_t *id)
{
    const sdp_load *Ld = L(s);
    const sdp_htab *t = &Ld->list_index;
    for (size_t j = sdp_htab_first(t, h); t->slots[j]; j = sdp_htab_next(t, j)) {
        const struct sdp_list_rec *r = &Ld->list_recs[t->slots[j] - 1];
        if (r->n == c->n && memcmp(Ld->list_bits + r->start, c->items, c->n * sizeof *c->items) == 0) {
            *id = r->stack;
            return true;
        }
    }
    return false;
}

/* A new stack, as the list it came from (only new ones: the index stays as small as the
 * stacks themselves, whatever the number of lists). */
static sd_status remember_list(sd_snapshot *s, const sdp_cont *c, uint64_t h, uint32_t stack)
{
    sdp_load *Ld = L(s);
    if (Ld->n_list_recs >= UINT32_MAX - 1 || Ld->n_list_bits > UINT32_MAX - c->n) return SD_OK;
    if (sdp_grow((void **)&Ld->list_bits, &Ld->list_bits_cap, Ld->n_list_bits + c->n,
                 sizeof *Ld->list_bits, &Ld->pickle) ||
        sdp_grow((void **)&Ld->list_recs, &Ld->list_recs_cap, Ld->n_list_recs + 1,
                 sizeof *Ld->list_recs, &Ld->pickle) ||
        sdp_htab_reserve_one(&Ld->list_index, list_hash_id, s))
        return sdp_nomem_at(L(s)->err, L(s)->ctx_offset, DOING);
    memcpy(Ld->list_bits + Ld->n_list_bits, c->items, c->n * sizeof *c->items);
    Ld->list_recs[Ld->n_list_recs] = (struct sdp_list_rec){(uint32_t)Ld->n_list_bits, c->n, stack};
    Ld->n_list_bits += c->n;
    sdp_htab *t = &Ld->list_index;
    size_t j = sdp_htab_first(t, h);
    while (t->slots[j]) j = sdp_htab_next(t, j);
    sdp_htab_put(t, j, (uint32_t)Ld->n_list_recs++);
    return SD_OK;
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
    sd_status st = sdp_model_items(s, c);
    if (st) return st;
    uint64_t list_h = list_hash(c->items, c->n);
    if (stack_of_list(s, c, list_h, id)) {
        c->aux = *id + 1;
        sdp_cont_drop_items(&L(s)->pickle, c);
        return SD_OK;
    }
    /* Append the frame ids at the end of the pool; drop them again if the stack exists. */
    size_t start = s->n_stack_frames;
    st = grow(s, (void **)&s->stack_frames, &s->stack_frames_cap, start + c->n,
                        sizeof *s->stack_frames);
    if (st) return st;
    for (uint32_t i = 0; i < c->n; i++) {
        L(s)->ctx_offset = c->offset;
        st = intern_frame(s, &c->items[i], &s->stack_frames[start + i]);
        if (st) return st;
    }
    const uint32_t *ids = s->stack_frames + start;
    uint64_t h = stack_hash_ids(ids, c->n);
    sdp_htab *t = &s->stack_index;
    size_t j = sdp_htab_first(t, h);
    for (; t->slots[j]; j = sdp_htab_next(t, j)) {
        uint32_t other = t->slots[j] - 1;
        size_t on = s->stack_start[other + 1] - s->stack_start[other];
        if (on == c->n && memcmp(s->stack_frames + s->stack_start[other], ids,
                                 c->n * sizeof *ids) == 0) {
            *id = other;
            c->aux = other + 1;
            sdp_cont_drop_items(&L(s)->pickle, c);
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
    sdp_htab_put(t, j, *id);
    c->aux = *id + 1;
    if (sdp_htab_reserve_one(t, stack_hash_id, s))
        return sdp_nomem_at(L(s)->err, L(s)->ctx_offset, DOING);
    st = remember_list(s, c, list_h, *id);
    /* Read again, the list is its stack id (aux): its items can serve later lists. A big
     * snapshot's trace brings a new frames list with most entries; kept, they would be
     * most of the memory of the load. */
    sdp_cont_drop_items(&L(s)->pickle, c);
    return st;
}

/* ---------- stacks with context ---------- */

static uint64_t ctx_hash(uint32_t base, const sd_stack_context *c)
{
    uint64_t h = sdp_hash_mix(SDP_HASH_SEED, base);
    h = sdp_hash_mix(h, c->forward_stack);
    h = sdp_hash_mix(h, (uint64_t)(uintptr_t)c->user_metadata);
    return sdp_hash_mix(h, (uint64_t)(uintptr_t)c->compile_context);
}

static uint64_t ctx_hash_id(const void *ctx, uint32_t id)
{
    const sdp_ctx_rec *r = &((const sd_snapshot *)ctx)->ctx_recs[id];
    return ctx_hash(r->base, &r->ctx);
}

sd_status sdp_intern_context(sd_snapshot *s, uint32_t base, uint32_t forward,
                             const char *user_metadata, const char *compile_context,
                             uint32_t *id)
{
    *id = base;
    if (!user_metadata) user_metadata = "";
    if (!compile_context) compile_context = "";
    if (forward == 0 && !user_metadata[0] && !compile_context[0]) return SD_OK;
    sd_stack_context c = {forward, user_metadata, compile_context};
    uint64_t h = ctx_hash(base, &c);
    sdp_htab *t = &s->ctx_index;
    size_t j = sdp_htab_first(t, h);
    for (; t->slots[j]; j = sdp_htab_next(t, j)) {
        const sdp_ctx_rec *r = &s->ctx_recs[t->slots[j] - 1];
        if (r->base == base && r->ctx.forward_stack == forward &&
            r->ctx.user_metadata == user_metadata && r->ctx.compile_context == compile_context) {
            *id = r->id;
            return SD_OK;
        }
    }
    if (s->n_stacks >= UINT32_MAX - 2) return sdp_model_fail(s, NULL, "too many distinct stacks");
    size_t first = s->stack_start[base], n = s->stack_start[base + 1] - first;
    size_t start = s->n_stack_frames;
    sd_status st = grow(s, (void **)&s->stack_frames, &s->stack_frames_cap, start + n,
                        sizeof *s->stack_frames);
    if (!st) st = grow(s, (void **)&s->stack_start, &s->stacks_cap, s->n_stacks + 2,
                       sizeof *s->stack_start);
    if (!st) st = grow(s, (void **)&s->stack_ctx, &s->stack_ctx_cap, s->n_stacks + 1,
                       sizeof *s->stack_ctx);
    if (!st) st = grow(s, (void **)&s->ctx_recs, &s->ctx_recs_cap, s->n_ctx_recs + 1,
                       sizeof *s->ctx_recs);
    if (st) return st;
    if (n) memcpy(s->stack_frames + start, s->stack_frames + first, n * sizeof *s->stack_frames);
    s->n_stack_frames = start + n;
    uint32_t nid = (uint32_t)s->n_stacks;
    s->stack_start[nid + 1] = (uint32_t)s->n_stack_frames;
    s->n_stacks++;
    static const sd_stack_context none = {0, "", ""};
    for (size_t k = s->n_stack_ctx; k < nid; k++) s->stack_ctx[k] = none;
    s->stack_ctx[nid] = c;
    s->n_stack_ctx = (size_t)nid + 1;
    s->ctx_recs[s->n_ctx_recs] = (sdp_ctx_rec){.base = base, .id = nid, .ctx = c};
    sdp_htab_put(t, j, (uint32_t)s->n_ctx_recs++);
    *id = nid;
    if (sdp_htab_reserve_one(t, ctx_hash_id, s))
        return sdp_nomem_at(L(s)->err, L(s)->ctx_offset, DOING);
    return SD_OK;
}
