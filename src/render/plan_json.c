/* plan_json.c - the plan as JSON: schema snapdiff.plan/1 (docs/json-plan.md). */
#include <jansson.h>
#include <stdio.h>

#include "base/base.h"
#include "render/json_frame.h"
#include "snapdiff/render_plan.h"

static json_t *jint(uint64_t v) { return json_integer((json_int_t)v); }

static json_t *sites_json(const sd_plan_device *d)
{
    json_t *a = json_array();
    for (size_t k = 0; k < d->n_sites; k++) {
        const sd_plan_site *s = &d->sites[k];
        json_t *o = json_object();
        json_object_set_new(o, "label", s->stack ? sdp_json_text(s->label) : json_null());
        json_object_set_new(o, "before_recording", json_boolean(!s->stack));
        json_object_set_new(o, "bytes", jint(s->bytes));
        json_object_set_new(o, "blocks", s->stack ? jint(s->blocks) : json_null());
        json_object_set_new(o, "recorded_bytes", jint(s->base_bytes));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *check_json(const sd_plan *p, const sd_plan_device *d)
{
    if (!d->check_known) return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "source", sdp_json_text(sd_plan_check_source(p)));
    json_object_set_new(o, "peak_allocated_bytes", jint(d->check_peak_allocated_bytes));
    json_object_set_new(o, "peak_reserved_bytes", jint(d->check_peak_reserved_bytes));
    json_object_set_new(o, "allocated_error_pct", json_real(d->check_allocated_error_pct));
    json_object_set_new(o, "reserved_error_pct",
                        d->reserved_known ? json_real(d->check_reserved_error_pct) : json_null());
    return o;
}

static json_t *device_json(const sd_plan *p, const sd_plan_device *d, const sd_plan_view *view)
{
    json_t *o = json_object();
    json_object_set_new(o, "device", json_integer(d->device));
    json_object_set_new(o, "base", jint(d->base));
    json_object_set_new(o, "allocations", jint(d->allocs));
    json_t *fits = json_object();
    for (int f = 0; f < SD_PLAN_FIT_COUNT; f++)
        json_object_set_new(fits, sd_plan_fit_name((sd_plan_fit)f), jint(d->fit_counts[f]));
    json_object_set_new(o, "fitted", fits);
    json_object_set_new(o, "start_bytes", jint(d->start_bytes));
    json_t *pr = json_object();
    json_object_set_new(pr, "peak_allocated_bytes", jint(d->predicted_peak_allocated_bytes));
    json_object_set_new(pr, "peak_reserved_bytes",
                        d->reserved_known ? jint(d->predicted_peak_reserved_bytes) : json_null());
    json_object_set_new(pr, "peak_entry", jint(d->peak_entry));
    json_object_set_new(pr, "peak_label", sdp_json_text(d->peak_label));
    json_object_set_new(o, "predicted", pr);
    json_object_set_new(o, "fits", d->fits_known ? json_boolean(d->fits) : json_null());
    json_object_set_new(o, "headroom_bytes",
                        d->fits_known ? json_integer(d->headroom_bytes) : json_null());
    json_object_set_new(o, "oom_entry", d->oom_predicted ? jint(d->oom_entry) : json_null());
    json_object_set_new(o, "max_size",
                        view && view->has_max ? json_real(view->max_size) : json_null());
    json_object_set_new(o, "check", check_json(p, d));
    json_t *rec = json_null();
    if (sd_plan_whatif_of(p)) {
        rec = json_object();
        json_object_set_new(rec, "peak_allocated_bytes", jint(d->recorded_peak_allocated_bytes));
        json_object_set_new(rec, "peak_reserved_bytes", jint(d->recorded_peak_reserved_bytes));
        json_object_set_new(rec, "changed_allocations", jint(d->scaled_allocs));
        json_object_set_new(rec, "allgather_bytes", jint(d->allgather_bytes));
    }
    json_object_set_new(o, "recorded", rec);
    json_object_set_new(o, "sites", sites_json(d));
    return o;
}

sd_status sd_render_plan_json(FILE *out, const sd_plan *p, const sd_plan_view *view,
                              const sd_render_options *ro, sd_error *err)
{
    (void)ro;
    sd_error_clear(err);
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string(SD_PLAN_SCHEMA));
    const sd_plan_whatif *w = sd_plan_whatif_of(p);
    json_object_set_new(doc, "at", w ? json_null() : json_real(sd_plan_target(p)));
    json_t *wj = json_null();
    if (w) {
        wj = json_object();
        json_object_set_new(wj, "batch_scale", json_real(w->batch_scale > 0 ? w->batch_scale : 1.0));
        json_object_set_new(wj, "shard_ranks", json_integer(w->shard_ranks > 1 ? w->shard_ranks : 1));
        json_object_set_new(wj, "zero_stage", w->shard_ranks > 1 ? json_integer(w->zero_stage) : json_null());
    }
    json_object_set_new(doc, "whatif", wj);
    json_object_set_new(doc, "capacity_bytes",
                        sd_plan_capacity(p) ? jint(sd_plan_capacity(p)) : json_null());
    json_t *recs = json_array();
    for (size_t k = 0; k < sd_plan_recording_count(p); k++) {
        json_t *r = json_object();
        json_object_set_new(r, "source", sdp_json_text(sd_plan_recording_source(p, k)));
        json_object_set_new(r, "size", w ? json_null() : json_real(sd_plan_recording_size(p, k)));
        json_array_append_new(recs, r);
    }
    json_object_set_new(doc, "recordings", recs);
    json_t *devs = json_array();
    for (size_t i = 0; i < sd_plan_device_count(p); i++)
        json_array_append_new(devs, device_json(p, sd_plan_device_at(p, i), view));
    json_object_set_new(doc, "devices", devs);
    sd_status st = sdp_json_write(out, doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (st != SD_OK) sdp_fail(err, st, SD_NO_OFFSET, st == SD_ENOMEM ? "out of memory" : "write error");
    return st;
}
