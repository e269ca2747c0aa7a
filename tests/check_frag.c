/* check_frag.c - unit tests of the fragmentation analysis (src/analysis/frag.c, frag_oom.c)
 * on the small snapshots of testdata/frag/ (made by testdata/make_frag_fixtures.py; the
 * expected numbers are the hand arithmetic written beside each layout there). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapdiff/frag.h"

#include "check_helpers.h"

#define MiB (1024ULL * 1024)
#define KiB 1024ULL

static sd_snapshot *load(const char *name)
{
    return sdp_test_load_ok("%s/frag/%s.pickle", SNAPDIFF_TESTDATA, name);
}

static sd_frag *analyse(const sd_snapshot *s)
{
    sd_error err;
    sd_error_clear(&err);
    sd_frag *f = sd_frag_create(s, NULL, &err);
    ck_assert_msg(f != NULL, "sd_frag_create: %s", err.text);
    return f;
}

static bool has_advice(const sd_frag_device *d, const char *needle)
{
    for (size_t i = 0; i < d->n_advice; i++)
        if (strstr(d->advice[i], needle)) return true;
    return false;
}

/* ---- histogram buckets ------------------------------------------------------------ */

static const struct { uint64_t size; size_t bucket; } bucket_cases[] = {
    {0, 0}, {512, 0}, {1023, 0}, {1024, 1}, {2047, 1}, {2048, 2}, {4096, 3},
    {MiB - 1, 10}, {MiB, 11}, {512 * MiB - 1, 19}, {512 * MiB, 20}, {1024 * MiB - 1, 20},
    {1024 * MiB, 21}, {UINT64_MAX, 21},
};

START_TEST(bucket_of_table)
{
    ck_assert_uint_eq(sd_frag_bucket_of(bucket_cases[_i].size), bucket_cases[_i].bucket);
}
END_TEST

START_TEST(bucket_bounds_consistent)
{
    uint64_t lo, hi;
    sd_frag_bucket_bounds(0, &lo, &hi);
    ck_assert_uint_eq(lo, 0);
    ck_assert_uint_eq(hi, KiB);
    for (size_t i = 1; i + 1 < SD_FRAG_BUCKETS; i++) {
        sd_frag_bucket_bounds(i, &lo, &hi);
        ck_assert_uint_eq(hi, 2 * lo);
        ck_assert_uint_eq(sd_frag_bucket_of(lo), i);
        ck_assert_uint_eq(sd_frag_bucket_of(hi - 1), i);
    }
    sd_frag_bucket_bounds(SD_FRAG_BUCKETS - 1, &lo, &hi);
    ck_assert_uint_eq(lo, 1024 * MiB);
    ck_assert_uint_eq(hi, 0);
}
END_TEST

/* ---- figures, verdicts and advice of the fixtures --------------------------------- */

START_TEST(compact_figures)
{
    sd_snapshot *s = load("compact");
    sd_frag *f = analyse(s);
    ck_assert_uint_eq(sd_frag_device_count(f), 1);
    const sd_frag_device *d = sd_frag_device_at(f, 0);
    const sd_frag_figures *g = &d->fig;
    ck_assert_uint_eq(g->reserved_bytes, 122 * MiB);
    ck_assert_uint_eq(g->allocated_bytes, 103 * MiB + 512 * KiB);
    ck_assert_uint_eq(g->gap_bytes, 18 * MiB + 512 * KiB);
    ck_assert_uint_eq(g->external_free_bytes, 18 * MiB + 512 * KiB);
    ck_assert_uint_eq(g->largest_free_bytes, 10 * MiB);
    /* requested 40 MiB - 1000 and 3 x 500 KiB in 512 KiB blocks */
    ck_assert_uint_eq(g->internal_waste_bytes, 1000 + 3 * 12 * KiB);
    ck_assert_double_eq_tol(g->fragmentation_index, 1.0 - 10.0 / 18.5, 1e-12);
    ck_assert_uint_eq(g->free_below_1mib_bytes, 512 * KiB);
    /* live sizes sorted: 512K x3, 12M, 40M, 50M -> index (6-1)/2 = 2: 512 KiB */
    ck_assert_uint_eq(g->median_allocated_bytes, 512 * KiB);
    ck_assert_uint_eq(g->free_below_median_bytes, 0);
    ck_assert_uint_eq(g->empty_cache_releasable_bytes, 0);
    ck_assert_int_eq(d->verdict, SD_FRAG_COMPACT);
    ck_assert_uint_eq(d->n_advice, 0);
    ck_assert_uint_eq(d->n_pools, 2);
    ck_assert_str_eq(d->pools[0].name, "large");
    ck_assert_str_eq(d->pools[1].name, "small");
    ck_assert_uint_eq(d->pools[1].fig.reserved_bytes, 2 * MiB);
    ck_assert_uint_eq(d->n_streams, 1);
    /* one device: the total is the device */
    const sd_frag_device *t = sd_frag_total(f);
    ck_assert_int_eq(t->device, -1);
    ck_assert_uint_eq(t->fig.reserved_bytes, g->reserved_bytes);
    ck_assert_str_eq(t->explanation, d->explanation);
    sd_frag_free(f);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(fragmented_verdict_and_advice)
{
    sd_snapshot *s = load("fragmented");
    sd_frag *f = analyse(s);
    const sd_frag_device *d = sd_frag_device_at(f, 0);
    ck_assert_int_eq(d->verdict, SD_FRAG_FRAGMENTED);
    ck_assert_uint_eq(d->fig.reserved_bytes, 1026 * MiB);
    ck_assert_uint_eq(d->fig.allocated_bytes, 464 * MiB);
    ck_assert_uint_eq(d->fig.free_blocks, 61);
    ck_assert_uint_eq(d->fig.largest_free_bytes, 40 * MiB);
    ck_assert_uint_eq(d->fig.stranded_free_bytes, d->fig.external_free_bytes);
    ck_assert_uint_eq(d->large_split_free_bytes, 561 * MiB);
    ck_assert(has_advice(d, "expandable_segments:True"));
    ck_assert(has_advice(d, "max_split_size_mb:512"));
    ck_assert(has_advice(d, "Bucket or pad"));
    ck_assert(has_advice(d, "Do not call torch.cuda.empty_cache()"));
    ck_assert_ptr_nonnull(strstr(d->explanation, "54.8% of 1.0 GiB reserved (>= 30%)"));
    /* the histogram sums to the free figures */
    uint64_t blocks = 0, bytes = 0;
    for (size_t i = 0; i < SD_FRAG_BUCKETS; i++) {
        blocks += d->fig.histogram[i].blocks;
        bytes += d->fig.histogram[i].bytes;
    }
    ck_assert_uint_eq(blocks, d->fig.free_blocks);
    ck_assert_uint_eq(bytes, d->fig.external_free_bytes);
    ck_assert_uint_eq(d->fig.histogram[16].blocks, 11);     /* the 40 MiB holes */
    sd_frag_free(f);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(thresholds_move_the_verdict)
{
    sd_snapshot *s = load("fragmented");
    sd_error err;
    sd_error_clear(&err);
    sd_frag_options high_gap = {60, 0.5}, high_index = {30, 0.95};
    sd_frag *f = sd_frag_create(s, &high_gap, &err);
    ck_assert_int_eq(sd_frag_device_at(f, 0)->verdict, SD_FRAG_COMPACT);
    ck_assert_ptr_nonnull(strstr(sd_frag_device_at(f, 0)->explanation, "(< 60%)"));
    sd_frag_free(f);
    f = sd_frag_create(s, &high_index, &err);
    ck_assert_int_eq(sd_frag_device_at(f, 0)->verdict, SD_FRAG_COMPACT);
    ck_assert_ptr_nonnull(strstr(sd_frag_device_at(f, 0)->explanation, "(< 0.95)"));
    sd_frag_free(f);
    sd_frag_options bad = {30, 1.5};
    ck_assert_ptr_null(sd_frag_create(s, &bad, &err));
    ck_assert_int_eq(err.code, SD_EUSAGE);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(expandable_pages_released)
{
    sd_snapshot *s = load("expandable");
    sd_frag *f = analyse(s);
    const sd_frag_device *d = sd_frag_device_at(f, 0);
    /* one whole 20 MiB page at the end of the large segment, one 2 MiB small page */
    ck_assert_uint_eq(d->fig.empty_cache_releasable_bytes, 22 * MiB);
    ck_assert_uint_eq(d->fig.stranded_free_bytes, d->fig.external_free_bytes - 22 * MiB);
    ck_assert_int_eq(d->verdict, SD_FRAG_FRAGMENTED);
    ck_assert(!has_advice(d, "expandable_segments:True"));
    ck_assert(has_advice(d, "Bucket or pad"));
    sd_frag_free(f);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(oom_replayed)
{
    sd_snapshot *s = load("oom");
    sd_frag *f = analyse(s);
    const sd_frag_device *d = sd_frag_device_at(f, 0);
    ck_assert_uint_eq(d->n_ooms, 1);
    const sd_frag_oom *o = &d->ooms[0];
    ck_assert(o->replayed);
    ck_assert_str_eq(o->note, "");
    ck_assert_uint_eq(o->trace_index, 9);
    ck_assert_uint_eq(o->request_bytes, 256 * MiB);
    ck_assert_uint_eq(o->device_free_bytes, 100 * MiB);
    ck_assert(!o->small_pool);
    ck_assert_uint_eq(o->largest_free_bytes, 124 * MiB);
    ck_assert_uint_eq(o->free_bytes, 344 * MiB);
    ck_assert_int_eq(o->cause, SD_OOM_FRAGMENTATION);
    ck_assert_int_eq(d->verdict, SD_FRAG_FRAGMENTED);
    /* the snapshot alone shows the 420 MiB hole the later free left */
    ck_assert_uint_eq(d->fig.largest_free_bytes, 420 * MiB);
    sd_frag_free(f);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(oom_replay_stops_at_a_conflict)
{
    sd_snapshot *s = load("oom_broken");
    sd_frag *f = analyse(s);
    const sd_frag_device *d = sd_frag_device_at(f, 0);
    const sd_frag_oom *o = &d->ooms[0];
    ck_assert(!o->replayed);
    ck_assert_str_eq(o->note,
                     "trace entry 12 (alloc at 0x7f3b00000000): no live block there later");
    ck_assert_uint_eq(o->largest_free_bytes, 420 * MiB);
    ck_assert_int_eq(o->cause, SD_OOM_UNCLEAR);
    ck_assert_int_eq(d->verdict, SD_FRAG_COMPACT);
    sd_frag_free(f);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(oom_replay_limit)
{
    sd_snapshot *s = load("oom_many");
    sd_frag *f = analyse(s);
    const sd_frag_device *d = sd_frag_device_at(f, 0);
    ck_assert_uint_eq(d->n_ooms, 66);
    for (size_t i = 0; i < 66; i++) {
        ck_assert_int_eq(d->ooms[i].replayed, i >= 2);
        ck_assert_uint_eq(d->ooms[i].trace_index, 9 + i);
    }
    ck_assert_ptr_nonnull(strstr(d->ooms[0].note, "last 64 oom entries"));
    sd_frag_free(f);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(legacy_leak_like)
{
    sd_snapshot *s = load("legacy");
    sd_frag *f = analyse(s);
    const sd_frag_device *d = sd_frag_device_at(f, 0);
    ck_assert_int_eq(d->verdict, SD_FRAG_LEAK_LIKE);
    ck_assert_uint_eq(d->fig.reserved_bytes, 84 * MiB);
    ck_assert_uint_eq(d->fig.empty_cache_releasable_bytes, 2 * MiB);
    /* requested from history[0].real_size: 4096 + 512 bytes of rounding */
    ck_assert_uint_eq(d->fig.internal_waste_bytes, 4096 + 512);
    ck_assert(has_advice(d, "Growth, not fragmentation"));
    ck_assert(!has_advice(d, "PYTORCH_CUDA_ALLOC_CONF"));
    sd_frag_free(f);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(multidev_total_and_pools)
{
    sd_snapshot *s = load("multidev");
    sd_frag *f = analyse(s);
    ck_assert_uint_eq(sd_frag_device_count(f), 2);
    const sd_frag_device *d0 = sd_frag_device_at(f, 0), *d1 = sd_frag_device_at(f, 1);
    ck_assert_int_eq(d0->verdict, SD_FRAG_COMPACT);
    ck_assert_int_eq(d1->verdict, SD_FRAG_FRAGMENTED);
    const sd_frag_device *t = sd_frag_total(f);
    ck_assert_int_eq(t->verdict, SD_FRAG_FRAGMENTED);
    ck_assert_ptr_nonnull(strstr(t->explanation, "device 1: "));
    ck_assert_uint_eq(t->fig.reserved_bytes, d0->fig.reserved_bytes + d1->fig.reserved_bytes);
    ck_assert_uint_eq(d0->n_pools, 3);
    ck_assert_str_eq(d0->pools[2].name, "pool (1,2)");
    ck_assert_uint_eq(d0->pools[2].fig.reserved_bytes, 20 * MiB);
    /* the total sums pools by name over devices */
    ck_assert_uint_eq(t->n_pools, 3);
    ck_assert_uint_eq(t->pools[0].fig.reserved_bytes,
                      d0->pools[0].fig.reserved_bytes + d1->pools[0].fig.reserved_bytes);
    ck_assert_uint_eq(t->n_advice, d1->n_advice);
    /* the largest segments of device 0: 60, 60 (by address), 20 (pool), 2 MiB */
    uint32_t idx[8];
    const sd_device *dev = sd_snapshot_device(s, 0);
    ck_assert_uint_eq(sd_frag_largest_segments(dev, 8, idx), 4);
    ck_assert_uint_eq(dev->segments[idx[0]].total_size, 60 * MiB);
    ck_assert_uint_lt(dev->segments[idx[0]].address, dev->segments[idx[1]].address);
    ck_assert_uint_eq(dev->segments[idx[2]].total_size, 20 * MiB);
    ck_assert_uint_eq(dev->segments[idx[3]].total_size, 2 * MiB);
    ck_assert_uint_eq(sd_frag_largest_segments(dev, 1, idx), 1);
    ck_assert_uint_eq(dev->segments[idx[0]].total_size, 60 * MiB);
    sd_frag_free(f);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(brief_matches_total)
{
    static const char *const names[] = {"compact", "fragmented", "expandable", "oom",
                                        "legacy", "multidev", "empty"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        sd_snapshot *s = load(names[i]);
        sd_frag *f = analyse(s);
        sd_frag_brief b;
        sd_frag_brief_of(s, &b);
        const sd_frag_figures *g = &sd_frag_total(f)->fig;
        ck_assert_uint_eq(b.reserved, g->reserved_bytes);
        ck_assert_uint_eq(b.allocated, g->allocated_bytes);
        ck_assert_uint_eq(b.gap, g->gap_bytes);
        ck_assert_uint_eq(b.total_free, g->external_free_bytes);
        ck_assert_uint_eq(b.largest_free, g->largest_free_bytes);
        ck_assert(b.index == g->fragmentation_index);
        sd_frag_free(f);
        sd_snapshot_free(s);
    }
}
END_TEST

START_TEST(empty_snapshot)
{
    sd_snapshot *s = load("empty");
    sd_frag *f = analyse(s);
    ck_assert_uint_eq(sd_frag_device_count(f), 0);
    ck_assert_ptr_null(sd_frag_device_at(f, 0));
    const sd_frag_device *t = sd_frag_total(f);
    ck_assert_int_eq(t->verdict, SD_FRAG_COMPACT);
    ck_assert_str_eq(t->explanation, "nothing is reserved");
    ck_assert_uint_eq(t->fig.reserved_bytes, 0);
    ck_assert(t->fig.fragmentation_index == 0.0);
    sd_frag_free(f);
    sd_snapshot_free(s);
    sd_frag_free(NULL);
}
END_TEST

START_TEST(names)
{
    ck_assert_str_eq(sd_frag_verdict_name(SD_FRAG_COMPACT), "compact");
    ck_assert_str_eq(sd_frag_verdict_name(SD_FRAG_LEAK_LIKE), "leak-like");
    ck_assert_str_eq(sd_frag_verdict_name(SD_FRAG_FRAGMENTED), "fragmented");
    ck_assert_str_eq(sd_oom_cause_name(SD_OOM_FRAGMENTATION), "fragmentation");
    ck_assert_str_eq(sd_oom_cause_name(SD_OOM_CAPACITY), "capacity");
    ck_assert_str_eq(sd_oom_cause_name(SD_OOM_UNCLEAR), "unclear");
}
END_TEST

static Suite *frag_suite(void)
{
    Suite *s = suite_create("frag");
    TCase *tc = tcase_create("buckets");
    tcase_add_loop_test(tc, bucket_of_table, 0, sizeof bucket_cases / sizeof *bucket_cases);
    tcase_add_test(tc, bucket_bounds_consistent);
    tcase_add_test(tc, names);
    suite_add_tcase(s, tc);
    tc = tcase_create("fixtures");
    tcase_add_test(tc, compact_figures);
    tcase_add_test(tc, fragmented_verdict_and_advice);
    tcase_add_test(tc, thresholds_move_the_verdict);
    tcase_add_test(tc, expandable_pages_released);
    tcase_add_test(tc, legacy_leak_like);
    tcase_add_test(tc, multidev_total_and_pools);
    tcase_add_test(tc, brief_matches_total);
    tcase_add_test(tc, empty_snapshot);
    suite_add_tcase(s, tc);
    tc = tcase_create("oom");
    tcase_add_test(tc, oom_replayed);
    tcase_add_test(tc, oom_replay_stops_at_a_conflict);
    tcase_add_test(tc, oom_replay_limit);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return sdp_test_main(frag_suite); }
