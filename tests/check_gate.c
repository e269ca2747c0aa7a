/* check_gate.c - unit tests of the gate's limits file and value parsing (gate.h) and of
 * rank pairing and spread (ranks.h). The CLI behaviour is tests/test_check_cli.py. */
#include <string.h>

#include "check_helpers.h"
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
    suite_add_tcase(s, tc);
    TCase *tr = tcase_create("ranks");
    tcase_add_test(tr, rank_numbers);
    tcase_add_test(tr, pairing);
    suite_add_tcase(s, tr);
    return s;
}

int main(void) { return sdp_test_main(make); }
