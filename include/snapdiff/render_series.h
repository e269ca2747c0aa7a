/* render_series.h - the series (series.h) for people and tools: a text table with a
 * sparkline per group, and JSON (schema snapdiff.series/1, docs/json-series.md). See
 * render.h for the rules every renderer keeps. @return SD_OK, SD_EIO when writing
 * failed, SD_ENOMEM. */
#ifndef SNAPDIFF_RENDER_SERIES_H
#define SNAPDIFF_RENDER_SERIES_H

#include <stdio.h>

#include "groups.h"
#include "render.h"
#include "ranks.h"
#include "series.h"
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_SERIES_SCHEMA "snapdiff.series/1"

sd_status sd_render_series_json(FILE *out, const sd_series *s);

/* ---- Render tier (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_RENDER_API; exported in the node LIBSNAPDIFF_RENDER_0.3. Words and
 * layout for people, which change with the tool's output: no API promise past the
 * SONAME's. */
#ifdef SNAPDIFF_RENDER_API
/* Growable as common.h says. */
#define SD_SERIES_TEXT_OPTIONS_VERSION 1
typedef struct sd_series_text_options {
    unsigned version;           /* SD_SERIES_TEXT_OPTIONS_VERSION */
    sd_render_options render;   /* colour */
    size_t top;                 /* groups in the table; 0 = 20 */
    bool unicode;               /* sparklines in Unicode blocks; else ASCII */
} sd_series_text_options;
#define SD_SERIES_TEXT_OPTIONS_INIT \
    {SD_SERIES_TEXT_OPTIONS_VERSION, SD_RENDER_OPTIONS_INIT, 0, false}
sd_status sd_series_text_options_init(sd_series_text_options *opts, unsigned version);
sd_status sd_render_series_text(FILE *out, const sd_series *s, const sd_series_text_options *o);
/* Snapshots that are the ranks of one job (ranks.h, sd_ranks_names_are_ranks), side by
 * side instead of as a series: per rank its allocated and reserved bytes (`totals`, over
 * all devices) and their distance from the median, then the spread (`sp`, from
 * sd_rank_spread_of_totals) and the rank furthest from the median, or "no outlier".
 * `labels`: per rank, "rank 3" or the snapshot's name; `sources`: the snapshots' names.
 * JSON: schema snapdiff.series-ranks/1 (docs/json-series.md). The tool calls the _oom_
 * forms below; these are for library users without the ranks' oom entries. */
sd_status sd_render_series_ranks_text(FILE *out, const char *const *sources,
                                      const char *const *labels, const sd_stats *totals,
                                      size_t n, const sd_rank_spread *sp, bool color);
sd_status sd_render_series_ranks_json(FILE *out, const char *const *sources,
                                      const sd_stats *totals, size_t n,
                                      const sd_rank_spread *sp);
/* A job's folder by step and rank (ranks.h: sd_job_summarize): per step its ranks, per
 * rank its steps and the change of its allocated bytes from its first to its last step,
 * the OOM dumps called out, then every snapshot (e ordered by sd_job_summarize). `grown`
 * as sd_job_summarize gives it. JSON: schema snapdiff.series-job/1 (docs/json-series.md);
 * the JSON object is left open after its "grew_most" when `open_end` (the caller adds
 * "series_of_grew_most", then "}"). */
sd_status sd_render_series_job_text(FILE *out, const sd_job_entry *e, size_t n,
                                    const sd_job_rank *ranks, size_t n_ranks, size_t grown,
                                    bool color);
sd_status sd_render_series_job_json(FILE *out, const sd_job_entry *e, size_t n,
                                    const sd_job_rank *ranks, size_t n_ranks, size_t grown,
                                    bool open_end);
/* The same with each rank's out-of-memory entries (`ooms[i]`, sd_groups_oom_of; NULL:
 * none known) first: how many ranks recorded one, and per such rank the last one's entry,
 * device and request (issue 26). JSON: per rank "oom", and "ranks_out_of_memory". */
sd_status sd_render_series_ranks_oom_text(FILE *out, const char *const *sources,
                                          const char *const *labels, const sd_stats *totals,
                                          const sd_groups_oom *ooms, size_t n,
                                          const sd_rank_spread *sp, bool color);
sd_status sd_render_series_ranks_oom_json(FILE *out, const char *const *sources,
                                          const sd_stats *totals, const sd_groups_oom *ooms,
                                          size_t n, const sd_rank_spread *sp);
#endif /* SNAPDIFF_RENDER_API */

#ifdef __cplusplus
}
#endif

#endif
