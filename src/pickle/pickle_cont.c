/* pickle_cont.c - lists, tuples and dicts as the parser builds them.
 *
 * Dicts of up to SDP_SHAPE_MAX_KEYS keys share their key sequence through shapes, and a
 * dict the model's record hook claims (a trace entry) becomes a record instead of a dict.
 */
#include <stdlib.h>

#include "pickle/value.h"
#include "pickle/pickle_ops.h"
#include "pickle/pickle_parser.h"

sd_status sdp_pp_new_cont(sdp_parser *p, uint8_t type, sd_value *out)
{
    sdp_cont *c = type == SDP_DICT && p->n_free_dicts ? p->free_dicts[--p->n_free_dicts]
                                                      : sdp_arena_alloc(p->arena, sizeof *c);
    if (!c) return sdp_pp_fail_nomem(p);
    memset(c, 0, sizeof *c);
    c->type = type;
    c->open = type != SDP_TUPLE;
    c->offset = p->op_start;
    if (type == SDP_DICT) c->shape = p->empty_shape;
    out->bits = (uint64_t)(uintptr_t)c;
    return SD_OK;
}

/* Make room for `extra` more slots. The first batch is allocated exactly: most snapshot
 * dicts and stacks are filled by a single SETITEMS or APPENDS. */
static sd_status cont_reserve(sdp_parser *p, sdp_cont *c, size_t extra, size_t per)
{
    if (extra > UINT32_MAX - c->n) return sdp_pp_fail(p, SD_ELIMIT, "container of more than 2^32 items");
    size_t need = c->n + extra;
    if (need <= c->cap) return SD_OK;
    /* Big lists (a trace) grow 4x: the arrays they outgrow stay in the arena until the
     * load ends, and the untouched tail of a new one costs address space, not memory. */
    size_t ncap = !c->cap ? need : c->cap >= 65536 ? (size_t)c->cap * 4 : (size_t)c->cap * 2;
    if (ncap < need) ncap = need;
    if (ncap > UINT32_MAX) ncap = UINT32_MAX;
    sd_value *items = sdp_arena_alloc_reuse(p->arena, ncap * per * sizeof *items);
    if (!items) return sdp_pp_fail_nomem(p);
    if (c->n) memcpy(items, c->items, c->n * per * sizeof *items);
    if (c->cap && c->type == SDP_LIST) /* the outgrown array serves a later list */
        sdp_arena_give_back(p->arena, c->items, (size_t)c->cap * sizeof *items);
    c->items = items;
    c->cap = (uint32_t)ncap;
    return SD_OK;
}

static bool same_key(sd_value a, sd_value b)
{
    if (a.bits == b.bits) return true;
    const sdp_blob *x = sdp_blob_of(a), *y = sdp_blob_of(b);
    return x && y && x->type == SDP_STR && y->type == SDP_STR && x->len == y->len &&
           memcmp(x->data, y->data, x->len) == 0;
}

/* The shape reached from `from` by adding `key`; created on first use. */
static sd_status shape_child(sdp_parser *p, sdp_shape *from, sd_value key, sdp_shape **out)
{
    for (sdp_shape **link = &from->first_child; *link; link = &(*link)->next_sibling) {
        sdp_shape *c = *link;
        if (!same_key(c->keys[from->n], key)) continue;
        if (link != &from->first_child) { /* move to front: the next dict is likely alike */
            *link = c->next_sibling;
            c->next_sibling = from->first_child;
            from->first_child = c;
        }
        *out = c;
        return SD_OK;
    }
    sdp_shape *c = sdp_arena_alloc(p->arena, sizeof *c + (from->n + 1) * sizeof(sd_value));
    if (!c) return sdp_pp_fail_nomem(p);
    c->first_child = NULL;
    c->record_kind = 0;
    c->next_sibling = from->first_child;
    from->first_child = c;
    c->n = from->n + 1;
    if (from->n) memcpy(c->keys, from->keys, from->n * sizeof(sd_value));
    c->keys[from->n] = key;
    *out = c;
    return SD_OK;
}

/* A dict too big for shapes keeps its keys beside its values. */
static sd_status dict_unshape(sdp_parser *p, sdp_cont *c, size_t extra)
{
    size_t need = (size_t)c->n + extra;
    if (need > UINT32_MAX) return sdp_pp_fail(p, SD_ELIMIT, "dict of more than 2^32 items");
    sd_value *items = sdp_arena_alloc(p->arena, 2 * need * sizeof *items);
    if (!items) return sdp_pp_fail_nomem(p);
    for (uint32_t i = 0; i < c->n; i++) {
        items[2 * i] = c->shape->keys[i];
        items[2 * i + 1] = c->items[i];
    }
    c->items = items;
    c->cap = (uint32_t)need;
    c->shape = NULL;
    return SD_OK;
}

/* A fresh dict filled in one go whose keys the record hook claims becomes a record. */
/* The shape reached from the empty dict by the k keys kv[0], kv[2], ... */
static sd_status shape_of_keys(sdp_parser *p, const sd_value *kv, size_t k, sdp_shape **out)
{
    bool same = k == p->last_k && p->last_shape;
    for (size_t i = 0; same && i < k; i++) same = kv[2 * i].bits == p->last_keys[i];
    if (same) {
        *out = p->last_shape;
        return SD_OK;
    }
    sdp_shape *shape = p->empty_shape;
    for (size_t i = 0; i < k; i++) {
        SDP_TRY(shape_child(p, shape, kv[2 * i], &shape));
        p->last_keys[i] = kv[2 * i].bits;
    }
    p->last_k = k;
    p->last_shape = shape;
    *out = shape;
    return SD_OK;
}

/* A fresh dict filled in one go whose keys the record hook claims becomes a record. */
static sd_status try_record(sdp_parser *p, sdp_cont *c, sdp_shape *shape, const sd_value *kv,
                            size_t k, bool *taken)
{
    *taken = false;
    if (!shape->record_kind) shape->record_kind = 1 + p->hook->kind(p->hook->ctx, shape->keys, shape->n);
    if (shape->record_kind == 1) return SD_OK;
    sd_value rec;
    sd_status st = p->hook->take(p->hook->ctx, shape->record_kind - 1, kv, k, c->offset, &rec);
    if (st) {
        p->op_start = c->offset;
        return st;
    }
    if (!rec.bits) return SD_OK; /* this one stays a dict */
    p->took = true;
    p->took_rec = rec;
    *taken = true;
    sdp_pp_learn_template(p, kv, k, shape->record_kind - 1);
    return SD_OK;
}

void sdp_pp_learn_template(sdp_parser *p, const sd_value *kv, size_t k, uint32_t kind)
{
    if (!k || k > SDP_SHAPE_MAX_KEYS) return;
    for (size_t i = 0; i < k; i++)
        if (!sdp_is_ptr(kv[2 * i])) return; /* memo gets of key strings only */
    size_t slot = 0;
    for (; slot < SDP_FAST_TEMPLATES - 1; slot++) { /* the same keys again, or a free slot */
        const sdp_fast_template *t = &p->fast[slot];
        if (!t->n) break;
        bool same = t->n == k && t->kind == kind;
        for (size_t i = 0; same && i < k; i++) same = t->keys[i] == kv[2 * i].bits;
        if (same) break;
    }
    /* Move it to the front; the least recently used one falls off the end. */
    if (slot) {
        memmove(&p->fast[1], &p->fast[0], slot * sizeof p->fast[0]);
        memset(&p->fast[0], 0, sizeof p->fast[0]);
    } else if (p->fast[0].n == k && p->fast[0].kind == kind) {
        return; /* already first */
    } else {
        memset(&p->fast[0], 0, sizeof p->fast[0]);
    }
    p->fast[0].n = (uint32_t)k;
    p->fast[0].kind = kind;
    for (size_t i = 0; i < k; i++) p->fast[0].keys[i] = kv[2 * i].bits;
}

void sdp_pp_note_memo_put(sdp_parser *p, sd_value v, uint64_t idx)
{
    sdp_cont *c = sdp_cont_of(v);
    if (!c || c->type != SDP_DICT || !c->open || c->n || c->memoized > 1) return;
    if (c->memoized) { /* a second memo slot: shared (or its entry was evicted) */
        sdp_pending *e = sdp_pending_find(p, v.bits);
        if (e) e->shared = true;
        return;
    }
    c->memoized = 1;
    /* A free way of the set, else the older entry goes (an evicted dict stays in place).
     * Two ways: a trace entry stays pending while the frame dicts inside it come and go. */
    sdp_pending *e = sdp_pending_set(p, v.bits);
    if (e[0].bits && (!e[1].bits || e[1].memo_idx < e[0].memo_idx)) e++;
    if (!e->bits) p->n_pending++;
    *e = (sdp_pending){.bits = v.bits, .memo_idx = idx};
}

void sdp_pp_note_dup(sdp_parser *p, sd_value v)
{
    (void)p;
    sdp_cont *c = sdp_cont_of(v);
    if (c && c->type == SDP_DICT) c->memoized = 2;
}

/* The dict c (referenced from *slot) became record p->took_rec. If its only references
 * are *slot and one known memo slot, both become the inline record and c is recycled;
 * otherwise c itself turns into an SDP_RECORD container that every reference can read. */
static void settle_record(sdp_parser *p, sdp_cont *c, sd_value *slot)
{
    p->took = false;
    uint64_t bits = slot->bits;
    sdp_pending *e = c->memoized ? sdp_pending_find(p, bits) : NULL;
    bool known = e != NULL;
    bool recycle = !c->memoized ||
                   (c->memoized == 1 && known && !e->shared && p->memo[e->memo_idx].bits == bits);
    sd_value rec = p->took_rec;
    if (known) {
        if (recycle) {
            p->memo[e->memo_idx] = rec;
            p->memo_epoch++;
        }
        *e = (sdp_pending){0};
        p->n_pending--;
    }
    if (!recycle) {
        c->type = SDP_RECORD;
        c->open = 0;
        c->aux = sdp_record_index(rec);
        c->n = sdp_record_class(rec);
        c->shape = NULL;
        return;
    }
    *slot = rec;
    if (p->n_free_dicts < SDP_FREE_DICTS) p->free_dicts[p->n_free_dicts++] = c;
}

/* A memoized dict that was filled without being taken is no longer pending. */
static void settle_dict(sdp_parser *p, sdp_cont *c, sd_value v)
{
    if (c->memoized != 1 || !p->n_pending) return;
    sdp_pending *e = sdp_pending_find(p, v.bits);
    if (!e) return;
    *e = (sdp_pending){0};
    p->n_pending--;
}

/* Append k key/value pairs (kv[0], kv[1], ...) to a dict. */
static sd_status dict_add(sdp_parser *p, sdp_cont *c, const sd_value *kv, size_t k)
{
    /* Protocols 0 and 1 fill dicts one SETITEM at a time, so a dict is only known to be
     * complete when it is filled by one batch, as protocol 2+ writers do. */
    sdp_shape *fresh = NULL; /* the shape of a dict filled in one go, computed once */
    if (c->shape && c->n == 0 && k <= SDP_SHAPE_MAX_KEYS) SDP_TRY(shape_of_keys(p, kv, k, &fresh));
    if (fresh && p->hook && p->proto >= 2) {
        bool taken;
        SDP_TRY(try_record(p, c, fresh, kv, k, &taken));
        if (taken) return SD_OK;
    }
    if (c->shape && c->n + k > SDP_SHAPE_MAX_KEYS) SDP_TRY(dict_unshape(p, c, k));
    if (!c->shape) {
        SDP_TRY(cont_reserve(p, c, k, 2));
        memcpy(c->items + 2 * (size_t)c->n, kv, 2 * k * sizeof *kv);
        c->n += (uint32_t)k;
        return SD_OK;
    }
    SDP_TRY(cont_reserve(p, c, k, 1));
    if (fresh) {
        c->shape = fresh;
        for (size_t i = 0; i < k; i++) c->items[i] = kv[2 * i + 1];
        c->n = (uint32_t)k;
        return SD_OK;
    }
    for (size_t i = 0; i < k; i++) {
        SDP_TRY(shape_child(p, c->shape, kv[2 * i], &c->shape));
        c->items[c->n++] = kv[2 * i + 1];
    }
    return SD_OK;
}

/* Whether items[0..k) are the records that continue the run of list c (or start one). */
static bool run_continues(const sdp_cont *c, const sd_value *items, size_t k)
{
    if (!k || (items[0].bits & SDP_TAG_MASK) != SDP_TAG_RECORD) return false;
    unsigned cls = c->run ? c->run - 1u : sdp_record_class(items[0]);
    uint64_t next = c->run ? (uint64_t)c->cap + c->n : sdp_record_index(items[0]);
    for (size_t i = 0; i < k; i++, next++)
        if (items[i].bits != sdp_record_value(cls, next).bits) return false;
    return true;
}

static sd_status seq_add(sdp_parser *p, sdp_cont *c, const sd_value *items, size_t k)
{
    if (p->hook && c->type == SDP_LIST && (c->run || (!c->n && !c->cap)) &&
        run_continues(c, items, k)) {
        if (k > UINT32_MAX - c->n) return sdp_pp_fail(p, SD_ELIMIT, "container of more than 2^32 items");
        if (!c->run) {
            c->run = (uint8_t)(1 + sdp_record_class(items[0]));
            c->cap = sdp_record_index(items[0]);
        }
        c->n += (uint32_t)k;
        return SD_OK;
    }
    if (c->run) {
        sd_status st = sdp_cont_flatten(p->arena, c, k);
        if (st == SD_ENOMEM) return sdp_pp_fail_nomem(p);
        if (st) return sdp_pp_fail(p, st, "container of more than 2^32 items");
    }
    SDP_TRY(cont_reserve(p, c, k, 1));
    memcpy(c->items + c->n, items, k * sizeof *items);
    c->n += (uint32_t)k;
    return SD_OK;
}

sd_status sdp_pp_cont_from_stack(sdp_parser *p, uint8_t type, size_t base, sd_value *out)
{
    size_t n = p->sp - base;
    if (type == SDP_DICT && n % 2)
        return sdp_pp_fail(p, SD_EFORMAT, "DICT with an odd number of items (%zu)", n);
    SDP_TRY(sdp_pp_new_cont(p, type, out));
    sdp_cont *c = sdp_cont_of(*out);
    if (n) {
        if (type == SDP_DICT) SDP_TRY(dict_add(p, c, p->stack + base, n / 2));
        else SDP_TRY(seq_add(p, c, p->stack + base, n));
    }
    if (p->took) settle_record(p, c, out);
    p->sp = base;
    return SD_OK;
}

static const char *type_word(sd_value v)
{
    static const char *const names[] = {"None", "bool", "int", "int", "float", "str", "bytes",
                                        "list", "tuple", "dict", "record", "value"};
    unsigned t = sdp_type(v);
    return t < SDP_ARRAY_LEN(names) ? names[t] : "value";
}

/* APPEND/APPENDS/SETITEM/SETITEMS/ADDITEMS: move stack[base..sp) into the target below. */
sd_status sdp_pp_add_to_target(sdp_parser *p, size_t base, uint8_t want, const char *op)
{
    if (base == 0 || base - 1 < sdp_mark_base(p))
        return sdp_pp_fail(p, SD_EFORMAT, "%s with no container below its items", op);
    sd_value target = p->stack[base - 1];
    sdp_cont *c = sdp_cont_of(target);
    if (!c || c->type != want || !c->open)
        return sdp_pp_fail(p, SD_EFORMAT, "%s on a %s", op, type_word(target));
    size_t n = p->sp - base;
    if (want == SDP_DICT && n % 2)
        return sdp_pp_fail(p, SD_EFORMAT, "%s with an odd number of items (%zu)", op, n);
    if (n) {
        if (want == SDP_DICT) SDP_TRY(dict_add(p, c, p->stack + base, n / 2));
        else SDP_TRY(seq_add(p, c, p->stack + base, n));
    }
    if (p->took) settle_record(p, c, &p->stack[base - 1]);
    else if (want == SDP_DICT) settle_dict(p, c, target);
    p->sp = base;
    return SD_OK;
}

sd_status sdp_pp_op_setitems_like(sdp_parser *p, uint8_t want, const char *op)
{
    size_t base = 0;
    SDP_TRY(sdp_pop_mark(p, op, &base));
    return sdp_pp_add_to_target(p, base, want, op);
}

sd_status sdp_pp_op_tuple_n(sdp_parser *p, size_t n)
{
    SDP_TRY(sdp_need_values(p, n, "TUPLE1/2/3"));
    sd_value t = {0};
    SDP_TRY(sdp_pp_cont_from_stack(p, SDP_TUPLE, p->sp - n, &t));
    return sdp_push(p, t);
}
