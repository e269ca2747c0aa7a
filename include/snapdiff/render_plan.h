/* render_plan.h - the answer of `snapdiff plan` as text and as JSON (snapdiff.plan/1,
 * docs/json-plan.md); see render.h for the rules every renderer keeps. */
#ifndef SNAPDIFF_EXPERIMENTAL
#error "snapdiff/render_plan.h is in libsnapdiff's experimental tier, with no API or ABI promise (docs/architecture.md, \"Tiers\"): define SNAPDIFF_EXPERIMENTAL before including it"
#endif

#ifndef SNAPDIFF_RENDER_PLAN_H
#define SNAPDIFF_RENDER_PLAN_H

#include <stdio.h>

#include "plan.h"
#include "render.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_PLAN_SCHEMA "snapdiff.plan/1"

/* What was asked beside the plan: with `has_max` (--max), the largest size that fits
 * the capacity (sd_plan_largest_fit; 0: not even 1), which the plan was made at. */
#define SD_PLAN_VIEW_VERSION 1
typedef struct sd_plan_view {
    unsigned version;       /* SD_PLAN_VIEW_VERSION (growable: common.h) */
    bool has_max;
    double max_size;
} sd_plan_view;
#define SD_PLAN_VIEW_INIT {SD_PLAN_VIEW_VERSION, false, 0}

/* The answer first (peak allocated and reserved at the target, fits or short by), then
 * the largest size that fits, the check against a real recording, how the sizes were
 * fitted, the largest sites at the predicted peak, and what a plan cannot show.
 * view may be NULL; ro NULL = no colour. */
sd_status sd_render_plan_text(FILE *out, const sd_plan *p, const sd_plan_view *view,
                              const sd_render_options *ro, sd_error *err);
/* The snapdiff.plan/1 document. */
sd_status sd_render_plan_json(FILE *out, const sd_plan *p, const sd_plan_view *view,
                              const sd_render_options *ro, sd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SNAPDIFF_RENDER_PLAN_H */
