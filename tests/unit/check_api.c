/* check_api.c - the contract every public entry point keeps (issue 8): a NULL sd_error
 * pointer is accepted wherever one is taken, on success and on failure, and failure
 * still comes back as NULL / a status. Each call below is made to fail on purpose, then
 * to succeed, with err == NULL; a crash or a sanitizer report fails the test. */
#include <stdlib.h>
#include <string.h>

#include "check_helpers.h"
#include "snapdiff/pickle.h"      /* experimental: not in the umbrella */
#include "snapdiff/snapdiff.h"    /* the whole stable API */

#define FIXTURE(name) SNAPDIFF_TESTDATA "/" name
static const char NOT_A_PICKLE[] = "cmake_minimum_required(VERSION 3.16)\n";

START_TEST(null_error_pickle_and_load)
{
    ck_assert_ptr_null(sd_pickle_parse((const uint8_t *)NOT_A_PICKLE, sizeof NOT_A_PICKLE - 1,
                                       NULL, NULL));
    ck_assert_ptr_null(sd_snapshot_load_buffer((const uint8_t *)NOT_A_PICKLE,
                                               sizeof NOT_A_PICKLE - 1, "text", NULL, NULL));
    ck_assert_ptr_null(sd_snapshot_load_file("/nonexistent/snapshot.pickle", NULL, NULL));
    ck_assert_ptr_null(sd_input_open("/nonexistent/snapshot.pickle", NULL, NULL));
    /* a budget too small for any snapshot */
    sd_load_options tiny = {.max_memory = 64};
    ck_assert_ptr_null(sd_snapshot_load_file(FIXTURE("basic/v2_6_full.pickle"), &tiny, NULL));
    sd_snapshot *s = sd_snapshot_load_file(FIXTURE("basic/v2_6_full.pickle"), NULL, NULL);
    ck_assert_ptr_nonnull(s);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(null_error_analyses)
{
    sd_snapshot *old_s = sdp_test_load_ok("%s", FIXTURE("leak/churn_old.pickle"));
    sd_snapshot *new_s = sdp_test_load_ok("%s", FIXTURE("leak/churn_new.pickle"));

    const char *bad_pattern[] = {"(unclosed"};
    sd_attrib_options bad = {.group_by = SD_GROUP_SITE, .hide = bad_pattern, .n_hide = 1};
    ck_assert_ptr_null(sd_attrib_create(&bad, NULL));
    sd_attrib_options good = {.group_by = SD_GROUP_SITE};
    sd_attrib *a = sd_attrib_create(&good, NULL);
    ck_assert_ptr_nonnull(a);
    sd_attrib_free(a);

    /* budgets of a few bytes: every table allocation fails, the error goes nowhere */
    for (uint64_t budget = 1; budget < 4096; budget *= 4) {
        sd_diff_options dopt = {.attrib = good, .max_memory = budget};
        ck_assert_ptr_null(sd_diff_create(old_s, new_s, &dopt, NULL));
        const sd_snapshot *sides[2] = {old_s, new_s};
        sd_profile_options popt = {.attrib = good, .max_memory = budget};
        ck_assert_ptr_null(sd_profile_create(sides, 2, &popt, NULL));
        sd_frag_options fopt = {.gap_threshold_pct = 30, .index_threshold = 0.5,
                                .max_memory = budget};
        ck_assert_ptr_null(sd_frag_create(new_s, &fopt, NULL));
    }
    sd_diff_options dopt = {.attrib = good};
    sd_diff *d = sd_diff_create(old_s, new_s, &dopt, NULL);
    ck_assert_ptr_nonnull(d);
    sd_diff_free(d);
    sd_frag_options fopt = {.gap_threshold_pct = 30, .index_threshold = 0.5};
    sd_frag *f = sd_frag_create(new_s, &fopt, NULL);
    ck_assert_ptr_nonnull(f);
    sd_frag_free(f);
    sd_snapshot_free(old_s);
    sd_snapshot_free(new_s);
}
END_TEST

START_TEST(error_format_without_error)
{
    char buf[64];
    memset(buf, 'x', sizeof buf);
    sd_error_format(NULL, buf, sizeof buf);
    ck_assert_str_eq(buf, "no error recorded");
    sd_error_format(NULL, NULL, 0);     /* nothing to write into: nothing happens */
    sd_error_clear(NULL);
}
END_TEST

/* One sd_error record reused across calls (issue 28): every entry point clears it on
 * entry, as jansson's json_load* do, so a success leaves no stale error behind and a
 * second failure reports itself, not the first (within one call the first error wins). */
START_TEST(reused_error_holds_the_last_call)
{
    sd_error err;
    memset(&err, 0x5a, sizeof err);     /* never cleared by the caller: garbage */
    ck_assert_ptr_null(sd_snapshot_load_file("/nonexistent/first.pickle", NULL, &err));
    ck_assert_int_eq(err.code, SD_EIO);
    ck_assert_ptr_nonnull(strstr(err.source, "first.pickle"));

    /* a failing call, then a succeeding one: the record says "no error" */
    sd_snapshot *s = sd_snapshot_load_file(FIXTURE("basic/v2_6_full.pickle"), NULL, &err);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(err.code, SD_OK);
    ck_assert_str_eq(err.source, "");
    ck_assert_str_eq(err.text, "");
    ck_assert(err.offset == SD_NO_OFFSET);

    /* two different failures in a row: the second message is the second error's */
    ck_assert_ptr_null(sd_snapshot_load_file("/nonexistent/first.pickle", NULL, &err));
    ck_assert_int_eq(err.code, SD_EIO);
    const char *bad_pattern[] = {"(unclosed"};
    sd_attrib_options bad = {.group_by = SD_GROUP_SITE, .hide = bad_pattern, .n_hide = 1};
    ck_assert_ptr_null(sd_attrib_create(&bad, &err));
    ck_assert_int_eq(err.code, SD_EUSAGE);
    ck_assert_ptr_null(strstr(err.source, "first.pickle"));
    ck_assert_ptr_nonnull(strstr(err.text, "(unclosed"));

    /* and a failure at a byte offset after one without: the offset is the new one's */
    ck_assert_ptr_null(sd_pickle_parse((const uint8_t *)NOT_A_PICKLE, sizeof NOT_A_PICKLE - 1,
                                       NULL, &err));
    ck_assert_int_ne(err.code, SD_OK);
    ck_assert_int_ne(err.code, SD_EUSAGE);
    ck_assert_ptr_null(strstr(err.text, "(unclosed"));
    sd_snapshot_free(s);
}
END_TEST

/* sd_report_data_create keeps the rule too (issue 39: it was the one entry point of 42
 * that left a stale record in place). A record holding an earlier failure: the next
 * failure reports itself, and a success leaves "no error". */
START_TEST(report_data_clears_a_stale_error)
{
    sd_snapshot *s = sdp_test_load_ok("%s", FIXTURE("basic/v2_6_full.pickle"));
    const sd_snapshot *one[1] = {s};
    sd_error err;
    memset(&err, 0x5a, sizeof err);
    ck_assert_ptr_null(sd_snapshot_load_file("/nonexistent/stale.pickle", NULL, &err));
    ck_assert_int_eq(err.code, SD_EIO);

    ck_assert_ptr_null(sd_report_data_create(one, 0, NULL, &err));   /* n == 0: a misuse */
    ck_assert_int_eq(err.code, SD_EUSAGE);
    ck_assert_ptr_null(strstr(err.source, "stale.pickle"));
    ck_assert_ptr_nonnull(strstr(err.text, "report data"));

    sd_report_data *d = sd_report_data_create(one, 1, NULL, &err);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(err.code, SD_OK);
    ck_assert_str_eq(err.source, "");
    ck_assert_str_eq(err.text, "");
    sd_report_data_free(d);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(loader_reports_per_input)
{
    const char *specs[] = {FIXTURE("leak/churn_old.pickle"), "/nonexistent/x.pickle"};
    sd_loaded out[2];
    sd_loader_options lo = {.jobs = 2};
    ck_assert_int_ne(sd_load_all(specs, 2, &lo, out), SD_OK);
    ck_assert_int_eq(out[0].status, SD_OK);
    ck_assert_uint_eq(out[0].n_snaps, 1);
    ck_assert_int_ne(out[1].status, SD_OK);
    ck_assert_int_eq(out[1].err.code, out[1].status);
    sd_loaded_free(out, 2);
}
END_TEST

/* Options structs are versioned libgit2-style (issue 28): _init fills the _INIT template
 * for a version the library knows and refuses any other; an entry point given a struct
 * newer than the library says so in the error. */
START_TEST(options_init_knows_its_versions)
{
    sd_frag_options fo;
    memset(&fo, 0x5a, sizeof fo);
    ck_assert_int_eq(sd_frag_options_init(&fo, SD_FRAG_OPTIONS_VERSION), SD_OK);
    ck_assert_uint_eq(fo.version, SD_FRAG_OPTIONS_VERSION);
    ck_assert(fo.gap_threshold_pct == SD_FRAG_DEFAULT_GAP_PCT);     /* the defaults */
    ck_assert(fo.index_threshold == SD_FRAG_DEFAULT_INDEX);
    ck_assert(fo.max_memory == 0 && !fo.skip_replay);
    ck_assert_int_eq(sd_frag_options_init(&fo, 0), SD_EUSAGE);
    ck_assert_int_eq(sd_frag_options_init(&fo, SD_FRAG_OPTIONS_VERSION + 1), SD_EUSAGE);
    ck_assert_int_eq(sd_frag_options_init(NULL, SD_FRAG_OPTIONS_VERSION), SD_EUSAGE);

    sd_diff_options dopt;
    memset(&dopt, 0x5a, sizeof dopt);
    ck_assert_int_eq(sd_diff_options_init(&dopt, SD_DIFF_OPTIONS_VERSION), SD_OK);
    ck_assert_uint_eq(dopt.version, SD_DIFF_OPTIONS_VERSION);
    ck_assert_uint_eq(dopt.attrib.version, SD_ATTRIB_OPTIONS_VERSION);   /* nested _INIT */
    ck_assert_ptr_null(dopt.attrib.hide);
    ck_assert(dopt.max_memory == 0 && dopt.at == 0);

    sd_trace_text_options to;
    ck_assert_int_eq(sd_trace_text_options_init(&to, 1), SD_OK);        /* an older one */
    ck_assert_uint_eq(to.version, 1);
    ck_assert_int_eq(sd_trace_text_options_init(&to, SD_TRACE_TEXT_OPTIONS_VERSION), SD_OK);
    ck_assert_int_eq(sd_trace_text_options_init(&to, SD_TRACE_TEXT_OPTIONS_VERSION + 1),
                     SD_EUSAGE);

    sd_load_options lo = SD_LOAD_OPTIONS_INIT;
    sd_replay_options ro = SD_REPLAY_OPTIONS_INIT;
    ck_assert_uint_eq(lo.version, SD_LOAD_OPTIONS_VERSION);
    ck_assert_uint_eq(ro.version, SD_REPLAY_OPTIONS_VERSION);
}
END_TEST

/* Every _init (all 22 structs a caller fills): the newest version fills the struct and
 * sets its version, 0 and newest + 1 are refused; every _INIT carries its version. */
#define CHECK_INIT(type, V)                                                             \
    do {                                                                                \
        type o_ = V##_INIT;                                                             \
        ck_assert_uint_eq(o_.version, V##_VERSION);                                     \
        memset(&o_, 0x5a, sizeof o_);                                                   \
        ck_assert_int_eq(type##_init(&o_, V##_VERSION), SD_OK);                         \
        ck_assert_uint_eq(o_.version, V##_VERSION);                                     \
        ck_assert_int_eq(type##_init(&o_, 0), SD_EUSAGE);                               \
        ck_assert_int_eq(type##_init(&o_, V##_VERSION + 1), SD_EUSAGE);                 \
        ck_assert_int_eq(type##_init(NULL, V##_VERSION), SD_EUSAGE);                    \
    } while (0)

START_TEST(every_options_init)
{
    CHECK_INIT(sd_attrib_options, SD_ATTRIB_OPTIONS);
    CHECK_INIT(sd_curve_limits, SD_CURVE_LIMITS);
    CHECK_INIT(sd_curve_options, SD_CURVE_OPTIONS);
    CHECK_INIT(sd_diff_options, SD_DIFF_OPTIONS);
    CHECK_INIT(sd_frag_options, SD_FRAG_OPTIONS);
    CHECK_INIT(sd_peak_options, SD_PEAK_OPTIONS);
    CHECK_INIT(sd_pickle_options, SD_PICKLE_OPTIONS);
    CHECK_INIT(sd_profile_options, SD_PROFILE_OPTIONS);
    CHECK_INIT(sd_replay_options, SD_REPLAY_OPTIONS);
    CHECK_INIT(sd_series_options, SD_SERIES_OPTIONS);
    CHECK_INIT(sd_trace_options, SD_TRACE_OPTIONS);
    CHECK_INIT(sd_load_options, SD_LOAD_OPTIONS);
    CHECK_INIT(sd_loader_options, SD_LOADER_OPTIONS);
    CHECK_INIT(sd_input_options, SD_INPUT_OPTIONS);
    CHECK_INIT(sd_top_text_options, SD_TOP_TEXT_OPTIONS);
    CHECK_INIT(sd_render_options, SD_RENDER_OPTIONS);
    CHECK_INIT(sd_check_report, SD_CHECK_REPORT);
    CHECK_INIT(sd_diff_text_options, SD_DIFF_TEXT_OPTIONS);
    CHECK_INIT(sd_report_input, SD_REPORT_INPUT);
    CHECK_INIT(sd_series_text_options, SD_SERIES_TEXT_OPTIONS);
    CHECK_INIT(sd_trace_text_options, SD_TRACE_TEXT_OPTIONS);
    CHECK_INIT(sd_report_data_options, SD_REPORT_DATA_OPTIONS);
}
END_TEST

START_TEST(entry_points_refuse_a_newer_struct)
{
    sd_error err;
    sd_attrib_options ao = SD_ATTRIB_OPTIONS_INIT;
    ao.version = SD_ATTRIB_OPTIONS_VERSION + 1;
    ck_assert_ptr_null(sd_attrib_create(&ao, &err));
    ck_assert_int_eq(err.code, SD_EUSAGE);
    ck_assert_ptr_nonnull(strstr(err.text, "sd_attrib_options version 2"));

    sd_load_options lo = SD_LOAD_OPTIONS_INIT;
    lo.version = 99;
    ck_assert_ptr_null(sd_snapshot_load_file(FIXTURE("basic/v2_6_full.pickle"), &lo, &err));
    ck_assert_int_eq(err.code, SD_EUSAGE);
    ck_assert_ptr_nonnull(strstr(err.text, "sd_load_options version 99"));
    lo.version = 0;     /* a zeroed struct reads as version 1 */
    sd_snapshot *s = sd_snapshot_load_file(FIXTURE("basic/v2_6_full.pickle"), &lo, &err);
    ck_assert_ptr_nonnull(s);

    /* nested: the diff's own attrib options are checked too */
    sd_diff_options dopt = SD_DIFF_OPTIONS_INIT;
    dopt.attrib.version = 7;
    ck_assert_ptr_null(sd_diff_create(s, s, &dopt, &err));
    ck_assert_ptr_nonnull(strstr(err.text, "sd_attrib_options version 7"));

    sd_frag_options fo = SD_FRAG_OPTIONS_INIT;
    fo.version = SD_FRAG_OPTIONS_VERSION + 1;
    ck_assert_ptr_null(sd_frag_create(s, &fo, &err));
    ck_assert_ptr_nonnull(strstr(err.text, "sd_frag_options"));

    /* a renderer without an error record answers SD_EUSAGE and writes nothing */
    dopt.attrib.version = SD_ATTRIB_OPTIONS_VERSION;
    sd_diff *d = sd_diff_create(s, s, &dopt, &err);
    ck_assert_ptr_nonnull(d);
    sd_diff_text_options dto = SD_DIFF_TEXT_OPTIONS_INIT;
    dto.render.version = SD_RENDER_OPTIONS_VERSION + 1;
    FILE *devnull = fopen("/dev/null", "w");
    ck_assert_ptr_nonnull(devnull);
    ck_assert_int_eq(sd_render_diff_text(devnull, d, &dto), SD_EUSAGE);
    dto.render.version = SD_RENDER_OPTIONS_VERSION;
    ck_assert_int_eq(sd_render_diff_text(devnull, d, &dto), SD_OK);
    fclose(devnull);
    sd_diff_free(d);
    sd_snapshot_free(s);
}
END_TEST

static Suite *api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("null_error");
    tcase_add_test(tc, null_error_pickle_and_load);
    tcase_add_test(tc, null_error_analyses);
    tcase_add_test(tc, error_format_without_error);
    tcase_add_test(tc, loader_reports_per_input);
    tcase_add_test(tc, reused_error_holds_the_last_call);
    tcase_add_test(tc, report_data_clears_a_stale_error);
    tcase_add_test(tc, options_init_knows_its_versions);
    tcase_add_test(tc, every_options_init);
    tcase_add_test(tc, entry_points_refuse_a_newer_struct);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return sdp_test_main(api_suite); }
