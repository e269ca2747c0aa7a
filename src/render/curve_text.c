/* curve_text.c - `snapdiff curve` for people (render_curve.h): per series the curve and
 * its floor as sparklines, the baseline, the lower edge's slope and interval, the verdict
 * with the numbers behind it, growth and steps left; then the ranks and the gate. The
 * words it shares with curve_json.c are curve_words.c's. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/curve_render.h"
#include "render/format.h"
#include "render/series_render.h"
#include "snapdiff/render_curve.h"

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
        fprintf(out, "  %-8s  %s  %s .. %s\n", names[r], line, sdp_curve_bytes(rows[r][0]).s,
                sdp_curve_bytes(rows[r][1]).s);
    }
    fprintf(out, "  baseline  %s at %s %.0f%s\n", sdp_curve_bytes(s->baseline_bytes).s,
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
                sdp_curve_bytes(s->floor_last).s);
        if (s->has_early)
            fprintf(out, "; first 200 steps %+.1f%%%s", s->early_pct,
                    s->early_warning ? " (> 5%: early warning)" : "");
        fputc('\n', out);
    }
    if (s->has_capacity) {
        fprintf(out, "  capacity  %.2f GiB (%s bytes), peak %s (last window %s)",
                (double)s->capacity / 1073741824.0, sdp_fmt_count(s->capacity).s,
                sdp_curve_bytes(s->peak).s, sdp_curve_bytes(s->peak_last).s);
        if (s->has_to_threshold)
            fprintf(out, "; %.0f%% in %s %s", 100 * s->threshold,
                    sdp_fmt_count((uint64_t)s->to_threshold).s, unit);
        if (s->has_to_capacity)
            fprintf(out, ", full in %s %s", sdp_fmt_count((uint64_t)s->to_capacity).s, unit);
        if (!s->has_to_threshold && !s->has_to_capacity) fprintf(out, "; not growing: no estimate");
        fputc('\n', out);
    }
    if (s->has_gap)
        fprintf(out, "  gap       reserved - allocated %s -> %s, %s%s\n", sdp_curve_bytes(s->gap_first).s,
                sdp_curve_bytes(s->gap_last).s, sdp_curve_slope(s->gap_slope, sdp_curve_per(s)).s,
                s->gap_growing ? " (growing: fragmentation)" : " (not growing)");
    if (s->has_max_allocated)
        fprintf(out, "  max_memory_allocated %s (last logged)\n", sdp_curve_bytes(s->max_allocated_last).s);
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
                "step").s, sdp_curve_bytes(r->slope_mad).s, r->outliers, r->outliers == 1 ? "" : "s");
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
                sdp_curve_slope(s->slope, sdp_curve_per(s)).s, sdp_curve_bytes(s->baseline_bytes).s,
                growth, why);
    }
}

static void oom_figure(FILE *out, const char *name, double v)
{
    if (!isnan(v)) fprintf(out, ", %s %s", name, sdp_curve_bytes(v).s);
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
