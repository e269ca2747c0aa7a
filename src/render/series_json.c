/* series_json.c - the series as JSON: schema snapdiff.series/1 (docs/json-series.md).
 * Every figure comes from the series (series.h); this file only names them. */
#include <jansson.h>
#include <stdio.h>

#include "render/series_render.h"
#include "render/json_frame.h"

static json_t *jint(uint64_t v) { return json_integer((json_int_t)v); }

static json_t *frame_json(bool has, const sd_frame *f)
{
    return sdp_frame_json(has ? f : NULL);
}

/* slope(s) and the Mann-Kendall figures of one trend, into o */
static void trend_json(json_t *o, const sd_series_trend *t)
{
    json_object_set_new(o, "slope_bytes_per_snapshot", json_real(t->slope));
    if (t->has_step_slope)
        json_object_set_new(o, "slope_bytes_per_step", json_real(t->slope_per_step));
    json_object_set_new(o, "confidence", json_real(t->confidence));
    json_object_set_new(o, "p_value", json_real(t->p_value));
    json_object_set_new(o, "mann_kendall_s", json_integer(t->mk_s));
    json_object_set_new(o, "mann_kendall_var", json_real(t->mk_var));
    json_object_set_new(o, "mann_kendall_z", json_real(t->mk_z));
}

static json_t *group_json(const sd_series_group *g, size_t n)
{
    json_t *o = json_object();
    json_object_set_new(o, "key", json_string(g->key));
    json_object_set_new(o, "device", json_integer(g->device));
    json_object_set_new(o, "site", frame_json(g->rep && g->rep->has_site, g->rep ? &g->rep->site : NULL));
    json_object_set_new(o, "via", frame_json(g->rep && g->rep->has_via, g->rep ? &g->rep->via : NULL));
    json_t *b = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(b, jint(g->bytes[i]));
    json_object_set_new(o, "bytes", b);
    json_object_set_new(o, "min_bytes", jint(g->min_bytes));
    json_object_set_new(o, "max_bytes", jint(g->max_bytes));
    trend_json(o, &g->trend);
    json_object_set_new(o, "verdict", json_string(sd_trend_name(g->verdict)));
    return o;
}

static json_t *snapshot_json(const sd_series_snapshot *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "source", json_string(s->source));
    if (s->has_time) json_object_set_new(o, "time_us", json_integer(s->time_us));
    if (s->has_step) json_object_set_new(o, "step", jint(s->step));
    json_object_set_new(o, "allocated", jint(s->allocated));
    json_object_set_new(o, "reserved", jint(s->reserved));
    json_t *host = json_null();   /* pinned host memory: in neither figure above */
    if (s->has_host) {
        host = json_object();
        json_object_set_new(host, "allocated", jint(s->host_allocated));
        json_object_set_new(host, "reserved", jint(s->host_reserved));
    }
    json_object_set_new(o, "host", host);
    json_t *oom = json_null();
    if (s->oom.count) {
        oom = json_object();
        json_object_set_new(oom, "count", jint(s->oom.count));
        json_object_set_new(oom, "device", json_integer(s->oom.device));
        json_object_set_new(oom, "entry", jint(s->oom.entry));
        json_object_set_new(oom, "request_bytes", jint(s->oom.request_bytes));
        json_object_set_new(oom, "device_free_bytes", jint(s->oom.device_free_bytes));
        json_object_set_new(oom, "time_us", s->oom.has_time ? json_integer(s->oom.time_us)
                                                            : json_null());
    }
    json_object_set_new(o, "oom", oom);
    return o;
}

static json_t *floor_json(const sd_series_floor *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "slope_bytes_per_snapshot", json_real(f->slope));
    if (f->has_step_slope)
        json_object_set_new(o, "slope_bytes_per_step", json_real(f->slope_per_step));
    json_object_set_new(o, "first_bytes", json_real(f->first_bytes));
    json_object_set_new(o, "last_bytes", json_real(f->last_bytes));
    json_object_set_new(o, "points", jint(f->n_points));
    return o;
}

static json_t *capacity_json(const sd_series_capacity *c)
{
    if (!c->has_estimate) return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "capacity", jint(c->capacity));
    json_object_set_new(o, "growing_slope_bytes_per_snapshot", json_real(c->growing_slope));
    json_object_set_new(o, "snapshots_left", jint(c->snapshots_left));
    if (c->has_steps_left) {
        json_object_set_new(o, "growing_slope_bytes_per_step", json_real(c->growing_slope_per_step));
        json_object_set_new(o, "steps_left", jint(c->steps_left));
    }
    return o;
}

static json_t *series_json(const sd_series *s)
{
    size_t n = sd_series_snapshot_count(s);
    const sd_series_options *opt = sd_series_options_used(s);
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("snapdiff.series/1"));
    json_t *snaps = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(snaps, snapshot_json(sd_series_snapshot_at(s, i)));
    json_object_set_new(doc, "snapshots", snaps);
    json_t *counts = json_object();
    for (int t = 0; t < SD_TREND_COUNT; t++)
        json_object_set_new(counts, sd_trend_name((sd_trend)t),
                            jint(sd_series_verdict_count(s, (sd_trend)t)));
    json_object_set_new(doc, "verdicts", counts);
    json_t *groups = json_array();
    for (size_t i = 0; i < sd_series_group_count(s); i++)
        json_array_append_new(groups, group_json(sd_series_group_at(s, i), n));
    json_object_set_new(doc, "groups", groups);
    json_object_set_new(doc, "floor", floor_json(sd_series_floor_of(s)));
    json_t *alloc = json_object(), *res = json_object();
    trend_json(alloc, sd_series_allocated_trend(s));
    trend_json(res, sd_series_reserved_trend(s));
    json_object_set_new(doc, "allocated", alloc);
    json_object_set_new(doc, "reserved", res);
    json_object_set_new(doc, "capacity", capacity_json(sd_series_capacity_of(s)));
    json_t *th = json_object();
    json_object_set_new(th, "min_slope_bytes_per_snapshot", jint(opt->min_slope));
    json_object_set_new(th, "confidence", json_real(opt->min_confidence));
    json_object_set_new(th, "max_confidence", json_real(sd_series_max_confidence(s)));
    json_object_set_new(doc, "thresholds", th);
    return doc;
}

sd_status sd_render_series_json(FILE *out, const sd_series *s)
{
    json_t *doc = series_json(s);
    int rc = doc ? json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
    fputc('\n', out);
    json_decref(doc);
    if (rc != 0) return SD_ENOMEM;
    return ferror(out) ? SD_EIO : SD_OK;
}
