/* frag_render.h - what the frag renderers share (private, sdp_). */
#ifndef SNAPDIFF_RENDER_FRAG_RENDER_H
#define SNAPDIFF_RENDER_FRAG_RENDER_H

#include <jansson.h>
#include <stdbool.h>

#include "snapdiff/experimental.h"   /* the map, page and bucket helpers */
#include "snapdiff/render_frag.h"

/* One file's object of the snapdiff.frag/1 document (docs/json-frag.md); with_schema
 * puts "schema" first, for the one-file document. NULL when out of memory. */
json_t *sdp_frag_json(const sd_frag *f, bool with_schema);

/* Worded reason and advice in a buffer of SD_FRAG_TEXT_MAX bytes. */
typedef struct sdp_frag_words { char s[SD_FRAG_TEXT_MAX]; } sdp_frag_words;
sdp_frag_words sdp_frag_why_words(const sd_frag_why *why);
sdp_frag_words sdp_frag_advice_words(const sd_frag_advice *a);
sdp_frag_words sdp_frag_oom_note_words(const sd_frag_oom *o);
sdp_frag_words sdp_frag_oom_site_words(const sd_snapshot *s, const sd_frag_oom *o);
/* One oom event as `frag` prints it (its site, request, cause, the arithmetic, the what-ifs,
 * what was live, the levers), for every view that shows the oom first (top, trace). */
void sdp_frag_oom_text(FILE *out, const sd_snapshot *s, const sd_frag_oom *m, bool color);
/* The oom events of one device as snapdiff.frag/1's oom_events (docs/json-frag.md). */
json_t *sdp_frag_ooms_json(const sd_frag *f, const sd_frag_device *d);
/* The frag device of device ordinal `device`; NULL when none. */
const sd_frag_device *sdp_frag_device_of(const sd_frag *f, int64_t device);
/* The frame of stack index i of an oom event (NULL when out of range). */
const sd_frame *sdp_frag_oom_frame(const sd_snapshot *s, const sd_frag_oom *o, int32_t i);

#endif
