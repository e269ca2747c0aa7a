/* curve_render.h - words shared by the curve renderers (curve_text.c, curve_json.c),
 * written in curve_words.c. */
#ifndef SNAPDIFF_RENDER_CURVE_RENDER_H
#define SNAPDIFF_RENDER_CURVE_RENDER_H

#include <stddef.h>

#include "snapdiff/curve.h"
#include "render/format.h"

/* Bytes from a double (negative: 0): "1.5 MiB". */
sdp_text sdp_curve_bytes(double b);
/* "rank 3", "GPU 1", "rank 2 of run.log"... : who a series is. */
void sdp_curve_who(const sd_curve *c, const sd_curve_series *s, char *buf, size_t size);
/* A slope: "+100.0 KiB/step", "-2.0 MiB/s", "+1.0 MiB/sample"; per: "step", "s", "sample". */
sdp_text sdp_curve_slope(double bytes, const char *per);
/* The unit a series' slope is per ("step", "s", "sample") and its x ("step", "second",
 * "sample"). */
const char *sdp_curve_per(const sd_curve_series *s);
const char *sdp_curve_x(const sd_curve_series *s);
/* Why a series is a rank outlier: "grows +2.0 MiB/step; the others +0 B +- 3.0 KiB". */
void sdp_curve_outlier_why(const sd_curve *c, const sd_curve_series *s, char *buf, size_t size);
/* Why the verdict: the numbers that decided it. */
void sdp_curve_verdict_why(const sd_curve *c, const sd_curve_series *s, char *buf, size_t size);
/* One failed or passed limit in words. */
void sdp_curve_limit_words(const sd_curve *c, const sd_curve_limit_result *r, char *buf,
                           size_t size);

#endif
