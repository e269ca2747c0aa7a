/* series_ranks.c - the ranks of one job side by side (render_series.h): a series over
 * rank files would fit trends to what is no time axis. */
#include <inttypes.h>
#include <string.h>

#include "format.h"
#include "snapdiff/render_ranks.h"
#include "snapdiff/render_series.h"

sd_status sd_render_series_ranks_text(FILE *out, const char *const *sources,
                                      const char *const *labels, const sd_stats *totals,
                                      size_t n, const sd_rank_spread *sp, bool color)
{
    return sd_render_series_ranks_oom_text(out, sources, labels, totals, NULL, n, sp, color);
}

/* "Out of memory: 2 of 4 ranks", then per rank that died its last oom entry. */
static void ranks_ooms_text(FILE *out, const char *const *labels, const sd_groups_oom *ooms,
                            size_t n, bool color)
{
    size_t died = 0;
    for (size_t i = 0; ooms && i < n; i++) died += ooms[i].count > 0;
    if (!died) return;
    fprintf(out, "%sOut of memory%s: %zu of %zu rank%s recorded an oom entry\n",
            sdp_ansi(color, SDP_RED), sdp_ansi(color, SDP_RESET), died, n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++) {
        const sd_groups_oom *o = &ooms[i];
        if (!o->count) continue;
        fprintf(out, "  %-10s the last at entry #%zu on device %" PRId64 ": request %s with %s "
                "free on the device (%" PRIu64 " oom entr%s; snapdiff frag FILE for the "
                "arithmetic)\n", labels[i], o->entry, o->device, sdp_fmt_bytes(o->request_bytes).s,
                sdp_fmt_bytes(o->device_free_bytes).s, o->count, o->count == 1 ? "y" : "ies");
    }
    fprintf(out, "\n");
}

sd_status sd_render_series_ranks_oom_text(FILE *out, const char *const *sources,
                                          const char *const *labels, const sd_stats *totals,
                                          const sd_groups_oom *ooms, size_t n,
                                          const sd_rank_spread *sp, bool color)
{
    ranks_ooms_text(out, labels, ooms, n, color);
    fprintf(out, "Ranks of one job, side by side: %zu snapshots whose names differ only by a "
            "rank number (--as-series reads them as a time series)\n", n);
    fprintf(out, "  %-10s %12s %12s %14s  %s\n", "rank", "allocated", "reserved", "vs median",
            "file");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %-10s %12s %12s %14s  %s\n", labels[i],
                sdp_fmt_bytes(totals[i].allocated_bytes).s,
                sdp_fmt_bytes(totals[i].reserved_bytes).s,
                sdp_fmt_delta(sdp_sdelta(totals[i].allocated_bytes, sp->allocated_median)).s,
                sources[i]);
    fprintf(out, "\n");
    sd_render_spread_text(out, sp, labels, "ranks", color);
    if (sp->furthest == SD_RANK_NONE) fprintf(out, "  no outlier: every rank allocates the same\n");
    return ferror(out) ? SD_EIO : SD_OK;
}

/* A rank number, or the source's name as a JSON string when it carries none. */
static void put_rank(FILE *out, const char *source)
{
    int64_t r = sd_rank_of_name(source);
    if (r >= 0) fprintf(out, "%" PRId64, r);
    else sdp_put_json_string(out, source, strlen(source));
}

sd_status sd_render_series_ranks_json(FILE *out, const char *const *sources,
                                      const sd_stats *totals, size_t n,
                                      const sd_rank_spread *sp)
{
    return sd_render_series_ranks_oom_json(out, sources, totals, NULL, n, sp);
}

/* ", \"oom\": null" or the rank's last oom entry. */
static void put_oom(FILE *out, const sd_groups_oom *o)
{
    if (!o || !o->count) {
        fprintf(out, ", \"oom\": null");
        return;
    }
    fprintf(out, ", \"oom\": {\"count\": %" PRIu64 ", \"device\": %" PRId64 ", \"entry\": %zu",
            o->count, o->device, o->entry);
    fprintf(out, ", \"request_bytes\": %" PRIu64 ", \"device_free_bytes\": %" PRIu64
            ", \"time_us\": ", o->request_bytes, o->device_free_bytes);
    if (o->has_time) fprintf(out, "%" PRId64 "}", o->time_us);
    else fprintf(out, "null}");
}

sd_status sd_render_series_ranks_oom_json(FILE *out, const char *const *sources,
                                          const sd_stats *totals, const sd_groups_oom *ooms,
                                          size_t n, const sd_rank_spread *sp)
{
    size_t died = 0;
    for (size_t i = 0; ooms && i < n; i++) died += ooms[i].count > 0;
    fprintf(out, "{\n  \"schema\": \"snapdiff.series-ranks/1\",\n  \"ranks_out_of_memory\": "
            "%zu,\n  \"ranks\": [", died);
    for (size_t i = 0; i < n; i++) {
        int64_t r = sd_rank_of_name(sources[i]);
        fprintf(out, "%s\n    {\"rank\": ", i ? "," : "");
        if (r >= 0) fprintf(out, "%" PRId64, r);
        else fprintf(out, "null");
        fprintf(out, ", \"source\": ");
        sdp_put_json_string(out, sources[i], strlen(sources[i]));
        fprintf(out, ", \"allocated_bytes\": %" PRIu64 ", \"reserved_bytes\": %" PRIu64
                ", \"allocated_vs_median\": %lld", totals[i].allocated_bytes,
                totals[i].reserved_bytes,
                (long long)(totals[i].allocated_bytes - sp->allocated_median));
        put_oom(out, ooms ? &ooms[i] : NULL);
        fprintf(out, "}");
    }
    fprintf(out, "\n  ],\n  \"spread\": {\"allocated_min\": %" PRIu64 ", \"allocated_median\": %"
            PRIu64 ", \"allocated_max\": %" PRIu64 ", \"reserved_min\": %" PRIu64
            ", \"reserved_median\": %" PRIu64 ", \"reserved_max\": %" PRIu64 ", \"furthest\": ",
            sp->allocated_min, sp->allocated_median, sp->allocated_max, sp->reserved_min,
            sp->reserved_median, sp->reserved_max);
    if (sp->furthest == SD_RANK_NONE) fprintf(out, "null");
    else put_rank(out, sources[sp->furthest]);
    fprintf(out, ", \"furthest_delta\": %lld}\n}\n", (long long)sp->furthest_delta);
    return ferror(out) ? SD_EIO : SD_OK;
}

/* ---- a job's folder by step and rank ---- */

static const char *layout_of(const sd_job_entry *e, size_t n)
{
    const char *name = n ? sd_job_layout_name(e[0].name.layout) : NULL;
    for (size_t i = 1; i < n; i++)
        if (e[i].name.layout != e[0].name.layout) return "several layouts";
    return name ? name : "?";
}

static void put_step(FILE *out, int64_t step, int width)
{
    if (step >= 0) fprintf(out, "%*" PRId64, width, step);
    else fprintf(out, "%*s", width, "-");
}

/* Steps named (OOM dumps aside: a dump after step N is no step of its own), and dumps. */
static size_t count_steps(const sd_job_entry *e, size_t n, size_t *n_oom)
{
    size_t steps = 0;
    *n_oom = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].name.oom) {
            (*n_oom)++;
            continue;
        }
        bool seen = e[i].name.step < 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = !e[k].name.oom && e[k].name.step == e[i].name.step;
        steps += !seen;
    }
    return steps;
}

sd_status sd_render_series_job_text(FILE *out, const sd_job_entry *e, size_t n,
                                    const sd_job_rank *ranks, size_t n_ranks, size_t grown,
                                    bool color)
{
    (void)color;
    size_t n_oom;
    size_t n_steps = count_steps(e, n, &n_oom);
    fprintf(out, "Job folder (%s names): %zu %s named, %zu %s, %zu OOM %s (--as-series "
            "reads the files as one time series)\n", layout_of(e, n), n_steps,
            n_steps == 1 ? "step" : "steps", n_ranks, n_ranks == 1 ? "rank" : "ranks", n_oom,
            n_oom == 1 ? "dump" : "dumps");
    fprintf(out, "\nRanks per step\n  %8s  %s\n", "step", "ranks");
    for (size_t i = 0; i < n;) {
        size_t k = i;
        fprintf(out, "  ");
        put_step(out, e[i].name.step, 8);
        fprintf(out, "  ");
        for (; k < n && e[k].name.step == e[i].name.step && e[k].name.oom == e[i].name.oom; k++)
            fprintf(out, "%s%" PRId64, k > i ? " " : "", e[k].name.rank);
        fprintf(out, "%s\n", e[i].name.oom ? "  (OOM dumps)" : "");
        i = k;
    }
    fprintf(out, "\nSteps per rank (allocated, first step to last; OOM dumps left out)\n");
    fprintf(out, "  %-6s %6s %10s %10s %12s %12s %12s %4s\n", "rank", "steps", "from step", "to step",
            "allocated", "then", "change", "OOM");
    for (size_t i = 0; i < n_ranks; i++) {
        const sd_job_rank *r = &ranks[i];
        fprintf(out, "  %-6" PRId64 " %6zu ", r->rank, r->n_steps);
        put_step(out, r->first_step, 10);
        fputc(' ', out);
        put_step(out, r->last_step, 10);
        fprintf(out, " %12s %12s %12s %4zu%s\n",
                r->n_steps ? sdp_fmt_bytes(r->first_allocated).s : "-",
                r->n_steps ? sdp_fmt_bytes(r->last_allocated).s : "-",
                r->n_steps > 1 ? sdp_fmt_delta(r->change).s : "-", r->n_oom,
                i == grown ? "  <- grew most" : "");
    }
    if (grown == SD_RANK_NONE) fprintf(out, "  no rank's allocated grew from its first step to its last\n");
    if (n_oom) {
        fprintf(out, "\nOOM dumps (taken when the allocator failed: what was live then)\n");
        for (size_t i = 0; i < n; i++) {
            if (!e[i].name.oom) continue;
            fprintf(out, "  rank %-4" PRId64, e[i].name.rank);
            if (e[i].name.step >= 0) fprintf(out, " after step %-8" PRId64, e[i].name.step);
            else fprintf(out, " %-19s", " (step not named)");
            fprintf(out, " allocated %10s  reserved %10s  %s\n",
                    sdp_fmt_bytes(e[i].total.allocated_bytes).s,
                    sdp_fmt_bytes(e[i].total.reserved_bytes).s, e[i].source);
        }
    }
    fprintf(out, "\nSnapshots\n  %8s %6s %12s %12s  %s\n", "step", "rank", "allocated",
            "reserved", "file");
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "  ");
        put_step(out, e[i].name.step, 8);
        fprintf(out, " %6" PRId64 " %12s %12s  %s%s\n", e[i].name.rank,
                sdp_fmt_bytes(e[i].total.allocated_bytes).s,
                sdp_fmt_bytes(e[i].total.reserved_bytes).s, e[i].source,
                e[i].name.oom ? "  (OOM dump)" : "");
    }
    return ferror(out) ? SD_EIO : SD_OK;
}

static void put_int_or_null(FILE *out, int64_t v)
{
    if (v >= 0) fprintf(out, "%" PRId64, v);
    else fprintf(out, "null");
}

sd_status sd_render_series_job_json(FILE *out, const sd_job_entry *e, size_t n,
                                    const sd_job_rank *ranks, size_t n_ranks, size_t grown,
                                    bool open_end)
{
    const char *layout = layout_of(e, n);
    fprintf(out, "{\n  \"schema\": \"snapdiff.series-job/1\",\n  \"layout\": ");
    sdp_put_json_string(out, layout, strlen(layout));
    fprintf(out, ",\n  \"snapshots\": [");
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%s\n    {\"step\": ", i ? "," : "");
        put_int_or_null(out, e[i].name.step);
        fprintf(out, ", \"rank\": ");
        put_int_or_null(out, e[i].name.rank);
        fprintf(out, ", \"oom\": %s, \"source\": ", e[i].name.oom ? "true" : "false");
        sdp_put_json_string(out, e[i].source, strlen(e[i].source));
        fprintf(out, ", \"allocated_bytes\": %" PRIu64 ", \"reserved_bytes\": %" PRIu64 "}",
                e[i].total.allocated_bytes, e[i].total.reserved_bytes);
    }
    fprintf(out, "\n  ],\n  \"ranks\": [");
    for (size_t i = 0; i < n_ranks; i++) {
        const sd_job_rank *r = &ranks[i];
        fprintf(out, "%s\n    {\"rank\": ", i ? "," : "");
        put_int_or_null(out, r->rank);
        fprintf(out, ", \"steps\": %zu, \"oom_dumps\": %zu, \"first_step\": ", r->n_steps, r->n_oom);
        put_int_or_null(out, r->first_step);
        fprintf(out, ", \"last_step\": ");
        put_int_or_null(out, r->last_step);
        if (r->n_steps)
            fprintf(out, ", \"first_allocated_bytes\": %" PRIu64 ", \"last_allocated_bytes\": %"
                    PRIu64, r->first_allocated, r->last_allocated);
        else
            fprintf(out, ", \"first_allocated_bytes\": null, \"last_allocated_bytes\": null");
        if (r->n_steps > 1) fprintf(out, ", \"change_bytes\": %" PRId64 "}", r->change);
        else fprintf(out, ", \"change_bytes\": null}");
    }
    fprintf(out, "\n  ],\n  \"grew_most\": ");
    put_int_or_null(out, grown == SD_RANK_NONE ? -1 : ranks[grown].rank);
    fprintf(out, "%s", open_end ? ",\n" : "\n}\n");
    return ferror(out) ? SD_EIO : SD_OK;
}
