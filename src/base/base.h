/* base.h - the bottom layer every other layer of libsnapdiff may use: errors, the arena,
 * the bounds-checked cursor (prefix sdp_). Not installed. */
#ifndef SNAPDIFF_BASE_H
#define SNAPDIFF_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "snapdiff/common.h"

#define SDP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define SDP_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
/* Return the status of x from the calling function unless it is SD_OK. */
#define SDP_TRY(x) do { sd_status st_ = (x); if (st_ != SD_OK) return st_; } while (0)

/* ---- saturating int64 arithmetic ----
 * Times and offsets come from the file: a hostile time_us near INT64_MAX must give a
 * clamped figure, never signed overflow (undefined behaviour). */
static inline int64_t sdp_i64_add_sat(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
    return a + b;
}
static inline int64_t sdp_i64_sub_sat(int64_t a, int64_t b)
{
    if (b < 0 && a > INT64_MAX + b) return INT64_MAX;
    if (b > 0 && a < INT64_MIN + b) return INT64_MIN;
    return a - b;
}

/* ---- errors (error.c) ---- */
/* Fill err unless it already holds an error (first error wins). Returns code. */
sd_status sdp_fail(sd_error *err, sd_status code, uint64_t offset, const char *fmt, ...)
    SDP_PRINTF(4, 5);
void sdp_error_set_source(sd_error *err, const char *source);
/* A failed allocation (SD_ENOMEM): "memory budget exhausted while DOING" ("diffing"), the
 * budget (--max-memory) being what almost always runs out. The library's one message for
 * it; sdp_nomem_at when the input has an offset to name. */
sd_status sdp_nomem_at(sd_error *err, uint64_t offset, const char *doing);
static inline sd_status sdp_nomem(sd_error *err, const char *doing)
{
    return sdp_nomem_at(err, SD_NO_OFFSET, doing);
}

/* ---- options structs that can grow (options.c) ----
 * Every struct a caller fills starts with `unsigned version` (docs/architecture.md,
 * "Structs that can grow"); 0, a zeroed struct, reads as 1. The sd_*_init functions fill
 * one from its _INIT template (`tmpl`, `size` bytes) for a version this library knows,
 * else SD_EUSAGE. While every struct is at version 1, `size` is version 1's; the struct
 * that reaches version 2 must clear only the size of the version it is asked for. */
sd_status sdp_options_init(void *opts, size_t size, const void *tmpl, unsigned version,
                           unsigned newest);
/* SD_OK when `opts` is NULL or its version is one this library knows (0..newest); else
 * SD_EUSAGE with err naming the struct (`what`) and both versions. */
sd_status sdp_options_check(const void *opts, unsigned newest, const char *what,
                            sd_error *err);

/* ---- arena (arena.c) ----
 * One bump allocator per loaded snapshot. Memory is counted against a budget so that a
 * hostile file turns into SD_ENOMEM, not the OOM killer. */
typedef struct sdp_arena_chunk sdp_arena_chunk;
typedef struct sdp_arena {
    sdp_arena_chunk *head;
    uint8_t *cur, *end;
    uint64_t used;      /* bytes obtained from malloc, chunk headers included */
    uint64_t budget;    /* 0 = unlimited */
    void **spare;       /* blocks given back, per 8-byte size class (NULL until the first) */
} sdp_arena;

void sdp_arena_init(sdp_arena *a, uint64_t budget);
void sdp_arena_free(sdp_arena *a);
/* Aligned to 8 bytes. NULL when the budget or malloc is exhausted. */
void *sdp_arena_alloc(sdp_arena *a, size_t size);
/* Budget check for memory the caller mallocs itself (stacks, memo): charges `delta`;
 * sdp_arena_uncharge gives it back when that memory is freed. */
bool sdp_arena_charge(sdp_arena *a, uint64_t delta);
void sdp_arena_uncharge(sdp_arena *a, uint64_t delta);
char *sdp_arena_strndup(sdp_arena *a, const char *s, size_t n);
/* The arena frees nothing alone, but a block its owner is done with can serve the next
 * request of the same size: a value tree drops millions of small arrays while it is
 * read (a frames list's items, once its stack is interned). sdp_arena_give_back keeps
 * blocks of up to SDP_ARENA_SPARE_MAX bytes (larger ones stay where they are);
 * sdp_arena_alloc_reuse is sdp_arena_alloc, served from one of them when it can. */
enum { SDP_ARENA_SPARE_MAX = 4096 };
void sdp_arena_give_back(sdp_arena *a, void *p, size_t size);
void *sdp_arena_alloc_reuse(sdp_arena *a, size_t size);

/* ---- big regions (region.c) ----
 * sdp_map_aligned: a fresh mapping of at least `size` bytes, 2 MiB aligned and advised
 * for huge pages (noreserve: address space only, committed as pages are touched); its
 * length goes to *mapped, for sdp_unmap. NULL when mmap fails.
 * A region: address space reserved for an array that grows in place and never moves.
 * sdp_region_reserve is false (r->base NULL) when the space cannot be had: fall back to a
 * heap buffer. sdp_region_drop_tail gives back the memory of pages past `used` bytes. */
void *sdp_map_aligned(size_t size, bool noreserve, size_t *mapped);
void sdp_unmap(void *p, size_t mapped);
typedef struct sdp_region {
    uint8_t *base;
    size_t size;        /* bytes reserved (0: no region) */
} sdp_region;
bool sdp_region_reserve(sdp_region *r, size_t bytes);
void sdp_region_release(sdp_region *r);
void sdp_region_drop_tail(sdp_region *r, size_t used);
/* Give back the memory of [offset, offset + len): it reads as zeros afterwards. */
void sdp_region_drop(sdp_region *r, size_t offset, size_t len);

/* ---- growable buffers (grow.c) ----
 * Make room for `need` elements of `elem` bytes in *buf (capacity *cap, in elements):
 * doubling, overflow-checked, charged to `budget` (may be NULL) before allocating.
 * @return SD_OK, or SD_ENOMEM with *buf and *cap untouched. */
sd_status sdp_grow(void **buf, size_t *cap, size_t need, size_t elem, sdp_arena *budget);
/* The same growth (and the same charges) inside region r when it has one: *buf is the
 * region and never moves. Past the region's end it moves to the heap, and r is released;
 * without a region it is sdp_grow. Free *buf with sdp_region_release when r->base is still
 * set, else with free(). */
sd_status sdp_grow_in_region(void **buf, size_t *cap, size_t need, size_t elem,
                             sdp_arena *budget, sdp_region *r);

/* ---- hashing (hash.c) ---- */
#define SDP_HASH_SEED 0xcbf29ce484222325ull
uint64_t sdp_hash_bytes(uint64_t h, const void *p, size_t n);   /* FNV-1a, chained */
uint64_t sdp_hash_mix(uint64_t h, uint64_t v);                  /* fold in a 64-bit value */

/* An open-addressing table of ids (slot = id + 1, 0 = empty), load factor under 1/2.
 * The caller owns the records: it hashes a record by id, probes with sdp_htab_probe and
 * compares records itself. Memory is charged to `budget` (may be NULL).
 *
 *     size_t j = sdp_htab_first(&t, h);
 *     for (; t.slots[j]; j = sdp_htab_next(&t, j)) if (equal(t.slots[j] - 1)) return ...;
 *     SDP_TRY(sdp_htab_reserve_one(&t, hash_of_id, ctx));  // may rehash: probe again after
 */
typedef uint64_t (*sdp_id_hash_fn)(const void *ctx, uint32_t id);
typedef struct sdp_htab {
    uint32_t *slots;
    size_t cap;          /* power of two */
    size_t count;
    sdp_arena *budget;
    size_t mapped;       /* the slots' mapping (big tables, hash.c); 0: from the heap */
} sdp_htab;

sd_status sdp_htab_init(sdp_htab *t, size_t cap_hint, sdp_arena *budget);
void sdp_htab_free(sdp_htab *t);
/* Room for one more id; rehashes with `hash` when the table would pass half full. */
sd_status sdp_htab_reserve_one(sdp_htab *t, sdp_id_hash_fn hash, const void *ctx);
/* The home slot of hash h. The high half is folded in: sdp_hash_mix ends with a multiply,
 * whose low bits depend only on the value's low bits, and block addresses are multiples of
 * 512. Taken alone, the low bits put every address of a trace in cap/512 home slots, and
 * the probes of a 2.7-million-entry replay ran for minutes. */
static inline size_t sdp_htab_slot(uint64_t h, size_t cap) { return (size_t)(h ^ (h >> 32)) & (cap - 1); }
static inline size_t sdp_htab_first(const sdp_htab *t, uint64_t h) { return sdp_htab_slot(h, t->cap); }
static inline size_t sdp_htab_next(const sdp_htab *t, size_t j) { return (j + 1) & (t->cap - 1); }
/* Store id at the empty slot j found by probing (after sdp_htab_reserve_one). */
static inline void sdp_htab_put(sdp_htab *t, size_t j, uint32_t id) { t->slots[j] = id + 1; t->count++; }


/* ---- a growable string (sbuf.c) ----
 * Failure is sticky: after a failed allocation every append is a no-op and `failed` stays
 * set, so callers check once at the end. */
typedef struct sdp_sbuf {
    char *p;
    size_t len, cap;
    bool failed;
} sdp_sbuf;

void sdp_sbuf_reset(sdp_sbuf *b);            /* len = 0, keeps the memory */
void sdp_sbuf_free(sdp_sbuf *b);
void sdp_sbuf_put(sdp_sbuf *b, const char *s, size_t n);
void sdp_sbuf_puts(sdp_sbuf *b, const char *s);
void sdp_sbuf_put_int(sdp_sbuf *b, int64_t v);
/* NUL-terminated contents ("" when empty or failed). */
const char *sdp_sbuf_str(sdp_sbuf *b);

/* ---- bounds-checked cursor ----
 * Every read from input goes through one of these. They never read past `len`. */
typedef struct sdp_cursor {
    const uint8_t *base;
    size_t len;
    size_t pos;
} sdp_cursor;

static inline size_t sdp_cur_left(const sdp_cursor *c) { return c->len - c->pos; }
static inline bool sdp_cur_u8(sdp_cursor *c, uint8_t *out)
{
    if (c->pos >= c->len) return false;
    *out = c->base[c->pos++];
    return true;
}
static inline bool sdp_cur_le(sdp_cursor *c, unsigned n, uint64_t *out)
{
    if (sdp_cur_left(c) < n) return false;
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= (uint64_t)c->base[c->pos + i] << (8 * i);
    c->pos += n;
    *out = v;
    return true;
}
static inline bool sdp_cur_bytes(sdp_cursor *c, uint64_t n, const uint8_t **out)
{
    if (n > sdp_cur_left(c)) return false;
    *out = c->base + c->pos;
    c->pos += (size_t)n;
    return true;
}
/* A protocol-0 text line up to '\n' (excluded); false if no newline before the end. */
static inline bool sdp_cur_line(sdp_cursor *c, const uint8_t **out, size_t *n)
{
    const uint8_t *start = c->base + c->pos;
    const uint8_t *nl = memchr(start, '\n', sdp_cur_left(c));
    if (!nl) return false;
    *out = start;
    *n = (size_t)(nl - start);
    c->pos += *n + 1;
    return true;
}

/* ---- UTF-8 (utf8.c) ----
 * Whether s[0..n) is UTF-8 as CPython's surrogatepass accepts it: surrogates allowed. */
bool sdp_utf8_valid(const uint8_t *s, size_t n);

/* ---- the syntax of a limits file (limits_file.c) ----
 * `check --config` and `curve --config` read one file: a `key = value` per line, `#` to the
 * end of the line a comment, blank lines skipped, spaces and tabs around key and value
 * (and a CRLF's CR) dropped, at most 1023 bytes a line, no NUL byte. What a key means is
 * each reader's own (gate.c, curve.c). sdp_limits_file_read hands each pair to `fn` in
 * file order with where it is, and stops at the first error, its own or fn's. Every error
 * is SD_EFORMAT naming the line in err->source ("limits.conf:3", no offset): fn reports
 * its own through sdp_limits_file_fail. */
typedef struct sdp_limits_line {
    const char *path;
    size_t line;        /* from 1 */
} sdp_limits_line;
typedef sd_status (*sdp_limits_pair_fn)(void *ctx, const char *key, const char *value,
                                        const sdp_limits_line *at, sd_error *err);
sd_status sdp_limits_file_read(const char *text, size_t len, const char *path,
                               sdp_limits_pair_fn fn, void *ctx, sd_error *err);
sd_status sdp_limits_file_fail(sd_error *err, const sdp_limits_line *at, const char *fmt, ...)
    SDP_PRINTF(3, 4);

/* ---- regular expressions with named groups (regex_named.c) ----
 * A POSIX extended expression whose groups may be named (?P<name>...) or (?<name>...):
 * compiled with the names taken out, each kept by its group number ("" when unnamed).
 * `what` starts the error messages ("--pattern"). Free with regfree(&r->re). */
#include <regex.h>
enum { SDP_REGEX_GROUPS = 16 };
typedef struct sdp_named_regex {
    regex_t re;
    size_t n_groups;
    char name[SDP_REGEX_GROUPS + 1][24];   /* per group, 1-based */
} sdp_named_regex;
sd_status sdp_named_regex_compile(const char *pat, const char *what, sdp_named_regex *out,
                                  sd_error *err);
/* The group named `name`, or 0. */
int sdp_named_regex_group(const sdp_named_regex *r, const char *name);

#endif
