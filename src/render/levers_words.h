/* levers_words.h - the levers of a moment (levers.h) in text and JSON, shared by top's and
 * frag's renderers (levers_words.c; docs/levers.md). Private, sdp_. Not installed. */
#ifndef SNAPDIFF_RENDER_LEVERS_WORDS_H
#define SNAPDIFF_RENDER_LEVERS_WORDS_H

#include <jansson.h>
#include <stdio.h>

#include "snapdiff/attrib.h"
#include "snapdiff/levers.h"

/* The levers of a moment as docs/levers.md names them: [{lever, category, bytes, enough,
 * sites, ...}], ranked. */
json_t *sdp_levers_json(const sd_attrib *a, const sd_snapshot *s, const sd_levers *l);
/* "levers at the WHAT, ...:" and one line per lever with its arithmetic; nothing when
 * there is none. */
void sdp_levers_text(FILE *out, const sd_snapshot *s, const sd_levers *l, const char *what,
                     const char *indent);

#endif
