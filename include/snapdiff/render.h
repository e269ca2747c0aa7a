/* render.h - analyses written for people and machines. Every renderer writes to the
 * FILE * it is given and nothing else; it decides nothing (the figures, verdicts and
 * advice come from the analyses as data) and only words and lays them out.
 *
 * Text renderers colour only when opts->color says so (the caller decides: a terminal,
 * NO_COLOR). @return SD_OK, or SD_EIO when writing failed (errno set). */
#ifndef SNAPDIFF_RENDER_H
#define SNAPDIFF_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "snapdiff.h"

typedef struct sd_render_options {
    bool color;             /* ANSI colour in text output */
    unsigned width;         /* terminal width for text, 0 = 80 */
} sd_render_options;

#endif
