/* diff_render.h - what the diff renderers share (private, sdp_); the renderers themselves
 * are public (snapdiff/render_diff.h). */
#ifndef SNAPDIFF_RENDER_DIFF_RENDER_H
#define SNAPDIFF_RENDER_DIFF_RENDER_H

#include "snapdiff/render_diff.h"

/* The one-line hint (the fix) of a pattern, for text and JSON; NULL for SD_PATTERN_NONE
 * (pattern_words.c). */
const char *sdp_pattern_hint(sd_pattern p);

/* A site as every JSON document names it: {filename, line, name, kind} (a native site:
 * filename "", line 0, its label as name, the raw C++ symbol as `symbol`; a backward
 * site adds "backward": true). JSON null for an empty stack. jansson's json_t, named
 * by its struct tag so that this header does not need jansson. */
struct json_t;
struct json_t *sdp_site_json(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                             const sd_site *site);

#endif
