/* msgpack.c - MessagePack tokens through the bounds-checked cursor (msgpack.h). */
#include "base/msgpack.h"

static bool be(sdp_cursor *c, unsigned n, uint64_t *out)
{
    if (sdp_cur_left(c) < n) return false;
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v = v << 8 | c->base[c->pos + i];
    c->pos += n;
    *out = v;
    return true;
}

const char *sdp_mp_type_name(unsigned type)
{
    static const char *const names[] = {"nil", "a boolean", "an integer", "an integer",
                                        "a float", "a string", "binary data", "an array",
                                        "a map", "an extension value"};
    return type < SDP_ARRAY_LEN(names) ? names[type] : "a value";
}

static sd_status truncated(sdp_mp_token *t, sd_error *err)
{
    return sdp_fail(err, SD_ETRUNC, t->offset, "the summary ends inside a msgpack value");
}

/* A string, binary or extension payload of n bytes (ext: one type byte first). */
static sd_status payload(sdp_cursor *c, sdp_mp_token *t, uint64_t n, sd_error *err)
{
    if (t->type == SDP_MP_EXT) {
        uint8_t ext_type;
        if (!sdp_cur_u8(c, &ext_type)) return truncated(t, err);
    }
    if (!sdp_cur_bytes(c, n, &t->p)) return truncated(t, err);
    t->len = (size_t)n;
    return SD_OK;
}

/* A container of n items (maps: 2n): each item takes at least a byte. */
static sd_status container(sdp_cursor *c, sdp_mp_token *t, uint8_t type, uint64_t n,
                           sd_error *err)
{
    t->type = type;
    t->u = n;
    uint64_t items = type == SDP_MP_MAP ? 2 * n : n;
    if (items > sdp_cur_left(c))
        return sdp_fail(err, SD_EFORMAT, t->offset, "truncated or corrupt: a msgpack %s of "
                        "%llu %s cannot fit in the %zu bytes left",
                        type == SDP_MP_MAP ? "map" : "array", (unsigned long long)n,
                        type == SDP_MP_MAP ? "pairs" : "items", sdp_cur_left(c));
    return SD_OK;
}

static sd_status sized(sdp_cursor *c, sdp_mp_token *t, uint8_t type, unsigned width,
                       sd_error *err)
{
    uint64_t n;
    if (!be(c, width, &n)) return truncated(t, err);
    if (type == SDP_MP_ARRAY || type == SDP_MP_MAP) return container(c, t, type, n, err);
    t->type = type;
    return payload(c, t, n, err);
}

static sd_status number(sdp_cursor *c, sdp_mp_token *t, uint8_t op, sd_error *err)
{
    uint64_t v;
    static const unsigned width[] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8}; /* 0xca .. 0xd3 */
    if (!be(c, width[op - 0xca], &v)) return truncated(t, err);
    if (op == 0xca) {
        float f;
        uint32_t bits = (uint32_t)v;
        memcpy(&f, &bits, sizeof f);
        t->type = SDP_MP_FLOAT;
        t->f = f;
    } else if (op == 0xcb) {
        t->type = SDP_MP_FLOAT;
        memcpy(&t->f, &v, sizeof t->f);
    } else if (op <= 0xcf) {
        t->type = SDP_MP_UINT;
        t->u = v;
    } else {
        unsigned bits = 8 * width[op - 0xca];
        int64_t x = bits == 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
        t->type = x < 0 ? SDP_MP_INT : SDP_MP_UINT;
        t->i = x;
        t->u = (uint64_t)x;
    }
    return SD_OK;
}

sd_status sdp_mp_next(sdp_cursor *c, sdp_mp_token *t, sd_error *err)
{
    memset(t, 0, sizeof *t);
    t->offset = c->pos;
    uint8_t op;
    if (!sdp_cur_u8(c, &op)) return truncated(t, err);
    if (op <= 0x7f) { t->type = SDP_MP_UINT; t->u = op; return SD_OK; }
    if (op >= 0xe0) { t->type = SDP_MP_INT; t->i = (int8_t)op; return SD_OK; }
    if (op <= 0x8f) return container(c, t, SDP_MP_MAP, op & 0x0f, err);
    if (op <= 0x9f) return container(c, t, SDP_MP_ARRAY, op & 0x0f, err);
    if (op <= 0xbf) { t->type = SDP_MP_STR; return payload(c, t, op & 0x1f, err); }
    switch (op) {
    case 0xc0: t->type = SDP_MP_NIL; return SD_OK;
    case 0xc2: case 0xc3: t->type = SDP_MP_BOOL; t->b = op == 0xc3; return SD_OK;
    case 0xc4: return sized(c, t, SDP_MP_BIN, 1, err);
    case 0xc5: return sized(c, t, SDP_MP_BIN, 2, err);
    case 0xc6: return sized(c, t, SDP_MP_BIN, 4, err);
    case 0xc7: return sized(c, t, SDP_MP_EXT, 1, err);
    case 0xc8: return sized(c, t, SDP_MP_EXT, 2, err);
    case 0xc9: return sized(c, t, SDP_MP_EXT, 4, err);
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        t->type = SDP_MP_EXT;
        return payload(c, t, (uint64_t)1 << (op - 0xd4), err);
    case 0xd9: return sized(c, t, SDP_MP_STR, 1, err);
    case 0xda: return sized(c, t, SDP_MP_STR, 2, err);
    case 0xdb: return sized(c, t, SDP_MP_STR, 4, err);
    case 0xdc: return sized(c, t, SDP_MP_ARRAY, 2, err);
    case 0xdd: return sized(c, t, SDP_MP_ARRAY, 4, err);
    case 0xde: return sized(c, t, SDP_MP_MAP, 2, err);
    case 0xdf: return sized(c, t, SDP_MP_MAP, 4, err);
    default:
        if (op >= 0xca && op <= 0xd3) return number(c, t, op, err);
        return sdp_fail(err, SD_EFORMAT, t->offset, "byte 0x%02x is not a msgpack value", op);
    }
}

sd_status sdp_mp_skip(sdp_cursor *c, sd_error *err)
{
    /* Items still to skip per open container: iterative, so depth costs no C stack. */
    uint64_t left[SDP_MP_MAX_DEPTH + 1];
    size_t depth = 0;
    left[0] = 1;
    while (true) {
        while (depth > 0 && left[depth] == 0) depth--;
        if (left[depth] == 0) return SD_OK;
        left[depth]--;
        sdp_mp_token t;
        SDP_TRY(sdp_mp_next(c, &t, err));
        if (t.type != SDP_MP_ARRAY && t.type != SDP_MP_MAP) continue;
        if (depth == SDP_MP_MAX_DEPTH)
            return sdp_fail(err, SD_ELIMIT, t.offset, "msgpack containers nested more than "
                            "%d deep", SDP_MP_MAX_DEPTH);
        left[++depth] = t.type == SDP_MP_MAP ? 2 * t.u : t.u;
    }
}
