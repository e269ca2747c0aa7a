/* render_check.h - `snapdiff check` written for people, tools and CI systems: text, JSON
 * (schema snapdiff.check/1, docs/json-check.md), GitHub annotation lines and a JUnit XML
 * report. See render.h for the rules every renderer keeps.
 *
 * A report is one member per compared pair (check.h). The verdicts come from the gate;
 * the renderers word and lay them out. @return SD_OK, SD_EIO, SD_ENOMEM. */
#ifndef SNAPDIFF_RENDER_CHECK_H
#define SNAPDIFF_RENDER_CHECK_H

#include <stdio.h>

#include "check.h"
#include "ranks.h"
#include "render.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_CHECK_SCHEMA "snapdiff.check/1"

/* Where a site's file is in the repository being checked, for annotations: the path
 * relative to the repository written into buf, or false when it is not there. */
typedef bool (*sd_locate_fn)(void *ctx, const char *filename, char *buf, size_t size);

/* What the check renderers lay out; growable as common.h says. */
#define SD_CHECK_REPORT_VERSION 1
typedef struct sd_check_report {
    unsigned version;         /* SD_CHECK_REPORT_VERSION */
    const sd_check_member *members;
    size_t n;
    bool many;                /* inputs with several members: name each */
    bool pass;                /* every member passed */
    size_t top;               /* offending groups shown per member; 0 = 5 */
    sd_render_options render; /* colour */
    sd_locate_fn locate;      /* github: may be NULL (no file= ever) */
    void *locate_ctx;
    const sd_rank_spread *spread;  /* many: NEW's members across ranks; may be NULL */
    const char *const *spread_names;   /* a label per NEW member ("rank 2") */
} sd_check_report;
#define SD_CHECK_REPORT_INIT \
    {SD_CHECK_REPORT_VERSION, NULL, 0, false, false, 0, SD_RENDER_OPTIONS_INIT, NULL, \
     NULL, NULL, NULL}
sd_status sd_check_report_init(sd_check_report *opts, unsigned version);

sd_status sd_render_check_json(FILE *out, const sd_check_report *r);

/* ---- Render tier (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_RENDER_API; exported in the node LIBSNAPDIFF_RENDER_0.3. Words and
 * layout for people, which change with the tool's output: no API promise past the
 * SONAME's. */
#ifdef SNAPDIFF_RENDER_API
sd_status sd_render_check_text(FILE *out, const sd_check_report *r);
sd_status sd_render_check_github(FILE *out, const sd_check_report *r);
sd_status sd_render_check_junit(FILE *out, const sd_check_report *r);
#endif /* SNAPDIFF_RENDER_API */

#ifdef __cplusplus
}
#endif

#endif
