/* frag_json.c - the snapdiff.frag/1 document of `snapdiff frag --json`. */
#include <stdio.h>

#include "render/frag_render.h"
#include "render/json_frame.h"
#include "render/levers_words.h"
#include "render/peak_words.h"
#include "render/settings.h"
#include "render/site.h"

static json_t *u64(uint64_t v) { return json_integer((json_int_t)v); }

static json_t *histogram_json(const sd_frag_figures *g)
{
    json_t *a = json_array();
    for (size_t i = 0; i < SD_FRAG_BUCKETS; i++) {
        const sd_frag_bucket *b = &g->histogram[i];
        json_t *o = json_object();
        json_object_set_new(o, "min_bytes", u64(b->min_bytes));
        json_object_set_new(o, "max_bytes", b->max_bytes ? u64(b->max_bytes) : json_null());
        json_object_set_new(o, "blocks", u64(b->blocks));
        json_object_set_new(o, "bytes", u64(b->bytes));
        json_array_append_new(a, o);
    }
    return a;
}

/* The figures of one group, added to object o. */
static void figures_json(json_t *o, const sd_frag_figures *g)
{
    json_object_set_new(o, "segments", u64(g->segments));
    json_object_set_new(o, "blocks", u64(g->blocks));
    json_object_set_new(o, "free_blocks", u64(g->free_blocks));
    json_object_set_new(o, "reserved_bytes", u64(g->reserved_bytes));
    json_object_set_new(o, "allocated_bytes", u64(g->allocated_bytes));
    json_object_set_new(o, "gap_bytes", u64(g->gap_bytes));
    json_object_set_new(o, "gap_pct", json_real(g->gap_pct));
    json_object_set_new(o, "internal_waste_bytes", u64(g->internal_waste_bytes));
    json_object_set_new(o, "external_free_bytes", u64(g->external_free_bytes));
    json_object_set_new(o, "pending_free_bytes", u64(g->pending_free_bytes));
    json_object_set_new(o, "largest_free_bytes", u64(g->largest_free_bytes));
    json_object_set_new(o, "fragmentation_index", json_real(g->fragmentation_index));
    json_object_set_new(o, "free_below_1mib_bytes", u64(g->free_below_1mib_bytes));
    json_object_set_new(o, "median_allocated_bytes", u64(g->median_allocated_bytes));
    json_object_set_new(o, "free_below_median_bytes", u64(g->free_below_median_bytes));
    json_object_set_new(o, "empty_cache_releasable_bytes", u64(g->empty_cache_releasable_bytes));
    json_object_set_new(o, "expandable_tail_bytes", u64(g->expandable_tail_bytes));
    json_object_set_new(o, "stranded_free_bytes", u64(g->stranded_free_bytes));
    json_object_set_new(o, "largest_stranded_bytes", u64(g->largest_stranded_bytes));
    json_object_set_new(o, "stranded_index", json_real(g->stranded_index));
    json_object_set_new(o, "free_histogram", histogram_json(g));
}

static json_t *pools_json(const sd_frag_device *d)
{
    json_t *a = json_array();
    for (size_t i = 0; i < d->n_pools; i++) {
        const sd_frag_pool *p = &d->pools[i];
        json_t *o = json_object();
        json_object_set_new(o, "pool", json_string(p->name));
        json_object_set_new(o, "pool_id", json_pack("[II]", (json_int_t)p->pool_id[0],
                                                    (json_int_t)p->pool_id[1]));
        figures_json(o, &p->fig);
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *streams_json(const sd_frag_device *d)
{
    json_t *a = json_array();
    for (size_t i = 0; i < d->n_streams; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "stream", u64(d->streams[i].stream));
        figures_json(o, &d->streams[i].fig);
        json_array_append_new(a, o);
    }
    return a;
}

/* The oom entry's frames, PyTorch's noise left out (as the diff's stacks). */
static json_t *oom_stack_json(const sd_snapshot *s, const sd_frag_oom *m)
{
    json_t *a = json_array();
    for (int32_t i = 0;; i++) {
        const sd_frame *f = sdp_frag_oom_frame(s, m, i);
        if (!f) break;
        if (!sd_frame_is_noise(f)) json_array_append_new(a, sdp_frame_json(f));
    }
    return a;
}

/* The replay's figures each piece of advice quotes, in the order of "advice" (null for a
 * piece that quotes none). */
static json_t *advice_replay_json(const sd_frag_device *d)
{
    json_t *a = json_array();
    for (size_t i = 0; i < d->n_advice; i++) {
        const sd_frag_advice *x = &d->advice[i];
        if (!x->replayed) {
            json_array_append_new(a, json_null());
            continue;
        }
        json_t *o = json_object();
        const char *conf = x->code == SD_ADVICE_EXPANDABLE_SEGMENTS ? "expandable_segments:True"
                           : x->code == SD_ADVICE_MAX_SPLIT_SIZE    ? "max_split_size_mb:512"
                                                                    : NULL;
        json_object_set_new(o, "alloc_conf", conf ? json_string(conf) : json_null());
        json_object_set_new(o, "recorded_peak_reserved_bytes",
                            u64(x->recorded_peak_reserved_bytes));
        json_object_set_new(o, "peak_reserved_bytes",
                            conf ? u64(x->peak_reserved_bytes) : json_null());
        json_object_set_new(o, "ooms", u64(x->ooms));
        json_object_set_new(o, "ooms_avoided", u64(x->ooms_avoided));
        json_array_append_new(a, o);
    }
    return a;
}

/* The site as every view labels it (attrib.h, sd_site_text). */
static json_t *label_json(const sd_snapshot *s, uint32_t stack, const sd_site *site)
{
    return site->site < 0 ? json_null() : sdp_site_label_json(s, stack, site, NULL);
}

/* What was live at the oom by site, named as every JSON document names a site. */
static json_t *oom_sites_json(const sd_frag *f, const sd_frag_oom *m)
{
    json_t *a = json_array();
    for (size_t i = 0; i < m->n_all_sites; i++) {
        const sd_frag_live_site *x = &m->all_sites[i];
        json_t *o = json_object();
        json_object_set_new(o, "site", sdp_site_json(sd_frag_attrib(f), sd_frag_snapshot(f),
                                                     x->stack, &x->site));
        json_object_set_new(o, "label", label_json(sd_frag_snapshot(f), x->stack, &x->site));
        json_object_set_new(o, "bytes", u64(x->bytes));
        json_object_set_new(o, "blocks", u64(x->blocks));
        json_array_append_new(a, o);
    }
    return a;
}

/* The arithmetic, the what-ifs and the levers issue 26 added (docs/json-frag.md). */
static void oom_arithmetic_json(json_t *o, const sd_frag *f, const sd_frag_oom *m)
{
    json_object_set_new(o, "wholly_free_bytes", u64(m->cached_free_bytes));
    json_object_set_new(o, "shortfall_bytes", u64(m->shortfall_bytes));
    json_object_set_new(o, "live_share", m->live_known && !m->process_limit
                                             ? json_real(m->live_share) : json_null());
    sd_peak_table t = {.categories = m->categories, .n_categories = m->n_categories};
    json_object_set_new(o, "categories", m->live_known ? sdp_categories_json(&t) : json_null());
    json_t *w = json_array();
    for (size_t i = 0; i < m->n_whatif; i++) {
        const sd_frag_whatif *x = &m->whatif[i];
        json_t *y = json_object();
        json_object_set_new(y, "alloc_conf", json_string(x->alloc_conf));
        json_object_set_new(y, "fits", json_boolean(x->fits));
        json_object_set_new(y, "headroom_bytes", x->has_headroom ? u64(x->headroom_bytes)
                                                                 : json_null());
        json_object_set_new(y, "enough_for_next_step", json_boolean(x->enough));
        json_array_append_new(w, y);
    }
    json_object_set_new(o, "whatif", w);
    json_object_set_new(o, "whatif_untrusted_why",
                        m->whatif_untrusted_why ? json_string(m->whatif_untrusted_why)
                                                : json_null());
    json_t *l = json_array();
    for (size_t i = 0; i < m->n_levers; i++) {
        const sd_frag_lever *x = &m->levers[i];
        json_t *y = json_object();
        json_object_set_new(y, "category", json_string(sd_category_name(x->category)));
        json_object_set_new(y, "site", sdp_site_json(sd_frag_attrib(f), sd_frag_snapshot(f),
                                                     x->stack, &x->site));
        json_object_set_new(y, "label", label_json(sd_frag_snapshot(f), x->stack, &x->site));
        json_object_set_new(y, "bytes", u64(x->bytes));
        json_object_set_new(y, "lever", json_string(sd_frag_lever_name(x->lever)));
        json_array_append_new(l, y);
    }
    json_object_set_new(o, "levers", l);
    /* issue 36: the levers in the model's terms (docs/levers.md) */
    uint64_t need = 0;
    bool has_need = sd_levers_shortfall(m->model_levers, &need);
    json_object_set_new(o, "model_levers", m->model_levers
                                               ? sdp_levers_json(sd_frag_attrib(f),
                                                                 sd_frag_snapshot(f),
                                                                 m->model_levers)
                                               : json_null());
    json_object_set_new(o, "levers_need_bytes", has_need ? u64(need) : json_null());
}

/* The figures issue 19 added to an oom event (docs/json-frag.md). */
static void oom_figures_json(json_t *o, const sd_frag *f, const sd_frag_oom *m)
{
    json_object_set_new(o, "allocator_free_bytes", u64(m->allocator_free_bytes));
    json_object_set_new(o, "cached_free_bytes", u64(m->cached_free_bytes));
    json_object_set_new(o, "stranded_free_bytes", u64(m->stranded_free_bytes));
    json_object_set_new(o, "all_free_bytes", u64(m->device_free_bytes + m->allocator_free_bytes));
    json_object_set_new(o, "at_run_start", json_boolean(m->at_run_start));
    json_object_set_new(o, "process_limit", json_boolean(m->process_limit));
    json_object_set_new(o, "live_bytes", m->live_known ? u64(m->live_bytes) : json_null());
    json_object_set_new(o, "live_blocks", m->live_known ? u64(m->live_blocks) : json_null());
    json_object_set_new(o, "live_sites", m->live_known ? oom_sites_json(f, m) : json_null());
    json_t *r = json_null();
    if (m->replay_known) {
        r = json_object();
        json_object_set_new(r, "expandable_segments:True", json_boolean(m->succeeds_expandable));
        json_object_set_new(r, "max_split_size_mb:512", json_boolean(m->succeeds_max_split));
    }
    json_object_set_new(o, "replay_succeeds", r);
    oom_arithmetic_json(o, f, m);
}

static json_t *ooms_json(const sd_frag *f, const sd_snapshot *s, const sd_frag_device *d)
{
    json_t *a = json_array();
    for (size_t i = 0; i < d->n_ooms; i++) {
        const sd_frag_oom *m = &d->ooms[i];
        json_t *o = json_object();
        json_object_set_new(o, "trace_index", u64(m->trace_index));
        json_object_set_new(o, "time_us", m->has_time ? json_integer(m->time_us) : json_null());
        json_object_set_new(o, "request_bytes", u64(m->request_bytes));
        json_object_set_new(o, "device_free_bytes", u64(m->device_free_bytes));
        json_object_set_new(o, "stream", u64(m->stream));
        json_object_set_new(o, "pool", json_string(m->small_pool ? "small" : "large"));
        json_object_set_new(o, "largest_free_bytes", u64(m->largest_free_bytes));
        json_object_set_new(o, "free_bytes", u64(m->free_bytes));
        json_object_set_new(o, "source", json_string(m->replayed ? "replay" : "snapshot"));
        json_object_set_new(o, "note", m->replayed ? json_null()
                                                   : json_string(sdp_frag_oom_note_words(m).s));
        json_object_set_new(o, "cause", json_string(sd_oom_cause_name(m->cause)));
        json_object_set_new(o, "site", sdp_frame_json(sdp_frag_oom_frame(s, m, m->site.site)));
        json_object_set_new(o, "label", sdp_frag_oom_frame(s, m, m->site.site)
                                             ? label_json(s, m->stack, &m->site) : json_null());
        json_object_set_new(o, "stack", oom_stack_json(s, m));
        oom_figures_json(o, f, m);
        json_array_append_new(a, o);
    }
    return a;
}

json_t *sdp_frag_ooms_json(const sd_frag *f, const sd_frag_device *d)
{
    return ooms_json(f, sd_frag_snapshot(f), d);
}

static void verdict_json(json_t *o, const sd_frag_device *d)
{
    json_object_set_new(o, "verdict", json_string(sd_frag_verdict_name(d->verdict)));
    json_object_set_new(o, "explanation", json_string(sdp_frag_why_words(&d->why).s));
    json_object_set_new(o, "end_state_only", json_boolean(d->why.end_state_only));
    json_t *adv = json_array();
    for (size_t i = 0; i < d->n_advice; i++)
        json_array_append_new(adv, json_string(sdp_frag_advice_words(&d->advice[i]).s));
    json_object_set_new(o, "advice", adv);
    json_object_set_new(o, "advice_replay", advice_replay_json(d));
}

/* What fragmentation cost at the peak (docs/json-frag.md): null without a trace. */
static void cost_json(json_t *o, const sd_frag_device *d)
{
    json_object_set_new(o, "peak_reserved_bytes", d->has_cost ? u64(d->peak_reserved_bytes)
                                                              : json_null());
    json_object_set_new(o, "peak_live_bytes", d->has_cost ? u64(d->peak_live_bytes)
                                                          : json_null());
    json_object_set_new(o, "fragmentation_cost_bytes", d->has_cost ? u64(d->cost_bytes)
                                                                   : json_null());
    json_object_set_new(o, "fragmentation_cost_pct",
                        d->has_cost ? json_real(d->why.cost_pct) : json_null());
    json_object_set_new(o, "peak_phase", d->has_cost && d->peak_has_phase
                                             ? json_string(sd_step_phase_name(d->peak_phase))
                                             : json_null());
    json_object_set_new(o, "peak_step", d->has_cost && d->peak_has_phase && d->peak_step
                                            ? u64(d->peak_step) : json_null());
    json_object_set_new(o, "fragmentation_cost_replay_bytes",
                        d->has_cost_replay ? u64(d->cost_replay_bytes) : json_null());
    json_object_set_new(o, "request_sizes_vary", d->request_sizes_vary < 0
                                                     ? json_null()
                                                     : json_boolean(d->request_sizes_vary));
}

static json_t *device_json(const sd_frag *f, const sd_snapshot *s, const sd_frag_device *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "device", json_integer(d->device));
    verdict_json(o, d);
    cost_json(o, d);
    figures_json(o, &d->fig);
    json_object_set_new(o, "large_split_free_bytes", u64(d->large_split_free_bytes));
    json_object_set_new(o, "pools", pools_json(d));
    json_object_set_new(o, "streams", streams_json(d));
    json_object_set_new(o, "oom_events", ooms_json(f, s, d));
    return o;
}

static json_t *total_json(const sd_frag_device *t)
{
    json_t *o = json_object();
    verdict_json(o, t);
    figures_json(o, &t->fig);
    json_object_set_new(o, "large_split_free_bytes", u64(t->large_split_free_bytes));
    json_object_set_new(o, "pools", pools_json(t));
    return o;
}

json_t *sdp_frag_json(const sd_frag *f, bool with_schema)
{
    const sd_snapshot *s = sd_frag_snapshot(f);
    const sd_frag_options *t = sd_frag_thresholds(f);
    json_t *o = json_object();
    if (with_schema) json_object_set_new(o, "schema", json_string(SD_FRAG_SCHEMA));
    json_object_set_new(o, "file", json_string(sd_snapshot_source(s)));
    json_object_set_new(o, "thresholds", json_pack("{s:f,s:f}", "gap_pct", t->gap_threshold_pct,
                                                   "index", t->index_threshold));
    json_t *devs = json_array();
    for (size_t i = 0; i < sd_frag_device_count(f); i++)
        json_array_append_new(devs, device_json(f, sd_frag_snapshot(f), sd_frag_device_at(f, i)));
    json_object_set_new(o, "devices", devs);
    json_object_set_new(o, "total", total_json(sd_frag_total(f)));
    json_object_set_new(o, "settings", sdp_settings_frag_json(sd_snapshot_allocator_settings(s)));
    return o;
}

sd_status sd_render_frag_json(FILE *out, const sd_frag *const *frags, size_t n)
{
    json_t *doc;
    if (n == 1) {
        doc = sdp_frag_json(frags[0], true);
    } else {
        doc = json_object();
        json_object_set_new(doc, "schema", json_string(SD_FRAG_SCHEMA));
        json_t *files = json_array();
        for (size_t i = 0; i < n; i++) json_array_append_new(files, sdp_frag_json(frags[i], false));
        json_object_set_new(doc, "files", files);
    }
    int rc = doc ? json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
    fputc('\n', out);
    json_decref(doc);
    return rc == 0 && !ferror(out) ? SD_OK : SD_EIO;
}
