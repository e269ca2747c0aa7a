/* summary_json.c - `snapdiff dump base.sdsum`: a summary's msgpack as one JSON object.
 *
 * The envelope ["snapdiff.summary", VERSION, {body}] becomes
 * {"format": "snapdiff.summary", "version": VERSION, ...the body's members}, built with
 * jansson as every JSON view is and written compact on one line. The whole body is
 * checked (base/msgpack.h: every count against the bytes left) before a value is built,
 * so the tree is at most a few jansson values per byte of the file; nesting is bounded by
 * SDP_MP_MAX_DEPTH.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/msgpack.h"
#include "render/format.h"
#include "render/json_frame.h"
#include "snapdiff/render_summary.h"

/* Reals as msgpack holds them: every digit a double has (17). */
#define SUMMARY_JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))

/* A container being filled: its values still to come, and a map's pending key. */
typedef struct level {
    json_t *node;
    uint64_t left;      /* items (maps: keys and values) still to read */
    json_t *key;        /* a map's key read, its value not yet */
} level;

/* A scalar token as a JSON value; NULL with err set for what summaries never hold. */
static json_t *scalar_json(const sdp_mp_token *t, sd_error *err)
{
    switch (t->type) {
    case SDP_MP_NIL: return json_null();
    case SDP_MP_BOOL: return json_boolean(t->b);
    /* beyond int64: the nearest double, since JSON integers here are 64-bit signed */
    case SDP_MP_UINT: return t->u <= INT64_MAX ? json_integer((json_int_t)t->u)
                                               : json_real((double)t->u);
    case SDP_MP_INT: return json_integer((json_int_t)t->i);
    case SDP_MP_FLOAT: return isfinite(t->f) ? json_real(t->f) : json_null();
    case SDP_MP_STR: return sdp_json_textn((const char *)t->p, t->len);
    case SDP_MP_BIN: {
        char *hex = malloc(2 * t->len + 1);
        if (!hex) return NULL;
        for (size_t i = 0; i < t->len; i++) snprintf(hex + 2 * i, 3, "%02x", t->p[i]);
        json_t *v = json_stringn(hex, 2 * t->len);
        free(hex);
        return v;
    }
    default:
        sdp_fail(err, SD_EFORMAT, t->offset, "corrupt summary: a msgpack extension value, "
                 "which summaries never hold");
        return NULL;
    }
}

/* Put v (stolen) in the innermost open container. */
static bool add_value(level *l, json_t *v)
{
    int rc;
    if (json_is_array(l->node)) {
        rc = json_array_append_new(l->node, v);
    } else {
        rc = json_object_setn_new_nocheck(l->node, json_string_value(l->key),
                                          json_string_length(l->key), v);
        json_decref(l->key);
        l->key = NULL;
    }
    return rc == 0;
}

static void unwind(level *stack, size_t depth)
{
    for (size_t i = 1; i < depth; i++) {   /* stack[0] is the caller's */
        json_decref(stack[i].node);
        json_decref(stack[i].key);
    }
    json_decref(stack[0].key);
}

/* Read the values that follow into stack[0].node until every open level is complete. */
static sd_status build(sdp_cursor *c, level *stack, sd_error *err)
{
    size_t depth = 1;
    while (depth > 0) {
        level *l = &stack[depth - 1];
        if (l->left == 0) {
            if (--depth > 0 && !add_value(&stack[depth - 1], l->node)) goto nomem;
            continue;
        }
        bool is_key = json_is_object(l->node) && !l->key;
        l->left--;
        sdp_mp_token t;
        sd_status st = sdp_mp_next(c, &t, err);
        if (st) {
            unwind(stack, depth);
            return st;
        }
        if (is_key && t.type != SDP_MP_STR) {
            unwind(stack, depth);
            return sdp_fail(err, SD_EFORMAT, t.offset, "corrupt summary: a map key is %s, "
                            "not a string", sdp_mp_type_name(t.type));
        }
        if (t.type == SDP_MP_ARRAY || t.type == SDP_MP_MAP) {
            if (depth == SDP_MP_MAX_DEPTH) {
                unwind(stack, depth);
                return sdp_fail(err, SD_ELIMIT, t.offset, "msgpack containers nested more "
                                "than %d deep", SDP_MP_MAX_DEPTH);
            }
            json_t *node = t.type == SDP_MP_MAP ? json_object() : json_array();
            if (!node) goto nomem;
            stack[depth++] = (level){.node = node,
                                     .left = t.type == SDP_MP_MAP ? 2 * t.u : t.u};
            continue;
        }
        json_t *v = scalar_json(&t, err);
        if (!v) {
            unwind(stack, depth);
            return err && err->code ? err->code : SD_ENOMEM;
        }
        if (is_key) l->key = v;
        else if (!add_value(l, v)) goto nomem;
    }
    return SD_OK;
nomem:
    unwind(stack, depth);
    return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory building the JSON");
}

sd_status sd_render_summary_json(FILE *out, const uint8_t *data, size_t len, sd_error *err)
{
    sd_error_clear(err);
    sdp_cursor c = {.base = data, .len = len};
    sdp_mp_token arr, tag, version, body;
    SDP_TRY(sdp_mp_next(&c, &arr, err));
    if (arr.type == SDP_MP_ARRAY && arr.u >= 3) SDP_TRY(sdp_mp_next(&c, &tag, err));
    if (arr.type != SDP_MP_ARRAY || arr.u < 3 || tag.type != SDP_MP_STR ||
        tag.len != sizeof SD_SUMMARY_MAGIC - 1 || memcmp(tag.p, SD_SUMMARY_MAGIC, tag.len) != 0)
        return sdp_fail(err, SD_EFORMAT, 0, "not a snapdiff summary (no \"%s\" tag)",
                        SD_SUMMARY_MAGIC);
    SDP_TRY(sdp_mp_next(&c, &version, err));
    if (version.type != SDP_MP_UINT || version.u == 0)
        return sdp_fail(err, SD_EFORMAT, version.offset, "corrupt summary: no format version");
    if (version.u > SD_SUMMARY_VERSION)
        return sdp_fail(err, SD_EFORMAT, version.offset, "summary format version %" PRIu64
                        " is newer than this snapdiff reads (%d): upgrade snapdiff",
                        version.u, SD_SUMMARY_VERSION);
    size_t at = c.pos;
    SDP_TRY(sdp_mp_skip(&c, err));   /* the whole body checked before anything is written */
    c.pos = at;
    SDP_TRY(sdp_mp_next(&c, &body, err));
    if (body.type != SDP_MP_MAP)
        return sdp_fail(err, SD_EFORMAT, body.offset, "corrupt summary: the body should be a map");
    json_t *doc = json_pack("{s:s,s:I}", "format", SD_SUMMARY_MAGIC, "version",
                            (json_int_t)version.u);
    if (!doc) return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory building the JSON");
    level stack[SDP_MP_MAX_DEPTH + 1];
    stack[0] = (level){.node = doc, .left = 2 * body.u};
    sd_status st = build(&c, stack, err);
    int rc = st == SD_OK ? json_dumpf(doc, out, SUMMARY_JSON_FLAGS) : 0;
    json_decref(doc);
    if (st) return st;
    if (rc != 0) return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory writing the JSON");
    fputc('\n', out);
    if (ferror(out)) return sdp_fail(err, SD_EIO, SD_NO_OFFSET, "error writing the JSON");
    return SD_OK;
}
