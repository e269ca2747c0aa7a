/* json_frame.c - one frame-to-JSON for every JSON renderer (diff, frag, series, trace):
 * one place decides the keys and their order. */
#include "render/json_frame.h"

json_t *sdp_frame_json(const sd_frame *f)
{
    if (!f) return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "filename", json_string(f->filename));
    json_object_set_new(o, "line", json_integer(f->line));
    json_object_set_new(o, "name", json_string(f->name));
    return o;
}
