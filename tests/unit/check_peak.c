/* check_peak.c - unit tests of the peak (src/analysis/peak.c) on testdata/peak/ (made by
 * testdata/make_peak_fixtures.py; the expected figures are the hand arithmetic written
 * there) and testdata/trace/ (make_trace_fixtures.py). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapdiff/peak.h"
#include "snapdiff/report_data.h"

#include "check_helpers.h"

#define MiB (1024ULL * 1024)

static sd_snapshot *load(const char *dir, const char *name)
{
    return sdp_test_load_ok("%s/%s/%s.pickle", SNAPDIFF_TESTDATA, dir, name);
}

static sd_peak *peak_of(const sd_snapshot *s, const sd_peak_options *o)
{
    sd_peak_options dflt;
    memset(&dflt, 0, sizeof dflt);
    sd_error err;
    sd_error_clear(&err);
    sd_peak *p = sd_peak_create(s, o ? o : &dflt, &err);
    ck_assert_msg(p != NULL, "sd_peak_create: %s", err.text);
    return p;
}

static uint64_t bytes_of(const sd_peak_table *t, const char *key)
{
    for (size_t i = 0; i < t->n_groups; i++)
        if (strcmp(t->groups[i].key, key) == 0) return t->groups[i].bytes;
    return 0;
}

/* fp32: W8 B2 | act 8, scores 16 | B freed | bmm 12 -> 44 MiB at entry 4. */
START_TEST(fp32_peak_counts_what_was_live_before)
{
    sd_snapshot *s = load("peak", "fp32");
    sd_peak *p = peak_of(s, NULL);
    ck_assert_uint_eq(sd_peak_device_count(p), 1);
    const sd_peak_device *d = sd_peak_device_at(p, 0);
    ck_assert(d->has_trace && d->has_peak);
    ck_assert_uint_eq(d->start_bytes, 10 * MiB);          /* weights 8 + batch 2 */
    ck_assert_uint_eq(d->peak_bytes, 44 * MiB);
    ck_assert_uint_eq(d->peak_entry, 4);
    ck_assert(d->peak_has_time);
    ck_assert_str_eq(d->peak_key, "autograd BmmBackward0");
    ck_assert_uint_eq(d->window_alloc_bytes, (8 + 16 + 12 + 8) * MiB);
    ck_assert_uint_eq(d->at_peak.bytes, 44 * MiB);
    ck_assert_uint_eq(d->at_peak.blocks, 4);
    ck_assert_uint_eq(d->at_peak.n_groups, 4);
    ck_assert_str_eq(d->at_peak.groups[0].key, "/home/alice/proj/model.py:60 forward");
    ck_assert_uint_eq(bytes_of(&d->at_peak, "/home/alice/proj/model.py:10 __init__"), 8 * MiB);
    ck_assert_uint_eq(d->allocated_bytes, 16 * MiB);
    ck_assert_uint_eq(d->at_end.n_groups, 2);
    ck_assert_uint_eq(d->at_end.groups[0].requested, 8 * MiB);
    ck_assert_ptr_eq(sd_peak_device_find(p, 0), d);
    ck_assert_ptr_null(sd_peak_device_find(p, 3));
    sd_peak_free(p);
    sd_snapshot_free(s);
}
END_TEST

/* The table at any entry: before the batch's free it is still live; at the end of the
 * trace it is the snapshot's live blocks. */
START_TEST(live_at_any_entry)
{
    sd_snapshot *s = load("peak", "fp32");
    sd_peak *p = peak_of(s, NULL);
    const sd_peak_device *d = sd_peak_device_at(p, 0);
    sd_peak_table t;
    sd_error err;
    sd_error_clear(&err);
    ck_assert_int_eq(sd_peak_live_at(p, 0, 1, &t, &err), SD_OK);
    ck_assert_uint_eq(t.bytes, 34 * MiB);
    /* the batch was allocated before recording: its free's frames (data.py:40) may be
     * the free's, so it is grouped under <no stack> (issue 26) */
    ck_assert_uint_eq(bytes_of(&t, SD_NO_STACK), 2 * MiB);
    ck_assert_uint_eq(bytes_of(&t, "/home/alice/proj/data.py:40 to_device"), 0);
    ck_assert_int_eq(sd_peak_live_at(p, 0, d->total_entries - 1, &t, &err), SD_OK);
    ck_assert_uint_eq(t.bytes, d->allocated_bytes);
    ck_assert_uint_eq(t.n_groups, 2);
    ck_assert_int_eq(sd_peak_live_at(p, 0, d->total_entries, &t, &err), SD_EUSAGE);
    ck_assert_int_eq(sd_peak_live_at(p, 1, 0, &t, NULL), SD_EUSAGE);
    /* The live series: the peak's value at its entry, the end state at the end. */
    uint64_t *live = calloc(d->total_entries, sizeof *live);
    ck_assert_int_eq(sd_peak_live_series(p, 0, live, d->total_entries, &err), SD_OK);
    ck_assert_uint_eq(live[d->peak_entry], d->peak_bytes);
    ck_assert_uint_eq(live[d->total_entries - 1], d->allocated_bytes);
    for (size_t i = 0; i < d->total_entries; i++) ck_assert_uint_le(live[i], d->peak_bytes);
    free(live);
    sd_peak_free(p);
    sd_snapshot_free(s);
}
END_TEST

/* bf16: 34 MiB at entry 6, reached by ToCopyBackward0; focus filters groups only. */
START_TEST(bf16_and_focus)
{
    sd_snapshot *s = load("peak", "bf16");
    sd_peak_options o;
    memset(&o, 0, sizeof o);
    const char *focus[] = {"model\\.py"};
    o.attrib.focus = focus;
    o.attrib.n_focus = 1;
    sd_peak *p = peak_of(s, &o);
    const sd_peak_device *d = sd_peak_device_at(p, 0);
    ck_assert_uint_eq(d->peak_bytes, 34 * MiB);
    ck_assert_uint_eq(d->peak_entry, 6);
    ck_assert_str_eq(d->peak_key, "autograd ToCopyBackward0");    /* dropped from the groups */
    ck_assert_uint_eq(d->at_peak.bytes, 34 * MiB);
    ck_assert_uint_eq(d->at_peak.n_groups, 4);                    /* model.py:10, 50, 52, 60 */
    sd_peak_free(p);
    sd_snapshot_free(s);
}
END_TEST

/* A window: the peak is sought in it; what was live at its start counts. */
START_TEST(window_and_errors)
{
    sd_snapshot *s = load("peak", "fp32");
    sd_peak_options o;
    memset(&o, 0, sizeof o);
    o.since = (sd_trace_bound){SD_BOUND_INDEX, 5};
    sd_peak *p = peak_of(s, &o);
    const sd_peak_device *d = sd_peak_device_at(p, 0);
    ck_assert_uint_eq(d->window_start_bytes, 44 * MiB);   /* after entry 4 */
    ck_assert(d->has_peak);
    ck_assert_uint_gt(d->peak_entry, 4);
    ck_assert_uint_eq(d->peak_bytes, 36 * MiB);           /* scores freed, grad 8 added */
    sd_peak_free(p);
    const char *bad[] = {"("};
    memset(&o, 0, sizeof o);
    o.attrib.hide = bad;
    o.attrib.n_hide = 1;
    sd_error err;
    sd_error_clear(&err);
    ck_assert_ptr_null(sd_peak_create(s, &o, &err));
    ck_assert_int_eq(err.code, SD_EUSAGE);
    ck_assert_ptr_null(sd_peak_create(NULL, &o, NULL));
    memset(&o, 0, sizeof o);
    o.max_memory = 64;
    sd_error_clear(&err);
    ck_assert_ptr_null(sd_peak_create(s, &o, &err));
    ck_assert_int_eq(err.code, SD_ENOMEM);
    sd_peak_free(NULL);
    sd_snapshot_free(s);
}
END_TEST

/* A whole run (nothing live before): the peak is the trace's own maximum; a snapshot
 * without a trace has an end table and no peak. */
START_TEST(whole_run_and_no_trace)
{
    sd_snapshot *s = load("trace", "whole");
    sd_peak *p = peak_of(s, NULL);
    const sd_peak_device *d = sd_peak_device_at(p, 0);
    ck_assert_uint_eq(d->start_bytes, 0);
    ck_assert_uint_eq(d->peak_bytes, 14 * MiB + 512 * 1024);
    ck_assert_uint_eq(d->peak_entry, 6);
    sd_peak_free(p);
    sd_snapshot_free(s);
    s = sdp_test_load_ok("%s/basic/v2_6_full.pickle", SNAPDIFF_TESTDATA);
    p = peak_of(s, NULL);
    for (size_t i = 0; i < sd_peak_device_count(p); i++) {
        d = sd_peak_device_at(p, i);
        if (!d->has_trace) ck_assert(!d->has_peak);
        ck_assert_uint_eq(d->at_end.bytes, d->allocated_bytes);
    }
    sd_peak_free(p);
    sd_snapshot_free(s);
}
END_TEST

/* The report's figures (report_data.h) are the peak's, computed once before the page:
 * fp32's 44 MiB peak at entry 4, its live series, its sites; the replay only for one file
 * and only when asked; a config that does not parse is the caller's error, not the file's. */
START_TEST(report_data_is_the_peaks)
{
    sd_snapshot *s = load("peak", "fp32");
    sd_snapshot *b = load("peak", "bf16");
    static const char *const confs[] = {"expandable_segments:True"};
    sd_report_data_options o = SD_REPORT_DATA_OPTIONS_INIT;
    o.replay = true;
    o.replay_options.alloc_confs = confs;
    o.replay_options.n_alloc_confs = 1;
    sd_error err;
    sd_error_clear(&err);
    const sd_snapshot *one[1] = {s};
    sd_report_data *d = sd_report_data_create(one, 1, &o, &err);
    ck_assert_msg(d != NULL, "sd_report_data_create: %s", err.text);
    ck_assert_uint_eq(sd_report_data_snapshot_count(d), 1);
    const sd_peak_device *pd = sd_peak_device_at(sd_report_data_peak(d, 0), 0);
    ck_assert_uint_eq(pd->peak_bytes, 44 * MiB);
    ck_assert_uint_eq(pd->peak_entry, 4);
    size_t n = 0;
    const uint64_t *live = sd_report_data_live(d, 0, 0, &n);
    ck_assert_uint_eq(n, pd->total_entries);
    ck_assert_uint_eq(live[4], 44 * MiB);
    ck_assert_uint_eq(live[n - 1], 16 * MiB);          /* the snapshot's live blocks */
    ck_assert_ptr_null(sd_report_data_live(d, 0, 1, &n));
    ck_assert_uint_eq(sd_report_data_totals(d, 0)->allocated_bytes, 16 * MiB);
    /* the site of the peak's allocation is the peak's own */
    const sd_site *site = sd_report_data_site(d, 0, pd->peak_stack);
    ck_assert(site && site->site == pd->peak_site.site && site->backward == pd->peak_site.backward);
    ck_assert_ptr_null(sd_report_data_site(d, 0, (uint32_t)sd_snapshot_stack_count(s)));
    const sd_replay *r = sd_report_data_replay(d);
    ck_assert(r && sd_replay_device_count(r) == 1);
    ck_assert_uint_eq(sd_replay_device_at(r, 0)->n_configs, 2);
    ck_assert_str_eq(sd_replay_device_at(r, 0)->configs[1].alloc_conf, "expandable_segments:True");
    size_t n_stacks = 1;
    ck_assert_ptr_null(sd_report_data_stacks(d, &n_stacks));   /* no profile: no icicle */
    ck_assert_uint_eq(n_stacks, 0);
    sd_report_data_free(d);

    /* with a profile of {nothing, the file}: the icicle is its live stacks, 16 MiB in all,
     * the largest first, none "rounding only" (there is no OLD) */
    const sd_snapshot *empty_then_s[2] = {NULL, s};
    sd_profile_options po = SD_PROFILE_OPTIONS_INIT;
    sd_profile *prof = sd_profile_create(empty_then_s, 2, &po, &err);
    ck_assert_msg(prof != NULL, "sd_profile_create: %s", err.text);
    o.replay = false;
    o.profile = prof;
    d = sd_report_data_create(one, 1, &o, &err);
    ck_assert_msg(d != NULL, "sd_report_data_create: %s", err.text);
    const sd_report_stack *st = sd_report_data_stacks(d, &n_stacks);
    ck_assert(st && n_stacks > 0);
    uint64_t sum = 0;
    for (size_t i = 0; i < n_stacks; i++) {
        sum += st[i].bytes;
        ck_assert(!st[i].rounding_only && st[i].n_frames > 0 && st[i].frames[0][0]);
        if (i) ck_assert_uint_ge(st[i - 1].bytes, st[i].bytes);
    }
    ck_assert_uint_eq(sum, 16 * MiB);
    sd_report_data_free(d);
    sd_profile_free(prof);
    o.profile = NULL;
    o.replay = true;

    /* two files: no replay; the spread of their totals */
    const sd_snapshot *two[2] = {s, b};
    d = sd_report_data_create(two, 2, &o, &err);
    ck_assert_msg(d != NULL, "sd_report_data_create: %s", err.text);
    ck_assert_ptr_null(sd_report_data_replay(d));
    ck_assert_uint_eq(sd_report_data_spread(d)->n, 2);
    ck_assert_uint_eq(sd_report_data_spread(d)->allocated_max,
                      sd_report_data_totals(d, 0)->allocated_bytes > sd_report_data_totals(d, 1)->allocated_bytes
                          ? sd_report_data_totals(d, 0)->allocated_bytes
                          : sd_report_data_totals(d, 1)->allocated_bytes);
    sd_report_data_free(d);

    /* errors: a config that does not parse names no file; no snapshots is a usage error */
    static const char *const bad[] = {"bogus:1"};
    o.replay_options.alloc_confs = bad;
    sd_error_clear(&err);
    ck_assert_ptr_null(sd_report_data_create(one, 1, &o, &err));
    ck_assert_int_eq(err.code, SD_EUSAGE);
    ck_assert_str_eq(err.source, "");
    sd_error_clear(&err);
    ck_assert_ptr_null(sd_report_data_create(NULL, 0, NULL, &err));
    ck_assert_int_eq(err.code, SD_EUSAGE);
    /* a zeroed options struct reads as version 1: no replay */
    sd_report_data_options zero;
    memset(&zero, 0, sizeof zero);
    d = sd_report_data_create(one, 1, &zero, &err);
    ck_assert(d && !sd_report_data_replay(d));
    sd_report_data_free(d);
    sd_report_data_free(NULL);
    sd_snapshot_free(b);
    sd_snapshot_free(s);
}
END_TEST

static Suite *peak_suite(void)
{
    Suite *s = suite_create("peak");
    TCase *tc = tcase_create("peak");
    tcase_add_test(tc, fp32_peak_counts_what_was_live_before);
    tcase_add_test(tc, live_at_any_entry);
    tcase_add_test(tc, bf16_and_focus);
    tcase_add_test(tc, window_and_errors);
    tcase_add_test(tc, whole_run_and_no_trace);
    tcase_add_test(tc, report_data_is_the_peaks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return sdp_test_main(peak_suite); }
