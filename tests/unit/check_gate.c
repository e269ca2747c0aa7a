/* check_gate.c - unit tests of the gate's limits file and value parsing (gate.h) and of
 * rank pairing and spread (ranks.h). The CLI behaviour is tests/cli/test_check_cli.py. */
#include <string.h>

#include "check_helpers.h"
#include "snapdiff/curve.h"
#include "snapdiff/gate.h"
#include "snapdiff/ranks.h"

static sd_status parse(const char *text, sd_limits *l, uint64_t *steps, sd_error *err)
{
    return sd_limits_parse(text, strlen(text), "limits.conf", l, steps, err);
}

START_TEST(limit_values)
{
    sd_limits *l = sd_limits_create();
    ck_assert_ptr_nonnull(l);
    sd_limit_id id;
    uint64_t v;
    double r;
    ck_assert(sd_limit_find("max-group-growth", &id) && id == SD_LIMIT_MAX_GROUP_GROWTH);
    ck_assert(!sd_limit_find("max-grwoth", &id));
    ck_assert(sd_limit_set(l, SD_LIMIT_MAX_GROWTH, "256MiB"));
    ck_assert(sd_limits_get(l, SD_LIMIT_MAX_GROWTH, &v, NULL));
    ck_assert_uint_eq(v, 256u << 20);
    ck_assert(sd_limit_set(l, SD_LIMIT_MAX_GROWTH_PCT, "2.5"));
    ck_assert(sd_limits_get(l, SD_LIMIT_MAX_GROWTH_PCT, NULL, &r) && r == 2.5);
    ck_assert(!sd_limit_set(l, SD_LIMIT_MAX_GROWTH_PCT, "-1"));
    ck_assert(!sd_limit_set(l, SD_LIMIT_MAX_FRAG_INDEX, "1.01"));
    ck_assert(!sd_limit_set(l, SD_LIMIT_MAX_FRAG_INDEX, " 0.5"));
    ck_assert(!sd_limit_set(l, SD_LIMIT_FAIL_ON_NEW_SITE, "many"));
    ck_assert(!sd_limits_get(l, SD_LIMIT_FAIL_ON_NEW_SITE, &v, &r) && v == 0 && r == 0);
    ck_assert(!sd_limits_get(l, SD_LIMIT_MAX_FRAG_INDEX, NULL, NULL));
    ck_assert_uint_eq(sd_limits_count(l), 2);
    ck_assert_ptr_null(sd_limit_name(SD_LIMIT_COUNT));
    /* A limit past the ones this library knows: not set, not settable, not asked for. */
    ck_assert(!sd_limits_set(l, SD_LIMIT_COUNT, 1, 1));
    ck_assert(!sd_limit_set(l, SD_LIMIT_COUNT, "1"));
    ck_assert(!sd_limits_get(l, SD_LIMIT_COUNT, &v, &r) && v == 0 && r == 0);
    ck_assert(!sd_limits_get(l, (sd_limit_id)1000, NULL, NULL));
    ck_assert(!sd_limits_get(NULL, SD_LIMIT_MAX_GROWTH, NULL, NULL));
    ck_assert_uint_eq(sd_limits_count(NULL), 0);
    /* Numbers: each limit takes its own kind, a ratio in its range. */
    ck_assert(sd_limits_set(l, SD_LIMIT_MAX_OOMS, 3, 99));
    ck_assert(sd_limits_get(l, SD_LIMIT_MAX_OOMS, &v, &r) && v == 3 && r == 0);
    ck_assert(!sd_limits_set(l, SD_LIMIT_MAX_FRAG_INDEX, 0, 1.5));
    ck_assert(sd_limits_set(l, SD_LIMIT_MAX_FRAG_INDEX, 7, 0.25));
    ck_assert(sd_limits_get(l, SD_LIMIT_MAX_FRAG_INDEX, &v, &r) && v == 0 && r == 0.25);
    ck_assert_uint_eq(sd_limits_count(l), 4);
    sd_limits_free(l);
}
END_TEST

START_TEST(file_ok_and_command_line_wins)
{
    sd_limits *l = sd_limits_create();
    ck_assert_ptr_nonnull(l);
    sd_limit_set(l, SD_LIMIT_MAX_GROWTH, "1GiB");   /* as if from the command line */
    uint64_t steps = 0, v = 1;
    double r = 0;
    sd_error err;
    sd_error_clear(&err);
    const char *text = "# limits\n\n  max-growth = 4MiB  # loses\r\nmax-frag-index=0.6\n"
                       "steps = 50\nfail-on-new-site = 0";
    ck_assert_int_eq(parse(text, l, &steps, &err), SD_OK);
    ck_assert(sd_limits_get(l, SD_LIMIT_MAX_GROWTH, &v, NULL));
    ck_assert_uint_eq(v, 1u << 30);
    ck_assert(sd_limits_get(l, SD_LIMIT_MAX_FRAG_INDEX, NULL, &r) && r == 0.6);
    ck_assert(sd_limits_get(l, SD_LIMIT_FAIL_ON_NEW_SITE, &v, NULL) && v == 0);
    ck_assert_uint_eq(steps, 50);
    steps = 7;   /* --steps given: it wins */
    ck_assert_int_eq(parse("steps = 50\n", l, &steps, NULL), SD_OK);
    ck_assert_uint_eq(steps, 7);
    ck_assert_int_eq(parse("", l, NULL, NULL), SD_OK);
    sd_limits_free(l);
}
END_TEST

START_TEST(file_errors_name_the_line)
{
    static const struct { const char *text; const char *source; const char *word; } cases[] = {
        {"max-growth = 1MiB\nmax-grwoth = 1MiB\n", "limits.conf:2", "unknown limit"},
        {"\n\nmax-growth 1MiB\n", "limits.conf:3", "key = value"},
        {"max-growth = 1MiB\nmax-growth = 2MiB\n", "limits.conf:2", "twice"},
        {"max-frag-index = 2\n", "limits.conf:1", "from 0 to 1"},
        {"steps = -3\n", "limits.conf:1", "steps"},
        {"max-growth = \n", "limits.conf:1", "size"},
    };
    for (size_t i = 0; i < SDP_TEST_LEN(cases); i++) {
        sd_limits *l = sd_limits_create();
        ck_assert_ptr_nonnull(l);
        uint64_t steps = 0;
        sd_error err;
        sd_error_clear(&err);
        ck_assert_int_eq(parse(cases[i].text, l, &steps, &err), SD_EFORMAT);
        ck_assert_str_eq(err.source, cases[i].source);
        ck_assert_msg(strstr(err.text, cases[i].word), "%s: %s", cases[i].text, err.text);
        ck_assert_uint_eq(sd_limits_count(l), 0);   /* nothing half-applied */
        ck_assert_int_eq(parse(cases[i].text, l, &steps, NULL), SD_EFORMAT);
        sd_limits_free(l);
    }
    char nul[] = "max-growth = 1MiB\nx\0y\n";
    sd_limits *l = sd_limits_create();
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(sd_limits_parse(nul, sizeof nul - 1, "c", l, NULL, NULL), SD_EFORMAT);
    sd_limits_free(l);
}
END_TEST

/* check's and curve's parsers share the syntax (base/limits_file.c): its errors read the
 * same through both, whichever keys each knows. */
START_TEST(syntax_errors_alike)
{
    char long_line[1100];
    memset(long_line, 'x', sizeof long_line - 1);
    long_line[sizeof long_line - 1] = '\0';
    long_line[0] = '#';
    char nul[] = "max-growth = 1MiB\nhorizon = 1\0002\n";
    static const struct { const char *source; const char *word; } want[] = {
        {"limits.conf:3", "expected 'key = value', got 'max-growth 1MiB'"},
        {"limits.conf:1", "longer than 1023 bytes"},
        {"limits.conf:2", "NUL byte"},
    };
    const char *text[] = {"# c\n\nmax-growth 1MiB\nsteps = x\n", long_line, nul};
    size_t len[] = {strlen(text[0]), strlen(long_line), sizeof nul - 1};
    for (size_t i = 0; i < SDP_TEST_LEN(want); i++) {
        sd_limits *l = sd_limits_create();
        ck_assert_ptr_nonnull(l);
        sd_curve_limits cl;
        sd_curve_limits_init(&cl, SD_CURVE_LIMITS_VERSION);
        sd_error gate_err, curve_err;
        ck_assert_int_eq(sd_limits_parse(text[i], len[i], "limits.conf", l, NULL, &gate_err),
                         SD_EFORMAT);
        ck_assert_int_eq(sd_curve_limits_parse(text[i], len[i], "limits.conf", &cl, &curve_err),
                         SD_EFORMAT);
        ck_assert_str_eq(gate_err.source, want[i].source);
        ck_assert_msg(strstr(gate_err.text, want[i].word), "%zu: %s", i, gate_err.text);
        ck_assert_str_eq(curve_err.source, gate_err.source);
        ck_assert_str_eq(curve_err.text, gate_err.text);
        ck_assert(curve_err.offset == SD_NO_OFFSET && gate_err.offset == SD_NO_OFFSET);
        sd_limits_free(l);
    }
}
END_TEST

START_TEST(rank_numbers)
{
    ck_assert_int_eq(sd_rank_of_name("rank3.pickle"), 3);
    ck_assert_int_eq(sd_rank_of_name("job_RANK_12.pkl"), 12);
    ck_assert_int_eq(sd_rank_of_name("rank0/snapshot.pickle"), 0);
    ck_assert_int_eq(sd_rank_of_name("ranks/rank-7.pickle"), 7);
    ck_assert_int_eq(sd_rank_of_name("snapshot.pickle"), -1);
    ck_assert_int_eq(sd_rank_of_name("ranks.pickle"), -1);
}
END_TEST

/* The frameworks' names (issue 27), each as its code writes it. */
static void assert_job(const char *name, sd_job_layout layout, int64_t rank, int64_t step, bool oom)
{
    sd_job_name j;
    ck_assert_msg(sd_job_name_read(name, NULL, &j) == (layout != SD_JOB_NONE), "%s", name);
    ck_assert_msg(j.layout == layout && j.rank == rank && j.step == step && j.oom == oom,
                  "%s: layout %d rank %lld step %lld oom %d", name, (int)j.layout,
                  (long long)j.rank, (long long)j.step, (int)j.oom);
}

START_TEST(job_names)
{
    assert_job("out/memory_snapshot/iteration_20/rank3_memory_snapshot.pickle",
               SD_JOB_TORCHTITAN, 3, 20, false);
    assert_job("memory_snapshot/iteration_7_exit/rank0_memory_snapshot.pickle",
               SD_JOB_TORCHTITAN, 0, 7, true);
    assert_job("rank5_memory_snapshot.pickle", SD_JOB_TORCHTITAN, 5, -1, false);
    assert_job("job.zip:iteration_3/rank1_memory_snapshot.pickle", SD_JOB_TORCHTITAN, 1, 3, false);
    assert_job("run/oom_rank-12_snapshot.pickle", SD_JOB_MEGATRON_LM, 12, -1, true);
    assert_job("snapshot_4.pickle", SD_JOB_MEGATRON_BRIDGE, 4, -1, false);
    assert_job("/nemo_run/memory.snapshot_rank-7.pickle", SD_JOB_MEGATRON_BRIDGE, 7, -1, false);
    assert_job("snapshot_oom_rank-1.pickle", SD_JOB_MEGATRON_BRIDGE, 1, -1, true);
    assert_job("save/step12/torch_memory_rank2_pid4242.pickle", SD_JOB_VERL, 2, 12, false);
    assert_job("save/oom_x/torch_memory_oom_rank0_pid9.pickle", SD_JOB_VERL, 0, -1, true);
    /* a user's own series keeps being one: no layout */
    assert_job("series/step_0100.pickle", SD_JOB_NONE, -1, -1, false);
    assert_job("my_snapshot_100.pickle", SD_JOB_NONE, -1, -1, false);
    assert_job("rank3.pickle", SD_JOB_NONE, -1, -1, false);
    assert_job("", SD_JOB_NONE, -1, -1, false);
    ck_assert_int_eq(sd_rank_of_name("step2/torch_memory_rank1_pid77.pickle"), 1);

    /* one step of verl's ranks: ranks, though the pids differ; two steps: not */
    const char *one[] = {"s/step2/torch_memory_rank0_pid10.pickle", "s/step2/torch_memory_rank1_pid11.pickle"};
    ck_assert(sd_ranks_names_are_ranks(one, 2));
    ck_assert(!sd_job_names_are_steps(one, 2, NULL));
    const char *two[] = {"s/step1/torch_memory_rank0_pid10.pickle", "s/step2/torch_memory_rank0_pid10.pickle"};
    ck_assert(!sd_ranks_names_are_ranks(two, 2));
    ck_assert(sd_job_names_are_steps(two, 2, NULL));
    /* the one rule every command reads them by (sd_names_view_of): as the names say ... */
    ck_assert_int_eq(sd_names_view_of(one, 2, SD_READ_AS_GUESS, NULL), SD_NAMES_RANKS);
    ck_assert_int_eq(sd_names_view_of(two, 2, SD_READ_AS_GUESS, NULL), SD_NAMES_JOB);
    const char *plain[] = {"a.pickle", "b.pickle"};
    ck_assert_int_eq(sd_names_view_of(plain, 2, SD_READ_AS_GUESS, NULL), SD_NAMES_SERIES);
    /* ... or as the user said */
    ck_assert_int_eq(sd_names_view_of(two, 2, SD_READ_AS_RANKS, NULL), SD_NAMES_RANKS);
    ck_assert_int_eq(sd_names_view_of(one, 2, SD_READ_AS_SERIES, NULL), SD_NAMES_SERIES);

    sd_error err;
    sd_error_clear(&err);
    sd_name_pattern *p = sd_name_pattern_create("s(?P<step>[0-9]+)_r(?P<rank>[0-9]+)(?P<oom>_oom)?", &err);
    ck_assert_ptr_nonnull(p);
    sd_job_name j;
    ck_assert(sd_job_name_read("dir/s40_r2_oom.pkl", p, &j));
    ck_assert(j.layout == SD_JOB_PATTERN && j.rank == 2 && j.step == 40 && j.oom);
    ck_assert(sd_job_name_read("dir/s40_r2.pkl", p, &j) && !j.oom);
    /* a name the pattern misses still reads by the frameworks' layouts */
    ck_assert(sd_job_name_read("snapshot_1.pickle", p, &j) && j.layout == SD_JOB_MEGATRON_BRIDGE);
    /* a pattern that reads every name makes a job's folder, even of one step */
    const char *one_step[] = {"d/s40_r0.pkl", "d/s40_r1.pkl"};
    ck_assert(!sd_job_names_are_steps(one_step, 2, p));
    ck_assert_int_eq(sd_names_view_of(one_step, 2, SD_READ_AS_GUESS, p), SD_NAMES_JOB);
    ck_assert_int_ne(sd_names_view_of(one_step, 2, SD_READ_AS_GUESS, NULL), SD_NAMES_JOB);
    sd_name_pattern_free(p);
    ck_assert_ptr_null(sd_name_pattern_create("(?P<host>x)", &err));
    ck_assert_int_eq(err.code, SD_EUSAGE);
    sd_error_clear(&err);
    ck_assert_ptr_null(sd_name_pattern_create("(?P<rank>x", &err));
    ck_assert_int_eq(err.code, SD_EUSAGE);
    sd_error_clear(&err);
    ck_assert_ptr_null(sd_name_pattern_create("no groups", &err));
}
END_TEST

START_TEST(job_summary)
{
    sd_job_entry e[5] = {
        {"b", {SD_JOB_TORCHTITAN, 1, 20, false}, {.allocated_bytes = 30}},
        {"a", {SD_JOB_TORCHTITAN, 0, 10, false}, {.allocated_bytes = 10}},
        {"c", {SD_JOB_TORCHTITAN, 1, 10, false}, {.allocated_bytes = 20}},
        {"d", {SD_JOB_TORCHTITAN, 1, 20, true}, {.allocated_bytes = 99}},
        {"e", {SD_JOB_TORCHTITAN, 0, 20, false}, {.allocated_bytes = 10}},
    };
    sd_job_rank r[5];
    size_t grown;
    size_t n = sd_job_summarize(e, 5, r, &grown);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(e[0].source, "a");
    ck_assert_str_eq(e[1].source, "c");
    ck_assert_str_eq(e[4].source, "d");   /* the step's OOM dump after its snapshots */
    ck_assert(r[0].rank == 0 && r[0].n_steps == 2 && r[0].change == 0);
    ck_assert(r[1].rank == 1 && r[1].n_steps == 2 && r[1].n_oom == 1 && r[1].change == 10);
    ck_assert(r[1].first_step == 10 && r[1].last_step == 20 && r[1].last_allocated == 30);
    ck_assert_uint_eq(grown, 1);
}
END_TEST

START_TEST(pairing)
{
    const char *old_names[] = {"step100_rank0.pickle", "step100_rank1.pickle",
                               "step100_rank2.pickle"};
    const char *new_names[] = {"rank2/s.pickle", "rank0/s.pickle", "rank3/s.pickle"};
    sd_rank_pair p[6];
    size_t n = sd_ranks_pair(old_names, 3, new_names, 3, p);
    ck_assert_uint_eq(n, 4);
    ck_assert(p[0].old_index == 2 && p[0].new_index == 0 && p[0].rank == 2);
    ck_assert(p[1].old_index == 0 && p[1].new_index == 1 && p[1].rank == 0);
    ck_assert(p[2].old_index == SD_RANK_NONE && p[2].new_index == 2 && p[2].rank == 3);
    ck_assert(p[3].old_index == 1 && p[3].new_index == SD_RANK_NONE && p[3].rank == 1);
    /* no rank numbers: by name */
    const char *a[] = {"a.pickle", "b.pickle"}, *b[] = {"b.pickle", "c.pickle"};
    n = sd_ranks_pair(a, 2, b, 2, p);
    ck_assert_uint_eq(n, 3);
    ck_assert(p[0].old_index == 1 && p[0].new_index == 0 && p[0].rank == -1);
    ck_assert(p[1].old_index == SD_RANK_NONE && p[1].new_index == 1);
    ck_assert(p[2].old_index == 0 && p[2].new_index == SD_RANK_NONE);
    /* one baseline for every rank */
    n = sd_ranks_pair(a, 1, new_names, 3, p);
    ck_assert_uint_eq(n, 3);
    ck_assert(p[2].old_index == 0 && p[2].new_index == 2);
}
END_TEST

static Suite *make(void)
{
    Suite *s = suite_create("gate");
    TCase *tc = tcase_create("limits");
    tcase_add_test(tc, limit_values);
    tcase_add_test(tc, file_ok_and_command_line_wins);
    tcase_add_test(tc, file_errors_name_the_line);
    tcase_add_test(tc, syntax_errors_alike);
    suite_add_tcase(s, tc);
    TCase *tr = tcase_create("ranks");
    tcase_add_test(tr, rank_numbers);
    tcase_add_test(tr, pairing);
    tcase_add_test(tr, job_names);
    tcase_add_test(tr, job_summary);
    suite_add_tcase(s, tr);
    return s;
}

int main(void) { return sdp_test_main(make); }
