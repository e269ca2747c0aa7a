/* curve_json.c - `snapdiff curve` as JSON (snapdiff.curve/1, docs/json-curve.md) and as
 * GitHub workflow annotations (render_curve.h). The document is built with jansson, as
 * every JSON view is, and written compact on one line. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/curve_render.h"
#include "render/format.h"
#include "render/json_frame.h"
#include "snapdiff/render_curve.h"

/* Reals are written with 6 significant digits ("%.6g"), the precision the figures have. */
#define CURVE_JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6))

/* A number, or null when it is not finite. Bytes and steps are integers; a real whose
 * 6 digits spell a whole number is written as that integer ("100", not "100.0"). */
static json_t *num(double v, bool integer)
{
    if (!isfinite(v)) return json_null();
    if (integer && fabs(v) < 9e15) return json_integer((json_int_t)nearbyint(v));
    char text[32];
    snprintf(text, sizeof text, "%.6g", v);
    if (!strpbrk(text, ".e")) return json_integer((json_int_t)strtoll(text, NULL, 10));
    return json_real(v);
}

static json_t *opt(bool has, double v, bool integer) { return has ? num(v, integer) : json_null(); }

static void set(json_t *o, const char *key, json_t *v) { json_object_set_new(o, key, v); }

static json_t *first_last(double first, double last)
{
    json_t *o = json_object();
    set(o, "first", num(first, true));
    set(o, "last", num(last, true));
    return o;
}

static json_t *point(double x, double bytes)
{
    json_t *o = json_object();
    set(o, "x", num(x, false));
    set(o, "bytes", num(bytes, true));
    return o;
}

static json_t *lower_edge_json(const sd_curve_series *s, const char *slope_key)
{
    if (s->verdict == SD_CURVE_UNDECIDED) return json_null();
    json_t *o = json_object();
    set(o, slope_key, num(s->slope, false));
    set(o, "low", num(s->low, false));
    set(o, "high", num(s->high, false));
    set(o, "confidence", num(s->confidence, false));
    set(o, "mk_s", json_integer(s->mk_s));
    set(o, "windows", json_integer((json_int_t)s->windows));
    set(o, "floor_last", num(s->floor_last, true));
    set(o, "stray", num(s->stray, true));
    return o;
}

static json_t *gap_json(const sd_curve_series *s, const char *slope_key)
{
    if (!s->has_gap) return json_null();
    json_t *o = first_last(s->gap_first, s->gap_last);
    set(o, slope_key, num(s->gap_slope, false));
    set(o, "confidence", num(s->gap_confidence, false));
    set(o, "growing", json_boolean(s->gap_growing));
    return o;
}

/* capacity_gib: the GiB to 2 decimals, as the text shows them. */
static json_t *gib_json(bool has, uint64_t bytes)
{
    if (!has) return json_null();
    char text[48];
    snprintf(text, sizeof text, "%.2f", (double)bytes / 1073741824.0);
    return json_real(strtod(text, NULL));
}

static json_t *series_json(const sd_curve *c, const sd_curve_series *s)
{
    const char *x = sdp_curve_x(s);
    char slope_key[48], why[400];
    snprintf(slope_key, sizeof slope_key, "slope_bytes_per_%s", x);
    json_t *o = json_object();
    set(o, "source", sdp_json_text(s->source));
    set(o, "rank", opt(s->rank >= 0, (double)s->rank, true));
    set(o, "gpu", opt(s->gpu >= 0, (double)s->gpu, true));
    set(o, "run", json_integer(s->run));
    set(o, "x", json_string(x));
    set(o, "measure", sdp_json_text(s->measure));
    set(o, "maximum", json_boolean(s->maximum));
    set(o, "samples", json_integer((json_int_t)s->samples));
    set(o, "merged", json_integer((json_int_t)s->stride));
    set(o, "first", point(s->first_x, s->first_bytes));
    set(o, "last", point(s->last_x, s->last_bytes));
    set(o, "baseline", point(s->baseline_x, s->baseline_bytes));
    set(o, "lower_edge", lower_edge_json(s, slope_key));
    set(o, "verdict", s->verdict != SD_CURVE_UNDECIDED
                          ? json_string(sd_curve_verdict_name(s->verdict)) : json_null());
    sdp_curve_verdict_why(c, s, why, sizeof why);
    set(o, "why", sdp_json_text(why));
    set(o, "growth_pct_vs_baseline", opt(s->has_growth_pct, s->growth_pct, false));
    set(o, "early_growth_pct", opt(s->has_early, s->early_pct, false));
    set(o, "early_warning", json_boolean(s->early_warning));
    set(o, "peak_bytes", num(s->peak, true));
    set(o, "capacity_bytes", opt(s->has_capacity, (double)s->capacity, true));
    set(o, "capacity_gib", gib_json(s->has_capacity, s->capacity));
    set(o, "steps_to_capacity", opt(s->has_to_capacity, s->to_capacity, true));
    set(o, "steps_to_threshold", opt(s->has_to_threshold, s->to_threshold, true));
    set(o, "threshold_fraction", num(sd_curve_options_used(c)->threshold, false));
    set(o, "gap", gap_json(s, slope_key));
    set(o, "reserved_last", opt(s->has_reserved, s->reserved_last, true));
    set(o, "max_memory_allocated_last", opt(s->has_max_allocated, s->max_allocated_last, true));
    set(o, "num_alloc_retries", s->has_retries ? first_last(s->retries_first, s->retries_last)
                                               : json_null());
    set(o, "num_ooms", s->has_ooms ? first_last(s->ooms_first, s->ooms_last) : json_null());
    return o;
}

/* {"count": all seen, "kept": [{path, line, rank, gpu, kind, the message's figures}]} */
static json_t *ooms_json(const sd_curve *c)
{
    json_t *kept = json_array();
    for (size_t i = 0; i < sd_curve_oom_count(c); i++) {
        const sd_curve_oom *oom = sd_curve_oom_at(c, i);
        json_t *o = json_object();
        set(o, "path", sdp_json_text(oom->path));
        set(o, "line", json_integer((json_int_t)oom->line));
        set(o, "rank", opt(oom->rank >= 0, (double)oom->rank, true));
        set(o, "gpu", opt(oom->gpu >= 0, (double)oom->gpu, true));
        set(o, "kind", sdp_json_text(oom->kind));
        set(o, "tried_bytes", num(oom->tried, true));
        set(o, "capacity_bytes", num(oom->capacity, true));
        set(o, "free_bytes", num(oom->free, true));
        set(o, "in_use_bytes", num(oom->in_use, true));
        set(o, "allocated_bytes", num(oom->allocated, true));
        set(o, "reserved_unallocated_bytes", num(oom->reserved_unallocated, true));
        json_array_append_new(kept, o);
    }
    json_t *o = json_object();
    set(o, "count", json_integer((json_int_t)sd_curve_oom_total(c)));
    set(o, "kept", kept);
    return o;
}

static json_t *file_json(const sd_curve_file *f)
{
    json_t *o = json_object();
    set(o, "path", sdp_json_text(f->path));
    set(o, "format", sdp_json_text(f->format));
    set(o, "lines", json_integer((json_int_t)f->lines));
    set(o, "samples", json_integer((json_int_t)f->samples));
    set(o, "bad_lines", json_integer((json_int_t)f->bad_lines));
    set(o, "first_bad_line", opt(f->bad_lines > 0, (double)f->first_bad_line, true));
    return o;
}

static json_t *outlier_json(const sd_curve *c, const sd_curve_series *s)
{
    char why[400], who[200];
    sdp_curve_outlier_why(c, s, why, sizeof why);
    sdp_curve_who(c, s, who, sizeof who);
    json_t *o = json_object();
    set(o, "rank", opt(s->rank >= 0, (double)s->rank, true));
    set(o, "gpu", opt(s->gpu >= 0, (double)s->gpu, true));
    set(o, "series", sdp_json_text(who));
    set(o, "slope", num(s->slope, false));
    set(o, "baseline_bytes", num(s->baseline_bytes, true));
    set(o, "slope_outlier", json_boolean(s->slope_outlier));
    set(o, "baseline_outlier", json_boolean(s->baseline_outlier));
    set(o, "why", sdp_json_text(why));
    return o;
}

static json_t *ranks_json(const sd_curve *c)
{
    const sd_curve_ranks *r = sd_curve_ranks_of(c);
    json_t *o = json_object();
    set(o, "count", json_integer((json_int_t)r->count));
    set(o, "slope_median", num(r->slope_median, false));
    set(o, "slope_mad", num(r->slope_mad, false));
    set(o, "baseline_median", num(r->baseline_median, true));
    set(o, "baseline_mad", num(r->baseline_mad, true));
    json_t *outliers = json_array();
    for (size_t i = 0; i < sd_curve_series_count(c); i++) {
        const sd_curve_series *s = sd_curve_series_at(c, i);
        if (s->slope_outlier || s->baseline_outlier)
            json_array_append_new(outliers, outlier_json(c, s));
    }
    set(o, "outliers", outliers);
    return o;
}

static json_t *gate_json(const sd_curve *c)
{
    if (!sd_curve_limit_count(c)) return json_null();
    json_t *limits = json_array();
    for (size_t i = 0; i < sd_curve_limit_count(c); i++) {
        const sd_curve_limit_result *l = sd_curve_limit_at(c, i);
        json_t *o = json_object();
        set(o, "name", sdp_json_text(l->name));
        set(o, "measurable", json_boolean(l->measurable));
        set(o, "measured", opt(l->measurable, l->measured, false));
        set(o, "limit", num(l->limit, false));
        set(o, "series", opt(l->measurable, (double)l->series, true));
        set(o, "projected", json_boolean(l->projected));
        set(o, "pass", json_boolean(l->pass));
        json_array_append_new(limits, o);
    }
    json_t *o = json_object();
    set(o, "pass", json_boolean(sd_curve_pass(c)));
    set(o, "limits", limits);
    return o;
}

/* What the figures cannot show: unreadable lines, merged samples, no step, short baseline. */
static json_t *warnings_json(const sd_curve *c)
{
    json_t *a = json_array();
    for (size_t i = 0; i < sd_curve_file_count(c); i++) {
        const sd_curve_file *f = sd_curve_file_at(c, i);
        if (!f->bad_lines) continue;
        char w[600];
        snprintf(w, sizeof w, "%s: %" PRIu64 " line%s could not be read, the first at line %" PRIu64
                 " (%s)", f->path, f->bad_lines, f->bad_lines == 1 ? "" : "s", f->first_bad_line,
                 f->first_bad_why ? f->first_bad_why : "unreadable");
        json_array_append_new(a, sdp_json_text(w));
    }
    for (size_t i = 0; i < sd_curve_series_count(c); i++) {
        const sd_curve_series *s = sd_curve_series_at(c, i);
        char who[200], w[400];
        sdp_curve_who(c, s, who, sizeof who);
        if (s->stride > 1) {
            snprintf(w, sizeof w, "%s: %" PRIu64 " samples merged %" PRIu64 " to 1 (lowest and "
                     "highest kept) to bound memory", who, s->samples, s->stride);
            json_array_append_new(a, sdp_json_text(w));
        }
        if (strcmp(sdp_curve_x(s), "sample") == 0) {
            snprintf(w, sizeof w, "%s: the log prints no step beside its figures: x is the "
                     "sample's index", who);
            json_array_append_new(a, sdp_json_text(w));
        }
        if (s->baseline_short) {
            snprintf(w, sizeof w, "%s: the baseline step asked for leaves too little of the run; "
                     "the first 10%% is used", who);
            json_array_append_new(a, sdp_json_text(w));
        }
    }
    return a;
}

/* Every file read, then every series found, in the curve's order. */
static void files_and_series_json(json_t *doc, const sd_curve *c)
{
    json_t *files = json_array(), *series = json_array();
    for (size_t i = 0; i < sd_curve_file_count(c); i++)
        json_array_append_new(files, file_json(sd_curve_file_at(c, i)));
    for (size_t i = 0; i < sd_curve_series_count(c); i++)
        json_array_append_new(series, series_json(c, sd_curve_series_at(c, i)));
    set(doc, "files", files);
    set(doc, "series", series);
}

static json_t *curve_json(const sd_curve *c)
{
    json_t *doc = json_object();
    set(doc, "schema", json_string(SD_CURVE_SCHEMA));
    files_and_series_json(doc, c);
    set(doc, "ranks", ranks_json(c));
    set(doc, "ooms", ooms_json(c));
    set(doc, "gate", gate_json(c));
    set(doc, "warnings", warnings_json(c));
    return doc;
}

sd_status sd_render_curve_json(FILE *out, const sd_curve *c, const sd_render_options *ro,
                               sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(ro, SD_RENDER_OPTIONS_VERSION, "sd_render_options", err))
        return SD_EUSAGE;
    return sdp_json_write(out, curve_json(c), CURVE_JSON_FLAGS);
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
