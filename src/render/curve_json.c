/* curve_json.c - `snapdiff curve` as JSON (snapdiff.curve/1, docs/json-curve.md) and as
 * GitHub workflow annotations (render_curve.h). Streamed by hand: no tree is built. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "render/curve_render.h"
#include "render/format.h"
#include "snapdiff/render_curve.h"

static void put_str(FILE *out, const char *s) { sdp_put_json_string(out, s, strlen(s)); }

/* A number, or null when it is not finite. Bytes and steps are written as integers. */
static void put_num(FILE *out, double v, bool integer)
{
    if (!isfinite(v)) fputs("null", out);
    else if (integer && fabs(v) < 9e15) fprintf(out, "%.0f", v);
    else fprintf(out, "%.6g", v);
}

static void put_opt(FILE *out, bool has, double v, bool integer)
{
    if (has) put_num(out, v, integer);
    else fputs("null", out);
}

static void series_json(FILE *out, const sd_curve *c, const sd_curve_series *s)
{
    const char *x = sdp_curve_x(s);
    fputs("{\"source\":", out);
    put_str(out, s->source);
    fputs(",\"rank\":", out);
    put_opt(out, s->rank >= 0, (double)s->rank, true);
    fputs(",\"gpu\":", out);
    put_opt(out, s->gpu >= 0, (double)s->gpu, true);
    fprintf(out, ",\"run\":%" PRId64 ",\"x\":\"%s\",\"measure\":\"%s\",\"maximum\":%s"
            ",\"samples\":%" PRIu64 ",\"merged\":%" PRIu64,
            s->run, x, s->measure, s->maximum ? "true" : "false", s->samples, s->stride);
    fputs(",\"first\":{\"x\":", out);
    put_num(out, s->first_x, false);
    fputs(",\"bytes\":", out);
    put_num(out, s->first_bytes, true);
    fputs("},\"last\":{\"x\":", out);
    put_num(out, s->last_x, false);
    fputs(",\"bytes\":", out);
    put_num(out, s->last_bytes, true);
    fputs("},\"baseline\":{\"x\":", out);
    put_num(out, s->baseline_x, false);
    fputs(",\"bytes\":", out);
    put_num(out, s->baseline_bytes, true);
    fputs("},\"lower_edge\":", out);
    bool decided = s->verdict != SD_CURVE_UNDECIDED;
    if (decided) {
        fprintf(out, "{\"slope_bytes_per_%s\":", x);
        put_num(out, s->slope, false);
        fputs(",\"low\":", out);
        put_num(out, s->low, false);
        fputs(",\"high\":", out);
        put_num(out, s->high, false);
        fputs(",\"confidence\":", out);
        put_num(out, s->confidence, false);
        fprintf(out, ",\"mk_s\":%" PRId64 ",\"windows\":%zu,\"floor_last\":", s->mk_s, s->windows);
        put_num(out, s->floor_last, true);
        fputs(",\"stray\":", out);
        put_num(out, s->stray, true);
        fputs("}", out);
    } else {
        fputs("null", out);
    }
    fputs(",\"verdict\":", out);
    if (decided) put_str(out, sd_curve_verdict_name(s->verdict));
    else fputs("null", out);
    char why[400];
    sdp_curve_verdict_why(c, s, why, sizeof why);
    fputs(",\"why\":", out);
    put_str(out, why);
    fputs(",\"growth_pct_vs_baseline\":", out);
    put_opt(out, s->has_growth_pct, s->growth_pct, false);
    fputs(",\"early_growth_pct\":", out);
    put_opt(out, s->has_early, s->early_pct, false);
    fprintf(out, ",\"early_warning\":%s,\"peak_bytes\":", s->early_warning ? "true" : "false");
    put_num(out, s->peak, true);
    fputs(",\"capacity_bytes\":", out);
    put_opt(out, s->has_capacity, (double)s->capacity, true);
    fputs(",\"capacity_gib\":", out);
    if (s->has_capacity) fprintf(out, "%.2f", (double)s->capacity / 1073741824.0);
    else fputs("null", out);
    fprintf(out, ",\"steps_to_capacity\":");
    put_opt(out, s->has_to_capacity, s->to_capacity, true);
    fputs(",\"steps_to_threshold\":", out);
    put_opt(out, s->has_to_threshold, s->to_threshold, true);
    fputs(",\"threshold_fraction\":", out);
    put_num(out, sd_curve_options_used(c)->threshold, false);
    fputs(",\"gap\":", out);
    if (s->has_gap) {
        fputs("{\"first\":", out);
        put_num(out, s->gap_first, true);
        fputs(",\"last\":", out);
        put_num(out, s->gap_last, true);
        fprintf(out, ",\"slope_bytes_per_%s\":", x);
        put_num(out, s->gap_slope, false);
        fputs(",\"confidence\":", out);
        put_num(out, s->gap_confidence, false);
        fprintf(out, ",\"growing\":%s}", s->gap_growing ? "true" : "false");
    } else {
        fputs("null", out);
    }
    fputs(",\"reserved_last\":", out);
    put_opt(out, s->has_reserved, s->reserved_last, true);
    fputs(",\"max_memory_allocated_last\":", out);
    put_opt(out, s->has_max_allocated, s->max_allocated_last, true);
    fputs(",\"num_alloc_retries\":", out);
    if (s->has_retries) fprintf(out, "{\"first\":%.0f,\"last\":%.0f}", s->retries_first, s->retries_last);
    else fputs("null", out);
    fputs(",\"num_ooms\":", out);
    if (s->has_ooms) fprintf(out, "{\"first\":%.0f,\"last\":%.0f}", s->ooms_first, s->ooms_last);
    else fputs("null", out);
    fputs("}", out);
}

/* {"count": all seen, "kept": [{path, line, rank, gpu, kind, the message's figures}]} */
static void ooms_json(FILE *out, const sd_curve *c)
{
    fprintf(out, "{\"count\":%" PRIu64 ",\"kept\":[", sd_curve_oom_total(c));
    for (size_t i = 0; i < sd_curve_oom_count(c); i++) {
        const sd_curve_oom *o = sd_curve_oom_at(c, i);
        fputs(i ? ",{\"path\":" : "{\"path\":", out);
        put_str(out, o->path);
        fprintf(out, ",\"line\":%" PRIu64 ",\"rank\":", o->line);
        put_opt(out, o->rank >= 0, (double)o->rank, true);
        fputs(",\"gpu\":", out);
        put_opt(out, o->gpu >= 0, (double)o->gpu, true);
        fputs(",\"kind\":", out);
        put_str(out, o->kind);
        const char *names[] = {"tried_bytes", "capacity_bytes", "free_bytes", "in_use_bytes",
                               "allocated_bytes", "reserved_unallocated_bytes"};
        const double v[] = {o->tried, o->capacity, o->free, o->in_use, o->allocated,
                            o->reserved_unallocated};
        for (size_t k = 0; k < 6; k++) {
            fprintf(out, ",\"%s\":", names[k]);
            put_num(out, v[k], true);
        }
        fputc('}', out);
    }
    fputs("]}", out);
}

sd_status sd_render_curve_json(FILE *out, const sd_curve *c, const sd_render_options *ro,
                               sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(ro, SD_RENDER_OPTIONS_VERSION, "sd_render_options", err))
        return SD_EUSAGE;
    (void)ro;
    (void)err;
    fprintf(out, "{\"schema\":\"%s\",\"files\":[", SD_CURVE_SCHEMA);
    for (size_t i = 0; i < sd_curve_file_count(c); i++) {
        const sd_curve_file *f = sd_curve_file_at(c, i);
        fputs(i ? ",{\"path\":" : "{\"path\":", out);
        put_str(out, f->path);
        fprintf(out, ",\"format\":\"%s\",\"lines\":%" PRIu64 ",\"samples\":%" PRIu64
                ",\"bad_lines\":%" PRIu64 ",\"first_bad_line\":", f->format, f->lines, f->samples,
                f->bad_lines);
        put_opt(out, f->bad_lines > 0, (double)f->first_bad_line, true);
        fputs("}", out);
    }
    fputs("],\"series\":[", out);
    for (size_t i = 0; i < sd_curve_series_count(c); i++) {
        if (i) fputc(',', out);
        series_json(out, c, sd_curve_series_at(c, i));
    }
    const sd_curve_ranks *r = sd_curve_ranks_of(c);
    fprintf(out, "],\"ranks\":{\"count\":%zu,\"slope_median\":", r->count);
    put_num(out, r->slope_median, false);
    fputs(",\"slope_mad\":", out);
    put_num(out, r->slope_mad, false);
    fputs(",\"baseline_median\":", out);
    put_num(out, r->baseline_median, true);
    fputs(",\"baseline_mad\":", out);
    put_num(out, r->baseline_mad, true);
    fputs(",\"outliers\":[", out);
    bool first = true;
    for (size_t i = 0; i < sd_curve_series_count(c); i++) {
        const sd_curve_series *s = sd_curve_series_at(c, i);
        if (!s->slope_outlier && !s->baseline_outlier) continue;
        char why[400], who[200];
        sdp_curve_outlier_why(c, s, why, sizeof why);
        sdp_curve_who(c, s, who, sizeof who);
        fputs(first ? "{\"rank\":" : ",{\"rank\":", out);
        first = false;
        put_opt(out, s->rank >= 0, (double)s->rank, true);
        fputs(",\"gpu\":", out);
        put_opt(out, s->gpu >= 0, (double)s->gpu, true);
        fputs(",\"series\":", out);
        put_str(out, who);
        fputs(",\"slope\":", out);
        put_num(out, s->slope, false);
        fputs(",\"baseline_bytes\":", out);
        put_num(out, s->baseline_bytes, true);
        fprintf(out, ",\"slope_outlier\":%s,\"baseline_outlier\":%s,\"why\":",
                s->slope_outlier ? "true" : "false", s->baseline_outlier ? "true" : "false");
        put_str(out, why);
        fputs("}", out);
    }
    fputs("]},\"ooms\":", out);
    ooms_json(out, c);
    fputs(",\"gate\":", out);
    if (sd_curve_limit_count(c)) {
        fprintf(out, "{\"pass\":%s,\"limits\":[", sd_curve_pass(c) ? "true" : "false");
        for (size_t i = 0; i < sd_curve_limit_count(c); i++) {
            const sd_curve_limit_result *l = sd_curve_limit_at(c, i);
            fprintf(out, "%s{\"name\":\"%s\",\"measurable\":%s,\"measured\":", i ? "," : "",
                    l->name, l->measurable ? "true" : "false");
            put_opt(out, l->measurable, l->measured, false);
            fputs(",\"limit\":", out);
            put_num(out, l->limit, false);
            fprintf(out, ",\"series\":");
            put_opt(out, l->measurable, (double)l->series, true);
            fprintf(out, ",\"projected\":%s,\"pass\":%s}", l->projected ? "true" : "false",
                    l->pass ? "true" : "false");
        }
        fputs("]}", out);
    } else {
        fputs("null", out);
    }
    fputs(",\"warnings\":[", out);
    first = true;
    for (size_t i = 0; i < sd_curve_file_count(c); i++) {
        const sd_curve_file *f = sd_curve_file_at(c, i);
        if (!f->bad_lines) continue;
        char w[600];
        snprintf(w, sizeof w, "%s: %" PRIu64 " line%s could not be read, the first at line %" PRIu64
                 " (%s)", f->path, f->bad_lines, f->bad_lines == 1 ? "" : "s", f->first_bad_line,
                 f->first_bad_why ? f->first_bad_why : "unreadable");
        if (!first) fputc(',', out);
        first = false;
        put_str(out, w);
    }
    for (size_t i = 0; i < sd_curve_series_count(c); i++) {
        const sd_curve_series *s = sd_curve_series_at(c, i);
        char who[200], w[400];
        sdp_curve_who(c, s, who, sizeof who);
        if (s->stride > 1) {
            snprintf(w, sizeof w, "%s: %" PRIu64 " samples merged %" PRIu64 " to 1 (lowest and "
                     "highest kept) to bound memory", who, s->samples, s->stride);
            if (!first) fputc(',', out);
            first = false;
            put_str(out, w);
        }
        if (strcmp(sdp_curve_x(s), "sample") == 0) {
            snprintf(w, sizeof w, "%s: the log prints no step beside its figures: x is the "
                     "sample's index", who);
            if (!first) fputc(',', out);
            first = false;
            put_str(out, w);
        }
        if (s->baseline_short) {
            snprintf(w, sizeof w, "%s: the baseline step asked for leaves too little of the run; "
                     "the first 10%% is used", who);
            if (!first) fputc(',', out);
            first = false;
            put_str(out, w);
        }
    }
    fputs("]}\n", out);
    return ferror(out) ? SD_EIO : SD_OK;
}

/* GitHub's workflow-command escaping of the message: %, CR, LF. */
static void gh_put(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '%') fputs("%25", out);
        else if (*s == '\r') fputs("%0D", out);
        else if (*s == '\n') fputs("%0A", out);
        else fputc(*s, out);
    }
}

static void gh_line(FILE *out, const char *level, const char *title, const char *msg)
{
    fprintf(out, "::%s title=%s::", level, title);
    gh_put(out, msg);
    fputc('\n', out);
}

sd_status sd_render_curve_github(FILE *out, const sd_curve *c, const sd_render_options *ro,
                                 sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(ro, SD_RENDER_OPTIONS_VERSION, "sd_render_options", err))
        return SD_EUSAGE;
    (void)ro;
    (void)err;
    for (size_t i = 0; i < sd_curve_limit_count(c); i++) {
        const sd_curve_limit_result *l = sd_curve_limit_at(c, i);
        if (l->pass) continue;
        char words[400];
        sdp_curve_limit_words(c, l, words, sizeof words);
        gh_line(out, "error", "snapdiff curve", words);
    }
    for (size_t i = 0; i < sd_curve_series_count(c); i++) {
        const sd_curve_series *s = sd_curve_series_at(c, i);
        char who[200], why[400], msg[800];
        sdp_curve_who(c, s, who, sizeof who);
        sdp_curve_verdict_why(c, s, why, sizeof why);
        const char *v = sd_curve_verdict_name(s->verdict);
        snprintf(msg, sizeof msg, "%s: %s %s, %s", who, v ? v : "no verdict",
                 sdp_curve_slope(s->slope, sdp_curve_per(s)).s, why);
        gh_line(out, s->verdict == SD_CURVE_GROWING ? "warning" : "notice", "snapdiff curve", msg);
        if (s->slope_outlier || s->baseline_outlier) {
            sdp_curve_outlier_why(c, s, why, sizeof why);
            snprintf(msg, sizeof msg, "%s is off the other ranks: %s", who, why);
            gh_line(out, "warning", "snapdiff curve", msg);
        }
    }
    return ferror(out) ? SD_EIO : SD_OK;
}
