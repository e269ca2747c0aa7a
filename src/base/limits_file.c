/* limits_file.c - the syntax of a limits file (base.h), which `check --config` (gate.c)
 * and `curve --config` (curve.c) both read: the lines, comments and `key = value` pairs
 * here, what each key means there. */
#include <stdio.h>

#include "base/base.h"

enum { LINE_MAX_BYTES = 1023 };

sd_status sdp_limits_file_fail(sd_error *err, const sdp_limits_line *at, const char *fmt, ...)
{
    if (!err || err->code != SD_OK) return SD_EFORMAT;
    char text[sizeof err->text];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    sdp_fail(err, SD_EFORMAT, SD_NO_OFFSET, "%s", text);
    snprintf(err->source, sizeof err->source, "%s:%zu", at->path, at->line);
    return SD_EFORMAT;
}

/* Spaces and tabs at both ends (and the CR of a CRLF line) cut off, in place. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
    *e = '\0';
    return s;
}

/* One line, NUL-terminated: nothing, or one pair for fn. */
static sd_status read_line(char *text, const sdp_limits_line *at, sdp_limits_pair_fn fn,
                           void *ctx, sd_error *err)
{
    char *hash = strchr(text, '#');
    if (hash) *hash = '\0';
    char *s = trim(text);
    if (!*s) return SD_OK;
    char *eq = strchr(s, '=');
    if (!eq) return sdp_limits_file_fail(err, at, "expected 'key = value', got '%.120s'", s);
    *eq = '\0';
    return fn(ctx, trim(s), trim(eq + 1), at, err);
}

sd_status sdp_limits_file_read(const char *text, size_t len, const char *path,
                               sdp_limits_pair_fn fn, void *ctx, sd_error *err)
{
    char buf[LINE_MAX_BYTES + 1];
    sdp_limits_line at = {path ? path : "<limits>", 0};
    for (size_t pos = 0; pos < len;) {
        at.line++;
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        if (n > LINE_MAX_BYTES)
            return sdp_limits_file_fail(err, &at, "line longer than %d bytes: not a limits "
                                        "file of 'key = value' lines", LINE_MAX_BYTES);
        if (memchr(text + pos, '\0', n))
            return sdp_limits_file_fail(err, &at, "a NUL byte: not a text file");
        memcpy(buf, text + pos, n);
        buf[n] = '\0';
        pos += n + (nl ? 1 : 0);
        SDP_TRY(read_line(buf, &at, fn, ctx, err));
    }
    return SD_OK;
}
