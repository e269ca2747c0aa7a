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
