/* render_stats.h - the report of `snapdiff stats` as text and as JSON (snapdiff.stats/1);
 * see render.h for the rules every renderer keeps. */
#ifndef SNAPDIFF_RENDER_STATS_H
#define SNAPDIFF_RENDER_STATS_H

#include <stdio.h>

#include "render.h"
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_STATS_SCHEMA "snapdiff.stats/1"

/* The snapdiff.stats/1 document of n snapshots (one file: the file's object itself). */
sd_status sd_render_stats_json(FILE *out, const sd_snapshot *const *snaps, size_t n);

/* ---- Render tier (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_RENDER_API; exported in the node LIBSNAPDIFF_RENDER_0.3. Words and
 * layout for people, which change with the tool's output: no API promise past the
 * SONAME's. */
#ifdef SNAPDIFF_RENDER_API
/* The totals of one snapshot per device and overall, with its allocator settings.
 * opts NULL = no colour. */
sd_status sd_render_stats_text(FILE *out, const sd_snapshot *s, const sd_render_options *opts);
#endif /* SNAPDIFF_RENDER_API */

#ifdef __cplusplus
}
#endif

#endif
