/* render_curve.h - `snapdiff curve` as text, JSON (snapdiff.curve/1, docs/json-curve.md)
 * and GitHub workflow annotations (see render.h for the rules every renderer keeps). The
 * analysis (curve.h) decides; these functions only word and lay out. */
#ifndef SNAPDIFF_RENDER_CURVE_H
#define SNAPDIFF_RENDER_CURVE_H

#include <stdio.h>

#include "curve.h"
#include "render.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_CURVE_SCHEMA "snapdiff.curve/1"

/* The snapdiff.curve/1 document. */
sd_status sd_render_curve_json(FILE *out, const sd_curve *c, const sd_render_options *ro,
                               sd_error *err);

/* ---- Render tier (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_RENDER_API; exported in the node LIBSNAPDIFF_RENDER_0.3. Words and
 * layout for people, which change with the tool's output: no API promise past the
 * SONAME's. */
#ifdef SNAPDIFF_RENDER_API
/* Per series: sparklines of the curve and its floor, the baseline, the slope with its
 * interval, the verdict and why, growth vs the baseline, steps left; then the ranks as a
 * table, and the gate. ro NULL = no colour. */
sd_status sd_render_curve_text(FILE *out, const sd_curve *c, const sd_render_options *ro,
                               sd_error *err);
/* `::error` for each failed limit, `::warning` for each growing series and rank outlier,
 * `::notice` for the rest; one line each. */
sd_status sd_render_curve_github(FILE *out, const sd_curve *c, const sd_render_options *ro,
                                 sd_error *err);
#endif /* SNAPDIFF_RENDER_API */

#ifdef __cplusplus
}
#endif

#endif
