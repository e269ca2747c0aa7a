/* sbuf.c - a growable string whose failure is sticky (see base.h). */
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"

void sdp_sbuf_reset(sdp_sbuf *b) { b->len = 0; }

void sdp_sbuf_free(sdp_sbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

void sdp_sbuf_put(sdp_sbuf *b, const char *s, size_t n)
{
    if (b->failed) return;
    if (n >= b->cap - b->len || !b->p) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len <= n) {
            if (cap > SIZE_MAX / 2) { b->failed = true; return; }
            cap *= 2;
        }
        char *p = realloc(b->p, cap);
        if (!p) { b->failed = true; return; }
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void sdp_sbuf_puts(sdp_sbuf *b, const char *s) { sdp_sbuf_put(b, s, strlen(s)); }

void sdp_sbuf_put_int(sdp_sbuf *b, int64_t v)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
    sdp_sbuf_put(b, tmp, (size_t)n);
}

const char *sdp_sbuf_str(sdp_sbuf *b)
{
    return (b->failed || !b->p) ? "" : b->p;
}
