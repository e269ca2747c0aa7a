/* series_text.c - the series for people: the groups (culprit first) with a sparkline of
 * their bytes, slope, confidence and verdict; then the allocated floor, reserved memory
 * and the capacity estimate. Figures and verdicts come from the series (series.h). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "render/format.h"
#include "render/series_render.h"

enum { TOP_DEFAULT = 20, SPARK_WIDTH = 32, KEY_SHOWN = 70 };

static const char *const blocks_utf8[8] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                           "\u2585", "\u2586", "\u2587", "\u2588"};
static const char ascii_levels[8] = {'_', '.', '-', '~', '=', '+', '*', '#'};

void sdp_sparkline(const uint64_t *v, size_t n, size_t width, bool unicode, char *buf,
                   size_t size)
{
    size_t cols = n < width ? n : width, k = 0;
    if (!size) return;
    buf[0] = '\0';
    if (!n || !cols) return;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
    }
    for (size_t c = 0; c < cols; c++) {
        size_t from = c * n / cols, to = (c + 1) * n / cols;
        uint64_t m = v[from];
        for (size_t i = from; i < to; i++) m = v[i] > m ? v[i] : m;
        unsigned level = hi > lo ? (unsigned)((double)(m - lo) * 7.0 / (double)(hi - lo) + 0.5) : 0;
        if (level > 7) level = 7;
        const char *s = unicode ? blocks_utf8[level] : (char[2]){ascii_levels[level], 0};
        size_t len = strlen(s);
        if (k + len + 1 > size) break;
        memcpy(buf + k, s, len);
        k += len;
    }
    buf[k] = '\0';
}

/* A slope in bytes as "+1.0 MiB" (rounded to whole bytes). */
static sdp_text slope_text(double b)
{
    double r = llround(b) == 0 ? 0 : b;
    if (r > 9.2e18) r = 9.2e18;
    if (r < -9.2e18) r = -9.2e18;
    return sdp_fmt_delta((int64_t)llround(r));
}

static const char *verdict_colour(bool color, sd_trend t)
{
    return sdp_ansi(color, t == SD_TREND_GROWING ? SDP_RED
                           : t == SD_TREND_SHRINKING ? SDP_GREEN
                           : t == SD_TREND_NOISY ? SDP_YELLOW : SDP_DIM);
}

enum { OOMS_SHOWN = 3 };

/* The oom first (issue 26): which snapshots record one, the first few with their last
 * entry and request. */
static void ooms_first(FILE *out, const sd_series *s, bool color)
{
    size_t n = sd_series_snapshot_count(s), k = 0, shown = 0;
    for (size_t i = 0; i < n; i++) k += sd_series_snapshot_at(s, i)->oom.count > 0;
    if (!k) return;
    fprintf(out, "%sOut of memory%s: %zu of %zu snapshots record an oom entry\n",
            sdp_ansi(color, SDP_RED), sdp_ansi(color, SDP_RESET), k, n);
    for (size_t i = 0; i < n && shown < OOMS_SHOWN; i++) {
        const sd_series_snapshot *x = sd_series_snapshot_at(s, i);
        if (!x->oom.count) continue;
        shown++;
        fprintf(out, "  %s: the last at entry #%zu on device %" PRId64 ": request %s with %s "
                "free on the device\n", x->source, x->oom.entry, x->oom.device,
                sdp_fmt_bytes(x->oom.request_bytes).s, sdp_fmt_bytes(x->oom.device_free_bytes).s);
    }
    if (k > shown) fprintf(out, "  ... and %zu more (--json lists each snapshot's oom)\n", k - shown);
    fprintf(out, "\n");
}

/* Pinned host memory, first to last of the snapshots that have it (--json: each one's):
 * in neither figure above. */
static void host_line(FILE *out, const sd_series *s)
{
    const sd_series_snapshot *first = NULL, *last = NULL;
    size_t n = sd_series_snapshot_count(s), with = 0;
    for (size_t i = 0; i < n; i++) {
        const sd_series_snapshot *p = sd_series_snapshot_at(s, i);
        if (!p->has_host) continue;
        if (!first) first = p;
        last = p;
        with++;
    }
    if (!first) return;
    fprintf(out, "  pinned host memory (host_segments: in neither figure above): allocated %s -> %s, "
            "reserved %s -> %s", sdp_fmt_bytes(first->host_allocated).s,
            sdp_fmt_bytes(last->host_allocated).s, sdp_fmt_bytes(first->host_reserved).s,
            sdp_fmt_bytes(last->host_reserved).s);
    if (with < n) fprintf(out, " (in %zu of %zu snapshots)", with, n);
    fprintf(out, "\n");
}

static void header(FILE *out, const sd_series *s, bool color)
{
    ooms_first(out, s, color);
    size_t n = sd_series_snapshot_count(s);
    const sd_series_snapshot *a = sd_series_snapshot_at(s, 0), *z = sd_series_snapshot_at(s, n - 1);
    fprintf(out, "%sSeries of %zu snapshots%s: %s .. %s", sdp_ansi(color, SDP_BOLD), n,
            sdp_ansi(color, SDP_RESET), a->source, z->source);
    if (a->has_step)
        fprintf(out, " (steps %" PRIu64 " .. %" PRIu64 ")", a->step, z->step);
    fprintf(out, "\n  allocated %s -> %s, reserved %s -> %s\n", sdp_fmt_bytes(a->allocated).s,
            sdp_fmt_bytes(z->allocated).s, sdp_fmt_bytes(a->reserved).s,
            sdp_fmt_bytes(z->reserved).s);
    host_line(out, s);
    fprintf(out, "\n");
}

static bool many_devices(const sd_series *s)
{
    for (size_t i = 1; i < sd_series_group_count(s); i++)
        if (sd_series_group_at(s, i)->device != sd_series_group_at(s, 0)->device) return true;
    return false;
}

static void group_table(FILE *out, const sd_series *s, const sd_series_text_options *o)
{
    bool color = o->render.color, steps = sd_series_snapshot_at(s, 0)->has_step;
    bool devs = many_devices(s);
    size_t n = sd_series_snapshot_count(s), ng = sd_series_group_count(s);
    size_t top = o->top ? o->top : TOP_DEFAULT, shown = ng < top ? ng : top;
    fprintf(out, "Groups, culprit first: %zu growing, %zu shrinking, %zu noisy, %zu flat\n",
            sd_series_verdict_count(s, SD_TREND_GROWING),
            sd_series_verdict_count(s, SD_TREND_SHRINKING),
            sd_series_verdict_count(s, SD_TREND_NOISY), sd_series_verdict_count(s, SD_TREND_FLAT));
    if (!ng) {
        fprintf(out, "  (no live blocks in any snapshot)\n\n");
        return;
    }
    size_t spark_cols = n < SPARK_WIDTH ? n : SPARK_WIDTH;
    fprintf(out, "  %s%-9s %12s", sdp_ansi(color, SDP_BOLD), "VERDICT", "SLOPE/SNAP");
    if (steps) fprintf(out, " %12s", "SLOPE/STEP");
    fprintf(out, " %7s %11s  %-*s  %s%s%s\n", "CONF", "LAST", (int)spark_cols, "BYTES",
            devs ? "DEV " : "", "GROUP", sdp_ansi(color, SDP_RESET));
    for (size_t i = 0; i < shown; i++) {
        const sd_series_group *g = sd_series_group_at(s, i);
        char spark[SPARK_WIDTH * 4 + 1];
        sdp_sparkline(g->bytes, n, SPARK_WIDTH, o->unicode, spark, sizeof spark);
        fprintf(out, "  %s%-9s%s %12s", verdict_colour(color, g->verdict),
                sd_trend_name(g->verdict), sdp_ansi(color, SDP_RESET), slope_text(g->trend.slope).s);
        if (steps) fprintf(out, " %12s", slope_text(g->trend.slope_per_step).s);
        fprintf(out, " %6.2f%% %11s  %s  ", 100 * g->trend.confidence,
                sdp_fmt_bytes(g->bytes[n - 1]).s, spark);
        if (devs) fprintf(out, "%3" PRId64 " ", g->device);
        char key[4096];
        fprintf(out, "%s\n", sdp_fit_key(g->key, KEY_SHOWN, key, sizeof key));
    }
    if (shown < ng)
        fprintf(out, "  %s... %zu more groups (--top N to show more, --json for all)%s\n",
                sdp_ansi(color, SDP_DIM), ng - shown, sdp_ansi(color, SDP_RESET));
    fprintf(out, "\n");
}

static void totals(FILE *out, const sd_series *s, const sd_series_text_options *o)
{
    const sd_series_floor *f = sd_series_floor_of(s);
    const sd_series_trend *r = sd_series_reserved_trend(s);
    const sd_series_capacity *c = sd_series_capacity_of(s);
    fprintf(out, "Allocated floor: %s -> %s, %s per snapshot", sdp_fmt_bytes((uint64_t)fmax(0, f->first_bytes)).s,
            sdp_fmt_bytes((uint64_t)fmax(0, f->last_bytes)).s, slope_text(f->slope).s);
    if (f->has_step_slope) fprintf(out, " (%s per step)", slope_text(f->slope_per_step).s);
    fprintf(out, "\n  the sawtooth's lower edge: the trend of the %zu snapshots at or below the "
            "allocated trend\n", f->n_points);
    fprintf(out, "Reserved: %s per snapshot", slope_text(r->slope).s);
    if (r->has_step_slope) fprintf(out, " (%s per step)", slope_text(r->slope_per_step).s);
    fprintf(out, "; the allocator's cache, not a leak by itself\n");
    if (c->has_estimate) {
        fprintf(out, "Capacity %s: full in %s snapshots", sdp_fmt_bytes(c->capacity).s,
                sdp_fmt_count(c->snapshots_left).s);
        if (c->has_steps_left) fprintf(out, " (%s steps)", sdp_fmt_count(c->steps_left).s);
        fprintf(out, " at the growing groups' %s per snapshot\n", slope_text(c->growing_slope).s);
    }
    const sd_series_options *opt = sd_series_options_used(s);
    size_t growing = sd_series_verdict_count(s, SD_TREND_GROWING);
    fprintf(out, "\n");
    if (sd_series_max_confidence(s) < opt->min_confidence)
        fprintf(out, "%sNote: with %zu snapshots the trend test reaches at most %.1f%%, below "
                "--confidence %.1f%%: nothing can be called growing. Take more snapshots or "
                "lower --confidence.%s\n", sdp_ansi(o->render.color, SDP_YELLOW),
                sd_series_snapshot_count(s), 100 * sd_series_max_confidence(s),
                100 * opt->min_confidence, sdp_ansi(o->render.color, SDP_RESET));
    if (growing)
        fprintf(out, "%s%zu %s steadily%s (slope >= %s per snapshot at >= %.1f%% "
                "confidence): the leak candidates, largest first.\n",
                sdp_ansi(o->render.color, SDP_BOLD), growing, growing == 1 ? "group grows" : "groups grow",
                sdp_ansi(o->render.color, SDP_RESET), sdp_fmt_bytes(opt->min_slope).s,
                100 * opt->min_confidence);
    else
        fprintf(out, "No group grows steadily (slope >= %s per snapshot at >= %.1f%% "
                "confidence): no leak in this series.\n", sdp_fmt_bytes(opt->min_slope).s,
                100 * opt->min_confidence);
}

sd_status sd_render_series_text(FILE *out, const sd_series *s, const sd_series_text_options *o)
{
    if (sdp_options_check(o, SD_SERIES_TEXT_OPTIONS_VERSION, "sd_series_text_options", NULL))
        return SD_EUSAGE;
    if (sdp_options_check(o ? &o->render : NULL, SD_RENDER_OPTIONS_VERSION, "sd_render_options", NULL))
        return SD_EUSAGE;
    sd_series_text_options dflt = {0};
    if (!o) o = &dflt;
    header(out, s, o->render.color);
    group_table(out, s, o);
    totals(out, s, o);
    return ferror(out) ? SD_EIO : SD_OK;
}
