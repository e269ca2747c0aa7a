/* check_ranks_oom.c - unit tests of issue 19's library parts: two one-device snapshots of
 * other ordinals diff as one device (diff.h), identical ranks have no outlier (ranks.h),
 * the max-ooms limit (gate.h), the oom figures and verdicts on testdata/oom/ (frag.h;
 * expected values from testdata/make_oom_fixtures.py, checked there by tests/truth/truth_frag.py)
 * and keys fitted to a column without cutting a site (render/format.h). */
#include <string.h>

#include "check_helpers.h"
#include "render/format.h"
#include "snapdiff/diff.h"
#include "snapdiff/frag.h"
#include "snapdiff/gate.h"
#include "snapdiff/ranks.h"

#define MiB (1024ull * 1024)

static sd_snapshot *rank(const char *step, int r)
{
    return sdp_test_load_ok("%s/ranks_devices/%s/rank%d.pickle", SNAPDIFF_TESTDATA, step, r);
}

START_TEST(one_device_files_pair_whatever_their_ordinals)
{
    sd_snapshot *a = rank("step100", 0), *b = rank("step200", 2);
    sd_diff_options o;
    memset(&o, 0, sizeof o);
    sd_error err;
    sd_diff *d = sd_diff_create(a, b, &o, &err);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(sd_diff_device_count(d), 1);
    const sd_diff_device *dd = sd_diff_device_at(d, 0);
    ck_assert(dd->in_old && dd->in_new);
    ck_assert_int_eq(dd->device, 0);
    ck_assert_int_eq(dd->device_new, 2);
    /* rank 2: 27 MiB + the 6 MiB leak; rank 0 at step 100: 25 MiB */
    ck_assert_int_eq(sd_diff_totals_of(d)->delta.allocated, (int64_t)(8 * MiB));
    ck_assert_uint_eq(sd_diff_warning_count(d), 0);
    sd_diff_free(d);
    sd_snapshot_free(a);
    sd_snapshot_free(b);
}
END_TEST

START_TEST(same_ordinals_are_not_relabelled)
{
    sd_snapshot *a = rank("step100", 1), *b = rank("step200", 1);
    sd_diff_options o;
    memset(&o, 0, sizeof o);
    sd_diff *d = sd_diff_create(a, b, &o, NULL);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(sd_diff_device_count(d), 1);
    ck_assert_int_eq(sd_diff_device_at(d, 0)->device_new, 1);
    sd_diff_free(d);
    sd_snapshot_free(a);
    sd_snapshot_free(b);
}
END_TEST

START_TEST(identical_ranks_have_no_outlier)
{
    sd_stats t[4];
    memset(t, 0, sizeof t);
    for (int i = 0; i < 4; i++) t[i].allocated_bytes = t[i].reserved_bytes = 64 * MiB;
    sd_rank_spread sp;
    sd_rank_spread_of_totals(t, 4, &sp);
    ck_assert_uint_eq(sp.furthest, SD_RANK_NONE);
    t[2].allocated_bytes = 70 * MiB;
    sd_rank_spread_of_totals(t, 4, &sp);
    ck_assert_uint_eq(sp.furthest, 2);
    ck_assert_int_eq(sp.furthest_delta, (int64_t)(6 * MiB));
}
END_TEST

START_TEST(names_that_are_ranks)
{
    const char *ranks[] = {"d/rank0.pickle", "d/rank1.pickle", "d/rank2.pickle"};
    const char *zip[] = {"j.zip:rank0/step200.pickle", "j.zip:rank1/step200.pickle"};
    const char *series[] = {"step100_rank0.pickle", "step200_rank0.pickle"};
    const char *steps[] = {"step100_rank0.pickle", "step200_rank1.pickle"};
    const char *plain[] = {"a.pickle", "b.pickle"};
    ck_assert(sd_ranks_names_are_ranks(ranks, 3));
    ck_assert(sd_ranks_names_are_ranks(zip, 2));
    ck_assert(!sd_ranks_names_are_ranks(series, 2));   /* the same rank twice */
    ck_assert(!sd_ranks_names_are_ranks(steps, 2));    /* differ by more than the rank */
    ck_assert(!sd_ranks_names_are_ranks(plain, 2));
    ck_assert(!sd_ranks_names_are_ranks(ranks, 1));
}
END_TEST

START_TEST(max_ooms_limit)
{
    sd_limits *l = sd_limits_create();
    ck_assert_ptr_nonnull(l);
    sd_limit_id id;
    uint64_t v = 1;
    ck_assert(sd_limit_find("max-ooms", &id) && id == SD_LIMIT_MAX_OOMS);
    ck_assert(sd_limit_unit_of(id) == SD_UNIT_COUNT);
    ck_assert(sd_limit_set(l, id, "0") && sd_limits_get(l, id, &v, NULL) && v == 0);
    ck_assert(sd_limit_set(l, id, "3") && sd_limits_get(l, id, &v, NULL) && v == 3);
    ck_assert(!sd_limit_set(l, id, "-1"));
    ck_assert(!sd_limit_set(l, id, "1MiB"));
    ck_assert(!sd_limit_set(l, id, ""));
    sd_snapshot *a = sdp_test_load_ok("%s/frag/compact.pickle", SNAPDIFF_TESTDATA);
    sd_snapshot *b = sdp_test_load_ok("%s/oom/fragmentation.pickle", SNAPDIFF_TESTDATA);
    sd_diff_options o;
    memset(&o, 0, sizeof o);
    sd_diff *d = sd_diff_create(a, b, &o, NULL);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(sd_diff_totals_of(d)->new_ooms, 1);
    sd_gate g;
    sd_limit_set(l, id, "0");
    ck_assert_int_eq(sd_gate_diff(d, l, &g), SD_OK);
    ck_assert(!g.pass && g.n_results == 1 && g.results[0].measured == 1);
    ck_assert_ptr_eq(sd_gate_result(&g, id), &g.results[0]);
    ck_assert_uint_eq(g.n_offenders, 0);       /* an oom names no growing group */
    sd_gate_release(&g);
    sd_limit_set(l, id, "1");
    ck_assert_int_eq(sd_gate_diff(d, l, &g), SD_OK);
    ck_assert(g.pass && !g.results[0].near);
    sd_gate_release(&g);
    sd_limits_free(l);
    sd_diff_free(d);
    sd_snapshot_free(a);
    sd_snapshot_free(b);
}
END_TEST

static const sd_frag_oom *the_oom(const char *name, sd_frag **f, sd_snapshot **s)
{
    *s = sdp_test_load_ok("%s/oom/%s.pickle", SNAPDIFF_TESTDATA, name);
    sd_frag_options o;
    memset(&o, 0, sizeof o);
    *f = sd_frag_create(*s, &o, NULL);
    ck_assert_ptr_nonnull(*f);
    const sd_frag_device *d = sd_frag_device_at(*f, 0);
    ck_assert_uint_eq(d->n_ooms, 1);
    return &d->ooms[0];
}

START_TEST(oom_figures_and_verdicts)
{
    sd_frag *f;
    sd_snapshot *s;
    const sd_frag_oom *o = the_oom("capacity_start", &f, &s);
    ck_assert(o->cause == SD_OOM_CAPACITY && o->at_run_start && o->replayed);
    ck_assert_uint_eq(o->allocator_free_bytes, 48 * MiB);
    ck_assert_uint_eq(o->live_bytes, 2000 * MiB);
    ck_assert_uint_eq(o->n_sites, 2);
    ck_assert_uint_eq(o->sites[0].bytes, 1200 * MiB);
    const sd_frag_device *d = sd_frag_device_at(f, 0);
    bool at_start = false;
    for (size_t i = 0; i < d->n_advice; i++) {
        ck_assert(d->advice[i].code != SD_ADVICE_GROWTH);
        ck_assert(d->advice[i].code != SD_ADVICE_EXPANDABLE_SEGMENTS);
        at_start = at_start || d->advice[i].code == SD_ADVICE_OOM_AT_START;
    }
    ck_assert(at_start);
    sd_frag_free(f);
    sd_snapshot_free(s);

    o = the_oom("fragmentation", &f, &s);
    ck_assert(o->cause == SD_OOM_FRAGMENTATION && !o->at_run_start);
    ck_assert_uint_eq(o->stranded_free_bytes, 350 * MiB);
    ck_assert_uint_eq(o->cached_free_bytes, 0);
    ck_assert_uint_eq(o->largest_free_bytes, 200 * MiB);
    sd_frag_free(f);
    sd_snapshot_free(s);

    o = the_oom("both", &f, &s);
    ck_assert(o->cause == SD_OOM_BOTH);
    ck_assert_uint_eq(o->cached_free_bytes, 64 * MiB);
    ck_assert_uint_eq(o->stranded_free_bytes, 336 * MiB);
    ck_assert_str_eq(sd_oom_cause_name(o->cause), "both");
    sd_frag_free(f);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(keys_fit_without_cutting_a_site)
{
    char buf[512];
    const char *k = "/home/alice/a/very/long/path/to/the/project/models/model.py:340 forward";
    ck_assert_str_eq(sdp_fit_key(k, 200, buf, sizeof buf), k);
    ck_assert_str_eq(sdp_fit_key(k, 40, buf, sizeof buf), ".../project/models/model.py:340 forward");
    /* narrower than the site: the site stays whole, the path goes */
    ck_assert_str_eq(sdp_fit_key(k, 10, buf, sizeof buf), ".../model.py:340 forward");
    ck_assert_str_eq(sdp_fit_key("autograd BmmBackward0", 5, buf, sizeof buf),
                     "autograd BmmBackward0");
    const char *deep = "/x/y/z/model.py:340 forward <- /x/y/z/train.py:12 step <- /x/y/z/main.py:3 main";
    /* the site fits whole; the callers that do not fit are left out */
    ck_assert_str_eq(sdp_fit_key(deep, 50, buf, sizeof buf), "/x/y/z/model.py:340 forward <- ...");
    ck_assert_str_eq(sdp_fit_key(deep, 60, buf, sizeof buf),
                     "/x/y/z/model.py:340 forward <- .../train.py:12 step <- ...");
}
END_TEST

static Suite *make(void)
{
    Suite *s = suite_create("ranks_oom");
    TCase *tc = tcase_create("ranks_oom");
    tcase_add_test(tc, one_device_files_pair_whatever_their_ordinals);
    tcase_add_test(tc, same_ordinals_are_not_relabelled);
    tcase_add_test(tc, identical_ranks_have_no_outlier);
    tcase_add_test(tc, names_that_are_ranks);
    tcase_add_test(tc, max_ooms_limit);
    tcase_add_test(tc, oom_figures_and_verdicts);
    tcase_add_test(tc, keys_fit_without_cutting_a_site);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return sdp_test_main(make); }
