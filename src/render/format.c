/* format.c - the one formatting and escaping module of the renderers. */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "render/format.h"
#include "snapdiff/units.h"

sdp_text sdp_fmt_bytes(uint64_t n)
{
    sdp_text t;
    sd_format_bytes(n, t.s, sizeof t.s);
    return t;
}

sdp_text sdp_fmt_delta(int64_t n)
{
    sdp_text t;
    sd_format_delta(n, t.s, sizeof t.s);
    return t;
}

sdp_text sdp_fmt_count(uint64_t n)
{
    sdp_text t;
    char digits[24];
    int len = snprintf(digits, sizeof digits, "%" PRIu64, n);
    size_t j = 0;
    for (int i = 0; i < len && j + 2 < sizeof t.s; i++) {
        if (i > 0 && (len - i) % 3 == 0) t.s[j++] = ',';
        t.s[j++] = digits[i];
    }
    t.s[j] = '\0';
    return t;
}

sdp_text sdp_fmt_count_delta(int64_t n)
{
    sdp_text t;
    uint64_t mag = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
    sdp_text c = sdp_fmt_count(mag);     /* at most 26 characters: the sign fits */
    t.s[0] = n > 0 ? '+' : '-';
    memcpy(t.s + (n != 0), c.s, strlen(c.s) + 1);
    return t;
}

sdp_text sdp_fmt_pow2(uint64_t n)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    sdp_text t;
    size_t u = 0;
    while (n >= 1024 && n % 1024 == 0 && u + 1 < SDP_ARRAY_LEN(units)) {
        n /= 1024;
        u++;
    }
    snprintf(t.s, sizeof t.s, "%" PRIu64 " %s", n, units[u]);
    return t;
}

sdp_text sdp_fmt_duration_us(int64_t us)
{
    sdp_text t;
    if (us < 1000) snprintf(t.s, sizeof t.s, "%" PRId64 " us", us);
    else if (us < 1000000) snprintf(t.s, sizeof t.s, "%.1f ms", (double)us / 1e3);
    else if (us < 600000000) snprintf(t.s, sizeof t.s, "%.1f s", (double)us / 1e6);
    else snprintf(t.s, sizeof t.s, "%.1f min", (double)us / 6e7);
    return t;
}

const char *sdp_ansi(bool on, sdp_colour c)
{
    static const char *const esc[] = {
        [SDP_BOLD] = "\033[1m", [SDP_DIM] = "\033[2m", [SDP_RED] = "\033[31m",
        [SDP_GREEN] = "\033[32m", [SDP_YELLOW] = "\033[33m", [SDP_RESET] = "\033[0m",
    };
    return on && (size_t)c < SDP_ARRAY_LEN(esc) ? esc[c] : "";
}

int64_t sdp_sdelta(uint64_t new_v, uint64_t old_v) { return (int64_t)(new_v - old_v); }

size_t sdp_utf8_seq_len(const unsigned char *s, size_t n)
{
    if (n == 0) return 0;
    size_t len = s[0] < 0x80 ? 1 : (s[0] >> 5) == 6 ? 2 : (s[0] >> 4) == 14 ? 3
               : (s[0] >> 3) == 30 ? 4 : 0;
    if (!len || len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    return len;
}

/* Writes text[0..n) a UTF-8 sequence at a time: `bad` for a byte that starts none, what
 * `escape` returns for a one-byte sequence it names (NULL: none), else the sequence. */
static void put_escaped(FILE *out, const char *text, size_t n, const char *bad,
                        const char *(*escape)(unsigned char c, char *buf))
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < n;) {
        size_t len = sdp_utf8_seq_len(s + i, n - i);
        char buf[8];
        const char *e = !len ? bad : len == 1 ? escape(s[i], buf) : NULL;
        if (e) fputs(e, out);
        else fwrite(s + i, 1, len, out);
        i += len ? len : 1;
    }
}

static const char *xml_escape(unsigned char c, char *buf)
{
    (void)buf;
    switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return "&apos;";
    default: return c < 0x20 && c != '\t' ? "?" : NULL;
    }
}

void sdp_put_xml(FILE *out, const char *text, size_t n)
{
    put_escaped(out, text, n, "?", xml_escape);
}

static const char *json_escape(unsigned char c, char *buf)
{
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default:
        if (c >= 0x20) return NULL;
        snprintf(buf, 8, "\\u%04x", c);
        return buf;
    }
}

void sdp_put_json_string(FILE *out, const char *text, size_t n)
{
    fputc('"', out);
    put_escaped(out, text, n, "\\ufffd", json_escape);   /* not UTF-8: still valid JSON */
    fputc('"', out);
}

/* ---- keys that fit a column without cutting a site ---- */

/* Where "path" ends in "path:line rest": the ':' followed by digits and then a space or
 * the end; NULL when the text has no such location (a native site: "autograd X"). */
static const char *location_colon(const char *s, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        if (s[i] != ':' || !isdigit((unsigned char)s[i + 1])) continue;
        size_t k = i + 1;
        while (k < n && isdigit((unsigned char)s[k])) k++;
        if (k == n || s[k] == ' ') return s + i;
    }
    return NULL;
}

/* Append s[0..n) to buf at *len, shortening the path of "path:line name" from the left
 * by dropping leading directories while the whole is over `room` (the file stays). */
static void put_part(char *buf, size_t size, size_t *len, const char *s, size_t n, size_t room)
{
    const char *colon = location_colon(s, n);
    const char *p = s;
    bool elided = false;
    if (colon) {
        while (n - (size_t)(p - s) + (elided ? 4 : 0) > room) {
            const char *slash = memchr(p, '/', (size_t)(colon - p));
            if (!slash) break;                 /* the file's own name stays */
            p = slash + 1;
            elided = true;
        }
    }
    int w = snprintf(buf + *len, size > *len ? size - *len : 0, "%s%.*s", elided ? ".../" : "",
                     (int)(n - (size_t)(p - s)), p);
    if (w > 0) *len += (size_t)w;
    if (*len >= size) *len = size ? size - 1 : 0;
}

const char *sdp_fit_key(const char *key, size_t width, char *buf, size_t size)
{
    if (!size) return buf;
    size_t n = strlen(key);
    if (n <= width) {
        snprintf(buf, size, "%s", key);
        return buf;
    }
    static const char arrow[] = " <- ";
    const char *end = strstr(key, arrow);
    size_t first = end ? (size_t)(end - key) : n, len = 0;
    buf[0] = '\0';
    put_part(buf, size, &len, key, first, width);
    while (end) {                              /* the callers, while they fit */
        const char *part = end + sizeof arrow - 1;
        const char *next = strstr(part, arrow);
        size_t pn = next ? (size_t)(next - part) : strlen(part);
        size_t before = len;
        char tmp[512];
        size_t tl = 0;
        tmp[0] = '\0';
        put_part(tmp, sizeof tmp, &tl, part, pn, 0);     /* as short as it goes */
        if (before + sizeof arrow - 1 + tl + (next ? 8 : 0) > width) {
            snprintf(buf + len, size - len, " <- ...");
            return buf;
        }
        snprintf(buf + len, size - len, "%s%s", arrow, tmp);
        len = strlen(buf);
        end = next;
    }
    return buf;
}
