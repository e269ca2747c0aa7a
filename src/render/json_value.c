/* json_value.c - small pickle values as JSON, for the reports' "settings" sections. */
#include <stdio.h>

#include "json_value.h"

static json_t *or_null(json_t *j) { return j ? j : json_null(); }

json_t *sdp_json_of_value(const sd_value *v, int max_depth)
{
    size_t n;
    const char *s;
    if (!v) return json_null();
    switch (sd_value_type_of(v)) {
    case SD_VALUE_BOOL: return json_boolean(sd_value_bool(v));
    case SD_VALUE_INT: return json_integer(sd_value_int(v));
    case SD_VALUE_FLOAT: return or_null(json_real(sd_value_float(v)));
    case SD_VALUE_STR: s = sd_value_bytes(v, &n); return or_null(json_stringn(s, n));
    case SD_VALUE_DICT: {
        json_t *o = json_object();
        for (size_t i = 0; max_depth > 0 && i < sd_value_len(v); i++) {
            const sd_value *k = sd_value_dict_key(v, i);
            if (sd_value_type_of(k) != SD_VALUE_STR) continue;
            s = sd_value_bytes(k, &n);
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)(n < 127 ? n : 127), s);
            json_object_set_new(o, key, sdp_json_of_value(sd_value_dict_val(v, i), max_depth - 1));
        }
        return o;
    }
    case SD_VALUE_LIST: case SD_VALUE_TUPLE: {
        json_t *a = json_array();
        for (size_t i = 0; max_depth > 0 && i < sd_value_len(v); i++)
            json_array_append_new(a, sdp_json_of_value(sd_value_item(v, i), max_depth - 1));
        return a;
    }
    default: return json_null();
    }
}
