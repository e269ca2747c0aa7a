/* stats.c - the totals of a device and of a snapshot. */
#include "base/base.h"
#include "snapdiff/stats.h"

void sd_stats_device(const sd_cuda_device *dev, sd_stats *out)
{
    memset(out, 0, sizeof *out);
    out->device = dev->device;
    out->segments = dev->n_segments;
    for (size_t i = 0; i < dev->n_segments; i++) {
        const sd_segment *g = &dev->segments[i];
        out->reserved_bytes += g->total_size;
        if (g->is_small) out->segments_small++;
        else out->segments_large++;
        if (g->is_expandable) out->segments_expandable++;
    }
    out->blocks = dev->n_blocks;
    for (size_t i = 0; i < dev->n_blocks; i++) {
        const sd_block *b = &dev->blocks[i];
        switch (b->state) {
        case SD_BLOCK_ALLOCATED:
            out->allocated_bytes += b->size;
            out->requested_bytes += b->requested_size;
            break;
        case SD_BLOCK_PENDING_FREE:
            out->pending_free_bytes += b->size;
            out->requested_bytes += b->requested_size;
            break;
        case SD_BLOCK_INACTIVE: out->inactive_bytes += b->size; break;
        default: break;
        }
    }
    out->active_bytes = out->allocated_bytes + out->pending_free_bytes;
    out->trace_entries = dev->n_trace;
    for (size_t i = 0; i < dev->n_trace; i++) {
        const sd_trace_entry *e = &dev->trace[i];
        if (!e->has_time) continue;
        if (!out->has_time || e->time_us < out->first_time_us) out->first_time_us = e->time_us;
        if (!out->has_time || e->time_us > out->last_time_us) out->last_time_us = e->time_us;
        out->has_time = 1;
    }
}

void sd_stats_add(sd_stats *a, const sd_stats *b)
{
    a->device = -1;
    a->segments += b->segments;
    a->segments_large += b->segments_large;
    a->segments_small += b->segments_small;
    a->segments_expandable += b->segments_expandable;
    a->blocks += b->blocks;
    a->reserved_bytes += b->reserved_bytes;
    a->allocated_bytes += b->allocated_bytes;
    a->active_bytes += b->active_bytes;
    a->requested_bytes += b->requested_bytes;
    a->pending_free_bytes += b->pending_free_bytes;
    a->inactive_bytes += b->inactive_bytes;
    a->trace_entries += b->trace_entries;
    if (b->has_time) {
        if (!a->has_time || b->first_time_us < a->first_time_us) a->first_time_us = b->first_time_us;
        if (!a->has_time || b->last_time_us > a->last_time_us) a->last_time_us = b->last_time_us;
        a->has_time = 1;
    }
}

void sd_stats_total(const sd_snapshot *s, sd_stats *out)
{
    memset(out, 0, sizeof *out);
    out->device = -1;
    for (size_t i = 0; i < sd_snapshot_device_count(s); i++) {
        sd_stats d;
        sd_stats_device(sd_snapshot_device(s, i), &d);
        sd_stats_add(out, &d);
    }
}

/* Adds the device's counts to counts[0..n). */
static void add_actions(const sd_cuda_device *dev, uint64_t *counts, size_t n)
{
    for (size_t i = 0; i < dev->n_trace; i++) {
        size_t a = dev->trace[i].action < SD_ACT_COUNT ? dev->trace[i].action : SD_ACT_OTHER;
        if (a < n) counts[a]++;
    }
}

void sd_stats_device_actions(const sd_cuda_device *dev, uint64_t *counts, size_t n)
{
    if (!counts) return;
    memset(counts, 0, n * sizeof *counts);
    add_actions(dev, counts, n);
}

void sd_stats_total_actions(const sd_snapshot *s, uint64_t *counts, size_t n)
{
    if (!counts) return;
    memset(counts, 0, n * sizeof *counts);
    for (size_t i = 0; i < sd_snapshot_device_count(s); i++)
        add_actions(sd_snapshot_device(s, i), counts, n);
}

double sd_stats_allocated_pct(const sd_stats *st)
{
    return st->reserved_bytes ? 100.0 * (double)st->allocated_bytes / (double)st->reserved_bytes
                              : 0.0;
}
