/* settings.c - the allocator settings as the stats and frag reports show them. */
#include <inttypes.h>

#include "render/format.h"
#include "render/json_value.h"
#include "render/settings.h"

void sdp_settings_stats_text(FILE *out, const sd_allocator_settings *a)
{
    if (!a || !a->present) return;
    fprintf(out, "allocator settings:");
    if (a->has_expandable_segments)
        fprintf(out, " expandable_segments=%s", a->expandable_segments ? "True" : "False");
    if (a->has_max_split_size) {
        if (a->max_split_size < 0) fprintf(out, " max_split_size=unlimited");
        else fprintf(out, " max_split_size=%" PRId64, a->max_split_size);
    }
    if (a->has_gc_threshold)
        fprintf(out, " garbage_collection_threshold=%g", a->garbage_collection_threshold);
    if (a->alloc_conf && a->alloc_conf[0])
        fprintf(out, " PYTORCH_CUDA_ALLOC_CONF=\"%s\"", a->alloc_conf);
    fprintf(out, "\n");
}

json_t *sdp_settings_stats_json(const sd_allocator_settings *a)
{
    return a && a->present ? sdp_json_of_value(a->raw, 4) : json_null();
}

/* "set" when any power-of-two interval has divisions, "none" when the dict is all zeros;
 * -1 when the snapshot did not record the dict. */
static int roundup_divisions_set(const sd_allocator_settings *st)
{
    const sd_value *rp = st->raw ? sd_value_dict_get(st->raw, "roundup_power2_divisions") : NULL;
    if (!rp || sd_value_type_of(rp) != SD_VALUE_DICT) return -1;
    for (size_t i = 0; i < sd_value_len(rp); i++)
        if (sd_value_int(sd_value_dict_val(rp, i)) != 0) return 1;
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
    const sd_value *rp = rec && st->raw ? sd_value_dict_get(st->raw, "roundup_power2_divisions")
                                        : NULL;
    json_object_set_new(o, "roundup_power2_divisions", sdp_json_of_value(rp, 3));
    return o;
}
