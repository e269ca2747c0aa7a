/* pprof.c - the profile as pprof's gzipped profile.proto, for `pprof -http`, `-top`,
 * `-focus` and `-diff_base`.
 *
 * One sample per stack (native noise frames dropped, as in the folded output; stacks that read
 * the same after that are merged), with two values: space/bytes and objects/count. With
 * one side that is the live memory; with two, the growth (to minus from) of the stacks
 * whose bytes grew. Frames go innermost first, as pprof expects; each distinct
 * (file, function) is a Function and each (function, line) a Location. Filenames are
 * written in full (pprof's -focus and source views want them); an autograd node or ATen
 * op frame is named by its label ("autograd DivBackward0", "aten::bmm"), as every view
 * names it.
 *
 * The few protobuf messages are encoded by hand (field numbers from pprof's
 * proto/profile.proto) and deflated with zlib's gzip wrapper. Nothing else is needed.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/base.h"
#include "render/diff_render.h"

/* ---- interned ids: hashing ---- */

static uint64_t key_hash(const char *s, size_t n)
{
    uint64_t h = sdp_hash_bytes(SDP_HASH_SEED, s, n);
    return h ^ (h >> 31);
}

/* ---- interned ids: strings, functions, locations ----
 * One table type for all three: a record is up to three 64-bit fields (a string's are
 * its arena pointer and length), ids are the record's index + 1 (pprof's ids start at 1,
 * and string 0 must be ""). */
typedef struct rec { uint64_t a, b, c, hash; } rec;
typedef struct rec_table {
    rec *r;
    size_t n, cap;
    sdp_htab index;
    sdp_arena *arena;
    bool is_string;
} rec_table;

static uint64_t rec_hash_of(const void *ctx, uint32_t id)
{
    return ((const rec_table *)ctx)->r[id].hash;
}

static bool rec_equal(const rec_table *t, const rec *x, const rec *y)
{
    if (x->hash != y->hash) return false;
    if (!t->is_string) return x->a == y->a && x->b == y->b && x->c == y->c;
    return x->b == y->b &&
           memcmp((const char *)(uintptr_t)x->a, (const char *)(uintptr_t)y->a, x->b) == 0;
}

/* The index (0-based) of the record, added when new; UINT64_MAX when out of memory. */
static uint64_t rec_intern(rec_table *t, rec want)
{
    for (size_t j = sdp_htab_first(&t->index, want.hash); t->index.slots[j];
         j = sdp_htab_next(&t->index, j))
        if (rec_equal(t, &t->r[t->index.slots[j] - 1], &want)) return t->index.slots[j] - 1;
    if (sdp_htab_reserve_one(&t->index, rec_hash_of, t) ||
        sdp_grow((void **)&t->r, &t->cap, t->n + 1, sizeof *t->r, t->arena))
        return UINT64_MAX;
    if (t->is_string) {
        char *copy = sdp_arena_strndup(t->arena, (const char *)(uintptr_t)want.a, want.b);
        if (!copy) return UINT64_MAX;
        want.a = (uint64_t)(uintptr_t)copy;
    }
    t->r[t->n] = want;
    size_t j = sdp_htab_first(&t->index, want.hash);
    while (t->index.slots[j]) j = sdp_htab_next(&t->index, j);
    sdp_htab_put(&t->index, j, (uint32_t)t->n);
    return t->n++;
}

static uint64_t string_id(rec_table *strings, const char *s, size_t n)
{
    rec r = {(uint64_t)(uintptr_t)s, n, 0, key_hash(s, n)};
    return rec_intern(strings, r);
}

static uint64_t triple_id(rec_table *t, uint64_t a, uint64_t b, uint64_t c)
{
    rec r = {a, b, c, 0};
    r.hash = sdp_hash_mix(sdp_hash_mix(sdp_hash_mix(SDP_HASH_SEED, a), b), c);
    r.hash ^= r.hash >> 31;
    return rec_intern(t, r);
}

/* ---- protobuf wire format ---- */
enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

static void pb_varint(sdp_sbuf *b, uint64_t v)
{
    char buf[10];
    size_t n = 0;
    do {
        buf[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    sdp_sbuf_put(b, buf, n);
}

static void pb_tag(sdp_sbuf *b, unsigned field, unsigned wire)
{
    pb_varint(b, (uint64_t)field << 3 | wire);
}

static void pb_uint(sdp_sbuf *b, unsigned field, uint64_t v)
{
    if (!v) return;   /* proto3: zero is the default and is not written */
    pb_tag(b, field, WIRE_VARINT);
    pb_varint(b, v);
}

static void pb_bytes(sdp_sbuf *b, unsigned field, const char *p, size_t n)
{
    pb_tag(b, field, WIRE_LEN);
    pb_varint(b, n);
    sdp_sbuf_put(b, p, n);
}

/* A nested message: `m` holds its encoding. */
static void pb_message(sdp_sbuf *b, unsigned field, sdp_sbuf *m)
{
    pb_bytes(b, field, m->p ? m->p : "", m->len);
}

/* Profile field numbers (pprof's profile.proto). */
enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5,
    PROFILE_STRING_TABLE = 6, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
    PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2,
    LOCATION_ID = 1, LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1, LINE_LINE = 2,
    FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

typedef struct encoder {
    sdp_sbuf out;            /* the Profile message */
    sdp_sbuf msg, sub;       /* scratch for nested messages */
    rec_table strings;       /* a: text, b: length */
    rec_table functions;     /* a: name string, b: filename string */
    rec_table locations;     /* a: function index, b: line */
    bool failed;
} encoder;

static uint64_t str(encoder *e, const char *s)
{
    uint64_t id = string_id(&e->strings, s, strlen(s));
    if (id == UINT64_MAX) e->failed = true;
    return id;
}

static void value_type(encoder *e, unsigned field, const char *type, const char *unit)
{
    sdp_sbuf_reset(&e->msg);
    pb_uint(&e->msg, VALUE_TYPE_TYPE, str(e, type));
    pb_uint(&e->msg, VALUE_TYPE_UNIT, str(e, unit));
    pb_message(&e->out, field, &e->msg);
}

/* The location of one "FILE\x1fLINE\x1fNAME" field triple; its 1-based id. */
static uint64_t location(encoder *e, const char *frame, size_t n)
{
    const char *s1 = memchr(frame, '\x1f', n);
    const char *s2 = s1 ? memchr(s1 + 1, '\x1f', (size_t)(frame + n - s1 - 1)) : NULL;
    if (!s2) return 0;   /* cannot happen: stack_key writes both separators */
    uint64_t file = string_id(&e->strings, frame, (size_t)(s1 - frame));
    uint64_t name = string_id(&e->strings, s2 + 1, (size_t)(frame + n - s2 - 1));
    int64_t line = strtoll(s1 + 1, NULL, 10);
    if (file == UINT64_MAX || name == UINT64_MAX) goto oom;
    uint64_t fn = triple_id(&e->functions, name, file, 0);
    if (fn == UINT64_MAX) goto oom;
    uint64_t loc = triple_id(&e->locations, fn, (uint64_t)line, 0);
    if (loc == UINT64_MAX) goto oom;
    return loc + 1;
oom:
    e->failed = true;
    return 0;
}

/* One sample: stack i's frames (profile.h, SD_STACKS_FRAMES: innermost first, each
 * "FILE\x1fLINE\x1fNAME\x1e"), its bytes and blocks. */
static void sample(encoder *e, const sd_stacks *st, size_t i)
{
    size_t len = 0;
    const char *key = sd_stacks_key(st, i, &len);
    sdp_sbuf_reset(&e->sub);   /* the packed location ids */
    for (const char *p = key, *end = key + len; p < end;) {
        const char *stop = memchr(p, '\x1e', (size_t)(end - p));
        if (!stop) break;
        pb_varint(&e->sub, location(e, p, (size_t)(stop - p)));
        p = stop + 1;
    }
    sdp_sbuf_reset(&e->msg);
    pb_message(&e->msg, SAMPLE_LOCATION_ID, &e->sub);
    sdp_sbuf_reset(&e->sub);
    pb_varint(&e->sub, (uint64_t)sd_stacks_bytes(st, i));
    pb_varint(&e->sub, (uint64_t)sd_stacks_blocks(st, i));   /* two's complement, as int64 wants */
    pb_message(&e->msg, SAMPLE_VALUE, &e->sub);
    pb_message(&e->out, PROFILE_SAMPLE, &e->msg);
}

static void functions_and_locations(encoder *e)
{
    for (size_t i = 0; i < e->functions.n; i++) {
        sdp_sbuf_reset(&e->msg);
        pb_uint(&e->msg, FUNCTION_ID, i + 1);
        pb_uint(&e->msg, FUNCTION_NAME, e->functions.r[i].a);
        pb_uint(&e->msg, FUNCTION_SYSTEM_NAME, e->functions.r[i].a);
        pb_uint(&e->msg, FUNCTION_FILENAME, e->functions.r[i].b);
        pb_message(&e->out, PROFILE_FUNCTION, &e->msg);
    }
    for (size_t i = 0; i < e->locations.n; i++) {
        sdp_sbuf_reset(&e->sub);
        pb_uint(&e->sub, LINE_FUNCTION_ID, e->locations.r[i].a + 1);
        pb_uint(&e->sub, LINE_LINE, e->locations.r[i].b);
        sdp_sbuf_reset(&e->msg);
        pb_uint(&e->msg, LOCATION_ID, i + 1);
        pb_message(&e->msg, LOCATION_LINE, &e->sub);
        pb_message(&e->out, PROFILE_LOCATION, &e->msg);
    }
    /* The string table last: every string is known by now. */
    for (size_t i = 0; i < e->strings.n; i++)
        pb_bytes(&e->out, PROFILE_STRING_TABLE, (const char *)(uintptr_t)e->strings.r[i].a,
                 e->strings.r[i].b);
}

static void encode(encoder *e, const sd_stacks *st)
{
    bool growth = sd_stacks_growth(st);
    str(e, "");   /* string 0 */
    value_type(e, PROFILE_SAMPLE_TYPE, "space", "bytes");
    value_type(e, PROFILE_SAMPLE_TYPE, "objects", "count");
    for (size_t i = 0; i < sd_stacks_count(st); i++) sample(e, st, i);
    value_type(e, PROFILE_PERIOD_TYPE, "space", "bytes");
    pb_uint(&e->out, PROFILE_PERIOD, 1);
    pb_uint(&e->out, PROFILE_COMMENT,
            str(e, growth ? "snapdiff: growth of live CUDA memory (new minus old)"
                          : "snapdiff: live CUDA memory (allocated blocks)"));
    pb_uint(&e->out, PROFILE_DEFAULT_SAMPLE_TYPE, str(e, "space"));
    functions_and_locations(e);
    if (e->out.failed || e->msg.failed || e->sub.failed) e->failed = true;
}

/* gzip (zlib's wrapper, window bits 15 + 16) of data to out. */
static sd_status gzip_write(FILE *out, const void *data, size_t len, sd_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK)
        return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory for gzip");
    unsigned char buf[1 << 15];
    const unsigned char *p = data;
    size_t left = len;
    int rc;
    do {
        uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
        z.next_in = (unsigned char *)(uintptr_t)p;
        z.avail_in = chunk;
        p += chunk;
        left -= chunk;
        int flush = left ? Z_NO_FLUSH : Z_FINISH;
        do {
            z.next_out = buf;
            z.avail_out = sizeof buf;
            rc = deflate(&z, flush);
            size_t have = sizeof buf - z.avail_out;
            if (have && fwrite(buf, 1, have, out) != have) rc = Z_ERRNO;
        } while (rc == Z_OK && z.avail_out == 0);
    } while (rc == Z_OK && left);
    deflateEnd(&z);
    if (rc != Z_STREAM_END || fflush(out) || ferror(out))
        return sdp_fail(err, SD_EIO, SD_NO_OFFSET, "error writing the profile");
    return SD_OK;
}

static bool tables_init(encoder *e, sdp_arena *arena)
{
    e->strings = (rec_table){.arena = arena, .is_string = true};
    e->functions = (rec_table){.arena = arena};
    e->locations = (rec_table){.arena = arena};
    return sdp_htab_init(&e->strings.index, 1024, arena) == SD_OK &&
           sdp_htab_init(&e->functions.index, 1024, arena) == SD_OK &&
           sdp_htab_init(&e->locations.index, 1024, arena) == SD_OK;
}

static void tables_free(encoder *e)
{
    rec_table *t[] = {&e->strings, &e->functions, &e->locations};
    for (size_t i = 0; i < SDP_ARRAY_LEN(t); i++) {
        free(t[i]->r);
        sdp_htab_free(&t[i]->index);
    }
    sdp_sbuf_free(&e->out);
    sdp_sbuf_free(&e->msg);
    sdp_sbuf_free(&e->sub);
}

/* One sample per merged stack (the analysis's, profile.h: those that grew, or with no
 * `from` side every live one), in key order. */
sd_status sd_render_diff_pprof(FILE *out, const sd_stacks *st, uint64_t max_memory,
                               sd_error *err)
{
    sd_error_clear(err);
    if (!out || !st || sd_stacks_form_of(st) != SD_STACKS_FRAMES)
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                        "pprof output: needs stacks merged as SD_STACKS_FRAMES");
    sdp_arena arena;
    sdp_arena_init(&arena, max_memory);
    encoder e = {0};
    bool ok = tables_init(&e, &arena);
    if (ok) {
        encode(&e, st);
        ok = !e.failed;
    }
    sd_status status = ok ? gzip_write(out, e.out.p ? e.out.p : "", e.out.len, err)
                          : sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory for the profile");
    tables_free(&e);
    sdp_arena_free(&arena);
    return status;
}
