/* stats_json.c - the snapdiff.stats/1 document of `snapdiff stats --json`. */
#include <jansson.h>

#include "render/settings.h"
#include "snapdiff/render_stats.h"
#include "snapdiff/stats.h"

static json_t *u64(uint64_t v) { return json_integer((json_int_t)v); }

static json_t *stats_json(const sd_stats *st, const uint64_t *by_action)
{
    json_t *o = json_object();
    if (st->device >= 0) json_object_set_new(o, "device", json_integer(st->device));
    json_object_set_new(o, "segments", u64(st->segments));
    json_object_set_new(o, "segments_large", u64(st->segments_large));
    json_object_set_new(o, "segments_small", u64(st->segments_small));
    json_object_set_new(o, "segments_expandable", u64(st->segments_expandable));
    json_object_set_new(o, "blocks", u64(st->blocks));
    json_object_set_new(o, "reserved_bytes", u64(st->reserved_bytes));
    json_object_set_new(o, "allocated_bytes", u64(st->allocated_bytes));
    json_object_set_new(o, "active_bytes", u64(st->active_bytes));
    json_object_set_new(o, "requested_bytes", u64(st->requested_bytes));
    json_object_set_new(o, "pending_free_bytes", u64(st->pending_free_bytes));
    json_object_set_new(o, "inactive_bytes", u64(st->inactive_bytes));
    json_object_set_new(o, "trace_entries", u64(st->trace_entries));
    json_t *acts = json_object();
    for (int a = 0; a < SD_ACT_COUNT; a++)
        if (by_action[a])
            json_object_set_new(acts, sd_trace_action_name((sd_trace_action)a), u64(by_action[a]));
    json_object_set_new(o, "trace_actions", acts);
    if (st->has_time) {
        json_t *span = json_object();
        json_object_set_new(span, "first_us", json_integer(st->first_time_us));
        json_object_set_new(span, "last_us", json_integer(st->last_time_us));
        json_object_set_new(o, "time_span", span);
    } else {
        json_object_set_new(o, "time_span", json_null());
    }
    return o;
}

static json_t *snapshot_json(const sd_snapshot *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_string(SD_STATS_SCHEMA));
    json_object_set_new(o, "source", json_string(sd_snapshot_source(s)));
    json_object_set_new(o, "layout", json_string(sd_snapshot_is_legacy_list(s) ? "list" : "dict"));
    json_t *devs = json_array();
    /* The total's per-action counts are the devices' summed: one walk of each trace. */
    uint64_t by_action[SD_ACT_COUNT], all_actions[SD_ACT_COUNT] = {0};
    for (size_t i = 0; i < sd_snapshot_device_count(s); i++) {
        sd_stats st;
        sd_stats_device(sd_snapshot_device(s, i), &st);
        sd_stats_device_actions(sd_snapshot_device(s, i), by_action, SD_ACT_COUNT);
        for (size_t a = 0; a < SD_ACT_COUNT; a++) all_actions[a] += by_action[a];
        json_array_append_new(devs, stats_json(&st, by_action));
    }
    json_object_set_new(o, "devices", devs);
    sd_stats total;
    sd_stats_total(s, &total);
    json_object_set_new(o, "total", stats_json(&total, all_actions));
    const sd_cuda_device *host = sd_snapshot_host_memory(s);
    if (host) {
        sd_stats hs;
        sd_stats_device(host, &hs);
        sd_stats_device_actions(host, by_action, SD_ACT_COUNT);
        hs.device = -1; /* no "device" key: host memory is no device */
        json_object_set_new(o, "host", stats_json(&hs, by_action));
    } else {
        json_object_set_new(o, "host", json_null());
    }
    json_object_set_new(o, "skip_actions", sdp_skip_actions_json(s));
    json_object_set_new(o, "allocator_settings",
                        sdp_settings_stats_json(sd_snapshot_allocator_settings(s)));
    json_t *warn = json_array();
    for (size_t i = 0; i < sd_snapshot_warning_count(s); i++)
        json_array_append_new(warn, json_string(sd_snapshot_warning(s, i)));
    json_object_set_new(o, "warnings", warn);
    return o;
}

sd_status sd_render_stats_json(FILE *out, const sd_snapshot *const *snaps, size_t n)
{
    json_t *doc;
    if (n == 1) {
        doc = snapshot_json(snaps[0]);
    } else {
        doc = json_object();
        json_object_set_new(doc, "schema", json_string(SD_STATS_SCHEMA));
        json_t *files = json_array();
        for (size_t i = 0; i < n; i++) json_array_append_new(files, snapshot_json(snaps[i]));
        json_object_set_new(doc, "files", files);
    }
    int rc = json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(doc);
    return rc == 0 && !ferror(out) ? SD_OK : SD_EIO;
}
