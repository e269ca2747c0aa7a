/* settings.c - what the snapshot recorded beside the devices, as the reports show it: the
 * allocator settings, skip_actions, pinned host memory. */
#include <inttypes.h>
#include <stdio.h>

#include "render/format.h"
#include "render/settings.h"
#include "snapdiff/stats.h"

void sdp_settings_stats_text(FILE *out, const sd_allocator_settings *a)
{
    if (!a || !a->present) return;
    fprintf(out, "allocator settings:");
    if (a->has_expandable_segments)
        fprintf(out, " expandable_segments=%s", a->expandable_segments ? "True" : "False");
    if (a->has_max_split_size) {
        if (a->max_split_size < 0) fprintf(out, " max_split_size=unlimited");
        else fprintf(out, " max_split_size=%s", sdp_fmt_bytes((uint64_t)a->max_split_size).s);
    }
    if (a->has_gc_threshold)
        fprintf(out, " garbage_collection_threshold=%g", a->garbage_collection_threshold);
    if (a->alloc_conf && a->alloc_conf[0])
        fprintf(out, " PYTORCH_CUDA_ALLOC_CONF=\"%s\"", a->alloc_conf);
    fprintf(out, "\n");
}

static json_t *or_null(json_t *j) { return j ? j : json_null(); }

/* A recorded setting as JSON: what jansson cannot hold (NaN, strings that are not UTF-8)
 * becomes null; keys are cut at 127 bytes. */
static json_t *setting_json(const sd_setting *v)
{
    if (!v) return json_null();
    switch (v->type) {
    case SD_SETTING_BOOL: return json_boolean(v->b);
    case SD_SETTING_INT: return json_integer(v->i);
    case SD_SETTING_FLOAT: return or_null(json_real(v->f));
    case SD_SETTING_STR: return or_null(json_stringn(v->str, v->str_len));
    case SD_SETTING_DICT: {
        json_t *o = json_object();
        for (size_t i = 0; i < v->n_items; i++) {
            const sd_setting *m = &v->items[i];
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)(m->key_len < 127 ? m->key_len : 127), m->key);
            json_object_set_new(o, key, setting_json(m));
        }
        return o;
    }
    case SD_SETTING_LIST: {
        json_t *a = json_array();
        for (size_t i = 0; i < v->n_items; i++) json_array_append_new(a, setting_json(&v->items[i]));
        return a;
    }
    default: return json_null();
    }
}

json_t *sdp_settings_stats_json(const sd_allocator_settings *a)
{
    return a && a->present ? setting_json(a->recorded) : json_null();
}

/* The recorded member `key` of the settings dict, or NULL. Later keys win, as in Python. */
static const sd_setting *recorded_member(const sd_allocator_settings *a, const char *key)
{
    const sd_setting *found = NULL, *d = a->recorded;
    size_t n = strlen(key);
    for (size_t i = 0; d && d->type == SD_SETTING_DICT && i < d->n_items; i++)
        if (d->items[i].key_len == n && memcmp(d->items[i].key, key, n) == 0) found = &d->items[i];
    return found;
}

/* "set" when any power-of-two interval has divisions, "none" when the dict is all zeros;
 * -1 when the snapshot did not record the dict. */
static int roundup_divisions_set(const sd_allocator_settings *st)
{
    if (!st->has_roundup_power2_divisions) return -1;
    for (size_t i = 0; i < st->n_roundup_power2_divisions; i++)
        if (st->roundup_power2_divisions[i].divisions != 0) return 1;
    return 0;
}

void sdp_settings_frag_text(FILE *out, const sd_allocator_settings *st)
{
    if (!st || !st->present) {
        fprintf(out, "allocator settings: not recorded (torch before 2.3); defaults assumed\n");
        return;
    }
    fprintf(out, "allocator settings: expandable_segments %s, max_split_size ",
            st->has_expandable_segments ? (st->expandable_segments ? "on" : "off") : "unknown");
    if (!st->has_max_split_size) fprintf(out, "unknown");
    else if (st->max_split_size < 0) fprintf(out, "unlimited");
    else fprintf(out, "%s", sdp_fmt_bytes((uint64_t)st->max_split_size).s);
    if (st->has_gc_threshold)
        fprintf(out, ", garbage_collection_threshold %g", st->garbage_collection_threshold);
    int rp = roundup_divisions_set(st);
    if (rp >= 0) fprintf(out, ", roundup_power2_divisions %s", rp ? "set" : "none");
    if (st->alloc_conf && st->alloc_conf[0])
        fprintf(out, " (PYTORCH_CUDA_ALLOC_CONF=%s)", st->alloc_conf);
    fprintf(out, "\n");
}

json_t *sdp_settings_frag_json(const sd_allocator_settings *st)
{
    json_t *o = json_object();
    bool rec = st && st->present;
    json_object_set_new(o, "recorded", json_boolean(rec));
    json_object_set_new(o, "alloc_conf", rec && st->alloc_conf ? json_string(st->alloc_conf)
                                                               : json_null());
    json_object_set_new(o, "max_split_size", rec && st->has_max_split_size
                                                 ? json_integer(st->max_split_size) : json_null());
    json_object_set_new(o, "expandable_segments",
                        rec && st->has_expandable_segments ? json_boolean(st->expandable_segments)
                                                           : json_null());
    json_object_set_new(o, "garbage_collection_threshold",
                        rec && st->has_gc_threshold ? json_real(st->garbage_collection_threshold)
                                                    : json_null());
    /* As recorded, whatever its shape (a dict since torch 2.3). */
    json_object_set_new(o, "roundup_power2_divisions",
                        rec ? setting_json(recorded_member(st, "roundup_power2_divisions"))
                            : json_null());
    return o;
}

json_t *sdp_skip_actions_json(const sd_snapshot *s)
{
    uint32_t mask;
    if (!sd_snapshot_skipped_actions(s, &mask)) return json_null();
    json_t *o = json_object(), *acts = json_array(), *figs = json_array();
    for (unsigned a = 0; a < SD_ACT_COUNT; a++)
        if (mask & (1u << a))
            json_array_append_new(acts, json_string(sd_trace_action_name((sd_trace_action)a)));
    const char *f[16];
    size_t n = sd_skip_unreliable_figures(mask, f, 16);
    for (size_t i = 0; i < n && i < 16; i++) json_array_append_new(figs, json_string(f[i]));
    json_object_set_new(o, "actions", acts);
    json_object_set_new(o, "unreliable", figs);
    return o;
}

void sdp_host_text(FILE *out, const sd_snapshot *s, const char *indent)
{
    const sd_cuda_device *host = sd_snapshot_host_memory(s);
    if (!host) return;
    sd_stats st;
    sd_stats_device(host, &st);
    uint64_t blocks = 0;
    for (size_t i = 0; i < host->n_blocks; i++) blocks += host->blocks[i].state == SD_BLOCK_ALLOCATED;
    fprintf(out, "%spinned host memory: %s allocated in %s block%s, %s reserved in %s segment%s "
            "(host_segments: in no device figure)\n", indent,
            sdp_fmt_bytes(st.allocated_bytes).s, sdp_fmt_count(blocks).s, blocks == 1 ? "" : "s",
            sdp_fmt_bytes(st.reserved_bytes).s, sdp_fmt_count(st.segments).s,
            st.segments == 1 ? "" : "s");
}

json_t *sdp_host_json(const sd_snapshot *s)
{
    const sd_cuda_device *host = sd_snapshot_host_memory(s);
    if (!host) return json_null();
    sd_stats st;
    sd_stats_device(host, &st);
    uint64_t blocks = 0;
    for (size_t i = 0; i < host->n_blocks; i++) blocks += host->blocks[i].state == SD_BLOCK_ALLOCATED;
    json_t *o = json_object();
    json_object_set_new(o, "allocated_bytes", json_integer((json_int_t)st.allocated_bytes));
    json_object_set_new(o, "blocks", json_integer((json_int_t)blocks));
    json_object_set_new(o, "reserved_bytes", json_integer((json_int_t)st.reserved_bytes));
    json_object_set_new(o, "segments", json_integer((json_int_t)st.segments));
    json_object_set_new(o, "trace_entries", json_integer((json_int_t)st.trace_entries));
    return o;
}

void sdp_skip_actions_text(FILE *out, const sd_snapshot *s, const char *indent)
{
    uint32_t mask;
    if (!sd_snapshot_skipped_actions(s, &mask) || !mask) return;
    fprintf(out, "%swarning: the recording skipped", indent);
    const char *sep = " ";
    for (unsigned a = 0; a < SD_ACT_COUNT; a++) {
        if (!(mask & (1u << a))) continue;
        fprintf(out, "%s%s", sep, sd_trace_action_name((sd_trace_action)a));
        sep = ", ";
    }
    fprintf(out, " (skip_actions): unreliable:");
    const char *f[16];
    size_t n = sd_skip_unreliable_figures(mask, f, 16);
    for (size_t i = 0; i < n && i < 16; i++) fprintf(out, "%s%s", i ? ", " : " ", f[i]);
    fprintf(out, "%s\n", n ? "" : " nothing snapdiff reads");
}
