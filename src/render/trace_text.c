/* trace_text.c - the replay for people: per device a header (the oom first), the warnings,
 * the timeline by phase of a training step, the table of groups alive at the end (largest
 * first), then the marker phases. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render/format.h"
#include "render/peak_words.h"
#include "render/settings.h"
#include "render/top_render.h"
#include "render/trace_render.h"

enum { LABEL_MAX = 110, ROWS_SHOWN_MIN = 20 };

typedef struct text_ctx {
    FILE *out;
    bool color;
    size_t top;
    const sd_trace *trace;
    const sd_frag *ooms;      /* NULL: none to show */
} text_ctx;

static const char *c_on(const text_ctx *r, sdp_colour c) { return sdp_ansi(r->color, c); }

/* The site of a stack as every view names it (attrib.h). */
static void site_label(const text_ctx *r, uint32_t stack, char *buf, size_t size)
{
    const sd_snapshot *s = sd_trace_snapshot(r->trace);
    sd_site site;
    sd_attrib_site_of_stack(sd_trace_attrib(r->trace), s, stack, &site);
    sd_site_text(s, stack, &site, buf, size);
}

/* A group as every view names it (attrib.h); callers past the column are left out
 * (sdp_fit_key), the site is never cut. */
static void group_label(const text_ctx *r, const sd_trace_group *g, char *buf, size_t size)
{
    char label[4096];
    sd_group_label(sd_trace_attrib(r->trace), sd_trace_snapshot(r->trace), g->rep_stack, NULL,
                   g->key, false, label, sizeof label);
    sdp_fit_key(label, LABEL_MAX, buf, size);
}

static void print_warning(const text_ctx *r, const sd_trace_warning *w)
{
    fprintf(r->out, "  %swarning%s: ", c_on(r, SDP_YELLOW), c_on(r, SDP_RESET));
    switch (w->code) {
    case SD_TRACE_OVERFLOWED:
        fprintf(r->out, "the ring buffer overflowed (allocator_settings.trace_alloc_overflowed):"
                " older entries were dropped, the window starts mid-run\n");
        break;
    case SD_TRACE_STARTS_MID_RUN:
        fprintf(r->out, "the window starts mid-run: %s free%s (%s) of blocks allocated before"
                " it; figures count only what was allocated inside the window\n",
                sdp_fmt_count(w->count).s, w->count == 1 ? "" : "s", sdp_fmt_bytes(w->bytes).s);
        break;
    case SD_TRACE_UNRECORDED_FREE:
        fprintf(r->out, "%s alloc%s at an address whose block was never freed (%s): the trace"
                " lost those frees; counted as freed\n", sdp_fmt_count(w->count).s,
                w->count == 1 ? "" : "s", sdp_fmt_bytes(w->bytes).s);
        break;
    case SD_TRACE_FREES_MISSING:
        fprintf(r->out, "%s block%s (%s) the trace leaves alive %s free in the snapshot: %s "
                "not recorded (skip_actions, which torch 2.11 writes down nowhere, or lost); "
                "what was never freed is not known from this trace\n",
                sdp_fmt_count(w->count).s, w->count == 1 ? "" : "s", sdp_fmt_bytes(w->bytes).s,
                w->count == 1 ? "is" : "are", w->count == 1 ? "its free was" : "their frees were");
        break;
    case SD_TRACE_NO_TIMES:
        fprintf(r->out, "the entries carry no time_us (torch < 2.2): no time span or rates\n");
        break;
    default:
        fprintf(r->out, "%s\n", sd_trace_warning_name(w->code));
    }
}

static void print_header(const text_ctx *r, const sd_trace_device *d)
{
    fprintf(r->out, "%sdevice %" PRId64 "%s: %s entr%s", c_on(r, SDP_BOLD), d->device,
            c_on(r, SDP_RESET), sdp_fmt_count(d->n_entries).s, d->n_entries == 1 ? "y" : "ies");
    if (d->n_entries != d->total_entries)
        fprintf(r->out, " (#%zu to #%zu of %s)", d->first_entry,
                d->first_entry + d->n_entries - (d->n_entries > 0),
                sdp_fmt_count(d->total_entries).s);
    if (d->has_span) fprintf(r->out, " over %s", sdp_fmt_duration_us(d->span_us).s);
    fprintf(r->out, "; %s alloc%s (%s), %s free%s\n", sdp_fmt_count(d->alloc_count).s,
            d->alloc_count == 1 ? "" : "s", sdp_fmt_bytes(d->alloc_bytes).s,
            sdp_fmt_count(d->free_count).s, d->free_count == 1 ? "" : "s");
    sdp_top_ooms_text(r->out, r->ooms, d->device, r->color);
    fprintf(r->out, "  %salive at the end of the window (leak candidates): %s in %s block%s%s\n",
            c_on(r, SDP_BOLD), sdp_fmt_bytes(d->alive_bytes).s, sdp_fmt_count(d->alive_count).s,
            d->alive_count == 1 ? "" : "s", c_on(r, SDP_RESET));
    if (d->has_peak) {
        char site[256];
        site_label(r, d->peak_stack, site, sizeof site);
        fprintf(r->out, "  peak live: %s at entry #%zu", sdp_fmt_bytes(d->peak_bytes).s,
                d->peak_entry);
        if (d->peak_has_time && d->has_span)
            fprintf(r->out, " (+%s)", sdp_fmt_duration_us(sdp_i64_sub_sat(d->peak_time_us, d->first_time_us)).s);
        if (d->peak_has_phase && d->peak_step)
            fprintf(r->out, " in the %s of step %u", sd_step_phase_name(d->peak_phase),
                    (unsigned)d->peak_step);
        else if (d->peak_has_phase)
            fprintf(r->out, " in the %s", sd_step_phase_name(d->peak_phase));
        fprintf(r->out, ", reached by an alloc at %s\n", site);
        if (d->peak_start_bytes || d->window_peak_bytes != d->peak_bytes)
            fprintf(r->out, "    (the peak counts what was live before: %s at the window's start;"
                            " the window's own allocations peaked at %s)\n",
                    sdp_fmt_bytes(d->peak_start_bytes).s, sdp_fmt_bytes(d->window_peak_bytes).s);
        if (d->n_peak_categories) {
            sd_peak_table cats = {.categories = d->peak_categories,
                                  .n_categories = d->n_peak_categories};
            fprintf(r->out, "  live at the peak, by category:\n");
            sdp_categories_text(r->out, &cats, "    ");
        }
    }
    if (d->has_rates)
        fprintf(r->out, "  rates: %s allocs/s, %s/s allocated, %s frees/s\n",
                sdp_fmt_count((uint64_t)(d->allocs_per_s + 0.5)).s,
                sdp_fmt_bytes((uint64_t)d->alloc_bytes_per_s).s,
                sdp_fmt_count((uint64_t)(d->frees_per_s + 0.5)).s);
    for (size_t i = 0; i < d->n_warnings; i++) print_warning(r, &d->warnings[i]);
}

/* By the pool_id the entries record; only when one names a private pool (the default
 * pool alone says nothing the header does not). */
static void print_pools(const text_ctx *r, const sd_trace_device *d)
{
    bool private = false;
    for (size_t i = 0; i < d->n_pools; i++)
        private |= d->pools[i].pool_id[0] || d->pools[i].pool_id[1];
    if (!private) return;
    fprintf(r->out, "\n  by pool (the entries' pool_id; private: a CUDA graph's or a MemPool's)\n");
    fprintf(r->out, "  %-22s  %7s  %6s  %11s  %11s  %11s\n", "pool", "entries", "allocs",
            "allocated", "segments", "alive");
    /* A run has a pool per captured graph or MemPool; a file naming thousands is cut as
     * the phases are. */
    size_t limit = r->top > ROWS_SHOWN_MIN ? r->top : ROWS_SHOWN_MIN;
    size_t shown = d->n_pools < limit ? d->n_pools : limit;
    for (size_t i = 0; i < shown; i++) {
        const sd_trace_pool *p = &d->pools[i];
        char name[64];
        bool priv = p->pool_id[0] || p->pool_id[1];
        snprintf(name, sizeof name, "(%" PRId64 ", %" PRId64 ")%s", p->pool_id[0], p->pool_id[1],
                 priv ? " private" : " default");
        fprintf(r->out, "  %-22s  %7s  %6s  %11s  %11s  %11s\n", name,
                sdp_fmt_count(p->entries).s, sdp_fmt_count(p->alloc_count).s,
                sdp_fmt_bytes(p->alloc_bytes).s, sdp_fmt_bytes(p->segment_bytes).s,
                sdp_fmt_bytes(p->alive_bytes).s);
    }
    if (shown < d->n_pools)
        fprintf(r->out, "  %s(%s more pools; --json lists them all)%s\n", c_on(r, SDP_DIM),
                sdp_fmt_count(d->n_pools - shown).s, c_on(r, SDP_RESET));
    if (d->no_pool_entries)
        fprintf(r->out, "  %s entr%s record%s no pool_id (in no row)\n",
                sdp_fmt_count(d->no_pool_entries).s, d->no_pool_entries == 1 ? "y" : "ies",
                d->no_pool_entries == 1 ? "s" : "");
}

static int width_of(const char *s, int w) { int n = (int)strlen(s); return n > w ? n : w; }

static void print_groups(const text_ctx *r, const sd_trace_device *d)
{
    if (!d->n_groups) {
        fprintf(r->out, "\n  no allocation in the window\n");
        return;
    }
    size_t shown = d->n_groups < r->top ? d->n_groups : r->top;
    int w_ab = 11, w_ac = 5, w_n = 6, w_b = 11, w_f = 5;
    for (size_t i = 0; i < shown; i++) {
        const sd_trace_group *g = &d->groups[i];
        w_ab = width_of(sdp_fmt_bytes(g->alive_bytes).s, w_ab);
        w_ac = width_of(sdp_fmt_count(g->alive_count).s, w_ac);
        w_n = width_of(sdp_fmt_count(g->alloc_count).s, w_n);
        w_b = width_of(sdp_fmt_bytes(g->alloc_bytes).s, w_b);
        w_f = width_of(sdp_fmt_count(g->free_count).s, w_f);
    }
    fprintf(r->out, "\n  %s group%s by %s, largest alive first\n", sdp_fmt_count(d->n_groups).s,
            d->n_groups == 1 ? "" : "s",
            sd_group_by_name(sd_attrib_group_by(sd_trace_attrib(r->trace))));
    fprintf(r->out, "  %*s  %*s  %*s  %*s  %*s  %s\n", w_ab, "alive bytes", w_ac, "alive",
            w_n, "allocs", w_b, "alloc bytes", w_f, "frees", "group");
    for (size_t i = 0; i < shown; i++) {
        const sd_trace_group *g = &d->groups[i];
        char label[4096];
        group_label(r, g, label, sizeof label);
        bool alive = g->alive_bytes > 0;
        fprintf(r->out, "  %s%*s%s  %*s  %*s  %*s  %*s  %s\n", alive ? c_on(r, SDP_RED) : "",
                w_ab, sdp_fmt_bytes(g->alive_bytes).s, alive ? c_on(r, SDP_RESET) : "", w_ac,
                sdp_fmt_count(g->alive_count).s, w_n, sdp_fmt_count(g->alloc_count).s, w_b,
                sdp_fmt_bytes(g->alloc_bytes).s, w_f, sdp_fmt_count(g->free_count).s, label);
    }
    if (shown < d->n_groups)
        fprintf(r->out, "  %s(%s more group%s; --top N shows more)%s\n", c_on(r, SDP_DIM),
                sdp_fmt_count(d->n_groups - shown).s, d->n_groups - shown == 1 ? "" : "s",
                c_on(r, SDP_RESET));
}

static void print_phases(const text_ctx *r, const sd_trace_device *d)
{
    if (d->n_phases < 2) return;
    size_t limit = r->top > ROWS_SHOWN_MIN ? r->top : ROWS_SHOWN_MIN;
    size_t shown = d->n_phases < limit ? d->n_phases : limit;
    fprintf(r->out, "\n  %sphases%s (split at snapshot and annotate entries and annotations):"
            " live-bytes growth\n", c_on(r, SDP_BOLD), c_on(r, SDP_RESET));
    fprintf(r->out, "  %5s  %-11s  %7s  %9s  %11s  %11s  %s\n", "#", "starts at", "entries",
            "duration", "growth", "live at end", "marker");
    for (size_t i = 0; i < shown; i++) {
        const sd_trace_phase *p = &d->phases[i];
        char at[24];
        snprintf(at, sizeof at, "#%zu", p->first_entry);
        fprintf(r->out, "  %5zu  %-11s  %7s  %9s  %11s  %11s  %s%s%s\n", i, at,
                sdp_fmt_count(p->n_entries).s,
                p->has_time ? sdp_fmt_duration_us(p->end_us - p->start_us).s : "-",
                sdp_fmt_delta(p->growth).s, sdp_fmt_bytes(p->live_end).s,
                sd_trace_phase_kind_name(p->kind), p->name ? " " : "", p->name ? p->name : "");
    }
    if (shown < d->n_phases)
        fprintf(r->out, "  %s(%s more phases; --json lists them all)%s\n", c_on(r, SDP_DIM),
                sdp_fmt_count(d->n_phases - shown).s, c_on(r, SDP_RESET));
}

/* The timeline by phase of a training step: one row per run of forward, backward,
 * optimizer or other entries, the peak's row marked. */
static void print_step_phases(const text_ctx *r, const sd_trace_device *d)
{
    if (d->n_step_phases < 2 && !(d->n_step_phases == 1 && d->step_phases[0].phase != SD_IN_OTHER))
        return;
    size_t limit = r->top > ROWS_SHOWN_MIN ? r->top : ROWS_SHOWN_MIN;
    size_t shown = d->n_step_phases < limit ? d->n_step_phases : limit;
    fprintf(r->out, "\n  %stimeline by phase%s (forward, backward, optimizer step; "
            "docs/categories.md): live-bytes growth\n", c_on(r, SDP_BOLD), c_on(r, SDP_RESET));
    fprintf(r->out, "  %5s  %-9s  %-11s  %7s  %9s  %11s  %11s  %11s\n", "step", "phase",
            "starts at", "entries", "duration", "allocated", "growth", "live at end");
    for (size_t i = 0; i < shown; i++) {
        const sd_trace_step_phase *p = &d->step_phases[i];
        char at[24], stp[16];
        snprintf(at, sizeof at, "#%zu", p->first_entry);
        if (p->step) snprintf(stp, sizeof stp, "%u", (unsigned)p->step);
        else snprintf(stp, sizeof stp, "-");
        fprintf(r->out, "  %5s  %-9s  %-11s  %7s  %9s  %11s  %11s  %11s%s%s%s\n", stp,
                sd_step_phase_name(p->phase), at, sdp_fmt_count(p->n_entries).s,
                p->has_time ? sdp_fmt_duration_us(p->end_us - p->start_us).s : "-",
                sdp_fmt_bytes(p->alloc_bytes).s, sdp_fmt_delta(p->growth).s,
                sdp_fmt_bytes(p->live_end).s, p->has_peak ? c_on(r, SDP_BOLD) : "",
                p->has_peak ? "  <- the peak" : "", p->has_peak ? c_on(r, SDP_RESET) : "");
    }
    if (shown < d->n_step_phases)
        fprintf(r->out, "  %s(%s more; --json lists them all in step_phases)%s\n",
                c_on(r, SDP_DIM), sdp_fmt_count(d->n_step_phases - shown).s,
                c_on(r, SDP_RESET));
}

sd_status sd_render_trace_text(FILE *out, const sd_trace *t, const sd_trace_text_options *o)
{
    if (sdp_options_check(o, SD_TRACE_TEXT_OPTIONS_VERSION, "sd_trace_text_options", NULL))
        return SD_EUSAGE;
    if (sdp_options_check(o ? &o->render : NULL, SD_RENDER_OPTIONS_VERSION, "sd_render_options", NULL))
        return SD_EUSAGE;
    text_ctx r = {.out = out, .color = o && o->render.color,
                  .top = o && o->top ? o->top : 20, .trace = t,
                  .ooms = o && o->version >= 2 ? o->ooms : NULL};
    size_t n = sd_trace_device_count(t);
    if (!n)
        fprintf(out, "%s: no allocation history recorded (device_traces is empty: record it "
                "with torch.cuda.memory._record_memory_history())\n",
                sd_snapshot_source(sd_trace_snapshot(t)));
    sdp_skip_actions_text(out, sd_trace_snapshot(t), "");
    for (size_t i = 0; i < n; i++) {
        const sd_trace_device *d = sd_trace_device_at(t, i);
        if (i) fprintf(out, "\n");
        print_header(&r, d);
        print_pools(&r, d);
        print_step_phases(&r, d);
        print_groups(&r, d);
        print_phases(&r, d);
    }
    return ferror(out) ? SD_EIO : SD_OK;
}
