/* series_render.h - what the series renderers share (private, sdp_); the renderers
 * themselves are public (snapdiff/render_series.h). */
#ifndef SNAPDIFF_RENDER_SERIES_RENDER_H
#define SNAPDIFF_RENDER_SERIES_RENDER_H

#include "snapdiff/render_series.h"

/* The sparkline of v[0..n) into buf: one character per value (at most `width`; longer
 * series are cut into `width` buckets, each shown by its maximum), scaled from the
 * smallest to the largest value; all at the lowest level when they are equal. Unicode
 * uses the eight blocks U+2581..U+2588, ASCII "_.-~=+*#". */
void sdp_sparkline(const uint64_t *v, size_t n, size_t width, bool unicode, char *buf,
                   size_t size);

#endif
