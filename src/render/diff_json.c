/* diff_json.c - the diff as JSON: schema snapdiff.diff/1 (docs/json-diff.md).
 * Every figure, delta included, comes from the diff; this file only names them. */
#include <jansson.h>
#include <stdio.h>

#include "render/diff_render.h"
#include "render/json_frame.h"
#include "render/pattern_words.h"
#include "render/peak_words.h"
#include "render/site.h"

static json_t *jint(uint64_t v) { return json_integer((json_int_t)v); }

/* The group as the text names it (attrib.h, sd_group_label, with via). */
static json_t *label_json(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                          const sd_site *site, const char *key)
{
    return sdp_group_label_json(a, s, stack, site, key, true);
}

static json_t *side_json(const char *source, const sd_stats *st, const sd_frag_brief *fb)
{
    json_t *o = json_object();
    if (source) json_object_set_new(o, "source", json_string(source));
    json_object_set_new(o, "allocated", jint(st->allocated_bytes));
    json_object_set_new(o, "reserved", jint(st->reserved_bytes));
    json_object_set_new(o, "active", jint(st->active_bytes));
    json_object_set_new(o, "requested", jint(st->requested_bytes));
    json_object_set_new(o, "pending_free", jint(st->pending_free_bytes));
    if (fb) {
        json_t *fr = json_object();
        json_object_set_new(fr, "gap", jint(fb->gap));
        json_object_set_new(fr, "total_free", jint(fb->total_free));
        json_object_set_new(fr, "largest_free", jint(fb->largest_free));
        json_object_set_new(fr, "index", json_real(fb->index));
        json_object_set_new(o, "fragmentation", fr);
    }
    return o;
}

static void stats_deltas_json(json_t *o, const sd_stats_delta *d)
{
    json_object_set_new(o, "allocated_delta", json_integer(d->allocated));
    json_object_set_new(o, "reserved_delta", json_integer(d->reserved));
    json_object_set_new(o, "active_delta", json_integer(d->active));
    json_object_set_new(o, "requested_delta", json_integer(d->requested));
    json_object_set_new(o, "pending_free_delta", json_integer(d->pending_free));
}

static void deltas_json(json_t *o, const sd_stats_delta *d, const sd_diff_counts *c)
{
    stats_deltas_json(o, d);
    json_object_set_new(o, "blocks_new", jint(c->added));
    json_object_set_new(o, "blocks_freed", jint(c->freed));
    json_object_set_new(o, "blocks_kept", jint(c->kept));
}

/* Pinned host memory, in no device figure nor in totals; null when neither side has it.
 * A side without a host section did not record it (an older torch, or
 * record_pinned_host_memory off): its figures and the deltas are unknown, not zero. */
static json_t *host_json(const sd_diff *d)
{
    const sd_diff_host *h = sd_diff_host_of(d);
    if (!h) return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "in_old", json_boolean(h->in_old));
    json_object_set_new(o, "in_new", json_boolean(h->in_new));
    json_object_set_new(o, "old", h->in_old ? side_json(NULL, &h->old_stats, NULL) : json_null());
    json_object_set_new(o, "new", h->in_new ? side_json(NULL, &h->new_stats, NULL) : json_null());
    if (h->in_old && h->in_new) {
        stats_deltas_json(o, &h->delta);
    } else {
        static const char *const keys[] = {"allocated_delta", "reserved_delta", "active_delta",
                                           "requested_delta", "pending_free_delta"};
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
            json_object_set_new(o, keys[i], json_null());
    }
    return o;
}

static const char *capacity_source_name(sd_capacity_source s)
{
    return s == SD_CAPACITY_GIVEN ? "given" : s == SD_CAPACITY_OOM ? "oom-estimate" : NULL;
}

static json_t *device_json(const sd_diff_device *dd)
{
    json_t *o = json_object();
    json_object_set_new(o, "device", json_integer(dd->device));
    if (dd->in_old && dd->in_new && dd->device != dd->device_new)   /* ranks paired */
        json_object_set_new(o, "device_new", json_integer(dd->device_new));
    json_object_set_new(o, "in_old", json_boolean(dd->in_old));
    json_object_set_new(o, "in_new", json_boolean(dd->in_new));
    json_object_set_new(o, "old", side_json(NULL, &dd->old_stats, NULL));
    json_object_set_new(o, "new", side_json(NULL, &dd->new_stats, NULL));
    deltas_json(o, &dd->delta, &dd->blocks);
    const char *src = capacity_source_name(dd->capacity_source);
    json_object_set_new(o, "capacity", src ? jint(dd->capacity) : json_null());
    json_object_set_new(o, "capacity_source", src ? json_string(src) : json_null());
    json_object_set_new(o, "steps_to_capacity",
                        dd->has_steps_to_capacity ? jint(dd->steps_to_capacity) : json_null());
    return o;
}

/* The site as {filename, line, name, kind}: a native site has filename "" and line 0,
 * its readable label as name and the raw C++ symbol as `symbol`; a backward site is the
 * forward line with "backward": true. */
static json_t *site_json(const sd_attrib *a, const sd_diff_group *g)
{
    return sdp_site_json(a, g->rep_snapshot, g->rep_stack, &g->rep_site);
}

/* "pattern": code or null, "hint": the fix or null. */
static void pattern_json(json_t *o, sd_pattern p)
{
    const char *code = sd_pattern_code(p), *hint = sdp_pattern_hint(p);
    json_object_set_new(o, "pattern", code ? json_string(code) : json_null());
    json_object_set_new(o, "hint", hint ? json_string(hint) : json_null());
}

static json_t *group_json(const sd_attrib *a, const sd_diff_group *g)
{
    json_t *o = json_object();
    json_object_set_new(o, "key", json_string(g->key));
    json_object_set_new(o, "label", label_json(a, g->rep_snapshot, g->rep_stack, &g->rep_site,
                                               g->key));
    json_object_set_new(o, "device", json_integer(g->device));
    json_t *site = json_null(), *via = json_null(), *stack = NULL;
    const sd_stack_context *ctx = NULL;
    if (g->rep_snapshot) {
        site = site_json(a, g);
        const sd_frame *v = sd_site_frame(g->rep_snapshot, g->rep_stack, &g->rep_site,
                                          g->rep_site.via);
        if (v) via = sdp_kind_frame_json(a, v);
        stack = sdp_stack_json(a, g->rep_snapshot, g->rep_stack);
        ctx = sd_snapshot_stack_context(g->rep_snapshot, g->rep_stack);
    }
    json_object_set_new(o, "site", site);
    json_object_set_new(o, "via", via);
    json_object_set_new(o, "stack", stack ? stack : json_array());
    /* Newer torch only, and only when recorded: absent otherwise. */
    if (ctx && ctx->forward_stack)
        json_object_set_new(o, "forward_stack",
                            sdp_stack_json(a, g->rep_snapshot, ctx->forward_stack));
    if (ctx && ctx->user_metadata[0])
        json_object_set_new(o, "user_metadata", json_string(ctx->user_metadata));
    if (ctx && ctx->compile_context[0])
        json_object_set_new(o, "compile_context", json_string(ctx->compile_context));
    json_object_set_new(o, "old_bytes", jint(g->old_bytes));
    json_object_set_new(o, "new_bytes", jint(g->new_bytes));
    json_object_set_new(o, "delta_bytes", json_integer(g->delta_bytes));
    json_object_set_new(o, "old_blocks", jint(g->old_blocks));
    json_object_set_new(o, "new_blocks", jint(g->new_blocks));
    json_object_set_new(o, "delta_blocks", json_integer(g->delta_blocks));
    json_object_set_new(o, "old_requested_bytes", jint(g->old_requested_bytes));
    json_object_set_new(o, "new_requested_bytes", jint(g->new_requested_bytes));
    json_object_set_new(o, "delta_requested_bytes", json_integer(g->delta_requested_bytes));
    json_object_set_new(o, "kept_blocks", jint(g->kept_blocks));
    /* Code that moved (docs/json-diff.md): OLD's site, absent for every other group. */
    if (g->moved) {
        json_t *m = json_object();
        json_object_set_new(m, "filename", json_string(g->moved_file ? g->moved_file : ""));
        json_object_set_new(m, "line", json_integer(g->moved_line));
        json_object_set_new(o, "moved_from", m);
    }
    pattern_json(o, g->pattern);
    return o;
}

/* The warnings: a stable code, the numbers, and the sentence (docs/json-diff.md). */
static json_t *warnings_json(const sd_diff *d)
{
    json_t *a = json_array();
    for (size_t i = 0; i < sd_diff_warning_count(d); i++) {
        const sd_diff_warning *w = sd_diff_warning_at(d, i);
        json_t *o = json_object();
        char msg[512];
        sd_diff_warning_text(w, msg, sizeof msg);
        json_object_set_new(o, "code", json_string(sd_diff_warning_name(w->code)));
        json_object_set_new(o, "message", json_string(msg));
        json_object_set_new(o, "side", w->side < 0 ? json_null()
                                                   : json_string(w->side ? "new" : "old"));
        switch (w->code) {
        case SD_WARN_NO_SHARED_SITE:
        case SD_WARN_FEW_SHARED_SITES:
            json_object_set_new(o, "shared_sites", jint(w->count));
            json_object_set_new(o, "sites", jint(w->of_count));
            json_object_set_new(o, "shared_bytes", jint(w->bytes));
            json_object_set_new(o, "bytes", jint(w->of_bytes));
            json_object_set_new(o, "shared_pct", json_real(w->pct));
            break;
        case SD_WARN_DEVICES_DIFFER:
            json_object_set_new(o, "device", json_integer(w->device));
            json_object_set_new(o, "allocated_bytes", jint(w->bytes));
            break;
        case SD_WARN_SETTINGS_DIFFER:
            json_object_set_new(o, "setting", json_string(w->setting ? w->setting : ""));
            break;
        case SD_WARN_MOSTLY_NO_STACK:
            json_object_set_new(o, "no_stack_bytes", jint(w->bytes));
            json_object_set_new(o, "allocated_bytes", jint(w->of_bytes));
            json_object_set_new(o, "no_stack_pct", json_real(w->pct));
            break;
        case SD_WARN_SWAPPED:
            json_object_set_new(o, "old_newest_time_us", json_integer(w->old_time_us));
            json_object_set_new(o, "new_newest_time_us", json_integer(w->new_time_us));
            break;
        default: break;
        }
        json_array_append_new(a, o);
    }
    return a;
}

/* {"bytes", "entry", "time_us"} of one side's peak. */
static json_t *peak_side_json(const sd_peak_device *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "bytes", jint(p->peak_bytes));
    json_object_set_new(o, "entry", jint(p->peak_entry));
    json_object_set_new(o, "time_us", p->peak_has_time ? json_integer(p->peak_time_us)
                                                        : json_null());
    json_object_set_new(o, "phase", sdp_peak_phase_json(p));
    json_object_set_new(o, "step", sdp_peak_step_json(p));
    json_object_set_new(o, "categories", sdp_categories_json(&p->at_peak));
    return o;
}

/* [{category, old_bytes, new_bytes, delta_bytes}] */
static json_t *category_deltas_json(const sd_peak_diff_category *c, size_t n);

/* Issue 36: which steps the peaks are in, and the steady step's peaks when they differ. */
static json_t *steps_json(const sd_peak_diff_device *dv)
{
    json_t *o = json_object();
    json_object_set_new(o, "old_step", dv->old_step ? jint(dv->old_step) : json_null());
    json_object_set_new(o, "new_step", dv->new_step ? jint(dv->new_step) : json_null());
    json_object_set_new(o, "same_step", dv->old_step && dv->new_step
                                            ? json_boolean(dv->old_step == dv->new_step)
                                            : json_null());
    json_object_set_new(o, "steady_step", dv->steady_step ? jint(dv->steady_step)
                                                          : json_null());
    json_t *st = json_null();
    if (dv->steady_step) {
        st = json_object();
        json_object_set_new(st, "old_bytes", jint(dv->old_steady_bytes));
        json_object_set_new(st, "new_bytes", jint(dv->new_steady_bytes));
        json_object_set_new(st, "delta_bytes", json_integer((json_int_t)dv->new_steady_bytes -
                                                            (json_int_t)dv->old_steady_bytes));
        json_object_set_new(st, "old_entry", jint(dv->old_steady_entry));
        json_object_set_new(st, "new_entry", jint(dv->new_steady_entry));
        json_object_set_new(st, "categories", category_deltas_json(dv->steady_categories,
                                                                   dv->n_steady_categories));
    }
    json_object_set_new(o, "steady", st);
    return o;
}

static json_t *category_deltas_json(const sd_peak_diff_category *c, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "category", json_string(sd_category_name(c[i].category)));
        json_object_set_new(o, "old_bytes", jint(c[i].old_bytes));
        json_object_set_new(o, "new_bytes", jint(c[i].new_bytes));
        json_object_set_new(o, "delta_bytes", json_integer(c[i].delta_bytes));
        json_array_append_new(a, o);
    }
    return a;
}

/* [{phase, old_peak_bytes, new_peak_bytes, categories}]: the peak of each phase. */
static json_t *phases_json(const sd_peak_diff_device *dv)
{
    json_t *a = json_array();
    for (size_t i = 0; i < dv->n_phases; i++) {
        const sd_peak_diff_phase *p = &dv->phases[i];
        json_t *o = json_object();
        json_object_set_new(o, "phase", json_string(sd_step_phase_name(p->phase)));
        json_object_set_new(o, "old_peak_bytes", p->has_old ? jint(p->old_peak_bytes)
                                                            : json_null());
        json_object_set_new(o, "new_peak_bytes", p->has_new ? jint(p->new_peak_bytes)
                                                            : json_null());
        json_object_set_new(o, "categories", category_deltas_json(p->categories,
                                                                  p->n_categories));
        json_array_append_new(a, o);
    }
    return a;
}

/* "peak": both files at their peaks (docs/peak.md), or null when not compared. */
static json_t *peak_json(const sd_diff *d)
{
    const sd_peak_diff *pd = sd_diff_peak(d);
    if (!pd || sd_peak_diff_device_count(pd) == 0) return json_null();
    const sd_attrib *a = sd_diff_attrib(d);
    json_t *o = json_object(), *devs = json_array();
    for (size_t i = 0; i < sd_peak_diff_device_count(pd); i++) {
        const sd_peak_diff_device *dv = sd_peak_diff_device_at(pd, i);
        json_t *x = json_object(), *groups = json_array();
        json_object_set_new(x, "device_old", json_integer(dv->device_old));
        json_object_set_new(x, "device_new", json_integer(dv->device_new));
        json_object_set_new(x, "old", peak_side_json(dv->old));
        json_object_set_new(x, "new", peak_side_json(dv->new_));
        json_object_set_new(x, "delta_bytes", json_integer(dv->delta_bytes));
        for (size_t k = 0; k < dv->n_groups; k++) {
            const sd_peak_diff_group *g = &dv->groups[k];
            json_t *y = json_object();
            json_object_set_new(y, "key", json_string(g->key));
            json_object_set_new(y, "label", label_json(a, g->rep_snapshot, g->rep_stack,
                                                       &g->rep_site, g->key));
            json_object_set_new(y, "site", sdp_site_json(a, g->rep_snapshot, g->rep_stack,
                                                         &g->rep_site));
            const sd_frame *v = g->rep_snapshot ? sd_site_frame(g->rep_snapshot, g->rep_stack,
                                                                &g->rep_site, g->rep_site.via)
                                                : NULL;
            json_object_set_new(y, "via", v ? sdp_kind_frame_json(a, v) : json_null());
            json_object_set_new(y, "old_bytes", jint(g->old_bytes));
            json_object_set_new(y, "new_bytes", jint(g->new_bytes));
            json_object_set_new(y, "delta_bytes", json_integer(g->delta_bytes));
            json_object_set_new(y, "old_blocks", jint(g->old_blocks));
            json_object_set_new(y, "new_blocks", jint(g->new_blocks));
            json_array_append_new(groups, y);
        }
        json_object_set_new(x, "groups", groups);
        json_object_set_new(x, "categories", category_deltas_json(dv->categories,
                                                                  dv->n_categories));
        json_object_set_new(x, "phases_differ", json_boolean(dv->phases_differ));
        json_object_set_new(x, "old_lead", json_string(sd_category_name(dv->old_lead)));
        json_object_set_new(x, "new_lead", json_string(sd_category_name(dv->new_lead)));
        json_object_set_new(x, "phases", phases_json(dv));
        json_object_set_new(x, "steps_compared", steps_json(dv));
        json_array_append_new(devs, x);
    }
    json_object_set_new(o, "devices", devs);
    return o;
}

static json_t *diff_json(const sd_diff *d)
{
    const sd_diff_totals *t = sd_diff_totals_of(d);
    const sd_attrib *a = sd_diff_attrib(d);
    const sd_snapshot *old_snap = sd_profile_snapshot(sd_diff_profile(d), 0);
    const sd_snapshot *new_snap = sd_profile_snapshot(sd_diff_profile(d), 1);
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("snapdiff.diff/1"));
    json_object_set_new(doc, "group_by", json_string(sd_group_by_name(sd_attrib_group_by(a))));
    json_object_set_new(doc, "depth", json_integer(sd_attrib_depth(a)));
    json_object_set_new(doc, "old",
                        side_json(sd_snapshot_source(old_snap), &t->old_stats, &t->old_frag));
    json_object_set_new(doc, "new",
                        side_json(sd_snapshot_source(new_snap), &t->new_stats, &t->new_frag));
    json_t *tot = json_object();
    deltas_json(tot, &t->delta, &t->blocks);
    json_object_set_new(tot, "groups_delta", json_integer(t->groups_delta));
    pattern_json(tot, t->pattern);
    /* Reserved grew with the peak, not by fragmentation: the peak delta, else null. */
    json_object_set_new(tot, "reserved_with_peak",
                        t->reserved_with_peak ? json_integer(t->peak_delta) : json_null());
    json_object_set_new(tot, "moved_groups", jint(t->moved_groups));
    json_object_set_new(tot, "live_identical", json_boolean(t->live_identical));
    json_object_set_new(doc, "totals", tot);
    json_object_set_new(doc, "host", host_json(d));
    json_object_set_new(doc, "warnings", warnings_json(d));
    json_t *devs = json_array();
    for (size_t i = 0; i < sd_diff_device_count(d); i++)
        json_array_append_new(devs, device_json(sd_diff_device_at(d, i)));
    json_object_set_new(doc, "devices", devs);
    json_t *groups = json_array();
    for (size_t i = 0; i < sd_diff_group_count(d); i++)
        json_array_append_new(groups, group_json(a, sd_diff_group_at(d, i)));
    json_object_set_new(doc, "groups", groups);
    json_object_set_new(doc, "steps", t->steps ? jint(t->steps) : json_null());
    json_object_set_new(doc, "per_step", t->has_per_step ? json_integer(t->per_step) : json_null());
    json_object_set_new(doc, "per_step_exact",
                        t->has_per_step ? json_real(t->per_step_exact) : json_null());
    json_object_set_new(doc, "steps_to_capacity",
                        t->has_steps_to_capacity ? jint(t->steps_to_capacity) : json_null());
    json_object_set_new(doc, "peak", peak_json(d));
    const sd_diff_comparison *c = sd_diff_comparison_of(d);
    json_object_set_new(doc, "compared_as", json_string(c->two_runs ? "two-runs" : "one-run"));
    json_t *why = json_array();
    for (unsigned bit = 1; bit <= SD_TWO_RUNS_FORCED; bit <<= 1)
        if (c->why & bit) json_array_append_new(why, json_string(sd_diff_two_runs_reason_name(bit)));
    json_object_set_new(doc, "compared_as_why", why);
    return doc;
}

sd_status sd_render_diff_json(FILE *out, const sd_diff *d)
{
    if (!sd_profile_snapshot(sd_diff_profile(d), 0)) return SD_EUSAGE;   /* folded only */
    json_t *doc = diff_json(d);
    int rc = json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(doc);
    /* jansson's failures are (nearly always) memory; a failed write shows in ferror(). */
    if (rc != 0) return SD_ENOMEM;
    return ferror(out) ? SD_EIO : SD_OK;
}
