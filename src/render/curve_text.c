/* curve_text.c - `snapdiff curve` for people (render_curve.h): per series the curve and
 * its floor as sparklines, the baseline, the lower edge's slope and interval, the verdict
 * with the numbers behind it, growth and steps left; then the ranks and the gate. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/curve_render.h"
#include "render/format.h"
#include "render/series_render.h"
#include "snapdiff/render_curve.h"

static sdp_text bytes_of(double b)
{
    if (!(b > 0)) b = 0;
    if (b > 1.8e19) b = 1.8e19;
    return sdp_fmt_bytes((uint64_t)llround(b));
}

const char *sdp_curve_per(const sd_curve_series *s)
{
    return s->axis_seconds ? "s" : s->x_name ? s->x_name : "step";
}

const char *sdp_curve_x(const sd_curve_series *s)
{
    return s->axis_seconds ? "second" : s->x_name ? s->x_name : "step";
}

sdp_text sdp_curve_slope(double b, const char *per)
{
    sdp_text t;
    double r = fabs(b) < 0.5 ? 0 : b;
    if (r > 9.2e18) r = 9.2e18;
    if (r < -9.2e18) r = -9.2e18;
    sdp_text d = sdp_fmt_delta((int64_t)llround(r));
    size_t k = strnlen(d.s, 32);
    memcpy(t.s, d.s, k);
    snprintf(t.s + k, sizeof t.s - k, "/%s", per);
    return t;
}

/* Whether the log of s restarted: another series of the same source, rank and GPU. */
static bool has_runs(const sd_curve *c, const sd_curve_series *s)
{
    if (s->run > 0) return true;
    for (size_t i = 0; i < sd_curve_series_count(c); i++) {
        const sd_curve_series *o = sd_curve_series_at(c, i);
        if (o != s && o->source == s->source && o->rank == s->rank && o->gpu == s->gpu)
            return true;
    }
    return false;
}

void sdp_curve_who(const sd_curve *c, const sd_curve_series *s, char *buf, size_t size)
{
    int k;
    if (s->gpu >= 0)
        k = snprintf(buf, size, "GPU %" PRId64 "%s%s", s->gpu, sd_curve_file_count(c) > 1 ? " of " : "",
                     sd_curve_file_count(c) > 1 ? s->source : "");
    else if (s->rank >= 0)
        k = snprintf(buf, size, "rank %" PRId64, s->rank);
    else
        k = snprintf(buf, size, "%s", s->source);
    if (k >= 0 && (size_t)k < size && has_runs(c, s))
        snprintf(buf + k, size - (size_t)k, ", run %" PRId64, s->run + 1);
}

void sdp_curve_outlier_why(const sd_curve *c, const sd_curve_series *s, char *buf, size_t size)
{
    const sd_curve_ranks *r = sd_curve_ranks_of(c);
    size_t k = 0;
    buf[0] = '\0';
    if (s->slope_outlier)
        k += (size_t)snprintf(buf + k, size - k, "%s %s; the others %s +- %s",
                              s->slope > r->slope_median ? "grows" : "slopes",
                              sdp_curve_slope(s->slope, sdp_curve_per(s)).s,
                              sdp_curve_slope(r->slope_median, sdp_curve_per(s)).s,
                              bytes_of(1.4826 * r->slope_mad).s);
    if (s->baseline_outlier && k < size)
        snprintf(buf + k, size - k, "%sbaseline %s; the others %s +- %s", k ? "; " : "",
                 bytes_of(s->baseline_bytes).s, bytes_of(r->baseline_median).s,
                 bytes_of(1.4826 * r->baseline_mad).s);
}

void sdp_curve_verdict_why(const sd_curve *c, const sd_curve_series *s, char *buf, size_t size)
{
    const sd_curve_options *o = sd_curve_options_used(c);
    double span = s->last_x - s->baseline_x;
    const char *unit = s->axis_seconds ? "s" : strcmp(sdp_curve_x(s), "sample") == 0 ? "samples" : "steps";
    switch (s->verdict) {
    case SD_CURVE_GROWING:
    case SD_CURVE_SHRINKING:
        snprintf(buf, size, "%sthe floor %s by %s over %.0f %s; trend confidence %.4f >= %.2f and "
                 "the 95%% interval excludes 0",
                 s->maximum && s->verdict == SD_CURVE_GROWING
                     ? "the peak creeps, not a leak (the figure is a maximum): " : "",
                 s->verdict == SD_CURVE_GROWING ? "rises" : "falls",
                 bytes_of(fabs(s->slope) * span).s, span, unit, s->confidence, o->min_confidence);
        break;
    case SD_CURVE_NOISY:
        snprintf(buf, size, "no steady trend (confidence %.4f), and the floors stray %s from "
                 "the line, more than %s", s->confidence, bytes_of(s->stray).s,
                 bytes_of(fmax(4.0 * (double)o->min_growth, 0.01 * s->baseline_bytes)).s);
        break;
    case SD_CURVE_FLAT:
        snprintf(buf, size, "no trend that matters: %s over %.0f %s (confidence %.4f; growing "
                 "needs >= %.2f and %s)", bytes_of(fabs(s->slope) * span).s, span, unit,
                 s->confidence, o->min_confidence, bytes_of((double)o->min_growth).s);
        break;
    default:
        snprintf(buf, size, "fewer than 8 samples after the baseline: no verdict");
        break;
    }
}

void sdp_curve_limit_words(const sd_curve *c, const sd_curve_limit_result *r, char *buf,
                           size_t size)
{
    char who[160] = "";
    const sd_curve_series *s = sd_curve_series_at(c, r->series);
    if (r->measurable && s) sdp_curve_who(c, s, who, sizeof who);
    const char *cmp = r->pass ? "<=" : ">";
    if (!r->measurable) {
        snprintf(buf, size, "--%s: nothing to measure (%s)", r->name,
                 r->id == SD_CURVE_LIMIT_MAX_FRACTION ? "no capacity: give --capacity"
                 : r->id == SD_CURVE_LIMIT_MAX_PER_STEP ? "no series with steps and a verdict"
                                                          : "no baseline");
    } else if (r->id == SD_CURVE_LIMIT_MAX_PER_STEP) {
        snprintf(buf, size, "--%s: %s %s %s (%s)", r->name, sdp_curve_slope(r->measured, "step").s,
                 cmp, bytes_of(r->limit).s, who);
    } else if (r->id == SD_CURVE_LIMIT_MAX_GROWTH_PCT) {
        snprintf(buf, size, "--%s: %+.1f%% vs the baseline %s %g%% (%s)", r->name, r->measured,
                 cmp, r->limit, who);
    } else {
        snprintf(buf, size, "--%s: %.3f of the capacity %s %.3f%s (%s)", r->name, r->measured,
                 cmp, r->limit, r->projected ? ", projected within the horizon" : "", who);
    }
}

static const char *verdict_colour(bool color, sd_curve_verdict v)
{
    return sdp_ansi(color, v == SD_CURVE_GROWING ? SDP_RED
                           : v == SD_CURVE_SHRINKING ? SDP_GREEN
                           : v == SD_CURVE_NOISY ? SDP_YELLOW : SDP_DIM);
}

/* A sparkline of the SD_CURVE_SPARK buckets (an empty bucket repeats its neighbour). */
static void spark(const double *v, const double *scale_lo, const double *scale_hi, char *buf,
                  size_t size, bool unicode)
{
    uint64_t u[SD_CURVE_SPARK + 2];
    double prev = NAN;
    size_t n = 0;
    /* a range under 0.1% of the level is drawn flat: it is no movement worth a picture */
    bool flat = *scale_hi - *scale_lo < 0.001 * fabs(*scale_hi);
    for (int k = 0; k < SD_CURVE_SPARK; k++) {
        double x = isnan(v[k]) ? prev : v[k];
        if (isnan(x)) continue;
        u[n++] = flat ? 0 : (uint64_t)llround(fmax(x, 0));
        prev = x;
    }
    /* two fixed ends set the scale; they are cut off below */
    u[n] = flat ? 0 : (uint64_t)llround(fmax(*scale_lo, 0));
    u[n + 1] = flat ? 0 : (uint64_t)llround(fmax(*scale_hi, 0));
    char tmp[(SD_CURVE_SPARK + 2) * 4 + 1];
    sdp_sparkline(u, n + 2, n + 2, unicode, tmp, sizeof tmp);
    size_t cut = unicode ? n * 3 : n;   /* each block is 3 bytes of UTF-8 */
    if (cut >= size) cut = size - 1;
    memcpy(buf, tmp, cut);
    buf[cut] = '\0';
}

static void series_block(FILE *out, const sd_curve *c, const sd_curve_series *s, bool color,
                         bool unicode)
{
    char who[200], why[400];
    sdp_curve_who(c, s, who, sizeof who);
    const char *unit = s->axis_seconds ? "s" : strcmp(sdp_curve_x(s), "sample") == 0 ? "samples" : "steps";
    const char *bold = sdp_ansi(color, SDP_BOLD), *reset = sdp_ansi(color, SDP_RESET);
    const char *vname = sd_curve_verdict_name(s->verdict);
    fprintf(out, "%s%s%s  %s, %" PRIu64 " samples, %s %.0f..%.0f%s: %s%s%s\n", bold, who, reset,
            s->measure, s->samples, sdp_curve_x(s), s->first_x, s->last_x,
            s->stride > 1 ? " (merged)" : "", verdict_colour(color, s->verdict),
            vname ? vname : "no verdict", reset);
    /* each line on its own scale: the floor's rise shows even under a wide swing */
    double rows[2][2] = {{INFINITY, -INFINITY}, {INFINITY, -INFINITY}};
    const double *src[2] = {s->spark_hi, s->spark_lo};
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < SD_CURVE_SPARK; k++)
            if (!isnan(src[r][k])) {
                rows[r][0] = fmin(rows[r][0], src[r][k]);
                rows[r][1] = fmax(rows[r][1], src[r][k]);
            }
    char line[SD_CURVE_SPARK * 4 + 1];
    static const char *const names[2] = {"curve", "floor"};
    for (int r = 0; r < 2; r++) {
        spark(src[r], &rows[r][0], &rows[r][1], line, sizeof line, unicode);
        fprintf(out, "  %-8s  %s  %s .. %s\n", names[r], line, bytes_of(rows[r][0]).s,
                bytes_of(rows[r][1]).s);
    }
    fprintf(out, "  baseline  %s at %s %.0f%s\n", bytes_of(s->baseline_bytes).s,
            sdp_curve_x(s), s->baseline_x,
            s->baseline_short ? " (the step asked for left too little: 10% of the run)" : "");
    if (s->verdict == SD_CURVE_UNDECIDED) {
        sdp_curve_verdict_why(c, s, why, sizeof why);
        fprintf(out, "  verdict   %s\n", why);
        return;
    }
    fprintf(out, "  slope     %s (95%%: %s .. %s), floor of %zu windows\n",
            sdp_curve_slope(s->slope, sdp_curve_per(s)).s, sdp_curve_slope(s->low, sdp_curve_per(s)).s,
            sdp_curve_slope(s->high, sdp_curve_per(s)).s, s->windows);
    sdp_curve_verdict_why(c, s, why, sizeof why);
    fprintf(out, "  verdict   %s%s%s: %s\n", verdict_colour(color, s->verdict), vname, reset, why);
    if (s->has_growth_pct) {
        fprintf(out, "  growth    %+.1f%% vs the baseline (floor now %s)", s->growth_pct,
                bytes_of(s->floor_last).s);
        if (s->has_early)
            fprintf(out, "; first 200 steps %+.1f%%%s", s->early_pct,
                    s->early_warning ? " (> 5%: early warning)" : "");
        fputc('\n', out);
    }
    if (s->has_capacity) {
        fprintf(out, "  capacity  %.2f GiB (%s bytes), peak %s (last window %s)",
                (double)s->capacity / 1073741824.0, sdp_fmt_count(s->capacity).s,
                bytes_of(s->peak).s, bytes_of(s->peak_last).s);
        if (s->has_to_threshold)
            fprintf(out, "; %.0f%% in %s %s", 100 * s->threshold,
                    sdp_fmt_count((uint64_t)s->to_threshold).s, unit);
        if (s->has_to_capacity)
            fprintf(out, ", full in %s %s", sdp_fmt_count((uint64_t)s->to_capacity).s, unit);
        if (!s->has_to_threshold && !s->has_to_capacity) fprintf(out, "; not growing: no estimate");
        fputc('\n', out);
    }
    if (s->has_gap)
        fprintf(out, "  gap       reserved - allocated %s -> %s, %s%s\n", bytes_of(s->gap_first).s,
                bytes_of(s->gap_last).s, sdp_curve_slope(s->gap_slope, sdp_curve_per(s)).s,
                s->gap_growing ? " (growing: fragmentation)" : " (not growing)");
    if (s->has_max_allocated)
        fprintf(out, "  max_memory_allocated %s (last logged)\n", bytes_of(s->max_allocated_last).s);
    if (s->has_retries)
        fprintf(out, "  num_alloc_retries %.0f -> %.0f%s\n", s->retries_first, s->retries_last,
                s->retries_last > s->retries_first ? " (the allocator freed its cache and retried: "
                "a slowdown and a fragmentation sign)" : "");
    if (s->has_ooms && s->ooms_last > 0)
        fprintf(out, "  num_ooms  %.0f -> %.0f\n", s->ooms_first, s->ooms_last);
}

static void ranks_table(FILE *out, const sd_curve *c, bool color)
{
    const sd_curve_ranks *r = sd_curve_ranks_of(c);
    size_t n = sd_curve_series_count(c);
    if (n < 2) return;
    fprintf(out, "\n%sSeries: %zu%s", sdp_ansi(color, SDP_BOLD), n, sdp_ansi(color, SDP_RESET));
    if (r->count >= 3)
        fprintf(out, ", slope median %s (MAD %s), %zu outlier%s", sdp_curve_slope(r->slope_median,
                "step").s, bytes_of(r->slope_mad).s, r->outliers, r->outliers == 1 ? "" : "s");
    fprintf(out, "\n  %-18s %-9s %18s %11s %8s  %s\n", "WHO", "VERDICT", "SLOPE", "BASELINE",
            "GROWTH", "OUTLIER");
    for (size_t i = 0; i < n; i++) {
        const sd_curve_series *s = sd_curve_series_at(c, i);
        char who[200], why[400] = "";
        sdp_curve_who(c, s, who, sizeof who);
        if (s->slope_outlier || s->baseline_outlier) sdp_curve_outlier_why(c, s, why, sizeof why);
        const char *v = sd_curve_verdict_name(s->verdict);
        char growth[32] = "-";
        if (s->has_growth_pct) snprintf(growth, sizeof growth, "%+.1f%%", s->growth_pct);
        fprintf(out, "  %-18.18s %s%-9s%s %18s %11s %8s  %s\n", who,
                verdict_colour(color, s->verdict), v ? v : "-", sdp_ansi(color, SDP_RESET),
                sdp_curve_slope(s->slope, sdp_curve_per(s)).s, bytes_of(s->baseline_bytes).s,
                growth, why);
    }
}

static void oom_figure(FILE *out, const char *name, double v)
{
    if (!isnan(v)) fprintf(out, ", %s %s", name, bytes_of(v).s);
}

/* The out-of-memory errors the logs print, each with its line, rank and figures. */
static void ooms_text(FILE *out, const sd_curve *c, bool color)
{
    if (!sd_curve_oom_total(c)) return;
    fprintf(out, "\n%sOut of memory: %" PRIu64 "%s%s\n", sdp_ansi(color, SDP_RED),
            sd_curve_oom_total(c), sdp_ansi(color, SDP_RESET),
            sd_curve_oom_total(c) > sd_curve_oom_count(c) ? " (the first ones shown)" : "");
    for (size_t i = 0; i < sd_curve_oom_count(c); i++) {
        const sd_curve_oom *o = sd_curve_oom_at(c, i);
        fprintf(out, "  %s:%" PRIu64, o->path, o->line);
        if (o->rank >= 0) fprintf(out, " rank %" PRId64, o->rank);
        if (o->gpu >= 0) fprintf(out, " GPU %" PRId64, o->gpu);
        fprintf(out, "  %s out of memory", o->kind);
        oom_figure(out, "tried to allocate", o->tried);
        oom_figure(out, "free", o->free);
        oom_figure(out, "capacity", o->capacity);
        oom_figure(out, "allocated", o->allocated);
        oom_figure(out, "reserved unallocated", o->reserved_unallocated);
        fputc('\n', out);
    }
}

sd_status sd_render_curve_text(FILE *out, const sd_curve *c, const sd_render_options *ro,
                               sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(ro, SD_RENDER_OPTIONS_VERSION, "sd_render_options", err))
        return SD_EUSAGE;
    (void)err;
    bool color = ro && ro->color;
    const char *loc = getenv("LC_ALL");
    if (!loc || !*loc) loc = getenv("LC_CTYPE");
    if (!loc || !*loc) loc = getenv("LANG");
    bool unicode = loc && (strstr(loc, "UTF-8") || strstr(loc, "utf8") || strstr(loc, "UTF8"));
    for (size_t i = 0; i < sd_curve_file_count(c); i++) {
        const sd_curve_file *f = sd_curve_file_at(c, i);
        fprintf(out, "LOG %s (%s, %" PRIu64 " lines, %" PRIu64 " samples", f->path, f->format,
                f->lines, f->samples);
        if (f->bad_lines)
            fprintf(out, ", %" PRIu64 " unreadable from line %" PRIu64, f->bad_lines,
                    f->first_bad_line);
        fprintf(out, ")\n");
    }
    for (size_t i = 0; i < sd_curve_series_count(c); i++) {
        fputc('\n', out);
        series_block(out, c, sd_curve_series_at(c, i), color, unicode);
    }
    ranks_table(out, c, color);
    ooms_text(out, c, color);
    if (sd_curve_limit_count(c)) {
        fprintf(out, "\n%sGate: %s%s\n", sdp_ansi(color, sd_curve_pass(c) ? SDP_GREEN : SDP_RED),
                sd_curve_pass(c) ? "PASS" : "FAIL", sdp_ansi(color, SDP_RESET));
        for (size_t i = 0; i < sd_curve_limit_count(c); i++) {
            char words[400];
            const sd_curve_limit_result *r = sd_curve_limit_at(c, i);
            sdp_curve_limit_words(c, r, words, sizeof words);
            fprintf(out, "  %s  %s\n", r->pass ? "pass" : "FAIL", words);
        }
    }
    return ferror(out) ? SD_EIO : SD_OK;
}
