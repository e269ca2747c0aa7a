/* top_json.c - `snapdiff top --json`: schema snapdiff.top/1 (docs/json-top.md). The
 * figures are peak.h's; this file only names them. */
#include <jansson.h>
#include <stdio.h>

#include "base/base.h"
#include "render/frag_render.h"
#include "render/top_render.h"
#include "render/settings.h"
#include "snapdiff/render_top.h"

static json_t *jint(uint64_t v) { return json_integer((json_int_t)v); }

json_t *sdp_peak_site_json(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                           const sd_site *site)
{
    sd_site_label l;
    if (!sd_site_label_of(s, stack, site, &l)) return json_null();
    json_t *o = json_object();
    if (l.native) {
        json_object_set_new(o, "filename", json_string(""));
        json_object_set_new(o, "line", json_integer(0));
        json_object_set_new(o, "name", json_string(l.label));
        json_object_set_new(o, "kind", json_string(sd_frame_kind_name(SD_FRAME_NATIVE)));
        json_object_set_new(o, "symbol", json_string(l.name));
    } else {
        const sd_frame *f = sd_site_frame(s, stack, site, site->site);
        json_object_set_new(o, "filename", json_string(f ? f->filename : l.filename));
        json_object_set_new(o, "line", json_integer(f ? f->line : l.line));
        json_object_set_new(o, "name", json_string(f ? f->name : l.name));
        json_object_set_new(o, "kind", json_string(sd_frame_kind_name(
                                           f ? sd_attrib_classify(a, f) : SD_FRAME_USER)));
    }
    if (l.backward) json_object_set_new(o, "backward", json_true());
    return o;
}

static json_t *groups_json(const sd_peak *p, const sd_peak_table *t, bool requested)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < t->n_groups; i++) {
        const sd_peak_group *g = &t->groups[i];
        json_t *o = json_object();
        char label[1400];
        sd_group_label(sd_peak_attrib(p), sd_peak_snapshot(p), g->rep_stack, &g->rep_site,
                       g->key, false, label, sizeof label);
        json_t *lt = json_string(label);
        json_object_set_new(o, "key", json_string(g->key));
        json_object_set_new(o, "label", lt ? lt : json_string(g->key));
        json_object_set_new(o, "site", sdp_peak_site_json(sd_peak_attrib(p), sd_peak_snapshot(p),
                                                          g->rep_stack, &g->rep_site));
        json_object_set_new(o, "bytes", jint(g->bytes));
        json_object_set_new(o, "blocks", jint(g->blocks));
        if (requested) json_object_set_new(o, "requested_bytes", jint(g->requested));
        json_array_append_new(arr, o);
    }
    return arr;
}

json_t *sdp_categories_json(const sd_peak_table *t)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < t->n_categories; i++) {
        const sd_category_total *c = &t->categories[i];
        json_t *o = json_object();
        json_object_set_new(o, "category", json_string(sd_category_name(c->category)));
        json_object_set_new(o, "bytes", jint(c->bytes));
        json_object_set_new(o, "blocks", jint(c->blocks));
        json_object_set_new(o, "evidence", json_string(sd_category_total_evidence(c)));
        /* Activations of a forward no recorded backward followed (docs/categories.md). */
        if (c->no_backward_bytes)
            json_object_set_new(o, "no_backward_bytes", jint(c->no_backward_bytes));
        json_array_append_new(arr, o);
    }
    return arr;
}

json_t *sdp_peak_phase_json(const sd_peak_device *d)
{
    return d->has_peak && d->peak_has_phase ? json_string(sd_step_phase_name(d->peak_phase))
                                            : json_null();
}

json_t *sdp_peak_step_json(const sd_peak_device *d)
{
    return d->has_peak && d->peak_has_phase && d->peak_step ? jint(d->peak_step) : json_null();
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
    char label[1024];
    sd_site_text(sd_peak_snapshot(p), d->peak_stack, &d->peak_site, label, sizeof label);
    json_t *lt = json_string(label);
    json_object_set_new(o, "key", json_string(d->peak_key));
    json_object_set_new(o, "label", lt ? lt : json_string(d->peak_key));
    json_object_set_new(o, "site", sdp_peak_site_json(sd_peak_attrib(p), sd_peak_snapshot(p),
                                                      d->peak_stack, &d->peak_site));
    json_object_set_new(o, "blocks", jint(d->at_peak.blocks));
    json_object_set_new(o, "groups", groups_json(p, &d->at_peak, false));
    json_object_set_new(o, "phase", sdp_peak_phase_json(d));
    json_object_set_new(o, "step", sdp_peak_step_json(d));
    json_object_set_new(o, "categories", sdp_categories_json(&d->at_peak));
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
