/* curve_words.c - the curve's words for its text and its JSON (curve_render.h): who a
 * series is, its slope and axis, why its verdict, why a rank is an outlier, a limit. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render/curve_render.h"
#include "render/format.h"

sdp_text sdp_curve_bytes(double b)
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
                              sdp_curve_bytes(1.4826 * r->slope_mad).s);
    if (s->baseline_outlier && k < size)
        snprintf(buf + k, size - k, "%sbaseline %s; the others %s +- %s", k ? "; " : "",
                 sdp_curve_bytes(s->baseline_bytes).s, sdp_curve_bytes(r->baseline_median).s,
                 sdp_curve_bytes(1.4826 * r->baseline_mad).s);
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
                 sdp_curve_bytes(fabs(s->slope) * span).s, span, unit, s->confidence, o->min_confidence);
        break;
    case SD_CURVE_NOISY:
        snprintf(buf, size, "no steady trend (confidence %.4f), and the floors stray %s from "
                 "the line, more than %s", s->confidence, sdp_curve_bytes(s->stray).s,
                 sdp_curve_bytes(fmax(4.0 * (double)o->min_growth, 0.01 * s->baseline_bytes)).s);
        break;
    case SD_CURVE_FLAT:
        snprintf(buf, size, "no trend that matters: %s over %.0f %s (confidence %.4f; growing "
                 "needs >= %.2f and %s)", sdp_curve_bytes(fabs(s->slope) * span).s, span, unit,
                 s->confidence, o->min_confidence, sdp_curve_bytes((double)o->min_growth).s);
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
                 cmp, sdp_curve_bytes(r->limit).s, who);
    } else if (r->id == SD_CURVE_LIMIT_MAX_GROWTH_PCT) {
        snprintf(buf, size, "--%s: %+.1f%% vs the baseline %s %g%% (%s)", r->name, r->measured,
                 cmp, r->limit, who);
    } else {
        snprintf(buf, size, "--%s: %.3f of the capacity %s %.3f%s (%s)", r->name, r->measured,
                 cmp, r->limit, r->projected ? ", projected within the horizon" : "", who);
    }
}
