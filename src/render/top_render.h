/* top_render.h - shared by top_text.c, top_json.c and the diff's peak section. Not installed. */
#ifndef SNAPDIFF_RENDER_TOP_RENDER_H
#define SNAPDIFF_RENDER_TOP_RENDER_H

#include <jansson.h>

#include "snapdiff/peak.h"

/* The site of `stack` as the diff's JSON names it: {filename, line, name, kind} (a native
 * site: filename "", line 0, the label as name, the raw symbol as `symbol`; a backward
 * site: "backward": true). null for an empty stack. */
json_t *sdp_peak_site_json(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                           const sd_site *site);
/* "FILE:LINE NAME" (or the native label) of the site, for text; "<no stack>" if none. */
void sdp_peak_site_text(const sd_snapshot *s, uint32_t stack, const sd_site *site, char *buf,
                        size_t size);

#endif
