/* cmd_stats.c - `snapdiff stats FILE...`: totals per device and overall. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "render/settings.h"
#include "msg.h"
#include "snapdiff/stats.h"
#include "snapdiff/units.h"

/* ---------- JSON ---------- */

static json_t *stats_json(const sd_stats *st)
{
    json_t *o = json_object();
    if (st->device >= 0) json_object_set_new(o, "device", json_integer(st->device));
    json_object_set_new(o, "segments", json_integer((json_int_t)st->segments));
    json_object_set_new(o, "segments_large", json_integer((json_int_t)st->segments_large));
    json_object_set_new(o, "segments_small", json_integer((json_int_t)st->segments_small));
    json_object_set_new(o, "segments_expandable", json_integer((json_int_t)st->segments_expandable));
    json_object_set_new(o, "blocks", json_integer((json_int_t)st->blocks));
    json_object_set_new(o, "reserved_bytes", json_integer((json_int_t)st->reserved_bytes));
    json_object_set_new(o, "allocated_bytes", json_integer((json_int_t)st->allocated_bytes));
    json_object_set_new(o, "active_bytes", json_integer((json_int_t)st->active_bytes));
    json_object_set_new(o, "requested_bytes", json_integer((json_int_t)st->requested_bytes));
    json_object_set_new(o, "pending_free_bytes", json_integer((json_int_t)st->pending_free_bytes));
    json_object_set_new(o, "inactive_bytes", json_integer((json_int_t)st->inactive_bytes));
    json_object_set_new(o, "trace_entries", json_integer((json_int_t)st->trace_entries));
    json_t *acts = json_object();
    for (int a = 0; a < SD_ACT_COUNT; a++)
        if (st->trace_by_action[a])
            json_object_set_new(acts, sd_trace_action_name((sd_trace_action)a),
                                json_integer((json_int_t)st->trace_by_action[a]));
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
    json_object_set_new(o, "schema", json_string("snapdiff.stats/1"));
    json_object_set_new(o, "source", json_string(sd_snapshot_source(s)));
    json_object_set_new(o, "layout", json_string(sd_snapshot_is_legacy_list(s) ? "list" : "dict"));
    json_t *devs = json_array();
    for (size_t i = 0; i < sd_snapshot_device_count(s); i++) {
        sd_stats st;
        sd_stats_device(sd_snapshot_device(s, i), &st);
        json_array_append_new(devs, stats_json(&st));
    }
    json_object_set_new(o, "devices", devs);
    sd_stats total;
    sd_stats_total(s, &total);
    json_object_set_new(o, "total", stats_json(&total));
    json_object_set_new(o, "allocator_settings",
                        sdp_settings_stats_json(sd_snapshot_allocator_settings(s)));
    json_t *warn = json_array();
    for (size_t i = 0; i < sd_snapshot_warning_count(s); i++)
        json_array_append_new(warn, json_string(sd_snapshot_warning(s, i)));
    json_object_set_new(o, "warnings", warn);
    return o;
}

static int print_json(sd_snapshot **snaps, size_t n)
{
    json_t *doc;
    if (n == 1) {
        doc = snapshot_json(snaps[0]);
    } else {
        doc = json_object();
        json_object_set_new(doc, "schema", json_string("snapdiff.stats/1"));
        json_t *files = json_array();
        for (size_t i = 0; i < n; i++) json_array_append_new(files, snapshot_json(snaps[i]));
        json_object_set_new(doc, "files", files);
    }
    int rc = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    json_decref(doc);
    return rc == 0 ? EXIT_OK : EXIT_TROUBLE;
}

/* ---------- text ---------- */

static void row(const char *label, uint64_t bytes, const char *extra)
{
    char b[32];
    sd_format_bytes(bytes, b, sizeof b);
    if (extra && *extra) printf("  %-13s %11s  %s\n", label, b, extra);
    else printf("  %-13s %11s\n", label, b);
}

static void format_duration_us(int64_t us, char *buf, size_t size)
{
    if (us < 1000) snprintf(buf, size, "%" PRId64 " us", us);
    else if (us < 1000000) snprintf(buf, size, "%.1f ms", (double)us / 1e3);
    else if (us < 600000000) snprintf(buf, size, "%.1f s", (double)us / 1e6);
    else snprintf(buf, size, "%.1f min", (double)us / 6e7);
}

static void print_stats_text(const sd_stats *st, const struct cli_opts *o)
{
    char extra[160];
    snprintf(extra, sizeof extra, "in %" PRIu64 " segment%s (%" PRIu64 " large, %" PRIu64
             " small, %" PRIu64 " expandable)", st->segments, st->segments == 1 ? "" : "s",
             st->segments_large,
             st->segments_small, st->segments_expandable);
    row("reserved", st->reserved_bytes, extra);
    snprintf(extra, sizeof extra, "%s%.1f%% of reserved%s", clr_dim(o),
             st->reserved_bytes ? 100.0 * (double)st->allocated_bytes / (double)st->reserved_bytes : 0.0,
             clr_reset(o));
    row("allocated", st->allocated_bytes, extra);
    row("active", st->active_bytes, "allocated + pending-free");
    row("requested", st->requested_bytes, "asked for by callers (before rounding)");
    row("pending-free", st->pending_free_bytes, NULL);
    row("inactive", st->inactive_bytes, "cached, free for reuse");
    printf("  %-13s %11" PRIu64 "\n", "blocks", st->blocks);
    printf("  %-13s %11" PRIu64 "", "trace entries", st->trace_entries);
    if (st->has_time && st->last_time_us >= st->first_time_us) {
        char span[32];
        format_duration_us(st->last_time_us - st->first_time_us, span, sizeof span);
        printf("  over %s", span);
    }
    const char *sep = ":";
    for (int a = 0; a < SD_ACT_COUNT; a++) {
        if (!st->trace_by_action[a]) continue;
        printf("%s %s %" PRIu64, sep, sd_trace_action_name((sd_trace_action)a), st->trace_by_action[a]);
        sep = ",";
    }
    printf("\n");
}

static void print_text(const sd_snapshot *s, const struct cli_opts *o)
{
    printf("%s%s%s  (%s layout)\n", clr_bold(o), sd_snapshot_source(s), clr_reset(o),
           sd_snapshot_is_legacy_list(s) ? "list-of-segments" : "dict");
    size_t nd = sd_snapshot_device_count(s);
    if (nd == 0) printf("  no segments and no trace entries: an empty snapshot\n");
    for (size_t i = 0; i < nd; i++) {
        sd_stats st;
        sd_stats_device(sd_snapshot_device(s, i), &st);
        printf("device %" PRId64 "\n", st.device);
        print_stats_text(&st, o);
    }
    if (nd > 1) {
        sd_stats total;
        sd_stats_total(s, &total);
        printf("total over %zu devices\n", nd);
        print_stats_text(&total, o);
    }
    sdp_settings_stats_text(stdout, sd_snapshot_allocator_settings(s));
}

int cmd_stats(const struct cli_opts *opts)
{
    sd_snapshot **snaps;
    size_t n;
    if (cli_load_all(opts->files, opts->n_files, opts, &snaps, &n) != 0) return EXIT_TROUBLE;
    int status = EXIT_OK;
    if (opts->format == FORMAT_JSON) {
        status = print_json(snaps, n);
    } else {
        for (size_t i = 0; i < n; i++) {
            if (i) printf("\n");
            print_text(snaps[i], opts);
        }
    }
    cli_free_all(snaps, n);
    return status;
}
