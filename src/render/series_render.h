/* series_render.h - the series (series.h) for people and tools: a text table with a
 * sparkline per group, and JSON (schema snapdiff.series/1, docs/json-series.md).
 * Every figure and verdict comes from the series; these only word and lay them out.
 * Private to libsnapdiff (prefix sdp_). @return SD_OK, SD_EIO when writing failed,
 * SD_ENOMEM. */
#ifndef SNAPDIFF_RENDER_SERIES_RENDER_H
#define SNAPDIFF_RENDER_SERIES_RENDER_H

#include <stdio.h>

#include "snapdiff/render.h"
#include "snapdiff/series.h"

typedef struct sdp_series_text_options {
    sd_render_options render;   /* colour */
    size_t top;                 /* groups in the table; 0 = 20 */
    bool unicode;               /* sparklines in Unicode blocks; else ASCII */
} sdp_series_text_options;

sd_status sdp_render_series_text(FILE *out, const sd_series *s, const sdp_series_text_options *o);
sd_status sdp_render_series_json(FILE *out, const sd_series *s);

/* The sparkline of v[0..n) into buf: one character per value (at most `width`; longer
 * series are cut into `width` buckets, each shown by its maximum), scaled from the
 * smallest to the largest value; all at the lowest level when they are equal. Unicode
 * uses the eight blocks U+2581..U+2588, ASCII "_.-~=+*#". */
void sdp_sparkline(const uint64_t *v, size_t n, size_t width, bool unicode, char *buf,
                   size_t size);

#endif
