/* base.h - the bottom layer every other layer of libsnapdiff may use: errors, the arena,
 * the bounds-checked cursor (prefix sdp_). Not installed. */
#ifndef SNAPDIFF_BASE_H
#define SNAPDIFF_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "snapdiff/snapdiff.h"

#define SDP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define SDP_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errors (error.c) ---- */
/* Fill err unless it already holds an error (first error wins). Returns code. */
sd_status sdp_fail(sd_error *err, sd_status code, uint64_t offset, const char *fmt, ...)
    SDP_PRINTF(4, 5);
void sdp_error_set_source(sd_error *err, const char *source);

/* ---- arena (arena.c) ----
 * One bump allocator per loaded snapshot. Memory is counted against a budget so that a
 * hostile file turns into SD_ENOMEM, not the OOM killer. */
typedef struct sdp_arena_chunk sdp_arena_chunk;
typedef struct sdp_arena {
    sdp_arena_chunk *head;
    uint8_t *cur, *end;
    uint64_t used;      /* bytes obtained from malloc, chunk headers included */
    uint64_t budget;    /* 0 = unlimited */
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

/* UTF-8 validation; surrogates allowed (Python's surrogatepass). */
bool sdp_utf8_valid(const uint8_t *s, size_t n);

#endif
