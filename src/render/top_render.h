/* top_render.h - shared by top_text.c, top_json.c and the diff's peak section. Not installed. */
#ifndef SNAPDIFF_RENDER_TOP_RENDER_H
#define SNAPDIFF_RENDER_TOP_RENDER_H

#include <jansson.h>

#include "snapdiff/frag.h"
#include "snapdiff/levers.h"
#include "snapdiff/peak.h"

/* The site of `stack` as the diff's JSON names it: {filename, line, name, kind} (a native
 * site: filename "", line 0, the label as name, the raw symbol as `symbol`; a backward
 * site: "backward": true). null for an empty stack. */
json_t *sdp_peak_site_json(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                           const sd_site *site);
/* [{category, bytes, blocks, evidence}] of a table (docs/json-top.md). */
json_t *sdp_categories_json(const sd_peak_table *t);
/* The peak's phase ("forward", ...) and step, or null. */
json_t *sdp_peak_phase_json(const sd_peak_device *d);
json_t *sdp_peak_step_json(const sd_peak_device *d);
/* One line per category of a table: "    bytes  category  (by frames)", largest first. */
void sdp_categories_text(FILE *out, const sd_peak_table *t, const char *indent);
/* " in the backward of step 2" / " in the forward" / "" for the peak line. */
void sdp_peak_phase_text(const sd_peak_device *d, char *buf, size_t size);

/* The levers of a moment (levers.h) as docs/levers.md names them: [{lever, category,
 * bytes, enough, sites, ...}], ranked. */
json_t *sdp_levers_json(const sd_attrib *a, const sd_snapshot *s, const sd_levers *l);
/* "levers at the WHAT, ...:" and one line per lever with its arithmetic; nothing when
 * there is none. */
void sdp_levers_text(FILE *out, const sd_snapshot *s, const sd_levers *l, const char *what,
                     const char *indent);

/* The oom events of device `device` in `f` (NULL: none), first in top and trace: a line
 * with their count, then the latest three as frag prints them. */
void sdp_top_ooms_text(FILE *out, const sd_frag *f, int64_t device, bool color);

#endif
