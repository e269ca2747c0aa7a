/* trace_json.c - the replay as JSON: schema snapdiff.trace/1 (docs/json-trace.md). */
#include <jansson.h>
#include <stdio.h>

#include "render/frag_render.h"
#include "render/json_frame.h"
#include "render/peak_words.h"
#include "render/settings.h"
#include "render/site.h"
#include "render/trace_render.h"

static json_t *jint(uint64_t v) { return json_integer((json_int_t)v); }

static json_t *time_json(bool has, int64_t us) { return has ? json_integer(us) : json_null(); }

static json_t *peak_json(const sd_attrib *a, const sd_snapshot *s, const sd_trace_device *d)
{
    if (!d->has_peak) return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "bytes", jint(d->peak_bytes));
    json_object_set_new(o, "entry", jint(d->peak_entry));
    json_object_set_new(o, "start_bytes", jint(d->peak_start_bytes));
    json_object_set_new(o, "time_us", time_json(d->peak_has_time, d->peak_time_us));
    sd_site site;
    sd_attrib_site_of_stack(a, s, d->peak_stack, &site);
    json_object_set_new(o, "key", json_string(d->peak_key));
    json_object_set_new(o, "label", sdp_site_label_json(s, d->peak_stack, &site, d->peak_key));
    json_object_set_new(o, "site", d->peak_site ? sdp_stack_site_json(a, s, d->peak_stack)
                                                : json_null());
    json_object_set_new(o, "stack", sdp_stack_json(NULL, s, d->peak_stack));
    json_object_set_new(o, "phase", d->peak_has_phase
                                        ? json_string(sd_step_phase_name(d->peak_phase))
                                        : json_null());
    json_object_set_new(o, "step", d->peak_has_phase && d->peak_step
                                       ? json_integer(d->peak_step) : json_null());
    sd_peak_table cats = {.categories = d->peak_categories,
                          .n_categories = d->n_peak_categories};
    json_object_set_new(o, "categories", sdp_categories_json(&cats));
    return o;
}

/* The window figures a phase and a step's phase share, under the same names
 * (sd_trace_phase and sd_trace_step_phase name their fields alike). */
#define PUT_WINDOW(o, p)                                                                  \
    do {                                                                                  \
        json_object_set_new(o, "first_entry", jint((p)->first_entry));                    \
        json_object_set_new(o, "entries", jint((p)->n_entries));                          \
        json_object_set_new(o, "start_us", time_json((p)->has_time, (p)->start_us));      \
        json_object_set_new(o, "end_us", time_json((p)->has_time, (p)->end_us));          \
        json_object_set_new(o, "live_start", jint((p)->live_start));                      \
        json_object_set_new(o, "live_end", jint((p)->live_end));                          \
        json_object_set_new(o, "growth", json_integer((p)->growth));                      \
        json_object_set_new(o, "alloc_count", jint((p)->alloc_count));                    \
        json_object_set_new(o, "alloc_bytes", jint((p)->alloc_bytes));                    \
        json_object_set_new(o, "free_count", jint((p)->free_count));                      \
        json_object_set_new(o, "free_bytes", jint((p)->free_bytes));                      \
    } while (0)

static json_t *phase_json(const sd_trace_phase *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string(sd_trace_phase_kind_name(p->kind)));
    json_object_set_new(o, "name", p->name ? json_string(p->name) : json_null());
    PUT_WINDOW(o, p);
    return o;
}

static json_t *step_phase_json(const sd_trace_step_phase *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "phase", json_string(sd_step_phase_name(p->phase)));
    json_object_set_new(o, "step", p->step ? jint(p->step) : json_null());
    PUT_WINDOW(o, p);
    json_object_set_new(o, "peak", json_boolean(p->has_peak));
    return o;
}

static json_t *group_json(const sd_attrib *a, const sd_snapshot *s, const sd_trace_group *g)
{
    json_t *o = json_object();
    json_object_set_new(o, "key", json_string(g->key));
    json_object_set_new(o, "label",
                        sdp_group_label_json(a, s, g->rep_stack, NULL, g->key, false));
    json_object_set_new(o, "site",
                        g->site ? sdp_stack_site_json(a, s, g->rep_stack) : json_null());
    json_object_set_new(o, "alive_bytes", jint(g->alive_bytes));
    json_object_set_new(o, "alive_count", jint(g->alive_count));
    json_object_set_new(o, "alloc_count", jint(g->alloc_count));
    json_object_set_new(o, "alloc_bytes", jint(g->alloc_bytes));
    json_object_set_new(o, "free_count", jint(g->free_count));
    json_object_set_new(o, "free_bytes", jint(g->free_bytes));
    return o;
}

static json_t *actions_json(const sd_trace_device *d)
{
    json_t *o = json_object();
    for (int a = 0; a < SD_ACT_COUNT; a++) {
        sd_trace_action act = (sd_trace_action)a;
        json_object_set_new(o, sd_trace_action_name(act), jint(sd_trace_device_action_count(d, act)));
    }
    return o;
}

/* Per pool_id: null when no entry of the window records one (the pools are unknown). */
static json_t *pools_json(const sd_trace_device *d)
{
    if (!d->n_pools) return json_null();
    json_t *arr = json_array();
    for (size_t i = 0; i < d->n_pools; i++) {
        const sd_trace_pool *p = &d->pools[i];
        json_t *o = json_object();
        json_object_set_new(o, "pool_id", json_pack("[II]", (json_int_t)p->pool_id[0],
                                                     (json_int_t)p->pool_id[1]));
        json_object_set_new(o, "private", json_boolean(p->pool_id[0] || p->pool_id[1]));
        json_object_set_new(o, "entries", jint(p->entries));
        json_object_set_new(o, "alloc_count", jint(p->alloc_count));
        json_object_set_new(o, "alloc_bytes", jint(p->alloc_bytes));
        json_object_set_new(o, "segment_bytes", jint(p->segment_bytes));
        json_object_set_new(o, "alive_count", jint(p->alive_count));
        json_object_set_new(o, "alive_bytes", jint(p->alive_bytes));
        json_array_append_new(arr, o);
    }
    return arr;
}

static json_t *device_json(const sd_attrib *a, const sd_snapshot *s, const sd_trace_device *d,
                           const sd_frag *ooms)
{
    json_t *o = json_object();
    json_object_set_new(o, "device", json_integer(d->device));
    const sd_frag_device *fd = sdp_frag_device_of(ooms, d->device);
    json_object_set_new(o, "ooms", fd ? sdp_frag_ooms_json(ooms, fd) : json_array());
    const struct { const char *key; uint64_t v; } counts[] = {
        {"entries", d->n_entries},         {"total_entries", d->total_entries},
        {"first_entry", d->first_entry},   {"alive_bytes", d->alive_bytes},
        {"alive_count", d->alive_count},   {"alloc_count", d->alloc_count},
        {"alloc_bytes", d->alloc_bytes},   {"free_count", d->free_count},
        {"free_bytes", d->free_bytes},     {"unknown_free_count", d->unknown_free_count},
        {"unknown_free_bytes", d->unknown_free_bytes},
    };
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        json_object_set_new(o, counts[i].key, jint(counts[i].v));
    json_object_set_new(o, "actions", actions_json(d));
    json_object_set_new(o, "peak_bytes", jint(d->has_peak ? d->peak_bytes : 0));
    json_object_set_new(o, "peak", peak_json(a, s, d));
    json_object_set_new(o, "window_peak_bytes", jint(d->window_peak_bytes));
    json_object_set_new(o, "first_time_us", time_json(d->has_span, d->first_time_us));
    json_object_set_new(o, "last_time_us", time_json(d->has_span, d->last_time_us));
    json_object_set_new(o, "time_span_us", time_json(d->has_span, d->span_us));
    json_t *rates = json_null();
    if (d->has_rates) {
        rates = json_object();
        json_object_set_new(rates, "allocs_per_s", json_real(d->allocs_per_s));
        json_object_set_new(rates, "alloc_bytes_per_s", json_real(d->alloc_bytes_per_s));
        json_object_set_new(rates, "frees_per_s", json_real(d->frees_per_s));
    }
    json_object_set_new(o, "rates", rates);
    json_t *w = json_array();
    for (size_t i = 0; i < d->n_warnings; i++) {
        json_t *x = json_object();
        json_object_set_new(x, "code", json_string(sd_trace_warning_name(d->warnings[i].code)));
        json_object_set_new(x, "count", jint(d->warnings[i].count));
        json_object_set_new(x, "bytes", jint(d->warnings[i].bytes));
        json_array_append_new(w, x);
    }
    json_object_set_new(o, "warnings", w);
    json_t *ph = json_array();
    for (size_t i = 0; i < d->n_phases; i++) json_array_append_new(ph, phase_json(&d->phases[i]));
    json_object_set_new(o, "phases", ph);
    json_t *sp = json_array();
    for (size_t i = 0; i < d->n_step_phases; i++)
        json_array_append_new(sp, step_phase_json(&d->step_phases[i]));
    json_object_set_new(o, "step_phases", sp);
    json_t *g = json_array();
    for (size_t i = 0; i < d->n_groups; i++) json_array_append_new(g, group_json(a, s, &d->groups[i]));
    json_object_set_new(o, "groups", g);
    json_object_set_new(o, "pools", pools_json(d));
    json_object_set_new(o, "entries_without_pool_id", jint(d->no_pool_entries));
    return o;
}

sd_status sd_render_trace_json(FILE *out, const sd_trace *t)
{
    return sd_render_trace_json_with_ooms(out, t, NULL);
}

sd_status sd_render_trace_json_with_ooms(FILE *out, const sd_trace *t, const sd_frag *ooms)
{
    const sd_snapshot *s = sd_trace_snapshot(t);
    const sd_attrib *a = sd_trace_attrib(t);
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("snapdiff.trace/1"));
    json_object_set_new(doc, "source", json_string(sd_snapshot_source(s)));
    json_object_set_new(doc, "group_by", json_string(sd_group_by_name(sd_attrib_group_by(a))));
    json_object_set_new(doc, "depth", json_integer(sd_attrib_depth(a)));
    json_t *devs = json_array();
    for (size_t i = 0; i < sd_trace_device_count(t); i++)
        json_array_append_new(devs, device_json(a, s, sd_trace_device_at(t, i), ooms));
    json_object_set_new(doc, "devices", devs);
    json_object_set_new(doc, "skip_actions", sdp_skip_actions_json(s));
    int rc = json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(doc);
    if (rc != 0) return SD_ENOMEM;
    return ferror(out) ? SD_EIO : SD_OK;
}
