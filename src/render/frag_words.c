/* frag_words.c - the verdict reasons and the advice of `snapdiff frag` in English.
 *
 * The analysis hands over codes and numbers (sd_frag_why, sd_frag_advice); this is the
 * one place that words them, for the text, JSON and SVG renderers alike. A renderer that
 * wants to mark numbers up reads them from the same structs. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/format.h"
#include "render/frag_render.h"

/* A bounded string being appended to, snprintf-style: len counts what it would need. */
typedef struct words {
    char *buf;
    size_t size, len;
} words;

static void say(words *w, const char *fmt, ...) SDP_PRINTF(2, 3);
static void say(words *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *at = w->len < w->size ? w->buf + w->len : NULL;
    int n = vsnprintf(at, at ? w->size - w->len : 0, fmt, ap);
    va_end(ap);
    if (n > 0) w->len += (size_t)n;
}

static size_t done(words *w)
{
    if (w->size) w->buf[w->len < w->size ? w->len : w->size - 1] = '\0';
    return w->len;
}

#define B(n) sdp_fmt_bytes(n).s

/* v with `decimals` decimals, more when rounding would blur which side of thr it is on
 * ("30.0% (< 30%)" must read "29.996% (< 30%)"). */
static sdp_text num_vs(double v, double thr, int decimals)
{
    sdp_text out;
    for (;; decimals += 2) {
        snprintf(out.s, sizeof out.s, "%.*f", decimals, v);
        double shown = strtod(out.s, NULL);
        if ((shown < thr) == (v < thr) || decimals >= 9) return out;
    }
}

static const char *cmp(bool over) { return over ? ">=" : "<"; }

static void say_oom(words *w, const sd_frag_oom *oom)
{
    say(w, "the oom at trace entry %zu asked for %s while %s were free in its stream's %s "
        "pool, but the largest free block was %s (%s)", oom->trace_index,
        B(oom->request_bytes), B(oom->free_bytes), oom->small_pool ? "small" : "large",
        B(oom->largest_free_bytes),
        oom->replayed ? "replayed from the trace" : "as the snapshot shows it");
}

static void say_gap(words *w, const sd_frag_why *y)
{
    say(w, "gap %s is %s%% of %s reserved (%s %g%%)", B(y->gap_bytes),
        num_vs(y->gap_pct, y->gap_threshold_pct, 1).s, B(y->reserved_bytes),
        cmp(y->gap_over), y->gap_threshold_pct);
}

/* "at the peak X was reserved for Y live: fragmentation cost Z (P% of it; ...)" */
static void say_cost(words *w, const sd_frag_why *y)
{
    say(w, "at the trace's peak");
    if (y->peak_has_phase && y->peak_step)
        say(w, " (in the %s of step %u)", sd_step_phase_name(y->peak_phase),
            (unsigned)y->peak_step);
    else if (y->peak_has_phase)
        say(w, " (in the %s)", sd_step_phase_name(y->peak_phase));
    say(w, " %s was reserved for %s live: %s over what was live "
        "(%s%% of the peak reserved; fragmentation is material from %s and %g%%, both)",
        B(y->peak_reserved_bytes), B(y->peak_live_bytes), B(y->cost_bytes),
        num_vs(y->cost_pct, y->cost_threshold_pct, 1).s, B(y->cost_floor_bytes),
        y->cost_threshold_pct);
    if (y->has_cost_replay)
        say(w, "; replayed under expandable_segments:True, the trace needs %s less reserved "
            "(%s%% of the peak reserved), which decides", B(y->cost_replay_bytes),
            num_vs(y->peak_reserved_bytes ? 100.0 * (double)y->cost_replay_bytes /
                                                (double)y->peak_reserved_bytes : 0.0,
                   y->cost_threshold_pct, 1).s);
}

/* Without a trace the end state is all there is: at the end of a step most free memory
 * may be the cache of its peak. Say so, and how to get the verdict that weighs the cost. */
static void say_end_state_only(words *w, const sd_frag_why *y)
{
    if (!y->end_state_only) return;
    say(w, ". Judged from the end state alone (no allocation history), the weaker evidence: "
        "record one with torch.cuda.memory._record_memory_history() before the snapshot, and "
        "the verdict weighs what fragmentation cost at the peak");
}

static void say_reason(words *w, const sd_frag_why *y)
{
    sdp_text index = num_vs(y->index, y->index_threshold, 2);
    sdp_text stranded = num_vs(y->stranded_pct, y->stranded_threshold_pct, 1);
    switch (y->reason) {
    case SD_FRAG_WHY_NOTHING_RESERVED: say(w, "nothing is reserved"); return;
    case SD_FRAG_WHY_OOM: say_oom(w, y->oom); return;
    case SD_FRAG_WHY_COST: say_cost(w, y); return;
    case SD_FRAG_WHY_CACHED_FOR_REUSE:
        say(w, "the end state holds %s free (%s stranded in segments with live blocks), but ",
            B(y->free_bytes), B(y->stranded_bytes));
        say_cost(w, y);
        say(w, ": the memory reserved over what is live is cached for reuse by the next "
            "step, not fragmentation");
        return;
    default: break;
    }
    say_gap(w, y);
    switch (y->reason) {
    case SD_FRAG_WHY_STRANDED:
        say(w, ", and %s of free memory (%s%% of reserved; fragmentation needs %s and %g%%) is "
            "stranded in segments that hold live blocks, in small pieces: stranded index %s "
            "(%s %g), largest stranded piece %s", B(y->stranded_bytes), stranded.s,
            B(y->stranded_floor_bytes), y->stranded_threshold_pct, index.s,
            cmp(y->index_over), y->index_threshold, B(y->largest_stranded_bytes));
        break;
    case SD_FRAG_WHY_TINY_LARGEST:
        say(w, " and the largest free block is %s (%llu bytes, under %s): live tensors fill "
            "what is reserved, so more memory would be live tensors, not fragmentation (one "
            "snapshot cannot show a leak)", B(y->largest_free_bytes),
            (unsigned long long)y->largest_free_bytes, sdp_fmt_pow2(y->room_bytes).s);
        break;
    case SD_FRAG_WHY_LITTLE_FREE:
        say(w, " and only %s is free (%s%% of reserved, < %g%%): live tensors fill what is "
            "reserved, so more memory would be live tensors, not fragmentation (one snapshot "
            "cannot show a leak)", B(y->free_bytes),
            num_vs(y->free_pct, y->free_threshold_pct, 1).s, y->free_threshold_pct);
        break;
    case SD_FRAG_WHY_ROOM_TO_SPARE:
        say(w, ", with room to spare (largest free block %s of %s free)",
            B(y->largest_free_bytes), B(y->free_bytes));
        break;
    case SD_FRAG_WHY_LARGE_PIECES:
        say(w, " and %s of free memory (%s%% of reserved) is stranded in segments that hold "
            "live blocks, but in large pieces: stranded index %s (< %g), largest stranded "
            "piece %s", B(y->stranded_bytes), stranded.s, index.s, y->index_threshold,
            B(y->largest_stranded_bytes));
        break;
    case SD_FRAG_WHY_NOT_STRANDED: {
        uint64_t rest = y->free_bytes > y->stranded_bytes ? y->free_bytes - y->stranded_bytes : 0;
        uint64_t tail = y->expandable_tail_bytes < rest ? y->expandable_tail_bytes : rest;
        say(w, ", but only %s of free memory (%s%% of reserved) is stranded in segments that "
            "hold live blocks (fragmentation needs %s and %g%%); the rest, %s, is cached",
            B(y->stranded_bytes), stranded.s, B(y->stranded_floor_bytes),
            y->stranded_threshold_pct, B(rest));
        /* An expandable segment's free pages are its free tail, in a segment that is in
         * use: not a wholly free segment, though release_blocks unmaps them as well. */
        if (tail == rest)
            say(w, " as the free tail of live expandable segments (whole free pages)");
        else if (tail)
            say(w, ": %s in wholly free segments and %s as the free tail of live expandable "
                "segments (whole free pages)", B(rest - tail), B(tail));
        else
            say(w, " in wholly free segments");
        say(w, ", which the allocator releases itself before it reports out of memory");
        break;
    }
    default: break;
    }
    say_end_state_only(w, y);
}

size_t sd_frag_explain(const sd_frag_why *why, char *buf, size_t size)
{
    words w = {buf, size, 0};
    if (why->device >= 0) say(&w, "device %lld: ", (long long)why->device);
    say_reason(&w, why);
    return done(&w);
}

/* A histogram bucket as the advice names it: "< 1 KiB", "4.0 KiB", ">= 1.0 GiB". */
static void say_bucket(words *w, size_t i)
{
    uint64_t lo, hi;
    sd_frag_bucket_bounds(i, &lo, &hi);
    if (i == 0) say(w, "< 1 KiB");
    else if (!hi) say(w, ">= %s", B(lo));
    else say(w, "%s", B(lo));
}

size_t sd_frag_advice_text(const sd_frag_advice *a, char *buf, size_t size)
{
    words w = {buf, size, 0};
    if (a->replayed && (a->code == SD_ADVICE_EXPANDABLE_SEGMENTS ||
                        a->code == SD_ADVICE_MAX_SPLIT_SIZE)) {
        say(&w, "Set PYTORCH_CUDA_ALLOC_CONF=%s%s: replaying this trace under it (snapdiff "
            "replay) measures peak reserved %s -> %s",
            a->code == SD_ADVICE_EXPANDABLE_SEGMENTS ? "expandable_segments:True"
                                                     : "max_split_size_mb:512",
            a->code == SD_ADVICE_EXPANDABLE_SEGMENTS && !a->settings_recorded
                ? " (if not already on: this file does not record the allocator settings)" : "",
            B(a->recorded_peak_reserved_bytes), B(a->peak_reserved_bytes));
        if (a->ooms)
            say(&w, "; %zu of the %zu oom entries would have succeeded", a->ooms_avoided,
                a->ooms);
        return done(&w);
    }
    switch (a->code) {
    case SD_ADVICE_REPLAY_NO_SETTING:
        say(&w, "The replay shows no setting avoids this OOM: replayed under "
            "expandable_segments:True and under max_split_size_mb:512, each of the %zu oom "
            "entries still fails. Shrink the largest sites live at the oom", a->ooms);
        if (a->replay_warm_start)
            say(&w, " (the trace begins after its segments were cut: a run started under a "
                "setting may lay them out otherwise, which this trace cannot show)");
        break;
    case SD_ADVICE_EXPANDABLE_SEGMENTS:
        say(&w, "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True%s: segments then grow "
            "in place instead of leaving slivers between tensors of changing sizes",
            a->settings_recorded ? "" : " (if not already on: this file does not record the "
                                        "allocator settings)");
        break;
    case SD_ADVICE_MAX_SPLIT_SIZE:
        say(&w, "Try PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512: %s of the %s stranded free "
            "memory sits in large segments (>= 512 MiB) carved up by smaller tensors; blocks "
            "of 512 MiB and more are then never split (a much smaller value hurts large "
            "tensors)", B(a->bytes), B(a->of_bytes));
        break;
    case SD_ADVICE_FIXED_SHAPES:
        say(&w, "Bucket or pad variable-length inputs to a few fixed shapes: %llu free blocks "
            "spread over %zu size classes (", (unsigned long long)a->free_blocks, a->n_buckets);
        say_bucket(&w, a->first_bucket);
        say(&w, " to ");
        say_bucket(&w, a->last_bucket);
        say(&w, ") show tensors of ever-changing sizes");
        break;
    case SD_ADVICE_ROUND_SIZES:
        say(&w, "expandable_segments is already on: round tensor sizes up to a few shapes "
            "(multiples of 8 in the varying dimension) and reuse buffers of fixed shape");
        break;
    case SD_ADVICE_GROWTH:
        say(&w, "Full, not fragmented: allocator settings will not help. One snapshot cannot "
            "show a leak; compare two snapshots (snapdiff OLD NEW) to see which allocation "
            "site grows");
        break;
    case SD_ADVICE_OOM_AT_START:
        say(&w, "The run ran out of memory at its start (the trace reaches back to it): it "
            "asked for %s with %s free on the device and in the allocator together. Shrink "
            "the largest sites live at the oom (batch size, sequence length, activation "
            "checkpointing, sharding) or use a device with more memory", B(a->bytes),
            B(a->of_bytes));
        break;
    case SD_ADVICE_NO_EMPTY_CACHE:
        say(&w, "Do not call torch.cuda.empty_cache() as a fix: it would return only %s of %s "
            "reserved (free segments and pages with no live block), which the allocator would "
            "soon reserve again", B(a->bytes), B(a->of_bytes));
        break;
    }
    return done(&w);
}

static const char *stop_words(sd_replay_stop stop)
{
    switch (stop) {
    case SD_REPLAY_MAP_TOO_BIG: return "segment smaller than the mapping";
    case SD_REPLAY_MAP_NO_SEGMENT: return "no segment holds the mapping";
    case SD_REPLAY_BLOCK_LIVE_LATER: return "block is live later";
    case SD_REPLAY_NO_SEGMENT_LATER: return "no such segment later";
    case SD_REPLAY_SEGMENT_LATER: return "segment exists later";
    case SD_REPLAY_NO_BLOCK_LATER: return "no live block there later";
    default: return "";
    }
}

size_t sd_frag_oom_note(const sd_frag_oom *o, char *buf, size_t size)
{
    words w = {buf, size, 0};
    if (o->stop == SD_REPLAY_PAST_LIMIT)
        say(&w, "replay is limited to the last %d oom entries", SD_FRAG_OOM_REPLAY_LIMIT);
    else if (o->stop != SD_REPLAY_DONE)
        say(&w, "trace entry %zu (%s at 0x%llx): %s", o->stop_index,
            sd_trace_action_name((sd_trace_action)o->stop_action),
            (unsigned long long)o->stop_addr, stop_words(o->stop));
    return done(&w);
}

const sd_frame *sdp_frag_oom_frame(const sd_snapshot *s, const sd_frag_oom *o, int32_t i)
{
    size_t n = 0;
    const uint32_t *ids = o->stack ? sd_snapshot_stack(s, o->stack, &n) : NULL;
    if (!ids || i < 0 || (size_t)i >= n) return NULL;
    return sd_snapshot_frame(s, ids[i]);
}

size_t sd_frag_oom_site(const sd_snapshot *s, const sd_frag_oom *o, char *buf, size_t size)
{
    words w = {buf, size, 0};
    char label[512];
    if (sdp_frag_oom_frame(s, o, o->site.site)) {
        sd_site_text(s, o->stack, &o->site, label, sizeof label);
        say(&w, "%s", label);
    }
    return done(&w);
}

sdp_frag_words sdp_frag_oom_site_words(const sd_snapshot *s, const sd_frag_oom *o)
{
    sdp_frag_words t;
    sd_frag_oom_site(s, o, t.s, sizeof t.s);
    return t;
}

sdp_frag_words sdp_frag_oom_note_words(const sd_frag_oom *o)
{
    sdp_frag_words t;
    sd_frag_oom_note(o, t.s, sizeof t.s);
    return t;
}

sdp_frag_words sdp_frag_why_words(const sd_frag_why *why)
{
    sdp_frag_words t;
    sd_frag_explain(why, t.s, sizeof t.s);
    return t;
}

sdp_frag_words sdp_frag_advice_words(const sd_frag_advice *a)
{
    sdp_frag_words t;
    sd_frag_advice_text(a, t.s, sizeof t.s);
    return t;
}

const sd_frag_device *sdp_frag_device_of(const sd_frag *f, int64_t device)
{
    for (size_t i = 0; f && i < sd_frag_device_count(f); i++)
        if (sd_frag_device_at(f, i)->device == device) return sd_frag_device_at(f, i);
    return NULL;
}
