/* site.c - a site and its label as every JSON view writes them (site.h). */
#include "render/site.h"

#include "render/json_frame.h"

json_t *sdp_kind_frame_json(const sd_attrib *a, const sd_frame *f)
{
    json_t *o = sdp_frame_json(f);
    if (f) json_object_set_new(o, "kind", json_string(sd_frame_kind_name(sd_attrib_classify(a, f))));
    return o;
}

json_t *sdp_site_json(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                      const sd_site *site)
{
    sd_site_label l;
    if (!s || !sd_site_label_of(s, stack, site, &l)) return json_null();
    json_t *o;
    if (l.native) {
        o = json_object();
        json_object_set_new(o, "filename", json_string(""));
        json_object_set_new(o, "line", json_integer(0));
        json_object_set_new(o, "name", json_string(l.label));
        json_object_set_new(o, "kind", json_string(sd_frame_kind_name(SD_FRAME_NATIVE)));
        json_object_set_new(o, "symbol", json_string(l.name));
    } else {
        o = sdp_kind_frame_json(a, sd_site_frame(s, stack, site, site->site));
    }
    if (l.backward) json_object_set_new(o, "backward", json_true());
    return o;
}

json_t *sdp_stack_site_json(const sd_attrib *a, const sd_snapshot *s, uint32_t stack)
{
    if (!stack) return json_null();
    sd_site site;
    sd_attrib_site_of_stack(a, s, stack, &site);
    return sdp_site_json(a, s, stack, &site);
}

json_t *sdp_stack_json(const sd_attrib *a, const sd_snapshot *s, uint32_t stack)
{
    json_t *arr = json_array();
    size_t n;
    const uint32_t *ids = sd_snapshot_stack(s, stack, &n);
    for (size_t i = 0; i < n; i++) {
        const sd_frame *f = sd_snapshot_frame(s, ids[i]);
        if (sd_frame_is_noise(f)) continue;
        json_array_append_new(arr, a ? sdp_kind_frame_json(a, f) : sdp_frame_json(f));
    }
    return arr;
}

json_t *sdp_group_label_json(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                             const sd_site *site, const char *key, bool with_via)
{
    char buf[SDP_LABEL_BUF];
    sd_group_label(a, s, stack, site, key, with_via, buf, sizeof buf);
    json_t *t = json_string(buf);
    return t ? t : json_string(key);
}

json_t *sdp_site_label_json(const sd_snapshot *s, uint32_t stack, const sd_site *site,
                            const char *fallback)
{
    char buf[SDP_LABEL_BUF];
    sd_site_text(s, stack, site, buf, sizeof buf);
    json_t *t = json_string(buf);
    return t ? t : fallback ? json_string(fallback) : json_null();
}
