/* replay_text.c - `snapdiff replay` for people: fidelity, the configs side by side, one
 * verdict per config, the limits. */
#include <stdio.h>

#include "render/format.h"
#include "snapdiff/render_replay.h"

#define LIMITS "limits: the replay assumes the program makes the same requests in the same " \
               "order (true when only allocator settings change, not for a new batch size); " \
               "memory outside the caching allocator (NCCL, cuBLAS workspaces, other " \
               "processes) is not modelled."

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 100.0; }

static void put_choice(FILE *out, const sd_replay_choice *c)
{
    if (c->new_segment && c->segment_bytes)
        fprintf(out, "a new segment of %s", sdp_fmt_bytes(c->segment_bytes).s);
    else if (c->new_segment)
        fprintf(out, "a new segment");
    else
        fprintf(out, "the cached block at 0x%llx", (unsigned long long)c->address);
}

/* The request's site as every command names it (the replay's label, attrib.h): " at
 * loss.py:21 cross_entropy_loss", " at autograd MmBackward0"; nothing for an empty stack. */
static void put_site(FILE *out, const char *label)
{
    if (label) fprintf(out, " at %s", label);
}

/* The reasons beside the verdict (docs/json-replay.md, trust_reasons): the ones the
 * verdict line did not already say, each on its own line. */
static void put_trust_reasons(FILE *out, const sd_replay_device *d, const sd_snapshot *s)
{
    for (unsigned r = SD_TRUST_NOTHING_CHECKED + 1; r < SD_TRUST_REASON_COUNT; r++) {
        if (!(d->trust_reasons & 1u << r)) continue;
        fprintf(out, "  fidelity may be low: %s", sd_replay_trust_reason_text(r));
        if (r == SD_TRUST_NON_UPSTREAM_KEYS) {
            size_t n = sd_snapshot_foreign_key_count(s);
            for (size_t k = 0; k < n; k++)
                fprintf(out, "%s%s", k ? ", " : ": ", sd_snapshot_foreign_key(s, k));
        }
        fprintf(out, "\n");
    }
}

static void put_fidelity(FILE *out, const sd_replay_device *d, const sd_render_options *ro,
                         const sd_snapshot *s)
{
    bool c = ro && ro->color;
    fprintf(out, "%sfidelity%s: %s of %s placements matched (%.2f%%), %s of %s segment "
                 "decisions\n",
            sdp_ansi(c, SDP_BOLD), sdp_ansi(c, SDP_RESET),
            sdp_fmt_count(d->placements_matched).s, sdp_fmt_count(d->placements_checked).s,
            pct(d->placements_matched, d->placements_checked),
            sdp_fmt_count(d->segment_decisions_matched).s,
            sdp_fmt_count(d->segment_decisions_checked).s);
    if (d->has_first_mismatch) {
        const sd_replay_mismatch *m = &d->first_mismatch;
        fprintf(out, "  first mismatch: entry %zu, a request of %s: the model chose ", m->entry,
                sdp_fmt_bytes(m->request_bytes).s);
        put_choice(out, &m->model);
        fprintf(out, ", the allocator ");
        put_choice(out, &m->recorded);
        fprintf(out, "\n");
        for (size_t k = 0; k < m->n_seen; k++) {
            const sd_replay_free_block *b = &m->seen[k];
            fprintf(out, "    free block the model saw: 0x%llx, %s", (unsigned long long)b->address,
                    sdp_fmt_bytes(b->bytes).s);
            if (b->expandable_bytes != b->bytes)
                fprintf(out, " (can expand to %s)", sdp_fmt_bytes(b->expandable_bytes).s);
            fprintf(out, "\n");
        }
        if (!m->n_seen) fprintf(out, "    the model saw no free block of that pool and stream that could hold it\n");
    }
    if (d->trusted && d->trust_reasons & 1u << SD_TRUST_PLACEMENTS_ONLY)
        fprintf(out, "trusted on placements only: %s of %s matched (>= 99%%)%s; a warm start "
                     "with no segment event has no segment decision to check\n",
                sdp_fmt_count(d->placements_matched).s, sdp_fmt_count(d->placements_checked).s,
                d->trust_peak_compared ? ", the peak reserved reproduced" : "");
    else if (d->trusted && d->trust_reasons & 1u << SD_TRUST_NOTHING_CHECKED)
        fprintf(out, "%s: a warm start with no alloc and no segment event has no placement or "
                     "segment decision to check\n",
                d->trust_peak_compared ? "trusted on the peak reserved only"
                                       : "trusted with nothing checked");
    else if (d->trusted && d->trust_peak_compared)
        fprintf(out, "trusted: the recorded settings reproduce the recording (>= 99%% of "
                     "placements, every segment decision, the peak reserved)\n");
    else if (d->trusted)
        fprintf(out, "trusted: the recorded settings reproduce the recording (>= 99%% of "
                     "placements, every segment decision; the peak is not compared under a "
                     "capacity or memory fraction the recording did not have)\n");
    else
        fprintf(out, "not trusted: %s; the what-ifs below are the model's, not advice\n",
                d->untrusted_why);
    put_trust_reasons(out, d, s);
}

static void put_capacity(FILE *out, const sd_replay_device *d)
{
    uint64_t cap = d->n_configs ? d->configs[0].capacity_bytes : 0;
    double frac = d->n_configs ? d->configs[0].conf.memory_fraction : 0;
    if (d->capacity_source == SD_REPLAY_CAPACITY_GIVEN && frac > 0 && frac < 1)
        fprintf(out, "capacity: %s (--capacity); the recorded settings may reserve %s of it "
                     "(memory fraction %.6g, as torch.cuda.set_per_process_memory_fraction)\n",
                sdp_fmt_bytes(cap).s, sdp_fmt_bytes((uint64_t)(frac * (double)cap)).s, frac);
    else if (d->capacity_source == SD_REPLAY_CAPACITY_GIVEN)
        fprintf(out, "capacity: %s (--capacity)\n", sdp_fmt_bytes(cap).s);
    else if (d->capacity_source == SD_REPLAY_CAPACITY_OOM_ENTRY)
        fprintf(out, "capacity: %s (reserved at the first oom entry plus its device_free)\n",
                sdp_fmt_bytes(cap).s);
    else
        fprintf(out, "capacity: unknown (no oom entry, no --capacity): no OOM prediction\n");
}

static void put_table(FILE *out, const sd_replay_device *d)
{
    fprintf(out, "  %-34s %14s %12s %8s %5s %16s\n", "config", "peak reserved", "change",
            "retries", "OOMs", "stranded at end");
    for (size_t i = 0; i < d->n_configs; i++) {
        const sd_replay_config *c = &d->configs[i];
        fprintf(out, "  %-34.34s %14s %12s %8s %5zu %16s\n", c->alloc_conf,
                sdp_fmt_bytes(c->peak_reserved_bytes).s,
                sdp_fmt_delta(sdp_sdelta(c->peak_reserved_bytes, d->recorded_peak_reserved_bytes)).s,
                sdp_fmt_count(c->alloc_retries).s, c->n_ooms,
                sdp_fmt_bytes(c->stranded_bytes).s);
    }
}

static void put_verdict(FILE *out, const sd_replay_device *d,
                        const sd_replay_config *c, bool first)
{
    if (first && !d->trust_peak_compared) {
        fprintf(out, "  recorded settings under this limit: simulated peak reserved %s "
                     "(recorded without it: %s)",
                sdp_fmt_bytes(c->peak_reserved_bytes).s,
                sdp_fmt_bytes(d->recorded_peak_reserved_bytes).s);
    } else if (first) {
        fprintf(out, "  recorded settings: simulated peak reserved %s, recorded %s (%s)",
                sdp_fmt_bytes(c->peak_reserved_bytes).s,
                sdp_fmt_bytes(d->recorded_peak_reserved_bytes).s,
                c->peak_reserved_bytes == d->recorded_peak_reserved_bytes ? "equal" : "they differ");
    } else {
        fprintf(out, "  %s: peak reserved %s -> %s", c->alloc_conf,
                sdp_fmt_bytes(d->configs[0].peak_reserved_bytes).s,
                sdp_fmt_bytes(c->peak_reserved_bytes).s);
    }
    for (size_t k = 0; k < c->n_oom_outcomes; k++) {
        const sd_replay_oom_outcome *o = &c->oom_outcomes[k];
        fprintf(out, "; the OOM at entry %zu (%s", o->entry, sdp_fmt_bytes(o->request_bytes).s);
        put_site(out, o->label);
        fprintf(out, ") %s", o->succeeds ? "would not happen" : "would still happen");
        if (o->succeeds && c->capacity_bytes)
            fprintf(out, " (%s left after it)", sdp_fmt_bytes(o->headroom_bytes).s);
    }
    /* Requests the recording served that would run out of memory here. */
    size_t new_ooms = 0;
    const sd_replay_oom *first_new = NULL;
    for (size_t k = 0; k < c->n_ooms; k++) {
        bool recorded = false;
        for (size_t j = 0; j < c->n_oom_outcomes; j++)
            if (c->oom_outcomes[j].entry == c->ooms[k].entry) recorded = true;
        if (recorded) continue;
        if (!first_new) first_new = &c->ooms[k];
        new_ooms++;
    }
    uint64_t limit = c->capacity_bytes;
    if (limit && c->conf.memory_fraction > 0 && c->conf.memory_fraction < 1)
        limit = (uint64_t)(c->conf.memory_fraction * (double)limit);
    if (!first && !c->n_ooms && d->configs[0].n_ooms && limit > c->peak_reserved_bytes)
        fprintf(out, "; no request runs out of memory: the job would complete, %s below the "
                     "limit at its peak", sdp_fmt_bytes(limit - c->peak_reserved_bytes).s);
    /* torch raises at the first: the job stops there, and the trace's later requests
     * are the recorded run's, not the job's. */
    if (first_new) {
        fprintf(out, "; out of memory at entry %zu (%s", first_new->entry,
                sdp_fmt_bytes(first_new->request_bytes).s);
        put_site(out, first_new->label);
        fprintf(out, "): the job would stop there, %s reserved at its peak, %s retr%s",
                sdp_fmt_bytes(c->stop_peak_reserved_bytes).s,
                sdp_fmt_count(c->stop_alloc_retries).s, c->stop_alloc_retries == 1 ? "y" : "ies");
        if (new_ooms > 1)
            fprintf(out, " (%zu later request%s of the trace fail too)", new_ooms - 1,
                    new_ooms == 2 ? "" : "s");
    }
    fprintf(out, "\n");
}

sd_status sd_render_replay_text(FILE *out, const sd_replay *r, const sd_render_options *ro,
                                sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(ro, SD_RENDER_OPTIONS_VERSION, "sd_render_options", err))
        return SD_EUSAGE;
    const sd_snapshot *s = sd_replay_snapshot(r);
    size_t n = sd_replay_device_count(r);
    if (!n) fprintf(out, "%s: no trace entries: nothing to replay (record with "
                         "torch.cuda.memory._record_memory_history())\n", sd_snapshot_source(s));
    for (size_t i = 0; i < n; i++) {
        const sd_replay_device *d = sd_replay_device_at(r, i);
        if (i) fprintf(out, "\n");
        fprintf(out, "replay of %s, device %lld: %s entries, %s alloc%s; at the start %s "
                     "reserved, %s allocated\n",
                sd_snapshot_source(s), (long long)d->device, sdp_fmt_count(d->entries).s,
                sdp_fmt_count(d->allocs).s, d->allocs == 1 ? "" : "s",
                sdp_fmt_bytes(d->start_reserved_bytes).s,
                sdp_fmt_bytes(d->start_allocated_bytes).s);
        put_fidelity(out, d, ro, s);
        fprintf(out, "recorded: peak reserved %s, %s at the end, %s segment%s created, "
                     "%zu OOM%s\n",
                sdp_fmt_bytes(d->recorded_peak_reserved_bytes).s,
                sdp_fmt_bytes(d->recorded_end_reserved_bytes).s,
                sdp_fmt_count(d->recorded_segment_allocs).s,
                d->recorded_segment_allocs == 1 ? "" : "s", d->recorded_ooms,
                d->recorded_ooms == 1 ? "" : "s");
        put_capacity(out, d);
        if (d->warm_start)
            fprintf(out, "warm start: the window creates no segment, its memory was reserved "
                         "before; a what-if shows how that memory is reused, not what a run "
                         "from empty would reserve\n");
        if (!d->trusted && d->n_configs > 1)
            fprintf(out, "not trusted: %s\n", d->untrusted_why);
        put_table(out, d);
        for (size_t c = 0; c < d->n_configs; c++) {
            put_verdict(out, d, &d->configs[c], c == 0);
            if (d->configs[c].gc_needs_fraction)
                fprintf(out, "    %s: garbage_collection_threshold changes nothing here: torch "
                             "collects only under a per-process memory fraction "
                             "(--memory-fraction)\n", d->configs[c].alloc_conf);
        }
    }
    unsigned tv = sd_replay_torch_version(r);
    if (tv)
        fprintf(out, "options read as torch %u.%u reads them (--torch)\n", tv / 100, tv % 100);
    else
        fprintf(out, "options read as the newest torch reads them (--torch VERSION for an "
                     "older one)\n");
    fprintf(out, "%s\n", LIMITS);
    return ferror(out) ? SD_EIO : SD_OK;
}
