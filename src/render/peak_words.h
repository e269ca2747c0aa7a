/* peak_words.h - the peak's categories, phase and step as text and JSON (private, sdp_),
 * for every view that shows them: top, trace, the diff's peak section, frag's oom events,
 * the report. peak_words.c. */
#ifndef SNAPDIFF_RENDER_PEAK_WORDS_H
#define SNAPDIFF_RENDER_PEAK_WORDS_H

#include <jansson.h>
#include <stdio.h>

#include "snapdiff/peak.h"

/* [{category, bytes, blocks, evidence}] of a table (docs/json-top.md). */
json_t *sdp_categories_json(const sd_peak_table *t);
/* The peak's phase ("forward", ...) and step, or null. */
json_t *sdp_peak_phase_json(const sd_peak_device *d);
json_t *sdp_peak_step_json(const sd_peak_device *d);
/* One line per category of a table: "    bytes  category  (by frames)", largest first. */
void sdp_categories_text(FILE *out, const sd_peak_table *t, const char *indent);
/* " in the backward of step 2" / " in the forward" / "" for the peak line. */
void sdp_peak_phase_text(const sd_peak_device *d, char *buf, size_t size);

#endif
