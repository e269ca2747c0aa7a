/* value.c - the public sd_pickle handle, value accessors, opcode names, UTF-8 check. */
#include <stdlib.h>

#include "pickle/value.h"
#include "pickle/pickle_ops.h"

struct sd_pickle {
    sdp_arena arena;
    sd_value root;
    uint64_t trailing;
    uint64_t n_values;
    int proto;
};

sd_status sd_pickle_options_init(sd_pickle_options *opts, unsigned version)
{
    static const sd_pickle_options tmpl = SD_PICKLE_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_PICKLE_OPTIONS_VERSION);
}

sd_pickle *sd_pickle_parse(const uint8_t *data, size_t len, const sd_pickle_options *opts,
                           sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_PICKLE_OPTIONS_VERSION, "sd_pickle_options", err))
        return NULL;
    sd_pickle *p = calloc(1, sizeof *p);
    if (!p) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    sdp_arena_init(&p->arena, opts ? opts->max_memory : 0);
    if (sdp_pickle_parse_into(&p->arena, data, len, 0, NULL, &p->root, &p->trailing, &p->proto,
                              &p->n_values, err) != SD_OK) {
        sd_pickle_free(p);
        return NULL;
    }
    return p;
}

void sd_pickle_free(sd_pickle *p)
{
    if (!p) return;
    sdp_arena_free(&p->arena);
    free(p);
}

const sd_value *sd_pickle_root(const sd_pickle *p) { return &p->root; }
uint64_t sd_pickle_trailing(const sd_pickle *p) { return p->trailing; }
int sd_pickle_protocol(const sd_pickle *p) { return p->proto; }
uint64_t sd_pickle_value_count(const sd_pickle *p) { return p->n_values; }

sd_value_type sd_value_type_of(const sd_value *v)
{
    static const sd_value_type map[] = {
        [SDP_NONE] = SD_VALUE_NONE, [SDP_BOOL] = SD_VALUE_BOOL, [SDP_INT] = SD_VALUE_INT,
        [SDP_BIGINT] = SD_VALUE_BIGINT, [SDP_FLOAT] = SD_VALUE_FLOAT, [SDP_STR] = SD_VALUE_STR,
        [SDP_BYTES] = SD_VALUE_BYTES, [SDP_LIST] = SD_VALUE_LIST, [SDP_TUPLE] = SD_VALUE_TUPLE,
        [SDP_DICT] = SD_VALUE_DICT, [SDP_RECORD] = SD_VALUE_NONE, [SDP_UNSET] = SD_VALUE_NONE,
    };
    return v ? map[sdp_type(*v)] : SD_VALUE_NONE;
}

bool sd_value_bool(const sd_value *v)
{
    int64_t i;
    return v && sdp_int_of(*v, &i) && i != 0;
}

int64_t sd_value_int(const sd_value *v)
{
    int64_t i;
    return v && sdp_int_of(*v, &i) ? i : 0;
}

double sd_value_float(const sd_value *v)
{
    if (!v) return 0;
    int64_t i;
    if (sdp_int_of(*v, &i)) return (double)i;
    if (sdp_type(*v) == SDP_FLOAT) return ((const sdp_num *)(uintptr_t)v->bits)->u.f;
    return 0;
}

const char *sd_value_bytes(const sd_value *v, size_t *len)
{
    const sdp_blob *b = v ? sdp_blob_of(*v) : NULL;
    if (len) *len = b ? b->len : 0;
    return b ? b->data : NULL;
}

size_t sd_value_len(const sd_value *v)
{
    if (!v) return 0;
    const sdp_cont *c = sdp_cont_of(*v);
    if (c) return c->n;
    const sdp_blob *b = sdp_blob_of(*v);
    return b && b->type != SDP_BIGINT ? b->len : 0;
}

sd_status sdp_cont_flatten(sdp_arena *a, sdp_cont *c, size_t extra)
{
    if (!c->run) return SD_OK;
    if (extra > UINT32_MAX - c->n) return SD_ELIMIT;
    size_t need = (size_t)c->n + extra;
    sd_value *items = sdp_arena_alloc(a, (need ? need : 1) * sizeof *items);
    if (!items) return SD_ENOMEM;
    for (uint32_t i = 0; i < c->n; i++)
        items[i] = sdp_record_value(c->run - 1u, (uint64_t)c->cap + i);
    c->items = items;
    c->cap = (uint32_t)need;
    c->run = 0;
    return SD_OK;
}

void sdp_cont_drop_items(sdp_arena *a, sdp_cont *c)
{
    if (c->type != SDP_LIST || c->run || !c->items) return;
    sdp_arena_give_back(a, c->items, (size_t)c->cap * sizeof *c->items);
    c->items = NULL;
    c->cap = 0;
    c->open = 0;
}

const sd_value *sd_value_item(const sd_value *v, size_t i)
{
    const sdp_cont *c = v ? sdp_cont_of(*v) : NULL;
    if (!c || c->type == SDP_DICT || c->run || !c->items || i >= c->n) return NULL;
    return &c->items[i];
}

const sd_value *sd_value_dict_key(const sd_value *v, size_t i)
{
    const sdp_cont *c = v ? sdp_cont_of(*v) : NULL;
    if (!c || c->type != SDP_DICT || i >= c->n) return NULL;
    return sdp_dict_key(c, (uint32_t)i);
}

const sd_value *sd_value_dict_val(const sd_value *v, size_t i)
{
    const sdp_cont *c = v ? sdp_cont_of(*v) : NULL;
    if (!c || c->type != SDP_DICT || i >= c->n) return NULL;
    return sdp_dict_val(c, (uint32_t)i);
}

const sd_value *sd_value_dict_get(const sd_value *v, const char *key)
{
    const sdp_cont *c = v ? sdp_cont_of(*v) : NULL;
    if (!c || c->type != SDP_DICT) return NULL;
    size_t n = strlen(key);
    for (uint32_t i = c->n; i-- > 0;) /* later keys win, as in Python */
        if (sdp_str_eq(*sdp_dict_key(c, i), key, n)) return sdp_dict_val(c, i);
    return NULL;
}

uint64_t sd_value_offset(const sd_value *v)
{
    const sdp_cont *c = v ? sdp_cont_of(*v) : NULL;
    return c ? c->offset : 0;
}

const void *sd_value_identity(const sd_value *v)
{
    return sdp_is_ptr(*v) ? (const void *)(uintptr_t)v->bits : (const void *)v;
}

const char *sdp_opcode_name(uint8_t op)
{
    switch (op) {
#define N(x) case SDP_OP_##x: return #x;
    N(MARK) N(STOP) N(POP) N(POP_MARK) N(DUP) N(FLOAT) N(INT) N(BININT) N(BININT1) N(LONG)
    N(BININT2) N(NONE) N(PERSID) N(BINPERSID) N(REDUCE) N(STRING) N(BINSTRING)
    N(SHORT_BINSTRING) N(UNICODE) N(BINUNICODE) N(APPEND) N(BUILD) N(GLOBAL) N(DICT)
    N(EMPTY_DICT) N(APPENDS) N(GET) N(BINGET) N(INST) N(LONG_BINGET) N(LIST) N(EMPTY_LIST)
    N(OBJ) N(PUT) N(BINPUT) N(LONG_BINPUT) N(SETITEM) N(TUPLE) N(EMPTY_TUPLE) N(SETITEMS)
    N(BINFLOAT) N(PROTO) N(NEWOBJ) N(EXT1) N(EXT2) N(EXT4) N(TUPLE1) N(TUPLE2) N(TUPLE3)
    N(NEWTRUE) N(NEWFALSE) N(LONG1) N(LONG4) N(BINBYTES) N(SHORT_BINBYTES)
    N(SHORT_BINUNICODE) N(BINUNICODE8) N(BINBYTES8) N(EMPTY_SET) N(ADDITEMS) N(FROZENSET)
    N(NEWOBJ_EX) N(STACK_GLOBAL) N(MEMOIZE) N(FRAME) N(BYTEARRAY8) N(NEXT_BUFFER)
    N(READONLY_BUFFER)
#undef N
    }
    return "unknown";
}

bool sdp_opcode_refused(uint8_t op)
{
    switch (op) {
    case SDP_OP_GLOBAL: case SDP_OP_STACK_GLOBAL: case SDP_OP_REDUCE: case SDP_OP_BUILD: case SDP_OP_INST:
    case SDP_OP_OBJ: case SDP_OP_NEWOBJ: case SDP_OP_NEWOBJ_EX: case SDP_OP_EXT1: case SDP_OP_EXT2: case SDP_OP_EXT4:
    case SDP_OP_PERSID: case SDP_OP_BINPERSID: case SDP_OP_NEXT_BUFFER: case SDP_OP_READONLY_BUFFER:
        return true;
    }
    return false;
}
