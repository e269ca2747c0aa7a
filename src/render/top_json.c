/* top_json.c - `snapdiff top --json`: schema snapdiff.top/1 (docs/json-top.md). The
 * figures are peak.h's; this file only names them. */
#include <jansson.h>
#include <stdio.h>

#include "base/base.h"
#include "render/frag_render.h"
#include "render/levers_words.h"
#include "render/peak_words.h"
#include "render/settings.h"
#include "render/site.h"
#include "snapdiff/render_top.h"

static json_t *jint(uint64_t v) { return json_integer((json_int_t)v); }

static json_t *groups_json(const sd_peak *p, const sd_peak_table *t, bool requested)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < t->n_groups; i++) {
        const sd_peak_group *g = &t->groups[i];
        json_t *o = json_object();
        const sd_attrib *a = sd_peak_attrib(p);
        const sd_snapshot *s = sd_peak_snapshot(p);
        json_object_set_new(o, "key", json_string(g->key));
        json_object_set_new(o, "label", sdp_group_label_json(a, s, g->rep_stack, &g->rep_site,
                                                             g->key, false));
        json_object_set_new(o, "site", sdp_site_json(a, s, g->rep_stack, &g->rep_site));
        json_object_set_new(o, "bytes", jint(g->bytes));
        json_object_set_new(o, "blocks", jint(g->blocks));
        if (requested) json_object_set_new(o, "requested_bytes", jint(g->requested));
        json_array_append_new(arr, o);
    }
    return arr;
}

static json_t *peak_json(const sd_peak *p, const sd_peak_device *d)
{
    if (!d->has_peak) return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "bytes", jint(d->peak_bytes));
    json_object_set_new(o, "entry", jint(d->peak_entry));
    json_object_set_new(o, "time_us", d->peak_has_time ? json_integer(d->peak_time_us)
                                                        : json_null());
    json_object_set_new(o, "start_bytes", jint(d->start_bytes));
    const sd_snapshot *s = sd_peak_snapshot(p);
    json_object_set_new(o, "key", json_string(d->peak_key));
    json_object_set_new(o, "label", sdp_site_label_json(s, d->peak_stack, &d->peak_site,
                                                        d->peak_key));
    json_object_set_new(o, "site", sdp_site_json(sd_peak_attrib(p), s, d->peak_stack,
                                                 &d->peak_site));
    json_object_set_new(o, "blocks", jint(d->at_peak.blocks));
    json_object_set_new(o, "groups", groups_json(p, &d->at_peak, false));
    json_object_set_new(o, "phase", sdp_peak_phase_json(d));
    json_object_set_new(o, "step", sdp_peak_step_json(d));
    json_object_set_new(o, "categories", sdp_categories_json(&d->at_peak));
    json_object_set_new(o, "model_levers",
                        sdp_levers_json(sd_peak_attrib(p), sd_peak_snapshot(p), d->levers));
    return o;
}

sd_status sd_render_top_json(FILE *out, const sd_peak *x, const sd_render_options *ro,
                             sd_error *err)
{
    sd_error_clear(err);
    return sd_render_top_json_with_ooms(out, x, NULL, ro, err);
}

/* The device's oom events as frag names them; [] when none or not analysed. */
static json_t *device_ooms_json(const sd_frag *f, int64_t device)
{
    const sd_frag_device *fd = sdp_frag_device_of(f, device);
    return fd ? sdp_frag_ooms_json(f, fd) : json_array();
}

sd_status sd_render_top_json_with_ooms(FILE *out, const sd_peak *x, const sd_frag *ooms,
                                       const sd_render_options *ro, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(ro, SD_RENDER_OPTIONS_VERSION, "sd_render_options", err))
        return SD_EUSAGE;
    (void)ro;
    json_t *doc = json_object(), *devs = json_array();
    json_object_set_new(doc, "schema", json_string(SD_TOP_SCHEMA));
    const char *src = sd_snapshot_source(sd_peak_snapshot(x));
    json_object_set_new(doc, "file", src ? json_string(src) : json_null());
    json_object_set_new(doc, "group_by",
                        json_string(sd_group_by_name(sd_attrib_group_by(sd_peak_attrib(x)))));
    for (size_t i = 0; i < sd_peak_device_count(x); i++) {
        const sd_peak_device *d = sd_peak_device_at(x, i);
        json_t *o = json_object();
        json_object_set_new(o, "device", json_integer(d->device));
        json_object_set_new(o, "ooms", device_ooms_json(ooms, d->device));
        json_object_set_new(o, "allocated_bytes", jint(d->allocated_bytes));
        json_object_set_new(o, "blocks", jint(d->at_end.blocks));
        json_object_set_new(o, "groups", groups_json(x, &d->at_end, true));
        json_object_set_new(o, "categories", sdp_categories_json(&d->at_end));
        json_object_set_new(o, "peak", peak_json(x, d));
        json_array_append_new(devs, o);
    }
    json_object_set_new(doc, "devices", devs);
    json_object_set_new(doc, "host", sdp_host_json(sd_peak_snapshot(x)));
    int rc = json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    if (rc != 0 || fputc('\n', out) == EOF)
        return sdp_fail(err, SD_EIO, SD_NO_OFFSET, "error writing JSON");
    return SD_OK;
}
