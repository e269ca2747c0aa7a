/* alloc_conf.c - allocator configurations for the allocator model: torch's defaults, the settings a
 * snapshot recorded, and the PYTORCH_CUDA_ALLOC_CONF syntax (as torch's
 * CUDAAllocatorConfig parses it: comma-separated key:value, a bracketed list for
 * roundup_power2_divisions; its ConfigTokenizer drops spaces anywhere). What torch
 * refuses is refused with torch's reason: max_split_size_mb under 20 (20 too before 2.9),
 * keys the chosen version does not know, and backend:cudaMallocAsync, a different
 * allocator that this model is not. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "snapdiff/alloc.h"

#define MIB (1024ULL * 1024)
#define LARGE_BUFFER_MIB 20   /* kLargeBuffer: the least max_split_size_mb */
#define TORCH_2_6 206         /* max_non_split_rounding_mb */
#define TORCH_2_9 209         /* AcceleratorAllocatorConfig: >= 20, ">" after the last */

/* The version's rules: 0 (newest) reads as the newest. */
static bool torch_before(unsigned torch, unsigned version) { return torch && torch < version; }

void sd_alloc_conf_default(sd_alloc_conf *c)
{
    memset(c, 0, sizeof *c);
    c->max_split_size = UINT64_MAX;
    c->max_non_split_rounding = LARGE_BUFFER_MIB * MIB;
}

static unsigned log2_floor(uint64_t v)
{
    unsigned k = 0;
    while (v >>= 1) k++;
    return k;
}

static bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

static unsigned interval_index(uint64_t interval_mib)
{
    unsigned k = log2_floor(interval_mib);
    return k >= SD_ALLOC_CONF_INTERVALS ? SD_ALLOC_CONF_INTERVALS - 1 : k;
}

void sd_alloc_conf_recorded(const sd_snapshot *s, sd_alloc_conf *out)
{
    sd_alloc_conf_default(out);
    const sd_allocator_settings *st = sd_snapshot_allocator_settings(s);
    if (!st || !st->present) return;
    if (st->has_max_split_size && st->max_split_size > 0)
        out->max_split_size = (uint64_t)st->max_split_size;
    if (st->has_expandable_segments) out->expandable_segments = st->expandable_segments;
    if (st->has_gc_threshold && st->garbage_collection_threshold > 0 &&
        st->garbage_collection_threshold < 1)
        out->garbage_collection_threshold = st->garbage_collection_threshold;
    for (size_t i = 0; i < st->n_roundup_power2_divisions; i++) {
        const sd_roundup_division *d = &st->roundup_power2_divisions[i];
        if (is_pow2(d->interval_mib) && d->divisions > 0 && d->divisions <= (1 << 20))
            out->roundup_power2_divisions[interval_index(d->interval_mib)] =
                (uint32_t)d->divisions;
    }
}

/* One unsigned decimal, the whole of [s, e). */
static bool parse_u64(const char *s, const char *e, uint64_t *out)
{
    if (s == e || (size_t)(e - s) > 19) return false;
    uint64_t v = 0;
    for (const char *p = s; p < e; p++) {
        if (*p < '0' || *p > '9') return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *out = v;
    return true;
}

static sd_status bad(sd_error *err, const char *text, const char *what)
{
    return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "--alloc-conf '%.120s': %s", text, what);
}

/* "[256:1,512:2,>:4]" or "4": torch fills the intervals up to each key with its value. */
/* parseRoundUpPower2Divisions: the first named interval also fills those below it; a
 * later one sets only its own (intervals not named keep plain rounding); ">" fills from
 * the last named interval on (torch < 2.9, that one included) or after it (2.9+, where
 * last_index starts at 0, so a lone ">" leaves the first interval plain). */
static sd_status parse_divisions(const char *text, const char *v, const char *e,
                                 unsigned torch, sd_alloc_conf *c, sd_error *err)
{
    uint64_t n;
    if (*v != '[') {
        if (!parse_u64(v, e, &n) || !is_pow2(n) || n > (1u << 20))
            return bad(err, text, "roundup_power2_divisions needs a power of 2 or a list");
        for (unsigned i = 0; i < SD_ALLOC_CONF_INTERVALS; i++) c->roundup_power2_divisions[i] = (uint32_t)n;
        return SD_OK;
    }
    if (e[-1] != ']') return bad(err, text, "roundup_power2_divisions: the list has no ']'");
    const char *p = v + 1, *end = e - 1;
    unsigned last = 0;
    bool first = true;
    unsigned after = torch_before(torch, TORCH_2_9) ? 0 : 1;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        if (!comma) comma = end;
        const char *colon = memchr(p, ':', (size_t)(comma - p));
        uint64_t div;
        if (!colon || !parse_u64(colon + 1, comma, &div) || !is_pow2(div) || div > (1u << 20))
            return bad(err, text, "roundup_power2_divisions: each item is SIZE_MB:DIVISIONS "
                                  "(powers of 2)");
        if (colon - p == 1 && *p == '>') {
            for (unsigned i = last + after; i < SD_ALLOC_CONF_INTERVALS; i++)
                c->roundup_power2_divisions[i] = (uint32_t)div;
        } else {
            uint64_t mib;
            if (!parse_u64(p, colon, &mib) || !is_pow2(mib))
                return bad(err, text, "roundup_power2_divisions: an interval is a power of 2 "
                                      "of MiB, or >");
            unsigned idx = interval_index(mib);
            for (unsigned i = first ? 0 : idx; i <= idx; i++)
                c->roundup_power2_divisions[i] = (uint32_t)div;
            last = idx;
            first = false;
        }
        p = comma + 1;
    }
    return SD_OK;
}

static bool key_is(const char *k, size_t n, const char *name)
{
    return strlen(name) == n && memcmp(k, name, n) == 0;
}

/* A key torch VERSION does not know: its parseArgs ends in "Unrecognized ... option". */
static sd_status unknown_in(sd_error *err, const char *text, const char *key, unsigned since)
{
    char why[128];
    snprintf(why, sizeof why, "%s is unknown before torch %u.%u (--torch), which refuses it",
             key, since / 100, since % 100);
    return bad(err, text, why);
}

static sd_status parse_item(const char *text, const char *k, const char *colon, const char *e,
                            unsigned torch, sd_alloc_conf *c, sd_error *err)
{
    size_t kn = (size_t)(colon - k);
    const char *v = colon + 1;
    uint64_t n;
    if (key_is(k, kn, "expandable_segments")) {
        if (e - v == 4 && memcmp(v, "True", 4) == 0) c->expandable_segments = true;
        else if (e - v == 5 && memcmp(v, "False", 5) == 0) c->expandable_segments = false;
        else return bad(err, text, "expandable_segments is True or False");
    } else if (key_is(k, kn, "max_split_size_mb")) {
        if (!parse_u64(v, e, &n) || n > (UINT64_MAX / MIB))
            return bad(err, text, "max_split_size_mb needs a whole number of MiB");
        if (torch_before(torch, TORCH_2_9) ? n <= LARGE_BUFFER_MIB : n < LARGE_BUFFER_MIB)
            return bad(err, text, torch_before(torch, TORCH_2_9)   /* parseMaxSplitSize */
                                      ? "max_split_size_mb too small, must be > 20 before "
                                        "torch 2.9 (torch refuses it)"
                                      : "max_split_size_mb too small, must be >= 20 (torch "
                                        "refuses it)");
        c->max_split_size = n * MIB;
    } else if (key_is(k, kn, "max_non_split_rounding_mb")) {
        if (torch_before(torch, TORCH_2_6))
            return unknown_in(err, text, "max_non_split_rounding_mb", TORCH_2_6);
        if (!parse_u64(v, e, &n) || n > (UINT64_MAX / MIB))
            return bad(err, text, "max_non_split_rounding_mb needs a whole number of MiB");
        c->max_non_split_rounding = n * MIB;
    } else if (key_is(k, kn, "per_process_memory_fraction")) {
        if (torch_before(torch, TORCH_2_9))
            return unknown_in(err, text, "per_process_memory_fraction", TORCH_2_9);
        char buf[32];
        if (e - v <= 0 || e - v >= (long)sizeof buf)
            return bad(err, text, "per_process_memory_fraction needs a number");
        memcpy(buf, v, (size_t)(e - v));
        buf[e - v] = 0;
        char *end;
        errno = 0;
        double x = strtod(buf, &end);
        if (*end || errno || !(x > 0.0 && x <= 1.0))
            return bad(err, text, "per_process_memory_fraction is above 0 and at most 1");
        c->memory_fraction = x;
    } else if (key_is(k, kn, "backend")) {
        if (!(e - v == 6 && memcmp(v, "native", 6) == 0))
            return bad(err, text, "backend:cudaMallocAsync is CUDA's own allocator, not the "
                                  "caching allocator this replay models");
    } else if (key_is(k, kn, "large_segment_size_mb")) {
        return bad(err, text, "large_segment_size_mb is not modelled by this replay");
    } else if (key_is(k, kn, "garbage_collection_threshold")) {
        char buf[32];
        if (e - v <= 0 || e - v >= (long)sizeof buf)
            return bad(err, text, "garbage_collection_threshold needs a number");
        memcpy(buf, v, (size_t)(e - v));
        buf[e - v] = 0;
        char *end;
        errno = 0;
        double x = strtod(buf, &end);
        if (*end || errno || !(x > 0.0 && x < 1.0))
            return bad(err, text, "garbage_collection_threshold is between 0 and 1");
        c->garbage_collection_threshold = x;
    } else if (key_is(k, kn, "roundup_power2_divisions")) {
        return parse_divisions(text, v, e, torch, c, err);
    } else if (key_is(k, kn, "release_lock_on_cudamalloc") ||
               key_is(k, kn, "release_lock_on_hipmalloc") ||
               key_is(k, kn, "pinned_use_hip_host_register") ||
               key_is(k, kn, "pinned_reserve_segment_size_mb") ||
               key_is(k, kn, "pinned_free_catch_all") ||
               key_is(k, kn, "throw_on_cudamalloc_oom") ||
               key_is(k, kn, "pinned_use_cuda_host_register") ||
               key_is(k, kn, "pinned_num_register_threads") ||
               key_is(k, kn, "pinned_use_background_threads") ||
               key_is(k, kn, "graph_capture_record_stream_reuse") ||
               key_is(k, kn, "roundup_bypass_threshold_mb")) {
        /* known to torch, no effect on the model */
    } else {
        return bad(err, text, "unknown key (expandable_segments, max_split_size_mb, "
                              "max_non_split_rounding_mb, roundup_power2_divisions, "
                              "garbage_collection_threshold, per_process_memory_fraction)");
    }
    return SD_OK;
}

bool sd_torch_version_parse(const char *text, unsigned *out)
{
    if (!text || text[0] < '2' || text[0] > '9' || text[1] != '.') return false;
    const char *p = text + 2;
    unsigned minor = 0, digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 3; p++, digits++) minor = minor * 10 + (unsigned)(*p - '0');
    /* "2.9", "2.10", and a patch level ("2.9.1") that changes nothing here */
    if (!digits || minor >= 100 || (*p && *p != '.')) return false;
    *out = (unsigned)(text[0] - '0') * 100 + minor;
    return true;
}

sd_status sd_alloc_conf_parse(const char *text, sd_alloc_conf *out, sd_error *err)
{
    sd_error_clear(err);
    return sd_alloc_conf_parse_torch(text, 0, out, err);
}

sd_status sd_alloc_conf_parse_torch(const char *text, unsigned torch, sd_alloc_conf *out,
                                    sd_error *err)
{
    sd_error_clear(err);
    sd_alloc_conf_default(out);
    if (!text || !*text) return bad(err, text ? text : "", "empty");
    /* torch's ConfigTokenizer keeps no space: "a:1, b:2" reads as "a:1,b:2". */
    char packed[512];
    size_t np = 0;
    for (const char *q = text; *q; q++) {
        if (*q == ' ') continue;
        if (np + 1 >= sizeof packed) return bad(err, text, "too long");
        packed[np++] = *q;
    }
    packed[np] = 0;
    if (!np) return bad(err, text, "empty");
    const char *p = packed;
    while (*p) {
        /* An item ends at a comma outside brackets. */
        const char *e = p;
        int depth = 0;
        while (*e && (depth || *e != ',')) {
            if (*e == '[') depth++;
            else if (*e == ']' && depth) depth--;
            e++;
        }
        const char *colon = memchr(p, ':', (size_t)(e - p));
        if (!colon || colon == p || colon + 1 == e)
            return bad(err, text, "each item is KEY:VALUE");
        sd_status st = parse_item(text, p, colon, e, torch, out, err);
        if (st != SD_OK) return st;
        p = *e ? e + 1 : e;
    }
    return SD_OK;
}

sd_status sd_replay_options_init(sd_replay_options *opts, unsigned version)
{
    static const sd_replay_options tmpl = SD_REPLAY_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_REPLAY_OPTIONS_VERSION);
}
