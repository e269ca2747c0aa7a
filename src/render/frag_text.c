/* frag_text.c - `snapdiff frag` as text: per device the verdict with the numbers that
 * decided it first, then the figures per device, pool and stream, the free-block
 * histogram, what empty_cache() would return, the oom events, the advice; optionally a
 * page map of the largest segments. */
#include <inttypes.h>
#include <string.h>

#include "render/format.h"
#include "render/frag_render.h"
#include "render/levers_words.h"
#include "render/top_render.h"
#include "render/settings.h"

#define HIST_BAR 40          /* widest histogram bar, in characters */

#define B(n) sdp_fmt_bytes(n).s

typedef struct ctx {
    FILE *out;
    bool color;
} ctx;

static const char *clr(const ctx *c, sdp_colour k) { return sdp_ansi(c->color, k); }

static sdp_colour verdict_colour(sd_frag_verdict v)
{
    if (v == SD_FRAG_FRAGMENTED) return SDP_RED;
    if (v == SD_FRAG_FULL) return SDP_YELLOW;
    return SDP_GREEN;
}

static void table_header(const ctx *c)
{
    fprintf(c->out, "  %-18s %10s %10s %10s %6s %10s %10s %10s %10s %8s\n", "", "reserved",
            "allocated", "gap", "gap%", "int.waste", "free", "pending", "largest", "frag.idx");
}

static void table_row(const ctx *c, const char *label, const sd_frag_figures *g)
{
    fprintf(c->out, "  %-18s %10s %10s %10s %5.1f%% %10s %10s %10s %10s %8.2f\n", label,
            B(g->reserved_bytes), B(g->allocated_bytes), B(g->gap_bytes), g->gap_pct,
            B(g->internal_waste_bytes), B(g->external_free_bytes), B(g->pending_free_bytes),
            B(g->largest_free_bytes), g->fragmentation_index);
}

/* The table's index counts every free block, wholly free (cached) segments too, so a
 * healthy cache reads near 1; the verdict weighs only the stranded free memory. Say so
 * under the table, or a "compact" beside a high index reads as a contradiction. */
static void print_index_legend(const ctx *c)
{
    fprintf(c->out, "  %sfrag.idx: fragmentation index, 1 - largest / free, over all free "
            "memory, cached free segments included;\n  the verdict judges only the free "
            "memory stranded in segments that hold live blocks%s\n", clr(c, SDP_DIM),
            clr(c, SDP_RESET));
}

static void print_table(const ctx *c, const sd_frag_device *d)
{
    char label[64];
    table_header(c);
    snprintf(label, sizeof label, "device %" PRId64, d->device);
    table_row(c, label, &d->fig);
    for (size_t i = 0; i < d->n_pools; i++) {
        snprintf(label, sizeof label, "  %s", d->pools[i].name);
        table_row(c, label, &d->pools[i].fig);
    }
    for (size_t i = 0; d->n_streams > 1 && i < d->n_streams; i++) {
        uint64_t stream = d->streams[i].stream;
        if (stream == 0) snprintf(label, sizeof label, "  stream 0");
        else snprintf(label, sizeof label, "  stream 0x%" PRIx64, stream);
        table_row(c, label, &d->streams[i].fig);
    }
    print_index_legend(c);
}

/* "< 1 KiB", "1-2 KiB", "512 KiB-1 MiB", ">= 1 GiB". */
typedef struct label { char s[128]; } label;

static label bucket_label(size_t bucket)
{
    uint64_t lo, hi;
    label t;
    sd_frag_bucket_bounds(bucket, &lo, &hi);
    if (bucket == 0) {
        snprintf(t.s, sizeof t.s, "< %s", sdp_fmt_pow2(hi).s);
        return t;
    }
    sdp_text a = sdp_fmt_pow2(lo);
    if (!hi) {
        snprintf(t.s, sizeof t.s, ">= %s", a.s);
        return t;
    }
    sdp_text b = sdp_fmt_pow2(hi);
    const char *ua = strchr(a.s, ' '), *ub = strchr(b.s, ' ');
    if (ua && ub && strcmp(ua, ub) == 0)        /* "1-2 KiB" rather than "1 KiB-2 KiB" */
        snprintf(t.s, sizeof t.s, "%.*s-%s", (int)(ua - a.s), a.s, b.s);
    else
        snprintf(t.s, sizeof t.s, "%s-%s", a.s, b.s);
    return t;
}

static void print_histogram(const ctx *c, const sd_frag_figures *g)
{
    size_t lo = SD_FRAG_BUCKETS, hi = 0;
    uint64_t top = 0;
    for (size_t i = 0; i < SD_FRAG_BUCKETS; i++) {
        if (!g->histogram[i].blocks) continue;
        if (lo == SD_FRAG_BUCKETS) lo = i;
        hi = i;
        if (g->histogram[i].bytes > top) top = g->histogram[i].bytes;
    }
    if (lo == SD_FRAG_BUCKETS) {
        fprintf(c->out, "  no free blocks\n");
        return;
    }
    fprintf(c->out, "  free blocks by size (%" PRIu64 " blocks, %s):\n", g->free_blocks,
            B(g->external_free_bytes));
    fprintf(c->out, "    %-15s %7s %10s\n", "size", "blocks", "bytes");
    for (size_t i = lo; i <= hi; i++) {
        const sd_frag_bucket *b = &g->histogram[i];
        char bar[HIST_BAR + 1];
        size_t w = top ? (size_t)((b->bytes * HIST_BAR + top - 1) / top) : 0;
        if (w > HIST_BAR) w = HIST_BAR;
        memset(bar, '#', w);
        bar[w] = '\0';
        fprintf(c->out, "    %-15s %7" PRIu64 " %10s  %s\n", bucket_label(i).s, b->blocks,
                B(b->bytes), bar);
    }
}

static void print_oom_sum(const ctx *c, const sd_frag_oom *m);
static void print_levers(const ctx *c, const sd_snapshot *s, const sd_frag_oom *m);

/* The arithmetic, then the levers. */
static void print_oom_arithmetic(const ctx *c, const sd_snapshot *s, const sd_frag_oom *m)
{
    if (m->process_limit) {
        /* D is not this process's to take: what the allocator held is all that is known */
        uint64_t ws = m->cached_free_bytes + m->stranded_free_bytes;
        fprintf(c->out, "    request %s %s wholly free %s + stranded %s = %s, plus what the "
                "process's limit still allowed (unknown, less than the request's segment)\n",
                B(m->request_bytes), m->request_bytes > ws ? ">" : "<=",
                B(m->cached_free_bytes), B(m->stranded_free_bytes), B(ws));
    } else
        print_oom_sum(c, m);
    print_levers(c, s, m);
    sdp_levers_text(c->out, s, m->model_levers, "oom", "    ");
}

/* R against D + W + S, summed so that it visibly adds up; what would have had to be freed. */
static void print_oom_sum(const ctx *c, const sd_frag_oom *m)
{
    uint64_t dw = m->device_free_bytes + m->cached_free_bytes;
    fprintf(c->out, "    request %s %s device free %s + wholly free %s + stranded %s = %s",
            B(m->request_bytes),
            m->request_bytes > dw + m->stranded_free_bytes ? ">" : "<=",
            B(m->device_free_bytes), B(m->cached_free_bytes), B(m->stranded_free_bytes),
            B(dw + m->stranded_free_bytes));
    if (m->shortfall_bytes)
        fprintf(c->out, "; without the stranded space %s would have had to be freed",
                B(m->shortfall_bytes));
    if (m->live_known)
        fprintf(c->out, "; live %s (%.0f%% of what the program could reach)", B(m->live_bytes),
                100.0 * m->live_share);
    fprintf(c->out, "\n");
}

static void print_levers(const ctx *c, const sd_snapshot *s, const sd_frag_oom *m)
{
    for (size_t i = 0; i < m->n_levers; i++) {
        const sd_frag_lever *l = &m->levers[i];
        char site[256];
        sd_site_text(s, l->stack, &l->site, site, sizeof site);
        fprintf(c->out, "    lever: %s %s at %s -> %s\n", B(l->bytes),
                sd_category_name(l->category), site, sd_frag_lever_name(l->lever));
    }
}

/* The free memory the verdict weighs, then what was live at the oom by site (whole
 * sites, one a line: never cut). */
static void print_oom_figures(const ctx *c, const sd_snapshot *s, const sd_frag_oom *m)
{
    if (m->process_limit)
        fprintf(c->out, "    the device had %s free, more than the request needed: the limit "
                "was this process's own (torch.cuda.set_per_process_memory_fraction?), which "
                "the snapshot does not record; to replay under it: snapdiff replay FILE "
                "--capacity <GPU memory> --memory-fraction <the job's fraction>\n",
                B(m->device_free_bytes));
    if (m->process_limit)
        fprintf(c->out, "    free in the allocator %s (%s in wholly free cached segments, %s "
                "stranded in segments with live blocks)%s\n",
                B(m->allocator_free_bytes), B(m->cached_free_bytes), B(m->stranded_free_bytes),
                m->at_run_start ? "; the trace reaches back to the run's start" : "");
    else
        fprintf(c->out, "    free in all %s: %s on the device + %s in the allocator (%s in "
                "wholly free cached segments, %s stranded in segments with live blocks)%s\n",
                B(m->device_free_bytes + m->allocator_free_bytes), B(m->device_free_bytes),
                B(m->allocator_free_bytes), B(m->cached_free_bytes), B(m->stranded_free_bytes),
                m->at_run_start ? "; the trace reaches back to the run's start" : "");
    if (m->replay_known)
        fprintf(c->out, "    replayed (snapdiff replay): expandable_segments:True would %s; "
                "max_split_size_mb:512 would %s\n",
                m->succeeds_expandable ? "have succeeded" : "fail too",
                m->succeeds_max_split ? "have succeeded" : "fail too");
    print_oom_arithmetic(c, s, m);
    if (m->whatif_untrusted_why)
        fprintf(c->out, "    (the replay is not trusted: %s; no headroom is quoted)\n",
                m->whatif_untrusted_why);
    for (size_t i = 0; i < m->n_whatif; i++) {
        const sd_frag_whatif *w = &m->whatif[i];
        fprintf(c->out, "    replayed under %s: %s", w->alloc_conf,
                w->fits ? "the request fits" : "fails too");
        if (w->fits && w->has_headroom)
            fprintf(c->out, ", %s of headroom at its peak%s", B(w->headroom_bytes),
                    w->enough ? "" : ": not enough for the next step");
        fprintf(c->out, "\n");
    }
    if (!m->live_known) {
        fprintf(c->out, "    live at the oom: not computed (only for the last %d oom entries, "
                "fewer on a long trace)\n", SD_FRAG_OOM_REPLAY_LIMIT);
        return;
    }
    if (!m->live_blocks) return;
    fprintf(c->out, "    live at the oom: %s in %" PRIu64 " blocks%s\n", B(m->live_bytes),
            m->live_blocks, m->n_sites ? ", the largest sites:" : "");
    for (size_t i = 0; i < m->n_sites; i++) {
        const sd_frag_live_site *x = &m->sites[i];
        char site[512];
        if (x->site.site < 0) continue;
        sd_site_text(s, x->stack, &x->site, site, sizeof site);
        fprintf(c->out, "      %10s  %s\n", B(x->bytes), site);
    }
}

static void print_oom(const ctx *c, const sd_snapshot *s, const sd_frag_oom *m)
{
    /* the line that asked first, when the trace entry recorded frames */
    sdp_frag_words site = sdp_frag_oom_site_words(s, m);
    if (!site.s[0]) snprintf(site.s, sizeof site.s, "trace entry %zu", m->trace_index);
    fprintf(c->out, "  oom at %s: request %s, device free %s; largest free block %s of %s "
            "free in stream %s%" PRIx64 "'s %s pool (%s): %s", site.s, B(m->request_bytes), B(m->device_free_bytes),
            B(m->largest_free_bytes), B(m->free_bytes), m->stream ? "0x" : "", m->stream,
            m->small_pool ? "small" : "large",
            m->replayed ? "replayed from the trace" : "from the snapshot",
            sd_oom_cause_name(m->cause));
    if (m->site.site >= 0) fprintf(c->out, " (trace entry %zu)\n", m->trace_index);
    else fprintf(c->out, "\n");
    if (!m->replayed)
        fprintf(c->out, "    (not replayed: %s)\n", sdp_frag_oom_note_words(m).s);
    print_oom_figures(c, s, m);
}

void sdp_frag_oom_text(FILE *out, const sd_snapshot *s, const sd_frag_oom *m, bool color)
{
    ctx c = {out, color};
    print_oom(&c, s, m);
}

static void print_advice(const ctx *c, const sd_frag_device *d)
{
    if (!d->n_advice) return;
    fprintf(c->out, "  advice:\n");
    for (size_t i = 0; i < d->n_advice; i++)
        fprintf(c->out, "    - %s\n", sdp_frag_advice_words(&d->advice[i]).s);
}

static char page_char(const sd_frag_page *p)
{
    switch (sd_frag_page_fill_of(p)) {
    case SD_PAGE_NONE: return ' ';
    case SD_PAGE_FULL: return '#';
    case SD_PAGE_HALF: return '+';
    case SD_PAGE_LOW: return '-';
    case SD_PAGE_PENDING: return 'p';
    case SD_PAGE_FREE: return '.';
    }
    return ' ';
}

static void print_map(const ctx *c, const sd_frag_map *m)
{
    if (!m->n_rows) return;
    fprintf(c->out, "  segment map, %zu of %zu segments, most free memory stranded first; one "
            "character = %s:\n", m->n_rows, m->n_segments, sdp_fmt_pow2(m->page_bytes).s);
    fprintf(c->out, "    %s'#' >= 75%% allocated, '+' 25-75%%, '-' under 25%%, 'p' "
            "pending-free, '.' free;\n    pool (a,b) a private pool, exp an expandable "
            "segment%s\n", clr(c, SDP_DIM), clr(c, SDP_RESET));
    for (size_t i = 0; i < m->n_rows; i++) {
        const sd_frag_map_row *r = &m->rows[i];
        char row[SD_FRAG_MAP_COLUMNS + 1];
        size_t np = r->n_pages < SD_FRAG_MAP_COLUMNS ? r->n_pages : SD_FRAG_MAP_COLUMNS;
        for (size_t p = 0; p < np; p++) row[p] = page_char(&r->pages[p]);
        row[np] = '\0';
        fprintf(c->out, "    0x%012" PRIx64 " %10s %-12s%s |%s| %s free\n", r->address,
                B(r->total_size), r->pool, r->expandable ? " exp" : "    ", row,
                B(r->free_bytes));
    }
}

static void print_device(const ctx *c, const sd_snapshot *s, const sd_frag_device *d,
                         bool with_map)
{
    const sd_frag_figures *g = &d->fig;
    fprintf(c->out, "%sdevice %" PRId64 ": %s%s%s\n", clr(c, SDP_BOLD), d->device,
            clr(c, verdict_colour(d->verdict)), sd_frag_verdict_name(d->verdict),
            clr(c, SDP_RESET));
    fprintf(c->out, "  %s\n", sdp_frag_why_words(&d->why).s);
    print_advice(c, d);
    fprintf(c->out, "\n");
    print_table(c, d);
    fprintf(c->out, "\n");
    print_histogram(c, g);
    fprintf(c->out, "  largest free block %s; %s free in blocks < 1 MiB; %s in blocks smaller "
            "than the median live allocation (%s)\n", B(g->largest_free_bytes),
            B(g->free_below_1mib_bytes), B(g->free_below_median_bytes),
            B(g->median_allocated_bytes));
    fprintf(c->out, "  empty_cache() would return %s of %s reserved", B(g->empty_cache_releasable_bytes),
            B(g->reserved_bytes));
    if (g->expandable_tail_bytes)
        fprintf(c->out, " (%s of it the free tail of live expandable segments)",
                B(g->expandable_tail_bytes));
    fprintf(c->out, "; %s of free memory is stranded in segments that hold live blocks "
            "(stranded index %.2f)\n", B(g->stranded_free_bytes), g->stranded_index);
    for (size_t i = 0; i < d->n_ooms; i++) print_oom(c, s, &d->ooms[i]);
    if (with_map) {
        fprintf(c->out, "\n");
        print_map(c, &d->map);
    }
}

static void print_total(const ctx *c, const sd_frag_device *t, size_t nd)
{
    fprintf(c->out, "\n%stotal over %zu devices: %s%s%s\n", clr(c, SDP_BOLD), nd,
            clr(c, verdict_colour(t->verdict)), sd_frag_verdict_name(t->verdict),
            clr(c, SDP_RESET));
    fprintf(c->out, "  %s\n", sdp_frag_why_words(&t->why).s);
    table_header(c);
    table_row(c, "total", &t->fig);
    print_index_legend(c);
    fprintf(c->out, "  empty_cache() would return %s of %s reserved\n",
            B(t->fig.empty_cache_releasable_bytes), B(t->fig.reserved_bytes));
}

sd_status sd_render_frag_text(FILE *out, const sd_frag *f, bool with_map,
                              const sd_render_options *opts)
{
    if (sdp_options_check(opts, SD_RENDER_OPTIONS_VERSION, "sd_render_options", NULL))
        return SD_EUSAGE;
    ctx c = {out, opts && opts->color};
    const sd_snapshot *s = sd_frag_snapshot(f);
    size_t nd = sd_frag_device_count(f);
    fprintf(out, "%s%s%s\n", clr(&c, SDP_BOLD), sd_snapshot_source(s), clr(&c, SDP_RESET));
    if (nd == 0) fprintf(out, "  no segments: nothing is reserved\n");
    for (size_t i = 0; i < nd; i++) {
        fprintf(out, "\n");
        print_device(&c, s, sd_frag_device_at(f, i), with_map);
    }
    if (nd > 1) print_total(&c, sd_frag_total(f), nd);
    fprintf(out, "\n");
    sdp_settings_frag_text(out, sd_snapshot_allocator_settings(s));
    return ferror(out) ? SD_EIO : SD_OK;
}
