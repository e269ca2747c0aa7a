/* summary_json.c - `snapdiff dump base.sdsum`: a summary's msgpack as one JSON object.
 *
 * The envelope ["snapdiff.summary", VERSION, {body}] becomes
 * {"format": "snapdiff.summary", "version": VERSION, ...the body's members}. Tokens are
 * streamed straight from the bounds-checked reader (base/msgpack.h) to the output, so
 * nothing is built whatever the input declares; nesting is bounded by SDP_MP_MAX_DEPTH.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "base/msgpack.h"
#include "render/format.h"
#include "snapdiff/render_summary.h"

typedef struct level {
    uint64_t left;      /* items (maps: keys and values) still to write */
    bool map;
    bool first;
} level;

static sd_status put_scalar(FILE *out, const sdp_mp_token *t, sd_error *err)
{
    switch (t->type) {
    case SDP_MP_NIL: fputs("null", out); return SD_OK;
    case SDP_MP_BOOL: fputs(t->b ? "true" : "false", out); return SD_OK;
    case SDP_MP_UINT: fprintf(out, "%" PRIu64, t->u); return SD_OK;
    case SDP_MP_INT: fprintf(out, "%" PRId64, t->i); return SD_OK;
    case SDP_MP_FLOAT:
        if (isfinite(t->f)) fprintf(out, "%.17g", t->f);
        else fputs("null", out);
        return SD_OK;
    case SDP_MP_STR: sdp_put_json_string(out, (const char *)t->p, t->len); return SD_OK;
    case SDP_MP_BIN:
        fputc('"', out);
        for (size_t i = 0; i < t->len; i++) fprintf(out, "%02x", t->p[i]);
        fputc('"', out);
        return SD_OK;
    default:
        return sdp_fail(err, SD_EFORMAT, t->offset, "corrupt summary: a msgpack extension "
                        "value, which summaries never hold");
    }
}

/* Write the values that follow until the open levels [0, depth) are complete; stack[0] is
 * the body (its braces are the caller's). */
static sd_status stream(sdp_cursor *c, FILE *out, level *stack, size_t depth, sd_error *err)
{
    while (depth > 0) {
        level *l = &stack[depth - 1];
        if (l->left == 0) {
            if (depth > 1) fputc(l->map ? '}' : ']', out);
            depth--;
            continue;
        }
        bool is_key = l->map && l->left % 2 == 0;
        if (!l->first) fputs(is_key || !l->map ? "," : ":", out);
        else if (l->map && !is_key) fputc(':', out);
        l->first = false;
        l->left--;
        sdp_mp_token t;
        SDP_MP_TRY(sdp_mp_next(c, &t, err));
        if (is_key && t.type != SDP_MP_STR)
            return sdp_fail(err, SD_EFORMAT, t.offset, "corrupt summary: a map key is %s, "
                            "not a string", sdp_mp_type_name(t.type));
        if (t.type != SDP_MP_ARRAY && t.type != SDP_MP_MAP) {
            SDP_MP_TRY(put_scalar(out, &t, err));
            continue;
        }
        if (depth == SDP_MP_MAX_DEPTH)
            return sdp_fail(err, SD_ELIMIT, t.offset, "msgpack containers nested more than %d "
                            "deep", SDP_MP_MAX_DEPTH);
        fputc(t.type == SDP_MP_MAP ? '{' : '[', out);
        stack[depth++] = (level){.left = t.type == SDP_MP_MAP ? 2 * t.u : t.u,
                                 .map = t.type == SDP_MP_MAP, .first = true};
    }
    return SD_OK;
}

sd_status sd_render_summary_json(FILE *out, const uint8_t *data, size_t len, sd_error *err)
{
    sd_error_clear(err);
    sdp_cursor c = {.base = data, .len = len};
    sdp_mp_token arr, tag, version, body;
    SDP_MP_TRY(sdp_mp_next(&c, &arr, err));
    if (arr.type == SDP_MP_ARRAY && arr.u >= 3) SDP_MP_TRY(sdp_mp_next(&c, &tag, err));
    if (arr.type != SDP_MP_ARRAY || arr.u < 3 || tag.type != SDP_MP_STR ||
        tag.len != sizeof SD_SUMMARY_MAGIC - 1 || memcmp(tag.p, SD_SUMMARY_MAGIC, tag.len) != 0)
        return sdp_fail(err, SD_EFORMAT, 0, "not a snapdiff summary (no \"%s\" tag)",
                        SD_SUMMARY_MAGIC);
    SDP_MP_TRY(sdp_mp_next(&c, &version, err));
    if (version.type != SDP_MP_UINT || version.u == 0)
        return sdp_fail(err, SD_EFORMAT, version.offset, "corrupt summary: no format version");
    if (version.u > SD_SUMMARY_VERSION)
        return sdp_fail(err, SD_EFORMAT, version.offset, "summary format version %" PRIu64
                        " is newer than this snapdiff reads (%d): upgrade snapdiff",
                        version.u, SD_SUMMARY_VERSION);
    size_t at = c.pos;
    SDP_MP_TRY(sdp_mp_skip(&c, err));   /* the whole body checked before anything is written */
    c.pos = at;
    SDP_MP_TRY(sdp_mp_next(&c, &body, err));
    if (body.type != SDP_MP_MAP)
        return sdp_fail(err, SD_EFORMAT, body.offset, "corrupt summary: the body should be a map");
    fprintf(out, "{\"format\":\"%s\",\"version\":%" PRIu64, SD_SUMMARY_MAGIC, version.u);
    level stack[SDP_MP_MAX_DEPTH + 1];
    stack[0] = (level){.left = 2 * body.u, .map = true, .first = false};
    SDP_MP_TRY(stream(&c, out, stack, 1, err));
    fputs("}\n", out);
    if (ferror(out)) return sdp_fail(err, SD_EIO, SD_NO_OFFSET, "error writing the JSON");
    return SD_OK;
}
