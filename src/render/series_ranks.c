/* series_ranks.c - the ranks of one job side by side (render_series.h): a series over
 * rank files would fit trends to what is no time axis. JSON is built with jansson. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "render/json_frame.h"
#include "snapdiff/render_ranks.h"
#include "snapdiff/render_series.h"

sd_status sd_render_series_ranks_text(FILE *out, const char *const *sources,
                                      const char *const *labels, const sd_stats *totals,
                                      size_t n, const sd_rank_spread *sp, bool color)
{
    return sd_render_series_ranks_oom_text(out, sources, labels, totals, NULL, n, sp, color);
}

/* "Out of memory: 2 of 4 ranks", then per rank that died its last oom entry. */
static void ranks_ooms_text(FILE *out, const char *const *labels, const sd_groups_oom *ooms,
                            size_t n, bool color)
{
    size_t died = 0;
    for (size_t i = 0; ooms && i < n; i++) died += ooms[i].count > 0;
    if (!died) return;
    fprintf(out, "%sOut of memory%s: %zu of %zu rank%s recorded an oom entry\n",
            sdp_ansi(color, SDP_RED), sdp_ansi(color, SDP_RESET), died, n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++) {
        const sd_groups_oom *o = &ooms[i];
        if (!o->count) continue;
        fprintf(out, "  %-10s the last at entry #%zu on device %" PRId64 ": request %s with %s "
                "free on the device (%" PRIu64 " oom entr%s; snapdiff frag FILE for the "
                "arithmetic)\n", labels[i], o->entry, o->device, sdp_fmt_bytes(o->request_bytes).s,
                sdp_fmt_bytes(o->device_free_bytes).s, o->count, o->count == 1 ? "y" : "ies");
    }
    fprintf(out, "\n");
}

sd_status sd_render_series_ranks_oom_text(FILE *out, const char *const *sources,
                                          const char *const *labels, const sd_stats *totals,
                                          const sd_groups_oom *ooms, size_t n,
                                          const sd_rank_spread *sp, bool color)
{
    ranks_ooms_text(out, labels, ooms, n, color);
    fprintf(out, "Ranks of one job, side by side: %zu snapshots whose names differ only by a "
            "rank number (--as-series reads them as a time series)\n", n);
    fprintf(out, "  %-10s %12s %12s %14s  %s\n", "rank", "allocated", "reserved", "vs median",
            "file");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %-10s %12s %12s %14s  %s\n", labels[i],
                sdp_fmt_bytes(totals[i].allocated_bytes).s,
                sdp_fmt_bytes(totals[i].reserved_bytes).s,
                sdp_fmt_delta(sdp_sdelta(totals[i].allocated_bytes, sp->allocated_median)).s,
                sources[i]);
    fprintf(out, "\n");
    sd_render_spread_text(out, sp, labels, "ranks", color);
    if (sp->furthest == SD_RANK_NONE) fprintf(out, "  no outlier: every rank allocates the same\n");
    return ferror(out) ? SD_EIO : SD_OK;
}

/* A whole number, or null where the figure is absent (negative). */
static json_t *int_or_null(int64_t v) { return v >= 0 ? json_integer(v) : json_null(); }

/* Writes a document as every JSON view does; open_end leaves its object open after the
 * last key and a comma, for the caller to add one more. */
static sd_status dump_doc(FILE *out, json_t *doc, bool open_end)
{
    size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER;
    if (!open_end) return sdp_json_write(out, doc, flags);
    char *text = doc ? json_dumps(doc, flags) : NULL;
    json_decref(doc);
    if (!text) return SD_ENOMEM;
    size_t len = strlen(text);
    if (len >= 2) fprintf(out, "%.*s,\n", (int)(len - 2), text);   /* less "\n}" */
    else fprintf(out, "%s\n", text);
    free(text);
    return ferror(out) ? SD_EIO : SD_OK;
}

/* A rank number, or the source's name when it carries none. */
static json_t *rank_json(const char *source)
{
    int64_t r = sd_rank_of_name(source);
    return r >= 0 ? json_integer(r) : sdp_json_text(source);
}

sd_status sd_render_series_ranks_json(FILE *out, const char *const *sources,
                                      const sd_stats *totals, size_t n,
                                      const sd_rank_spread *sp)
{
    return sd_render_series_ranks_oom_json(out, sources, totals, NULL, n, sp);
}

/* null, or the rank's last oom entry. */
static json_t *oom_json(const sd_groups_oom *o)
{
    if (!o || !o->count) return json_null();
    json_t *j = json_object();
    json_object_set_new(j, "count", json_integer((json_int_t)o->count));
    json_object_set_new(j, "device", json_integer(o->device));
    json_object_set_new(j, "entry", json_integer((json_int_t)o->entry));
    json_object_set_new(j, "request_bytes", json_integer((json_int_t)o->request_bytes));
    json_object_set_new(j, "device_free_bytes", json_integer((json_int_t)o->device_free_bytes));
    json_object_set_new(j, "time_us", o->has_time ? json_integer(o->time_us) : json_null());
    return j;
}

static json_t *rank_row_json(const char *source, const sd_stats *t, const sd_groups_oom *oom,
                             const sd_rank_spread *sp)
{
    json_t *j = json_object();
    json_object_set_new(j, "rank", int_or_null(sd_rank_of_name(source)));
    json_object_set_new(j, "source", sdp_json_text(source));
    json_object_set_new(j, "allocated_bytes", json_integer((json_int_t)t->allocated_bytes));
    json_object_set_new(j, "reserved_bytes", json_integer((json_int_t)t->reserved_bytes));
    json_object_set_new(j, "allocated_vs_median",
                        json_integer((json_int_t)(t->allocated_bytes - sp->allocated_median)));
    json_object_set_new(j, "oom", oom_json(oom));
    return j;
}

static json_t *spread_json(const char *const *sources, const sd_rank_spread *sp)
{
    json_t *j = json_object();
    json_object_set_new(j, "allocated_min", json_integer((json_int_t)sp->allocated_min));
    json_object_set_new(j, "allocated_median", json_integer((json_int_t)sp->allocated_median));
    json_object_set_new(j, "allocated_max", json_integer((json_int_t)sp->allocated_max));
    json_object_set_new(j, "reserved_min", json_integer((json_int_t)sp->reserved_min));
    json_object_set_new(j, "reserved_median", json_integer((json_int_t)sp->reserved_median));
    json_object_set_new(j, "reserved_max", json_integer((json_int_t)sp->reserved_max));
    json_object_set_new(j, "furthest", sp->furthest == SD_RANK_NONE
                                           ? json_null() : rank_json(sources[sp->furthest]));
    json_object_set_new(j, "furthest_delta", json_integer((json_int_t)sp->furthest_delta));
    return j;
}

sd_status sd_render_series_ranks_oom_json(FILE *out, const char *const *sources,
                                          const sd_stats *totals, const sd_groups_oom *ooms,
                                          size_t n, const sd_rank_spread *sp)
{
    size_t died = 0;
    for (size_t i = 0; ooms && i < n; i++) died += ooms[i].count > 0;
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("snapdiff.series-ranks/1"));
    json_object_set_new(doc, "ranks_out_of_memory", json_integer((json_int_t)died));
    json_t *rows = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(rows, rank_row_json(sources[i], &totals[i], ooms ? &ooms[i] : NULL, sp));
    json_object_set_new(doc, "ranks", rows);
    json_object_set_new(doc, "spread", spread_json(sources, sp));
    return dump_doc(out, doc, false);
}

/* ---- a job's folder by step and rank ---- */

static const char *layout_of(const sd_job_entry *e, size_t n)
{
    const char *name = n ? sd_job_layout_name(e[0].name.layout) : NULL;
    for (size_t i = 1; i < n; i++)
        if (e[i].name.layout != e[0].name.layout) return "several layouts";
    return name ? name : "?";
}

static void put_step(FILE *out, int64_t step, int width)
{
    if (step >= 0) fprintf(out, "%*" PRId64, width, step);
    else fprintf(out, "%*s", width, "-");
}

/* Steps named (OOM dumps aside: a dump after step N is no step of its own), and dumps. */
static size_t count_steps(const sd_job_entry *e, size_t n, size_t *n_oom)
{
    size_t steps = 0;
    *n_oom = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].name.oom) {
            (*n_oom)++;
            continue;
        }
        bool seen = e[i].name.step < 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = !e[k].name.oom && e[k].name.step == e[i].name.step;
        steps += !seen;
    }
    return steps;
}

sd_status sd_render_series_job_text(FILE *out, const sd_job_entry *e, size_t n,
                                    const sd_job_rank *ranks, size_t n_ranks, size_t grown,
                                    bool color)
{
    (void)color;
    size_t n_oom;
    size_t n_steps = count_steps(e, n, &n_oom);
    fprintf(out, "Job folder (%s names): %zu %s named, %zu %s, %zu OOM %s (--as-series "
            "reads the files as one time series)\n", layout_of(e, n), n_steps,
            n_steps == 1 ? "step" : "steps", n_ranks, n_ranks == 1 ? "rank" : "ranks", n_oom,
            n_oom == 1 ? "dump" : "dumps");
    fprintf(out, "\nRanks per step\n  %8s  %s\n", "step", "ranks");
    for (size_t i = 0; i < n;) {
        size_t k = i;
        fprintf(out, "  ");
        put_step(out, e[i].name.step, 8);
        fprintf(out, "  ");
        for (; k < n && e[k].name.step == e[i].name.step && e[k].name.oom == e[i].name.oom; k++)
            fprintf(out, "%s%" PRId64, k > i ? " " : "", e[k].name.rank);
        fprintf(out, "%s\n", e[i].name.oom ? "  (OOM dumps)" : "");
        i = k;
    }
    fprintf(out, "\nSteps per rank (allocated, first step to last; OOM dumps left out)\n");
    fprintf(out, "  %-6s %6s %10s %10s %12s %12s %12s %4s\n", "rank", "steps", "from step", "to step",
            "allocated", "then", "change", "OOM");
    for (size_t i = 0; i < n_ranks; i++) {
        const sd_job_rank *r = &ranks[i];
        fprintf(out, "  %-6" PRId64 " %6zu ", r->rank, r->n_steps);
        put_step(out, r->first_step, 10);
        fputc(' ', out);
        put_step(out, r->last_step, 10);
        fprintf(out, " %12s %12s %12s %4zu%s\n",
                r->n_steps ? sdp_fmt_bytes(r->first_allocated).s : "-",
                r->n_steps ? sdp_fmt_bytes(r->last_allocated).s : "-",
                r->n_steps > 1 ? sdp_fmt_delta(r->change).s : "-", r->n_oom,
                i == grown ? "  <- grew most" : "");
    }
    if (grown == SD_RANK_NONE) fprintf(out, "  no rank's allocated grew from its first step to its last\n");
    if (n_oom) {
        fprintf(out, "\nOOM dumps (taken when the allocator failed: what was live then)\n");
        for (size_t i = 0; i < n; i++) {
            if (!e[i].name.oom) continue;
            fprintf(out, "  rank %-4" PRId64, e[i].name.rank);
            if (e[i].name.step >= 0) fprintf(out, " after step %-8" PRId64, e[i].name.step);
            else fprintf(out, " %-19s", " (step not named)");
            fprintf(out, " allocated %10s  reserved %10s  %s\n",
                    sdp_fmt_bytes(e[i].total.allocated_bytes).s,
                    sdp_fmt_bytes(e[i].total.reserved_bytes).s, e[i].source);
        }
    }
    fprintf(out, "\nSnapshots\n  %8s %6s %12s %12s  %s\n", "step", "rank", "allocated",
            "reserved", "file");
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "  ");
        put_step(out, e[i].name.step, 8);
        fprintf(out, " %6" PRId64 " %12s %12s  %s%s\n", e[i].name.rank,
                sdp_fmt_bytes(e[i].total.allocated_bytes).s,
                sdp_fmt_bytes(e[i].total.reserved_bytes).s, e[i].source,
                e[i].name.oom ? "  (OOM dump)" : "");
    }
    return ferror(out) ? SD_EIO : SD_OK;
}

static json_t *snapshot_json(const sd_job_entry *e)
{
    json_t *j = json_object();
    json_object_set_new(j, "step", int_or_null(e->name.step));
    json_object_set_new(j, "rank", int_or_null(e->name.rank));
    json_object_set_new(j, "oom", json_boolean(e->name.oom));
    json_object_set_new(j, "source", sdp_json_text(e->source));
    json_object_set_new(j, "allocated_bytes", json_integer((json_int_t)e->total.allocated_bytes));
    json_object_set_new(j, "reserved_bytes", json_integer((json_int_t)e->total.reserved_bytes));
    return j;
}

static json_t *job_rank_json(const sd_job_rank *r)
{
    json_t *j = json_object();
    json_object_set_new(j, "rank", int_or_null(r->rank));
    json_object_set_new(j, "steps", json_integer((json_int_t)r->n_steps));
    json_object_set_new(j, "oom_dumps", json_integer((json_int_t)r->n_oom));
    json_object_set_new(j, "first_step", int_or_null(r->first_step));
    json_object_set_new(j, "last_step", int_or_null(r->last_step));
    json_object_set_new(j, "first_allocated_bytes",
                        r->n_steps ? json_integer((json_int_t)r->first_allocated) : json_null());
    json_object_set_new(j, "last_allocated_bytes",
                        r->n_steps ? json_integer((json_int_t)r->last_allocated) : json_null());
    json_object_set_new(j, "change_bytes", r->n_steps > 1 ? json_integer(r->change) : json_null());
    return j;
}

sd_status sd_render_series_job_json(FILE *out, const sd_job_entry *e, size_t n,
                                    const sd_job_rank *ranks, size_t n_ranks, size_t grown,
                                    bool open_end)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("snapdiff.series-job/1"));
    json_object_set_new(doc, "layout", sdp_json_text(layout_of(e, n)));
    json_t *snaps = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(snaps, snapshot_json(&e[i]));
    json_object_set_new(doc, "snapshots", snaps);
    json_t *rows = json_array();
    for (size_t i = 0; i < n_ranks; i++) json_array_append_new(rows, job_rank_json(&ranks[i]));
    json_object_set_new(doc, "ranks", rows);
    json_object_set_new(doc, "grew_most", int_or_null(grown == SD_RANK_NONE ? -1 : ranks[grown].rank));
    return dump_doc(out, doc, open_end);
}
