/* check_frag.c - unit tests of the fragmentation analysis (src/analysis/frag.c, frag_oom.c)
 * on the small snapshots of testdata/frag/ (made by testdata/make_frag_fixtures.py; the
 * expected numbers are the hand arithmetic written beside each layout there). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapdiff/experimental.h"
#include "snapdiff/frag.h"
#include "snapdiff/render_frag.h"

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

/* The reason and the advice come as data; these tests read them as the reports word them. */
typedef struct text { char s[SD_FRAG_TEXT_MAX]; } text;

static text explanation(const sd_frag_device *d)
{
    text t;
    ck_assert_uint_lt(sd_frag_explain(&d->why, t.s, sizeof t.s), sizeof t.s);
    return t;
}

static text oom_note(const sd_frag_oom *o)
{
    text t;
    ck_assert_uint_lt(sd_frag_oom_note(o, t.s, sizeof t.s), sizeof t.s);
    return t;
}

static bool has_advice(const sd_frag_device *d, const char *needle)
{
    for (size_t i = 0; i < d->n_advice; i++) {
        text t;
        ck_assert_uint_lt(sd_frag_advice_text(&d->advice[i], t.s, sizeof t.s), sizeof t.s);
        if (strstr(t.s, needle)) return true;
    }
    return false;
}

/* ---- histogram buckets ------------------------------------------------------------ */

static const struct { uint64_t size; size_t bucket; } bucket_cases[] = {
    {0, 0}, {512, 0}, {1023, 0}, {1024, 1}, {2047, 1}, {2048, 2}, {4096, 3},
    {MiB - 1, 10}, {MiB, 11}, {512 * MiB - 1, 19}, {512 * MiB, 20}, {1024 * MiB - 1, 20},
    {1024 * MiB, 21}, {UINT64_MAX, 21},
};

/* Options with these thresholds and budget, the rest as SD_FRAG_OPTIONS_INIT. */
static sd_frag_options frag_opts(double gap_pct, double index, uint64_t max_memory)
{
    sd_frag_options o = SD_FRAG_OPTIONS_INIT;
    o.gap_threshold_pct = gap_pct;
    o.index_threshold = index;
    o.max_memory = max_memory;
    return o;
}

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
    ck_assert_str_eq(explanation(t).s, explanation(d).s);
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
    ck_assert_ptr_nonnull(strstr(explanation(d).s, "54.8% of 1.0 GiB reserved (>= 30%)"));
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
    sd_frag_options high_gap = frag_opts(60, 0.5, 0), high_index = frag_opts(30, 0.95, 0);
    sd_frag *f = sd_frag_create(s, &high_gap, &err);
    ck_assert_int_eq(sd_frag_device_at(f, 0)->verdict, SD_FRAG_COMPACT);
    ck_assert_ptr_nonnull(strstr(explanation(sd_frag_device_at(f, 0)).s, "(< 60%)"));
    sd_frag_free(f);
    f = sd_frag_create(s, &high_index, &err);
    ck_assert_int_eq(sd_frag_device_at(f, 0)->verdict, SD_FRAG_COMPACT);
    ck_assert_ptr_nonnull(strstr(explanation(sd_frag_device_at(f, 0)).s, "(< 0.95)"));
    sd_frag_free(f);
    sd_frag_options bad = frag_opts(30, 1.5, 0);
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
    ck_assert_str_eq(oom_note(o).s, "");
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
    ck_assert_str_eq(oom_note(o).s,
                     "trace entry 12 (alloc at 0x7f3b00000000): no live block there later");
    ck_assert_uint_eq(o->largest_free_bytes, 420 * MiB);
    ck_assert_int_eq(o->cause, SD_OOM_UNCLEAR);
    /* the trace's peak: 1 GiB reserved for 744 MiB live, 282 MiB over it (issue 26) */
    ck_assert(d->has_cost);
    ck_assert_uint_eq(d->cost_bytes, 282 * MiB);
    ck_assert_int_eq(d->verdict, SD_FRAG_FRAGMENTED);
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
    ck_assert_ptr_nonnull(strstr(oom_note(&d->ooms[0]).s, "last 64 oom entries"));
    sd_frag_free(f);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(legacy_full)
{
    sd_snapshot *s = load("legacy");
    sd_frag *f = analyse(s);
    const sd_frag_device *d = sd_frag_device_at(f, 0);
    ck_assert_int_eq(d->verdict, SD_FRAG_FULL);
    ck_assert_uint_eq(d->fig.reserved_bytes, 84 * MiB);
    ck_assert_uint_eq(d->fig.empty_cache_releasable_bytes, 2 * MiB);
    /* requested from history[0].real_size: 4096 + 512 bytes of rounding */
    ck_assert_uint_eq(d->fig.internal_waste_bytes, 4096 + 512);
    ck_assert(has_advice(d, "Full, not fragmented"));
    ck_assert(has_advice(d, "One snapshot cannot show a leak"));
    ck_assert_ptr_nonnull(strstr(explanation(d).s, "one snapshot cannot show a leak"));
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
    ck_assert_ptr_nonnull(strstr(explanation(t).s, "device 1: "));
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
    const sd_cuda_device *dev = sd_snapshot_device(s, 0);
    ck_assert_uint_eq(sd_frag_largest_segments(dev, 8, idx), 4);
    ck_assert_uint_eq(dev->segments[idx[0]].total_size, 60 * MiB);
    ck_assert_uint_lt(dev->segments[idx[0]].address, dev->segments[idx[1]].address);
    ck_assert_uint_eq(dev->segments[idx[2]].total_size, 20 * MiB);
    ck_assert_uint_eq(dev->segments[idx[3]].total_size, 2 * MiB);
    ck_assert_uint_eq(sd_frag_largest_segments(dev, 1, idx), 1);
    ck_assert_uint_eq(dev->segments[idx[0]].total_size, 60 * MiB);
    /* the map's order: most stranded first: B (10 MiB free), A (8), the private pool
     * (2 MiB free, never released), the small segment (0.5 MiB) */
    ck_assert_uint_eq(sd_frag_stranded_segments(dev, 8, idx), 4);
    ck_assert_uint_eq(sd_frag_segment_stranded(dev, &dev->segments[idx[0]]), 10 * MiB);
    ck_assert_uint_eq(sd_frag_segment_stranded(dev, &dev->segments[idx[1]]), 8 * MiB);
    ck_assert_uint_eq(sd_frag_segment_stranded(dev, &dev->segments[idx[2]]), 2 * MiB);
    ck_assert_uint_eq(dev->segments[idx[2]].total_size, 20 * MiB);
    ck_assert_uint_eq(sd_frag_segment_stranded(dev, &dev->segments[idx[3]]), 512 * 1024);
    ck_assert_uint_eq(d0->map.n_rows, 4);
    ck_assert_uint_eq(d0->map.rows[0].segment, idx[0]);
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
    ck_assert_str_eq(explanation(t).s, "nothing is reserved");
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
    ck_assert_str_eq(sd_frag_verdict_name(SD_FRAG_FULL), "full");
    ck_assert_str_eq(sd_frag_verdict_name(SD_FRAG_FRAGMENTED), "fragmented");
    ck_assert_str_eq(sd_oom_cause_name(SD_OOM_FRAGMENTATION), "fragmentation");
    ck_assert_str_eq(sd_oom_cause_name(SD_OOM_CAPACITY), "capacity");
    ck_assert_str_eq(sd_oom_cause_name(SD_OOM_UNCLEAR), "unclear");
}
END_TEST

/* ---- core figures of the segment map, the structured verdict, the budget ----------- */

/* A hand-made device: one 5 MiB segment at 16 MiB,
 *   [0, 1.5 MiB) allocated, [1.5, 2.5 MiB) free, [2.5, 3 MiB) pending-free, [3, 5 MiB) free.
 * In pages of 2 MiB:
 *   page 0 [0, 2):  1.5 MiB allocated, 0.5 MiB free          -> 75% allocated: full
 *   page 1 [2, 4):  0.5 free, 0.5 pending, 1 free            -> nothing allocated: pending
 *   page 2 [4, 5):  1 MiB free, span 1 MiB (the last page)   -> free
 * free bytes of the segment: 1 + 2 = 3 MiB, the sum of the pages' free bytes. */
static const sd_block hand_blocks[] = {
    {.address = 16 * MiB, .size = 3 * MiB / 2, .state = SD_BLOCK_ALLOCATED},
    {.address = 16 * MiB + 3 * MiB / 2, .size = MiB, .state = SD_BLOCK_INACTIVE},
    {.address = 16 * MiB + 5 * MiB / 2, .size = MiB / 2, .state = SD_BLOCK_PENDING_FREE},
    {.address = 19 * MiB, .size = 2 * MiB, .state = SD_BLOCK_INACTIVE},
};
static const sd_segment hand_segment = {.address = 16 * MiB, .total_size = 5 * MiB,
                                        .first_block = 0, .n_blocks = 4};
static const sd_cuda_device hand_device = {.device = 0, .segments = &hand_segment, .n_segments = 1,
                                      .blocks = hand_blocks, .n_blocks = 4};

START_TEST(map_page_size)
{
    ck_assert_uint_eq(sd_frag_map_page(5 * MiB, SD_FRAG_MAP_COLUMNS), 2 * MiB);
    ck_assert_uint_eq(sd_frag_map_page(128 * MiB, 64), 2 * MiB);       /* exactly 64 pages */
    ck_assert_uint_eq(sd_frag_map_page(129 * MiB, 64), 4 * MiB);       /* 65 would not fit */
    ck_assert_uint_eq(sd_frag_map_page(200 * MiB, 64), 4 * MiB);
    ck_assert_uint_eq(sd_frag_map_page(1024 * MiB, 64), 16 * MiB);
    ck_assert_uint_eq(sd_frag_map_page(0, 64), 2 * MiB);
}
END_TEST

START_TEST(map_pages_by_hand)
{
    sd_frag_page pages[SD_FRAG_MAP_COLUMNS];
    size_t n = sd_frag_segment_pages(&hand_device, &hand_segment, 2 * MiB, pages,
                                     SD_FRAG_MAP_COLUMNS);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(pages[0].span, 2 * MiB);
    ck_assert_uint_eq(pages[0].allocated, 3 * MiB / 2);
    ck_assert_uint_eq(pages[0].free, MiB / 2);
    ck_assert_uint_eq(pages[0].pending, 0);
    ck_assert_uint_eq(pages[1].allocated, 0);
    ck_assert_uint_eq(pages[1].free, 3 * MiB / 2);
    ck_assert_uint_eq(pages[1].pending, MiB / 2);
    ck_assert_uint_eq(pages[2].span, MiB);
    ck_assert_uint_eq(pages[2].free, MiB);
    ck_assert_int_eq(sd_frag_page_fill_of(&pages[0]), SD_PAGE_FULL);
    ck_assert_int_eq(sd_frag_page_fill_of(&pages[1]), SD_PAGE_PENDING);
    ck_assert_int_eq(sd_frag_page_fill_of(&pages[2]), SD_PAGE_FREE);
    ck_assert_uint_eq(sd_frag_segment_free(&hand_device, &hand_segment), 3 * MiB);
    ck_assert_uint_eq(pages[0].free + pages[1].free + pages[2].free, 3 * MiB);
    /* one page of 8 MiB holds the whole segment; max_pages caps the split */
    n = sd_frag_segment_pages(&hand_device, &hand_segment, 8 * MiB, pages, SD_FRAG_MAP_COLUMNS);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(pages[0].span, 5 * MiB);
    ck_assert_int_eq(sd_frag_page_fill_of(&pages[0]), SD_PAGE_HALF);   /* 30% allocated */
    ck_assert_uint_eq(sd_frag_segment_pages(&hand_device, &hand_segment, 1 * MiB, pages, 2), 2);
    sd_frag_page low = {.allocated = MiB / 4, .span = 2 * MiB}, none = {0};
    ck_assert_int_eq(sd_frag_page_fill_of(&low), SD_PAGE_LOW);
    ck_assert_int_eq(sd_frag_page_fill_of(&none), SD_PAGE_NONE);
}
END_TEST

START_TEST(pool_names)
{
    char name[SD_FRAG_POOL_NAME];
    sd_segment seg = {.total_size = MiB};
    sd_frag_pool_name(&seg, name, sizeof name);
    ck_assert_str_eq(name, "large");
    seg.is_small = true;
    sd_frag_pool_name(&seg, name, sizeof name);
    ck_assert_str_eq(name, "small");
    seg.pool_id[0] = 1;
    seg.pool_id[1] = -2;
    sd_frag_pool_name(&seg, name, sizeof name);
    ck_assert_str_eq(name, "pool (1,-2)");
}
END_TEST

START_TEST(map_of_a_fixture)
{
    sd_snapshot *s = load("multidev");
    sd_frag *f = analyse(s);
    const sd_frag_device *d0 = sd_frag_device_at(f, 0);
    const sd_cuda_device *dev = sd_snapshot_device(s, 0);
    const sd_frag_map *m = &d0->map;
    /* 60, 60, 20 (pool (1,2)) and 2 MiB: pages of 2 MiB, 30 in the largest row */
    ck_assert_uint_eq(m->n_segments, 4);
    ck_assert_uint_eq(m->n_rows, 4);
    ck_assert_uint_eq(m->page_bytes, 2 * MiB);
    ck_assert_uint_eq(m->rows[0].n_pages, 30);
    ck_assert_uint_eq(m->rows[2].n_pages, 10);
    ck_assert_uint_eq(m->rows[3].n_pages, 1);
    ck_assert_str_eq(m->rows[2].pool, "pool (1,2)");
    ck_assert_str_eq(m->rows[3].pool, "small");
    for (size_t i = 0; i < m->n_rows; i++) {
        const sd_frag_map_row *r = &m->rows[i];
        const sd_segment *seg = &dev->segments[r->segment];
        ck_assert_uint_eq(r->address, seg->address);
        ck_assert_uint_eq(r->total_size, seg->total_size);
        uint64_t free_bytes = 0, span = 0;
        for (size_t p = 0; p < r->n_pages; p++) {
            free_bytes += r->pages[p].free;
            span += r->pages[p].span;
        }
        ck_assert_uint_eq(r->free_bytes, free_bytes);
        ck_assert_uint_eq(span, seg->total_size);
        /* the runs of equal state cover the blocks in order, neighbours differ */
        uint64_t run_bytes = 0, run_blocks = 0;
        for (size_t k = 0; k < r->n_runs; k++) {
            run_bytes += r->runs[k].bytes;
            run_blocks += r->runs[k].blocks;
            if (k) ck_assert_int_ne(r->runs[k].state, r->runs[k - 1].state);
        }
        ck_assert_uint_eq(run_bytes, seg->total_size);
        ck_assert_uint_eq(run_blocks, seg->n_blocks);
    }
    ck_assert_uint_eq(sd_frag_total(f)->map.n_rows, 0);
    sd_frag_free(f);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(reasons_are_codes_with_numbers)
{
    sd_snapshot *s = load("compact");
    sd_frag *f = analyse(s);
    const sd_frag_why *y = &sd_frag_device_at(f, 0)->why;
    ck_assert_int_eq(y->reason, SD_FRAG_WHY_ROOM_TO_SPARE);
    ck_assert_int_eq(y->device, -1);
    ck_assert(!y->gap_over);
    ck_assert_uint_eq(y->reserved_bytes, 122 * MiB);
    ck_assert_uint_eq(y->gap_bytes, 18 * MiB + 512 * KiB);
    ck_assert_uint_eq(y->largest_free_bytes, 10 * MiB);
    ck_assert_double_eq_tol(y->gap_threshold_pct, 30.0, 1e-12);
    sd_frag_free(f);
    sd_snapshot_free(s);

    s = load("fragmented");
    f = analyse(s);
    const sd_frag_device *d = sd_frag_device_at(f, 0);
    ck_assert_int_eq(d->why.reason, SD_FRAG_WHY_STRANDED);
    ck_assert(d->why.gap_over && d->why.index_over);
    ck_assert_uint_eq(d->why.stranded_bytes, d->fig.stranded_free_bytes);
    ck_assert_double_eq_tol(d->why.stranded_threshold_pct, 10.0, 1e-12);
    ck_assert_uint_eq(d->n_advice, 4);
    ck_assert_int_eq(d->advice[0].code, SD_ADVICE_EXPANDABLE_SEGMENTS);
    ck_assert(d->advice[0].settings_recorded);
    ck_assert_int_eq(d->advice[1].code, SD_ADVICE_MAX_SPLIT_SIZE);
    ck_assert_uint_eq(d->advice[1].bytes, 561 * MiB);
    ck_assert_uint_eq(d->advice[1].of_bytes, d->fig.stranded_free_bytes);
    ck_assert_int_eq(d->advice[2].code, SD_ADVICE_FIXED_SHAPES);
    ck_assert_uint_eq(d->advice[2].free_blocks, 61);
    ck_assert_uint_eq(d->advice[2].n_buckets, 10);
    ck_assert_uint_eq(d->advice[2].first_bucket, 3);         /* 4-8 KiB */
    ck_assert_uint_eq(d->advice[2].last_bucket, 16);         /* 32-64 MiB */
    ck_assert_int_eq(d->advice[3].code, SD_ADVICE_NO_EMPTY_CACHE);
    ck_assert_uint_eq(d->advice[3].bytes, 0);
    ck_assert_uint_eq(d->advice[3].of_bytes, 1026 * MiB);
    sd_frag_free(f);
    sd_frag_options high_gap = frag_opts(60, 0.5, 0), high_index = frag_opts(30, 0.95, 0);
    f = sd_frag_create(s, &high_gap, NULL);
    ck_assert_int_eq(sd_frag_device_at(f, 0)->why.reason, SD_FRAG_WHY_ROOM_TO_SPARE);
    sd_frag_free(f);
    f = sd_frag_create(s, &high_index, NULL);
    ck_assert_int_eq(sd_frag_device_at(f, 0)->why.reason, SD_FRAG_WHY_LARGE_PIECES);
    ck_assert(!sd_frag_device_at(f, 0)->why.index_over);
    sd_frag_free(f);
    sd_snapshot_free(s);

    s = load("oom");
    f = analyse(s);
    d = sd_frag_device_at(f, 0);
    ck_assert_int_eq(d->why.reason, SD_FRAG_WHY_OOM);
    ck_assert_ptr_eq(d->why.oom, &d->ooms[0]);
    ck_assert(!d->advice[0].settings_recorded);
    sd_frag_free(f);
    sd_snapshot_free(s);

    s = load("legacy");
    f = analyse(s);
    d = sd_frag_device_at(f, 0);
    ck_assert_int_eq(d->why.reason, SD_FRAG_WHY_LITTLE_FREE);
    ck_assert_double_eq_tol(d->why.free_threshold_pct, 5.0, 1e-12);
    ck_assert_uint_eq(d->n_advice, 2);
    ck_assert_int_eq(d->advice[0].code, SD_ADVICE_GROWTH);
    ck_assert_int_eq(d->advice[1].code, SD_ADVICE_NO_EMPTY_CACHE);
    sd_frag_free(f);
    sd_snapshot_free(s);

    s = load("multidev");
    f = analyse(s);
    const sd_frag_device *t = sd_frag_total(f), *d1 = sd_frag_device_at(f, 1);
    ck_assert_int_eq(t->why.device, 1);
    ck_assert_int_eq(t->why.reason, d1->why.reason);
    ck_assert_int_eq(d1->why.device, -1);
    sd_frag_free(f);
    sd_snapshot_free(s);

    s = load("empty");
    f = analyse(s);
    ck_assert_int_eq(sd_frag_total(f)->why.reason, SD_FRAG_WHY_NOTHING_RESERVED);
    sd_frag_free(f);
    sd_snapshot_free(s);
}
END_TEST

/* The words are the renderers': numbers are shown with enough decimals to stay on the
 * side of the threshold they are on. */
START_TEST(reasons_worded)
{
    sd_frag_why y = {.reason = SD_FRAG_WHY_ROOM_TO_SPARE, .device = -1,
                     .reserved_bytes = 100 * MiB, .gap_bytes = 30 * MiB, .gap_pct = 29.996,
                     .gap_threshold_pct = 30, .largest_free_bytes = MiB, .free_bytes = 2 * MiB};
    char buf[SD_FRAG_TEXT_MAX];
    sd_frag_explain(&y, buf, sizeof buf);
    ck_assert_str_eq(buf, "gap 30.0 MiB is 29.996% of 100.0 MiB reserved (< 30%), with room "
                          "to spare (largest free block 1.0 MiB of 2.0 MiB free)");
    y.device = 3;
    y.reason = SD_FRAG_WHY_TINY_LARGEST;
    y.room_bytes = 2 * MiB;
    sd_frag_explain(&y, buf, sizeof buf);
    ck_assert_ptr_nonnull(strstr(buf, "device 3: gap"));
    ck_assert_ptr_nonnull(strstr(buf, "(1048576 bytes, under 2 MiB)"));
    /* snprintf rules: truncated, NUL-terminated, the full length returned */
    char small[8];
    size_t need = sd_frag_explain(&y, small, sizeof small);
    ck_assert_uint_gt(need, sizeof small);
    ck_assert_str_eq(small, "device ");
    sd_frag_advice a = {.code = SD_ADVICE_FIXED_SHAPES, .free_blocks = 40, .n_buckets = 5,
                        .first_bucket = 0, .last_bucket = SD_FRAG_BUCKETS - 1};
    sd_frag_advice_text(&a, buf, sizeof buf);
    ck_assert_ptr_nonnull(strstr(buf, "40 free blocks spread over 5 size classes (< 1 KiB to "
                                      ">= 1.0 GiB)"));
}
END_TEST

START_TEST(oom_stops_are_codes)
{
    sd_snapshot *s = load("oom_broken");
    sd_frag *f = analyse(s);
    const sd_frag_oom *o = &sd_frag_device_at(f, 0)->ooms[0];
    ck_assert_int_eq(o->stop, SD_REPLAY_NO_BLOCK_LATER);
    ck_assert_uint_eq(o->stop_index, 12);
    ck_assert_int_eq(o->stop_action, SD_ACT_ALLOC);
    ck_assert_uint_eq(o->stop_addr, 0x7f3b00000000ULL);
    sd_frag_free(f);
    sd_snapshot_free(s);
    s = load("oom_many");
    f = analyse(s);
    const sd_frag_device *d = sd_frag_device_at(f, 0);
    ck_assert_int_eq(d->ooms[0].stop, SD_REPLAY_PAST_LIMIT);
    ck_assert_int_eq(d->ooms[65].stop, SD_REPLAY_DONE);
    sd_frag_free(f);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(budget_is_kept)
{
    sd_snapshot *s = load("oom");
    sd_error err;
    sd_error_clear(&err);
    sd_frag_options tight = frag_opts(30, 0.5, 4 * KiB);
    ck_assert_ptr_null(sd_frag_create(s, &tight, &err));
    ck_assert_int_eq(err.code, SD_ENOMEM);
    ck_assert_ptr_null(sd_frag_create(s, &tight, NULL));     /* no error record: no crash */
    /* the smallest budget that works, found by bisection, gives the full analysis; one
     * byte less fails cleanly */
    uint64_t lo = 4 * KiB, hi = 64 * MiB;
    sd_frag_options o = frag_opts(30, 0.5, hi);
    sd_frag *f = sd_frag_create(s, &o, NULL);
    ck_assert_ptr_nonnull(f);
    sd_frag_free(f);
    while (hi - lo > 1) {
        o.max_memory = lo + (hi - lo) / 2;
        f = sd_frag_create(s, &o, NULL);
        if (f) hi = o.max_memory;
        else lo = o.max_memory;
        sd_frag_free(f);
    }
    o.max_memory = hi;
    f = sd_frag_create(s, &o, NULL);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(sd_frag_device_at(f, 0)->why.reason, SD_FRAG_WHY_OOM);
    sd_frag_free(f);
    o.max_memory = hi - 1;
    ck_assert_ptr_null(sd_frag_create(s, &o, NULL));
    sd_snapshot_free(s);
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
    tcase_add_test(tc, legacy_full);
    tcase_add_test(tc, multidev_total_and_pools);
    tcase_add_test(tc, brief_matches_total);
    tcase_add_test(tc, empty_snapshot);
    suite_add_tcase(s, tc);
    tc = tcase_create("oom");
    tcase_add_test(tc, oom_replayed);
    tcase_add_test(tc, oom_replay_stops_at_a_conflict);
    tcase_add_test(tc, oom_replay_limit);
    suite_add_tcase(s, tc);
    tc = tcase_create("core_figures");
    tcase_add_test(tc, map_page_size);
    tcase_add_test(tc, map_pages_by_hand);
    tcase_add_test(tc, pool_names);
    tcase_add_test(tc, map_of_a_fixture);
    tcase_add_test(tc, reasons_are_codes_with_numbers);
    tcase_add_test(tc, reasons_worded);
    tcase_add_test(tc, oom_stops_are_codes);
    tcase_add_test(tc, budget_is_kept);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return sdp_test_main(frag_suite); }
