/* pickle.c - the embedded pickle reader: protocols 0-5, plain data only.
 *
 * A single pass over the bytes with a value stack, a mark stack and a dense memo. Values
 * are 16 bytes; containers live in the arena and are shared by pointer, so a memo get
 * never copies. Every opcode that would build an object or look something up is refused.
 * Every count and length read from the file is checked against what is left of the input
 * before anything is allocated for it.
 */
#define _DEFAULT_SOURCE 1 /* madvise */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pickle/value.h"
#include "pickle/pickle_ops.h"
#include "pickle/pickle_parser.h"

/* ---------- failure helpers: one place attaches the opcode offset ---------- */

sd_status sdp_pp_fail(sdp_parser *p, sd_status code, const char *fmt, ...)
{
    char text[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (p->hook && p->hook->flush) {
        sd_status st = p->hook->flush(p->hook->ctx);
        if (st) return st;
    }
    return sdp_fail(p->err, code, p->op_start, "%s", text);
}

static sd_status fail_trunc(sdp_parser *p, const char *what)
{
    return sdp_pp_fail(p, SD_ETRUNC, "truncated: expected %s, input ends at byte %zu", what,
                p->cur.len);
}

sd_status sdp_pp_fail_nomem(sdp_parser *p)
{
    return sdp_pp_fail(p, SD_ENOMEM, "memory budget exhausted while decoding (see --max-memory)");
}


/* ---------- growable buffers, charged against the arena budget ---------- */

sd_status sdp_pp_grow(sdp_parser *p, void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return SD_OK;
    size_t ncap = *cap ? *cap : 256;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem) return sdp_pp_fail_nomem(p);
        ncap *= 2;
    }
    if (!sdp_arena_charge(p->arena, (uint64_t)(ncap - *cap) * elem)) return sdp_pp_fail_nomem(p);
    void *nb = realloc(*buf, ncap * elem);
    if (!nb) return sdp_pp_fail_nomem(p);
    *buf = nb;
    *cap = ncap;
    return SD_OK;
}

/* ---------- memo ---------- */

/* The memo of a big input lives in a region reserved for the most entries the input can
 * hold, so it grows in place and is never copied (region.c). Same charges as a heap one. */
enum { MEMO_REGION_MIN_INPUT = 1 << 20 };

static sd_status memo_grow(sdp_parser *p, size_t need)
{
    if (!p->memo_region.base)
        return sdp_pp_grow(p, (void **)&p->memo, &p->memo_cap, need, sizeof *p->memo);
    size_t ncap = p->memo_cap ? p->memo_cap : 256;
    while (ncap < need) ncap *= 2;
    size_t room = p->memo_region.size / sizeof *p->memo;
    if (ncap > room) ncap = room;
    if (ncap < need) return sdp_pp_fail_nomem(p);
    if (!sdp_arena_charge(p->arena, (uint64_t)(ncap - p->memo_cap) * sizeof *p->memo))
        return sdp_pp_fail_nomem(p);
    p->memo = (sd_value *)(void *)p->memo_region.base;
    p->memo_cap = ncap;
    return SD_OK;
}

/* Give a packed window its entries back (an explicit PUT into it). */
static sd_status memo_unpack(sdp_parser *p, size_t w)
{
    sdp_memo_win *win = &p->memo_wins[w];
    sd_value *m = p->memo + (size_t)w * SDP_MEMO_WIN;
    for (size_t i = 0; i < SDP_MEMO_WIN; i++) {
        m[i] = sdp_memo_packed(p, (uint64_t)w * SDP_MEMO_WIN + i);
    }
    free(win->ones);
    *win = (sdp_memo_win){0};
    return SD_OK;
}

/* Pack window w: its entries into a bitmap of records and a list of the rest, and its
 * 2 MiB given back. Not while a dict memoized in it may still become a record (its entry
 * would be rewritten, settle_record). */
static void memo_pack_window(sdp_parser *p, size_t w)
{
    uint64_t first = (uint64_t)w * SDP_MEMO_WIN, last = first + SDP_MEMO_WIN;
    for (size_t i = 0; i < SDP_ARRAY_LEN(p->pending); i++)
        if (p->pending[i].bits && p->pending[i].memo_idx >= first && p->pending[i].memo_idx < last)
            return;
    const sd_value *m = p->memo + first;
    uint64_t base = 0, next = 0;
    unsigned cls = 0;
    size_t n_other = 0;
    bool have = false;
    for (size_t i = 0; i < SDP_MEMO_WIN; i++) {
        uint64_t b = m[i].bits;
        if ((b & SDP_TAG_MASK) == SDP_TAG_RECORD) {
            if (!have) {
                base = next = sdp_record_index(m[i]);
                cls = sdp_record_class(m[i]);
                have = true;
            }
            if (b == sdp_record_value(cls, next).bits) { next++; continue; }
        }
        n_other++;
    }
    /* Worth it when records are most of it; the packed form is then far smaller than the
     * window it replaces, which stays charged to the budget. */
    if (n_other > SDP_MEMO_WIN / 4) return;
    size_t bytes = SDP_MEMO_WIN_WORDS * (sizeof(uint64_t) + sizeof(uint32_t)) + n_other * sizeof(sd_value);
    uint8_t *mem = malloc(bytes);
    if (!mem) return;
    sdp_memo_win *win = &p->memo_wins[w];
    win->ones = (uint64_t *)(void *)mem;
    win->rank = (uint32_t *)(void *)(mem + SDP_MEMO_WIN_WORDS * sizeof(uint64_t));
    win->other = (sd_value *)(void *)(mem + SDP_MEMO_WIN_WORDS * (sizeof(uint64_t) + sizeof(uint32_t)));
    win->base = base;
    win->cls = cls;
    next = base;
    uint32_t ones = 0;
    size_t k = 0;
    for (size_t wd = 0; wd < SDP_MEMO_WIN_WORDS; wd++) {
        uint64_t bits = 0;
        win->rank[wd] = ones;
        for (unsigned j = 0; j < 64; j++) {
            uint64_t b = m[wd * 64 + j].bits;
            if (have && b == sdp_record_value(cls, next).bits) {
                bits |= 1ull << j;
                next++;
                ones++;
            } else {
                win->other[k++] = m[wd * 64 + j];
            }
        }
        win->ones[wd] = bits;
    }
    sdp_region_drop(&p->memo_region, (size_t)first * sizeof(sd_value), SDP_MEMO_WIN * sizeof(sd_value));
}

/* Pack every window two behind the newest entry (the memo of a big input only). */
static void memo_pack(sdp_parser *p)
{
    while (((uint64_t)p->memo_packed + 2) * SDP_MEMO_WIN <= p->memo_init &&
           p->memo_packed < p->n_memo_wins)
        memo_pack_window(p, p->memo_packed++);
    p->memo_pack_at = (p->memo_packed + 2) * (size_t)SDP_MEMO_WIN;
}

static sd_status memo_put(sdp_parser *p, uint64_t idx)
{
    if (p->sp == sdp_mark_base(p)) return sdp_pp_fail(p, SD_EFORMAT, "memo put with an empty stack");
    /* A dense memo: an index is only legitimate if the input could have produced that
     * many values, so the input length bounds the allocation. */
    if (idx >= (uint64_t)p->cur.len + 16)
        return sdp_pp_fail(p, SD_ELIMIT, "memo index %llu is beyond what a %zu-byte input can hold",
                    (unsigned long long)idx, p->cur.len);
    if (idx >= p->memo_cap) SDP_TRY(memo_grow(p, (size_t)idx + 1));
    if (idx >= p->memo_init) {
        for (size_t i = p->memo_init; i <= idx; i++) p->memo[i].bits = SDP_BITS_UNSET;
        p->memo_init = (size_t)idx + 1;
    } else if ((idx >> SDP_MEMO_WIN_LOG2) < p->n_memo_wins &&
               p->memo_wins[idx >> SDP_MEMO_WIN_LOG2].ones) {
        SDP_TRY(memo_unpack(p, (size_t)(idx >> SDP_MEMO_WIN_LOG2)));
    }
    if (p->memo[idx].bits == SDP_BITS_UNSET) p->memo_count++;
    else if (p->memo[idx].bits != p->stack[p->sp - 1].bits) p->memo_epoch++;
    p->memo[idx] = p->stack[p->sp - 1];
    if (p->hook) sdp_pp_note_memo_put(p, p->memo[idx], idx);
    return SD_OK;
}

static sd_status memo_get(sdp_parser *p, uint64_t idx)
{
    sd_value v = {SDP_BITS_UNSET};
    if (idx < p->memo_init) v = sdp_memo_at(p, idx);
    if (v.bits == SDP_BITS_UNSET)
        return sdp_pp_fail(p, SD_EFORMAT, "memo get of index %llu, which was never set",
                    (unsigned long long)idx);
    sdp_note_reuse(p, v);
    return sdp_push(p, v);
}

/* ---------- scalars ---------- */

static sd_status push_int(sdp_parser *p, int64_t v)
{
    sd_value x;
    if (v >= SDP_SMALL_MIN && v <= SDP_SMALL_MAX) {
        x.bits = ((uint64_t)v << 3) | SDP_TAG_INT;
        return sdp_push(p, x);
    }
    sdp_num *num = sdp_arena_alloc(p->arena, sizeof *num);
    if (!num) return sdp_pp_fail_nomem(p);
    memset(num, 0, sizeof *num);
    num->type = SDP_INT;
    num->u.i = v;
    x.bits = (uint64_t)(uintptr_t)num;
    return sdp_push(p, x);
}

static sd_status push_blob(sdp_parser *p, uint8_t type, const uint8_t *s, uint64_t n)
{
    if (n > UINT32_MAX - 16) return sdp_pp_fail(p, SD_ELIMIT, "string of more than 4 GiB");
    sdp_blob *b = sdp_arena_alloc(p->arena, sizeof *b + (size_t)n + 1);
    if (!b) return sdp_pp_fail_nomem(p);
    memset(b, 0, sizeof *b);
    b->type = type;
    b->len = (uint32_t)n;
    if (n) memcpy(b->data, s, (size_t)n);
    b->data[n] = '\0';
    sd_value x = {(uint64_t)(uintptr_t)b};
    return sdp_push(p, x);
}

/* LONG1/LONG4: little-endian two's complement. Up to 8 bytes (or longer with pure sign
 * extension) becomes an int64; anything larger stays a bigint holding its bytes. */
static sd_status push_long_bytes(sdp_parser *p, const uint8_t *b, uint64_t n)
{
    if (n == 0) return push_int(p, 0);
    uint64_t sig = n;
    uint8_t fill = (b[n - 1] & 0x80) ? 0xff : 0x00;
    while (sig > 8 && b[sig - 1] == fill && ((b[sig - 2] & 0x80) == (fill & 0x80))) sig--;
    if (sig <= 8) {
        uint64_t v = fill ? UINT64_MAX : 0;
        for (uint64_t i = 0; i < sig; i++) {
            v &= ~((uint64_t)0xff << (8 * i));
            v |= (uint64_t)b[i] << (8 * i);
        }
        return push_int(p, (int64_t)v);
    }
    return push_blob(p, SDP_BIGINT, b, n);
}

static sd_status push_text(sdp_parser *p, uint8_t type, const uint8_t *s, uint64_t n)
{
    if (type == SDP_STR && !sdp_utf8_valid(s, (size_t)n))
        return sdp_pp_fail(p, SD_EFORMAT, "string is not valid UTF-8");
    return push_blob(p, type, s, n);
}

/* Read an n-byte length, then that many bytes. */
static sd_status read_sized(sdp_parser *p, unsigned len_bytes, const char *what,
                            const uint8_t **s, uint64_t *n)
{
    if (!sdp_cur_le(&p->cur, len_bytes, n)) return fail_trunc(p, what);
    if (*n > sdp_cur_left(&p->cur))
        return sdp_pp_fail(p, SD_ETRUNC, "truncated: %s claims %llu bytes but only %zu remain", what,
                    (unsigned long long)*n, sdp_cur_left(&p->cur));
    sdp_cur_bytes(&p->cur, *n, s);
    return SD_OK;
}

static sd_status op_sized(sdp_parser *p, unsigned len_bytes, uint8_t type, const char *what)
{
    const uint8_t *s = NULL;
    uint64_t n = 0;
    SDP_TRY(read_sized(p, len_bytes, what, &s, &n));
    return push_text(p, type, s, n);
}

static sd_status op_binstring(sdp_parser *p)
{
    const uint8_t *s = NULL;
    uint64_t n = 0;
    SDP_TRY(read_sized(p, 4, "BINSTRING", &s, &n));
    if (n & 0x80000000u) return sdp_pp_fail(p, SD_EFORMAT, "BINSTRING with a negative length");
    return push_text(p, SDP_STR, s, n);
}

static sd_status op_binfloat(sdp_parser *p)
{
    const uint8_t *b = NULL;
    if (!sdp_cur_bytes(&p->cur, 8, &b)) return fail_trunc(p, "8 bytes of BINFLOAT");
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++) bits = (bits << 8) | b[i]; /* big-endian */
    sdp_num *num = sdp_arena_alloc(p->arena, sizeof *num);
    if (!num) return sdp_pp_fail_nomem(p);
    memset(num, 0, sizeof *num);
    num->type = SDP_FLOAT;
    memcpy(&num->u.f, &bits, sizeof bits);
    sd_value x = {(uint64_t)(uintptr_t)num};
    return sdp_push(p, x);
}

/* ---------- protocol 0 text opcodes (decoders in pickle_text.c) ---------- */

typedef sd_status (*text_decoder)(sdp_arena *, const uint8_t *, size_t, sd_value *,
                                  const char **);

static sd_status op_text(sdp_parser *p, const char *op, text_decoder decode)
{
    const uint8_t *s = NULL;
    size_t n;
    if (!sdp_cur_line(&p->cur, &s, &n)) return fail_trunc(p, "a newline-terminated argument");
    sd_value v;
    const char *why = "malformed";
    sd_status st = decode(p->arena, s, n, &v, &why);
    if (st == SD_ENOMEM) return sdp_pp_fail_nomem(p);
    if (st) return sdp_pp_fail(p, st, "%s argument: %s", op, why);
    return sdp_push(p, v);
}

static sd_status op_text_index(sdp_parser *p, bool put)
{
    const uint8_t *s = NULL;
    size_t n;
    uint64_t idx;
    if (!sdp_cur_line(&p->cur, &s, &n)) return fail_trunc(p, "a newline-terminated index");
    if (!sdp_text_index(s, n, &idx)) return sdp_pp_fail(p, SD_EFORMAT, "malformed memo index");
    return put ? memo_put(p, idx) : memo_get(p, idx);
}

/* ---------- refusal ---------- */

static sd_status refuse(sdp_parser *p, uint8_t op)
{
    const char *name = sdp_opcode_name(op);
    if (op == SDP_OP_GLOBAL || op == SDP_OP_INST) {
        /* Say what the file wanted to call, printable characters only. */
        char what[64];
        size_t k = 0, lines = 0;
        for (size_t i = p->cur.pos; i < p->cur.len && k < sizeof what - 1 && lines < 2; i++) {
            uint8_t ch = p->cur.base[i];
            if (ch == '\n') {
                if (++lines < 2) what[k++] = '.';
                continue;
            }
            what[k++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
        }
        what[k] = '\0';
        return sdp_pp_fail(p, SD_EREFUSED,
                    "refused opcode %s (0x%02x) calling '%s': a memory snapshot holds plain "
                    "data only, nothing is executed", name, op, what);
    }
    if (op == SDP_OP_PERSID || op == SDP_OP_BINPERSID)
        return sdp_pp_fail(p, SD_EREFUSED, "refused opcode %s (0x%02x): persistent ids mean tensor "
                    "storages, not a memory snapshot", name, op);
    return sdp_pp_fail(p, SD_EREFUSED, "refused opcode %s (0x%02x): it builds objects, and a memory "
                "snapshot holds plain data only", name, op);
}

/* ---------- the opcode loop ---------- */

static sd_status step(sdp_parser *p, uint8_t op, bool *stop);

/* A mapped input is dropped from memory every RELEASE_STEP bytes parsed. */
enum { RELEASE_STEP = 1 << 20 };

static void release_parsed(sdp_parser *p)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t base = (uintptr_t)p->cur.base;
    uintptr_t start = (base + p->released + page - 1) & ~(uintptr_t)(page - 1);
    uintptr_t end = (base + p->cur.pos) & ~(uintptr_t)(page - 1);
    if (end > start) madvise((void *)start, end - start, MADV_DONTNEED);
    p->released = p->cur.pos;
}

static inline uint64_t load_le64(const uint8_t *b)
{
    uint64_t v;
    memcpy(&v, b, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint32_t load_le32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* One value of a fast record (below): a memo get or an inline scalar, the way the opcode
 * loop would push it. Returns the bytes it took, 0 when it is anything else. */
static inline size_t fast_value(sdp_parser *p, const uint8_t *b, size_t left,
                                size_t memo_init, sd_value *out)
{
    uint64_t idx;
    if (!left) return 0;
    switch (b[0]) {
    case SDP_OP_BINGET:
        if (left < 2) return 0;
        idx = b[1];
        if (idx >= memo_init) return 0;
        *out = sdp_memo_at(p, idx);
        if (out->bits == SDP_BITS_UNSET) return 0;
        sdp_note_reuse(p, *out);
        return 2;
    case SDP_OP_LONG_BINGET:
        if (left < 5) return 0;
        idx = load_le32(b + 1);
        if (idx >= memo_init) return 0;
        *out = sdp_memo_at(p, idx);
        if (out->bits == SDP_BITS_UNSET) return 0;
        sdp_note_reuse(p, *out);
        return 5;
    case SDP_OP_BININT1:
        if (left < 2) return 0;
        out->bits = ((uint64_t)b[1] << 3) | SDP_TAG_INT;
        return 2;
    case SDP_OP_BININT2:
        if (left < 3) return 0;
        out->bits = (((uint64_t)b[1] | (uint64_t)b[2] << 8) << 3) | SDP_TAG_INT;
        return 3;
    case SDP_OP_BININT:
        if (left < 5) return 0;
        out->bits = ((uint64_t)(int64_t)(int32_t)load_le32(b + 1) << 3) | SDP_TAG_INT;
        return 5;
    case SDP_OP_LONG1: {
        unsigned n = left > 1 ? b[1] : 0;
        if (n == 0 || n > 8 || left < 10) return 0;
        uint64_t x = load_le64(b + 2);
        if (n < 8) {
            unsigned sh = 64 - 8 * n;
            x = (uint64_t)((int64_t)(x << sh) >> sh);
        }
        int64_t sx = (int64_t)x;
        if (sx < SDP_SMALL_MIN || sx > SDP_SMALL_MAX) return 0;
        out->bits = ((uint64_t)sx << 3) | SDP_TAG_INT;
        return 2 + n;
    }
    case SDP_OP_NONE: out->bits = SDP_BITS_NONE; return 1;
    case SDP_OP_NEWTRUE: out->bits = SDP_BITS_TRUE; return 1;
    case SDP_OP_NEWFALSE: out->bits = SDP_BITS_FALSE; return 1;
    default: return 0;
    }
}

/* ---------- frames lists inside a fast record ----------
 * Most trace entries and blocks of a real snapshot bring a list of their own: 'frames',
 * written EMPTY_LIST MEMOIZE then MARK gets APPENDS (or one get APPEND, or nothing for an
 * empty list), its items memo gets of frame dicts seen before. Such a list is decoded here
 * into the very container the generic path would build (same offset, items, capacity,
 * flags), so that its record still takes the fast path; the model interns it as ever. */
enum { FAST_LIST_MAX = 4096 }; /* longer lists (none in a snapshot): the generic path */

/* The items of the inline list whose items start at in[q] (after its MEMOIZE): where the
 * first get is, their count and where they end (after APPENDS or APPEND); 0 items and end
 * q when the list is empty. False when the bytes are anything else. */
static bool fast_list_extent(const uint8_t *in, size_t q, size_t len, size_t *first,
                             uint32_t *n, size_t *end)
{
    size_t at = q;
    bool marked = at < len && in[at] == SDP_OP_MARK;
    uint32_t k = 0;
    if (marked) at++;
    *first = at;
    for (;;) {
        if (at + 1 < len && in[at] == SDP_OP_BINGET) at += 2;
        else if (at + 4 < len && in[at] == SDP_OP_LONG_BINGET) at += 5;
        else break;
        if (++k > FAST_LIST_MAX || !marked) break;
    }
    if (marked) {
        if (k < 1 || k > FAST_LIST_MAX || at >= len || in[at] != SDP_OP_APPENDS) return false;
        *n = k;
        *end = at + 1;
        return true;
    }
    if (k == 1 && at < len && in[at] == SDP_OP_APPEND) {
        *n = 1;
        *end = at + 1;
        return true;
    }
    *n = 0; /* EMPTY_LIST MEMOIZE and then the next key: an empty list */
    *end = q;
    return true;
}

/* The list's items from its memo gets: frame dicts (or other objects), not records, which
 * the generic path would keep as a run (seq_add). False when a get is not one fast_value
 * takes. */
static bool fast_list_items(sdp_parser *p, const uint8_t *b, uint32_t n, size_t memo_init,
                            sd_value *items)
{
    for (uint32_t i = 0; i < n; i++) {
        /* fast_list_extent saw each get whole: 5 bytes are enough for either kind */
        size_t used = fast_value(p, b, 5, memo_init, &items[i]);
        if (!used || !sdp_is_ptr(items[i])) return false;
        b += used;
    }
    return true;
}

/* A list given back: its fast record was not taken after all. */
static void fast_list_give_back(sdp_parser *p, sd_value v)
{
    sdp_cont *c = (sdp_cont *)(uintptr_t)v.bits;
    if (c->items) sdp_arena_give_back(p->arena, c->items, (size_t)c->cap * sizeof *c->items);
    sdp_arena_give_back(p->arena, c, sizeof *c);
}

/* in[q..] is EMPTY_LIST: if it is an inline list as above, *out is its container, not yet
 * memoized (fast_record does that once the record is taken); returns the bytes it took,
 * 0 when they are anything else (nothing allocated). *n_items: for p->n_values. */
static size_t fast_list(sdp_parser *p, size_t q, size_t memo_init, sd_value *out,
                        uint32_t *n_items)
{
    const uint8_t *in = p->cur.base;
    const size_t len = p->cur.len;
    uint32_t n;
    size_t first, end;
    if (q + 1 >= len || in[q + 1] != SDP_OP_MEMOIZE ||
        !fast_list_extent(in, q + 2, len, &first, &n, &end))
        return 0;
    sdp_cont *c = sdp_arena_alloc_reuse(p->arena, sizeof *c);
    if (!c) return 0; /* the generic path reports it */
    memset(c, 0, sizeof *c);
    c->type = SDP_LIST;
    c->open = 1;
    c->offset = q;
    out->bits = (uint64_t)(uintptr_t)c;
    if (n) { /* allocated exactly, as the generic path's first batch is (cont_reserve) */
        c->items = sdp_arena_alloc_reuse(p->arena, n * sizeof *c->items);
        c->cap = n;
        if (!c->items || !fast_list_items(p, in + first, n, memo_init, c->items)) {
            fast_list_give_back(p, *out);
            return 0;
        }
        c->n = n;
    }
    *n_items = n;
    return end - q;
}

/* in[pos..] is EMPTY_DICT MEMOIZE MARK: if the pairs that follow are memo gets of the keys
 * of a template (a dict the record hook took before) each with a plain value, and SETITEMS
 * closes them, hand the pairs to the hook as the generic path would after building the
 * dict, and leave the record where the dict would have been: in the memo and on the stack.
 * *next: the offset after SETITEMS, 0 when the bytes are anything else (nothing changed:
 * the generic path decodes them). */
static sd_status fast_record(sdp_parser *p, size_t pos, size_t *next, sd_value *rec)
{
    const uint8_t *in = p->cur.base;
    const size_t len = p->cur.len;
    const size_t memo_init = p->memo_init;
    sd_value kv[2 * SDP_SHAPE_MAX_KEYS];
    *next = 0;
    for (size_t ti = 0; ti < SDP_FAST_TEMPLATES && p->fast[ti].n; ti++) {
        sdp_fast_template *t = &p->fast[ti];
        size_t q = pos + 3, i = 0;
        size_t key_at[SDP_SHAPE_MAX_KEYS];
        sd_value lists[SDP_SHAPE_MAX_KEYS]; /* inline lists, memoized after the record */
        size_t n_lists = 0;
        uint64_t list_items = 0;
        bool known = t->key_len[0] && t->epoch == p->memo_epoch;
        for (; i < t->n; i++) {
            size_t left = len - q;
            uint64_t idx;
            key_at[i] = q;
            uint32_t w = left >= 5 ? load_le32(in + q) : 0, kw = load_le32(t->key_op[i]);
            if (known && left >= 5 &&
                (t->key_len[i] == 2 ? (uint16_t)w == (uint16_t)kw
                                    : w == kw && in[q + 4] == t->key_op[i][4])) {
                q += t->key_len[i]; /* the very bytes of last time: the same key */
                kv[2 * i].bits = t->keys[i];
                goto value;
            }
            if (left >= 2 && in[q] == SDP_OP_BINGET) {
                idx = in[q + 1];
                q += 2;
            } else if (left >= 5 && in[q] == SDP_OP_LONG_BINGET) {
                idx = load_le32(in + q + 1);
                q += 5;
            } else {
                break;
            }
            if (idx >= memo_init || sdp_memo_at(p, idx).bits != t->keys[i]) break;
            kv[2 * i].bits = t->keys[i];
            sdp_note_reuse(p, kv[2 * i]);
        value:;
            size_t used = fast_value(p, in + q, len - q, memo_init, &kv[2 * i + 1]);
            if (!used && in[q] == SDP_OP_EMPTY_LIST && memo_init + 1 + n_lists < p->memo_cap) {
                uint32_t n_items = 0;
                used = fast_list(p, q, memo_init, &kv[2 * i + 1], &n_items);
                if (used) {
                    lists[n_lists++] = kv[2 * i + 1];
                    list_items += n_items;
                }
            }
            if (!used) break;
            q += used;
        }
        if (i < t->n || q >= len || in[q] != SDP_OP_SETITEMS) {
            for (size_t k = 0; k < n_lists; k++) fast_list_give_back(p, lists[k]);
            continue;
        }
        sd_status st = p->hook->take(p->hook->ctx, t->kind, kv, t->n, pos, rec);
        if (st) {
            p->op_start = pos;
            return st;
        }
        if (!rec->bits) { /* left a dict: the generic path builds it, lists and all */
            for (size_t k = 0; k < n_lists; k++) fast_list_give_back(p, lists[k]);
            return SD_OK;
        }
        if (!known) { /* remember the bytes of these keys' memo gets */
            bool plain = true;
            for (size_t k = 0; k < t->n && plain; k++) {
                size_t kl = in[key_at[k]] == SDP_OP_BINGET ? 2 : 5;
                plain = sdp_type(kv[2 * k]) != SDP_DICT; /* a dict key: note_reuse matters */
                memcpy(t->key_op[k], in + key_at[k], kl);
                t->key_len[k] = (uint8_t)kl;
            }
            t->epoch = p->memo_epoch;
            if (!plain) t->key_len[0] = 0;
        }
        if (ti) { /* most recently used first */
            sdp_fast_template hit = *t;
            memmove(&p->fast[1], &p->fast[0], ti * sizeof p->fast[0]);
            p->fast[0] = hit;
        }
        /* The dict's MEMOIZE came first, then each inline list's, in the order of the bytes. */
        p->memo[p->memo_init] = *rec;
        for (size_t k = 0; k < n_lists; k++) p->memo[p->memo_init + 1 + k] = lists[k];
        p->memo_init += 1 + n_lists;
        p->memo_count += 1 + n_lists;
        p->n_values += 1 + 2 * (uint64_t)t->n + list_items; /* the dict, its keys and values,
                                                              * the lists' items */
        *next = q + 1;
        return SD_OK;
    }
    return SD_OK;
}

/* The loop. The opcodes that make up most of a snapshot pickle (memo gets of shared keys
 * and frames, small ints, addresses and times, MEMOIZE, MARK, empty containers) are
 * decoded in an inner loop that keeps the cursor and the stack in locals. Anything else,
 * and any of those whose bytes are short or whose memo slot or stack is not ready, leaves
 * the inner loop with the opcode unread: step() then decodes it, or reports it properly. */
static sd_status run(sdp_parser *p, sd_value *root)
{
    const uint8_t *const in = p->cur.base;
    const size_t len = p->cur.len;
    size_t release_at = p->release_behind ? RELEASE_STEP : SIZE_MAX;
    bool stop = false;
    while (!stop) {
        size_t pos = p->cur.pos, sp = p->sp;
        const size_t cap = p->stack_cap;
        sd_value *const stack = p->stack;
        sd_value *const memo = p->memo;
        size_t memo_init = p->memo_init, memo_count = p->memo_count;
        uint64_t pushed = 0;
        for (;;) {
            if (pos >= len) break;
            const uint8_t *b = in + pos + 1;
            size_t left = len - pos - 1; /* argument bytes available */
            uint64_t idx;
            sd_value v;
            switch (in[pos]) {
            case SDP_OP_BINGET:
                if (left < 1) goto slow;
                idx = b[0];
                goto get;
            case SDP_OP_LONG_BINGET:
                if (left < 4) goto slow;
                idx = (uint64_t)b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16 |
                      (uint64_t)b[3] << 24;
                goto get;
            case SDP_OP_BININT1:
                if (left < 1 || sp == cap) goto slow;
                stack[sp++].bits = ((uint64_t)b[0] << 3) | SDP_TAG_INT;
                pushed++;
                pos += 2;
                continue;
            case SDP_OP_BININT2:
                if (left < 2 || sp == cap) goto slow;
                stack[sp++].bits = (((uint64_t)b[0] | (uint64_t)b[1] << 8) << 3) | SDP_TAG_INT;
                pushed++;
                pos += 3;
                continue;
            case SDP_OP_BININT:
                if (left < 4 || sp == cap) goto slow;
                stack[sp++].bits = ((uint64_t)(int64_t)(int32_t)((uint32_t)b[0] |
                                    (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                                    (uint32_t)b[3] << 24) << 3) | SDP_TAG_INT;
                pushed++;
                pos += 5;
                continue;
            case SDP_OP_LONG1: { /* addresses and timestamps: one 8-byte load */
                unsigned n = left ? b[0] : 0;
                if (n == 0 || n > 8 || left < 9 || sp == cap) goto slow;
                uint64_t x = load_le64(b + 1);
                if (n < 8) {
                    unsigned sh = 64 - 8 * n; /* keep n bytes, sign-extend from the top one */
                    x = (uint64_t)((int64_t)(x << sh) >> sh);
                }
                int64_t sx = (int64_t)x;
                if (sx < SDP_SMALL_MIN || sx > SDP_SMALL_MAX) goto slow;
                stack[sp++].bits = ((uint64_t)sx << 3) | SDP_TAG_INT;
                pushed++;
                pos += 2 + n;
                continue;
            }
            case SDP_OP_MEMOIZE:
                idx = memo_count;
                if (sp == sdp_mark_base(p) || idx >= p->memo_cap || idx != memo_init) goto slow;
                v = stack[sp - 1];
                memo[idx] = v;
                p->memo_init = memo_init = idx + 1;
                p->memo_count = memo_count = idx + 1;
                if (p->hook && sdp_is_ptr(v) && *(const uint8_t *)(uintptr_t)v.bits == SDP_DICT)
                    sdp_pp_note_memo_put(p, v, idx);
                pos += 1;
                continue;
            case SDP_OP_MARK:
                if (p->n_marks == p->marks_cap) goto slow;
                p->marks[p->n_marks++] = sp;
                pos += 1;
                continue;
            case SDP_OP_EMPTY_DICT: case SDP_OP_EMPTY_LIST: {
                if (sp == cap) goto slow;
                p->op_start = pos;
                if (in[pos] == SDP_OP_EMPTY_DICT && p->fast[0].n && left >= 2 &&
                    b[0] == SDP_OP_MEMOIZE && b[1] == SDP_OP_MARK && memo_count == memo_init &&
                    memo_init < p->memo_cap) {
                    size_t next;
                    sd_status st = fast_record(p, pos, &next, &v);
                    if (st) return st;
                    if (next) {
                        memo_init = p->memo_init;
                        memo_count = p->memo_count;
                        stack[sp++] = v;
                        pos = next;
                        if (pos >= release_at) goto slow;
                        continue;
                    }
                }
                sd_status st = sdp_pp_new_cont(p, in[pos] == SDP_OP_EMPTY_DICT ? SDP_DICT : SDP_LIST,
                                               &v);
                if (st) return st;
                stack[sp++] = v;
                pushed++;
                pos += 1;
                continue;
            }
            default:
                goto slow;
            }
        get:
            if (idx >= memo_init || sp == cap) goto slow;
            v = memo[idx];
            if (__builtin_expect(v.bits == 0, 0)) v = sdp_memo_packed(p, idx);
            if (v.bits == SDP_BITS_UNSET) goto slow;
            sdp_note_reuse(p, v);
            stack[sp++] = v;
            pushed++;
            pos += in[pos] == SDP_OP_BINGET ? 2 : 5;
        }
    slow:
        p->cur.pos = pos;
        p->sp = sp;
        p->n_values += pushed;
        if (p->memo_init >= p->memo_pack_at) memo_pack(p);
        if (pos >= release_at) {
            release_parsed(p);
            release_at = pos + RELEASE_STEP;
        }
        p->op_start = p->cur.pos;
        uint8_t op;
        if (!sdp_cur_u8(&p->cur, &op))
            return sdp_pp_fail(p, SD_ETRUNC, "truncated: expected an opcode or STOP, input ends at "
                        "byte %zu", p->cur.len);
        SDP_TRY(step(p, op, &stop));
    }
    if (p->sp == 0) return sdp_pp_fail(p, SD_EFORMAT, "STOP with an empty stack");
    /* CPython too refuses a STOP whose top of stack is an unclosed MARK. */
    if (p->sp == sdp_mark_base(p)) return sdp_pp_fail(p, SD_EFORMAT, "STOP right after an unclosed MARK");
    *root = p->stack[p->sp - 1];
    return SD_OK;
}

static sd_status step(sdp_parser *p, uint8_t op, bool *stop)
{
    uint64_t n = 0;
    sd_value v;
    size_t base = 0;
    switch (op) {
    case SDP_OP_STOP: *stop = true; return SD_OK;
    case SDP_OP_PROTO:
        if (!sdp_cur_le(&p->cur, 1, &n)) return fail_trunc(p, "the protocol number");
        if (n > 5) return sdp_pp_fail(p, SD_EFORMAT, "unsupported pickle protocol %llu (0-5 are known)",
                               (unsigned long long)n);
        p->proto = (int)n;
        return SD_OK;
    case SDP_OP_FRAME:
        if (!sdp_cur_le(&p->cur, 8, &n)) return fail_trunc(p, "an 8-byte FRAME length");
        if (n > sdp_cur_left(&p->cur))
            return sdp_pp_fail(p, SD_ETRUNC, "truncated: FRAME claims %llu bytes but only %zu remain",
                        (unsigned long long)n, sdp_cur_left(&p->cur));
        return SD_OK;
    case SDP_OP_MARK:
        if (p->n_marks == p->marks_cap)
            SDP_TRY(sdp_pp_grow(p, (void **)&p->marks, &p->marks_cap, p->n_marks + 1, sizeof *p->marks));
        p->marks[p->n_marks++] = p->sp;
        return SD_OK;
    case SDP_OP_POP:
        if (p->sp > sdp_mark_base(p)) { p->sp--; return SD_OK; }
        if (p->n_marks) { p->n_marks--; return SD_OK; }
        return sdp_pp_fail(p, SD_EFORMAT, "POP with an empty stack");
    case SDP_OP_POP_MARK: SDP_TRY(sdp_pop_mark(p, "POP_MARK", &base)); p->sp = base; return SD_OK;
    case SDP_OP_DUP:
        SDP_TRY(sdp_need_values(p, 1, "DUP"));
        sdp_pp_note_dup(p, p->stack[p->sp - 1]);
        return sdp_push(p, p->stack[p->sp - 1]);

    case SDP_OP_NONE: v.bits = SDP_BITS_NONE; return sdp_push(p, v);
    case SDP_OP_NEWTRUE: v.bits = SDP_BITS_TRUE; return sdp_push(p, v);
    case SDP_OP_NEWFALSE: v.bits = SDP_BITS_FALSE; return sdp_push(p, v);
    case SDP_OP_BININT1: if (!sdp_cur_le(&p->cur, 1, &n)) return fail_trunc(p, "BININT1's byte");
        return push_int(p, (int64_t)n);
    case SDP_OP_BININT2: if (!sdp_cur_le(&p->cur, 2, &n)) return fail_trunc(p, "BININT2's 2 bytes");
        return push_int(p, (int64_t)n);
    case SDP_OP_BININT: if (!sdp_cur_le(&p->cur, 4, &n)) return fail_trunc(p, "BININT's 4 bytes");
        return push_int(p, (int32_t)(uint32_t)n);
    case SDP_OP_LONG1: case SDP_OP_LONG4: {
        const uint8_t *b = NULL;
        SDP_TRY(read_sized(p, op == SDP_OP_LONG1 ? 1 : 4, sdp_opcode_name(op), &b, &n));
        return push_long_bytes(p, b, n);
    }
    case SDP_OP_BINFLOAT: return op_binfloat(p);
    case SDP_OP_INT: case SDP_OP_LONG: return op_text(p, sdp_opcode_name(op), sdp_text_int);
    case SDP_OP_FLOAT: return op_text(p, "FLOAT", sdp_text_float);
    case SDP_OP_STRING: return op_text(p, "STRING", sdp_text_string);
    case SDP_OP_UNICODE: return op_text(p, "UNICODE", sdp_text_unicode);

    case SDP_OP_SHORT_BINUNICODE: return op_sized(p, 1, SDP_STR, "SHORT_BINUNICODE");
    case SDP_OP_BINUNICODE: return op_sized(p, 4, SDP_STR, "BINUNICODE");
    case SDP_OP_BINUNICODE8: return op_sized(p, 8, SDP_STR, "BINUNICODE8");
    case SDP_OP_SHORT_BINSTRING: return op_sized(p, 1, SDP_STR, "SHORT_BINSTRING");
    case SDP_OP_BINSTRING: return op_binstring(p);
    case SDP_OP_SHORT_BINBYTES: return op_sized(p, 1, SDP_BYTES, "SHORT_BINBYTES");
    case SDP_OP_BINBYTES: return op_sized(p, 4, SDP_BYTES, "BINBYTES");
    case SDP_OP_BINBYTES8: return op_sized(p, 8, SDP_BYTES, "BINBYTES8");
    case SDP_OP_BYTEARRAY8: return op_sized(p, 8, SDP_BYTES, "BYTEARRAY8");

    case SDP_OP_EMPTY_LIST: case SDP_OP_EMPTY_SET:
        SDP_TRY(sdp_pp_new_cont(p, SDP_LIST, &v)); return sdp_push(p, v);
    case SDP_OP_EMPTY_DICT: SDP_TRY(sdp_pp_new_cont(p, SDP_DICT, &v)); return sdp_push(p, v);
    case SDP_OP_EMPTY_TUPLE: SDP_TRY(sdp_pp_new_cont(p, SDP_TUPLE, &v)); return sdp_push(p, v);
    case SDP_OP_TUPLE1: return sdp_pp_op_tuple_n(p, 1);
    case SDP_OP_TUPLE2: return sdp_pp_op_tuple_n(p, 2);
    case SDP_OP_TUPLE3: return sdp_pp_op_tuple_n(p, 3);
    case SDP_OP_TUPLE: case SDP_OP_LIST: case SDP_OP_DICT: case SDP_OP_FROZENSET: {
        static const uint8_t kinds[256] = {[SDP_OP_TUPLE] = SDP_TUPLE, [SDP_OP_LIST] = SDP_LIST,
                                           [SDP_OP_DICT] = SDP_DICT, [SDP_OP_FROZENSET] = SDP_LIST};
        SDP_TRY(sdp_pop_mark(p, sdp_opcode_name(op), &base));
        SDP_TRY(sdp_pp_cont_from_stack(p, kinds[op], base, &v));
        return sdp_push(p, v);
    }
    case SDP_OP_APPEND:
        SDP_TRY(sdp_need_values(p, 1, "APPEND"));
        return sdp_pp_add_to_target(p, p->sp - 1, SDP_LIST, "APPEND");
    case SDP_OP_APPENDS: return sdp_pp_op_setitems_like(p, SDP_LIST, "APPENDS");
    case SDP_OP_ADDITEMS: return sdp_pp_op_setitems_like(p, SDP_LIST, "ADDITEMS");
    case SDP_OP_SETITEM:
        SDP_TRY(sdp_need_values(p, 2, "SETITEM"));
        return sdp_pp_add_to_target(p, p->sp - 2, SDP_DICT, "SETITEM");
    case SDP_OP_SETITEMS: return sdp_pp_op_setitems_like(p, SDP_DICT, "SETITEMS");

    case SDP_OP_MEMOIZE: return memo_put(p, p->memo_count);
    case SDP_OP_BINPUT: if (!sdp_cur_le(&p->cur, 1, &n)) return fail_trunc(p, "BINPUT's index");
        p->memo_pack_at = SIZE_MAX; /* packing is for MEMOIZE's dense memo only */
        return memo_put(p, n);
    case SDP_OP_LONG_BINPUT: if (!sdp_cur_le(&p->cur, 4, &n)) return fail_trunc(p, "LONG_BINPUT's index");
        p->memo_pack_at = SIZE_MAX;
        return memo_put(p, n);
    case SDP_OP_BINGET: if (!sdp_cur_le(&p->cur, 1, &n)) return fail_trunc(p, "BINGET's index");
        return memo_get(p, n);
    case SDP_OP_LONG_BINGET: if (!sdp_cur_le(&p->cur, 4, &n)) return fail_trunc(p, "LONG_BINGET's index");
        return memo_get(p, n);
    case SDP_OP_PUT: p->memo_pack_at = SIZE_MAX; return op_text_index(p, true);
    case SDP_OP_GET: return op_text_index(p, false);

    default:
        if (sdp_opcode_refused(op)) return refuse(p, op);
        return sdp_pp_fail(p, SD_EFORMAT, "unknown opcode 0x%02x: not a pickle, or a corrupt one", op);
    }
}

sd_status sdp_pickle_parse_into(sdp_arena *arena, const uint8_t *data, size_t len,
                                unsigned flags, const sdp_record_hook *hook, sd_value *root,
                                uint64_t *trailing, int *proto, uint64_t *n_values,
                                sd_error *err)
{
    sdp_parser p;
    memset(&p, 0, sizeof p);
    p.cur = (sdp_cursor){.base = data, .len = len, .pos = 0};
    p.arena = arena;
    p.err = err;
    p.hook = hook;
    p.release_behind = (flags & SDP_PARSE_RELEASE_BEHIND) != 0;
    if (len == 0) return sdp_fail(err, SD_ETRUNC, 0, "empty input: expected a pickle");
    /* No more memo entries than the input could set: memo_put refuses an index past
     * len + 16 (and the space is address space only until entries are written). */
    p.memo_pack_at = SIZE_MAX;
    if (len >= MEMO_REGION_MIN_INPUT && len <= (SIZE_MAX - 16) / sizeof(sd_value) / 2 &&
        sdp_region_reserve(&p.memo_region, (len + 16) * sizeof(sd_value))) {
        p.n_memo_wins = p.memo_region.size / sizeof(sd_value) / SDP_MEMO_WIN;
        p.memo_wins = calloc(p.n_memo_wins ? p.n_memo_wins : 1, sizeof *p.memo_wins);
        if (p.memo_wins) p.memo_pack_at = 2 * (size_t)SDP_MEMO_WIN;
        else p.n_memo_wins = 0;
    }
    if (hook && hook->begin) hook->begin(hook->ctx, len);
    sd_status st;
    p.empty_shape = sdp_arena_alloc(arena, sizeof *p.empty_shape);
    if (!p.empty_shape) {
        st = sdp_fail(err, SD_ENOMEM, 0, "memory budget exhausted");
    } else {
        memset(p.empty_shape, 0, sizeof *p.empty_shape);
        st = run(&p, root);
        if (st == SD_OK && hook && hook->flush) st = hook->flush(hook->ctx);
    }
    if (st == SD_OK) {
        *trailing = len - p.cur.pos;
        *proto = p.proto;
        *n_values = p.n_values;
    }
    sdp_arena_uncharge(arena, (uint64_t)(p.stack_cap * sizeof *p.stack +
                                         p.marks_cap * sizeof *p.marks +
                                         p.memo_cap * sizeof *p.memo));
    free(p.stack);
    free(p.marks);
    for (size_t i = 0; i < p.n_memo_wins; i++) free(p.memo_wins[i].ones);
    free(p.memo_wins);
    if (p.memo_region.base) sdp_region_release(&p.memo_region);
    else free(p.memo);
    return st;
}
