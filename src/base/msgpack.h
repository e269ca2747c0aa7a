/* msgpack.h - a bounds-checked reader of MessagePack tokens, for snapdiff's summaries.
 *
 * msgpack-c writes the summaries (src/analysis/summary.c); reading goes through this
 * cursor instead of msgpack-c's unpacker because a summary is input like any other: the
 * unpacker allocates a container's declared size before reading its items, so five bytes
 * (an array header of 2^32 - 1) ask for 96 GiB. Here a declared count is checked against
 * the bytes left (every item takes at least one), nothing is allocated, and every error
 * carries the byte offset of the token that was wrong. Not installed.
 */
#ifndef SNAPDIFF_BASE_MSGPACK_H
#define SNAPDIFF_BASE_MSGPACK_H

#include "base/base.h"

typedef enum sdp_mp_type {
    SDP_MP_NIL, SDP_MP_BOOL, SDP_MP_UINT, SDP_MP_INT, SDP_MP_FLOAT, SDP_MP_STR, SDP_MP_BIN,
    SDP_MP_ARRAY, SDP_MP_MAP, SDP_MP_EXT
} sdp_mp_type;

typedef struct sdp_mp_token {
    uint8_t type;            /* sdp_mp_type */
    uint64_t offset;         /* where the token starts */
    bool b;                  /* BOOL */
    uint64_t u;              /* UINT; ARRAY/MAP: the item (pair) count */
    int64_t i;               /* INT (negative values only: non-negative ones are UINT) */
    double f;                /* FLOAT (float 32 widened) */
    const uint8_t *p;        /* STR/BIN/EXT: the bytes (in the input) */
    size_t len;
} sdp_mp_token;

enum { SDP_MP_MAX_DEPTH = 32 };

/* The next token. Containers are headers only: their items are the tokens that follow.
 * @return SD_OK; SD_ETRUNC when the input ends inside the token; SD_EFORMAT for a
 * reserved byte (0xc1) or a count larger than the bytes left could hold. */
sd_status sdp_mp_next(sdp_cursor *c, sdp_mp_token *t, sd_error *err);
/* Skip one whole value (a container with everything in it), at most SDP_MP_MAX_DEPTH
 * levels deep. */
sd_status sdp_mp_skip(sdp_cursor *c, sd_error *err);
/* "nil", "an integer", "a string", ...: for messages. */
const char *sdp_mp_type_name(unsigned type);

#endif
