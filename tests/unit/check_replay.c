/* check_replay.c - unit tests of the allocator model behind `snapdiff replay`
 * (src/alloc/alloc_model.c, alloc_conf.c): each rule of CUDACachingAllocator.cpp the
 * model keeps, on states built by hand, with the numbers torch's code gives. */
#include <check.h>
#include <stdint.h>

#include "alloc/alloc_model.h"
#include "snapdiff/replay.h"

#include "check_helpers.h"

#define MiB (1024ULL * 1024)
#define KiB 1024ULL

START_TEST(round_size_rules)
{
    sd_alloc_conf c;
    sd_alloc_conf_default(&c);
    ck_assert_uint_eq(sdp_alloc_round_size(&c, 1), 512);
    ck_assert_uint_eq(sdp_alloc_round_size(&c, 512), 512);
    ck_assert_uint_eq(sdp_alloc_round_size(&c, 513), 1024);
    ck_assert_uint_eq(sdp_alloc_round_size(&c, 25690112), 25690112);
    /* roundup_power2_divisions:4 : 1200 lies in 1024..2048, divisions at 1280, 1536, 1792
     * (torch's comment) -- but sizes <= 512 * 4 keep plain rounding: 1200 -> 1536. */
    ck_assert_int_eq(sd_alloc_conf_parse("roundup_power2_divisions:4", &c, NULL), SD_OK);
    ck_assert_uint_eq(sdp_alloc_round_size(&c, 1200), 1536);
    /* 5 MiB + 1 in 4..8 MiB by quarters: the next division is 6 MiB. */
    ck_assert_uint_eq(sdp_alloc_round_size(&c, 5 * MiB + 1), 6 * MiB);
    ck_assert_uint_eq(sdp_alloc_round_size(&c, 8 * MiB), 8 * MiB);   /* a power of two */
}
END_TEST

START_TEST(allocation_sizes)
{
    ck_assert_uint_eq(sdp_alloc_segment_size(512), 2 * MiB);
    ck_assert_uint_eq(sdp_alloc_segment_size(1 * MiB), 2 * MiB);
    ck_assert_uint_eq(sdp_alloc_segment_size(1 * MiB + 512), 20 * MiB);
    ck_assert_uint_eq(sdp_alloc_segment_size(10 * MiB - 512), 20 * MiB);
    ck_assert_uint_eq(sdp_alloc_segment_size(10 * MiB), 10 * MiB);
    ck_assert_uint_eq(sdp_alloc_segment_size(11 * MiB + 1), 12 * MiB);
}
END_TEST

START_TEST(conf_parse)
{
    sd_alloc_conf c;
    ck_assert_int_eq(sd_alloc_conf_parse("expandable_segments:True,max_split_size_mb:512", &c,
                                         NULL), SD_OK);
    ck_assert(c.expandable_segments);
    ck_assert_uint_eq(c.max_split_size, 512 * MiB);
    /* parseMaxSplitSize: AcceleratorAllocatorConfig (2.9+) TORCH_CHECK(val >= 20);
     * CUDAAllocatorConfig before it TORCH_CHECK(val > kLargeBuffer / MiB) */
    ck_assert_int_eq(sd_alloc_conf_parse("max_split_size_mb:5", &c, NULL), SD_EUSAGE);
    ck_assert_int_eq(sd_alloc_conf_parse("max_split_size_mb:19", &c, NULL), SD_EUSAGE);
    ck_assert_int_eq(sd_alloc_conf_parse("max_split_size_mb:20", &c, NULL), SD_OK);
    ck_assert_uint_eq(c.max_split_size, 20 * MiB);
    ck_assert_int_eq(sd_alloc_conf_parse_torch("max_split_size_mb:20", 208, &c, NULL), SD_EUSAGE);
    ck_assert_int_eq(sd_alloc_conf_parse_torch("max_split_size_mb:21", 208, &c, NULL), SD_OK);
    ck_assert_uint_eq(c.max_split_size, 21 * MiB);
    /* keys a version does not know are refused as its parseArgs refuses them */
    ck_assert_int_eq(sd_alloc_conf_parse_torch("max_non_split_rounding_mb:40", 205, &c, NULL),
                     SD_EUSAGE);
    ck_assert_int_eq(sd_alloc_conf_parse_torch("max_non_split_rounding_mb:40", 206, &c, NULL),
                     SD_OK);
    ck_assert_uint_eq(c.max_non_split_rounding, 40 * MiB);
    ck_assert_int_eq(sd_alloc_conf_parse_torch("per_process_memory_fraction:0.5", 208, &c, NULL),
                     SD_EUSAGE);
    unsigned v;
    ck_assert(sd_torch_version_parse("2.9", &v) && v == 209);
    ck_assert(sd_torch_version_parse("2.10.1", &v) && v == 210);
    ck_assert(!sd_torch_version_parse("1.13", &v));
    ck_assert(!sd_torch_version_parse("2.x", &v));
    ck_assert(!sd_torch_version_parse("2.", &v));
    /* roundup_power2_divisions lists (parseRoundUpPower2Divisions): the first named interval
     * fills those below it, a later one sets only its own, ">" fills after the last named
     * interval (2.9+) or from it (before 2.9) */
    ck_assert_int_eq(sd_alloc_conf_parse("roundup_power2_divisions:[256:1,1024:4]", &c, NULL),
                     SD_OK);
    ck_assert_uint_eq(c.roundup_power2_divisions[0], 1);
    ck_assert_uint_eq(c.roundup_power2_divisions[8], 1);
    ck_assert_uint_eq(c.roundup_power2_divisions[9], 0);    /* 512 MiB: not named, plain */
    ck_assert_uint_eq(c.roundup_power2_divisions[10], 4);
    ck_assert_uint_eq(c.roundup_power2_divisions[11], 0);
    ck_assert_int_eq(sd_alloc_conf_parse("roundup_power2_divisions:[256:1,>:4]", &c, NULL), SD_OK);
    ck_assert_uint_eq(c.roundup_power2_divisions[8], 1);
    ck_assert_uint_eq(c.roundup_power2_divisions[9], 4);
    ck_assert_int_eq(sd_alloc_conf_parse_torch("roundup_power2_divisions:[256:1,>:4]", 208, &c,
                                               NULL), SD_OK);
    ck_assert_uint_eq(c.roundup_power2_divisions[7], 1);
    ck_assert_uint_eq(c.roundup_power2_divisions[8], 4);    /* before 2.9: from last_index */
    ck_assert_int_eq(sd_alloc_conf_parse("roundup_power2_divisions:[>:4]", &c, NULL), SD_OK);
    ck_assert_uint_eq(c.roundup_power2_divisions[0], 0);    /* last_index + 1 = 1 */
    ck_assert_uint_eq(c.roundup_power2_divisions[1], 4);
    ck_assert_int_eq(sd_alloc_conf_parse_torch("roundup_power2_divisions:[>:4]", 208, &c, NULL),
                     SD_OK);
    ck_assert_uint_eq(c.roundup_power2_divisions[0], 4);
    /* ConfigTokenizer drops spaces; cudaMallocAsync is another allocator, not modelled */
    ck_assert_int_eq(sd_alloc_conf_parse(" expandable_segments : True ", &c, NULL), SD_OK);
    ck_assert(c.expandable_segments);
    ck_assert_int_eq(sd_alloc_conf_parse("backend:cudaMallocAsync", &c, NULL), SD_EUSAGE);
    ck_assert_int_eq(sd_alloc_conf_parse("backend:native", &c, NULL), SD_OK);
    ck_assert_int_eq(sd_alloc_conf_parse("roundup_power2_divisions:[256:1,512:2,>:8]", &c, NULL),
                     SD_OK);
    ck_assert_uint_eq(c.roundup_power2_divisions[0], 1);
    ck_assert_uint_eq(c.roundup_power2_divisions[8], 1);    /* 256 MiB */
    ck_assert_uint_eq(c.roundup_power2_divisions[9], 2);    /* 512 MiB */
    ck_assert_uint_eq(c.roundup_power2_divisions[10], 8);
    ck_assert_uint_eq(c.roundup_power2_divisions[15], 8);
    ck_assert_int_eq(sd_alloc_conf_parse("garbage_collection_threshold:0.6", &c, NULL), SD_OK);
    ck_assert(c.garbage_collection_threshold > 0.59 && c.garbage_collection_threshold < 0.61);
    sd_error err;
    sd_error_clear(&err);
    ck_assert_int_eq(sd_alloc_conf_parse("max_split_size_mb:x", &c, &err), SD_EUSAGE);
    ck_assert_int_eq(sd_alloc_conf_parse("nonsense:1", &c, NULL), SD_EUSAGE);
    ck_assert_int_eq(sd_alloc_conf_parse("expandable_segments", &c, NULL), SD_EUSAGE);
    ck_assert_int_eq(sd_alloc_conf_parse("garbage_collection_threshold:1.5", &c, NULL), SD_EUSAGE);
    ck_assert_int_eq(sd_alloc_conf_parse("roundup_power2_divisions:3", &c, NULL), SD_EUSAGE);
    ck_assert_int_eq(sd_alloc_conf_parse("", &c, NULL), SD_EUSAGE);
}
END_TEST

/* A model with one large segment of `seg` bytes at 1 GiB, stream 0, pool 0 (large). */
static void one_segment(sdp_alloc *m, const sd_alloc_conf *c, uint64_t seg)
{
    ck_assert(sdp_alloc_init(m, c, 2, true));
    ck_assert_uint_ne(sdp_alloc_add_segment(m, 1ULL << 30, seg, 0, 0, false), SDP_NIL);
}

START_TEST(best_fit_by_size_then_address)
{
    sd_alloc_conf c;
    sd_alloc_conf_default(&c);
    sdp_alloc m;
    ck_assert(sdp_alloc_init(&m, &c, 2, true));
    sdp_alloc_add_segment(&m, 0x3000000000, 40 * MiB, 0, 0, false);
    sdp_alloc_add_segment(&m, 0x2000000000, 30 * MiB, 0, 0, false);
    sdp_alloc_add_segment(&m, 0x1000000000, 30 * MiB, 0, 0, false);
    sdp_alloc_add_segment(&m, 0x0800000000, 30 * MiB, 7, 0, false);   /* another stream */
    uint32_t x = sdp_alloc_get_free_block(&m, 0, 0, 25 * MiB, false);
    ck_assert_uint_eq(m.b[x].addr, 0x1000000000);   /* smallest fit, lower address */
    x = sdp_alloc_get_free_block(&m, 0, 0, 35 * MiB, false);
    ck_assert_uint_eq(m.b[x].addr, 0x3000000000);
    ck_assert_uint_eq(sdp_alloc_get_free_block(&m, 0, 0, 41 * MiB, false), SDP_NIL);
    x = sdp_alloc_get_free_block(&m, 0, 7, 1 * MiB + 512, false);
    ck_assert_uint_eq(m.b[x].addr, 0x0800000000);
    sdp_alloc_free(&m);
}
END_TEST

START_TEST(split_and_coalesce)
{
    sd_alloc_conf c;
    sd_alloc_conf_default(&c);
    sdp_alloc m;
    one_segment(&m, &c, 20 * MiB);
    /* 18 MiB + 1 KiB: the rest (< 2 MiB but > 1 MiB) is split off */
    uint32_t a = sdp_alloc_malloc(&m, 18 * MiB + KiB, 0, 0);
    ck_assert_uint_eq(m.b[a].size, 18 * MiB + KiB);
    ck_assert_uint_eq(m.segment_allocs, 0);
    /* the 2 MiB - 1 KiB left is a free block; 1.5 MiB leaves < 1 MiB: not split */
    uint32_t b = sdp_alloc_malloc(&m, 3 * MiB / 2, 0, 0);
    ck_assert_uint_eq(m.b[b].size, 2 * MiB - KiB);
    ck_assert_uint_eq(m.allocated, 20 * MiB);
    sdp_alloc_free_block(&m, a);
    sdp_alloc_free_block(&m, b);
    /* coalesced back into one free block: the whole segment */
    uint32_t x = sdp_alloc_get_free_block(&m, 0, 0, 20 * MiB, false);
    ck_assert_uint_ne(x, SDP_NIL);
    ck_assert_uint_eq(m.b[x].size, 20 * MiB);
    ck_assert_uint_eq(m.b[x].prev, SDP_NIL);
    ck_assert_uint_eq(m.b[x].next, SDP_NIL);
    sdp_alloc_free(&m);
}
END_TEST

START_TEST(max_split_size_rules)
{
    sd_alloc_conf c;
    ck_assert_int_eq(sd_alloc_conf_parse("max_split_size_mb:512", &c, NULL), SD_OK);
    sdp_alloc m;
    one_segment(&m, &c, 600 * MiB);
    /* an oversize block is not handed to a smaller request */
    ck_assert_uint_eq(sdp_alloc_get_free_block(&m, 0, 0, 100 * MiB, false), SDP_NIL);
    /* ... and to a large one only within 20 MiB of it */
    ck_assert_uint_eq(sdp_alloc_get_free_block(&m, 0, 0, 580 * MiB, false), SDP_NIL);
    ck_assert_uint_ne(sdp_alloc_get_free_block(&m, 0, 0, 581 * MiB, false), SDP_NIL);
    /* taken whole: an oversize request never splits */
    uint32_t x = sdp_alloc_malloc(&m, 590 * MiB, 0, 0);
    ck_assert_uint_eq(m.b[x].size, 600 * MiB);
    sdp_alloc_free(&m);
}
END_TEST

START_TEST(release_and_retry_at_capacity)
{
    sd_alloc_conf c;
    sd_alloc_conf_default(&c);
    sdp_alloc m;
    one_segment(&m, &c, 100 * MiB);
    m.capacity = 250 * MiB;
    uint32_t x = sdp_alloc_malloc(&m, 200 * MiB, 0, 0);
    ck_assert_uint_ne(x, SDP_NIL);
    ck_assert_uint_eq(m.retries, 1);
    ck_assert_uint_eq(m.reserved, 200 * MiB);   /* the cached 100 MiB went back */
    /* nothing left to release: out of memory */
    ck_assert_uint_eq(sdp_alloc_malloc(&m, 100 * MiB, 0, 0), SDP_NIL);
    ck_assert_uint_eq(m.retries, 2);
    sdp_alloc_free(&m);
}
END_TEST

START_TEST(expandable_grows_by_pages)
{
    sd_alloc_conf c;
    ck_assert_int_eq(sd_alloc_conf_parse("expandable_segments:True", &c, NULL), SD_OK);
    sdp_alloc m;
    ck_assert(sdp_alloc_init(&m, &c, 2, false));
    uint32_t a = sdp_alloc_malloc(&m, 30 * MiB, 0, 0);
    ck_assert_uint_eq(m.reserved, 40 * MiB);   /* two 20 MiB pages */
    ck_assert_uint_eq(m.b[a].size, 30 * MiB);
    uint32_t b = sdp_alloc_malloc(&m, 15 * MiB, 0, 0);  /* 10 MiB free at the end: +20 */
    ck_assert_uint_eq(m.reserved, 60 * MiB);
    ck_assert_uint_eq(m.b[b].addr, m.b[a].addr + 30 * MiB);
    sdp_alloc_free_block(&m, b);
    sdp_alloc_release_cached(&m);   /* the free end pages are unmapped: 30 MiB -> 40 */
    ck_assert_uint_eq(m.reserved, 40 * MiB);
    /* small requests go to their own segment of 2 MiB pages */
    sdp_alloc_malloc(&m, 4 * KiB, 0, 0);
    ck_assert_uint_eq(m.reserved, 42 * MiB);
    sdp_alloc_free(&m);
}
END_TEST

START_TEST(address_map)
{
    sdp_amap a;
    ck_assert(sdp_amap_init(&a, 4));
    for (uint64_t i = 0; i < 5000; i++) ck_assert(sdp_amap_put(&a, i * 512, (uint32_t)i));
    for (uint64_t i = 0; i < 5000; i += 2) ck_assert_uint_eq(sdp_amap_del(&a, i * 512), i);
    for (uint64_t i = 0; i < 5000; i++)
        ck_assert_uint_eq(sdp_amap_get(&a, i * 512), i % 2 ? (uint32_t)i : SDP_NIL);
    ck_assert_uint_eq(a.count, 2500);
    sdp_amap_free(&a);
}
END_TEST

static Suite *replay_suite(void)
{
    Suite *s = suite_create("replay");
    TCase *tc = tcase_create("rules");
    tcase_add_test(tc, round_size_rules);
    tcase_add_test(tc, allocation_sizes);
    tcase_add_test(tc, conf_parse);
    tcase_add_test(tc, best_fit_by_size_then_address);
    tcase_add_test(tc, split_and_coalesce);
    tcase_add_test(tc, max_split_size_rules);
    tcase_add_test(tc, release_and_retry_at_capacity);
    tcase_add_test(tc, expandable_grows_by_pages);
    tcase_add_test(tc, address_map);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return sdp_test_main(replay_suite); }
