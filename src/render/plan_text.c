/* plan_text.c - `snapdiff plan` for people: the answer first ("at 2048: peak ... allocated,
 * ... reserved; fits 80 GiB with ... to spare"), then the evidence: the check against a
 * real recording, how each allocation's size was fitted, the sites at the predicted peak,
 * and what a plan cannot show. */
#include <stdio.h>

#include "base/base.h"
#include "render/format.h"
#include "snapdiff/render_plan.h"

#define LIMITS "limits: the program is assumed to make the same allocations in the same " \
               "order at every size (an eager program does; a compiled graph, a different " \
               "parallelism or a kernel that picks another algorithm may not); memory live " \
               "before recording is kept as recorded; memory outside the caching allocator " \
               "(NCCL, cuBLAS workspaces, other processes) is not modelled."

static void put_capacity(FILE *out, const sd_plan_device *d, uint64_t cap)
{
    if (!d->fits_known) {
        fprintf(out, "; no capacity given (--capacity SIZE|GPU) to judge the fit\n");
        return;
    }
    if (d->fits) {
        fprintf(out, "; fits %s with %s to spare\n", sdp_fmt_bytes(cap).s,
                sdp_fmt_bytes((uint64_t)d->headroom_bytes).s);
        return;
    }
    fprintf(out, "; does NOT fit %s", sdp_fmt_bytes(cap).s);
    if (d->headroom_bytes < 0)
        fprintf(out, ": short by %s", sdp_fmt_bytes((uint64_t)-d->headroom_bytes).s);
    if (d->oom_predicted)
        fprintf(out, " (the allocator model runs out of memory at trace entry %zu, after "
                     "emptying its cache and retrying)", d->oom_entry);
    fprintf(out, "\n");
}

static void put_fits(FILE *out, const sd_plan_device *d)
{
    fprintf(out, "  sizes fitted for %s allocations: %s power law, %s constant, %s quadratic, "
                 "%s found in the base recording only (kept as recorded)\n",
            sdp_fmt_count(d->allocs).s, sdp_fmt_count(d->fit_counts[SD_PLAN_POWER]).s,
            sdp_fmt_count(d->fit_counts[SD_PLAN_CONSTANT]).s,
            sdp_fmt_count(d->fit_counts[SD_PLAN_QUADRATIC]).s,
            sdp_fmt_count(d->fit_counts[SD_PLAN_UNALIGNED]).s);
}

static void put_check(FILE *out, const sd_plan *p, const sd_plan_device *d)
{
    if (!d->check_known) return;
    fprintf(out, "  checked against %s: allocated %s predicted, %s real (%+.2f%%)",
            sd_plan_check_source(p), sdp_fmt_bytes(d->predicted_peak_allocated_bytes).s,
            sdp_fmt_bytes(d->check_peak_allocated_bytes).s, d->check_allocated_error_pct);
    if (d->reserved_known && d->check_peak_reserved_bytes)
        fprintf(out, "; reserved %s predicted, %s real (%+.2f%%)",
                sdp_fmt_bytes(d->predicted_peak_reserved_bytes).s,
                sdp_fmt_bytes(d->check_peak_reserved_bytes).s, d->check_reserved_error_pct);
    fprintf(out, "\n");
}

static void put_sites(FILE *out, const sd_plan *p, const sd_plan_device *d)
{
    if (!d->n_sites) return;
    fprintf(out, "  live at the predicted peak (base trace entry %zu", d->peak_entry);
    if (d->peak_label) fprintf(out, ", reached by an alloc at %s", d->peak_label);
    fprintf(out, "), largest first:\n");
    fprintf(out, "    %12s %12s %7s  %s\n", "predicted", "recorded", "blocks", "site");
    for (size_t k = 0; k < d->n_sites; k++) {
        const sd_plan_site *s = &d->sites[k];
        fprintf(out, "    %12s %12s %7s  %s\n", sdp_fmt_bytes(s->bytes).s,
                sdp_fmt_bytes(s->base_bytes).s, s->stack ? sdp_fmt_count(s->blocks).s : "-",
                s->stack ? (s->label ? s->label : "<no user frame>")
                         : "live before recording (kept as recorded)");
    }
    fprintf(out, "    (recorded: the same blocks in %s, at %g)\n",
            sd_plan_recording_source(p, d->base), sd_plan_recording_size(p, d->base));
}

sd_status sd_render_plan_text(FILE *out, const sd_plan *p, const sd_plan_view *view,
                              const sd_render_options *ro, sd_error *err)
{
    sd_error_clear(err);
    bool c = ro && ro->color;
    double at = sd_plan_target(p);
    uint64_t cap = sd_plan_capacity(p);
    for (size_t i = 0; i < sd_plan_device_count(p); i++) {
        const sd_plan_device *d = sd_plan_device_at(p, i);
        if (i) fprintf(out, "\n");
        if (view && view->has_max) {
            if (view->max_size > 0)
                fprintf(out, "%slargest size that fits %s: %g%s\n", sdp_ansi(c, SDP_BOLD),
                        sdp_fmt_bytes(cap).s, view->max_size, sdp_ansi(c, SDP_RESET));
            else
                fprintf(out, "%sno size fits %s: even 1 does not%s\n", sdp_ansi(c, SDP_BOLD),
                        sdp_fmt_bytes(cap).s, sdp_ansi(c, SDP_RESET));
        }
        fprintf(out, "%sdevice %lld at %g: peak %s allocated", sdp_ansi(c, SDP_BOLD),
                (long long)d->device, at, sdp_fmt_bytes(d->predicted_peak_allocated_bytes).s);
        if (d->reserved_known)
            fprintf(out, ", %s reserved", sdp_fmt_bytes(d->predicted_peak_reserved_bytes).s);
        fprintf(out, "%s", sdp_ansi(c, SDP_RESET));
        put_capacity(out, d, cap);
        put_check(out, p, d);
        fprintf(out, "  predicted from %zu recordings:", sd_plan_recording_count(p));
        for (size_t k = 0; k < sd_plan_recording_count(p); k++)
            fprintf(out, "%s %g = %s", k ? "," : "", sd_plan_recording_size(p, k),
                    sd_plan_recording_source(p, k));
        fprintf(out, "; the trace is built from the one at %g\n", sd_plan_recording_size(p, d->base));
        put_fits(out, d);
        if (d->start_bytes)
            fprintf(out, "  live before recording: %s, kept as recorded (not scaled)\n",
                    sdp_fmt_bytes(d->start_bytes).s);
        put_sites(out, p, d);
    }
    fprintf(out, "%s\n", LIMITS);
    if (ferror(out)) return sdp_fail(err, SD_EIO, SD_NO_OFFSET, "write error");
    return SD_OK;
}
