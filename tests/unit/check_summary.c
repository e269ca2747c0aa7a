/* check_summary.c - unit tests of the summary writer and reader (summary.h): a summary
 * reloads into the same model (every device, segment, block and block stack's frames),
 * keeps the trace entries the diff reads, refuses a newer version and every truncation
 * with an offset, and works with a NULL error pointer. Values come from the fixtures
 * themselves: each is compared with the snapshot it was made from. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapdiff/diff.h"
#include "snapdiff/stats.h"
#include "snapdiff/summarize.h"

#include "check_helpers.h"

static sd_snapshot *reload(const sd_snapshot *s, uint8_t **bytes, size_t *len)
{
    sd_error err;
    sd_error_clear(&err);
    ck_assert_int_eq(sd_summary_encode(s, "check", bytes, len, &err), SD_OK);
    ck_assert(sd_summary_sniff(*bytes, *len));
    sd_snapshot *r = sd_snapshot_load_buffer(*bytes, *len, "x.sdsum", NULL, &err);
    ck_assert_msg(r != NULL, "reload: %s", err.text);
    ck_assert(sd_snapshot_is_summary(r));
    return r;
}

/* Frames of a stack as "file:line name;..." for comparing across two models. */
static void stack_text(const sd_snapshot *s, uint32_t id, char *buf, size_t size)
{
    size_t n, k = 0;
    const uint32_t *ids = sd_snapshot_stack(s, id, &n);
    buf[0] = '\0';
    for (size_t i = 0; i < n && k < size; i++) {
        const sd_frame *f = sd_snapshot_frame(s, ids[i]);
        k += (size_t)snprintf(buf + k, size - k, "%s:%lld %s;", f->filename, (long long)f->line,
                              f->name);
    }
}

static void same_model(const sd_snapshot *a, const sd_snapshot *b)
{
    ck_assert_uint_eq(sd_snapshot_device_count(a), sd_snapshot_device_count(b));
    for (size_t d = 0; d < sd_snapshot_device_count(a); d++) {
        const sd_cuda_device *x = sd_snapshot_device(a, d), *y = sd_snapshot_device(b, d);
        ck_assert_int_eq(x->device, y->device);
        ck_assert_uint_eq(x->n_segments, y->n_segments);
        ck_assert_uint_eq(x->n_blocks, y->n_blocks);
        for (size_t i = 0; i < x->n_segments; i++) {
            ck_assert_uint_eq(x->segments[i].address, y->segments[i].address);
            ck_assert_uint_eq(x->segments[i].total_size, y->segments[i].total_size);
            ck_assert_uint_eq(x->segments[i].first_block, y->segments[i].first_block);
            ck_assert_uint_eq(x->segments[i].n_blocks, y->segments[i].n_blocks);
            ck_assert_int_eq(x->segments[i].is_small, y->segments[i].is_small);
        }
        for (size_t i = 0; i < x->n_blocks; i++) {
            const sd_block *p = &x->blocks[i], *q = &y->blocks[i];
            ck_assert_uint_eq(p->address, q->address);
            ck_assert_uint_eq(p->size, q->size);
            ck_assert_uint_eq(p->requested_size, q->requested_size);
            ck_assert_uint_eq(p->state, q->state);
            char sa[4096], sb[4096];
            stack_text(a, p->stack, sa, sizeof sa);
            stack_text(b, q->stack, sb, sizeof sb);
            ck_assert_str_eq(sa, sb);
        }
        sd_stats sx, sy;
        sd_stats_device(x, &sx);
        sd_stats_device(y, &sy);
        ck_assert_uint_eq(sx.allocated_bytes, sy.allocated_bytes);
        ck_assert_uint_eq(sx.reserved_bytes, sy.reserved_bytes);
        ck_assert_int_eq(sx.has_time, sy.has_time);
        if (sx.has_time) ck_assert_int_eq(sx.last_time_us, sy.last_time_us);
        /* Kept: every oom entry (the last is the capacity estimate's). */
        uint64_t ax[SD_ACT_COUNT], ay[SD_ACT_COUNT];
        sd_stats_device_actions(x, ax, SD_ACT_COUNT);
        sd_stats_device_actions(y, ay, SD_ACT_COUNT);
        ck_assert_uint_eq(ax[SD_ACT_OOM], ay[SD_ACT_OOM]);
    }
    const sd_allocator_settings *p = sd_snapshot_allocator_settings(a),
                                *q = sd_snapshot_allocator_settings(b);
    ck_assert_int_eq(p->present, q->present);
    ck_assert_int_eq(p->has_expandable_segments, q->has_expandable_segments);
    ck_assert_int_eq(p->expandable_segments, q->expandable_segments);
    ck_assert_int_eq(p->has_max_split_size, q->has_max_split_size);
    ck_assert_uint_eq(sd_snapshot_annotation_count(a), sd_snapshot_annotation_count(b));
}

static const char *const fixtures[] = {
    "basic/v2_6_full.pickle", "basic/legacy_1_13.pickle", "basic/v2_0_history.pickle",
    "frag/oom_many.pickle", "frag/multidev.pickle", "frag/expandable.pickle",
    "native/forward.pickle", "trace/phases.pickle", "leak/churn_new_oom.pickle",
};

START_TEST(round_trip_keeps_the_model)
{
    for (size_t i = 0; i < SDP_TEST_LEN(fixtures); i++) {
        sd_snapshot *s = sdp_test_load_ok("%s/%s", SNAPDIFF_TESTDATA, fixtures[i]);
        ck_assert(!sd_snapshot_is_summary(s));
        uint8_t *bytes;
        size_t len;
        sd_snapshot *r = reload(s, &bytes, &len);
        same_model(s, r);
        /* And the summary of the summary is the summary. */
        uint8_t *again;
        size_t len2;
        sd_snapshot *r2 = reload(r, &again, &len2);
        ck_assert_uint_eq(len, len2);
        ck_assert(memcmp(bytes, again, len) == 0);
        sd_snapshot_free(r2);
        free(again);
        free(bytes);
        sd_snapshot_free(r);
        sd_snapshot_free(s);
    }
}
END_TEST

START_TEST(diff_against_the_summary_is_the_diff)
{
    sd_snapshot *old = sdp_test_load_ok("%s/leak/churn_old.pickle", SNAPDIFF_TESTDATA);
    sd_snapshot *new = sdp_test_load_ok("%s/leak/churn_new.pickle", SNAPDIFF_TESTDATA);
    uint8_t *bytes;
    size_t len;
    sd_snapshot *base = reload(old, &bytes, &len);
    sd_diff_options o;
    memset(&o, 0, sizeof o);
    sd_diff *a = sd_diff_create(old, new, &o, NULL), *b = sd_diff_create(base, new, &o, NULL);
    ck_assert(a && b);
    const sd_diff_totals *ta = sd_diff_totals_of(a), *tb = sd_diff_totals_of(b);
    ck_assert_uint_eq(ta->blocks.kept, tb->blocks.kept);
    ck_assert_uint_eq(ta->blocks.added, tb->blocks.added);
    ck_assert_int_eq(ta->delta.allocated, tb->delta.allocated);
    ck_assert_uint_eq(sd_diff_group_count(a), sd_diff_group_count(b));
    for (size_t i = 0; i < sd_diff_group_count(a); i++) {
        ck_assert_str_eq(sd_diff_group_at(a, i)->key, sd_diff_group_at(b, i)->key);
        ck_assert_int_eq(sd_diff_group_at(a, i)->delta_bytes, sd_diff_group_at(b, i)->delta_bytes);
        ck_assert_uint_eq(sd_diff_group_at(a, i)->kept_blocks, sd_diff_group_at(b, i)->kept_blocks);
    }
    sd_diff_free(a);
    sd_diff_free(b);
    sd_snapshot_free(base);
    free(bytes);
    sd_snapshot_free(new);
    sd_snapshot_free(old);
}
END_TEST

START_TEST(newer_version_and_truncations_are_refused)
{
    sd_snapshot *s = sdp_test_load_ok("%s/basic/v2_6_full.pickle", SNAPDIFF_TESTDATA);
    uint8_t *bytes;
    size_t len;
    sd_error err;
    ck_assert_int_eq(sd_summary_encode(s, NULL, &bytes, &len, NULL), SD_OK);
    /* 0x93, the 17-byte tag, then the version: a positive fixint. */
    ck_assert_uint_eq(bytes[18], SD_SUMMARY_VERSION);
    bytes[18] = SD_SUMMARY_VERSION + 1;
    sd_error_clear(&err);
    ck_assert_ptr_null(sd_snapshot_load_buffer(bytes, len, "new.sdsum", NULL, &err));
    ck_assert_int_eq(err.code, SD_EFORMAT);
    ck_assert_uint_eq(err.offset, 18);
    ck_assert_ptr_nonnull(strstr(err.text, "newer than this snapdiff reads"));
    ck_assert_ptr_null(sd_snapshot_load_buffer(bytes, len, "new.sdsum", NULL, NULL));
    bytes[18] = SD_SUMMARY_VERSION;
    for (size_t cut = 18; cut < len; cut += 1 + cut / 16) {
        sd_error_clear(&err);
        sd_snapshot *t = sd_snapshot_load_buffer(bytes, cut, "cut.sdsum", NULL, &err);
        ck_assert_msg(t == NULL, "a summary cut at %zu loaded", cut);
        ck_assert(err.code != SD_OK && err.offset <= cut && err.text[0]);
    }
    free(bytes);
    sd_snapshot_free(s);
}
END_TEST

static Suite *make(void)
{
    Suite *s = suite_create("summary");
    TCase *tc = tcase_create("summary");
    tcase_add_test(tc, round_trip_keeps_the_model);
    tcase_add_test(tc, diff_against_the_summary_is_the_diff);
    tcase_add_test(tc, newer_version_and_truncations_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return sdp_test_main(make); }
