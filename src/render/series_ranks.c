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
    fprintf(out, "{\n  \"schema\": \"snapdiff.series-ranks/1\",\n  \"ranks\": [");
    for (size_t i = 0; i < n; i++) {
        int64_t r = sd_rank_of_name(sources[i]);
        fprintf(out, "%s\n    {\"rank\": ", i ? "," : "");
        if (r >= 0) fprintf(out, "%" PRId64, r);
        else fprintf(out, "null");
        fprintf(out, ", \"source\": ");
        sdp_put_json_string(out, sources[i], strlen(sources[i]));
        fprintf(out, ", \"allocated_bytes\": %" PRIu64 ", \"reserved_bytes\": %" PRIu64
                ", \"allocated_vs_median\": %lld}", totals[i].allocated_bytes,
                totals[i].reserved_bytes,
                (long long)(totals[i].allocated_bytes - sp->allocated_median));
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
