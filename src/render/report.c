/* report.c - the HTML report: a template, its style and script (embedded at build time
 * from src/render/report/, report_assets.h), and the data the script draws.
 *
 * The data are JSON documents in <script type="application/json"> elements, every '<'
 * written as \u003c so that no text in a snapshot can end the element: the documents the
 * CLI's --json writes (rendered into memory by the same renderers), and one
 * snapdiff.report/1 document of aggregates for the pictures (report_render.h lists the
 * limits). Nothing here decides or computes anything: every figure comes from the analyses
 * the caller ran before (the diff or profile, the frags, and report_data.h's peaks, live
 * series, sites, totals, spread and replay); this file picks the largest entries and
 * downsamples, as a picture needs.
 */
#define _GNU_SOURCE   /* open_memstream */
#include <inttypes.h>
#include <math.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "render/diff_render.h"
#include "render/peak_words.h"
#include "render/report_render.h"
#include "report_assets.h"
#include "snapdiff/render_curve.h"
#include "snapdiff/render_frag.h"
#include "snapdiff/render_series.h"
#include "snapdiff/render_stats.h"

static json_t *u64(uint64_t v) { return json_integer((json_int_t)v); }

/* Version-2 fields of the input (render.h: a version of 0 reads as 1, which has none). */
static bool is_ranks(const sd_report_input *in) { return in->version >= 2 && in->ranks; }
static const sd_curve *curve_of(const sd_report_input *in)
{
    return in->version >= 2 ? in->curve : NULL;
}

/* ---- writing ------------------------------------------------------------------------ */

/* JSON text into a script element: '<' as \u003c (valid in and out of JSON strings). */
static void put_script_json(FILE *out, const char *text, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++)
        if (text[i] == '<') {
            fwrite(text + start, 1, i - start, out);
            fputs("\\u003c", out);
            start = i + 1;
        }
    fwrite(text + start, 1, n - start, out);
}

static void put_html(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
    }
}

typedef sd_status (*doc_writer)(FILE *out, const sd_report_input *in);

static sd_status write_stats(FILE *out, const sd_report_input *in)
{
    return sd_render_stats_json(out, in->snaps, in->n);
}

static sd_status write_frag(FILE *out, const sd_report_input *in)
{
    return sd_render_frag_json(out, in->frags, in->n);
}

static sd_status write_diff(FILE *out, const sd_report_input *in)
{
    return sd_render_diff_json(out, in->diff);
}

/* The ranks as `series` writes them over the same files (snapdiff.series-ranks/1): each
 * snapshot's totals over its devices, their spread and the rank furthest from the median. */
static sd_status write_ranks(FILE *out, const sd_report_input *in)
{
    sd_stats *totals = calloc(in->n, sizeof *totals);
    const char **sources = calloc(in->n, sizeof *sources);
    sd_groups_oom *ooms = calloc(in->n, sizeof *ooms);
    sd_status st = SD_ENOMEM;
    if (totals && sources && ooms) {
        for (size_t i = 0; i < in->n; i++) {
            totals[i] = *sd_report_data_totals(in->data, i);
            sources[i] = sd_snapshot_source(in->snaps[i]);
            ooms[i] = *sd_report_data_oom(in->data, i);
        }
        st = sd_render_series_ranks_oom_json(out, sources, totals, ooms, in->n,
                                             sd_report_data_spread(in->data));
    }
    free(ooms);
    free(totals);
    free(sources);
    return st;
}

static sd_status write_curve(FILE *out, const sd_report_input *in)
{
    sd_error err;
    sd_error_clear(&err);
    return sd_render_curve_json(out, curve_of(in), NULL, &err);
}

/* A job's folder as `series --json` writes it (snapdiff.series-job/1). */
static sd_status write_job(FILE *out, const sd_report_input *in)
{
    return sd_render_series_job_json(out, in->job, in->n_job, in->job_ranks, in->n_job_ranks,
                                     in->job_grown, false);
}

static const sd_job_entry *job_of(const sd_report_input *in)
{
    return in->version >= 3 && in->n_job ? in->job : NULL;
}

/* One document rendered into memory, then written as a script element. */
static sd_status embed_doc(FILE *out, const char *id, doc_writer w, const sd_report_input *in)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return SD_ENOMEM;
    sd_status st = w(mem, in);
    if (fclose(mem) != 0 && st == SD_OK) st = SD_ENOMEM;
    if (st == SD_OK) {
        fprintf(out, "<script type=\"application/json\" id=\"%s\">", id);
        put_script_json(out, buf, len);
        fputs("</script>\n", out);
    }
    free(buf);
    return st;
}

/* ---- aggregates --------------------------------------------------------------------- */

typedef struct ranked {
    size_t index;
    uint64_t value;
} ranked;

static int ranked_desc(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->value != b->value) return a->value < b->value ? 1 : -1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* A JSON string of s, or of `fallback` when s is not UTF-8. */
static json_t *string_or(const char *s, const char *fallback)
{
    json_t *t = json_string(s);
    return t ? t : json_string(fallback);
}

/* The site of stack `id` of snapshot `i` (report_data.h's, as the diff finds it), named as
 * every view names it (attrib.h); NULL for an empty stack. */
static json_t *site_of_stack(const sd_report_input *in, size_t i, uint32_t id)
{
    const sd_site *site = sd_report_data_site(in->data, i, id);
    if (!site || site->site < 0) return NULL;
    char buf[1024];
    sd_site_text(in->snaps[i], id, site, buf, sizeof buf);
    return string_or(buf, "(not UTF-8)");
}

/* A group as every view names it (attrib.h, sd_group_label). */
static json_t *key_label(const sd_profile *p, const sd_profile_key *k)
{
    char buf[1400];
    if (!k->has_rep) return string_or(k->key, "?");
    sd_group_label(sd_profile_attrib(p), sd_profile_snapshot(p, k->rep_side), k->rep_stack,
                   &k->rep_site, k->key, false, buf, sizeof buf);
    return string_or(buf, "?");
}

/* Live bytes by group key of one side of the profile, largest first. */
static json_t *sites_json(const sd_profile *p, size_t side)
{
    size_t n = sd_profile_key_count(p), used = 0;
    ranked *r = malloc((n ? n : 1) * sizeof *r);
    if (!r) return NULL;
    for (size_t i = 0; i < n; i++) {
        const sd_profile_key *k = sd_profile_key_at(p, i);
        if (k->sides[side].bytes) r[used++] = (ranked){i, k->sides[side].bytes};
    }
    qsort(r, used, sizeof *r, ranked_desc);
    json_t *rows = json_array(), *o = json_object();
    uint64_t other_bytes = 0, other_blocks = 0;
    for (size_t i = 0; i < used; i++) {
        const sd_profile_key *k = sd_profile_key_at(p, r[i].index);
        if (i >= SDP_REPORT_MAX_SITES) {
            other_bytes += k->sides[side].bytes;
            other_blocks += k->sides[side].blocks;
            continue;
        }
        json_t *row = json_object();
        json_object_set_new(row, "key", key_label(p, k));
        json_object_set_new(row, "bytes", u64(k->sides[side].bytes));
        json_object_set_new(row, "blocks", u64(k->sides[side].blocks));
        json_object_set_new(row, "requested", u64(k->sides[side].requested));
        json_array_append_new(rows, row);
    }
    free(r);
    const sd_profile_figures *t = sd_profile_total(p, side);
    json_object_set_new(o, "groups", u64(used));
    json_object_set_new(o, "total_bytes", u64(t->bytes));
    json_object_set_new(o, "total_blocks", u64(t->blocks));
    json_object_set_new(o, "other_bytes", u64(other_bytes));
    json_object_set_new(o, "other_blocks", u64(other_blocks));
    json_object_set_new(o, "rows", rows);
    return o;
}

/* ---- the icicle: folded stacks (the flame graph lines), the largest kept ---- */

/* The index of frame text `text` in `frames`, added when new (a new reference). A text
 * that is not UTF-8 cannot be an index key: it gets an entry of its own each time. */
static json_t *frame_id(json_t *frames, json_t *frame_ids, const char *text)
{
    json_t *id = json_object_get(frame_ids, text);
    if (id) return json_incref(id);
    json_t *t = json_string(text);
    id = u64(json_array_size(frames));
    if (t) json_object_set(frame_ids, text, id);
    json_array_append_new(frames, t ? t : json_string("(frame not UTF-8)"));
    return id;
}

/* {"what", "frames": [text], "stacks": [[bytes, [frame, ...outer first]]], "stacks_total",
 * "other_bytes", "total_bytes"} from the icicle's stacks (report_data.h, the largest
 * first): growth by allocator rounding only is counted, not drawn; the innermost frames
 * of a deep stack are kept. */
static json_t *tree_json(const sd_report_stack *st, size_t n, const char *what)
{
    json_t *o = json_object(), *frames = json_array(), *stacks = json_array();
    json_t *frame_ids = json_object();    /* frame text -> index into frames */
    uint64_t total = 0, other = 0, rounding = 0;
    size_t drawn = 0, n_rounding = 0;
    for (size_t i = 0; i < n; i++) {
        if (st[i].rounding_only) {
            rounding += st[i].bytes;
            n_rounding++;
            continue;
        }
        total += st[i].bytes;
        if (drawn++ >= SDP_REPORT_MAX_STACKS) {
            other += st[i].bytes;
            continue;
        }
        size_t skipped = st[i].n_frames > SDP_REPORT_MAX_DEPTH
                             ? st[i].n_frames - SDP_REPORT_MAX_DEPTH : 0;
        json_t *ids = json_array();
        if (skipped) json_array_append_new(ids, frame_id(frames, frame_ids, "(outer frames)"));
        for (size_t k = skipped; k < st[i].n_frames; k++)
            json_array_append_new(ids, frame_id(frames, frame_ids, st[i].frames[k]));
        json_t *stack = json_array();
        json_array_append_new(stack, u64(st[i].bytes));
        json_array_append_new(stack, ids);
        json_array_append_new(stacks, stack);
    }
    json_object_set_new(o, "what", json_string(what));
    json_object_set_new(o, "frames", frames);
    json_object_set_new(o, "stacks", stacks);
    json_object_set_new(o, "stacks_total", u64(n - n_rounding));
    json_object_set_new(o, "total_bytes", u64(total));
    json_object_set_new(o, "other_bytes", u64(other));
    json_object_set_new(o, "rounding_stacks", u64(n_rounding));
    json_object_set_new(o, "rounding_bytes", u64(rounding));
    json_decref(frame_ids);
    return o;
}

/* ---- segment maps: the frag analysis' pages of the largest segments ---- */

static json_t *segment_maps_json(const sd_frag *f)
{
    json_t *devs = json_array();
    for (size_t d = 0; d < sd_frag_device_count(f); d++) {
        const sd_frag_device *dev = sd_frag_device_at(f, d);
        json_t *o = json_object(), *rows = json_array();
        json_object_set_new(o, "device", json_integer(dev->device));
        json_object_set_new(o, "segments", u64(dev->map.n_segments));
        json_object_set_new(o, "page_bytes", u64(dev->map.page_bytes));
        for (size_t r = 0; r < dev->map.n_rows; r++) {
            const sd_frag_map_row *row = &dev->map.rows[r];
            json_t *ro = json_object(), *pages = json_array();
            json_object_set_new(ro, "address", u64(row->address));
            json_object_set_new(ro, "total_size", u64(row->total_size));
            json_object_set_new(ro, "pool", string_or(row->pool, "?"));
            json_object_set_new(ro, "expandable", json_boolean(row->expandable));
            json_object_set_new(ro, "free_bytes", u64(row->free_bytes));
            json_object_set_new(ro, "blocks", u64(sd_snapshot_device(sd_frag_snapshot(f), d)
                                                      ->segments[row->segment].n_blocks));
            for (size_t k = 0; k < row->n_pages; k++) {
                const sd_frag_page *pg = &row->pages[k];
                json_t *a = json_array();
                json_array_append_new(a, u64(pg->allocated));
                json_array_append_new(a, u64(pg->pending));
                json_array_append_new(a, u64(pg->free));
                json_array_append_new(a, u64(pg->span));
                json_array_append_new(pages, a);
            }
            json_object_set_new(ro, "pages", pages);
            json_array_append_new(rows, ro);
        }
        json_object_set_new(o, "rows", rows);
        json_array_append_new(devs, o);
    }
    return devs;
}

/* ---- trace timelines: live bytes after each entry, downsampled ---- */

static json_t *site_index(json_t *sites, json_t *index, json_t *text)
{
    if (!text) return json_null();
    const char *s = json_string_value(text);
    json_t *id = json_object_get(index, s);
    if (!id) {
        id = u64(json_array_size(sites));
        json_object_set_new(index, s, id);
        json_array_append(sites, text);
    }
    json_decref(text);
    return json_incref(id);
}

/* Live bytes over the trace of one device: the peak's figure (peak.h, docs/peak.md), the
 * blocks live when recording began included. Each point is a bucket of entries: [first
 * entry, time_us or null, highest live, lowest live, site of the allocation that reached
 * the highest]. */
static json_t *timeline_device(const sd_report_input *in, size_t si, size_t di)
{
    const sd_snapshot *s = in->snaps[si];
    const sd_cuda_device *dev = sd_snapshot_device(s, di);
    const sd_peak_device *pd = sd_peak_device_at(sd_report_data_peak(in->data, si), di);
    size_t n = 0;
    const uint64_t *series = sd_report_data_live(in->data, si, di, &n);
    if (!pd || !pd->has_peak || !series || n != dev->n_trace) return NULL;
    int64_t live = (int64_t)pd->start_bytes;
    size_t per = (n + SDP_REPORT_MAX_POINTS - 1) / SDP_REPORT_MAX_POINTS;
    if (per == 0) per = 1;
    json_t *o = json_object(), *points = json_array(), *sites = json_array();
    json_t *index = json_object();
    for (size_t start = 0; start < n; start += per) {
        size_t stop = start + per < n ? start + per : n;
        int64_t hi = live, lo = live;
        size_t hi_at = start;
        bool hi_alloc = false;
        for (size_t i = start; i < stop; i++) {
            const sd_trace_entry *e = &dev->trace[i];
            live = (int64_t)series[i];
            if (live > hi || (!hi_alloc && e->action == SD_ACT_ALLOC && live >= hi)) {
                hi = live;
                hi_at = i;
                hi_alloc = e->action == SD_ACT_ALLOC;
            }
            if (live < lo) lo = live;
        }
        const sd_trace_entry *he = &dev->trace[hi_at];
        json_t *pt = json_array();
        json_array_append_new(pt, u64(start));
        json_array_append_new(pt, he->has_time ? json_integer(he->time_us) : json_null());
        json_array_append_new(pt, json_integer(hi));
        json_array_append_new(pt, json_integer(lo));
        json_array_append_new(pt, hi_alloc ? site_index(sites, index, site_of_stack(in, si, he->stack))
                                           : json_null());
        json_array_append_new(points, pt);
    }
    const sd_trace_entry *pe = &dev->trace[pd->peak_entry];
    json_t *pk = json_object();
    json_object_set_new(pk, "entry", u64(pd->peak_entry));
    json_object_set_new(pk, "time_us", pe->has_time ? json_integer(pe->time_us) : json_null());
    json_object_set_new(pk, "bytes", u64(pd->peak_bytes));
    json_object_set_new(pk, "action", json_string(sd_trace_action_name((sd_trace_action)pe->action)));
    json_object_set_new(pk, "site", site_index(sites, index, site_of_stack(in, si, pe->stack)));
    json_object_set_new(pk, "phase", sdp_peak_phase_json(pd));
    json_object_set_new(pk, "step", sdp_peak_step_json(pd));
    json_object_set_new(o, "device", json_integer(dev->device));
    json_object_set_new(o, "entries", u64(n));
    json_object_set_new(o, "entries_per_point", u64(per));
    json_object_set_new(o, "start_bytes", u64(pd->start_bytes));
    json_object_set_new(o, "end_bytes", json_integer(live));
    json_object_set_new(o, "peak", pk);
    json_object_set_new(o, "points", points);
    json_object_set_new(o, "sites", sites);
    json_decref(index);
    return o;
}

static json_t *timelines_json(const sd_report_input *in, size_t si)
{
    json_t *devs = json_array();
    for (size_t d = 0; d < sd_snapshot_device_count(in->snaps[si]); d++) {
        json_t *t = timeline_device(in, si, d);
        if (t) json_array_append_new(devs, t);
    }
    return devs;
}

/* ---- reserved over time, recorded and replayed under other settings (issue 20) ---- */

static json_t *reserved_points(const sd_replay_point *pts, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *pt = json_array();
        json_array_append_new(pt, u64(pts[i].entry));
        json_array_append_new(pt, u64(pts[i].reserved_bytes));
        json_array_append_new(a, pt);
    }
    return a;
}

/* Per device with a trace: the recorded reserved bytes over the trace and the replay's under
 * the recorded settings and the caller's (report_data.h; replay.h's bounded timelines: [last
 * entry of a bucket, highest reserved in it]), each with its peak as `snapdiff replay
 * --json` gives it. An empty array without a replay. */
static json_t *reserved_timelines_json(const sd_replay *r)
{
    json_t *devs = json_array();
    if (!r) return devs;
    for (size_t i = 0; i < sd_replay_device_count(r); i++) {
        const sd_replay_device *d = sd_replay_device_at(r, i);
        json_t *o = json_object(), *cs = json_array();
        json_object_set_new(o, "device", json_integer(d->device));
        json_object_set_new(o, "entries", u64(d->entries));
        json_object_set_new(o, "recorded_peak_reserved_bytes", u64(d->recorded_peak_reserved_bytes));
        json_object_set_new(o, "trusted", json_boolean(d->trusted));
        json_object_set_new(o, "untrusted_why",
                            d->untrusted_why ? json_string(d->untrusted_why) : json_null());
        json_object_set_new(o, "recorded", reserved_points(d->recorded_timeline,
                                                           d->n_recorded_timeline));
        for (size_t k = 0; k < d->n_configs; k++) {
            const sd_replay_config *c = &d->configs[k];
            json_t *co = json_object();
            json_object_set_new(co, "alloc_conf", json_string(c->alloc_conf));
            json_object_set_new(co, "peak_reserved_bytes", u64(c->peak_reserved_bytes));
            json_object_set_new(co, "ooms", u64(c->n_ooms));
            json_object_set_new(co, "points", reserved_points(c->timeline, c->n_timeline));
            json_array_append_new(cs, co);
        }
        json_object_set_new(o, "configs", cs);
        json_array_append_new(devs, o);
    }
    return devs;
}

/* The site of each oom entry of each device ({"trace index": "path:line name"}), so that
 * the page can tie the frag analysis' oom events to their lines; at most 256 a device. */
static json_t *oom_sites_json(const sd_report_input *in, size_t si)
{
    const sd_snapshot *s = in->snaps[si];
    json_t *devs = json_array();
    for (size_t d = 0; d < sd_snapshot_device_count(s); d++) {
        const sd_cuda_device *dev = sd_snapshot_device(s, d);
        json_t *o = json_object();
        size_t kept = 0;
        for (size_t i = dev->n_trace; i-- > 0 && kept < 256;) {
            if (dev->trace[i].action != SD_ACT_OOM) continue;
            json_t *t = site_of_stack(in, si, dev->trace[i].stack);
            if (!t) continue;
            char idx[24];
            snprintf(idx, sizeof idx, "%zu", i);
            json_object_set_new(o, idx, t);
            kept++;
        }
        json_array_append_new(devs, o);
    }
    return devs;
}

/* ---- N files: per-group bytes over the files ---- */

/* Groups that grew from the first file to the last (the most first), then the largest in
 * any file, SDP_REPORT_MAX_SERIES in all. `growing`: the profile's grew_every_side. */
static json_t *series_json(const sd_profile *p)
{
    size_t nk = sd_profile_key_count(p), ns = sd_profile_side_count(p);
    ranked *by_growth = malloc((nk ? nk : 1) * sizeof *by_growth);
    ranked *by_size = malloc((nk ? nk : 1) * sizeof *by_size);
    bool *taken = calloc(nk ? nk : 1, sizeof *taken);
    json_t *o = json_object(), *groups = json_array(), *totals = json_array();
    if (!by_growth || !by_size || !taken) goto done;
    size_t ng = 0;
    for (size_t i = 0; i < nk; i++) {
        const sd_profile_key *k = sd_profile_key_at(p, i);
        uint64_t first = k->sides[0].bytes, last = k->sides[ns - 1].bytes, max = 0;
        for (size_t s = 0; s < ns; s++)
            if (k->sides[s].bytes > max) max = k->sides[s].bytes;
        if (last > first) by_growth[ng++] = (ranked){i, last - first};
        by_size[i] = (ranked){i, max};
    }
    qsort(by_growth, ng, sizeof *by_growth, ranked_desc);
    qsort(by_size, nk, sizeof *by_size, ranked_desc);
    size_t picked = 0;
    for (int pass = 0; pass < 2; pass++) {
        ranked *r = pass == 0 ? by_growth : by_size;
        size_t n = pass == 0 ? ng : nk;
        size_t limit = pass == 0 ? SDP_REPORT_MAX_SERIES / 2 : SDP_REPORT_MAX_SERIES;
        for (size_t j = 0; j < n && picked < limit; j++) {
            if (taken[r[j].index] || r[j].value == 0) continue;
            taken[r[j].index] = true;
            picked++;
            const sd_profile_key *k = sd_profile_key_at(p, r[j].index);
            json_t *g = json_object(), *bytes = json_array();
            for (size_t s = 0; s < ns; s++) json_array_append_new(bytes, u64(k->sides[s].bytes));
            json_object_set_new(g, "key", key_label(p, k));
            json_object_set_new(g, "bytes", bytes);
            json_object_set_new(g, "delta_bytes",
                                json_integer((json_int_t)k->sides[ns - 1].bytes -
                                             (json_int_t)k->sides[0].bytes));
            json_object_set_new(g, "growing", json_boolean(k->grew_every_side));
            json_array_append_new(groups, g);
        }
    }
    for (size_t s = 0; s < ns; s++) json_array_append_new(totals, u64(sd_profile_total(p, s)->bytes));
    json_object_set_new(o, "groups_total", u64(nk));
    json_object_set_new(o, "growing_total", u64(ng));
done:
    json_object_set_new(o, "groups", groups);
    json_object_set_new(o, "total_bytes", totals);
    free(by_growth);
    free(by_size);
    free(taken);
    return o;
}

static json_t *limits_json(void)
{
    json_t *o = json_object();
    json_object_set_new(o, "sites", u64(SDP_REPORT_MAX_SITES));
    json_object_set_new(o, "stacks", u64(SDP_REPORT_MAX_STACKS));
    json_object_set_new(o, "depth", u64(SDP_REPORT_MAX_DEPTH));
    json_object_set_new(o, "points", u64(SDP_REPORT_MAX_POINTS));
    json_object_set_new(o, "series", u64(SDP_REPORT_MAX_SERIES));
    return o;
}

/* Per rank, per device: the peak (peak.h, the one definition), null without a trace. */
static json_t *rank_peaks_json(const sd_report_input *in)
{
    json_t *ranks = json_array();
    for (size_t i = 0; i < in->n; i++) {
        json_t *devs = json_array();
        const sd_peak *pk = sd_report_data_peak(in->data, i);
        for (size_t d = 0; pk && d < sd_snapshot_device_count(in->snaps[i]); d++) {
            const sd_peak_device *pd = sd_peak_device_at(pk, d);
            json_t *o = json_object();
            json_object_set_new(o, "device", json_integer(pd->device));
            json_object_set_new(o, "allocated_bytes", u64(pd->allocated_bytes));
            json_object_set_new(o, "peak_bytes", pd->has_peak ? u64(pd->peak_bytes) : json_null());
            json_object_set_new(o, "entry", pd->has_peak ? u64(pd->peak_entry) : json_null());
            json_object_set_new(o, "time_us", pd->has_peak && pd->peak_has_time
                                                  ? json_integer(pd->peak_time_us) : json_null());
            json_array_append_new(devs, o);
        }
        json_array_append_new(ranks, devs);
    }
    return ranks;
}

static json_t *files_json(const sd_report_input *in)
{
    json_t *files = json_array();
    for (size_t i = 0; i < in->n; i++) {
        json_t *f = json_string(sd_snapshot_source(in->snaps[i]));
        json_array_append_new(files, f ? f : json_string("?"));
    }
    return files;
}

/* The snapdiff.report/1 document of the ranks of one job: the page draws the figures of
 * sd-ranks (snapdiff.series-ranks/1) and sd-frag, with each rank's peak from here. */
static json_t *ranks_report_json(const sd_report_input *in)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_string("snapdiff.report/1"));
    json_object_set_new(o, "mode", json_string("ranks"));
    json_object_set_new(o, "files", files_json(in));
    json_object_set_new(o, "peaks", rank_peaks_json(in));
    return o;
}

/* The snapdiff.report/1 document. */
static json_t *report_json(const sd_report_input *in)
{
    const char *mode = in->diff ? "diff" : in->n == 1 ? "single" : "series";
    const sd_profile *p = in->diff ? sd_diff_profile(in->diff) : in->profile;
    const sd_attrib *a = sd_profile_attrib(p);
    json_t *o = json_object(), *files = json_array();
    json_object_set_new(o, "schema", json_string("snapdiff.report/1"));
    json_object_set_new(o, "mode", json_string(mode));
    for (size_t i = 0; i < in->n; i++) {
        json_t *f = json_string(sd_snapshot_source(in->snaps[i]));
        json_array_append_new(files, f ? f : json_string("?"));
    }
    json_object_set_new(o, "files", files);
    json_object_set_new(o, "group_by", json_string(sd_group_by_name(sd_attrib_group_by(a))));
    json_object_set_new(o, "limits", limits_json());
    size_t last = sd_profile_side_count(p) - 1;
    if (!in->diff && in->n == 1) json_object_set_new(o, "sites", sites_json(p, last));
    if (in->n > 2) json_object_set_new(o, "series", series_json(p));
    size_t n_stacks;
    const sd_report_stack *stacks = sd_report_data_stacks(in->data, &n_stacks);
    json_object_set_new(o, "tree", tree_json(stacks, n_stacks,
                                             in->diff || in->n > 2 ? "growth" : "live"));
    json_t *maps = json_array(), *timelines = json_array(), *ooms = json_array();
    for (size_t i = 0; i < in->n; i++) {
        json_array_append_new(maps, segment_maps_json(in->frags[i]));
        json_array_append_new(timelines, timelines_json(in, i));
        json_array_append_new(ooms, oom_sites_json(in, i));
    }
    json_object_set_new(o, "segment_maps", maps);
    json_object_set_new(o, "timelines", timelines);
    if (!in->diff && in->n == 1 && sd_snapshot_device_count(in->snaps[0])) {
        json_t *rt = reserved_timelines_json(sd_report_data_replay(in->data));
        if (json_array_size(rt)) json_object_set_new(o, "reserved_timelines", rt);
        else json_decref(rt);
    }
    json_object_set_new(o, "oom_sites", ooms);
    return o;
}

/* ---- training logs: the points to draw each curve (curve.h's bounded plot) ---- */

static json_t *real_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* The snapdiff.report/1 document of training logs: per series of sd-curve (same order),
 * the curve as [x, lowest, highest] per bucket and the lower edge's floors as [x, floor];
 * every other figure (baseline, slope, verdict, capacity, steps left) is sd-curve's. */
static json_t *curve_report_json(const sd_curve *c, sd_status *st)
{
    json_t *o = json_object(), *files = json_array(), *series = json_array();
    json_object_set_new(o, "schema", json_string("snapdiff.report/1"));
    json_object_set_new(o, "mode", json_string("curve"));
    for (size_t i = 0; i < sd_curve_file_count(c); i++) {
        json_t *f = json_string(sd_curve_file_at(c, i)->path);
        json_array_append_new(files, f ? f : json_string("?"));
    }
    json_object_set_new(o, "files", files);
    for (size_t i = 0; i < sd_curve_series_count(c); i++) {
        sd_curve_plot p;
        json_t *so = json_object(), *pts = json_array(), *floors = json_array();
        if (sd_curve_series_plot(c, i, &p)) {
            for (size_t k = 0; k < p.n_points; k++) {
                json_t *a = json_array();
                json_array_append_new(a, real_or_null(p.x[k]));
                json_array_append_new(a, real_or_null(p.lo[k]));
                json_array_append_new(a, real_or_null(p.hi[k]));
                json_array_append_new(pts, a);
            }
            for (size_t k = 0; k < p.n_floors; k++) {
                json_t *a = json_array();
                json_array_append_new(a, real_or_null(p.floor_x[k]));
                json_array_append_new(a, real_or_null(p.floor_bytes[k]));
                json_array_append_new(floors, a);
            }
        }
        json_object_set_new(so, "points", pts);
        json_object_set_new(so, "floors", floors);
        json_array_append_new(series, so);
    }
    json_object_set_new(o, "series", series);
    json_t *lim = json_object();
    json_object_set_new(lim, "points", u64(SD_CURVE_PLOT_POINTS));
    json_object_set_new(o, "limits", lim);
    *st = SD_OK;
    return o;
}

/* ---- the page ----------------------------------------------------------------------- */

static sd_status write_data(FILE *out, const sd_report_input *in)
{
    sd_status st = SD_OK;
    json_t *doc;
    if (curve_of(in)) {
        st = embed_doc(out, "sd-curve", write_curve, in);
        doc = st == SD_OK ? curve_report_json(curve_of(in), &st) : NULL;
    } else {
        st = embed_doc(out, "sd-stats", write_stats, in);
        if (st == SD_OK) st = embed_doc(out, "sd-frag", write_frag, in);
        if (st == SD_OK && in->diff) st = embed_doc(out, "sd-diff", write_diff, in);
        if (st == SD_OK && is_ranks(in)) st = embed_doc(out, "sd-ranks", write_ranks, in);
        if (st == SD_OK && job_of(in)) st = embed_doc(out, "sd-job", write_job, in);
        if (st != SD_OK) return st;
        doc = is_ranks(in) ? ranks_report_json(in) : report_json(in);
    }
    if (!doc) return st == SD_OK ? SD_ENOMEM : st;
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (!text) return SD_ENOMEM;
    fputs("<script type=\"application/json\" id=\"sd-report\">", out);
    put_script_json(out, text, strlen(text));
    fputs("</script>\n", out);
    free(text);
    return SD_OK;
}

static void write_title(FILE *out, const sd_report_input *in)
{
    fputs("snapdiff report: ", out);
    if (is_ranks(in)) fprintf(out, "%zu ranks: ", in->n);
    for (size_t i = 0; i < in->n && i < 3; i++) {
        if (i) fputs(in->diff ? " vs " : ", ", out);
        const char *src = curve_of(in) ? sd_curve_file_at(curve_of(in), i)->path
                                    : sd_snapshot_source(in->snaps[i]);
        const char *slash = strrchr(src, '/');
        put_html(out, slash ? slash + 1 : src);
    }
    if (in->n > 3) fprintf(out, " and %zu more", in->n - 3);
}

static bool input_fits(const sd_report_input *in)
{
    if (curve_of(in)) return in->n == sd_curve_file_count(curve_of(in));
    if (!in->frags || !in->snaps || in->version < 3 || !in->data ||
        sd_report_data_snapshot_count(in->data) != in->n)
        return false;
    for (size_t i = 0; i < in->n; i++)   /* the data are these snapshots' */
        if (sd_peak_snapshot(sd_report_data_peak(in->data, i)) != in->snaps[i]) return false;
    if (is_ranks(in)) return !in->diff && in->n >= 2;
    size_t n_stacks;   /* the icicle is the data's (made with the profile) */
    return (in->diff || in->profile) && (!in->diff || in->n == 2) &&
           sd_report_data_stacks(in->data, &n_stacks);
}

sd_status sd_render_report(FILE *out, const sd_report_input *in, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(in, SD_REPORT_INPUT_VERSION, "sd_report_input", err))
        return SD_EUSAGE;
    if (!in || in->n == 0 || !input_fits(in))
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "report: bad arguments");
    /* The ranks and the curves are drawn by their own script (report_views.js), so that
     * the pages of one, two and N snapshots stay what they were. */
    bool views = is_ranks(in) || curve_of(in);
    const char *t = (const char *)sdp_report_html;
    size_t n = sizeof sdp_report_html, start = 0;
    sd_status st = SD_OK;
    for (size_t i = 0; i + 1 < n && st == SD_OK; i++) {
        if (t[i] != '@' || t[i + 1] != '@') continue;
        const char *name = t + i + 2, *close = memchr(name, '@', n - (i + 2));
        if (!close || close + 1 >= t + n || close[1] != '@') continue;
        size_t len = (size_t)(close - name);
        fwrite(t + start, 1, i - start, out);
        if (len == 5 && memcmp(name, "STYLE", 5) == 0)
            fwrite(sdp_report_css, 1, sizeof sdp_report_css, out);
        else if (len == 6 && memcmp(name, "SCRIPT", 6) == 0 && views)
            fwrite(sdp_report_views, 1, sizeof sdp_report_views, out);
        else if (len == 6 && memcmp(name, "SCRIPT", 6) == 0)
            fwrite(sdp_report_js, 1, sizeof sdp_report_js, out);
        else if (len == 4 && memcmp(name, "DATA", 4) == 0)
            st = write_data(out, in);
        else if (len == 5 && memcmp(name, "TITLE", 5) == 0)
            write_title(out, in);
        else
            fwrite(t + i, 1, len + 4, out);
        i += len + 3;
        start = i + 1;
    }
    if (st == SD_OK) fwrite(t + start, 1, n - start, out);
    if (st == SD_OK && ferror(out)) st = SD_EIO;
    if (st == SD_ENOMEM && err && !err->text[0]) sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory writing the report");
    return st;
}
