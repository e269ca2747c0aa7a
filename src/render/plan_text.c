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
    if (sd_plan_whatif_of(p))
        fprintf(out, "    (recorded: the same blocks as %s recorded them)\n",
                sd_plan_recording_source(p, d->base));
    else
        fprintf(out, "    (recorded: the same blocks in %s, at %g)\n",
                sd_plan_recording_source(p, d->base), sd_plan_recording_size(p, d->base));
}

#define WHATIF_LIMITS "limits: each allocation is scaled by its category (docs/categories.md) " \
                      "at its recorded place in the trace; a category that is not known to " \
                      "scale (other, pre_trace, persistent) keeps its size; one recording cannot " \
                      "show new kernels or workspaces a changed size would bring, nor the " \
                      "communication buffers of another world size beyond the one all-gather " \
                      "buffer counted."

static void put_whatif_change(FILE *out, const sd_plan_whatif *w)
{
    bool any = false;
    if (w->batch_scale > 0 && w->batch_scale != 1) {
        fprintf(out, "batch x%g", w->batch_scale);
        any = true;
    }
    if (w->shard_ranks > 1)
        fprintf(out, "%sZeRO-%u over %u ranks", any ? ", " : "", w->zero_stage, w->shard_ranks);
    else if (!any)
        fprintf(out, "nothing changed");
}

static void put_assumed(FILE *out, const sd_plan_whatif *w)
{
    if (w->batch_scale > 0 && w->batch_scale != 1)
        fprintf(out, "  assumed: activations and temporaries scale by %g (a micro-batch or a "
                     "sequence %g times as large); parameters, gradients and optimizer state do "
                     "not\n", w->batch_scale, w->batch_scale);
    if (w->shard_ranks > 1)
        fprintf(out, "  assumed: optimizer state%s%s divided over %u ranks%s\n",
                w->zero_stage >= 2 ? ", gradients" : "", w->zero_stage >= 3 ? " and parameters" : "",
                w->shard_ranks,
                w->zero_stage >= 3 ? ", plus one all-gather buffer the size of the largest "
                                     "parameter block (FSDP gathers a unit's parameters)" : "");
}

/* One what-if device: the answer against the recording, then what was assumed. */
static void put_whatif_device(FILE *out, const sd_plan *p, const sd_plan_device *d, bool c)
{
    const sd_plan_whatif *w = sd_plan_whatif_of(p);
    fprintf(out, "%sdevice %lld, what if ", sdp_ansi(c, SDP_BOLD), (long long)d->device);
    put_whatif_change(out, w);
    fprintf(out, ": peak %s allocated", sdp_fmt_bytes(d->predicted_peak_allocated_bytes).s);
    if (d->reserved_known)
        fprintf(out, ", %s reserved", sdp_fmt_bytes(d->predicted_peak_reserved_bytes).s);
    fprintf(out, "%s", sdp_ansi(c, SDP_RESET));
    put_capacity(out, d, sd_plan_capacity(p));
    fprintf(out, "  recorded (%s): peak %s allocated (%s), %s reserved", sd_plan_recording_source(p, 0),
            sdp_fmt_bytes(d->recorded_peak_allocated_bytes).s,
            sdp_fmt_delta(sdp_sdelta(d->predicted_peak_allocated_bytes,
                                     d->recorded_peak_allocated_bytes)).s,
            sdp_fmt_bytes(d->recorded_peak_reserved_bytes).s);
    if (d->reserved_known)
        fprintf(out, " (%s)", sdp_fmt_delta(sdp_sdelta(d->predicted_peak_reserved_bytes,
                                                       d->recorded_peak_reserved_bytes)).s);
    else
        fprintf(out, "; reserved not predicted: memory live before recording changes size, "
                     "and the allocator's state then is the recording's");
    fprintf(out, "\n  %s of %s allocations changed size", sdp_fmt_count(d->scaled_allocs).s,
            sdp_fmt_count(d->allocs).s);
    if (d->allgather_bytes)
        fprintf(out, "; all-gather buffer %s", sdp_fmt_bytes(d->allgather_bytes).s);
    fprintf(out, "\n");
    put_assumed(out, w);
    put_sites(out, p, d);
}

sd_status sd_render_plan_text(FILE *out, const sd_plan *p, const sd_plan_view *view,
                              const sd_render_options *ro, sd_error *err)
{
    sd_error_clear(err);
    if (sd_plan_whatif_of(p)) {
        bool col = ro && ro->color;
        for (size_t i = 0; i < sd_plan_device_count(p); i++) {
            if (i) fprintf(out, "\n");
            put_whatif_device(out, p, sd_plan_device_at(p, i), col);
        }
        fprintf(out, "%s\n", WHATIF_LIMITS);
        if (ferror(out)) return sdp_fail(err, SD_EIO, SD_NO_OFFSET, "write error");
        return SD_OK;
    }
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
