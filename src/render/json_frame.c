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

/* The text of doc (taken), or NULL when out of memory. */
static char *dumped(json_t *doc, size_t flags)
{
    char *text = doc ? json_dumps(doc, flags) : NULL;
    json_decref(doc);
    return text;
}

sd_status sdp_json_write(FILE *out, json_t *doc, size_t flags)
{
    char *text = dumped(doc, flags);
    if (!text) return SD_ENOMEM;
    fprintf(out, "%s\n", text);
    free(text);
    return ferror(out) ? SD_EIO : SD_OK;
}

sd_status sdp_json_write_open(FILE *out, json_t *doc, size_t flags)
{
    char *text = dumped(doc, flags);
    if (!text) return SD_ENOMEM;
    /* the last "null", then only the object's closing: white space and '}' */
    char *last = NULL;
    for (char *at = strstr(text, "null"); at; at = strstr(at + 1, "null")) last = at;
    if (!last || last[4 + strspn(last + 4, " \n")] != '}') {
        free(text);
        return SD_EUSAGE;
    }
    fwrite(text, 1, (size_t)(last - text), out);
    free(text);
    return ferror(out) ? SD_EIO : SD_OK;
}
