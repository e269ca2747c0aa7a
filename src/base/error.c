/* error.c - the first error wins; filling it needs no heap. */
#include <stdio.h>

#include "base/base.h"

void sd_error_clear(sd_error *err)
{
    if (!err) return;
    err->code = SD_OK;
    err->offset = SD_NO_OFFSET;
    err->source[0] = '\0';
    err->text[0] = '\0';
}

sd_status sdp_fail(sd_error *err, sd_status code, uint64_t offset, const char *fmt, ...)
{
    if (!err || err->code != SD_OK) return code;
    err->code = code;
    err->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->text, sizeof err->text, fmt, ap);
    va_end(ap);
    return code;
}

sd_status sdp_nomem_at(sd_error *err, uint64_t offset, const char *doing)
{
    return sdp_fail(err, SD_ENOMEM, offset, "memory budget exhausted while %s", doing);
}

void sdp_error_set_source(sd_error *err, const char *source)
{
    if (!err || !source || err->source[0]) return;
    snprintf(err->source, sizeof err->source, "%s", source);
}

const char *sd_status_name(sd_status code)
{
    switch (code) {
    case SD_OK: return "ok";
    case SD_EIO: return "io";
    case SD_ETRUNC: return "truncated";
    case SD_EFORMAT: return "format";
    case SD_EREFUSED: return "refused";
    case SD_ELIMIT: return "limit";
    case SD_ENOMEM: return "memory";
    case SD_ESNAPSHOT: return "not-a-snapshot";
    case SD_EUSAGE: return "usage";
    }
    return "unknown";
}

void sd_error_format(const sd_error *err, char *buf, size_t size)
{
    if (!buf || size == 0) return;
    if (!err) {
        snprintf(buf, size, "no error recorded");
        return;
    }
    const char *src = err->source[0] ? err->source : "<input>";
    if (err->offset != SD_NO_OFFSET)
        snprintf(buf, size, "%s: offset %llu: %s", src, (unsigned long long)err->offset,
                 err->text);
    else
        snprintf(buf, size, "%s: %s", src, err->text);
}

const char *sd_version(void) { return SD_VERSION; }
