/* frag_verdict.c - the verdict of `snapdiff frag`, the reason that decided it with the
 * numbers it quotes, and advice that fits the recorded allocator settings, all as data
 * (render/frag_words.c words them; docs/json-frag.md, "The verdict" and "Advice";
 * mirrored by tests/truth/truth_frag.py). */
#include <stdio.h>
#include <stdlib.h>

#include "analysis/frag_internal.h"
#include "analysis/levers_internal.h"
#include "base/base.h"

/* A largest free block below 2 MiB, or free memory below 5% of reserved, is "no free
 * room" (the test for full). */
#define ROOM_BYTES (2 * SDP_MIB)
#define ROOM_PCT 5
/* Fragmented needs SD_FRAG_MIN_STRANDED of stranded free memory (free bytes empty_cache()
 * cannot release) and SD_FRAG_MIN_STRANDED_PCT of reserved (frag.h): free memory in
 * wholly free segments is no fragmentation, the allocator releases it itself before an
 * oom. */
#define MIN_STRANDED SD_FRAG_MIN_STRANDED
#define MIN_STRANDED_PCT SD_FRAG_MIN_STRANDED_PCT
/* "Do not call empty_cache()" is said only when it would return under half of reserved:
 * the advice must never contradict its own numbers. */
#define NO_EMPTY_CACHE_PCT 50
/* Bucketing advice: free blocks this many, spread over this many histogram buckets. */
#define MIXED_MIN_BLOCKS 32
#define MIXED_MIN_BUCKETS 4
#define ADVICE_MAX 8

/* ---- verdict ---------------------------------------------------------------------- */

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

/* The end state's test: free memory stranded in small pieces. */
static bool looks_fragmented(const sd_frag_options *o, const sd_frag_figures *g)
{
    return g->gap_pct >= o->gap_threshold_pct && stranded_enough(g) &&
           g->stranded_index >= o->index_threshold;
}

/* The cost that decides: the trusted replay's (what a compacting allocator would have
 * saved) when there is one, else reserved minus live at the peak. */
static uint64_t deciding_cost(const sd_frag_device *d)
{
    return d->has_cost_replay ? d->cost_replay_bytes : d->cost_bytes;
}

/* With a trace: the cost at the peak is material (SD_FRAG_MIN_COST and _PCT, both). */
static bool cost_material(const sd_frag_device *d)
{
    uint64_t c = deciding_cost(d);
    return d->has_cost && c >= SD_FRAG_MIN_COST &&
           c * 100 >= d->peak_reserved_bytes * SD_FRAG_MIN_COST_PCT;
}

/* Reserved minus live at the peak alone is material (before the replay weighs it). */
static bool live_cost_material(const sd_frag_device *d)
{
    return d->has_cost && d->cost_bytes >= SD_FRAG_MIN_COST &&
           d->cost_bytes * 100 >= d->peak_reserved_bytes * SD_FRAG_MIN_COST_PCT;
}

static sd_frag_verdict decide(const sd_frag_options *o, const sd_frag_device *d)
{
    const sd_frag_figures *g = &d->fig;
    if (g->reserved_bytes == 0) return SD_FRAG_COMPACT;
    if (fragmentation_oom(d)) return SD_FRAG_FRAGMENTED;
    /* With a trace, what fragmentation cost at the peak decides, not the end state (whose
     * free memory is mostly the cache of the step's peak). */
    if (d->has_cost ? cost_material(d) : looks_fragmented(o, g)) return SD_FRAG_FRAGMENTED;
    if (g->gap_pct < o->gap_threshold_pct && no_free_room(g)) return SD_FRAG_FULL;
    return SD_FRAG_COMPACT;
}

/* The recorded reserved bytes at their highest over the trace: the snapshot's segments
 * less the trace's segment events (reserved at its start), then the events in order
 * (replay.h's recorded_peak_reserved_bytes, without running the replay). */
static uint64_t recorded_peak_reserved(const sd_cuda_device *dev)
{
    uint64_t end = 0, added = 0, removed = 0;
    for (size_t i = 0; i < dev->n_segments; i++) end += dev->segments[i].total_size;
    for (size_t i = 0; i < dev->n_trace; i++) {
        uint8_t a = dev->trace[i].action;
        if (a == SD_ACT_SEGMENT_ALLOC || a == SD_ACT_SEGMENT_MAP) added += dev->trace[i].size;
        else if (a == SD_ACT_SEGMENT_FREE || a == SD_ACT_SEGMENT_UNMAP)
            removed += dev->trace[i].size;
    }
    uint64_t cur = end + removed - added, peak = cur;   /* wraps back for a sane trace */
    for (size_t i = 0; i < dev->n_trace; i++) {
        uint8_t a = dev->trace[i].action;
        if (a == SD_ACT_SEGMENT_ALLOC || a == SD_ACT_SEGMENT_MAP) cur += dev->trace[i].size;
        else if (a == SD_ACT_SEGMENT_FREE || a == SD_ACT_SEGMENT_UNMAP) cur -= dev->trace[i].size;
        if (cur > peak) peak = cur;
    }
    return peak;
}

/* What fragmentation cost at the peak (sd_frag_device.has_cost ...). */
static sd_status peak_cost(sd_frag *f, sd_frag_device *d)
{
    size_t idx = (size_t)(d - f->devices);
    const sd_cuda_device *dev = sd_snapshot_device(f->snap, idx);
    d->request_sizes_vary = -1;
    if (sd_snapshot_is_summary(f->snap) || !dev || !dev->n_trace) return SD_OK;
    if (sdp_frag_peak(f)) return SD_ENOMEM;
    const sd_peak_device *pd = sd_peak_device_find(f->peak, d->device);
    if (!pd || !pd->has_peak) return SD_OK;
    d->has_cost = true;
    d->peak_live_bytes = pd->peak_bytes;
    d->peak_has_phase = pd->peak_has_phase;
    d->peak_phase = pd->peak_phase;
    d->peak_step = pd->peak_step;
    d->peak_reserved_bytes = recorded_peak_reserved(dev);
    d->cost_bytes = d->peak_reserved_bytes > d->peak_live_bytes
                        ? d->peak_reserved_bytes - d->peak_live_bytes : 0;
    d->request_sizes_vary = sd_phases_request_sizes_vary(sd_peak_phases(f->peak), idx);
    return SD_OK;
}

/* The numbers every reason may quote, and which one decided. */
static sd_frag_why reason(const sd_frag *f, const sd_frag_device *d)
{
    const sd_frag_figures *g = &d->fig;
    sd_frag_why w = {.reason = SD_FRAG_WHY_NOTHING_RESERVED, .device = -1};
    w.reserved_bytes = g->reserved_bytes;
    w.gap_bytes = g->gap_bytes;
    w.gap_pct = g->gap_pct;
    w.gap_threshold_pct = f->opts.gap_threshold_pct;
    w.gap_over = g->gap_pct >= w.gap_threshold_pct;
    w.index = g->stranded_index;
    w.index_threshold = f->opts.index_threshold;
    w.index_over = g->stranded_index >= w.index_threshold;
    w.stranded_bytes = g->stranded_free_bytes;
    w.largest_stranded_bytes = g->largest_stranded_bytes;
    w.stranded_pct = pct_of(g->stranded_free_bytes, g->reserved_bytes);
    w.stranded_threshold_pct = MIN_STRANDED_PCT;
    w.stranded_floor_bytes = MIN_STRANDED;
    w.stranded_over = stranded_enough(g);
    w.cached_bytes = g->empty_cache_releasable_bytes;
    w.expandable_tail_bytes = g->expandable_tail_bytes;
    w.free_bytes = g->external_free_bytes;
    w.free_pct = pct_of(g->external_free_bytes, g->reserved_bytes);
    w.free_threshold_pct = ROOM_PCT;
    w.largest_free_bytes = g->largest_free_bytes;
    w.room_bytes = ROOM_BYTES;
    w.has_cost = d->has_cost;
    w.peak_reserved_bytes = d->peak_reserved_bytes;
    w.peak_live_bytes = d->peak_live_bytes;
    w.peak_has_phase = d->peak_has_phase;
    w.peak_phase = d->peak_phase;
    w.peak_step = d->peak_step;
    w.cost_bytes = d->cost_bytes;
    w.cost_pct = pct_of(d->cost_bytes, d->peak_reserved_bytes);
    w.cost_threshold_pct = SD_FRAG_MIN_COST_PCT;
    w.cost_floor_bytes = SD_FRAG_MIN_COST;
    w.cost_over = cost_material(d);
    w.has_cost_replay = d->has_cost_replay;
    w.cost_replay_bytes = d->cost_replay_bytes;
    if (g->reserved_bytes == 0) return w;
    w.oom = fragmentation_oom(d);
    if (w.oom) {
        w.reason = SD_FRAG_WHY_OOM;
        return w;
    }
    switch (d->verdict) {
    case SD_FRAG_FRAGMENTED: w.reason = d->has_cost ? SD_FRAG_WHY_COST : SD_FRAG_WHY_STRANDED; break;
    case SD_FRAG_FULL:
        w.reason = g->largest_free_bytes < ROOM_BYTES ? SD_FRAG_WHY_TINY_LARGEST
                                                       : SD_FRAG_WHY_LITTLE_FREE;
        break;
    case SD_FRAG_COMPACT:
        w.reason = !w.gap_over ? SD_FRAG_WHY_ROOM_TO_SPARE
                 : !w.stranded_over ? SD_FRAG_WHY_NOT_STRANDED : SD_FRAG_WHY_LARGE_PIECES;
        if (d->has_cost && (looks_fragmented(&f->opts, g) || live_cost_material(d)))
            w.reason = SD_FRAG_WHY_CACHED_FOR_REUSE;
        break;
    }
    w.end_state_only = !d->has_cost;
    return w;
}

/* ---- advice ----------------------------------------------------------------------- */

typedef struct advice_list {
    sd_frag_advice *items;
    size_t n, cap;
} advice_list;

static bool same_advice(const sd_frag_advice *a, const sd_frag_advice *b)
{
    return a->code == b->code && a->settings_recorded == b->settings_recorded &&
           a->bytes == b->bytes && a->of_bytes == b->of_bytes &&
           a->free_blocks == b->free_blocks && a->n_buckets == b->n_buckets &&
           a->first_bucket == b->first_bucket && a->last_bucket == b->last_bucket &&
           a->replayed == b->replayed && a->peak_reserved_bytes == b->peak_reserved_bytes &&
           a->recorded_peak_reserved_bytes == b->recorded_peak_reserved_bytes &&
           a->ooms == b->ooms && a->ooms_avoided == b->ooms_avoided;
}

/* Add a piece of advice unless the list has it already (the total merges devices). */
static void advise(advice_list *l, const sd_frag_advice *a)
{
    for (size_t i = 0; i < l->n; i++)
        if (same_advice(&l->items[i], a)) return;
    if (l->n < l->cap) l->items[l->n++] = *a;            /* sized by the caller */
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

/* The two settings the advice can name, as the replay is given them (alloc_conf.c). */
static const char *const REPLAY_CONFS[] = {"expandable_segments:True", "max_split_size_mb:512"};
enum { REPLAY_EXPANDABLE = 1, REPLAY_MAX_SPLIT = 2 };   /* configs[0] is "recorded" */

/* The replay's figures for config k of rd, quoted by a piece of advice. */
static void quote_replay(const sd_replay_device *rd, size_t k, sd_frag_advice *a)
{
    const sd_replay_config *c = &rd->configs[k];
    a->replayed = true;
    a->replay_warm_start = rd->warm_start;
    a->recorded_peak_reserved_bytes = rd->configs[0].peak_reserved_bytes;
    a->peak_reserved_bytes = c->peak_reserved_bytes;
    a->ooms = c->n_oom_outcomes;
    a->ooms_avoided = 0;
    for (size_t i = 0; i < c->n_oom_outcomes; i++) a->ooms_avoided += c->oom_outcomes[i].succeeds;
}

/* A setting helps when it avoids a recorded oom, or (none recorded) lowers peak reserved. */
static bool replay_helps(const sd_frag_advice *a)
{
    return a->ooms ? a->ooms_avoided > 0 : a->peak_reserved_bytes < a->recorded_peak_reserved_bytes;
}

static void fix_advice(const sd_frag *f, const sd_frag_device *d, const sd_replay_device *rd,
                       advice_list *l)
{
    const sd_frag_figures *g = &d->fig;
    const sd_allocator_settings *st = sd_snapshot_allocator_settings(f->snap);
    size_t before = l->n;
    if (rd && rd->trusted) {   /* measured: a setting only where a trusted replay shows it helps */
        sd_frag_advice ex = {.code = SD_ADVICE_EXPANDABLE_SEGMENTS,
                             .settings_recorded = st && st->present};
        sd_frag_advice ms = {.code = SD_ADVICE_MAX_SPLIT_SIZE,
                             .bytes = d->large_split_free_bytes,
                             .of_bytes = g->stranded_free_bytes};
        quote_replay(rd, REPLAY_EXPANDABLE, &ex);
        quote_replay(rd, REPLAY_MAX_SPLIT, &ms);
        if (!expandable_on(st) && replay_helps(&ex)) advise(l, &ex);
        if (max_split_unlimited(st) && replay_helps(&ms)) advise(l, &ms);
        if (ex.ooms && !ex.ooms_avoided && !ms.ooms_avoided)
            advise(l, &(sd_frag_advice){.code = SD_ADVICE_REPLAY_NO_SETTING, .replayed = true,
                                        .replay_warm_start = rd->warm_start,
                                        .recorded_peak_reserved_bytes =
                                            rd->configs[0].peak_reserved_bytes,
                                        .ooms = ex.ooms});
    } else {
        if (!expandable_on(st))
            advise(l, &(sd_frag_advice){.code = SD_ADVICE_EXPANDABLE_SEGMENTS,
                                        .settings_recorded = st && st->present});
        if (max_split_unlimited(st) && d->large_split_free_bytes > 0 &&
            d->large_split_free_bytes * 2 >= g->stranded_free_bytes)
            advise(l, &(sd_frag_advice){.code = SD_ADVICE_MAX_SPLIT_SIZE,
                                        .bytes = d->large_split_free_bytes,
                                        .of_bytes = g->stranded_free_bytes});
    }
    sd_frag_advice shapes = {.code = SD_ADVICE_FIXED_SHAPES, .free_blocks = g->free_blocks};
    shapes.n_buckets = nonempty_buckets(g, &shapes.first_bucket, &shapes.last_bucket);
    /* With a trace, only when the requests' sizes do vary across its steps: a pattern of
     * free blocks alone is no evidence of variable-length inputs. */
    if (g->free_blocks >= MIXED_MIN_BLOCKS && shapes.n_buckets >= MIXED_MIN_BUCKETS &&
        (!d->has_cost || d->request_sizes_vary == 1))
        advise(l, &shapes);
    if (l->n == before && expandable_on(st))
        advise(l, &(sd_frag_advice){.code = SD_ADVICE_ROUND_SIZES});
}

/* The newest oom that lacked capacity at the run's start (nothing to compare it with). */
static const sd_frag_oom *oom_at_start(const sd_frag_device *d)
{
    for (size_t i = d->n_ooms; i-- > 0;) {
        const sd_frag_oom *o = &d->ooms[i];
        if (o->at_run_start && !o->process_limit &&
            (o->cause == SD_OOM_CAPACITY || o->cause == SD_OOM_BOTH))
            return o;
    }
    return NULL;
}

/* An oom that fragmentation contributed to: only then are allocator settings advice. */
static bool oom_fragmented(const sd_frag_device *d)
{
    for (size_t i = 0; i < d->n_ooms; i++)
        if (d->ooms[i].cause == SD_OOM_FRAGMENTATION || d->ooms[i].cause == SD_OOM_BOTH)
            return true;
    return false;
}

static void device_advice(const sd_frag *f, const sd_frag_device *d,
                          const sd_replay_device *rd, advice_list *l)
{
    const sd_frag_figures *g = &d->fig;
    const sd_frag_oom *start = oom_at_start(d);
    bool oom_frag = oom_fragmented(d);
    if (d->verdict == SD_FRAG_FRAGMENTED || oom_frag) fix_advice(f, d, rd, l);
    if (start)
        advise(l, &(sd_frag_advice){.code = SD_ADVICE_OOM_AT_START,
                                    .bytes = start->request_bytes,
                                    .of_bytes = start->device_free_bytes
                                                + start->allocator_free_bytes});
    else if (d->verdict == SD_FRAG_FULL && !oom_frag)
        advise(l, &(sd_frag_advice){.code = SD_ADVICE_GROWTH});
    if (d->verdict != SD_FRAG_COMPACT &&
        g->empty_cache_releasable_bytes * 100 < g->reserved_bytes * NO_EMPTY_CACHE_PCT)
        advise(l, &(sd_frag_advice){.code = SD_ADVICE_NO_EMPTY_CACHE,
                                    .bytes = g->empty_cache_releasable_bytes,
                                    .of_bytes = g->reserved_bytes});
}

static void set_advice(sd_frag_device *d, const advice_list *l)
{
    d->advice = l->items;
    d->n_advice = l->n;
}

/* ---- entry points ----------------------------------------------------------------- */

/* The replay of d's device (with the two settings), run once per analysis and only when a
 * device has something to weigh it against; *rd stays NULL without a trace, with
 * skip_replay, or when the file cannot be replayed (a summary). @return SD_ENOMEM only. */
static sd_status allocator_run_of(sd_frag *f, const sd_frag_device *d, const sd_replay_device **rd)
{
    *rd = NULL;
    if (f->opts.skip_replay) return SD_OK;
    if (!f->replay_tried) {
        f->replay_tried = true;
        sd_error err = {0};
        f->replay = sd_replay_create(f->snap, &(sd_replay_options){
            .alloc_confs = REPLAY_CONFS, .n_alloc_confs = 2,
            .max_memory = f->opts.max_memory}, &err);
        if (!f->replay && err.code == SD_ENOMEM) return SD_ENOMEM;
    }
    if (!f->replay) return SD_OK;
    for (size_t i = 0; i < sd_replay_device_count(f->replay); i++) {
        const sd_replay_device *x = sd_replay_device_at(f->replay, i);
        if (x->device == d->device && x->n_configs == 3) *rd = x;
    }
    return SD_OK;
}

static bool outcome_of(const sd_replay_config *c, size_t entry, bool *succeeds)
{
    for (size_t i = 0; i < c->n_oom_outcomes; i++)
        if (c->oom_outcomes[i].entry == entry) {
            *succeeds = c->oom_outcomes[i].succeeds;
            return true;
        }
    return false;
}

/* What each trusted setting buys at an oom: fits, and the headroom left at its peak. */
static sd_status oom_whatif(sd_frag *f, sd_frag_oom *o, const sd_replay_device *rd)
{
    o->whatif_trusted = rd->trusted;
    o->whatif_untrusted_why = rd->untrusted_why;
    if (!rd->trusted) return SD_OK;
    sd_frag_whatif *w = sdp_frag_calloc(f, 2, sizeof *w);
    if (!w) return SD_ENOMEM;
    size_t n = 0;
    for (size_t k = REPLAY_EXPANDABLE; k <= REPLAY_MAX_SPLIT; k++) {
        const sd_replay_config *c = &rd->configs[k];
        bool fits;
        if (!outcome_of(c, o->trace_index, &fits)) continue;
        sd_frag_whatif *x = &w[n++];
        x->alloc_conf = REPLAY_CONFS[k - 1];
        x->fits = fits;
        x->has_headroom = c->capacity_bytes > 0;
        x->headroom_bytes = c->capacity_bytes > c->peak_reserved_bytes
                                ? c->capacity_bytes - c->peak_reserved_bytes : 0;
        x->enough = fits && x->has_headroom &&
                    x->headroom_bytes * 100 >= c->capacity_bytes * SD_FRAG_HEADROOM_PCT;
        uint64_t recorded = rd->configs[0].peak_reserved_bytes;
        x->has_saved = true;
        x->saved_bytes = recorded > c->peak_reserved_bytes ? recorded - c->peak_reserved_bytes : 0;
    }
    o->whatif = w;
    o->n_whatif = n;
    return SD_OK;
}

/* Each oom entry's outcome under the two settings (the oom explanation quotes them). */
static sd_status oom_outcomes(sd_frag *f, sd_frag_device *d, const sd_replay_device *rd)
{
    sd_frag_oom *ooms = (sd_frag_oom *)d->ooms;   /* owned by f's arena, filled here */
    for (size_t i = 0; i < d->n_ooms; i++) {
        sd_frag_oom *o = &ooms[i];
        /* Under a process limit the replay's capacity (reserved + device_free) is not
         * the limit: its outcomes would say "fits" for the wrong reason. */
        if (o->process_limit) continue;
        o->replay_known =
            outcome_of(&rd->configs[REPLAY_EXPANDABLE], o->trace_index, &o->succeeds_expandable) &&
            outcome_of(&rd->configs[REPLAY_MAX_SPLIT], o->trace_index, &o->succeeds_max_split);
        if (oom_whatif(f, o, rd)) return SD_ENOMEM;
    }
    return SD_OK;
}

/* R, D, W, S, L: the shortfall and the live share (sd_frag_oom). */
static void oom_arithmetic(sd_frag_device *d)
{
    sd_frag_oom *ooms = (sd_frag_oom *)d->ooms;
    for (size_t i = 0; i < d->n_ooms; i++) {
        sd_frag_oom *o = &ooms[i];
        uint64_t have = (o->process_limit ? 0 : o->device_free_bytes) + o->cached_free_bytes;
        o->shortfall_bytes = o->request_bytes > have ? o->request_bytes - have : 0;
        uint64_t reach = o->live_bytes + have + o->stranded_free_bytes;
        o->live_share = o->live_known && reach && !o->process_limit
                            ? (double)o->live_bytes / (double)reach : 0.0;
    }
}

/* Each oom's levers (levers.h) against what would have had to be freed: the shortfall
 * R - (D + W), or the request itself when the free memory covered it (fragmentation: the
 * stranded space cannot be counted on, so a lever is enough when it frees the request). */
static sd_status oom_levers_judge(sd_frag_device *d)
{
    for (size_t i = 0; i < d->n_ooms; i++) {
        const sd_frag_oom *o = &d->ooms[i];
        if (!o->model_levers) continue;
        uint64_t need = o->shortfall_bytes ? o->shortfall_bytes : o->request_bytes;
        if (sdp_levers_judge((sd_levers *)o->model_levers, true, need, o->whatif, o->n_whatif))
            return SD_ENOMEM;
    }
    return SD_OK;
}

sd_status sdp_frag_judge_device(sd_frag *f, sd_frag_device *d)
{
    if (peak_cost(f, d)) return SD_ENOMEM;
    oom_arithmetic(d);
    d->verdict = decide(&f->opts, d);
    d->why = reason(f, d);
    advice_list l = {sdp_frag_calloc(f, ADVICE_MAX, sizeof(sd_frag_advice)), 0, ADVICE_MAX};
    if (!l.items) return SD_ENOMEM;
    const sd_replay_device *rd = NULL;
    /* The replay also says what each setting buys at an oom (whatif). */
    if ((d->verdict == SD_FRAG_FRAGMENTED || d->n_ooms) && allocator_run_of(f, d, &rd))
        return SD_ENOMEM;
    if (rd && oom_outcomes(f, d, rd)) return SD_ENOMEM;
    if (rd && rd->trusted && d->has_cost) {
        /* A trusted replay says what compaction would have saved: that cost decides. */
        uint64_t ex = rd->configs[REPLAY_EXPANDABLE].peak_reserved_bytes;
        d->has_cost_replay = true;
        d->cost_replay_bytes = d->peak_reserved_bytes > ex ? d->peak_reserved_bytes - ex : 0;
        d->verdict = decide(&f->opts, d);
        d->why = reason(f, d);
    }
    device_advice(f, d, rd, &l);
    set_advice(d, &l);
    return oom_levers_judge(d);
}

/* The most severe device verdict and its reason; the advice of all devices, each once. */
sd_status sdp_frag_judge_total(sd_frag *f)
{
    sd_frag_device *t = &f->total;
    size_t cap = ADVICE_MAX * (f->n_devices + 1);
    advice_list l = {sdp_frag_calloc(f, cap, sizeof(sd_frag_advice)), 0, cap};
    if (!l.items) return SD_ENOMEM;
    t->verdict = SD_FRAG_COMPACT;
    t->why = (sd_frag_why){.reason = SD_FRAG_WHY_NOTHING_RESERVED, .device = -1};
    const sd_frag_device *worst = NULL;
    for (size_t i = 0; i < f->n_devices; i++) {
        const sd_frag_device *d = &f->devices[i];
        if (!worst || d->verdict > worst->verdict) worst = d;
        for (size_t k = 0; k < d->n_advice; k++) advise(&l, &d->advice[k]);
    }
    if (worst) {
        t->verdict = worst->verdict;
        t->why = worst->why;
        if (f->n_devices > 1) t->why.device = worst->device;
    }
    set_advice(t, &l);
    return SD_OK;
}

const char *sd_frag_verdict_name(sd_frag_verdict v)
{
    switch (v) {
    case SD_FRAG_COMPACT: return "compact";
    case SD_FRAG_FULL: return "full";
    case SD_FRAG_FRAGMENTED: return "fragmented";
    }
    return "compact";
}

