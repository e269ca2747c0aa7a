/* value.h - the pickle reader's value tree, shared inside src/pickle and with the model
 * builder (src/model), which reads the tree once. Analyses never include it. Not installed. */
#ifndef SNAPDIFF_PICKLE_VALUE_H
#define SNAPDIFF_PICKLE_VALUE_H

#include "base/base.h"
#include "snapdiff/pickle.h"

/* ---- values (pickle.c / value.c) ----
 * 8 bytes each, because a 1 GB snapshot holds tens of millions of them. The low 3 bits
 * are a tag: small integers (|x| < 2^60), None and bools live inline; everything else is
 * a pointer to an 8-aligned object in the arena whose first byte says its type. Strings
 * are copied into the arena (decoded, NUL-terminated), so the input can be freed once
 * parsed. Containers are shared by pointer, which is how memo sharing stays sharing. */
enum { SDP_NONE, SDP_BOOL, SDP_INT, SDP_BIGINT, SDP_FLOAT, SDP_STR, SDP_BYTES,
       SDP_LIST, SDP_TUPLE, SDP_DICT,
       SDP_RECORD, /* a dict the model took over while parsing (aux = record index,
                    * n = record class) */
       SDP_UNSET /* empty memo slot */ };

struct sd_value { uint64_t bits; };

#define SDP_TAG_MASK 7u
#define SDP_TAG_PTR 0u
#define SDP_TAG_INT 1u
#define SDP_BITS_NONE 2u
#define SDP_BITS_FALSE 3u
#define SDP_BITS_TRUE 11u
#define SDP_BITS_UNSET 4u
#define SDP_TAG_RECORD 5u     /* a record taken by the model: index << 5 | class << 3 | 5 */
#define SDP_SMALL_MAX (((int64_t)1 << 60) - 1)
#define SDP_SMALL_MIN (-((int64_t)1 << 60))

typedef struct sdp_blob {     /* str, bytes, bigint (little-endian two's complement) */
    uint8_t type;
    uint8_t pad[3];
    uint32_t len;
    char data[];              /* len bytes + NUL */
} sdp_blob;

typedef struct sdp_num {      /* float, or an int too large to sit inline */
    uint8_t type;
    uint8_t pad[7];
    union { int64_t i; double f; } u;
} sdp_num;

/* Small dicts share their key sequence: a "shape", as JS engines do. Every trace entry
 * of a snapshot has the same keys, so each stores only its values. */
enum { SDP_SHAPE_MAX_KEYS = 16 };
typedef struct sdp_shape sdp_shape;
struct sdp_shape {
    sdp_shape *first_child, *next_sibling;
    uint32_t n;
    uint32_t record_kind;     /* the record hook's verdict on these keys, cached; 0 = unasked */
    sd_value keys[];          /* n keys, oldest first */
};

typedef struct sdp_cont {
    uint8_t type;             /* SDP_LIST / SDP_TUPLE / SDP_DICT */
    uint8_t open;             /* can still receive items while parsing */
    uint8_t memoized;         /* a memo slot holds it (see sdp_parser.pending) */
    uint8_t run;              /* lists only: 1 + class of a run of records (below) */
    uint32_t aux;             /* free for analyses: the model caches interned ids here */
    uint32_t n, cap;          /* items (lists) or pairs (dicts) */
    /* A list filled only with records of one class taken one after another (a device's
     * trace, millions of entries; a segment's blocks) keeps no items: `run` is set, items
     * is NULL and the list is the records cap, cap + 1, ..., cap + n - 1. Only a parse
     * with a record hook makes runs; the model gives one its items (sdp_cont_flatten)
     * before reading it as values. */
    uint64_t offset;          /* where the opcode that made it starts */
    sd_value *items;          /* lists: n items; shaped dicts: n values; other dicts: 2n */
    sdp_shape *shape;         /* dicts only: NULL once a dict outgrows shapes */
} sdp_cont;

static inline unsigned sdp_type(sd_value v)
{
    switch (v.bits & SDP_TAG_MASK) {
    case SDP_TAG_PTR: return v.bits ? *(const uint8_t *)(uintptr_t)v.bits : SDP_NONE;
    case SDP_TAG_INT: return SDP_INT;
    case SDP_TAG_RECORD: return SDP_RECORD;
    default:
        if (v.bits == SDP_BITS_NONE) return SDP_NONE;
        if (v.bits == SDP_BITS_UNSET) return SDP_UNSET;
        return SDP_BOOL;
    }
}
/* Records come in classes, each numbered apart: trace entries, blocks, segments
 * (src/model/take.c). */
enum { SDP_REC_TRACE, SDP_REC_BLOCK, SDP_REC_SEGMENT };
static inline sd_value sdp_record_value(unsigned cls, uint64_t index)
{
    sd_value v = {(index << 5) | ((uint64_t)(cls & 3) << 3) | SDP_TAG_RECORD};
    return v;
}
/* The record index and class of an SDP_RECORD value: inline, or, for a dict the parser
 * could not prove unshared, kept in the dict's container. */
static inline uint32_t sdp_record_index(sd_value v)
{
    if ((v.bits & SDP_TAG_MASK) == SDP_TAG_RECORD) return (uint32_t)(v.bits >> 5);
    return ((const sdp_cont *)(uintptr_t)v.bits)->aux;
}
static inline unsigned sdp_record_class(sd_value v)
{
    if ((v.bits & SDP_TAG_MASK) == SDP_TAG_RECORD) return (unsigned)(v.bits >> 3) & 3;
    return ((const sdp_cont *)(uintptr_t)v.bits)->n;
}
static inline bool sdp_is_ptr(sd_value v) { return (v.bits & SDP_TAG_MASK) == 0 && v.bits; }
static inline const sdp_blob *sdp_blob_of(sd_value v)
{
    unsigned t = sdp_type(v);
    return (t == SDP_STR || t == SDP_BYTES || t == SDP_BIGINT) ? (const sdp_blob *)(uintptr_t)v.bits : NULL;
}
static inline sdp_cont *sdp_cont_of(sd_value v)
{
    unsigned t = sdp_type(v);
    return (t == SDP_LIST || t == SDP_TUPLE || t == SDP_DICT) ? (sdp_cont *)(uintptr_t)v.bits : NULL;
}
/* Integer or bool value; false when v is neither (or a bigint). */
static inline bool sdp_int_of(sd_value v, int64_t *out)
{
    if ((v.bits & SDP_TAG_MASK) == SDP_TAG_INT) { *out = (int64_t)v.bits >> 3; return true; }
    if (v.bits == SDP_BITS_TRUE || v.bits == SDP_BITS_FALSE) { *out = v.bits == SDP_BITS_TRUE; return true; }
    if (sdp_is_ptr(v) && *(const uint8_t *)(uintptr_t)v.bits == SDP_INT) {
        *out = ((const sdp_num *)(uintptr_t)v.bits)->u.i;
        return true;
    }
    return false;
}
static inline bool sdp_str_eq(sd_value v, const char *s, size_t n)
{
    const sdp_blob *b = sdp_blob_of(v);
    return b && b->type == SDP_STR && b->len == n && memcmp(b->data, s, n) == 0;
}
static inline const sd_value *sdp_dict_key(const sdp_cont *c, uint32_t i)
{
    return c->shape ? &c->shape->keys[i] : &c->items[2 * (size_t)i];
}
static inline const sd_value *sdp_dict_val(const sdp_cont *c, uint32_t i)
{
    return c->shape ? &c->items[i] : &c->items[2 * (size_t)i + 1];
}

/* Give a run list (sdp_cont.run) an items array with room for `extra` more. */
sd_status sdp_cont_flatten(sdp_arena *a, sdp_cont *c, size_t extra);
/* A list whose items will not be read again (a frames list once its stack is interned:
 * later references find the stack id in `aux`): its items array goes back to the arena
 * for the next container of its size, and the list is closed to appends. It keeps its
 * n; its items are NULL, which every reader checks (sdp_cont_items_gone). */
void sdp_cont_drop_items(sdp_arena *a, sdp_cont *c);
static inline bool sdp_cont_items_gone(const sdp_cont *c)
{
    return c->n && !c->items && !c->run;
}

/* A hook that lets the model take over small dicts as they complete, so that the
 * millions of trace entries and blocks of a big snapshot never exist as generic dicts.
 * kind() looks at a key sequence once per shape (0 = leave it a dict); take() turns the
 * pairs (kv[0] key, kv[1] value, ...) into a record and returns its value
 * (sdp_record_value), or a value of bits 0 to leave this one a dict. */
typedef struct sdp_record_hook {
    void *ctx;
    void (*begin)(void *ctx, size_t input_len);  /* may be NULL; once, before parsing */
    uint32_t (*kind)(void *ctx, const sd_value *keys, uint32_t n);
    sd_status (*take)(void *ctx, uint32_t kind, const sd_value *kv, size_t n_pairs,
                      uint64_t offset, sd_value *rec);
    /* May be NULL. Finish what take() left for later; called once parsing is done, and
     * before the parser reports an error (so an error take() would have found first is
     * the one reported). */
    sd_status (*flush)(void *ctx);
} sdp_record_hook;

/* Parse into an arena the caller owns (the snapshot's). Root is copied to *root.
 * SDP_PARSE_RELEASE_BEHIND: `data` is a private file mapping; drop the pages already
 * parsed from memory as parsing goes (the tree holds copies), so a 1 GB file does not
 * stay resident on top of its tree. Never pass it for heap memory. */
enum { SDP_PARSE_RELEASE_BEHIND = 1 };
sd_status sdp_pickle_parse_into(sdp_arena *arena, const uint8_t *data, size_t len,
                                unsigned flags, const sdp_record_hook *hook, sd_value *root,
                                uint64_t *trailing, int *proto, uint64_t *n_values,
                                sd_error *err);


#endif
