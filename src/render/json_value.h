/* json_value.h - small pickle values (allocator settings) as jansson values. Private (sdp_). */
#ifndef SNAPDIFF_RENDER_JSON_VALUE_H
#define SNAPDIFF_RENDER_JSON_VALUE_H

#include <jansson.h>

#include "snapdiff/pickle.h"

/* Scalars, str-keyed dicts and sequences down to max_depth levels; anything else (and
 * strings that are not valid UTF-8 for JSON) becomes null. Never NULL. */
json_t *sdp_json_of_value(const sd_value *v, int max_depth);

#endif
