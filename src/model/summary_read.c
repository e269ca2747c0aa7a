/* summary_read.c - a snapdiff summary (summary.h, docs/summary.md) back into the model.
 *
 * The body is a map whose sections refer to each other by index (frames to strings,
 * stacks to frames, blocks to stacks), so its top level is scanned first for where each
 * section starts, and the sections are then read in the order their references need,
 * whatever order the file has them in. Every index is checked against what it indexes,
 * every count against the bytes left (msgpack.h), and every allocation is charged to the
 * load's budget, so a corrupt or hostile summary is an error with a byte offset, never a
 * crash or an allocation larger than the file justifies.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/model.h"
#include "model/memo.h"
#include "base/msgpack.h"
#include "model/summary_keys.h"
#include "snapdiff/summary.h"

#define Q(key) "'" key "'"   /* a key as the messages name it */

typedef struct reader {
    sd_snapshot *s;
    sdp_cursor cur;
    sd_error *err;
    const char **strings;      /* by id: the model's copies (in its arena) */
    size_t n_strings;
} reader;

/* The sections of the body: where each value starts (0 = absent). */
enum { SEC_STRINGS, SEC_FRAMES, SEC_STACKS, SEC_CONTEXTS, SEC_DEVICES, SEC_SETTINGS,
       SEC_ANNOTATIONS, SEC_WARNINGS, SEC_HOST, SEC_SKIP, SEC_LEGACY, SEC_COUNT };
static const char *const section_names[SEC_COUNT] = {
    SDP_SK_STRINGS, SDP_SK_FRAMES, SDP_SK_STACKS, SDP_SK_CONTEXTS, SDP_SK_DEVICES,
    SDP_SK_SETTINGS, SDP_SK_ANNOTATIONS, SDP_SK_WARNINGS, SDP_SK_HOST, SDP_SK_SKIP_ACTIONS,
    SDP_SK_LEGACY_LIST};

/* ---------- tokens with expectations ---------- */

static sd_status corrupt(reader *r, uint64_t offset, const char *fmt, ...) SDP_PRINTF(3, 4);
static sd_status corrupt(reader *r, uint64_t offset, const char *fmt, ...)
{
    char text[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return sdp_fail(r->err, SD_EFORMAT, offset, "corrupt summary: %s", text);
}

static sd_status expect(reader *r, sdp_mp_token *t, unsigned type, const char *what)
{
    SDP_TRY(sdp_mp_next(&r->cur, t, r->err));
    bool ok = t->type == type || (type == SDP_MP_INT && t->type == SDP_MP_UINT);
    if (!ok)
        return corrupt(r, t->offset, "%s should be %s, found %s", what, sdp_mp_type_name(type),
                       sdp_mp_type_name(t->type));
    return SD_OK;
}

static sd_status array_of(reader *r, const char *what, size_t want, uint64_t *n)
{
    sdp_mp_token t;
    SDP_TRY(expect(r, &t, SDP_MP_ARRAY, what));
    if (want && t.u != want)
        return corrupt(r, t.offset, "%s should have %zu items, found %" PRIu64, what, want, t.u);
    *n = t.u;
    return SD_OK;
}

static sd_status uint_of(reader *r, const char *what, uint64_t *out)
{
    sdp_mp_token t;
    SDP_TRY(expect(r, &t, SDP_MP_UINT, what));
    *out = t.u;
    return SD_OK;
}

static sd_status int_of(reader *r, const char *what, int64_t *out)
{
    sdp_mp_token t;
    SDP_TRY(expect(r, &t, SDP_MP_INT, what));
    if (t.type == SDP_MP_UINT && t.u > INT64_MAX)
        return corrupt(r, t.offset, "%s is too large", what);
    *out = t.type == SDP_MP_UINT ? (int64_t)t.u : t.i;
    return SD_OK;
}

/* An index below `limit`. */
static sd_status index_of(reader *r, const char *what, uint64_t limit, uint32_t *out)
{
    sdp_mp_token t;
    SDP_TRY(expect(r, &t, SDP_MP_UINT, what));
    if (t.u >= limit)
        return corrupt(r, t.offset, "%s %" PRIu64 " is out of range (%" PRIu64 " exist)", what,
                       t.u, limit);
    *out = (uint32_t)t.u;
    return SD_OK;
}

static sd_status optional_int(reader *r, const char *what, bool *has, int64_t *out)
{
    sdp_mp_token t;
    size_t at = r->cur.pos;
    SDP_TRY(sdp_mp_next(&r->cur, &t, r->err));
    *has = t.type != SDP_MP_NIL;
    if (!*has) return SD_OK;
    r->cur.pos = at;
    return int_of(r, what, out);
}

static void *alloc(reader *r, size_t n, size_t size, uint64_t offset)
{
    if (n && size > SIZE_MAX / n) {
        sdp_nomem_at(r->err, offset, "reading the summary");
        return NULL;
    }
    void *p = sdp_model_alloc(r->s, n ? n * size : size);  /* never NULL for none */
    if (!p) sdp_nomem_at(r->err, offset, "reading the summary");
    else memset(p, 0, n ? n * size : size);
    return p;
}

static sd_status copy_str(reader *r, const sdp_mp_token *t, const char **out, size_t *len)
{
    char *p = alloc(r, t->len + 1, 1, t->offset);
    if (!p) return SD_ENOMEM;
    memcpy(p, t->p, t->len);
    p[t->len] = 0;
    *out = p;
    if (len) *len = t->len;
    return SD_OK;
}

static sd_status string_of(reader *r, const char *what, const char **out)
{
    sdp_mp_token t;
    SDP_TRY(expect(r, &t, SDP_MP_STR, what));
    return copy_str(r, &t, out, NULL);
}

static sd_status string_ref(reader *r, const char *what, const char **out)
{
    uint32_t id = 0;
    SDP_TRY(index_of(r, what, r->n_strings, &id));
    *out = r->strings[id];
    return SD_OK;
}

/* ---------- strings, frames, stacks ---------- */

static sd_status read_strings(reader *r)
{
    uint64_t n;
    SDP_TRY(array_of(r, Q(SDP_SK_STRINGS), 0, &n));
    r->strings = alloc(r, n, sizeof *r->strings, r->cur.pos);
    if (!r->strings) return SD_ENOMEM;
    for (uint64_t i = 0; i < n; i++) {
        sdp_mp_token t;
        SDP_TRY(expect(r, &t, SDP_MP_STR, "a string of " Q(SDP_SK_STRINGS)));
        /* The model's strings end at their first NUL (sd_frame shows them so). */
        sdp_mp_token cut = t;
        cut.len = strnlen((const char *)t.p, t.len);
        SDP_TRY(copy_str(r, &cut, &r->strings[i], NULL));
    }
    r->n_strings = (size_t)n;
    return SD_OK;
}

static sd_status read_frames(reader *r)
{
    sd_snapshot *s = r->s;
    uint64_t n;
    SDP_TRY(array_of(r, Q(SDP_SK_FRAMES), 0, &n));
    if (n >= UINT32_MAX) return corrupt(r, r->cur.pos, "too many frames");
    SDP_TRY(sdp_model_grow(s, (void **)&s->frames, &s->frames_cap, n ? (size_t)n : 1,
                       sizeof *s->frames));
    for (uint64_t i = 0; i < n; i++) {
        uint64_t three;
        sd_frame *f = &s->frames[i];
        SDP_TRY(array_of(r, "a frame", 3, &three));
        SDP_TRY(string_ref(r, "a frame's filename", &f->filename));
        SDP_TRY(string_ref(r, "a frame's name", &f->name));
        SDP_TRY(int_of(r, "a frame's line", &f->line));
    }
    s->n_frames = (size_t)n;
    return SD_OK;
}

static sd_status read_stacks(reader *r)
{
    sd_snapshot *s = r->s;
    uint64_t n;
    size_t at = r->cur.pos;
    SDP_TRY(array_of(r, Q(SDP_SK_STACKS), 0, &n));
    if (n == 0 || n >= UINT32_MAX - 1)
        return corrupt(r, at, Q(SDP_SK_STACKS) " should hold the empty stack and at most "
                       "2^32 - 2 others");
    SDP_TRY(sdp_model_grow(s, (void **)&s->stack_start, &s->stacks_cap, (size_t)n + 1,
                       sizeof *s->stack_start));
    s->stack_start[0] = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len;
        at = r->cur.pos;
        SDP_TRY(array_of(r, "a stack", 0, &len));
        if (i == 0 && len) return corrupt(r, at, "stack 0 should be the empty stack");
        size_t start = s->n_stack_frames;
        if (len > UINT32_MAX - start) return corrupt(r, at, "too many frames in stacks");
        SDP_TRY(sdp_model_grow(s, (void **)&s->stack_frames, &s->stack_frames_cap,
                           start + (size_t)len + 1, sizeof *s->stack_frames));
        for (uint64_t k = 0; k < len; k++)
            SDP_TRY(index_of(r, "a stack's frame", s->n_frames, &s->stack_frames[start + k]));
        s->n_stack_frames = start + (size_t)len;
        s->stack_start[i + 1] = (uint32_t)s->n_stack_frames;
    }
    s->n_stacks = (size_t)n;
    return SD_OK;
}

static sd_status read_contexts(reader *r)
{
    sd_snapshot *s = r->s;
    uint64_t n;
    SDP_TRY(array_of(r, Q(SDP_SK_CONTEXTS), 0, &n));
    if (!n) return SD_OK;
    SDP_TRY(sdp_model_grow(s, (void **)&s->stack_ctx, &s->stack_ctx_cap, s->n_stacks,
                       sizeof *s->stack_ctx));
    for (size_t i = 0; i < s->n_stacks; i++) s->stack_ctx[i] = (sd_stack_context){0, "", ""};
    s->n_stack_ctx = s->n_stacks;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t four;
        uint32_t id = 0;
        sd_stack_context c;
        SDP_TRY(array_of(r, "a context", 4, &four));
        SDP_TRY(index_of(r, "a context's stack", s->n_stacks, &id));
        SDP_TRY(index_of(r, "a context's forward stack", s->n_stacks, &c.forward_stack));
        SDP_TRY(string_ref(r, "a context's user_metadata", &c.user_metadata));
        SDP_TRY(string_ref(r, "a context's compile_context", &c.compile_context));
        s->stack_ctx[id] = c;
    }
    return SD_OK;
}

/* ---------- devices ---------- */

static sd_status read_segments(reader *r, sd_cuda_device *d, uint64_t *n_blocks_claimed)
{
    uint64_t n;
    SDP_TRY(array_of(r, "a device's " Q(SDP_SK_SEGMENTS), 0, &n));
    sd_segment *segs = alloc(r, n, sizeof *segs, r->cur.pos);
    if (!segs) return SD_ENOMEM;
    *n_blocks_claimed = 0;
    for (uint64_t i = 0; i < n; i++) {
        sd_segment *g = &segs[i];
        uint64_t eight, flags, first, count;
        sdp_mp_token t;
        size_t at = r->cur.pos;
        SDP_TRY(array_of(r, "a segment", 8, &eight));
        SDP_TRY(uint_of(r, "a segment's address", &g->address));
        SDP_TRY(uint_of(r, "a segment's total_size", &g->total_size));
        SDP_TRY(uint_of(r, "a segment's stream", &g->stream));
        SDP_TRY(sdp_mp_next(&r->cur, &t, r->err));
        if (t.type == SDP_MP_ARRAY && t.u == 2) {
            g->has_pool_id = true;
            SDP_TRY(int_of(r, "a segment's pool id", &g->pool_id[0]));
            SDP_TRY(int_of(r, "a segment's pool id", &g->pool_id[1]));
        } else if (t.type != SDP_MP_NIL) {
            return corrupt(r, t.offset, "a segment's pool id should be nil or two integers");
        }
        SDP_TRY(uint_of(r, "a segment's flags", &flags));
        g->is_small = flags & 1;
        g->is_expandable = flags & 2;
        SDP_TRY(index_of(r, "a segment's stack", r->s->n_stacks, &g->stack));
        SDP_TRY(uint_of(r, "a segment's first block", &first));
        SDP_TRY(uint_of(r, "a segment's block count", &count));
        if (first != *n_blocks_claimed || count > UINT32_MAX - first)
            return corrupt(r, at, "segment %" PRIu64 "'s blocks should follow the previous "
                           "segment's", i);
        g->first_block = (uint32_t)first;
        g->n_blocks = (uint32_t)count;
        *n_blocks_claimed = first + count;
        if (i && g->address < segs[i - 1].address)
            return corrupt(r, at, "segments should be sorted by address");
    }
    d->segments = segs;
    d->n_segments = (size_t)n;
    return SD_OK;
}

static sd_status read_blocks(reader *r, sd_cuda_device *d, uint64_t n_claimed)
{
    uint64_t n;
    size_t at = r->cur.pos;
    SDP_TRY(array_of(r, "a device's " Q(SDP_SK_BLOCKS), 0, &n));
    if (n != n_claimed)
        return corrupt(r, at, "%" PRIu64 " blocks, but the segments hold %" PRIu64, n, n_claimed);
    sd_block *blocks = alloc(r, n, sizeof *blocks, r->cur.pos);
    if (!blocks) return SD_ENOMEM;
    for (uint64_t i = 0; i < n; i++) {
        sd_block *b = &blocks[i];
        uint64_t six, state;
        at = r->cur.pos;
        SDP_TRY(array_of(r, "a block", 6, &six));
        SDP_TRY(uint_of(r, "a block's address", &b->address));
        SDP_TRY(uint_of(r, "a block's size", &b->size));
        SDP_TRY(uint_of(r, "a block's requested size", &b->requested_size));
        SDP_TRY(uint_of(r, "a block's state", &state));
        if (state > SD_BLOCK_OTHER) return corrupt(r, at, "block state %" PRIu64 " is unknown", state);
        b->state = (uint8_t)state;
        SDP_TRY(index_of(r, "a block's segment", d->n_segments, &b->segment));
        const sd_segment *g = &d->segments[b->segment];
        if (i < g->first_block || i >= (uint64_t)g->first_block + g->n_blocks)
            return corrupt(r, at, "block %" PRIu64 " is not among its segment's blocks", i);
        SDP_TRY(index_of(r, "a block's stack", r->s->n_stacks, &b->stack));
    }
    d->blocks = blocks;
    d->n_blocks = (size_t)n;
    return SD_OK;
}

static sd_status read_trace(reader *r, sd_cuda_device *d)
{
    sd_snapshot *s = r->s;
    uint64_t n;
    SDP_TRY(array_of(r, "a device's " Q(SDP_SK_TRACE), 0, &n));
    size_t first = s->n_records;
    SDP_TRY(sdp_model_grow(s, (void **)&s->records, &s->records_cap, first + (size_t)n + 1,
                       sizeof *s->records));
    for (uint64_t i = 0; i < n; i++) {
        sd_trace_entry *e = &s->records[first + i];
        uint64_t six, action;
        size_t at = r->cur.pos;
        memset(e, 0, sizeof *e);
        SDP_TRY(array_of(r, "a trace entry", 6, &six));
        SDP_TRY(uint_of(r, "a trace entry's action", &action));
        if (action >= SD_ACT_COUNT)
            return corrupt(r, at, "trace action %" PRIu64 " is unknown", action);
        e->action = (uint8_t)action;
        SDP_TRY(uint_of(r, "a trace entry's address", &e->addr));
        SDP_TRY(uint_of(r, "a trace entry's size", &e->size));
        SDP_TRY(uint_of(r, "a trace entry's stream", &e->stream));
        SDP_TRY(optional_int(r, "a trace entry's time", &e->has_time, &e->time_us));
        SDP_TRY(index_of(r, "a trace entry's stack", s->n_stacks, &e->stack));
    }
    s->n_records = first + (size_t)n;
    d->n_trace = (size_t)n;
    return SD_OK;
}

/* A device, or (host) the pinned host memory: segments and blocks alone, device -1. */
static sd_status read_layout(reader *r, sd_cuda_device *d, uint64_t *trace_first,
                             uint64_t *recorded, bool host)
{
    uint64_t n;
    sdp_mp_token t;
    size_t at = r->cur.pos;
    SDP_TRY(expect(r, &t, SDP_MP_MAP, host ? Q(SDP_SK_HOST) : "a device"));
    n = t.u;
    bool seen[4] = {host, false, false, false};
    uint64_t claimed = 0;
    *trace_first = r->s->n_records;
    for (uint64_t i = 0; i < n; i++) {
        SDP_TRY(expect(r, &t, SDP_MP_STR, "a device's key"));
        #define IS(lit) (t.len == sizeof(lit) - 1 && memcmp(t.p, lit, t.len) == 0)
        if (IS(SDP_SK_DEVICE) && !host) {
            SDP_TRY(int_of(r, Q(SDP_SK_DEVICE), &d->device));
            seen[0] = true;
        } else if (IS(SDP_SK_SEGMENTS)) {
            SDP_TRY(read_segments(r, d, &claimed));
            seen[1] = true;
        } else if (IS(SDP_SK_BLOCKS)) {
            if (!seen[1])
                return corrupt(r, t.offset, "a device's " Q(SDP_SK_BLOCKS) " come before its "
                               Q(SDP_SK_SEGMENTS));
            SDP_TRY(read_blocks(r, d, claimed));
            seen[2] = true;
        } else if (IS(SDP_SK_TRACE_ENTRIES) && !host) {
            SDP_TRY(uint_of(r, Q(SDP_SK_TRACE_ENTRIES), recorded));
        } else if (IS(SDP_SK_TRACE) && !host) {   /* the host's trace is never kept */
            *trace_first = r->s->n_records;
            SDP_TRY(read_trace(r, d));
            seen[3] = true;
        } else {
            SDP_TRY(sdp_mp_skip(&r->cur, r->err));
        }
        #undef IS
    }
    if (host) {
        if (!seen[1] || !seen[2])
            return corrupt(r, at, Q(SDP_SK_HOST) " should have " Q(SDP_SK_SEGMENTS) " and "
                           Q(SDP_SK_BLOCKS));
        d->device = -1;
        return SD_OK;
    }
    if (!seen[0] || !seen[1] || !seen[2])
        return corrupt(r, at, "a device should have " Q(SDP_SK_DEVICE) ", " Q(SDP_SK_SEGMENTS)
                       " and " Q(SDP_SK_BLOCKS));
    if (*recorded < d->n_trace) *recorded = d->n_trace;   /* absent: at least those kept */
    if (d->device < 0 || d->device > 4095)
        return corrupt(r, at, "device ordinal %" PRId64 " is outside 0..4095", d->device);
    return SD_OK;
}

static sd_status read_device(reader *r, sd_cuda_device *d, uint64_t *trace_first,
                             uint64_t *recorded)
{
    return read_layout(r, d, trace_first, recorded, false);
}

static sd_status read_devices(reader *r)
{
    sd_snapshot *s = r->s;
    uint64_t n;
    SDP_TRY(array_of(r, Q(SDP_SK_DEVICES), 0, &n));
    s->devices = alloc(r, n, sizeof *s->devices, r->cur.pos);
    if (!s->devices) return SD_ENOMEM;
    uint64_t *trace_first = alloc(r, n, sizeof *trace_first, r->cur.pos);
    s->trace_recorded = alloc(r, n, sizeof *s->trace_recorded, r->cur.pos);
    if (!trace_first || !s->trace_recorded) return SD_ENOMEM;
    for (uint64_t i = 0; i < n; i++) {
        size_t at = r->cur.pos;
        SDP_TRY(read_device(r, &s->devices[i], &trace_first[i], &s->trace_recorded[i]));
        if (i && s->devices[i].device <= s->devices[i - 1].device)
            return corrupt(r, at, "devices should be sorted by ordinal, each once");
        s->n_devices = (size_t)i + 1;
    }
    /* The record array may have moved while it grew: point the devices into it now. */
    for (size_t i = 0; i < s->n_devices; i++)
        s->devices[i].trace = s->devices[i].n_trace ? s->records + trace_first[i] : NULL;
    return SD_OK;
}

/* ---------- settings, annotations, warnings ---------- */

/* A recorded setting, at most `depth` containers deep and *budget nodes in all. */
static sd_status read_setting(reader *r, int depth, size_t *budget, sd_setting *out)
{
    sdp_mp_token t;
    SDP_TRY(sdp_mp_next(&r->cur, &t, r->err));
    switch (t.type) {
    case SDP_MP_NIL: out->type = SD_SETTING_NONE; return SD_OK;
    case SDP_MP_BOOL: out->type = SD_SETTING_BOOL; out->b = t.b; return SD_OK;
    case SDP_MP_UINT:
        if (t.u > INT64_MAX) return corrupt(r, t.offset, "a setting is too large");
        out->type = SD_SETTING_INT; out->i = (int64_t)t.u; return SD_OK;
    case SDP_MP_INT: out->type = SD_SETTING_INT; out->i = t.i; return SD_OK;
    case SDP_MP_FLOAT: out->type = SD_SETTING_FLOAT; out->f = t.f; return SD_OK;
    case SDP_MP_STR:
        out->type = SD_SETTING_STR;
        return copy_str(r, &t, &out->str, &out->str_len);
    case SDP_MP_ARRAY: case SDP_MP_MAP: break;
    default: return corrupt(r, t.offset, "a setting should be plain data");
    }
    out->type = t.type == SDP_MP_MAP ? SD_SETTING_DICT : SD_SETTING_LIST;
    if (depth == 0 || t.u > *budget)
        return corrupt(r, t.offset, "the settings are deeper or larger than a snapshot records");
    *budget -= (size_t)t.u;
    if (!t.u) return SD_OK;
    sd_setting *items = alloc(r, (size_t)t.u, sizeof *items, t.offset);
    if (!items) return SD_ENOMEM;
    for (uint64_t i = 0; i < t.u; i++) {
        if (t.type == SDP_MP_MAP) {
            sdp_mp_token k;
            SDP_TRY(expect(r, &k, SDP_MP_STR, "a setting's key"));
            SDP_TRY(copy_str(r, &k, &items[i].key, &items[i].key_len));
        }
        SDP_TRY(read_setting(r, depth - 1, budget, &items[i]));
    }
    out->items = items;
    out->n_items = (size_t)t.u;
    return SD_OK;
}

static const sd_setting *member(const sd_setting *dict, const char *k)
{
    for (size_t i = 0; dict && i < dict->n_items; i++)
        if (dict->items[i].key_len == strlen(k) && memcmp(dict->items[i].key, k, dict->items[i].key_len) == 0)
            return &dict->items[i];
    return NULL;
}

/* The typed fields, from the recorded dict as the pickle path reads them (model.c). */
static void typed_settings(sd_allocator_settings *a)
{
    const sd_setting *x;
    if ((x = member(a->recorded, "max_split_size")) && x->type == SD_SETTING_INT) {
        a->max_split_size = x->i;
        a->has_max_split_size = true;
    }
    if ((x = member(a->recorded, "garbage_collection_threshold")) &&
        (x->type == SD_SETTING_FLOAT || x->type == SD_SETTING_INT)) {
        a->garbage_collection_threshold = x->type == SD_SETTING_INT ? (double)x->i : x->f;
        a->has_gc_threshold = true;
    }
    if ((x = member(a->recorded, "expandable_segments")) &&
        (x->type == SD_SETTING_BOOL || x->type == SD_SETTING_INT)) {
        a->expandable_segments = x->type == SD_SETTING_BOOL ? x->b : x->i != 0;
        a->has_expandable_segments = true;
    }
}

static sd_status read_roundup(reader *r, sd_allocator_settings *a)
{
    sdp_mp_token t;
    size_t at = r->cur.pos;
    SDP_TRY(sdp_mp_next(&r->cur, &t, r->err));
    if (t.type == SDP_MP_NIL) return SD_OK;
    if (t.type != SDP_MP_ARRAY) return corrupt(r, at, Q(SDP_SK_ROUNDUP) " should be an array");
    sd_roundup_division *d = alloc(r, (size_t)t.u, sizeof *d, at);
    if (!d) return SD_ENOMEM;
    for (uint64_t i = 0; i < t.u; i++) {
        uint64_t two;
        SDP_TRY(array_of(r, "a roundup division", 2, &two));
        SDP_TRY(uint_of(r, "a roundup interval", &d[i].interval_mib));
        SDP_TRY(int_of(r, "a roundup division count", &d[i].divisions));
    }
    a->has_roundup_power2_divisions = true;
    a->roundup_power2_divisions = d;
    a->n_roundup_power2_divisions = (size_t)t.u;
    return SD_OK;
}

static sd_status read_settings(reader *r)
{
    sd_allocator_settings *a = &r->s->settings;
    sdp_mp_token t;
    size_t at = r->cur.pos;
    SDP_TRY(sdp_mp_next(&r->cur, &t, r->err));
    if (t.type == SDP_MP_NIL) return SD_OK;
    if (t.type != SDP_MP_MAP) return corrupt(r, at, Q(SDP_SK_SETTINGS) " should be a map or nil");
    a->present = true;
    for (uint64_t i = 0; i < t.u; i++) {
        sdp_mp_token k;
        SDP_TRY(expect(r, &k, SDP_MP_STR, "a key of " Q(SDP_SK_SETTINGS)));
        #define IS(lit) (k.len == sizeof(lit) - 1 && memcmp(k.p, lit, k.len) == 0)
        if (IS(SDP_SK_ALLOC_CONF)) {
            sdp_mp_token v;
            size_t vat = r->cur.pos;
            SDP_TRY(sdp_mp_next(&r->cur, &v, r->err));
            if (v.type == SDP_MP_STR) {
                r->cur.pos = vat;
                SDP_TRY(string_of(r, Q(SDP_SK_ALLOC_CONF), &a->alloc_conf));
            } else if (v.type != SDP_MP_NIL) {
                return corrupt(r, vat, Q(SDP_SK_ALLOC_CONF) " should be a string or nil");
            }
        } else if (IS(SDP_SK_ROUNDUP)) {
            SDP_TRY(read_roundup(r, a));
        } else if (IS(SDP_SK_RECORDED)) {
            sd_setting *tree = alloc(r, 1, sizeof *tree, r->cur.pos);
            if (!tree) return SD_ENOMEM;
            size_t budget = SD_SETTINGS_MAX_NODES;
            SDP_TRY(read_setting(r, 4, &budget, tree));
            a->recorded = tree->type == SD_SETTING_NONE ? NULL : tree;
        } else {
            SDP_TRY(sdp_mp_skip(&r->cur, r->err));
        }
        #undef IS
    }
    typed_settings(a);
    return SD_OK;
}

static sd_status read_annotations(reader *r)
{
    sd_snapshot *s = r->s;
    uint64_t n;
    SDP_TRY(array_of(r, Q(SDP_SK_ANNOTATIONS), 0, &n));
    sd_annotation *a = alloc(r, n, sizeof *a, r->cur.pos);
    if (!a) return SD_ENOMEM;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t four, stage;
        size_t at = r->cur.pos;
        SDP_TRY(array_of(r, "an annotation", 4, &four));
        SDP_TRY(string_of(r, "an annotation's name", &a[i].name));
        SDP_TRY(int_of(r, "an annotation's device", &a[i].device));
        SDP_TRY(optional_int(r, "an annotation's time", &a[i].has_time, &a[i].time_us));
        SDP_TRY(uint_of(r, "an annotation's stage", &stage));
        if (stage > SD_STAGE_END) return corrupt(r, at, "annotation stage %" PRIu64 " is unknown", stage);
        a[i].stage = (uint8_t)stage;
    }
    s->annotations = a;
    s->n_annotations = (size_t)n;
    return SD_OK;
}

static sd_status read_warnings(reader *r)
{
    uint64_t n;
    SDP_TRY(array_of(r, Q(SDP_SK_WARNINGS), 0, &n));
    for (uint64_t i = 0; i < n; i++) {
        sdp_mp_token t;
        SDP_TRY(expect(r, &t, SDP_MP_STR, "a warning"));
        /* The model's own cap applies (sdp_model_warn counts what it drops). */
        sdp_model_warn(r->s, "%.*s", (int)(t.len < 300 ? t.len : 300), (const char *)t.p);
    }
    return SD_OK;
}

/* 'host': nil (no pinned host memory) or its segments and blocks. */
static sd_status read_host(reader *r)
{
    sdp_mp_token t;
    size_t at = r->cur.pos;
    SDP_TRY(sdp_mp_next(&r->cur, &t, r->err));
    if (t.type == SDP_MP_NIL) return SD_OK;
    r->cur.pos = at;
    uint64_t first, recorded = 0;
    SDP_TRY(read_layout(r, &r->s->host, &first, &recorded, true));
    r->s->has_host = true;
    return SD_OK;
}

/* 'skip_actions': nil (not recorded) or the skipped actions' codes. */
static sd_status read_skip_actions(reader *r)
{
    sdp_mp_token t;
    size_t at = r->cur.pos;
    SDP_TRY(sdp_mp_next(&r->cur, &t, r->err));
    if (t.type == SDP_MP_NIL) return SD_OK;
    r->cur.pos = at;
    uint64_t n;
    SDP_TRY(array_of(r, Q(SDP_SK_SKIP_ACTIONS), 0, &n));
    uint32_t mask = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t a;
        size_t here = r->cur.pos;
        SDP_TRY(uint_of(r, "a skipped action", &a));
        if (a >= SD_ACT_COUNT) return corrupt(r, here, "skipped action %" PRIu64 " is unknown", a);
        mask |= 1u << a;
    }
    r->s->has_skip = true;
    r->s->skip_mask = mask;
    return SD_OK;
}

/* 'label_prefix': nil or the directory the snapshot's user frames share, which labels
 * drop (computed from all its frames; the summary keeps only some). The cursor is left
 * where it was. */
static sd_status read_label_prefix(reader *r)
{
    size_t here = r->cur.pos;
    sdp_mp_token t;
    const char *p = NULL;   /* nil: the snapshot had no user frame */
    size_t len = 0;
    SDP_TRY(sdp_mp_next(&r->cur, &t, r->err));
    if (t.type != SDP_MP_NIL) {
        r->cur.pos = here;
        SDP_TRY(expect(r, &t, SDP_MP_STR, Q(SDP_SK_LABEL_PREFIX)));
        SDP_TRY(copy_str(r, &t, &p, &len));
    }
    /* set either way: the summary's frames must not be asked again (round trip) */
    sdp_snapshot_set_label_prefix(r->s, p, len);
    r->cur.pos = here;
    return SD_OK;
}

/* ---------- the envelope ---------- */

/* ["snapdiff.summary", VERSION, {body}]: the cursor is left on the body's map. */
static sd_status read_envelope(reader *r, uint64_t *n_keys)
{
    uint64_t n;
    sdp_mp_token t;
    SDP_TRY(array_of(r, "the summary", 0, &n));
    SDP_TRY(expect(r, &t, SDP_MP_STR, "the summary's tag"));
    if (n < 3 || t.len != strlen(SD_SUMMARY_MAGIC) || memcmp(t.p, SD_SUMMARY_MAGIC, t.len))
        return corrupt(r, 0, "not a snapdiff summary (no \"%s\" tag)", SD_SUMMARY_MAGIC);
    SDP_TRY(expect(r, &t, SDP_MP_UINT, "the summary's version"));
    if (t.u > SD_SUMMARY_VERSION)
        return sdp_fail(r->err, SD_EFORMAT, t.offset, "summary format version %" PRIu64 " is "
                        "newer than this snapdiff reads (%d): upgrade snapdiff, or summarize "
                        "the snapshot again with this one", t.u, SD_SUMMARY_VERSION);
    if (t.u == 0) return corrupt(r, t.offset, "format version 0 does not exist");
    SDP_TRY(expect(r, &t, SDP_MP_MAP, "the summary's body"));
    *n_keys = t.u;
    return SD_OK;
}

sd_status sdp_summary_build(sd_snapshot *s, const uint8_t *data, size_t len, sd_error *err)
{
    reader r = {.s = s, .cur = {.base = data, .len = len}, .err = err};
    uint64_t n_keys = 0;
    SDP_TRY(read_envelope(&r, &n_keys));
    size_t at[SEC_COUNT] = {0};
    for (uint64_t i = 0; i < n_keys; i++) {
        sdp_mp_token k;
        SDP_TRY(expect(&r, &k, SDP_MP_STR, "a key of the summary"));
        for (int sec = 0; sec < SEC_COUNT; sec++)
            if (k.len == strlen(section_names[sec]) && !memcmp(k.p, section_names[sec], k.len))
                at[sec] = r.cur.pos;
        #define IS(lit) (k.len == sizeof(lit) - 1 && memcmp(k.p, lit, k.len) == 0)
        if (IS(SDP_SK_SOURCE)) {   /* the snapshot it was made from */
            size_t here = r.cur.pos;
            SDP_TRY(string_of(&r, Q(SDP_SK_SOURCE), &s->origin));
            r.cur.pos = here;
        }
        if (IS(SDP_SK_LABEL_PREFIX))
            SDP_TRY(read_label_prefix(&r));
        #undef IS
        SDP_TRY(sdp_mp_skip(&r.cur, err));   /* checks the whole body's syntax on the way */
    }
    for (int sec = 0; sec <= SEC_DEVICES; sec++)
        if (!at[sec] && sec != SEC_CONTEXTS)
            return corrupt(&r, 0, "the summary has no '%s'", section_names[sec]);
    static sd_status (*const readers[SEC_LEGACY])(reader *) = {
        read_strings, read_frames, read_stacks, read_contexts, read_devices, read_settings,
        read_annotations, read_warnings, read_host, read_skip_actions};
    for (int sec = 0; sec < SEC_LEGACY; sec++) {
        if (!at[sec]) continue;
        r.cur.pos = at[sec];
        SDP_TRY(readers[sec](&r));
    }
    if (at[SEC_LEGACY]) {
        sdp_mp_token t;
        r.cur.pos = at[SEC_LEGACY];
        SDP_TRY(expect(&r, &t, SDP_MP_BOOL, Q(SDP_SK_LEGACY_LIST)));
        s->legacy_list = t.b;
    }
    s->is_summary = true;
    return SD_OK;
}
