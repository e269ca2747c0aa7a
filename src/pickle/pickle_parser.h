/* pickle_parser.h - the parser state shared by pickle.c (the opcode loop) and
 * pickle_cont.c (containers, dict shapes, records). Not installed. */
#ifndef SNAPDIFF_PICKLE_PARSER_H
#define SNAPDIFF_PICKLE_PARSER_H

#include "pickle/value.h"

/* A dict memoized while still empty, as every pickled dict is (EMPTY_DICT MEMOIZE MARK ...
 * SETITEMS). When the model takes it as a record, its memo slot is rewritten to the inline
 * record value and its container recycled, so that millions of trace entries leave
 * nothing in the arena. `shared`: fetched again (memo get, DUP) before being filled, so
 * another reference may exist: then it stays in place as an SDP_RECORD container. */
typedef struct sdp_pending {
    uint64_t bits;            /* 0 = free slot */
    uint64_t memo_idx;
    bool shared;
} sdp_pending;
enum { SDP_PENDING_LOG2 = 6, SDP_FREE_DICTS = 16 }; /* 2^6 sets of 2 ways */

/* The key objects of a dict the record hook took (the memoized key strings, by value
 * bits) and the kind it took it as. The next dict written EMPTY_DICT MEMOIZE MARK, with
 * memo gets of the same keys in the same order, plain values, then SETITEMS, is decoded
 * straight from the bytes into the hook (pickle.c, fast_record): no container, no stack,
 * no shape. Anything else in between, and the generic path decodes it instead. */
enum { SDP_FAST_TEMPLATES = 4 };
typedef struct sdp_fast_template {
    uint32_t n;               /* keys; 0 = unused */
    uint32_t kind;
    uint64_t keys[SDP_SHAPE_MAX_KEYS];
    /* The bytes of each key's memo get the last time (BINGET i or LONG_BINGET i), valid
     * while the memo's epoch is `epoch`: the same bytes are then the same key, no memo
     * read needed. key_len 0: not known yet. */
    uint8_t key_op[SDP_SHAPE_MAX_KEYS][5];
    uint8_t key_len[SDP_SHAPE_MAX_KEYS];
    uint64_t epoch;
} sdp_fast_template;

/* A packed memo window (pickle.c, memo_pack): 2^18 entries (2 MiB of the memo) whose
 * memory was given back. An entry whose bit is set holds the inline record base + (the
 * set bits before it); the others are kept in order in `other`. A big snapshot memoizes
 * every trace entry, and those entries (records taken one after another, fetched again
 * by no one) are most of its memo. */
enum { SDP_MEMO_WIN_LOG2 = 18, SDP_MEMO_WIN = 1 << SDP_MEMO_WIN_LOG2,
       SDP_MEMO_WIN_WORDS = SDP_MEMO_WIN / 64 };
typedef struct sdp_memo_win {
    uint64_t *ones;           /* SDP_MEMO_WIN_WORDS words; NULL: the window is not packed */
    uint32_t *rank;           /* per word, the set bits before it */
    sd_value *other;
    uint64_t base;
    unsigned cls;             /* the class of the records */
} sdp_memo_win;

typedef struct sdp_parser {
    sdp_cursor cur;
    sdp_arena *arena;
    sd_error *err;
    size_t op_start;            /* offset of the opcode being decoded */

    sd_value *stack;            /* value stack (malloc, charged to the arena budget) */
    size_t sp, stack_cap;
    size_t *marks;              /* stack heights at each MARK */
    size_t n_marks, marks_cap;
    sd_value *memo;             /* dense; SDP_BITS_UNSET = never set */
    size_t memo_cap;
    sdp_region memo_region;     /* where the memo of a big input grows in place */
    sdp_memo_win *memo_wins;    /* per window of the region: packed or not */
    size_t n_memo_wins;
    size_t memo_packed;         /* windows below this one were considered for packing */
    size_t memo_pack_at;        /* memo_init at which to look again; SIZE_MAX = never */
    size_t memo_init;           /* slots [0, memo_init) are initialised; the rest are
                                 * unset and untouched, so unused capacity stays unpaged */
    uint64_t memo_count;        /* entries set: MEMOIZE's index */
    uint64_t memo_epoch;        /* + 1 whenever an entry already set changes */
    uint64_t n_values;
    sdp_shape *empty_shape;     /* root of every dict's shape tree */
    const sdp_record_hook *hook;
    /* The key sequence of the last dict filled in one batch, and the shape it led to: the
     * next dict of a big snapshot almost always has the very same key objects. */
    uint64_t last_keys[SDP_SHAPE_MAX_KEYS];
    size_t last_k;
    sdp_shape *last_shape;
    sdp_pending pending[2 << SDP_PENDING_LOG2]; /* 2-way sets by container address */
    size_t n_pending;
    sdp_cont *free_dicts[SDP_FREE_DICTS];       /* recycled containers of taken dicts */
    size_t n_free_dicts;
    sdp_fast_template fast[SDP_FAST_TEMPLATES]; /* most recently used first */
    bool took;                  /* dict_add turned the dict into record took_rec */
    sd_value took_rec;
    bool release_behind;
    size_t released;            /* bytes of the mapping already dropped */
    int proto;
} sdp_parser;

/* pickle.c: failures carry the offset of the opcode being decoded. */
sd_status sdp_pp_fail(sdp_parser *p, sd_status code, const char *fmt, ...) SDP_PRINTF(3, 4);
sd_status sdp_pp_fail_nomem(sdp_parser *p);
/* Grow a malloc'd array to hold `need` elements, charging the arena budget. */
sd_status sdp_pp_grow(sdp_parser *p, void **buf, size_t *cap, size_t need, size_t elem);

static inline sd_status sdp_push(sdp_parser *p, sd_value v)
{
    if (p->sp == p->stack_cap)
        SDP_TRY(sdp_pp_grow(p, (void **)&p->stack, &p->stack_cap, p->sp + 1, sizeof *p->stack));
    p->stack[p->sp++] = v;
    p->n_values++;
    return SD_OK;
}

/* The two ways of the set a container address falls in. */
static inline sdp_pending *sdp_pending_set(sdp_parser *p, uint64_t bits)
{
    return &p->pending[2 * (size_t)((bits >> 3) * 0x9e3779b97f4a7c15ull >> (64 - SDP_PENDING_LOG2))];
}

/* The entry of a pending dict, NULL when it is not (or no longer) tracked. */
static inline sdp_pending *sdp_pending_find(sdp_parser *p, uint64_t bits)
{
    sdp_pending *e = sdp_pending_set(p, bits);
    return e[0].bits == bits ? &e[0] : e[1].bits == bits ? &e[1] : NULL;
}

/* A value fetched again (memo get, DUP): a pending dict seen twice is shared. */
static inline void sdp_note_reuse(sdp_parser *p, sd_value v)
{
    /* Only dicts are ever pending, but the pending table (3 KiB, in cache) is asked, not
     * the value: reading the type byte of every fetched object (a trace entry's frames
     * list, one of thousands spread over the arena) was a cache miss per entry, a quarter
     * of the load's time on a 170 MB snapshot. */
    if (!p->n_pending || !sdp_is_ptr(v)) return;
    sdp_pending *e = sdp_pending_find(p, v.bits);
    if (e) e->shared = true;
}

/* Memo entry idx (< memo_init) of a packed window: its entries read as 0 in the memo. */
static inline sd_value sdp_memo_packed(const sdp_parser *p, uint64_t idx)
{
    size_t w = (size_t)(idx >> SDP_MEMO_WIN_LOG2);
    sd_value v = p->memo[idx];
    if (w >= p->n_memo_wins || !p->memo_wins[w].ones) return v;
    const sdp_memo_win *win = &p->memo_wins[w];
    size_t off = (size_t)idx & (SDP_MEMO_WIN - 1), word = off >> 6;
    uint64_t bits = win->ones[word];
    uint64_t ones = win->rank[word] + (uint64_t)__builtin_popcountll(bits & ((1ull << (off & 63)) - 1));
    if (bits >> (off & 63) & 1) v = sdp_record_value(win->cls, win->base + ones);
    else v = win->other[off - ones];
    return v;
}

/* Memo entry idx (< memo_init), packed or not. */
static inline sd_value sdp_memo_at(const sdp_parser *p, uint64_t idx)
{
    sd_value v = p->memo[idx];
    if (__builtin_expect(v.bits == 0, 0)) v = sdp_memo_packed(p, idx);
    return v;
}

/* Height of the stack above the innermost mark: values an opcode may consume. */
static inline size_t sdp_mark_base(const sdp_parser *p)
{
    return p->n_marks ? p->marks[p->n_marks - 1] : 0;
}

static inline sd_status sdp_need_values(sdp_parser *p, size_t n, const char *op)
{
    if (p->sp - sdp_mark_base(p) < n)
        return sdp_pp_fail(p, SD_EFORMAT, "%s needs %zu value%s on the stack, found %zu", op, n,
                    n == 1 ? "" : "s", p->sp - sdp_mark_base(p));
    return SD_OK;
}

static inline sd_status sdp_pop_mark(sdp_parser *p, const char *op, size_t *base)
{
    if (!p->n_marks) return sdp_pp_fail(p, SD_EFORMAT, "%s without a matching MARK", op);
    *base = p->marks[--p->n_marks];
    return SD_OK;
}

/* pickle_cont.c */
/* Remember the keys kv[0], kv[2], ... of a dict just taken as record `kind`. */
void sdp_pp_learn_template(sdp_parser *p, const sd_value *kv, size_t k, uint32_t kind);
/* memo[idx] now holds v: remember it if v is an empty dict the model may take. */
void sdp_pp_note_memo_put(sdp_parser *p, sd_value v, uint64_t idx);
/* v was duplicated on the stack: a dict never recycled. */
void sdp_pp_note_dup(sdp_parser *p, sd_value v);
sd_status sdp_pp_new_cont(sdp_parser *p, uint8_t type, sd_value *out);
sd_status sdp_pp_cont_from_stack(sdp_parser *p, uint8_t type, size_t base, sd_value *out);
sd_status sdp_pp_add_to_target(sdp_parser *p, size_t base, uint8_t want, const char *op);
sd_status sdp_pp_op_setitems_like(sdp_parser *p, uint8_t want, const char *op);
sd_status sdp_pp_op_tuple_n(sdp_parser *p, size_t n);

/* pickle_text.c: protocol 0/1 text arguments; on failure *why says what was wrong. */

sd_status sdp_text_int(sdp_arena *a, const uint8_t *s, size_t n, sd_value *out,
                       const char **why);
sd_status sdp_text_float(sdp_arena *a, const uint8_t *s, size_t n, sd_value *out,
                         const char **why);
sd_status sdp_text_string(sdp_arena *a, const uint8_t *s, size_t n, sd_value *out,
                          const char **why);
sd_status sdp_text_unicode(sdp_arena *a, const uint8_t *s, size_t n, sd_value *out,
                           const char **why);
bool sdp_text_index(const uint8_t *s, size_t n, uint64_t *out);

#endif
