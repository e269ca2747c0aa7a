/* pickle_text.c - protocol 0/1 text arguments: INT, LONG, FLOAT, STRING, UNICODE, GET/PUT.
 * Old, rare in snapshots, and the easiest place for a hostile file to hide junk, so every
 * decoder checks its whole line and allocates at most a bounded multiple of it. */
#include <errno.h>
#include <stdlib.h>

#include "pickle/value.h"
#include "pickle/pickle_ops.h"
#include "pickle/pickle_parser.h"


/* Boxed values in the arena (the inline forms are built by the callers). */
static sd_status box_blob(sdp_arena *a, uint8_t type, const uint8_t *data, size_t n,
                          sd_value *out)
{
    if (n > UINT32_MAX - 16) return SD_ELIMIT;
    sdp_blob *b = sdp_arena_alloc(a, sizeof *b + n + 1);
    if (!b) return SD_ENOMEM;
    memset(b, 0, sizeof *b);
    b->type = type;
    b->len = (uint32_t)n;
    if (n) memcpy(b->data, data, n);
    b->data[n] = '\0';
    out->bits = (uint64_t)(uintptr_t)b;
    return SD_OK;
}

static sd_status box_num(sdp_arena *a, uint8_t type, int64_t i, double f, sd_value *out)
{
    if (type == SDP_INT && i >= SDP_SMALL_MIN && i <= SDP_SMALL_MAX) {
        out->bits = ((uint64_t)i << 3) | SDP_TAG_INT;
        return SD_OK;
    }
    sdp_num *num = sdp_arena_alloc(a, sizeof *num);
    if (!num) return SD_ENOMEM;
    memset(num, 0, sizeof *num);
    num->type = type;
    if (type == SDP_INT) num->u.i = i;
    else num->u.f = f;
    out->bits = (uint64_t)(uintptr_t)num;
    return SD_OK;
}

bool sdp_text_index(const uint8_t *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 19) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* Decimal text to little-endian two's complement bytes, for integers past int64. */
static sd_status decimal_to_bigint(sdp_arena *a, const uint8_t *d, size_t nd, bool neg,
                                   sd_value *out)
{
    size_t cap = nd / 2 + 2; /* log2(10)/8 < 1/2 byte per digit */
    uint8_t *b = sdp_arena_alloc(a, cap);
    if (!b) return SD_ENOMEM;
    memset(b, 0, cap);
    for (size_t i = 0; i < nd; i++) {
        unsigned carry = (unsigned)(d[i] - '0');
        for (size_t k = 0; k < cap; k++) {
            unsigned x = b[k] * 10u + carry;
            b[k] = (uint8_t)x;
            carry = x >> 8;
        }
    }
    if (neg) { /* two's complement negate */
        unsigned carry = 1;
        for (size_t k = 0; k < cap; k++) {
            unsigned x = (uint8_t)~b[k] + carry;
            b[k] = (uint8_t)x;
            carry = x >> 8;
        }
    }
    return box_blob(a, SDP_BIGINT, b, cap, out);
}

sd_status sdp_text_int(sdp_arena *a, const uint8_t *s, size_t n, sd_value *out,
                       const char **why)
{
    if (n == 2 && s[0] == '0' && (s[1] == '0' || s[1] == '1')) { /* I00 / I01: bools */
        out->bits = s[1] == '1' ? SDP_BITS_TRUE : SDP_BITS_FALSE;
        return SD_OK;
    }
    if (n && s[n - 1] == 'L') n--;
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i == n || n - i > 100000) { *why = "not a decimal integer"; return SD_EFORMAT; }
    uint64_t mag = 0;
    bool big = false;
    for (size_t k = i; k < n; k++) {
        if (s[k] < '0' || s[k] > '9') { *why = "not a decimal integer"; return SD_EFORMAT; }
        unsigned dgt = (unsigned)(s[k] - '0');
        if (mag > (UINT64_MAX - dgt) / 10) big = true;
        else mag = mag * 10 + dgt;
    }
    if (big || mag > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
        return decimal_to_bigint(a, s + i, n - i, neg, out);
    return box_num(a, SDP_INT, neg ? (int64_t)(0 - mag) : (int64_t)mag, 0, out);
}

sd_status sdp_text_float(sdp_arena *a, const uint8_t *s, size_t n, sd_value *out,
                         const char **why)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf) { *why = "not a float"; return SD_EFORMAT; }
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double d = strtod(buf, &end);
    if (end != buf + n) { *why = "not a float"; return SD_EFORMAT; }
    return box_num(a, SDP_FLOAT, 0, d, out);
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool hex_n(const uint8_t *s, size_t n, uint32_t *out)
{
    uint32_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int h = hexval(s[i]);
        if (h < 0) return false;
        v = v * 16 + (uint32_t)h;
    }
    *out = v;
    return true;
}

static size_t put_utf8(uint8_t *o, uint32_t cp)
{
    if (cp < 0x80) { o[0] = (uint8_t)cp; return 1; }
    if (cp < 0x800) { o[0] = (uint8_t)(0xc0 | cp >> 6); o[1] = (uint8_t)(0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xe0 | cp >> 12); o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (uint8_t)(0x80 | (cp & 0x3f)); return 3;
    }
    o[0] = (uint8_t)(0xf0 | cp >> 18); o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f)); o[3] = (uint8_t)(0x80 | (cp & 0x3f));
    return 4;
}

static sd_status finish_str(sdp_arena *a, uint8_t *buf, size_t n, sd_value *out,
                            const char **why)
{
    if (!sdp_utf8_valid(buf, n)) { *why = "not valid text"; return SD_EFORMAT; }
    return box_blob(a, SDP_STR, buf, n, out);
}

/* STRING: a quoted Python 2 str repr ('abc' or "abc") with backslash escapes. Python 3
 * decodes the bytes as ASCII; non-ASCII bytes here are kept as Latin-1 text. */
sd_status sdp_text_string(sdp_arena *a, const uint8_t *s, size_t n, sd_value *out,
                          const char **why)
{
    if (n < 2 || (s[0] != '\'' && s[0] != '"') || s[n - 1] != s[0]) {
        *why = "expected a quoted string";
        return SD_EFORMAT;
    }
    s++;
    n -= 2;
    uint8_t *buf = sdp_arena_alloc(a, n * 2 + 1);
    if (!buf) return SD_ENOMEM;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t cp = s[i];
        if (cp == '\\' && i + 1 < n) {
            uint8_t e = s[++i];
            switch (e) {
            case 'n': cp = '\n'; break;
            case 't': cp = '\t'; break;
            case 'r': cp = '\r'; break;
            case '\\': case '\'': case '"': cp = e; break;
            case 'x':
                if (i + 2 >= n || !hex_n(s + i + 1, 2, &cp)) { *why = "bad \\x escape"; return SD_EFORMAT; }
                i += 2;
                break;
            default:
                if (e >= '0' && e <= '7') {
                    cp = e - '0';
                    for (int k = 0; k < 2 && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7'; k++)
                        cp = cp * 8 + (uint32_t)(s[++i] - '0');
                    cp &= 0xff;
                } else {
                    buf[o++] = '\\';
                    cp = e;
                }
            }
        }
        o += put_utf8(buf + o, cp);
    }
    return finish_str(a, buf, o, out, why);
}

/* UNICODE: raw-unicode-escape: Latin-1 bytes plus \uXXXX and \UXXXXXXXX. */
sd_status sdp_text_unicode(sdp_arena *a, const uint8_t *s, size_t n, sd_value *out,
                           const char **why)
{
    uint8_t *buf = sdp_arena_alloc(a, n * 2 + 1);
    if (!buf) return SD_ENOMEM;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t cp = s[i];
        if (cp == '\\' && i + 1 < n && (s[i + 1] == 'u' || s[i + 1] == 'U')) {
            size_t digits = s[i + 1] == 'u' ? 4 : 8;
            if (i + 2 + digits > n) { *why = "truncated \\u escape"; return SD_EFORMAT; }
            if (!hex_n(s + i + 2, digits, &cp) || cp > 0x10ffff) { *why = "bad \\u escape"; return SD_EFORMAT; }
            i += 1 + digits;
        }
        o += put_utf8(buf + o, cp);
    }
    return finish_str(a, buf, o, out, why);
}
