/* json_dump.c - a pickle value tree as JSON, streamed (dump can be gigabytes). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pickle/value.h"

enum { MAX_DEPTH = 512, OUT_BUF = 1 << 16 };

typedef struct writer {
    FILE *out;
    char buf[OUT_BUF];
    size_t len;
    uint64_t nodes, max_nodes;
    sd_error *err;
    bool failed;
} writer;

static void flush(writer *w)
{
    if (w->len && fwrite(w->buf, 1, w->len, w->out) != w->len) w->failed = true;
    w->len = 0;
}

static void put(writer *w, const char *s, size_t n)
{
    if (w->len + n > OUT_BUF) {
        flush(w);
        if (n > OUT_BUF) {
            if (fwrite(s, 1, n, w->out) != n) w->failed = true;
            return;
        }
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static void putc_w(writer *w, char c)
{
    if (w->len == OUT_BUF) flush(w);
    w->buf[w->len++] = c;
}

static void put_str(writer *w, const char *s) { put(w, s, strlen(s)); }

/* JSON string from UTF-8 (surrogates allowed: they are written as \\uXXXX escapes). */
static void put_json_string(writer *w, const uint8_t *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    putc_w(w, '"');
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        bool surrogate = c == 0xed && i + 2 < n + 0 && i + 1 < n && s[i + 1] >= 0xa0;
        if (c >= 0x20 && c != '"' && c != '\\' && !surrogate) continue;
        put(w, (const char *)s + run, i - run);
        if (surrogate && i + 2 < n) {
            unsigned cp = 0xd000u | ((unsigned)(s[i + 1] & 0x3f) << 6) | (s[i + 2] & 0x3f);
            char e[7] = {'\\', 'u', hex[cp >> 12], hex[(cp >> 8) & 15], hex[(cp >> 4) & 15], hex[cp & 15], 0};
            put(w, e, 6);
            i += 2;
        } else if (c == '"') put(w, "\\\"", 2);
        else if (c == '\\') put(w, "\\\\", 2);
        else if (c == '\n') put(w, "\\n", 2);
        else if (c == '\t') put(w, "\\t", 2);
        else if (c == '\r') put(w, "\\r", 2);
        else {
            char e[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            put(w, e, 6);
        }
        run = i + 1;
    }
    put(w, (const char *)s + run, n - run);
    putc_w(w, '"');
}

static void put_base64(writer *w, const uint8_t *s, size_t n)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    putc_w(w, '"');
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) |
                     (i + 2 < n ? s[i + 2] : 0);
        char q[4] = {t[v >> 18], t[(v >> 12) & 63], i + 1 < n ? t[(v >> 6) & 63] : '=',
                     i + 2 < n ? t[v & 63] : '='};
        put(w, q, 4);
    }
    putc_w(w, '"');
}

/* Exact decimal of a little-endian two's complement integer of any length. */
static bool put_bigint(writer *w, const uint8_t *b, size_t n)
{
    uint8_t *mag = malloc(n ? n : 1);
    char *dec = malloc(n * 3 + 3);
    if (!mag || !dec) {
        free(mag);
        free(dec);
        return false;
    }
    bool neg = n && (b[n - 1] & 0x80);
    unsigned carry = 1;
    for (size_t i = 0; i < n; i++) {
        unsigned x = neg ? (uint8_t)~b[i] + carry : b[i];
        if (neg) carry = x >> 8;
        mag[i] = (uint8_t)x;
    }
    size_t nd = 0, len = n;
    while (len && !mag[len - 1]) len--;
    do { /* repeated division by 10, most significant byte first */
        unsigned rem = 0;
        for (size_t i = len; i-- > 0;) {
            unsigned cur = rem << 8 | mag[i];
            mag[i] = (uint8_t)(cur / 10);
            rem = cur % 10;
        }
        dec[nd++] = (char)('0' + rem);
        while (len && !mag[len - 1]) len--;
    } while (len);
    if (neg) dec[nd++] = '-';
    for (size_t i = 0; i < nd / 2; i++) {
        char tmp = dec[i];
        dec[i] = dec[nd - 1 - i];
        dec[nd - 1 - i] = tmp;
    }
    put(w, dec, nd);
    free(mag);
    free(dec);
    return true;
}

static void put_float(writer *w, double d)
{
    char num[40];
    if (isnan(d)) put_str(w, "NaN");
    else if (isinf(d)) put_str(w, d > 0 ? "Infinity" : "-Infinity");
    else {
        /* Shortest form that reads back exactly, as Python's repr does. */
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(num, sizeof num, "%.*g", prec, d);
            if (strtod(num, NULL) == d) break;
        }
        if (!strpbrk(num, ".eEn")) strncat(num, ".0", sizeof num - strlen(num) - 1);
        put_str(w, num);
    }
}

static sd_status write_value(writer *w, const sd_value *v, int depth);

static void put_int(writer *w, int64_t i)
{
    char num[32];
    snprintf(num, sizeof num, "%" PRId64, i);
    put_str(w, num);
}

static sd_status write_key(writer *w, const sd_value *k)
{
    const sdp_blob *b = sdp_blob_of(*k);
    int64_t i;
    switch (sdp_type(*k)) {
    case SDP_STR: put_json_string(w, (const uint8_t *)b->data, b->len); return SD_OK;
    case SDP_INT: sdp_int_of(*k, &i); putc_w(w, '"'); put_int(w, i); putc_w(w, '"'); return SD_OK;
    case SDP_BOOL: put_str(w, k->bits == SDP_BITS_TRUE ? "\"true\"" : "\"false\""); return SD_OK;
    case SDP_NONE: put_str(w, "\"null\""); return SD_OK;
    default: put_str(w, "\"<key>\""); return SD_OK;
    }
}

static sd_status write_container(writer *w, const sdp_cont *c, int depth)
{
    if (depth >= MAX_DEPTH)
        return sdp_fail(w->err, SD_ELIMIT, c->offset, "nesting deeper than %d (or a cycle) "
                        "in the container made here", MAX_DEPTH);
    bool dict = c->type == SDP_DICT;
    putc_w(w, dict ? '{' : '[');
    for (uint32_t i = 0; i < c->n; i++) {
        if (i) putc_w(w, ',');
        sd_status st;
        if (dict) {
            st = write_key(w, sdp_dict_key(c, i));
            putc_w(w, ':');
            if (!st) st = write_value(w, sdp_dict_val(c, i), depth + 1);
        } else {
            st = write_value(w, &c->items[i], depth + 1);
        }
        if (st) return st;
    }
    putc_w(w, dict ? '}' : ']');
    return SD_OK;
}

static sd_status write_value(writer *w, const sd_value *v, int depth)
{
    const sdp_cont *c = sdp_cont_of(*v);
    if (++w->nodes > w->max_nodes)
        return sdp_fail(w->err, SD_ELIMIT, c ? c->offset : SD_NO_OFFSET,
                        "shared objects expand to more than %" PRIu64 " values: refusing to "
                        "write them all out", w->max_nodes);
    if (w->failed) return sdp_fail(w->err, SD_EIO, SD_NO_OFFSET, "cannot write the output");
    const sdp_blob *b = sdp_blob_of(*v);
    int64_t i;
    switch (sdp_type(*v)) {
    case SDP_NONE: put_str(w, "null"); break;
    case SDP_BOOL: put_str(w, v->bits == SDP_BITS_TRUE ? "true" : "false"); break;
    case SDP_INT: sdp_int_of(*v, &i); put_int(w, i); break;
    case SDP_BIGINT:
        if (!put_bigint(w, (const uint8_t *)b->data, b->len))
            return sdp_fail(w->err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        break;
    case SDP_FLOAT: put_float(w, ((const sdp_num *)(uintptr_t)v->bits)->u.f); break;
    case SDP_STR: put_json_string(w, (const uint8_t *)b->data, b->len); break;
    case SDP_BYTES: put_base64(w, (const uint8_t *)b->data, b->len); break;
    case SDP_LIST: case SDP_TUPLE: case SDP_DICT: return write_container(w, c, depth);
    default: return sdp_fail(w->err, SD_EFORMAT, SD_NO_OFFSET, "unexpected value");
    }
    return SD_OK;
}

sd_status sd_value_write_json(const sd_value *v, FILE *out, uint64_t max_nodes, sd_error *err)
{
    sd_error_clear(err);
    writer *w = malloc(sizeof *w);
    if (!w) return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    w->out = out;
    w->len = 0;
    w->nodes = 0;
    w->max_nodes = max_nodes;
    w->err = err;
    w->failed = false;
    sd_status st = write_value(w, v, 0);
    if (!st) putc_w(w, '\n');
    flush(w);
    if (!st && w->failed) st = sdp_fail(err, SD_EIO, SD_NO_OFFSET, "cannot write the output");
    free(w);
    return st;
}
