/* check_series.c - unit tests of the group table (groups.h) and the series (series.h):
 * Theil-Sen and Mann-Kendall against values tests/truth/truth_series.py computed (its own
 * implementation: statistics.median over the pairwise slopes, collections.Counter for the
 * ties, math.erfc), the verdict rules, and the series of testdata/series/ fixtures. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "render/series_render.h"
#include "snapdiff/groups.h"
#include "snapdiff/load.h"
#include "snapdiff/series.h"

#include "check_helpers.h"

#define NEAR(a, b) ck_assert_double_eq_tol((a), (b), 1e-9)

/* python3 -c 'import truth_series as T; print(T.theil_sen(y), T.mann_kendall(y))' */
static const struct {
    double y[10];
    size_t n;
    double slope;
    int64_t s;
    double var, z, p;
} truth[] = {
    {{1, 2, 3, 4, 5}, 5, 1.0, 10, 16.666666666666668, 2.2045407685048604, 0.027486336111510353},
    {{5, 1, 4, 2, 3, 3, 7}, 7, 0.5, 4, 43.333333333333336, 0.45573271518764996,
     0.6485821935696237},
    {{10, 10, 10, 10}, 4, 0.0, 0, 0.0, 0.0, 1.0},
    {{3, 1, 2, 2, 2, 5, 6, 0, 9, 9}, 10, 1.0, 19, 120.33333333333333, 1.6408902387494628,
     0.10082020163840165},
};

START_TEST(theil_sen_and_mann_kendall)
{
    for (size_t i = 0; i < SDP_TEST_LEN(truth); i++) {
        double slope = -1;
        ck_assert(sd_theil_sen(NULL, truth[i].y, truth[i].n, &slope));
        NEAR(slope, truth[i].slope);
        sd_series_trend t;
        sd_mann_kendall(truth[i].y, truth[i].n, &t);
        ck_assert_int_eq(t.mk_s, truth[i].s);
        NEAR(t.mk_var, truth[i].var);
        NEAR(t.mk_z, truth[i].z);
        NEAR(t.p_value, truth[i].p);
        NEAR(t.confidence, 1 - truth[i].p);
    }
    /* with x: T.theil_sen([1,3,2,6], [0,10,20,40]) == 0.1125 */
    double x[] = {0, 10, 20, 40}, y[] = {1, 3, 2, 6}, slope = 0;
    ck_assert(sd_theil_sen(x, y, 4, &slope));
    NEAR(slope, 0.1125);
    /* equal x only: no slope */
    double same[] = {5, 5};
    ck_assert(!sd_theil_sen(same, y, 2, &slope));
}
END_TEST

static sd_groups *load_groups(const char *dir, int step)
{
    sd_snapshot *s = sdp_test_load_ok(SNAPDIFF_TESTDATA "/series/%s/step_%04d.pickle", dir, step);
    sd_attrib_options ao = {.group_by = SD_GROUP_SITE};
    sd_error err;
    sd_error_clear(&err);
    sd_groups *g = sd_groups_create(s, &ao, 0, &err);
    ck_assert_msg(g, "%s", err.text);
    sd_snapshot_free(s);     /* the table must stand alone */
    return g;
}

static sd_series *load_series(const char *dir, sd_groups **tables, const sd_series_options *o)
{
    for (int i = 0; i < 10; i++) tables[i] = load_groups(dir, 100 * (i + 1));
    sd_error err;
    sd_error_clear(&err);
    sd_series *s = sd_series_create((const sd_groups *const *)tables, 10, o, &err);
    ck_assert_msg(s, "%s", err.text);
    return s;
}

static const sd_series_group *find(const sd_series *s, const char *suffix)
{
    for (size_t i = 0; i < sd_series_group_count(s); i++) {
        const char *k = sd_series_group_at(s, i)->key;
        size_t lk = strlen(k), ls = strlen(suffix);
        if (lk >= ls && strcmp(k + lk - ls, suffix) == 0) return sd_series_group_at(s, i);
    }
    return NULL;
}

START_TEST(group_table_stands_alone)
{
    sd_groups *g = load_groups("leak", 300);
    ck_assert_int_eq(sd_groups_row_count(g), 5);
    ck_assert_int_eq(sd_groups_device_count(g), 1);
    /* rows sorted by key; the leak: 4 + 2 blocks of 1 MiB at snapshot 3 */
    for (size_t i = 1; i < sd_groups_row_count(g); i++)
        ck_assert(strcmp(sd_groups_row(g, i - 1)->key, sd_groups_row(g, i)->key) < 0);
    const sd_group_row *r = sd_groups_find(g, "/home/alice/proj/metrics.py:23 update", 0);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->bytes, 6u << 20);
    ck_assert_uint_eq(r->blocks, 6);
    ck_assert(r->has_site);
    ck_assert_str_eq(r->site.name, "update");
    ck_assert_int_eq(r->site.line, 23);
    ck_assert_ptr_null(sd_groups_find(g, "/home/alice/proj/metrics.py:23 update", 1));
    int64_t t = 0;
    ck_assert(sd_groups_last_time(g, &t));
    ck_assert_int_eq(t, 1717000000000000LL + 2 * 5000000LL);
    sd_groups_free(g);
}
END_TEST

START_TEST(leak_under_noise)
{
    sd_groups *tables[10];
    sd_series_options o = {.min_slope = SD_SERIES_DEFAULT_MIN_SLOPE,
                           .min_confidence = SD_SERIES_DEFAULT_CONFIDENCE};
    sd_series *s = load_series("leak", tables, &o);
    const sd_series_group *leak = find(s, "metrics.py:23 update");
    const sd_series_group *act = find(s, "model.py:44 forward");
    ck_assert_ptr_nonnull(leak);
    ck_assert_ptr_nonnull(act);
    ck_assert_int_eq(leak->verdict, SD_TREND_GROWING);
    NEAR(leak->trend.slope, 1 << 20);
    ck_assert_int_eq(leak->trend.mk_s, 45);
    ck_assert_int_ne(act->verdict, SD_TREND_GROWING);
    ck_assert_ptr_eq(sd_series_group_at(s, 0), leak);     /* culprit first */
    ck_assert_int_eq(sd_series_verdict_count(s, SD_TREND_GROWING), 1);
    /* the rule's edge: a minimum slope just above the leak's turns it down */
    sd_series_free(s);
    o.min_slope = (1 << 20) + 1;
    for (int i = 0; i < 10; i++) sd_groups_free(tables[i]);
    s = load_series("leak", tables, &o);
    ck_assert_int_eq(sd_series_verdict_count(s, SD_TREND_GROWING), 0);
    /* range 9 MiB <= (1 MiB + 1) * 9: it did not move more than the smallest leak would */
    ck_assert_int_eq(find(s, "metrics.py:23 update")->verdict, SD_TREND_FLAT);
    sd_series_free(s);
    for (int i = 0; i < 10; i++) sd_groups_free(tables[i]);
}
END_TEST

START_TEST(clean_flags_nothing)
{
    sd_groups *tables[10];
    sd_series *s = load_series("clean", tables, NULL);
    ck_assert_int_eq(sd_series_verdict_count(s, SD_TREND_GROWING), 0);
    ck_assert_int_eq(sd_series_verdict_count(s, SD_TREND_SHRINKING), 0);
    ck_assert_int_eq(find(s, "model.py:44 forward")->verdict, SD_TREND_NOISY);
    ck_assert_int_eq(find(s, "metrics.py:23 update")->verdict, SD_TREND_FLAT);
    ck_assert(!sd_series_capacity_of(s)->has_estimate);
    sd_series_free(s);
    for (int i = 0; i < 10; i++) sd_groups_free(tables[i]);
}
END_TEST

START_TEST(refuses_bad_series)
{
    sd_groups *tables[10];
    sd_series *s = load_series("clean", tables, NULL);
    sd_series_free(s);
    sd_error err;
    sd_error_clear(&err);
    ck_assert_ptr_null(sd_series_create((const sd_groups *const *)tables, 2, NULL, &err));
    ck_assert_int_eq(err.code, SD_EUSAGE);
    uint64_t steps[10] = {1, 2, 3, 3, 4, 5, 6, 7, 8, 9};
    sd_series_options o = {.steps = steps, .min_confidence = 0.99};
    sd_error_clear(&err);
    ck_assert_ptr_null(sd_series_create((const sd_groups *const *)tables, 10, &o, &err));
    ck_assert_int_eq(err.code, SD_EUSAGE);
    for (int i = 0; i < 10; i++) sd_groups_free(tables[i]);
}
END_TEST

START_TEST(sparklines)
{
    uint64_t v[] = {0, 1, 2, 3, 4, 5, 6, 7}, flat[] = {5, 5, 5};
    char buf[64];
    sdp_sparkline(v, 8, 32, false, buf, sizeof buf);
    ck_assert_str_eq(buf, "_.-~=+*#");
    sdp_sparkline(v, 8, 4, false, buf, sizeof buf);   /* buckets show their maximum */
    ck_assert_str_eq(buf, ".~+#");
    sdp_sparkline(flat, 3, 32, true, buf, sizeof buf);
    ck_assert_str_eq(buf, "\u2581\u2581\u2581");
    sdp_sparkline(v, 8, 32, true, buf, sizeof buf);
    ck_assert_str_eq(buf, "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588");
}
END_TEST

/* load.h's `each`: every snapshot handed over in its loading thread, then freed. */
typedef struct each_log {
    sd_groups *tables[3];
    size_t calls[3];
} each_log;

static sd_status reduce_each(void *ctx, size_t input, size_t member, const sd_snapshot *snap,
                             sd_error *err)
{
    each_log *log = ctx;
    ck_assert_uint_lt(input, 3);
    ck_assert_uint_eq(member, 0);
    sd_attrib_options ao = {.group_by = SD_GROUP_SITE};
    log->tables[input] = sd_groups_create(snap, &ao, 0, err);
    log->calls[input]++;
    return log->tables[input] ? SD_OK : err->code;
}

START_TEST(loader_hands_over_each_snapshot)
{
    const char *specs[3] = {SNAPDIFF_TESTDATA "/series/leak/step_0100.pickle",
                            SNAPDIFF_TESTDATA "/series/leak/step_0200.pickle",
                            SNAPDIFF_TESTDATA "/series/leak/no-such.pickle"};
    each_log log = {0};
    sd_loaded out[3];
    sd_loader_options lo = {.jobs = 3, .all_members = true, .each = reduce_each, .ctx = &log};
    ck_assert_int_ne(sd_load_all(specs, 3, &lo, out), SD_OK);
    for (size_t i = 0; i < 2; i++) {
        ck_assert_int_eq(out[i].status, SD_OK);
        ck_assert_uint_eq(out[i].n_snaps, 0);      /* not kept */
        ck_assert_uint_eq(out[i].n_passed, 1);
        ck_assert_uint_eq(log.calls[i], 1);
        ck_assert_ptr_nonnull(log.tables[i]);
    }
    ck_assert_int_ne(out[2].status, SD_OK);
    ck_assert_uint_eq(log.calls[2], 0);
    /* the leak: 4 MiB, then 5 MiB */
    const char *leak = "/home/alice/proj/metrics.py:23 update";
    ck_assert_uint_eq(sd_groups_find(log.tables[0], leak, 0)->bytes, 4u << 20);
    ck_assert_uint_eq(sd_groups_find(log.tables[1], leak, 0)->bytes, 5u << 20);
    sd_loaded_free(out, 3);
    for (size_t i = 0; i < 2; i++) sd_groups_free(log.tables[i]);
}
END_TEST

static Suite *make(void)
{
    Suite *s = suite_create("series");
    TCase *tc = tcase_create("series");
    tcase_add_test(tc, theil_sen_and_mann_kendall);
    tcase_add_test(tc, group_table_stands_alone);
    tcase_add_test(tc, leak_under_noise);
    tcase_add_test(tc, clean_flags_nothing);
    tcase_add_test(tc, refuses_bad_series);
    tcase_add_test(tc, sparklines);
    tcase_add_test(tc, loader_hands_over_each_snapshot);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return sdp_test_main(make); }
