/* units.c - binary units for people, and sizes as people type them. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "base/base.h"
#include "snapdiff/units.h"

void sd_format_bytes(uint64_t bytes, char *buf, size_t size)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, size, "%llu B", (unsigned long long)bytes);
        return;
    }
    double v = (double)bytes / 1024.0;
    size_t u = 0;
    while (v >= 1023.95 && u + 1 < SDP_ARRAY_LEN(units)) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, size, "%.1f %s", v, units[u]);
}

void sd_format_delta(int64_t bytes, char *buf, size_t size)
{
    if (bytes == 0) {
        snprintf(buf, size, "0 B");
        return;
    }
    char mag[32];
    uint64_t m = bytes < 0 ? (uint64_t)0 - (uint64_t)bytes : (uint64_t)bytes;
    sd_format_bytes(m, mag, sizeof mag);
    snprintf(buf, size, "%c%s", bytes < 0 ? '-' : '+', mag);
}

bool sd_parse_size(const char *text, uint64_t *out)
{
    static const struct { const char *suffix; double mult; } units[] = {
        {"", 1}, {"b", 1}, {"k", 1024.0}, {"kib", 1024.0}, {"kb", 1e3},
        {"m", 1048576.0}, {"mib", 1048576.0}, {"mb", 1e6},
        {"g", 1073741824.0}, {"gib", 1073741824.0}, {"gb", 1e9},
        {"t", 1099511627776.0}, {"tib", 1099511627776.0}, {"tb", 1e12},
    };
    if (!text) return false;
    while (isspace((unsigned char)*text)) text++;
    if (!isdigit((unsigned char)*text) && *text != '.') return false;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || !isfinite(v) || v < 0) return false;
    while (isspace((unsigned char)*end)) end++;
    for (size_t i = 0; i < SDP_ARRAY_LEN(units); i++) {
        if (strcasecmp(end, units[i].suffix) != 0) continue;
        double bytes = v * units[i].mult;
        if (bytes >= 18446744073709551616.0) return false;
        *out = (uint64_t)(bytes + 0.5);
        return true;
    }
    return false;
}
