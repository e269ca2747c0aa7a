/* frag_verdict.c - the verdict of `snapdiff frag`, explained with the numbers that
 * decided it, and advice that fits the recorded allocator settings (docs/json-frag.md,
 * "The verdict" and "Advice"; mirrored by tests/truth_frag.py). */
#include <stdio.h>
#include <stdlib.h>

#include "analysis/frag_internal.h"
#include "base/base.h"
#include "snapdiff/units.h"

/* A largest free block below 2 MiB, or free memory below 5% of reserved, is "no free
 * room" (the leak-like test). */
#define ROOM_BYTES (2 * SDP_MIB)
#define ROOM_PCT 5
/* Fragmented needs at least this much stranded free memory (free bytes empty_cache()
 * cannot release), in bytes and in percent of reserved: free memory in wholly free
 * segments is no fragmentation, the allocator releases it itself before an oom. */
#define MIN_STRANDED (20 * SDP_MIB)
#define MIN_STRANDED_PCT 10
/* Bucketing advice: free blocks this many, spread over this many histogram buckets. */
#define MIXED_MIN_BLOCKS 32
#define MIXED_MIN_BUCKETS 4
#define ADVICE_MAX 8

/* ---- verdict ---------------------------------------------------------------------- */

typedef struct fmt_bytes { char s[32]; } fmt_bytes;

static fmt_bytes B(uint64_t n)
{
    fmt_bytes out;
    sd_format_bytes(n, out.s, sizeof out.s);
    return out;
}

static double pct_of(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const sd_frag_oom *fragmentation_oom(const sd_frag_device *d)
{
    for (size_t i = d->n_ooms; i-- > 0;)
        if (d->ooms[i].cause == SD_OOM_FRAGMENTATION) return &d->ooms[i];
    return NULL;
}

static bool no_free_room(const sd_frag_figures *g)
{
    return g->largest_free_bytes < ROOM_BYTES ||
           g->external_free_bytes * 100 < g->reserved_bytes * ROOM_PCT;
}

static bool stranded_enough(const sd_frag_figures *g)
{
    return g->stranded_free_bytes >= MIN_STRANDED &&
           g->stranded_free_bytes * 100 >= g->reserved_bytes * MIN_STRANDED_PCT;
}

static sd_frag_verdict decide(const sd_frag_options *o, const sd_frag_device *d)
{
    const sd_frag_figures *g = &d->fig;
    if (g->reserved_bytes == 0) return SD_FRAG_COMPACT;
    if (fragmentation_oom(d)) return SD_FRAG_FRAGMENTED;
    if (g->gap_pct >= o->gap_threshold_pct && g->fragmentation_index >= o->index_threshold &&
        stranded_enough(g))
        return SD_FRAG_FRAGMENTED;
    if (g->gap_pct < o->gap_threshold_pct && no_free_room(g)) return SD_FRAG_LEAK_LIKE;
    return SD_FRAG_COMPACT;
}

/* v with `decimals` decimals, more when rounding would blur which side of thr it is on
 * ("30.0% (< 30%)" must read "29.996% (< 30%)"). */
typedef struct fmt_num { char s[40]; } fmt_num;

static fmt_num num_vs(double v, double thr, int decimals)
{
    fmt_num out;
    for (;; decimals += 2) {
        snprintf(out.s, sizeof out.s, "%.*f", decimals, v);
        double shown = strtod(out.s, NULL);
        if ((shown < thr) == (v < thr) || decimals >= 9) return out;
    }
}

typedef struct why {
    const sd_frag_figures *g;
    double gap_t, index_t;
    fmt_num gap, index, stranded, free;
    const char *gap_cmp, *index_cmp;
} why;

static why numbers(const sd_frag *f, const sd_frag_figures *g)
{
    why w = {.g = g, .gap_t = f->opts.gap_threshold_pct, .index_t = f->opts.index_threshold};
    w.gap = num_vs(g->gap_pct, w.gap_t, 1);
    w.index = num_vs(g->fragmentation_index, w.index_t, 2);
    w.stranded = num_vs(pct_of(g->stranded_free_bytes, g->reserved_bytes), MIN_STRANDED_PCT, 1);
    w.free = num_vs(pct_of(g->external_free_bytes, g->reserved_bytes), ROOM_PCT, 1);
    w.gap_cmp = g->gap_pct >= w.gap_t ? ">=" : "<";
    w.index_cmp = g->fragmentation_index >= w.index_t ? ">=" : "<";
    return w;
}

static const char *explain_oom(sd_frag *f, const sd_frag_oom *oom)
{
    return sdp_frag_printf(f, "the oom at trace entry %zu asked for %s while %s were free in its "
                      "stream's %s pool, but the largest free block was %s (%s)",
                      oom->trace_index, B(oom->request_bytes).s, B(oom->free_bytes).s,
                      oom->small_pool ? "small" : "large", B(oom->largest_free_bytes).s,
                      oom->replayed ? "replayed from the trace" : "as the snapshot shows it");
}

static const char *explain_compact(sd_frag *f, const why *w, const char *gap)
{
    const sd_frag_figures *g = w->g;
    if (g->gap_pct < w->gap_t)
        return sdp_frag_printf(f, "%s, with room to spare (largest free block %s of %s free)", gap,
                          B(g->largest_free_bytes).s, B(g->external_free_bytes).s);
    if (g->fragmentation_index < w->index_t)
        return sdp_frag_printf(f, "%s but fragmentation index %s (< %g): the free memory is in "
                          "large pieces (largest %s of %s free)", gap, w->index.s, w->index_t,
                          B(g->largest_free_bytes).s, B(g->external_free_bytes).s);
    return sdp_frag_printf(f, "%s and fragmentation index %s (>= %g), but only %s of free memory "
                      "(%s%% of reserved) is stranded in segments that hold live blocks; the "
                      "rest sits in wholly free segments, which the allocator releases itself "
                      "before it reports out of memory", gap, w->index.s, w->index_t,
                      B(g->stranded_free_bytes).s, w->stranded.s);
}

static const char *explain(sd_frag *f, const sd_frag_device *d)
{
    const sd_frag_figures *g = &d->fig;
    if (g->reserved_bytes == 0) return "nothing is reserved";
    const sd_frag_oom *oom = fragmentation_oom(d);
    if (oom) return explain_oom(f, oom);
    why w = numbers(f, g);
    char *gap = sdp_frag_printf(f, "gap %s is %s%% of %s reserved (%s %g%%)", B(g->gap_bytes).s,
                           w.gap.s, B(g->reserved_bytes).s, w.gap_cmp, w.gap_t);
    if (!gap) return NULL;
    switch (d->verdict) {
    case SD_FRAG_FRAGMENTED:
        return sdp_frag_printf(f, "%s, fragmentation index %s (%s %g), and %s of free memory (%s%% "
                          "of reserved) is stranded in segments that hold live blocks "
                          "(largest free block %s)", gap, w.index.s, w.index_cmp, w.index_t,
                          B(g->stranded_free_bytes).s, w.stranded.s, B(g->largest_free_bytes).s);
    case SD_FRAG_LEAK_LIKE:
        if (g->largest_free_bytes < ROOM_BYTES)
            return sdp_frag_printf(f, "%s and the largest free block is %s (%llu bytes, under "
                              "2 MiB): live tensors fill what is reserved; growth, not "
                              "fragmentation", gap, B(g->largest_free_bytes).s,
                              (unsigned long long)g->largest_free_bytes);
        return sdp_frag_printf(f, "%s and only %s is free (%s%% of reserved, < %d%%): live tensors "
                          "fill what is reserved; growth, not fragmentation", gap,
                          B(g->external_free_bytes).s, w.free.s, ROOM_PCT);
    case SD_FRAG_COMPACT:
        break;
    }
    return explain_compact(f, &w, gap);
}

/* ---- advice ----------------------------------------------------------------------- */

typedef struct advice_list {
    const char **items;
    size_t n, cap;
} advice_list;

static bool advise(advice_list *l, const char *text)
{
    if (!text) return false;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i], text) == 0) return true;   /* the total merges devices */
    if (l->n == l->cap) return false;                      /* sized by the caller */
    l->items[l->n++] = text;
    return true;
}

static bool max_split_unlimited(const sd_allocator_settings *st)
{
    return !st || !st->present || !st->has_max_split_size || st->max_split_size < 0;
}

static bool expandable_on(const sd_allocator_settings *st)
{
    return st && st->present && st->has_expandable_segments && st->expandable_segments;
}

static size_t nonempty_buckets(const sd_frag_figures *g, size_t *lo, size_t *hi)
{
    size_t n = 0;
    *lo = *hi = 0;
    for (size_t i = 0; i < SD_FRAG_BUCKETS; i++) {
        if (!g->histogram[i].blocks) continue;
        if (!n) *lo = i;
        *hi = i;
        n++;
    }
    return n;
}

static char *bucket_label(sd_frag *f, size_t i)
{
    uint64_t lo, hi;
    sd_frag_bucket_bounds(i, &lo, &hi);
    if (i == 0) return sdp_frag_printf(f, "< 1 KiB");
    if (!hi) return sdp_frag_printf(f, ">= %s", B(lo).s);
    return sdp_frag_printf(f, "%s", B(lo).s);
}

static bool fix_advice(sd_frag *f, const sd_frag_device *d, advice_list *l)
{
    const sd_frag_figures *g = &d->fig;
    const sd_allocator_settings *st = sd_snapshot_allocator_settings(f->snap);
    bool recorded = st && st->present;
    bool ok = true;
    size_t before = l->n;
    if (!expandable_on(st))
        ok &= advise(l, sdp_frag_printf(f, "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True%s: "
                     "segments then grow in place instead of leaving slivers between "
                     "tensors of changing sizes",
                     recorded ? "" : " (if not already on: this file does not record the "
                                     "allocator settings)"));
    if (max_split_unlimited(st) && d->large_split_free_bytes > 0 &&
        d->large_split_free_bytes * 2 >= g->stranded_free_bytes)
        ok &= advise(l, sdp_frag_printf(f, "Try PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512: "
                     "%s of the %s stranded free memory sits in large segments (>= 512 MiB) "
                     "carved up by smaller tensors; blocks of 512 MiB and more are then "
                     "never split (a much smaller value hurts large tensors)",
                     B(d->large_split_free_bytes).s, B(g->stranded_free_bytes).s));
    size_t lo, hi;
    size_t nb = nonempty_buckets(g, &lo, &hi);
    if (g->free_blocks >= MIXED_MIN_BLOCKS && nb >= MIXED_MIN_BUCKETS) {
        char *a = bucket_label(f, lo), *b = bucket_label(f, hi);
        ok &= a && b &&
              advise(l, sdp_frag_printf(f, "Bucket or pad variable-length inputs to a few fixed "
                     "shapes: %llu free blocks spread over %zu size classes (%s to %s) show "
                     "tensors of ever-changing sizes", (unsigned long long)g->free_blocks, nb,
                     a, b));
    }
    if (l->n == before && expandable_on(st))
        ok &= advise(l, "expandable_segments is already on: round tensor sizes up to a few "
                           "shapes (multiples of 8 in the varying dimension) and reuse "
                           "buffers of fixed shape");
    return ok;
}

static bool device_advice(sd_frag *f, const sd_frag_device *d, advice_list *l)
{
    const sd_frag_figures *g = &d->fig;
    bool ok = true;
    if (d->verdict == SD_FRAG_FRAGMENTED) ok &= fix_advice(f, d, l);
    if (d->verdict == SD_FRAG_LEAK_LIKE)
        ok &= advise(l, "Growth, not fragmentation: allocator settings will not help; "
                           "compare two snapshots (snapdiff OLD NEW) to see which allocation "
                           "site grows");
    if (d->verdict != SD_FRAG_COMPACT)
        ok &= advise(l, sdp_frag_printf(f, "Do not call torch.cuda.empty_cache() as a fix: it "
                     "would return only %s of %s reserved (free segments and pages with no "
                     "live block), which the allocator would soon reserve again",
                     B(g->empty_cache_releasable_bytes).s, B(g->reserved_bytes).s));
    return ok;
}

static sd_status set_advice(sd_frag_device *d, const advice_list *l)
{
    d->advice = l->items;
    d->n_advice = l->n;
    return SD_OK;
}

/* ---- entry points ----------------------------------------------------------------- */

sd_status sdp_frag_judge_device(sd_frag *f, sd_frag_device *d)
{
    d->verdict = decide(&f->opts, d);
    d->explanation = explain(f, d);
    advice_list l = {sdp_frag_calloc(f, ADVICE_MAX, sizeof(char *)), 0, ADVICE_MAX};
    if (!d->explanation || !l.items || !device_advice(f, d, &l)) return SD_ENOMEM;
    return set_advice(d, &l);
}

/* The most severe device verdict; the advice of all devices, each once. */
sd_status sdp_frag_judge_total(sd_frag *f)
{
    sd_frag_device *t = &f->total;
    size_t cap = ADVICE_MAX * (f->n_devices + 1);
    advice_list l = {sdp_frag_calloc(f, cap, sizeof(char *)), 0, cap};
    if (!l.items) return SD_ENOMEM;
    t->verdict = SD_FRAG_COMPACT;
    t->explanation = "nothing is reserved";
    const sd_frag_device *worst = NULL;
    for (size_t i = 0; i < f->n_devices; i++) {
        const sd_frag_device *d = &f->devices[i];
        if (!worst || d->verdict > worst->verdict) worst = d;
        for (size_t k = 0; k < d->n_advice; k++) advise(&l, d->advice[k]);
    }
    if (worst) {
        t->verdict = worst->verdict;
        t->explanation = f->n_devices == 1
                             ? worst->explanation
                             : sdp_frag_printf(f, "device %lld: %s", (long long)worst->device,
                                               worst->explanation);
        if (!t->explanation) return SD_ENOMEM;
    }
    return set_advice(t, &l);
}

const char *sd_frag_verdict_name(sd_frag_verdict v)
{
    switch (v) {
    case SD_FRAG_COMPACT: return "compact";
    case SD_FRAG_LEAK_LIKE: return "leak-like";
    case SD_FRAG_FRAGMENTED: return "fragmented";
    }
    return "compact";
}

