/* check_trace.c - unit tests of the trace replay (src/analysis/trace.c) on the small
 * snapshots of testdata/trace/ (made by testdata/make_trace_fixtures.py; the expected
 * numbers are the hand arithmetic written beside each scenario there). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/trace_walk.h"
#include "snapdiff/trace.h"

#include "check_helpers.h"

#define MiB (1024ULL * 1024)
#define KiB 1024ULL

static sd_snapshot *load(const char *name)
{
    return sdp_test_load_ok("%s/trace/%s.pickle", SNAPDIFF_TESTDATA, name);
}

static sd_trace *replay_opts(const sd_snapshot *s, const sd_trace_options *o)
{
    sd_error err;
    sd_error_clear(&err);
    sd_trace *t = sd_trace_create(s, o, &err);
    ck_assert_msg(t != NULL, "sd_trace_create: %s", err.text);
    return t;
}

static sd_trace *replay(const sd_snapshot *s)
{
    sd_trace_options o;
    memset(&o, 0, sizeof o);
    return replay_opts(s, &o);
}

static bool has_warning(const sd_trace_device *d, sd_trace_warning_code c, uint64_t *count,
                        uint64_t *bytes)
{
    for (size_t i = 0; i < d->n_warnings; i++)
        if (d->warnings[i].code == c) {
            if (count) *count = d->warnings[i].count;
            if (bytes) *bytes = d->warnings[i].bytes;
            return true;
        }
    return false;
}

/* The replay of a whole run reproduces the snapshot's live blocks, address and size. */
START_TEST(whole_run_reproduces_live_blocks)
{
    sd_snapshot *s = load("whole");
    sd_trace *t = replay(s);
    ck_assert_uint_eq(sd_trace_device_count(t), 1);
    const sd_trace_device *d = sd_trace_device_at(t, 0);
    const sd_cuda_device *dev = sd_snapshot_device(s, 0);
    size_t k = 0;
    uint64_t bytes = 0;
    for (size_t i = 0; i < dev->n_blocks; i++) {
        const sd_block *b = &dev->blocks[i];
        if (b->state != SD_BLOCK_ALLOCATED) continue;
        ck_assert_uint_lt(k, d->n_alive);
        ck_assert_uint_eq(d->alive[k].addr, b->address);
        ck_assert_uint_eq(d->alive[k].size, b->size);
        bytes += b->size;
        k++;
    }
    ck_assert_uint_eq(k, d->n_alive);
    ck_assert_uint_eq(k, 4);
    ck_assert_uint_eq(d->alive_bytes, bytes);
    ck_assert_uint_eq(d->alive_bytes, 7 * MiB + 512 * KiB);   /* 2 + 4 + 1 + 0.5 MiB */
    /* The pending free (requested, not completed) is released, not alive. */
    ck_assert_uint_eq(d->free_count, 3);
    ck_assert(d->has_peak);
    ck_assert_uint_eq(d->peak_bytes, 14 * MiB + 512 * KiB);   /* 2+4+4+1+0.5+3 */
    ck_assert_uint_eq(d->peak_entry, 6);
    ck_assert_str_eq(d->peak_key, "/home/alice/proj/model.py:52 forward");
    ck_assert_ptr_nonnull(d->peak_site);
    ck_assert_int_eq(d->peak_site->line, 52);
    ck_assert_uint_eq(d->n_warnings, 0);
    ck_assert_uint_eq(sd_trace_device_action_count(d, SD_ACT_SEGMENT_ALLOC), 1);
    ck_assert_uint_eq(sd_trace_device_segment_bytes(d, SD_ACT_SEGMENT_ALLOC), 20 * MiB);
    ck_assert_uint_eq(sd_trace_device_action_count(d, SD_ACT_COUNT), 0);   /* unknown: 0 */
    ck_assert_uint_eq(sd_trace_device_segment_bytes(d, (sd_trace_action)99), 0);
    /* Groups, largest alive first. */
    ck_assert_uint_eq(d->n_groups, 3);
    ck_assert_str_eq(d->groups[0].key, "/home/alice/proj/model.py:52 forward");
    ck_assert_uint_eq(d->groups[0].alive_bytes, 4 * MiB);
    ck_assert_uint_eq(d->groups[0].alloc_count, 4);
    ck_assert_uint_eq(d->groups[0].alloc_bytes, 15 * MiB);
    ck_assert_uint_eq(d->groups[0].free_count, 3);
    ck_assert_str_eq(d->groups[1].key, "/home/alice/proj/data.py:40 to_device");
    ck_assert_str_eq(d->groups[2].key, "/home/alice/proj/metrics.py:23 update");
    ck_assert_uint_eq(d->groups[2].alive_count, 2);
    ck_assert_ptr_nonnull(d->groups[2].site);
    ck_assert_str_eq(d->groups[2].site->name, "update");
    ck_assert(d->has_span && d->has_rates);
    ck_assert_int_eq(d->span_us, 120);                 /* 13 entries, 10 us apart */
    sd_trace_free(t);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(mid_run_and_overflow)
{
    sd_snapshot *s = load("midrun");
    sd_trace *t = replay(s);
    const sd_trace_device *d = sd_trace_device_at(t, 0);
    uint64_t count = 0, bytes = 0;
    ck_assert(has_warning(d, SD_TRACE_OVERFLOWED, NULL, NULL));
    ck_assert(has_warning(d, SD_TRACE_STARTS_MID_RUN, &count, &bytes));
    ck_assert_uint_eq(count, 3);
    ck_assert_uint_eq(bytes, 6 * MiB);
    ck_assert_uint_eq(d->unknown_free_count, 3);
    ck_assert_uint_eq(d->alive_bytes, 2 * MiB + 512 * KiB);
    ck_assert_uint_eq(d->alive_count, 2);
    ck_assert_uint_eq(d->peak_bytes, 3 * MiB);
    ck_assert_uint_eq(d->peak_entry, 7);
    ck_assert_str_eq(d->groups[0].key, "/home/alice/proj/metrics.py:23 update");
    sd_trace_free(t);
    /* From #6 on, nothing is freed that the window did not allocate. */
    sd_trace_options o;
    memset(&o, 0, sizeof o);
    o.since = (sd_trace_bound){SD_BOUND_INDEX, 6};
    t = replay_opts(s, &o);
    d = sd_trace_device_at(t, 0);
    ck_assert(!has_warning(d, SD_TRACE_STARTS_MID_RUN, NULL, NULL));
    ck_assert(has_warning(d, SD_TRACE_OVERFLOWED, NULL, NULL));
    ck_assert_uint_eq(d->first_entry, 6);
    ck_assert_uint_eq(d->n_entries, 5);
    sd_trace_free(t);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(without_free_requested)
{
    sd_snapshot *s = load("noreq");
    sd_trace *t = replay(s);
    const sd_trace_device *d = sd_trace_device_at(t, 0);
    ck_assert_uint_eq(sd_trace_device_action_count(d, SD_ACT_FREE_REQUESTED), 0);
    ck_assert_uint_eq(d->free_count, 10);
    ck_assert_uint_eq(d->alive_count, 10);
    ck_assert_uint_eq(d->alive_bytes, 10 * 256 * KiB);
    ck_assert_uint_eq(d->n_warnings, 0);
    ck_assert_str_eq(d->groups[0].key, "/home/alice/proj/metrics.py:23 update");
    ck_assert_uint_eq(d->groups[1].alive_bytes, 0);
    ck_assert_uint_eq(d->groups[1].free_count, 10);
    sd_trace_free(t);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(phases_show_growth_per_step)
{
    sd_snapshot *s = load("phases");
    ck_assert_uint_eq(sd_snapshot_annotation_count(s), 10);
    const sd_annotation *a = sd_snapshot_annotation(s, 1);
    ck_assert_str_eq(a->name, "train_step");
    ck_assert_int_eq(a->stage, SD_STAGE_END);
    ck_assert(a->has_time);
    sd_trace *t = replay(s);
    ck_assert_uint_eq(sd_trace_device_count(t), 2);
    const sd_trace_device *d = sd_trace_device_at(t, 0);
    size_t steps = 0, entries = 0;
    int64_t growth = 0;
    for (size_t i = 0; i < d->n_phases; i++) {
        const sd_trace_phase *p = &d->phases[i];
        entries += p->n_entries;
        growth += p->growth;
        ck_assert_int_eq(p->growth, (int64_t)(p->live_end - p->live_start));
        if (p->kind != SD_PHASE_SCOPE_START) continue;
        steps++;
        ck_assert_str_eq(p->name, "train_step");
        ck_assert_int_eq(p->growth, (int64_t)MiB);       /* the leak: 1 MiB per step */
        ck_assert_uint_eq(p->alloc_count, 9);            /* 8 activations + the leak */
        ck_assert_uint_eq(p->free_count, 8);
    }
    ck_assert_uint_eq(steps, 5);
    ck_assert_uint_eq(entries, d->n_entries);
    ck_assert_int_eq(growth, (int64_t)d->alive_bytes);
    ck_assert_uint_eq(d->alive_bytes, 5 * MiB);
    ck_assert_uint_eq(d->peak_bytes, 13 * MiB);          /* 8 activations + 5 leaked */
    ck_assert_int_eq(d->phases[0].kind, SD_PHASE_ANNOTATE);
    const sd_trace_device *d1 = sd_trace_device_at(t, 1);
    ck_assert_int_eq(d1->device, 1);
    ck_assert_uint_eq(d1->alive_bytes, 64 * KiB);
    ck_assert_uint_eq(d1->n_phases, 1);
    sd_trace_free(t);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(window_bounds)
{
    sd_snapshot *s = load("phases");
    const sd_cuda_device *dev = sd_snapshot_device(s, 0);
    int64_t t0 = dev->trace[0].time_us;
    struct { sd_trace_bound since, until; size_t first, n; } cases[] = {
        {{SD_BOUND_INDEX, 28}, {SD_BOUND_INDEX, 53}, 28, 25},
        {{SD_BOUND_TIME, t0 + 280}, {SD_BOUND_OFFSET, 530}, 28, 25},
        {{SD_BOUND_OFFSET, 280}, {SD_BOUND_TIME, t0 + 530}, 28, 25},
        {{SD_BOUND_INDEX, 1000}, {SD_BOUND_NONE, 0}, 134, 0},
        {{SD_BOUND_INDEX, 50}, {SD_BOUND_INDEX, 10}, 50, 0},
        {{SD_BOUND_NONE, 0}, {SD_BOUND_TIME, 0}, 0, 0},
    };
    for (size_t i = 0; i < SDP_TEST_LEN(cases); i++) {
        sd_trace_options o;
        memset(&o, 0, sizeof o);
        o.since = cases[i].since;
        o.until = cases[i].until;
        sd_trace *t = replay_opts(s, &o);
        const sd_trace_device *d = sd_trace_device_at(t, 0);
        ck_assert_msg(d->first_entry == cases[i].first && d->n_entries == cases[i].n,
                      "case %zu: window #%zu + %zu", i, d->first_entry, d->n_entries);
        if (i == 0) {
            ck_assert_uint_eq(d->alive_bytes, MiB);
            ck_assert_uint_eq(d->alloc_count, 9);
        }
        if (d->n_entries == 0) {
            ck_assert(!d->has_peak);
            ck_assert_uint_eq(d->n_groups, 0);
            ck_assert_ptr_null(d->peak_key);
        }
        sd_trace_free(t);
    }
    sd_snapshot_free(s);
}
END_TEST

START_TEST(options_and_errors)
{
    sd_snapshot *s = load("whole");
    sd_trace_options o;
    memset(&o, 0, sizeof o);
    const char *bad[] = {"("};
    o.attrib.focus = bad;
    o.attrib.n_focus = 1;
    sd_error err;
    sd_error_clear(&err);
    ck_assert_ptr_null(sd_trace_create(s, &o, &err));
    ck_assert_int_eq(err.code, SD_EUSAGE);
    ck_assert_ptr_null(sd_trace_create(s, &o, NULL));      /* a NULL err is accepted */
    ck_assert_ptr_null(sd_trace_create(NULL, &o, NULL));
    /* Focus filters the groups, never the device totals. */
    const char *focus[] = {"metrics"};
    o.attrib.focus = focus;
    sd_trace *t = replay_opts(s, &o);
    const sd_trace_device *d = sd_trace_device_at(t, 0);
    ck_assert_uint_eq(d->n_groups, 1);
    ck_assert_str_eq(d->groups[0].key, "/home/alice/proj/metrics.py:23 update");
    ck_assert_uint_eq(d->alive_bytes, 7 * MiB + 512 * KiB);
    sd_trace_free(t);
    /* A budget too small is an error, not a crash. */
    memset(&o, 0, sizeof o);
    o.max_memory = 64;
    sd_error_clear(&err);
    ck_assert_ptr_null(sd_trace_create(s, &o, &err));
    ck_assert_int_eq(err.code, SD_ENOMEM);
    sd_trace_free(NULL);
    sd_snapshot_free(s);
}
END_TEST

/* The walker peak.c and trace.c share (trace_walk.h): what each entry releases. */
START_TEST(walker_state_machine)
{
    enum { A = 0x1000, B = 0x2000, C = 0x3000, D = 0x4000 };
    const sd_trace_entry e[] = {
        {.action = SD_ACT_ALLOC, .addr = A, .size = 100, .stack = 7},
        {.action = SD_ACT_ALLOC, .addr = B, .size = 50},
        {.action = SD_ACT_FREE_REQUESTED, .addr = A, .size = 100},   /* releases A */
        {.action = SD_ACT_FREE_COMPLETED, .addr = A, .size = 100},   /* the same free, done */
        {.action = SD_ACT_FREE_COMPLETED, .addr = C, .size = 30},    /* from before: early */
        {.action = SD_ACT_ALLOC, .addr = B, .size = 70},             /* B's free unrecorded */
        {.action = SD_ACT_FREE_REQUESTED, .addr = D, .size = 20},    /* early, then pending */
        {.action = SD_ACT_FREE_REQUESTED, .addr = D, .size = 20},    /* early again */
        {.action = SD_ACT_SEGMENT_ALLOC, .addr = D, .size = 4096},   /* no block */
    };
    const bool released[] = {0, 0, 1, 0, 0, 1, 0, 0, 0}, early[] = {0, 0, 0, 0, 1, 0, 1, 1, 0};
    sdp_arena arena;
    sdp_arena_init(&arena, 0);
    sdp_trace_walk w;
    sdp_trace_walk_init(&w, &arena);
    ck_assert_int_eq(sdp_trace_walk_reset(&w), SD_OK);
    for (size_t i = 0; i < SDP_ARRAY_LEN(e); i++) {
        sdp_walk_step st;
        ck_assert_int_eq(sdp_trace_walk_entry(&w, &e[i], i, &st), SD_OK);
        ck_assert_msg(st.released == released[i] && st.early == early[i], "entry %zu", i);
        if (i == 2) ck_assert(st.old.size == 100 && st.old.entry == 0 && st.old.stack == 7);
        if (i == 5) ck_assert(st.old.size == 50 && st.old.entry == 1);
    }
    ck_assert_ptr_null(sdp_trace_walk_live(&w, A));
    const sdp_addr_rec *b = sdp_trace_walk_live(&w, B);
    ck_assert(b && b->size == 70 && b->entry == 5);
    sdp_trace_walk_free(&w);
    sdp_arena_free(&arena);

    sd_cuda_device d = {.trace = e, .n_trace = SDP_ARRAY_LEN(e)};
    size_t lo, hi;
    sdp_trace_window(&d, &(sd_trace_bound){SD_BOUND_INDEX, 7}, &(sd_trace_bound){SD_BOUND_INDEX, 3},
                     &lo, &hi);
    ck_assert(lo == 7 && hi == 7);   /* an upper bound before the lower: empty */
    sdp_trace_window(&d, &(sd_trace_bound){SD_BOUND_NONE, 0},
                     &(sd_trace_bound){SD_BOUND_OFFSET, 5}, &lo, &hi);
    ck_assert(lo == 0 && hi == 0);   /* no times: a time window is empty */
}
END_TEST

START_TEST(no_trace_and_names)
{
    sd_snapshot *s = sdp_test_load_ok("%s/leak/empty.pickle", SNAPDIFF_TESTDATA);
    sd_trace *t = replay(s);
    ck_assert_uint_eq(sd_trace_device_count(t), 0);
    ck_assert_ptr_null(sd_trace_device_at(t, 0));
    sd_trace_free(t);
    sd_snapshot_free(s);
    ck_assert_str_eq(sd_trace_warning_name(SD_TRACE_OVERFLOWED), "ring-buffer-overflowed");
    ck_assert_str_eq(sd_trace_warning_name(SD_TRACE_STARTS_MID_RUN), "starts-mid-run");
    ck_assert_str_eq(sd_trace_warning_name(SD_TRACE_UNRECORDED_FREE), "unrecorded-free");
    ck_assert_str_eq(sd_trace_warning_name(SD_TRACE_NO_TIMES), "no-times");
    ck_assert_str_eq(sd_trace_warning_name(SD_TRACE_WARNING_COUNT), "unknown");
    ck_assert_str_eq(sd_trace_phase_kind_name(SD_PHASE_SCOPE_END), "scope-end");
}
END_TEST

static Suite *trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("replay");
    tcase_add_test(tc, whole_run_reproduces_live_blocks);
    tcase_add_test(tc, mid_run_and_overflow);
    tcase_add_test(tc, without_free_requested);
    tcase_add_test(tc, phases_show_growth_per_step);
    tcase_add_test(tc, window_bounds);
    tcase_add_test(tc, options_and_errors);
    tcase_add_test(tc, no_trace_and_names);
    tcase_add_test(tc, walker_state_machine);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return sdp_test_main(trace_suite); }
