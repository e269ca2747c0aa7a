/* snapshot.c - loading a snapshot and the read-only accessors of the model. */
#include <stdio.h>
#include <stdlib.h>

#include "model/memo.h"
#include "model/model.h"
#include "source/source_internal.h"
#include "snapdiff/summary.h"

/* The end of a load: the value tree and every lookup structure go, the model stays. */
static void load_end(sd_snapshot *s)
{
    if (!s || !s->load) return;
    sdp_intern_drop_indexes(s);
    free(s->load->layouts);
    sdp_arena_free(&s->load->pickle);
    free(s->load);
    s->load = NULL;
}

/* Trace records grew by doubling: give back the unused tail once parsing is done, before
 * the devices point into the array. */
static void shrink_records(sd_snapshot *s)
{
    sdp_model_trim_records(s);
}

static sd_snapshot *load_fail(sd_snapshot *s, sd_error *err, const char *source)
{
    sdp_error_set_source(err, source);
    sd_snapshot_free(s);
    return NULL;
}

/* Parse, then build the model, then free the value tree. `consumed` (may be NULL) is
 * freed as soon as the parse is done: the tree holds copies of its strings. */
static sd_snapshot *load_impl(const uint8_t *data, size_t len, const char *source,
                              const sd_load_options *opts, sd_error *err, sd_bytes *consumed)
{
    if (!source) source = "<buffer>";
    sd_snapshot *s = calloc(1, sizeof *s);
    sdp_load *L = calloc(1, sizeof *L);
    size_t n = strlen(source);
    char *src = malloc(n + 1);
    if (!s || !L || !src) {
        if (consumed) sd_bytes_release(consumed);
        free(s);
        free(L);
        free(src);
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        sdp_error_set_source(err, source);
        return NULL;
    }
    memcpy(src, source, n + 1);
    s->source = src;
    s->load = L;
    /* The whole load is charged to the value tree's arena; the model's arena holds no
     * budget of its own (nothing is allocated in it after the load). */
    sdp_arena_init(&L->pickle, opts ? opts->max_memory : 0);
    sdp_arena_init(&s->arena, 0);
    L->err = err;
    if (len >= 2 && data[0] == 'P' && data[1] == 'K') {
        if (consumed) sd_bytes_release(consumed);
        sdp_fail(err, SD_EFORMAT, 0, "this is a zip archive; open it by path (snapdiff reads "
                 "torch.save zips and archives of snapshots)");
        return load_fail(s, err, source);
    }
    if (sd_summary_sniff(data, len)) {   /* a baseline summary: no pickle to parse */
        sd_status st = sdp_summary_build(s, data, len, err);
        if (consumed) sd_bytes_release(consumed);
        if (st != SD_OK) return load_fail(s, err, source);
        load_end(s);
        return s;
    }
    sdp_record_hook hook = sdp_model_record_hook(s);
    uint64_t n_values = 0;
    sd_status st = sdp_intern_init(s);
    if (st == SD_OK)
        st = sdp_pickle_parse_into(&L->pickle, data, len,
                                   sdp_bytes_mapped(consumed) ? SDP_PARSE_RELEASE_BEHIND : 0,
                                   &hook, &L->root, &L->trailing, &L->proto, &n_values, err);
    if (consumed) sd_bytes_release(consumed);
    if (st == SD_OK) shrink_records(s);
    if (st != SD_OK || sdp_model_build(s) != SD_OK) return load_fail(s, err, source);
    if (L->trailing)
        sdp_model_warn(s, "%llu bytes after the pickle's STOP were ignored",
                       (unsigned long long)L->trailing);
    load_end(s);
    return s;
}

sd_status sd_load_options_init(sd_load_options *opts, unsigned version)
{
    static const sd_load_options tmpl = SD_LOAD_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_LOAD_OPTIONS_VERSION);
}

sd_snapshot *sd_snapshot_load_buffer(const uint8_t *data, size_t len, const char *source,
                                     const sd_load_options *opts, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_LOAD_OPTIONS_VERSION, "sd_load_options", err)) return NULL;
    return load_impl(data, len, source, opts, err, NULL);
}

sd_snapshot *sd_snapshot_load_input(sd_input *in, size_t i, const sd_load_options *opts,
                                    sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_LOAD_OPTIONS_VERSION, "sd_load_options", err)) return NULL;
    sd_bytes b;
    if (sd_input_read(in, i, &b, err) != SD_OK) return NULL;
    return load_impl(b.data, b.len, sd_input_name(in, i), opts, err, &b);
}

sd_snapshot *sd_snapshot_load_file(const char *spec, const sd_load_options *opts, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_LOAD_OPTIONS_VERSION, "sd_load_options", err)) return NULL;
    sd_input_options io = {.max_memory = opts ? opts->max_memory : 0};
    sd_input *in = sd_input_open(spec, &io, err);
    if (!in) return NULL;
    sd_snapshot *s = NULL;
    if (sd_input_count(in) != 1) {
        sdp_error_set_source(err, spec);
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "holds %zu snapshots; pick one with %s:MEMBER",
                 sd_input_count(in), spec);
    } else {
        s = sd_snapshot_load_input(in, 0, opts, err);
    }
    sd_input_free(in);
    return s;
}


void sd_snapshot_free(sd_snapshot *s)
{
    if (!s) return;
    load_end(s);
    sdp_intern_free(s);
    sdp_model_free_records(s);
    free(s->pools);
    sdp_arena_free(&s->arena);
    free(s->source);
    free(s);
}

const char *sd_snapshot_source(const sd_snapshot *s) { return s->source; }
bool sd_snapshot_is_legacy_list(const sd_snapshot *s) { return s->legacy_list; }
bool sd_snapshot_is_summary(const sd_snapshot *s) { return s->is_summary; }
const char *sd_snapshot_origin(const sd_snapshot *s) { return s->origin ? s->origin : s->source; }

uint64_t sd_snapshot_trace_recorded(const sd_snapshot *s, size_t i)
{
    if (i >= s->n_devices) return 0;
    return s->trace_recorded ? s->trace_recorded[i] : s->devices[i].n_trace;
}
size_t sd_snapshot_device_count(const sd_snapshot *s) { return s->n_devices; }

const sd_cuda_device *sd_snapshot_device(const sd_snapshot *s, size_t i)
{
    return i < s->n_devices ? &s->devices[i] : NULL;
}

uint64_t sd_snapshot_oom_count(const sd_snapshot *s)
{
    uint64_t n = 0;
    for (size_t i = 0; s && i < s->n_devices; i++) {
        const sd_cuda_device *dev = &s->devices[i];
        for (size_t k = 0; k < dev->n_trace; k++) n += dev->trace[k].action == SD_ACT_OOM;
    }
    return n;
}

size_t sd_snapshot_foreign_key_count(const sd_snapshot *s) { return s ? s->n_foreign_keys : 0; }
const char *sd_snapshot_foreign_key(const sd_snapshot *s, size_t i)
{
    return s && i < s->n_foreign_keys ? s->foreign_keys[i] : NULL;
}

size_t sd_snapshot_stack_count(const sd_snapshot *s) { return s->n_stacks; }

const uint32_t *sd_snapshot_stack(const sd_snapshot *s, uint32_t id, size_t *n_frames)
{
    if (id >= s->n_stacks) {
        *n_frames = 0;
        return NULL;
    }
    *n_frames = s->stack_start[id + 1] - s->stack_start[id];
    /* No frames at all leaves stack_frames NULL, and NULL + 0 is undefined. */
    return *n_frames ? s->stack_frames + s->stack_start[id] : NULL;
}

const sd_frame *sd_snapshot_frame(const sd_snapshot *s, uint32_t frame_id)
{
    return frame_id < s->n_frames ? &s->frames[frame_id] : NULL;
}

const sd_stack_context *sd_snapshot_stack_context(const sd_snapshot *s, uint32_t id)
{
    static const sd_stack_context none = {0, "", ""};
    return id < s->n_stack_ctx ? &s->stack_ctx[id] : &none;
}

const sd_allocator_settings *sd_snapshot_allocator_settings(const sd_snapshot *s)
{
    return &s->settings;
}

const sd_cuda_device *sd_snapshot_host_memory(const sd_snapshot *s)
{
    return s->has_host ? &s->host : NULL;
}

/* pool went into the padding after has_time: a 0.3 caller's stride must not change. */
_Static_assert(sizeof(sd_trace_entry) == 40, "sd_trace_entry keeps its 0.3 size");

size_t sd_snapshot_pool_count(const sd_snapshot *s) { return s->n_pools; }

bool sd_snapshot_pool(const sd_snapshot *s, size_t i, int64_t id[2])
{
    if (i >= s->n_pools) return false;
    id[0] = s->pools[i][0];
    id[1] = s->pools[i][1];
    return true;
}

bool sd_snapshot_skipped_actions(const sd_snapshot *s, uint32_t *mask)
{
    if (mask) *mask = s->has_skip ? s->skip_mask : 0;
    return s->has_skip;
}

#define ACT(a) (1u << SD_ACT_##a)

size_t sd_skip_unreliable_figures(uint32_t mask, const char **figures, size_t cap)
{
    /* Which actions each figure read from the trace is built from: without them it
     * counts what was not recorded as never having happened. A block is released by its
     * first free_requested or free_completed, so the frees are gone only when both are
     * (FREES, a bit no action uses). */
    enum { FREES = 1u << 31 };
    static const struct { const char *figure; uint32_t actions; } table[] = {
        {"the trace's peak", ACT(ALLOC) | FREES},
        {"leak and lifetime figures from the trace", ACT(ALLOC) | FREES},
        {"allocation counts and sites from the trace", ACT(ALLOC)},
        {"reserved memory over the trace",
         ACT(SEGMENT_ALLOC) | ACT(SEGMENT_FREE) | ACT(SEGMENT_MAP) | ACT(SEGMENT_UNMAP)},
        {"replay", ACT(ALLOC) | ACT(FREE_REQUESTED) | ACT(FREE_COMPLETED) | ACT(SEGMENT_ALLOC) |
                   ACT(SEGMENT_FREE) | ACT(SEGMENT_MAP) | ACT(SEGMENT_UNMAP)},
        {"the oom count (none seen is not none happened)", ACT(OOM)},
        {"phases split at snapshot and annotate entries", ACT(SNAPSHOT) | ACT(ANNOTATE)},
    };
    if ((mask & ACT(FREE_REQUESTED)) && (mask & ACT(FREE_COMPLETED))) mask |= FREES;
    size_t n = 0;
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        if (!(mask & table[i].actions)) continue;
        if (n < cap && figures) figures[n] = table[i].figure;
        n++;
    }
    return n;
}

#undef ACT

size_t sd_snapshot_annotation_count(const sd_snapshot *s) { return s->n_annotations; }

const sd_annotation *sd_snapshot_annotation(const sd_snapshot *s, size_t i)
{
    return i < s->n_annotations ? &s->annotations[i] : NULL;
}

size_t sd_snapshot_warning_count(const sd_snapshot *s)
{
    return s->n_warnings + (s->warnings_dropped ? 1 : 0);
}

const char *sd_snapshot_warning(const sd_snapshot *s, size_t i)
{
    if (i < s->n_warnings) return s->warnings[i];
    if (i == s->n_warnings && s->warnings_dropped) return "more inconsistencies not shown";
    return NULL;
}

const char *sd_block_state_name(sd_block_state st)
{
    switch (st) {
    case SD_BLOCK_INACTIVE: return "inactive";
    case SD_BLOCK_ALLOCATED: return "active_allocated";
    case SD_BLOCK_PENDING_FREE: return "active_pending_free";
    case SD_BLOCK_OTHER: break;
    }
    return "other";
}

const char *sd_trace_action_name(sd_trace_action a)
{
    static const char *const names[] = {
        "alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
        "segment_map", "segment_unmap", "oom", "snapshot", "annotate", "other"};
    return (unsigned)a < SDP_ARRAY_LEN(names) ? names[a] : "other";
}

/* ---------- memo.h ---------- */

const sd_frame *sdp_snapshot_frames(const sd_snapshot *s, size_t *n)
{
    *n = s->n_frames;
    return s->frames;
}

enum { MEMO_EMPTY, MEMO_WRITING, MEMO_SET };

bool sdp_snapshot_label_prefix(const sd_snapshot *s, const char **prefix, size_t *len)
{
    if (atomic_load_explicit(&s->label_prefix_state, memory_order_acquire) != MEMO_SET)
        return false;
    *prefix = s->label_prefix;
    *len = s->label_prefix_len;
    return true;
}

void sdp_snapshot_set_label_prefix(const sd_snapshot *s, const char *prefix, size_t len)
{
    /* A cache on a snapshot its readers hold const: the memo is not part of the model. */
    sd_snapshot *w = (sd_snapshot *)s;
    int was = MEMO_EMPTY;
    if (!atomic_compare_exchange_strong(&w->label_prefix_state, &was, MEMO_WRITING)) {
        was = MEMO_SET;   /* a shorter prefix shared with other files replaces a file's own */
        if (!atomic_compare_exchange_strong(&w->label_prefix_state, &was, MEMO_WRITING)) return;
    }
    w->label_prefix = prefix;
    w->label_prefix_len = len;
    atomic_store_explicit(&w->label_prefix_state, MEMO_SET, memory_order_release);
}
