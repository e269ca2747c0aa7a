/* summary.c - writing a snapshot's summary (summary.h, docs/summary.md) with msgpack-c.
 *
 * What is kept is decided here and nowhere else: every segment and block, the stacks,
 * frames and strings they (and the kept trace entries) reference, renumbered in their
 * original order so that "the lowest stack id" ties break the same way on reading, and
 * the trace entries the diff and the oom analysis read. The digest beside it is computed
 * by the analyses themselves (stats, groups, frag) and never read back.
 */
#include <msgpack.h>
#include <stdlib.h>

#include "base/base.h"
#include "analysis/diff_internal.h"
#include "model/summary_keys.h"
#include "snapdiff/frag.h"
#include "snapdiff/groups.h"
#include "snapdiff/stats.h"
#include "snapdiff/summarize.h"

#define NO_ID UINT32_MAX

typedef struct writer {
    const sd_snapshot *s;
    msgpack_sbuffer buf;
    msgpack_packer pk;
    sd_error *err;
    bool failed;                  /* msgpack-c could not grow its buffer */
    uint32_t *stack_id;           /* old stack id -> new id, NO_ID when not kept */
    size_t n_stacks, n_kept_stacks;
    uint32_t *frame_id;           /* old frame id -> new id, NO_ID when not kept */
    size_t n_frames, n_kept_frames;
    const char **strings;         /* kept strings, by new id (interned: one pointer each) */
    size_t n_strings, strings_cap;
    sdp_htab string_index;
    size_t *trace_from;           /* per device: the first kept trace entry (see keep_trace) */
    size_t *newest;               /* per device: the newest-timed entry (n_trace: none) */
} writer;

/* ---------- packing: failures are sticky, checked once at the end ---------- */

static void track(writer *w, int rc) { if (rc != 0) w->failed = true; }
static void map(writer *w, size_t n) { track(w, msgpack_pack_map(&w->pk, n)); }
static void arr(writer *w, size_t n) { track(w, msgpack_pack_array(&w->pk, n)); }
static void u64(writer *w, uint64_t v) { track(w, msgpack_pack_uint64(&w->pk, v)); }
static void i64(writer *w, int64_t v) { track(w, msgpack_pack_int64(&w->pk, v)); }
static void dbl(writer *w, double v) { track(w, msgpack_pack_double(&w->pk, v)); }
static void nil(writer *w) { track(w, msgpack_pack_nil(&w->pk)); }
static void boolean(writer *w, bool b)
{
    track(w, b ? msgpack_pack_true(&w->pk) : msgpack_pack_false(&w->pk));
}
static void strn(writer *w, const char *p, size_t n)
{
    track(w, msgpack_pack_str_with_body(&w->pk, p ? p : "", p ? n : 0));
}
static void str(writer *w, const char *p) { strn(w, p, p ? strlen(p) : 0); }
static void key(writer *w, const char *k) { str(w, k); }

/* ---------- what is kept ---------- */

/* The trace entries kept of one device: from the first oom entry to the end (the oom
 * analysis replays the trace backwards from the end down to it), and before it only the
 * newest-timed entry (the diff's `swapped` check and series' time order read it). */
static void keep_trace(writer *w, size_t d, const sd_cuda_device *dev)
{
    size_t first_oom = dev->n_trace, newest = dev->n_trace;
    for (size_t i = 0; i < dev->n_trace; i++) {
        const sd_trace_entry *e = &dev->trace[i];
        if (e->action == SD_ACT_OOM && first_oom == dev->n_trace) first_oom = i;
        if (e->has_time && (newest == dev->n_trace || e->time_us > dev->trace[newest].time_us))
            newest = i;
    }
    w->trace_from[d] = first_oom;
    w->newest[d] = newest < first_oom ? newest : dev->n_trace;
}

static size_t kept_trace_count(const writer *w, size_t d, const sd_cuda_device *dev)
{
    return dev->n_trace - w->trace_from[d] + (w->newest[d] < dev->n_trace);
}

static void mark_stack(writer *w, uint32_t id)
{
    if (id >= w->n_stacks || w->stack_id[id] != NO_ID) return;
    w->stack_id[id] = 0;   /* marked; numbered below */
    uint32_t fwd = sd_snapshot_stack_context(w->s, id)->forward_stack;
    if (fwd) mark_stack(w, fwd);   /* a forward stack has no forward stack of its own */
}

static void mark_trace_entry(writer *w, const sd_trace_entry *e) { mark_stack(w, e->stack); }

static void mark_layout(writer *w, const sd_cuda_device *dev)
{
    for (size_t i = 0; i < dev->n_segments; i++) mark_stack(w, dev->segments[i].stack);
    for (size_t i = 0; i < dev->n_blocks; i++) mark_stack(w, dev->blocks[i].stack);
}

static void mark_device(writer *w, size_t d, const sd_cuda_device *dev)
{
    mark_layout(w, dev);
    if (w->newest[d] < dev->n_trace) mark_trace_entry(w, &dev->trace[w->newest[d]]);
    for (size_t i = w->trace_from[d]; i < dev->n_trace; i++) mark_trace_entry(w, &dev->trace[i]);
}

static uint64_t string_hash(const char *p)
{
    uint64_t h = sdp_hash_bytes(SDP_HASH_SEED, p, strlen(p));
    return h ^ (h >> 29);   /* FNV's low bits are weak; the table indexes by them */
}

static uint64_t string_hash_id(const void *ctx, uint32_t id)
{
    const writer *w = ctx;
    return string_hash(w->strings[id]);
}

/* The new id of a string, by content: the same text is one string however the model
 * holds it (its "" of an empty context is not the pool's ""), so that a summary of a
 * summary is the same summary. */
static sd_status string_of(writer *w, const char *p, uint32_t *out)
{
    uint64_t h = string_hash(p);
    sdp_htab *t = &w->string_index;
    size_t j = sdp_htab_first(t, h);
    for (; t->slots[j]; j = sdp_htab_next(t, j))
        if (strcmp(w->strings[t->slots[j] - 1], p) == 0) {
            *out = t->slots[j] - 1;
            return SD_OK;
        }
    SDP_TRY(sdp_grow((void **)&w->strings, &w->strings_cap, w->n_strings + 1,
                          sizeof *w->strings, NULL));
    *out = (uint32_t)w->n_strings;
    w->strings[w->n_strings++] = p;
    sdp_htab_put(t, j, *out);
    return sdp_htab_reserve_one(t, string_hash_id, w);
}

/* Number the marked stacks, then the frames they use, then the strings, in order. */
static sd_status number_kept(writer *w)
{
    w->stack_id[0] = 0;
    for (size_t i = 0; i < w->n_stacks; i++) {
        if (w->stack_id[i] == NO_ID) continue;
        w->stack_id[i] = (uint32_t)w->n_kept_stacks++;
        size_t n;
        const uint32_t *ids = sd_snapshot_stack(w->s, (uint32_t)i, &n);
        for (size_t k = 0; k < n; k++)
            if (ids[k] < w->n_frames) w->frame_id[ids[k]] = 0;
    }
    for (size_t i = 0; i < w->n_frames; i++)
        if (w->frame_id[i] != NO_ID) w->frame_id[i] = (uint32_t)w->n_kept_frames++;
    uint32_t ignored;
    for (size_t i = 0; i < w->n_frames; i++) {
        if (w->frame_id[i] == NO_ID) continue;
        const sd_frame *f = sd_snapshot_frame(w->s, (uint32_t)i);
        SDP_TRY(string_of(w, f->filename, &ignored));
        SDP_TRY(string_of(w, f->name, &ignored));
    }
    for (size_t i = 0; i < w->n_stacks; i++) {
        if (w->stack_id[i] == NO_ID) continue;
        const sd_stack_context *c = sd_snapshot_stack_context(w->s, (uint32_t)i);
        if (!c->forward_stack && !c->user_metadata[0] && !c->compile_context[0]) continue;
        SDP_TRY(string_of(w, c->user_metadata, &ignored));
        SDP_TRY(string_of(w, c->compile_context, &ignored));
    }
    return SD_OK;
}

static uint32_t new_stack(const writer *w, uint32_t id)
{
    return id < w->n_stacks && w->stack_id[id] != NO_ID ? w->stack_id[id] : 0;
}

static uint32_t known_string(writer *w, const char *p)
{
    uint32_t id = 0;
    string_of(w, p, &id);   /* numbered in number_kept: a lookup that cannot fail */
    return id;
}

/* ---------- the model part ---------- */

static void pack_strings_frames_stacks(writer *w)
{
    key(w, SDP_SK_STRINGS);
    arr(w, w->n_strings);
    for (size_t i = 0; i < w->n_strings; i++) str(w, w->strings[i]);
    key(w, SDP_SK_FRAMES);     /* [filename, name, line]: string ids */
    arr(w, w->n_kept_frames);
    for (size_t i = 0; i < w->n_frames; i++) {
        if (w->frame_id[i] == NO_ID) continue;
        const sd_frame *f = sd_snapshot_frame(w->s, (uint32_t)i);
        arr(w, 3);
        u64(w, known_string(w, f->filename));
        u64(w, known_string(w, f->name));
        i64(w, f->line);
    }
    key(w, SDP_SK_STACKS);     /* frame ids, innermost first; stack 0 is the empty stack */
    arr(w, w->n_kept_stacks);
    size_t n_ctx = 0;
    for (size_t i = 0; i < w->n_stacks; i++) {
        if (w->stack_id[i] == NO_ID) continue;
        size_t n;
        const uint32_t *ids = sd_snapshot_stack(w->s, (uint32_t)i, &n);
        arr(w, n);
        for (size_t k = 0; k < n; k++) u64(w, w->frame_id[ids[k]]);
        const sd_stack_context *c = sd_snapshot_stack_context(w->s, (uint32_t)i);
        n_ctx += c->forward_stack || c->user_metadata[0] || c->compile_context[0];
    }
    key(w, SDP_SK_CONTEXTS);   /* [stack, forward stack, user_metadata, compile_context] */
    arr(w, n_ctx);
    for (size_t i = 0; i < w->n_stacks; i++) {
        if (w->stack_id[i] == NO_ID) continue;
        const sd_stack_context *c = sd_snapshot_stack_context(w->s, (uint32_t)i);
        if (!c->forward_stack && !c->user_metadata[0] && !c->compile_context[0]) continue;
        arr(w, 4);
        u64(w, w->stack_id[i]);
        u64(w, new_stack(w, c->forward_stack));
        u64(w, known_string(w, c->user_metadata));
        u64(w, known_string(w, c->compile_context));
    }
}

static void pack_trace_entry(writer *w, const sd_trace_entry *e)
{
    arr(w, 6);   /* [action, addr (oom: device_free), size, stream, time_us or nil, stack] */
    u64(w, e->action);
    u64(w, e->addr);
    u64(w, e->size);
    u64(w, e->stream);
    if (e->has_time) i64(w, e->time_us);
    else nil(w);
    u64(w, new_stack(w, e->stack));
}

/* segments and blocks: a device's, and the pinned host memory's. */
static void pack_layout(writer *w, const sd_cuda_device *dev)
{
    key(w, SDP_SK_SEGMENTS);   /* [address, total_size, stream, pool_id or nil, flags, stack,
                           *  first_block, n_blocks]; flags: 1 small, 2 expandable */
    arr(w, dev->n_segments);
    for (size_t i = 0; i < dev->n_segments; i++) {
        const sd_segment *g = &dev->segments[i];
        arr(w, 8);
        u64(w, g->address);
        u64(w, g->total_size);
        u64(w, g->stream);
        if (g->has_pool_id) {
            arr(w, 2);
            i64(w, g->pool_id[0]);
            i64(w, g->pool_id[1]);
        } else {
            nil(w);
        }
        u64(w, (g->is_small ? 1u : 0u) | (g->is_expandable ? 2u : 0u));
        u64(w, new_stack(w, g->stack));
        u64(w, g->first_block);
        u64(w, g->n_blocks);
    }
    key(w, SDP_SK_BLOCKS);     /* [address, size, requested_size, state, segment, stack] */
    arr(w, dev->n_blocks);
    for (size_t i = 0; i < dev->n_blocks; i++) {
        const sd_block *b = &dev->blocks[i];
        arr(w, 6);
        u64(w, b->address);
        u64(w, b->size);
        u64(w, b->requested_size);
        u64(w, b->state);
        u64(w, b->segment);
        u64(w, new_stack(w, b->stack));
    }
}

static void pack_device(writer *w, size_t d, const sd_cuda_device *dev)
{
    map(w, 5);
    key(w, SDP_SK_DEVICE);
    i64(w, dev->device);
    pack_layout(w, dev);
    key(w, SDP_SK_TRACE_ENTRIES);   /* in the snapshot; `trace` keeps only some */
    u64(w, sd_snapshot_trace_recorded(w->s, d));
    key(w, SDP_SK_TRACE);
    arr(w, kept_trace_count(w, d, dev));
    if (w->newest[d] < dev->n_trace) pack_trace_entry(w, &dev->trace[w->newest[d]]);
    for (size_t i = w->trace_from[d]; i < dev->n_trace; i++) pack_trace_entry(w, &dev->trace[i]);
}

/* A recorded setting, as the natural msgpack value. */
static void pack_setting(writer *w, const sd_setting *v)
{
    switch (v->type) {
    case SD_SETTING_BOOL: boolean(w, v->b); return;
    case SD_SETTING_INT: i64(w, v->i); return;
    case SD_SETTING_FLOAT: dbl(w, v->f); return;
    case SD_SETTING_STR: strn(w, v->str, v->str_len); return;
    case SD_SETTING_LIST:
        arr(w, v->n_items);
        for (size_t i = 0; i < v->n_items; i++) pack_setting(w, &v->items[i]);
        return;
    case SD_SETTING_DICT:
        map(w, v->n_items);
        for (size_t i = 0; i < v->n_items; i++) {
            strn(w, v->items[i].key, v->items[i].key_len);
            pack_setting(w, &v->items[i]);
        }
        return;
    default: nil(w); return;
    }
}

static void pack_settings(writer *w)
{
    const sd_allocator_settings *a = sd_snapshot_allocator_settings(w->s);
    key(w, SDP_SK_SETTINGS);
    if (!a->present) {
        nil(w);
        return;
    }
    /* The typed fields are read from `recorded` again on loading, as from the pickle,
     * except the two that keep what the pickle reader made of them. */
    map(w, 3);
    key(w, SDP_SK_ALLOC_CONF);
    if (a->alloc_conf) str(w, a->alloc_conf);
    else nil(w);
    key(w, SDP_SK_ROUNDUP);
    if (a->has_roundup_power2_divisions) {
        arr(w, a->n_roundup_power2_divisions);
        for (size_t i = 0; i < a->n_roundup_power2_divisions; i++) {
            arr(w, 2);
            u64(w, a->roundup_power2_divisions[i].interval_mib);
            i64(w, a->roundup_power2_divisions[i].divisions);
        }
    } else {
        nil(w);
    }
    key(w, SDP_SK_RECORDED);
    if (a->recorded) pack_setting(w, a->recorded);
    else nil(w);
}

static void pack_annotations(writer *w)
{
    size_t n = sd_snapshot_annotation_count(w->s);
    key(w, SDP_SK_ANNOTATIONS);   /* [name, device, time_us or nil, stage] */
    arr(w, n);
    for (size_t i = 0; i < n; i++) {
        const sd_annotation *a = sd_snapshot_annotation(w->s, i);
        arr(w, 4);
        str(w, a->name);
        i64(w, a->device);
        if (a->has_time) i64(w, a->time_us);
        else nil(w);
        u64(w, a->stage);
    }
    n = sd_snapshot_warning_count(w->s);
    key(w, SDP_SK_WARNINGS);
    arr(w, n);
    for (size_t i = 0; i < n; i++) str(w, sd_snapshot_warning(w->s, i));
}

/* Pinned host memory: its segments and blocks (what a diff compares), not its trace,
 * which nothing that reads a summary replays. nil when the snapshot has none. */
static void pack_host(writer *w)
{
    const sd_cuda_device *h = sd_snapshot_host_memory(w->s);
    key(w, SDP_SK_HOST);
    if (!h) {
        nil(w);
        return;
    }
    map(w, 2);
    pack_layout(w, h);
}

/* The actions the recording skipped, by action code (as a trace entry's); nil when the
 * snapshot does not say. */
static void pack_skip_actions(writer *w)
{
    uint32_t mask = 0;
    key(w, SDP_SK_SKIP_ACTIONS);
    if (!sd_snapshot_skipped_actions(w->s, &mask)) {
        nil(w);
        return;
    }
    size_t n = 0;
    for (unsigned a = 0; a < SD_ACT_COUNT; a++) n += (mask >> a) & 1u;
    arr(w, n);
    for (unsigned a = 0; a < SD_ACT_COUNT; a++)
        if ((mask >> a) & 1u) u64(w, a);
}

/* The file's label prefix (attrib.c): what labels drop from its user paths. Computed from
 * every frame of the snapshot, so a summary, which keeps only some, labels them alike. */
static void pack_label_prefix(writer *w)
{
    const char *p = NULL;
    size_t len = sdp_attrib_label_prefix(w->s, &p);
    key(w, SDP_SK_LABEL_PREFIX);
    if (p) strn(w, p, len);   /* "" when the user frames share no directory */
    else nil(w);              /* no user frame */
}

/* ---------- the digest ---------- */

static void pack_totals(writer *w)
{
    size_t nd = sd_snapshot_device_count(w->s);
    key(w, SDP_SK_DEVICES);
    arr(w, nd);
    for (size_t d = 0; d < nd; d++) {
        sd_stats st;
        sd_stats_device(sd_snapshot_device(w->s, d), &st);
        map(w, 10);
        key(w, SDP_SK_DEVICE); i64(w, st.device);
        key(w, SDP_SK_ALLOCATED_BYTES); u64(w, st.allocated_bytes);
        key(w, SDP_SK_RESERVED_BYTES); u64(w, st.reserved_bytes);
        key(w, SDP_SK_ACTIVE_BYTES); u64(w, st.active_bytes);
        key(w, SDP_SK_REQUESTED_BYTES); u64(w, st.requested_bytes);
        key(w, SDP_SK_PENDING_FREE_BYTES); u64(w, st.pending_free_bytes);
        key(w, SDP_SK_INACTIVE_BYTES); u64(w, st.inactive_bytes);
        key(w, SDP_SK_SEGMENTS); u64(w, st.segments);
        key(w, SDP_SK_BLOCKS); u64(w, st.blocks);
        key(w, SDP_SK_TRACE_ENTRIES); u64(w, sd_snapshot_trace_recorded(w->s, d));
    }
}

static void pack_frame(writer *w, bool has, const sd_frame *f)
{
    if (!has) {
        nil(w);
        return;
    }
    arr(w, 3);
    str(w, f->filename);
    i64(w, f->line);
    str(w, f->name);
}

/* Every group under every key, with the default options (depth 0, no patterns). */
static sd_status pack_groups(writer *w)
{
    key(w, SDP_SK_GROUPS);
    map(w, SD_GROUP_BY_COUNT);
    for (int by = 0; by < SD_GROUP_BY_COUNT; by++) {
        sd_attrib_options ao = {.group_by = (sd_group_by)by};
        sd_groups *g = sd_groups_create(w->s, &ao, 0, w->err);
        if (!g) return w->err && w->err->code ? w->err->code : SD_ENOMEM;
        key(w, sd_group_by_name((sd_group_by)by));
        size_t n = sd_groups_row_count(g);
        arr(w, n);   /* [key, device, bytes, blocks, requested, stack, site, via] */
        for (size_t i = 0; i < n; i++) {
            const sd_group_row *r = sd_groups_row(g, i);
            arr(w, 8);
            /* A stack key is the whole stack as text (kilobytes each): its rows name it
             * by the stack column only, whose frames are in `stacks`. */
            if (by == SD_GROUP_STACK && r->has_rep) nil(w);
            else str(w, r->key);
            i64(w, r->device);
            u64(w, r->bytes);
            u64(w, r->blocks);
            u64(w, r->requested);
            if (r->has_rep) u64(w, new_stack(w, r->rep_stack));
            else nil(w);
            pack_frame(w, r->has_site, &r->site);
            pack_frame(w, r->has_via, &r->via);
        }
        sd_groups_free(g);
    }
    return SD_OK;
}

static sd_status pack_frag(writer *w)
{
    sd_frag *f = sd_frag_create(w->s, NULL, w->err);
    if (!f) return w->err && w->err->code ? w->err->code : SD_ENOMEM;
    size_t nd = sd_frag_device_count(f);
    key(w, SDP_SK_FRAG);
    arr(w, nd);
    for (size_t d = 0; d < nd; d++) {
        const sd_frag_device *fd = sd_frag_device_at(f, d);
        const sd_frag_figures *x = &fd->fig;
        map(w, 11);
        key(w, SDP_SK_DEVICE); i64(w, fd->device);
        key(w, SDP_SK_VERDICT); str(w, sd_frag_verdict_name(fd->verdict));
        key(w, SDP_SK_RESERVED_BYTES); u64(w, x->reserved_bytes);
        key(w, SDP_SK_ALLOCATED_BYTES); u64(w, x->allocated_bytes);
        key(w, SDP_SK_GAP_BYTES); u64(w, x->gap_bytes);
        key(w, SDP_SK_FREE_BYTES); u64(w, x->external_free_bytes);
        key(w, SDP_SK_LARGEST_FREE_BYTES); u64(w, x->largest_free_bytes);
        key(w, SDP_SK_FRAGMENTATION_INDEX); dbl(w, x->fragmentation_index);
        key(w, SDP_SK_STRANDED_FREE_BYTES); u64(w, x->stranded_free_bytes);
        key(w, SDP_SK_STRANDED_INDEX); dbl(w, x->stranded_index);
        key(w, SDP_SK_EMPTY_CACHE_RELEASABLE); u64(w, x->empty_cache_releasable_bytes);
    }
    sd_frag_free(f);
    return SD_OK;
}

/* ---------- the whole ---------- */

static sd_status pack_all(writer *w, const char *writer_name)
{
    const sd_snapshot *s = w->s;
    size_t nd = sd_snapshot_device_count(s);
    arr(w, 3);
    str(w, SD_SUMMARY_MAGIC);
    u64(w, SD_SUMMARY_VERSION);
    map(w, 15);
    key(w, SDP_SK_WRITER);
    str(w, writer_name ? writer_name : "libsnapdiff");
    key(w, SDP_SK_SOURCE);
    str(w, sd_snapshot_origin(s));
    key(w, SDP_SK_LEGACY_LIST);
    boolean(w, sd_snapshot_is_legacy_list(s));
    key(w, SDP_SK_DIGEST);
    map(w, 3);
    pack_totals(w);
    SDP_TRY(pack_groups(w));
    SDP_TRY(pack_frag(w));
    pack_strings_frames_stacks(w);   /* strings, frames, stacks, contexts */
    key(w, SDP_SK_DEVICES);
    arr(w, nd);
    for (size_t d = 0; d < nd; d++) pack_device(w, d, sd_snapshot_device(s, d));
    pack_settings(w);
    pack_annotations(w);             /* annotations, warnings */
    pack_host(w);
    pack_skip_actions(w);
    pack_label_prefix(w);
    return SD_OK;
}

static sd_status prepare(writer *w)
{
    const sd_snapshot *s = w->s;
    size_t nd = sd_snapshot_device_count(s);
    w->n_stacks = sd_snapshot_stack_count(s);
    w->n_frames = 0;
    for (size_t i = 0; i < w->n_stacks; i++) {   /* frame ids are dense: the largest + 1 */
        size_t n;
        const uint32_t *ids = sd_snapshot_stack(s, (uint32_t)i, &n);
        for (size_t k = 0; k < n; k++)
            if ((size_t)ids[k] + 1 > w->n_frames) w->n_frames = (size_t)ids[k] + 1;
    }
    w->stack_id = malloc((w->n_stacks + 1) * sizeof *w->stack_id);
    w->frame_id = malloc((w->n_frames + 1) * sizeof *w->frame_id);
    w->trace_from = calloc(nd + 1, sizeof *w->trace_from);
    w->newest = calloc(nd + 1, sizeof *w->newest);
    if (!w->stack_id || !w->frame_id || !w->trace_from || !w->newest) return SD_ENOMEM;
    memset(w->stack_id, 0xff, (w->n_stacks + 1) * sizeof *w->stack_id);
    memset(w->frame_id, 0xff, (w->n_frames + 1) * sizeof *w->frame_id);
    if (sdp_htab_init(&w->string_index, 256, NULL)) return SD_ENOMEM;
    for (size_t d = 0; d < nd; d++) {
        keep_trace(w, d, sd_snapshot_device(s, d));
        mark_device(w, d, sd_snapshot_device(s, d));
    }
    if (sd_snapshot_host_memory(s)) mark_layout(w, sd_snapshot_host_memory(s));
    return number_kept(w);
}

sd_status sd_summary_encode(const sd_snapshot *s, const char *writer_name, uint8_t **out,
                            size_t *len, sd_error *err)
{
    sd_error_clear(err);
    if (!s || !out || !len)
        return sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "sd_summary_encode: no snapshot or output");
    *out = NULL;
    *len = 0;
    writer w = {.s = s, .err = err};
    msgpack_sbuffer_init(&w.buf);
    msgpack_packer_init(&w.pk, &w.buf, msgpack_sbuffer_write);
    sd_status st = prepare(&w);
    if (st == SD_OK) st = pack_all(&w, writer_name);
    if (st == SD_OK && w.failed) st = SD_ENOMEM;
    free(w.stack_id);
    free(w.frame_id);
    free(w.trace_from);
    free(w.newest);
    free(w.strings);
    sdp_htab_free(&w.string_index);
    if (st != SD_OK) {
        msgpack_sbuffer_destroy(&w.buf);
        return sdp_fail(err, st, SD_NO_OFFSET, "out of memory writing the summary");
    }
    *out = (uint8_t *)w.buf.data;   /* msgpack-c's buffer is malloc'd: the caller frees it */
    *len = w.buf.size;
    return SD_OK;
}
