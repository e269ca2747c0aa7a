/* json_frame.c - one frame-to-JSON for every JSON renderer (diff, frag, series, trace):
 * one place decides the keys and their order. */
#include "render/json_frame.h"

#include <stdlib.h>
#include <string.h>

#include "render/format.h"

json_t *sdp_frame_json(const sd_frame *f)
{
    if (!f) return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "filename", json_string(f->filename));
    json_object_set_new(o, "line", json_integer(f->line));
    json_object_set_new(o, "name", json_string(f->name));
    return o;
}

/* U+FFFD for every byte that starts no UTF-8 sequence; when jansson still refuses the text
 * (an overlong form, a surrogate), for every byte outside ASCII. */
static json_t *replaced_text(const char *s, size_t n, bool ascii_only)
{
    char *buf = malloc(n * 3 + 1);
    if (!buf) return NULL;
    const unsigned char *u = (const unsigned char *)s;
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        size_t len = sdp_utf8_seq_len(u + i, n - i);
        if (!len || (ascii_only && u[i] >= 0x80)) {
            memcpy(buf + w, "\xEF\xBF\xBD", 3);
            w += 3;
            i++;
            continue;
        }
        memcpy(buf + w, s + i, len);
        w += len;
        i += len;
    }
    json_t *t = json_stringn(buf, w);
    free(buf);
    return t;
}

json_t *sdp_json_text(const char *s)
{
    return s ? sdp_json_textn(s, strlen(s)) : json_null();
}

json_t *sdp_json_textn(const char *s, size_t n)
{
    json_t *t = json_stringn(s, n);
    if (!t) t = replaced_text(s, n, false);
    if (!t) t = replaced_text(s, n, true);
    return t;
}
