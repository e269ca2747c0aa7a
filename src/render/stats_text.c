/* stats_text.c - `snapdiff stats` as text: totals per device and overall. */
#include <inttypes.h>

#include "render/format.h"
#include "render/settings.h"
#include "snapdiff/render_stats.h"
#include "snapdiff/stats.h"

static void row(FILE *out, const char *label, uint64_t bytes, const char *extra)
{
    sdp_text b = sdp_fmt_bytes(bytes);
    if (extra && *extra) fprintf(out, "  %-13s %11s  %s\n", label, b.s, extra);
    else fprintf(out, "  %-13s %11s\n", label, b.s);
}

static void print_stats(FILE *out, const sd_stats *st, const uint64_t *by_action, bool color)
{
    char extra[256];
    snprintf(extra, sizeof extra, "in %s segment%s (%s large, %s small, %s expandable)",
             sdp_fmt_count(st->segments).s, st->segments == 1 ? "" : "s",
             sdp_fmt_count(st->segments_large).s, sdp_fmt_count(st->segments_small).s,
             sdp_fmt_count(st->segments_expandable).s);
    row(out, "reserved", st->reserved_bytes, extra);
    snprintf(extra, sizeof extra, "%s%.1f%% of reserved%s", sdp_ansi(color, SDP_DIM),
             sd_stats_allocated_pct(st), sdp_ansi(color, SDP_RESET));
    row(out, "allocated", st->allocated_bytes, extra);
    row(out, "active", st->active_bytes, "allocated + pending-free");
    row(out, "requested", st->requested_bytes, "asked for by callers (before rounding)");
    row(out, "pending-free", st->pending_free_bytes, NULL);
    row(out, "inactive", st->inactive_bytes, "cached, free for reuse");
    fprintf(out, "  %-13s %11s\n", "blocks", sdp_fmt_count(st->blocks).s);
    fprintf(out, "  %-13s %11s", "trace entries", sdp_fmt_count(st->trace_entries).s);
    if (st->has_time && st->last_time_us >= st->first_time_us)
        fprintf(out, "  over %s", sdp_fmt_duration_us(sdp_i64_sub_sat(st->last_time_us, st->first_time_us)).s);
    const char *sep = ":";
    for (int a = 0; a < SD_ACT_COUNT; a++) {
        if (!by_action[a]) continue;
        fprintf(out, "%s %s %s", sep, sd_trace_action_name((sd_trace_action)a),
                sdp_fmt_count(by_action[a]).s);
        sep = ",";
    }
    fprintf(out, "\n");
}

sd_status sd_render_stats_text(FILE *out, const sd_snapshot *s, const sd_render_options *opts)
{
    if (sdp_options_check(opts, SD_RENDER_OPTIONS_VERSION, "sd_render_options", NULL))
        return SD_EUSAGE;
    bool color = opts && opts->color;
    fprintf(out, "%s%s%s  (%s layout)\n", sdp_ansi(color, SDP_BOLD), sd_snapshot_source(s),
            sdp_ansi(color, SDP_RESET),
            sd_snapshot_is_legacy_list(s) ? "list-of-segments" : "dict");
    size_t nd = sd_snapshot_device_count(s);
    if (nd == 0) fprintf(out, "  no segments and no trace entries: an empty snapshot\n");
    /* The total's per-action counts are the devices' summed: one walk of each trace. */
    uint64_t by_action[SD_ACT_COUNT], all_actions[SD_ACT_COUNT] = {0};
    for (size_t i = 0; i < nd; i++) {
        sd_stats st;
        sd_stats_device(sd_snapshot_device(s, i), &st);
        sd_stats_device_actions(sd_snapshot_device(s, i), by_action, SD_ACT_COUNT);
        for (size_t a = 0; a < SD_ACT_COUNT; a++) all_actions[a] += by_action[a];
        fprintf(out, "device %" PRId64 "\n", st.device);
        print_stats(out, &st, by_action, color);
    }
    if (nd > 1) {
        sd_stats total;
        sd_stats_total(s, &total);
        fprintf(out, "total over %zu devices\n", nd);
        print_stats(out, &total, all_actions, color);
    }
    const sd_cuda_device *host = sd_snapshot_host_memory(s);
    if (host) {
        sd_stats st;
        sd_stats_device(host, &st);
        sd_stats_device_actions(host, by_action, SD_ACT_COUNT);
        fprintf(out, "pinned host memory (host_segments, host_traces: in no device figure)\n");
        print_stats(out, &st, by_action, color);
    }
    sdp_settings_stats_text(out, sd_snapshot_allocator_settings(s));
    sdp_skip_actions_text(out, s, "");
    return ferror(out) ? SD_EIO : SD_OK;
}
