/* render.h - analyses written for people and machines. Every renderer writes to the
 * FILE * it is given and nothing else; it decides nothing (the figures, verdicts and
 * advice come from the analyses as data) and only words and lays them out.
 *
 * Text renderers colour only when opts->color says so (the caller decides: a terminal,
 * NO_COLOR). @return SD_OK, or SD_EIO when writing failed (errno set).
 *
 * Tiers (docs/architecture.md, "Tiers"): each analysis's JSON writer (sd_render_*_json, a
 * versioned schema of docs/json-*.md) is stable and declared by its render_*.h as is;
 * everything that words or lays out for people (text, SVG, HTML, folded, pprof, CI
 * annotations, the English of warnings and advice) is declared only where the includer
 * defines SNAPDIFF_RENDER_API, and exported in the node LIBSNAPDIFF_RENDER_0.3. */
#ifndef SNAPDIFF_RENDER_H
#define SNAPDIFF_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Options structs can grow, as common.h says (version first, _VERSION, _INIT, _init()).
 * A renderer given a version newer than it knows returns SD_EUSAGE. */
#define SD_RENDER_OPTIONS_VERSION 1
typedef struct sd_render_options {
    unsigned version;       /* SD_RENDER_OPTIONS_VERSION */
    bool color;             /* ANSI colour in text output */
    unsigned width;         /* terminal width for text, 0 = 80 */
} sd_render_options;
#define SD_RENDER_OPTIONS_INIT {SD_RENDER_OPTIONS_VERSION, false, 0}
sd_status sd_render_options_init(sd_render_options *opts, unsigned version);

#ifdef __cplusplus
}
#endif

#endif
