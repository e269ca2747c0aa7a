/* check_curve.c - unit tests of `snapdiff curve`'s reader and statistics (curve.h,
 * logs/log_read.h): figures and units, bounded merging, verdicts on made-up curves,
 * Sen's interval, the limits file. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logs/log_line.h"
#include "logs/log_read.h"
#include "snapdiff/curve.h"

#include "check_helpers.h"

START_TEST(figures_and_units)
{
    double v;
    size_t used;
    ck_assert(sdp_log_parse_figure("23.5G", 5, 1, &v, &used) && v == 23.5 * 1073741824.0);
    ck_assert(sdp_log_parse_figure("2 GB", 4, 1, &v, &used) && v == 2.0 * 1073741824.0);
    ck_assert(sdp_log_parse_figure("512KiB", 6, 1, &v, &used) && v == 512 * 1024.0);
    ck_assert(sdp_log_parse_figure("100", 3, 1048576.0, &v, &used) && v == 100 * 1048576.0);
    ck_assert(sdp_log_parse_figure("7 steps", 7, 1, &v, &used) && v == 7 && used == 1);
    ck_assert(!sdp_log_parse_figure("1e400", 5, 1, &v, &used));
    ck_assert(!sdp_log_parse_figure("17179869184TiB", 14, 1, &v, &used));
    ck_assert(!sdp_log_parse_figure("1.5.5", 5, 1, &v, &used));
    ck_assert(!sdp_log_parse_figure("-5", 2, 1, &v, &used));
    ck_assert(!sdp_log_parse_figure("G", 1, 1, &v, &used));
    ck_assert(sdp_log_parse_figure("0 bytes is", 10, 1, &v, &used) && v == 0 && used == 7);
}
END_TEST

/* What the presets lean on: thousands separators only where they group three digits,
 * the time stamps of nvidia-smi's table (ctime) and dmon -o DT, word-bounded search. */
START_TEST(numbers_stamps_words)
{
    double v, a, b;
    size_t used;
    ck_assert(sdp_parse_number("3,090  tflops", 13, &v, &used) && v == 3090 && used == 5);
    ck_assert(sdp_parse_number("1,234,567.5", 11, &v, &used) && v == 1234567.5 && used == 11);
    ck_assert(sdp_parse_number("10,20", 5, &v, &used) && v == 10 && used == 2);
    ck_assert(sdp_parse_number("1.5,000", 7, &v, &used) && v == 1.5 && used == 3);
    ck_assert(sdp_parse_number("12,3456", 7, &v, &used) && v == 12 && used == 2);
    ck_assert(sdp_parse_timestamp("Fri Dec  4 10:18:58 2026", 24, &a));
    ck_assert(sdp_parse_timestamp("Fri Dec  4 10:19:03 2026", 24, &b) && b - a == 5);
    ck_assert(sdp_parse_timestamp("20261204    10:18:58", 20, &b) && b == a);
    ck_assert(sdp_parse_timestamp("2026-12-04T10:18:58", 19, &b) && b == a);
    ck_assert(!sdp_parse_timestamp("Fri Xyz  4 10:18:58 2026", 24, &b));
    const char *s = "MaxMemAllocated=2GB MemAllocated=1GB";
    ck_assert(sdp_find_word(s, strlen(s), "MemAllocated=") == s + 20);
    ck_assert(sdp_figure_at(s, strlen(s), s + 33, 1, true, &v) && v == 1073741824.0);
    ck_assert(!sdp_figure_at("x 12 loss", 9, "x 12 loss" + 1, 1, true, &v));
}
END_TEST

/* A text log of n steps: base + slope * s + a sawtooth of `swing` over `period` steps. */
static char *write_log(int n, double base, double slope, double swing, int period)
{
    size_t cap = (size_t)n * 64 + 1, k = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (int s = 0; s < n; s++)
        k += (size_t)snprintf(buf + k, cap - k, "step=%d alloc=%.0fB\n", s,
                              base + slope * s + swing * (s % period) / (period - 1));
    char *path = sdp_test_write_temp(buf, k);
    free(buf);
    return path;
}

static const sd_curve_series *analyse(const char *path, const sd_curve_options *o, sd_curve **out)
{
    sd_error err;
    sd_error_clear(&err);
    const char *paths[1] = {path};
    *out = sd_curve_create(paths, 1, o, &err);
    ck_assert_msg(*out != NULL, "%s", err.text);
    ck_assert_uint_eq(sd_curve_series_count(*out), 1);
    return sd_curve_series_at(*out, 0);
}

START_TEST(leak_under_swing_and_clean_swing)
{
    sd_curve *c;
    char *p = write_log(1000, 20e9, 102400, 2147483648.0, 20);
    const sd_curve_series *s = analyse(p, NULL, &c);
    ck_assert_int_eq(s->verdict, SD_CURVE_GROWING);
    ck_assert(fabs(s->slope - 102400) < 10240);
    ck_assert(s->low <= s->slope && s->slope <= s->high && s->low > 0);
    ck_assert(s->baseline_x == 200);
    sd_curve_free(c);
    remove(p);
    free(p);
    p = write_log(1000, 20e9, 0, 2147483648.0, 20);
    s = analyse(p, NULL, &c);
    ck_assert_int_eq(s->verdict, SD_CURVE_FLAT);
    sd_curve_free(c);
    remove(p);
    free(p);
    p = write_log(1000, 20e9, -102400, 0, 20);
    s = analyse(p, NULL, &c);
    ck_assert_int_eq(s->verdict, SD_CURVE_SHRINKING);
    sd_curve_free(c);
    remove(p);
    free(p);
}
END_TEST

START_TEST(merging_keeps_the_slope)
{
    sd_curve *c;
    char *p = write_log(5000, 1e9, 4096, 64e6, 10);
    sd_curve_options o;
    memset(&o, 0, sizeof o);
    o.max_samples = 64;
    const sd_curve_series *s = analyse(p, &o, &c);
    ck_assert_uint_eq(s->samples, 5000);
    ck_assert(s->stride >= 64);
    ck_assert_int_eq(s->verdict, SD_CURVE_GROWING);
    ck_assert(fabs(s->slope - 4096) < 410);
    sd_curve_free(c);
    remove(p);
    free(p);
}
END_TEST

/* The points a picture needs: bounded, covering the run, the floors those of the fit. */
START_TEST(plot_is_bounded_and_whole)
{
    sd_curve *c;
    int n = 20000, period = 20;
    char *p = write_log(n, 1e9, 1024, 64e6, period);
    const sd_curve_series *s = analyse(p, NULL, &c);
    sd_curve_plot pl;
    ck_assert(sd_curve_series_plot(c, 0, &pl));
    ck_assert(!sd_curve_series_plot(c, 1, &pl));   /* out of range */
    ck_assert(sd_curve_series_plot(c, 0, &pl));
    ck_assert_uint_le(pl.n_points, SD_CURVE_PLOT_POINTS);
    ck_assert_uint_ge(pl.n_points, SD_CURVE_PLOT_POINTS - 1);
    ck_assert(pl.x[0] == s->first_x);
    double hi = 0, lo = INFINITY;
    for (size_t k = 0; k < pl.n_points; k++) {
        ck_assert(pl.lo[k] <= pl.hi[k]);
        ck_assert(k == 0 || pl.x[k] > pl.x[k - 1]);
        hi = fmax(hi, pl.hi[k]);
        lo = fmin(lo, pl.lo[k]);
    }
    ck_assert(hi == s->peak);               /* the highest sample survives bucketing */
    ck_assert(lo == 1e9);                   /* and the lowest: step 0's */
    ck_assert_uint_eq(pl.n_floors, s->windows);
    ck_assert(pl.floor_bytes[0] == s->baseline_bytes);
    ck_assert(pl.floor_bytes[pl.n_floors - 1] == s->floor_last);
    /* each floor is the bottom of a sawtooth tooth: base + slope * x */
    for (size_t k = 0; k < pl.n_floors; k++)
        ck_assert(fabs(pl.floor_bytes[k] - (1e9 + 1024 * pl.floor_x[k])) < 1);
    sd_curve_free(c);
    remove(p);
    free(p);
}
END_TEST

START_TEST(limits_file)
{
    sd_curve_limits l;
    memset(&l, 0, sizeof l);
    l.has_max_per_step = true;
    l.max_per_step = 1;
    sd_error err;
    sd_error_clear(&err);
    const char *t = "# x\nmax-per-step = 64KiB\nmax-growth = 1GiB\nmax-fraction = 0.9\nhorizon = 50\n";
    ck_assert_int_eq(sd_curve_limits_parse(t, strlen(t), "l.conf", &l, &err), SD_OK);
    ck_assert_uint_eq(l.max_per_step, 1);   /* the command line wins */
    ck_assert(l.has_max_fraction && l.max_fraction == 0.9 && l.horizon == 50);
    const char *bad = "max-fraction = 2\n";
    ck_assert_int_eq(sd_curve_limits_parse(bad, strlen(bad), "l.conf", &l, &err), SD_EFORMAT);
    ck_assert_str_eq(err.source, "l.conf:1");
}
END_TEST

/* Read `text` as one log; the first series' first kept sample. */
static sdp_log_series *read_one(sdp_log *log, const char *text, sdp_log_format *fmt)
{
    char *path = sdp_test_write_temp(text, strlen(text));
    sdp_log_init(log, 0);
    sdp_log_file_info info;
    sd_error err;
    sd_error_clear(&err);
    ck_assert_int_eq(sdp_log_read(log, path, 0, SDP_LOG_AUTO, &info, &err), SD_OK);
    sdp_log_finish(log);
    remove(path);
    free(path);
    *fmt = info.format;
    ck_assert_uint_ge(log->n_series, 1);
    return &log->series[0];
}

START_TEST(each_format)
{
    sdp_log log;
    sdp_log_format f;
    const double G = 1073741824.0;
    sdp_log_series *s = read_one(&log, "step=1200 alloc=23.41G reserved=30.02G\n"
                                   "step: 1201 | mem_alloc 23.4 GB\n"
                                   "iter 1202 loss 3.1 memory_allocated=25132122112 "
                                   "max_memory_allocated=26000000000\n", &f);
    ck_assert_int_eq(f, SDP_LOG_TEXT);
    ck_assert_uint_eq(s->n, 3);
    ck_assert(s->x[0] == 1200 && fabs(s->lo[0] - 23.41 * G) < 1 && fabs(s->gap[0] - 6.61 * G) < 2);
    ck_assert(s->x[1] == 1201 && fabs(s->lo[1] - 23.4 * G) < 1 && isnan(s->gap[1]));
    ck_assert(s->x[2] == 1202 && s->lo[2] == 25132122112.0);
    ck_assert(s->has_max_alloc && s->max_alloc_last == 26000000000.0);
    sdp_log_free(&log);

    s = read_one(&log, "{\"global_step\": 5, \"rank\": 3, \"stats\": {\"allocated_bytes.all."
                 "current\": 1024, \"num_alloc_retries\": 2}, \"note\": \"a \\\" b\"}\n", &f);
    ck_assert_int_eq(f, SDP_LOG_JSONL);
    ck_assert(s->rank == 3 && s->x[0] == 5 && s->lo[0] == 1024 && s->retries_last == 2);
    sdp_log_free(&log);

    /* a preamble, then JSON Lines and printed Python dicts */
    s = read_one(&log, "Starting training on 8 GPUs\n{\"step\": 1, \"memory_allocated\": 2048}\n"
                 "{'step': 2, 'memory_allocated': 4096, 'loss': 0.5}\n", &f);
    ck_assert_int_eq(f, SDP_LOG_TEXT);
    ck_assert_uint_eq(s->n, 2);
    ck_assert(s->x[0] == 1 && s->lo[0] == 2048 && s->x[1] == 2 && s->lo[1] == 4096);
    sdp_log_free(&log);

    s = read_one(&log, "global_step,loss,allocated_mib,reserved_gb\n10,2.5,512,1\n", &f);
    ck_assert_int_eq(f, SDP_LOG_CSV);
    ck_assert(s->x[0] == 10 && s->lo[0] == 512.0 * 1048576 && s->gap[0] == G - 512.0 * 1048576);
    sdp_log_free(&log);

    s = read_one(&log, "timestamp, index, memory.used [MiB], memory.total [MiB]\n"
                 "2024/05/01 23:59:50.000, 1, 100 MiB, 81920 MiB\n"
                 "2024/05/02 00:00:10.500, 1, 101 MiB, 81920 MiB\n", &f);
    ck_assert_int_eq(f, SDP_LOG_NVSMI);
    ck_assert(s->gpu == 1 && s->axis == SDP_AXIS_SECOND && s->measure == SDP_LOG_USED);
    ck_assert(s->x[0] == 0 && fabs(s->x[1] - 20.5) < 1e-6 && s->lo[1] == 101.0 * 1048576);
    ck_assert(s->has_total && s->total == 81920.0 * 1048576);
    sdp_log_free(&log);
}
END_TEST

static Suite *make(void)
{
    Suite *s = suite_create("curve");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, figures_and_units);
    tcase_add_test(tc, numbers_stamps_words);
    tcase_add_test(tc, each_format);
    tcase_add_test(tc, leak_under_swing_and_clean_swing);
    tcase_add_test(tc, merging_keeps_the_slope);
    tcase_add_test(tc, limits_file);
    tcase_add_test(tc, plot_is_bounded_and_whole);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return sdp_test_main(make); }
