/* top_text.c - `snapdiff top`: per device, live memory by site at the end and at the peak,
 * largest first. The figures are peak.h's; this file only words and lays them out. */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "render/format.h"
#include "render/frag_render.h"
#include "render/settings.h"
#include "render/top_render.h"
#include "snapdiff/render_top.h"

enum { ROWS_DEFAULT = 20, LABEL_MAX = 512, SHOWN_OOMS = 3 };

typedef struct table_rows {
    const sd_peak *peak;
    const sd_peak_table *table;
} table_rows;

/* Row j of a table as every view names its group (attrib.h): the label is the analysis's. */
static void label_of_row(void *ctx, size_t j, char *buf, size_t size)
{
    const table_rows *t = ctx;
    const sd_peak_group *g = &t->table->groups[j];
    sd_group_label(sd_peak_attrib(t->peak), sd_peak_snapshot(t->peak), g->rep_stack,
                   &g->rep_site, g->key, false, buf, size);
}

/* Row i's label, distinct from the earlier rows' (attrib.h: -g stack's "(stack 2)"). */
static const char *row_label(const sd_peak *x, const sd_peak_table *t, size_t i, char *buf,
                             size_t size)
{
    table_rows rows = {x, t};
    sd_group_label_distinct(sd_peak_attrib(x), label_of_row, &rows, i, NULL, 0, buf, size);
    return buf;
}

/* One table: bytes, blocks (and requested at the end), the key; then what was left out. */
static void print_table(FILE *out, const sd_peak *x, const sd_peak_table *t, bool requested,
                        size_t top, const sd_render_options *ro)
{
    if (requested)
        fprintf(out, "    %s%11s %8s %11s  %s%s\n", sdp_ansi(ro->color, SDP_DIM), "bytes",
                "blocks", "requested", "site", sdp_ansi(ro->color, SDP_RESET));
    else
        fprintf(out, "    %s%11s %8s  %s%s\n", sdp_ansi(ro->color, SDP_DIM), "bytes", "blocks",
                "site", sdp_ansi(ro->color, SDP_RESET));
    size_t n = t->n_groups < top ? t->n_groups : top;
    for (size_t i = 0; i < n; i++) {
        const sd_peak_group *g = &t->groups[i];
        char label[LABEL_MAX];
        row_label(x, t, i, label, sizeof label);
        if (requested)
            fprintf(out, "    %11s %8s %11s  %s\n", sdp_fmt_bytes(g->bytes).s,
                    sdp_fmt_count(g->blocks).s, sdp_fmt_bytes(g->requested).s,
                    label);
        else
            fprintf(out, "    %11s %8s  %s\n", sdp_fmt_bytes(g->bytes).s,
                    sdp_fmt_count(g->blocks).s, label);
    }
    if (t->n_groups > n) {
        uint64_t rest = 0;
        for (size_t i = n; i < t->n_groups; i++) rest += t->groups[i].bytes;
        fprintf(out, "    %11s %8s  ... %s more group%s (-n to show)\n", sdp_fmt_bytes(rest).s,
                "", sdp_fmt_count(t->n_groups - n).s, t->n_groups - n == 1 ? "" : "s");
    }
    if (t->n_groups == 0) fprintf(out, "    (nothing live)\n");
}

void sdp_categories_text(FILE *out, const sd_peak_table *t, const char *indent)
{
    sd_category_total c[SD_CATEGORY_COUNT];
    size_t n = t->n_categories < SD_CATEGORY_COUNT ? t->n_categories : SD_CATEGORY_COUNT;
    memcpy(c, t->categories, n * sizeof *c);
    for (size_t i = 1; i < n; i++)         /* largest first; stable on ties */
        for (size_t j = i; j > 0 && c[j].bytes > c[j - 1].bytes; j--) {
            sd_category_total x = c[j];
            c[j] = c[j - 1];
            c[j - 1] = x;
        }
    for (size_t i = 0; i < n; i++) {
        const char *ev = sd_category_total_evidence(&c[i]);
        fprintf(out, "%s%11s %8s  ", indent, sdp_fmt_bytes(c[i].bytes).s,
                sdp_fmt_count(c[i].blocks).s);
        if (strcmp(ev, "none") == 0) fprintf(out, "%s\n", sd_category_name(c[i].category));
        else fprintf(out, "%-16s by %s%s\n", sd_category_name(c[i].category), ev,
                     c[i].no_backward_bytes ? ", no backward recorded" : "");
    }
}

void sdp_peak_phase_text(const sd_peak_device *d, char *buf, size_t size)
{
    buf[0] = '\0';
    if (!d->has_peak || !d->peak_has_phase) return;
    if (d->peak_step)
        snprintf(buf, size, " in the %s of step %u", sd_step_phase_name(d->peak_phase),
                 (unsigned)d->peak_step);
    else
        snprintf(buf, size, " in the %s", sd_step_phase_name(d->peak_phase));
}

/* The device's oom events first, as frag prints them: the latest SHOWN_OOMS in full. */
void sdp_top_ooms_text(FILE *out, const sd_frag *f, int64_t device, bool color)
{
    const sd_frag_device *fd = sdp_frag_device_of(f, device);
    if (!fd || !fd->n_ooms) return;
    size_t first = fd->n_ooms > SHOWN_OOMS ? fd->n_ooms - SHOWN_OOMS : 0;
    fprintf(out, "  %sout of memory%s: %zu oom entr%s in the trace", sdp_ansi(color, SDP_RED),
            sdp_ansi(color, SDP_RESET), fd->n_ooms, fd->n_ooms == 1 ? "y" : "ies");
    if (first) fprintf(out, "; the last %d (snapdiff frag lists them all)", SHOWN_OOMS);
    fprintf(out, "\n");
    for (size_t i = first; i < fd->n_ooms; i++)
        sdp_frag_oom_text(out, sd_frag_snapshot(f), &fd->ooms[i], color);
}

static void print_device(FILE *out, const sd_peak *x, const sd_peak_device *d, size_t top,
                         const sd_render_options *ro, const sd_frag *f)
{
    const char *b = sdp_ansi(ro->color, SDP_BOLD), *r = sdp_ansi(ro->color, SDP_RESET);
    fprintf(out, "%sdevice %lld%s: %s allocated in %s block%s\n", b, (long long)d->device, r,
            sdp_fmt_bytes(d->allocated_bytes).s, sdp_fmt_count(d->at_end.blocks).s,
            d->at_end.blocks == 1 ? "" : "s");
    sdp_top_ooms_text(out, f, d->device, ro->color);
    if (d->at_end.n_categories) {
        fprintf(out, "  live at the end, by category:\n");
        sdp_categories_text(out, &d->at_end, "    ");
    }
    fprintf(out, "  live at the end, by site:\n");
    print_table(out, x, &d->at_end, true, top, ro);
    if (!d->has_trace) {
        fprintf(out, "  no peak: the snapshot recorded no trace for this device\n");
        return;
    }
    if (!d->has_peak) {
        fprintf(out, "  no peak: the trace records no allocation\n");
        return;
    }
    char site[LABEL_MAX];
    sd_site_text(sd_peak_snapshot(x), d->peak_stack, &d->peak_site, site, sizeof site);
    fprintf(out, "  %speak: %s%s at entry #%zu", b, sdp_fmt_bytes(d->peak_bytes).s, r,
            d->peak_entry);
    const sd_cuda_device *dev = NULL;
    for (size_t i = 0; i < sd_snapshot_device_count(sd_peak_snapshot(x)); i++)
        if (sd_snapshot_device(sd_peak_snapshot(x), i)->device == d->device)
            dev = sd_snapshot_device(sd_peak_snapshot(x), i);
    if (d->peak_has_time && dev && dev->n_trace && dev->trace[0].has_time)
        fprintf(out, " (+%s)", sdp_fmt_duration_us(sdp_i64_sub_sat(d->peak_time_us, dev->trace[0].time_us)).s);
    char phase[64];
    sdp_peak_phase_text(d, phase, sizeof phase);
    fprintf(out, "%s, reached by an alloc at %s\n", phase, site);
    fprintf(out, "  live at the peak, by category:\n");
    sdp_categories_text(out, &d->at_peak, "    ");
    fprintf(out, "  live at the peak, by site (%s live when recording began included):\n",
            sdp_fmt_bytes(d->start_bytes).s);
    print_table(out, x, &d->at_peak, false, top, ro);
}

sd_status sd_render_top_text(FILE *out, const sd_peak *x, const sd_render_options *ro,
                             const sd_top_text_options *topts, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(ro, SD_RENDER_OPTIONS_VERSION, "sd_render_options", err))
        return SD_EUSAGE;
    if (sdp_options_check(topts, SD_TOP_TEXT_OPTIONS_VERSION, "sd_top_text_options", err))
        return SD_EUSAGE;
    sd_render_options dflt = {0};
    if (!ro) ro = &dflt;
    size_t top = topts && topts->top ? topts->top : ROWS_DEFAULT;
    const char *src = sd_snapshot_source(sd_peak_snapshot(x));
    fprintf(out, "%s\n", src ? src : "?");
    for (size_t i = 0; i < sd_peak_device_count(x); i++) {
        if (i) fputc('\n', out);
        print_device(out, x, sd_peak_device_at(x, i), top, ro, topts ? topts->ooms : NULL);
    }
    if (sd_peak_device_count(x) == 0) fprintf(out, "no device holds memory\n");
    sdp_host_text(out, sd_peak_snapshot(x), "");
    if (ferror(out)) return sdp_fail(err, SD_EIO, SD_NO_OFFSET, "error writing output");
    return SD_OK;
}
