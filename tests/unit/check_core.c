/* check_core.c - unit tests of libsnapdiff's foundation: units, the pickle reader, the
 * model, inputs. Tables of {bytes, expected} where the expectation was worked out by hand
 * from the pickle opcode reference (CPython Lib/pickletools.py) or checked with CPython
 * (`pickle.loads` of the same bytes), as noted per table. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include "snapdiff/pickle.h"
#include "snapdiff/snapshot.h"
#include "snapdiff/source.h"
#include "snapdiff/stats.h"
#include "snapdiff/units.h"

#include "check_helpers.h"

#define LEN SDP_TEST_LEN

/* ---------------- units ---------------- */

static const struct { uint64_t bytes; const char *text; } format_cases[] = {
    {0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
    {1048576, "1.0 MiB"}, {3ull << 30, "3.0 GiB"}, {1048575, "1.0 MiB"},
    {(5ull << 40) / 2, "2.5 TiB"},
};

START_TEST(format_bytes)
{
    char buf[32];
    sd_format_bytes(format_cases[_i].bytes, buf, sizeof buf);
    ck_assert_str_eq(buf, format_cases[_i].text);
}
END_TEST

static const struct { const char *text; bool ok; uint64_t bytes; } parse_cases[] = {
    {"80GiB", true, 80ull << 30}, {"80 GiB", true, 80ull << 30}, {"1.5GB", true, 1500000000ull},
    {"512MiB", true, 512ull << 20}, {"512mb", true, 512000000ull}, {"4096", true, 4096},
    {"2k", true, 2048}, {"1KiB", true, 1024}, {"1KB", true, 1000}, {"", false, 0},
    {"GiB", false, 0}, {"-1GiB", false, 0}, {"12 parsecs", false, 0}, {"1e30GiB", false, 0},
};

START_TEST(parse_size)
{
    uint64_t v = 0;
    bool ok = sd_parse_size(parse_cases[_i].text, &v);
    ck_assert_msg(ok == parse_cases[_i].ok, "'%s'", parse_cases[_i].text);
    if (ok) ck_assert_uint_eq(v, parse_cases[_i].bytes);
}
END_TEST

START_TEST(format_delta)
{
    char buf[32];
    sd_format_delta(-1536, buf, sizeof buf);
    ck_assert_str_eq(buf, "-1.5 KiB");
    sd_format_delta(2048, buf, sizeof buf);
    ck_assert_str_eq(buf, "+2.0 KiB");
    sd_format_delta(0, buf, sizeof buf);
    ck_assert_str_eq(buf, "0 B");
}
END_TEST

/* ---------------- pickle: values ---------------- */

static sd_pickle *parse(const char *bytes, size_t n, sd_error *err)
{
    sd_error_clear(err);
    return sd_pickle_parse((const uint8_t *)bytes, n, NULL, err);
}

#define P(lit) lit, sizeof(lit) - 1

/* Integers: expectations from pickle.loads of the same bytes. */
static const struct { const char *bytes; size_t n; } int_cases[] = {
    {P("K\x05.")}, /* BININT1 */
    {P("M\x34\x12.")},
    {P("J\xff\xff\xff\xff.")},            /* BININT -1 */
    {P("\x8a\x00.")},                     /* LONG1 0 bytes: 0 */
    {P("\x8a\x06\x00\x00\x00\x40\x3a\x7f.")}, /* an address: 139888158572544 */
    {P("\x8a\x01\xff.")},                 /* LONG1 -1 */
    {P("\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f.")}, /* INT64_MAX */
    {P("\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\xff.")}, /* INT64_MIN in 9 bytes */
    {P("\x8b\x02\x00\x00\x00\x00\x01.")}, /* LONG4 256 */
    {P("I123\n.")}, {P("L-77L\n.")}, {P("I-9\n.")},
};
static const int64_t int_want[] = {5, 0x1234, -1, 0, 139888158572544LL, -1, INT64_MAX,
                                   INT64_MIN, 256, 123, -77, -9};

START_TEST(pickle_ints)
{
    sd_error err;
    sd_pickle *p = parse(int_cases[_i].bytes, int_cases[_i].n, &err);
    ck_assert_msg(p != NULL, "case %d: %s", _i, err.text);
    ck_assert_int_eq(sd_value_type_of(sd_pickle_root(p)), SD_VALUE_INT);
    ck_assert_int_eq(sd_value_int(sd_pickle_root(p)), int_want[_i]);
    sd_pickle_free(p);
}
END_TEST

START_TEST(pickle_bigint_and_float)
{
    sd_error err;
    /* 2**64 as LONG1: 9 bytes 00..00 01 */
    sd_pickle *p = parse(P("\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01."), &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(sd_value_type_of(sd_pickle_root(p)), SD_VALUE_BIGINT);
    size_t n;
    const char *b = sd_value_bytes(sd_pickle_root(p), &n);
    ck_assert_uint_eq(n, 9);
    ck_assert_int_eq((unsigned char)b[8], 1);
    sd_pickle_free(p);
    /* BINFLOAT is big-endian: 1.5 = 3ff8000000000000 */
    p = parse(P("G\x3f\xf8\x00\x00\x00\x00\x00\x00."), &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_double_eq(sd_value_float(sd_pickle_root(p)), 1.5);
    sd_pickle_free(p);
    p = parse(P("F0.25\n."), &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_double_eq(sd_value_float(sd_pickle_root(p)), 0.25);
    sd_pickle_free(p);
}
END_TEST

/* Strings in each encoding; expectations from pickle.loads. */
static const struct { const char *bytes; size_t n; const char *want; } str_cases[] = {
    {P("\x8c\x03" "abc."), "abc"},
    {P("X\x02\x00\x00\x00hi."), "hi"},
    {P("\x8d\x01\x00\x00\x00\x00\x00\x00\x00z."), "z"},
    {P("Vcaf\\u00e9\n."), "caf" "\xc3\xa9"},
    {P("S'a\\'b'\n."), "a'b"},
    {P("U\x02ok."), "ok"},
    {P("\x8c\x02\xc3\xa9."), "\xc3\xa9"},
    {P("\x8c\x00."), ""},
};

START_TEST(pickle_strings)
{
    sd_error err;
    sd_pickle *p = parse(str_cases[_i].bytes, str_cases[_i].n, &err);
    ck_assert_msg(p != NULL, "case %d: %s", _i, err.text);
    size_t n;
    const char *s = sd_value_bytes(sd_pickle_root(p), &n);
    ck_assert_int_eq(sd_value_type_of(sd_pickle_root(p)), SD_VALUE_STR);
    ck_assert_uint_eq(n, strlen(str_cases[_i].want));
    ck_assert(memcmp(s, str_cases[_i].want, n) == 0);
    sd_pickle_free(p);
}
END_TEST

START_TEST(pickle_containers_and_memo)
{
    /* pickle.dumps({'a': [1, 2], 'b': ('x', 'x')}, 4) with the memo reused: the two 'x'
     * share one object, and the list appears twice through BINGET. Hand-assembled:
     * { 'a': L, 'b': (s, s), 'c': L } */
    static const char bytes[] =
        "\x80\x04}\x94(\x8c\x01" "a\x94]\x94(K\x01K\x02" "e\x8c\x01" "b\x94\x8c\x01x\x94h\x04\x86\x94"
        "\x8c\x01" "ch\x02u.";
    sd_error err;
    sd_pickle *p = parse(bytes, sizeof bytes - 1, &err);
    ck_assert_msg(p != NULL, "%s", err.text);
    const sd_value *root = sd_pickle_root(p);
    ck_assert_int_eq(sd_value_type_of(root), SD_VALUE_DICT);
    ck_assert_uint_eq(sd_value_len(root), 3);
    const sd_value *a = sd_value_dict_get(root, "a"), *c = sd_value_dict_get(root, "c");
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(sd_value_len(a), 2);
    ck_assert_int_eq(sd_value_int(sd_value_item(a, 1)), 2);
    ck_assert_ptr_eq(sd_value_identity(a), sd_value_identity(c)); /* shared, not copied */
    const sd_value *b = sd_value_dict_get(root, "b");
    ck_assert_int_eq(sd_value_type_of(b), SD_VALUE_TUPLE);
    ck_assert_ptr_eq(sd_value_identity(sd_value_item(b, 0)), sd_value_identity(sd_value_item(b, 1)));
    ck_assert_int_eq(sd_pickle_protocol(p), 4);
    sd_pickle_free(p);
}
END_TEST

START_TEST(pickle_trailing_bytes_after_stop)
{
    sd_error err;
    sd_pickle *p = parse(P("K\x01.\x00\x00\x00"), &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(sd_pickle_trailing(p), 3);
    sd_pickle_free(p);
}
END_TEST

/* ---------------- pickle: errors ---------------- */

/* Each case: bytes, expected status, expected offset (of the failing opcode), and a word
 * the message must contain. Offsets worked out by hand. */
static const struct {
    const char *bytes; size_t n; sd_status code; uint64_t offset; const char *word;
} err_cases[] = {
    {P(""), SD_ETRUNC, 0, "empty"},
    {P("\x80\x04"), SD_ETRUNC, 2, "truncated"},
    {P("\x80\x04]"), SD_ETRUNC, 3, "truncated"},
    {P("X\xff\x00\x00\x00ab."), SD_ETRUNC, 0, "claims"},
    {P("h\x05."), SD_EFORMAT, 0, "never set"},
    {P("cposix\nsystem\n."), SD_EREFUSED, 0, "posix.system"},
    {P("\x80\x04\x8c\x02os\x8c\x06system\x93."), SD_EREFUSED, 14, "STACK_GLOBAL"},
    {P("K\x01K\x02R."), SD_EREFUSED, 4, "REDUCE"},
    {P("Pabc\n."), SD_EREFUSED, 0, "persistent"},
    {P("\x80\x06K\x01."), SD_EFORMAT, 0, "protocol 6"},
    {P("\xff."), SD_EFORMAT, 0, "unknown opcode"},
    {P("."), SD_EFORMAT, 0, "empty stack"},
    {P("]K\x01K\x02s."), SD_EFORMAT, 5, "SETITEM on a list"},
    {P("}K\x01" "a."), SD_EFORMAT, 3, "APPEND on a dict"},
    {P("K\x01K\x02u."), SD_EFORMAT, 4, "MARK"},
    {P("\x8c\x02\xc3\x28."), SD_EFORMAT, 0, "UTF-8"},
    {P("\x8d\x00\x00\x00\x00\x00\x00\x00\x10."), SD_ETRUNC, 0, "claims"},
    {P("\x8b\x00\x00\x00\x10."), SD_ETRUNC, 0, "claims"},
    {P("\x95\xff\x00\x00\x00\x00\x00\x00\x00K\x01."), SD_ETRUNC, 0, "FRAME"},
    {P("K\x01r\x00\x00\x00\x80."), SD_ELIMIT, 2, "memo index"},
    {P("\x97."), SD_EREFUSED, 0, "NEXT_BUFFER"},
    {P("0."), SD_EFORMAT, 0, "POP"},
};

START_TEST(pickle_errors)
{
    sd_error err;
    sd_pickle *p = parse(err_cases[_i].bytes, err_cases[_i].n, &err);
    ck_assert_msg(p == NULL, "case %d parsed", _i);
    ck_assert_msg(err.code == err_cases[_i].code, "case %d: code %s (%s)", _i,
                  sd_status_name(err.code), err.text);
    ck_assert_msg(err.offset == err_cases[_i].offset, "case %d: offset %llu (%s)", _i,
                  (unsigned long long)err.offset, err.text);
    ck_assert_msg(strstr(err.text, err_cases[_i].word) != NULL, "case %d: '%s' lacks '%s'", _i,
                  err.text, err_cases[_i].word);
}
END_TEST

START_TEST(pickle_memory_budget)
{
    /* A list of 100000 DUPs of an int: fine unbudgeted, refused under a 64 KiB budget. */
    size_t n = 100000;
    char *b = malloc(n + 8);
    size_t k = 0;
    b[k++] = '(';
    b[k++] = 'K';
    b[k++] = 1;
    for (size_t i = 0; i < n - 8; i++) b[k++] = '2';
    b[k++] = 'l';
    b[k++] = '.';
    sd_error err;
    sd_error_clear(&err);
    sd_pickle_options small = {.max_memory = 64 * 1024};
    sd_pickle *p = sd_pickle_parse((uint8_t *)b, k, &small, &err);
    ck_assert_ptr_null(p);
    ck_assert_int_eq(err.code, SD_ENOMEM);
    sd_error_clear(&err);
    p = sd_pickle_parse((uint8_t *)b, k, NULL, &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(sd_value_len(sd_pickle_root(p)), n - 7);
    sd_pickle_free(p);
    free(b);
}
END_TEST

START_TEST(json_dump_shapes)
{
    /* {'k': (1, b'\x00\xff', None, True, 1.5, 2**64)} -> JSON as json.dumps would see it,
     * with bytes as base64 ("AP8=" for 00 ff). */
    static const char bytes[] =
        "\x80\x04}\x8c\x01k(K\x01" "C\x02\x00\xff" "N\x88G\x3f\xf8\x00\x00\x00\x00\x00\x00"
        "\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01ts.";
    sd_error err;
    sd_pickle *p = parse(bytes, sizeof bytes - 1, &err);
    ck_assert_msg(p != NULL, "%s", err.text);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    ck_assert_int_eq(sd_value_write_json(sd_pickle_root(p), f, 1000, &err), SD_OK);
    fclose(f);
    ck_assert_str_eq(out, "{\"k\":[1,\"AP8=\",null,true,1.5,18446744073709551616]}\n");
    free(out);
    sd_pickle_free(p);
}
END_TEST

START_TEST(json_dump_refuses_cycles_and_blowup)
{
    /* L = []; L.append(L): a cycle through the memo. */
    sd_error err;
    sd_pickle *p = parse(P("]q\x00h\x00" "a."), &err);
    ck_assert_ptr_nonnull(p);
    FILE *f = fopen("/dev/null", "w");
    sd_error_clear(&err);
    ck_assert_int_eq(sd_value_write_json(sd_pickle_root(p), f, 1u << 30, &err), SD_ELIMIT);
    ck_assert_ptr_nonnull(strstr(err.text, "cycle"));
    sd_pickle_free(p);
    /* Doubling lists 40 deep: 2^40 values if expanded; the node budget stops it. */
    char buf[512];
    size_t k = 0;
    buf[k++] = ']';
    for (int i = 0; i < 40; i++) {
        buf[k++] = '2'; /* DUP */
        buf[k++] = '\x86'; /* TUPLE2 */
    }
    buf[k++] = '.';
    p = parse(buf, k, &err);
    ck_assert_ptr_nonnull(p);
    sd_error_clear(&err);
    ck_assert_int_eq(sd_value_write_json(sd_pickle_root(p), f, 100000, &err), SD_ELIMIT);
    fclose(f);
    sd_pickle_free(p);
}
END_TEST

/* ---------------- model ---------------- */

/* Fixture bytes straight from CPython, so the expectations are Python's own: pickled at
 * build time by tests/unit/make_unit_fixtures.py (the function of the same name there). */
static sd_snapshot *load_fixture(const char *name, sd_error *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.pickle", SNAPDIFF_UNIT_FIXTURES, name);
    return sdp_test_load(path, "test", err);
}

START_TEST(model_legacy_list_addresses_and_history)
{
    /* torch 1.13 list layout: no block addresses, requested size from history. */
    sd_error err;
    sd_snapshot *s = load_fixture("legacy_list", &err);
    ck_assert_msg(s != NULL, "%s", err.text);
    ck_assert(sd_snapshot_is_legacy_list(s));
    const sd_cuda_device *d = sd_snapshot_device(s, 0);
    ck_assert_uint_eq(d->n_blocks, 3);
    ck_assert_uint_eq(d->blocks[1].address, 4096 + 1024);
    ck_assert_uint_eq(d->blocks[2].address, 4096 + 1536);
    ck_assert_uint_eq(d->blocks[0].requested_size, 1000);
    ck_assert_uint_eq(d->blocks[1].requested_size, 512);
    /* Equal frames in separate objects are one interned stack. */
    ck_assert_uint_ne(d->blocks[0].stack, 0);
    ck_assert_uint_eq(d->blocks[0].stack, d->blocks[2].stack);
    size_t nf;
    const uint32_t *fr = sd_snapshot_stack(s, d->blocks[0].stack, &nf);
    ck_assert_uint_eq(nf, 1);
    ck_assert_str_eq(sd_snapshot_frame(s, fr[0])->filename, "/src/train.py");
    ck_assert_int_eq(sd_snapshot_frame(s, fr[0])->line, 88);
    sd_stats st;
    sd_stats_total(s, &st);
    ck_assert_uint_eq(st.allocated_bytes, 2560);
    ck_assert_uint_eq(st.requested_bytes, 2500);
    ck_assert_uint_eq(st.inactive_bytes, 512);
    ck_assert_uint_eq(sd_snapshot_warning_count(s), 0);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(model_dict_devices_traces_settings)
{
    sd_error err;
    sd_snapshot *s = load_fixture("dict_devices", &err);
    ck_assert_msg(s != NULL, "%s", err.text);
    ck_assert_uint_eq(sd_snapshot_device_count(s), 2);
    const sd_cuda_device *d0 = sd_snapshot_device(s, 0), *d1 = sd_snapshot_device(s, 1);
    ck_assert_int_eq(d0->device, 0);
    ck_assert_int_eq(d1->device, 1);
    ck_assert_uint_eq(d1->n_trace, 2);
    ck_assert_int_eq(d1->trace[1].action, SD_ACT_OOM);
    ck_assert_uint_eq(d1->trace[1].device_free, 7);
    ck_assert_int_eq(d1->trace[1].time_us, 30);
    ck_assert(d0->segments[0].is_small);
    const sd_allocator_settings *a = sd_snapshot_allocator_settings(s);
    ck_assert(a->present && a->expandable_segments && a->max_split_size == -1);
    sd_stats st;
    sd_stats_device(d1, &st);
    ck_assert_uint_eq(st.pending_free_bytes, 2048);
    ck_assert_uint_eq(st.active_bytes, 2048);
    ck_assert_uint_eq(st.allocated_bytes, 0);
    uint64_t by[SD_ACT_COUNT + 2];
    memset(by, 0xff, sizeof by);
    sd_stats_device_actions(d1, by, SD_ACT_COUNT + 2);   /* a caller that knows 2 more */
    ck_assert_uint_eq(by[SD_ACT_OOM], 1);
    ck_assert_uint_eq(by[SD_ACT_COUNT], 0);
    ck_assert_uint_eq(by[SD_ACT_COUNT + 1], 0);
    uint64_t first[2] = {7, 7}, total[SD_ACT_COUNT];
    sd_stats_device_actions(d1, first, 1);               /* one that knows fewer */
    ck_assert_uint_eq(first[1], 7);
    sd_stats_total_actions(s, total, SD_ACT_COUNT);
    ck_assert_uint_eq(total[SD_ACT_OOM], 1);
    ck_assert_uint_eq(first[0], by[SD_ACT_ALLOC]);
    uint64_t sum = 0;
    for (int k = 0; k < SD_ACT_COUNT; k++) {
        ck_assert_uint_ge(total[k], by[k]);
        sum += by[k];
    }
    ck_assert_uint_eq(sum, d1->n_trace);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(model_inconsistencies)
{
    sd_error err;
    /* Blocks that do not tile the segment: a warning naming the segment, load goes on. */
    sd_snapshot *s = load_fixture("bad_tiling", &err);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(sd_snapshot_warning_count(s), 1);
    ck_assert_ptr_nonnull(strstr(sd_snapshot_warning(s, 0), "0x1000"));
    sd_snapshot_free(s);
    /* A negative size: an error naming the key. */
    s = load_fixture("negative_size", &err);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(err.code, SD_ESNAPSHOT);
    ck_assert_ptr_nonnull(strstr(err.text, "negative"));
    /* Not a snapshot at all. */
    s = load_fixture("not_a_snapshot", &err);
    ck_assert_ptr_null(s);
    ck_assert_ptr_nonnull(strstr(err.text, "not a memory snapshot"));
}
END_TEST

/* ---------------- inputs ---------------- */

/* Raw deflate of `chunks` MiB of zeros, made from one repeated full-flush block so that
 * 10 GiB of output costs ~10 MB and milliseconds to build (as tests/cli/hostile does). */
static uint8_t *deflate_zeros(size_t chunks, size_t *len)
{
    static uint8_t zeros[1 << 20];
    uint8_t *block[3];
    size_t block_len[3];
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    ck_assert_int_eq(deflateInit2(&zs, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
    for (int i = 0; i < 3; i++) {
        block[i] = malloc(1 << 16);
        zs.next_in = zeros;
        zs.avail_in = sizeof zeros;
        zs.next_out = block[i];
        zs.avail_out = 1 << 16;
        ck_assert_int_eq(deflate(&zs, i < 2 ? Z_FULL_FLUSH : Z_FINISH), i < 2 ? Z_OK : Z_STREAM_END);
        ck_assert_uint_eq(zs.avail_in, 0);
        block_len[i] = (1 << 16) - zs.avail_out;
    }
    deflateEnd(&zs);
    /* block 0 opens the stream, block 1 repeats (history is reset at each full flush),
     * block 2 is one more MiB and the final block */
    *len = block_len[0] + (chunks - 2) * block_len[1] + block_len[2];
    uint8_t *out = malloc(*len), *p = out;
    memcpy(p, block[0], block_len[0]);
    p += block_len[0];
    for (size_t i = 0; i < chunks - 2; i++, p += block_len[1]) memcpy(p, block[1], block_len[1]);
    memcpy(p, block[2], block_len[2]);
    for (int i = 0; i < 3; i++) free(block[i]);
    return out;
}

/* A gzip file of `mib` MiB of zeros whose trailer claims `claim` bytes (the CRC is left
 * zero: every use refuses the file before its end). */
static char *write_gzip_zeros(size_t mib, uint32_t claim)
{
    size_t dlen;
    uint8_t *deflated = deflate_zeros(mib, &dlen);
    size_t n = 10 + dlen + 8;
    uint8_t *gz = malloc(n);
    static const uint8_t header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    memcpy(gz, header, 10);
    memcpy(gz + 10, deflated, dlen);
    uint8_t trailer[8] = {0, 0, 0, 0, (uint8_t)claim, (uint8_t)(claim >> 8),
                          (uint8_t)(claim >> 16), (uint8_t)(claim >> 24)};
    memcpy(gz + 10 + dlen, trailer, 8);
    free(deflated);
    char *path = sdp_test_write_temp(gz, n);
    free(gz);
    return path;
}

START_TEST(input_gzip_roundtrip_and_bomb)
{
    static const char pk[] = "\x80\x04]\x94.";
    uLongf cap = compressBound(sizeof pk);
    (void)cap;
    /* gzip via zlib's gz* API */
    char *path = strdup("/tmp/snapdiff-check-gz-XXXXXX");
    int fd = mkstemp(path);
    gzFile g = gzdopen(fd, "wb");
    gzwrite(g, pk, sizeof pk - 1);
    gzclose(g);
    sd_error err;
    sd_error_clear(&err);
    sd_input *in = sd_input_open(path, NULL, &err);
    ck_assert_ptr_nonnull(in);
    sd_bytes b;
    ck_assert_int_eq(sd_input_read(in, 0, &b, &err), SD_OK);
    ck_assert_uint_eq(b.len, sizeof pk - 1);
    ck_assert(memcmp(b.data, pk, b.len) == 0);
    sd_bytes_release(&b);
    sd_input_free(in);
    unlink(path);
    free(path);
    /* 200 MiB of zeros: over the 64 MiB free allowance and 250:1 -> refused while inflating */
    path = write_gzip_zeros(200, 200u << 20);
    sd_error_clear(&err);
    in = sd_input_open(path, NULL, &err);
    ck_assert_ptr_nonnull(in);
    ck_assert_int_eq(sd_input_read(in, 0, &b, &err), SD_ELIMIT);
    ck_assert_ptr_nonnull(strstr(err.text, "bomb"));
    sd_input_free(in);
    unlink(path);
    free(path);
}
END_TEST

static long peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* 10 GiB of zeros in ~10 MB of gzip: refused (over 100:1) at the cap, and without ever
 * holding the output: gunzip commits memory only up to the size it has checked. Its
 * trailer either tells the truth (10 GiB mod 2^32) or claims 1 KiB; neither may cost
 * memory. Before the fix this took 1.3 GB and seconds. */
static const uint32_t bomb_claims[] = {(uint32_t)((10ull << 30) & 0xffffffffu), 1024};

START_TEST(input_gzip_bomb_refused_cheaply)
{
    char *path = write_gzip_zeros(10240, bomb_claims[_i]);

    long before = peak_rss_kib();
    sd_error err;
    sd_error_clear(&err);
    sd_input *in = sd_input_open(path, NULL, &err);
    ck_assert_ptr_nonnull(in);
    sd_bytes b;
    ck_assert_int_eq(sd_input_read(in, 0, &b, &err), SD_ELIMIT);
    ck_assert_ptr_nonnull(strstr(err.text, "bomb"));
    long grown_mib = (peak_rss_kib() - before) / 1024;
    ck_assert_msg(grown_mib < 128, "refusing the bomb took %ld MiB", grown_mib);
    sd_input_free(in);
    unlink(path);
    free(path);
}
END_TEST

/* Two gzip members, as `cat a.gz b.gz` makes: the trailer tells only the last member's
 * size, so gunzip measures the stream, then fills an exact buffer. */
START_TEST(input_gzip_two_members)
{
    static const char pk[] = "\x80\x04]\x94(K\x01K\x02" "e."; /* [1, 2] */
    size_t half = 5, n = 0;
    uint8_t gz[256];
    const char *part[2] = {pk, pk + half};
    size_t part_len[2] = {half, sizeof pk - 1 - half};
    for (int i = 0; i < 2; i++) {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        ck_assert_int_eq(deflateInit2(&zs, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY), Z_OK);
        zs.next_in = (Bytef *)part[i];
        zs.avail_in = (uInt)part_len[i];
        zs.next_out = gz + n;
        zs.avail_out = (uInt)(sizeof gz - n);
        ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
        n = sizeof gz - zs.avail_out;
        deflateEnd(&zs);
    }
    char *path = sdp_test_write_temp(gz, n);
    sd_error err;
    sd_error_clear(&err);
    sd_input *in = sd_input_open(path, NULL, &err);
    ck_assert_ptr_nonnull(in);
    sd_bytes b;
    ck_assert_msg(sd_input_read(in, 0, &b, &err) == SD_OK, "%s", err.text);
    ck_assert_uint_eq(b.len, sizeof pk - 1);
    ck_assert(memcmp(b.data, pk, b.len) == 0);
    sd_bytes_release(&b);
    sd_input_free(in);
    unlink(path);
    free(path);
}
END_TEST

START_TEST(input_missing_and_directory)
{
    sd_error err;
    sd_error_clear(&err);
    ck_assert_ptr_null(sd_input_open("/nonexistent/x.pickle", NULL, &err));
    ck_assert_int_eq(err.code, SD_EIO);
    ck_assert_str_eq(err.source, "/nonexistent/x.pickle");
    static const char pk[] = "\x80\x04]\x94.";
    char *p = sdp_test_write_temp(pk, sizeof pk - 1);
    sd_error_clear(&err);
    sd_input *in = sd_input_open(p, NULL, &err);
    ck_assert_ptr_nonnull(in);
    ck_assert_uint_eq(sd_input_count(in), 1);
    ck_assert_str_eq(sd_input_name(in, 0), p);
    sd_input_free(in);
    unlink(p);
    free(p);
}
END_TEST

static Suite *core_suite(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("units");
    tcase_add_loop_test(tc, format_bytes, 0, LEN(format_cases));
    tcase_add_loop_test(tc, parse_size, 0, LEN(parse_cases));
    tcase_add_test(tc, format_delta);
    suite_add_tcase(s, tc);
    tc = tcase_create("pickle");
    tcase_add_loop_test(tc, pickle_ints, 0, LEN(int_cases));
    tcase_add_test(tc, pickle_bigint_and_float);
    tcase_add_loop_test(tc, pickle_strings, 0, LEN(str_cases));
    tcase_add_test(tc, pickle_containers_and_memo);
    tcase_add_test(tc, pickle_trailing_bytes_after_stop);
    tcase_add_loop_test(tc, pickle_errors, 0, LEN(err_cases));
    tcase_add_test(tc, pickle_memory_budget);
    tcase_add_test(tc, json_dump_shapes);
    tcase_add_test(tc, json_dump_refuses_cycles_and_blowup);
    suite_add_tcase(s, tc);
    tc = tcase_create("model");
    tcase_add_test(tc, model_legacy_list_addresses_and_history);
    tcase_add_test(tc, model_dict_devices_traces_settings);
    tcase_add_test(tc, model_inconsistencies);
    suite_add_tcase(s, tc);
    tc = tcase_create("inputs");
    tcase_add_test(tc, input_gzip_roundtrip_and_bomb);
    tcase_add_loop_test(tc, input_gzip_bomb_refused_cheaply, 0, LEN(bomb_claims));
    tcase_add_test(tc, input_gzip_two_members);
    tcase_add_test(tc, input_missing_and_directory);
    suite_add_tcase(s, tc);
    return s;
}

/* ---------- the model owns what it read: shared objects, typed settings ----------
 * torch shares objects through the pickle memo: a trace entry dict referenced twice, a
 * frames list shared by two entries, and (hostile) an entry that contains itself. The
 * bytes are pickle.dumps(snap, protocol=4) of:
 *   F = [{"name": "inner", "filename": "/m.py", "line": 7},
 *        {"name": "outer", "filename": "/m.py", "line": 3}]
 *   E = {"action": "alloc", "addr": 4096, "size": 512, "stream": 0, "frames": F}
 *   E2 = dict(E, action="free_requested");  S = dict(E, addr=8192, size=64); S["self"] = S
 *   snap = {"segments": [], "device_traces": [[E, E, E2], [S, S]],
 *           "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
 *               "max_split_size": -1, "expandable_segments": True,
 *               "garbage_collection_threshold": 0.5,
 *               "roundup_power2_divisions": {"1": 0, "2": 4, "x": 1},
 *               "nested": {"a": {"b": {"c": {"d": 1}}}}}} */
static const char shared_pickle[] =
    "\x80\x04\x95\xfe\x01\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x08\x73\x65\x67\x6d\x65\x6e\x74\x73"
    "\x94\x5d\x94\x8c\x0d\x64\x65\x76\x69\x63\x65\x5f\x74\x72\x61\x63\x65\x73\x94\x5d\x94\x28\x5d\x94"
    "\x28\x7d\x94\x28\x8c\x06\x61\x63\x74\x69\x6f\x6e\x94\x8c\x05\x61\x6c\x6c\x6f\x63\x94\x8c\x04\x61"
    "\x64\x64\x72\x94\x4d\x00\x10\x8c\x04\x73\x69\x7a\x65\x94\x4d\x00\x02\x8c\x06\x73\x74\x72\x65\x61"
    "\x6d\x94\x4b\x00\x8c\x06\x66\x72\x61\x6d\x65\x73\x94\x5d\x94\x28\x7d\x94\x28\x8c\x04\x6e\x61\x6d"
    "\x65\x94\x8c\x05\x69\x6e\x6e\x65\x72\x94\x8c\x08\x66\x69\x6c\x65\x6e\x61\x6d\x65\x94\x8c\x05\x2f"
    "\x6d\x2e\x70\x79\x94\x8c\x04\x6c\x69\x6e\x65\x94\x4b\x07\x75\x7d\x94\x28\x68\x0f\x8c\x05\x6f\x75"
    "\x74\x65\x72\x94\x68\x11\x68\x12\x68\x13\x4b\x03\x75\x65\x75\x68\x06\x7d\x94\x28\x68\x07\x8c\x0e"
    "\x66\x72\x65\x65\x5f\x72\x65\x71\x75\x65\x73\x74\x65\x64\x94\x68\x09\x4d\x00\x10\x68\x0a\x4d\x00"
    "\x02\x68\x0b\x4b\x00\x68\x0c\x68\x0d\x75\x65\x5d\x94\x28\x7d\x94\x28\x68\x07\x68\x08\x68\x09\x4d"
    "\x00\x20\x68\x0a\x4b\x40\x68\x0b\x4b\x00\x68\x0c\x68\x0d\x8c\x04\x73\x65\x6c\x66\x94\x68\x19\x75"
    "\x68\x19\x65\x65\x8c\x12\x61\x6c\x6c\x6f\x63\x61\x74\x6f\x72\x5f\x73\x65\x74\x74\x69\x6e\x67\x73"
    "\x94\x7d\x94\x28\x8c\x17\x50\x59\x54\x4f\x52\x43\x48\x5f\x43\x55\x44\x41\x5f\x41\x4c\x4c\x4f\x43"
    "\x5f\x43\x4f\x4e\x46\x94\x8c\x18\x65\x78\x70\x61\x6e\x64\x61\x62\x6c\x65\x5f\x73\x65\x67\x6d\x65"
    "\x6e\x74\x73\x3a\x54\x72\x75\x65\x94\x8c\x0e\x6d\x61\x78\x5f\x73\x70\x6c\x69\x74\x5f\x73\x69\x7a"
    "\x65\x94\x4a\xff\xff\xff\xff\x8c\x13\x65\x78\x70\x61\x6e\x64\x61\x62\x6c\x65\x5f\x73\x65\x67\x6d"
    "\x65\x6e\x74\x73\x94\x88\x8c\x1c\x67\x61\x72\x62\x61\x67\x65\x5f\x63\x6f\x6c\x6c\x65\x63\x74\x69"
    "\x6f\x6e\x5f\x74\x68\x72\x65\x73\x68\x6f\x6c\x64\x94\x47\x3f\xe0\x00\x00\x00\x00\x00\x00\x8c\x18"
    "\x72\x6f\x75\x6e\x64\x75\x70\x5f\x70\x6f\x77\x65\x72\x32\x5f\x64\x69\x76\x69\x73\x69\x6f\x6e\x73"
    "\x94\x7d\x94\x28\x8c\x01\x31\x94\x4b\x00\x8c\x01\x32\x94\x4b\x04\x8c\x01\x78\x94\x4b\x01\x75\x8c"
    "\x06\x6e\x65\x73\x74\x65\x64\x94\x7d\x94\x8c\x01\x61\x94\x7d\x94\x8c\x01\x62\x94\x7d\x94\x8c\x01"
    "\x63\x94\x7d\x94\x8c\x01\x64\x94\x4b\x01\x73\x73\x73\x73\x75\x75\x2e";

/* Loaded from a heap copy that is freed before anything is read: under ASan, any pointer
 * the model kept into the input (or into the freed value tree) is a use after free. */
static sd_snapshot *load_shared(void)
{
    size_t n = sizeof shared_pickle - 1;
    uint8_t *copy = malloc(n);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, shared_pickle, n);
    sd_error err;
    sd_error_clear(&err);
    sd_snapshot *s = sd_snapshot_load_buffer(copy, n, "shared", NULL, &err);
    free(copy);
    ck_assert_msg(s != NULL, "%s", err.text);
    return s;
}

static void check_stack_inner_outer(const sd_snapshot *s, uint32_t id)
{
    size_t n = 0;
    const uint32_t *frames = sd_snapshot_stack(s, id, &n);
    ck_assert_uint_eq(n, 2);
    const sd_frame *inner = sd_snapshot_frame(s, frames[0]), *outer = sd_snapshot_frame(s, frames[1]);
    ck_assert_str_eq(inner->name, "inner");
    ck_assert_str_eq(inner->filename, "/m.py");
    ck_assert_int_eq(inner->line, 7);
    ck_assert_str_eq(outer->name, "outer");
    ck_assert_int_eq(outer->line, 3);
    ck_assert_ptr_eq(inner->filename, outer->filename); /* one interned string */
}

START_TEST(model_trace_entry_shared_through_memo)
{
    sd_snapshot *s = load_shared();
    ck_assert_uint_eq(sd_snapshot_device_count(s), 2);
    const sd_cuda_device *d0 = sd_snapshot_device(s, 0), *d1 = sd_snapshot_device(s, 1);
    ck_assert_uint_eq(d0->n_trace, 3);
    for (size_t i = 0; i < 2; i++) { /* E twice: the same entry at both references */
        ck_assert_int_eq(d0->trace[i].action, SD_ACT_ALLOC);
        ck_assert_uint_eq(d0->trace[i].addr, 4096);
        ck_assert_uint_eq(d0->trace[i].size, 512);
    }
    ck_assert_int_eq(d0->trace[2].action, SD_ACT_FREE_REQUESTED);
    ck_assert_uint_ne(d0->trace[0].stack, 0);
    ck_assert_uint_eq(d0->trace[1].stack, d0->trace[0].stack);
    ck_assert_uint_eq(d0->trace[2].stack, d0->trace[0].stack); /* the shared frames list */
    check_stack_inner_outer(s, d0->trace[0].stack);
    ck_assert_uint_eq(d1->n_trace, 2);  /* S, which holds itself, twice */
    for (size_t i = 0; i < 2; i++) {
        ck_assert_int_eq(d1->trace[i].action, SD_ACT_ALLOC);
        ck_assert_uint_eq(d1->trace[i].addr, 8192);
        ck_assert_uint_eq(d1->trace[i].size, 64);
        ck_assert_uint_eq(d1->trace[i].stack, d0->trace[0].stack);
    }
    sd_snapshot_free(s);
}
END_TEST

static const sd_setting *setting_member(const sd_setting *dict, const char *key)
{
    for (size_t i = 0; i < dict->n_items; i++)
        if (dict->items[i].key_len == strlen(key) && memcmp(dict->items[i].key, key, strlen(key)) == 0)
            return &dict->items[i];
    return NULL;
}

START_TEST(model_typed_allocator_settings)
{
    sd_snapshot *s = load_shared();
    const sd_allocator_settings *a = sd_snapshot_allocator_settings(s);
    ck_assert(a->present);
    ck_assert_str_eq(a->alloc_conf, "expandable_segments:True");
    ck_assert(a->has_max_split_size && a->max_split_size == -1);
    ck_assert(a->has_expandable_segments && a->expandable_segments);
    ck_assert(a->has_gc_threshold);
    ck_assert_double_eq(a->garbage_collection_threshold, 0.5);
    ck_assert(a->has_roundup_power2_divisions);
    ck_assert_uint_eq(a->n_roundup_power2_divisions, 3);
    ck_assert_uint_eq(a->roundup_power2_divisions[1].interval_mib, 2);
    ck_assert_int_eq(a->roundup_power2_divisions[1].divisions, 4);
    ck_assert_uint_eq(a->roundup_power2_divisions[2].interval_mib, 0); /* "x": not a number */
    /* The recorded tree, in recorded order, four container levels deep. */
    const sd_setting *t = a->recorded;
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->type, SD_SETTING_DICT);
    ck_assert_uint_eq(t->n_items, 6);
    ck_assert_str_eq(t->items[0].key, "PYTORCH_CUDA_ALLOC_CONF");
    ck_assert_int_eq(setting_member(t, "max_split_size")->type, SD_SETTING_INT);
    ck_assert_int_eq(setting_member(t, "max_split_size")->i, -1);
    ck_assert_int_eq(setting_member(t, "expandable_segments")->type, SD_SETTING_BOOL);
    ck_assert_int_eq(setting_member(t, "garbage_collection_threshold")->type, SD_SETTING_FLOAT);
    const sd_setting *rp = setting_member(t, "roundup_power2_divisions");
    ck_assert_int_eq(rp->type, SD_SETTING_DICT);
    ck_assert_uint_eq(rp->n_items, 3);
    ck_assert_int_eq(setting_member(rp, "2")->i, 4);
    const sd_setting *c = setting_member(setting_member(setting_member(setting_member(t, "nested"), "a"), "b"), "c");
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->type, SD_SETTING_DICT);
    ck_assert_uint_eq(c->n_items, 0); /* the fifth level is cut, as the reports show it */
    sd_snapshot_free(s);
}
END_TEST

/* The core suite plus this tcase of its own. */
static Suite *core_and_sharing_suite(void)
{
    Suite *s = core_suite();
    TCase *tc = tcase_create("model_sharing");
    tcase_add_test(tc, model_trace_entry_shared_through_memo);
    tcase_add_test(tc, model_typed_allocator_settings);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return sdp_test_main(core_and_sharing_suite); }
