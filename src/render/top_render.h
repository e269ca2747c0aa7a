/* top_render.h - what top's text shares with trace's (private, sdp_). Not installed. */
#ifndef SNAPDIFF_RENDER_TOP_RENDER_H
#define SNAPDIFF_RENDER_TOP_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "snapdiff/frag.h"

/* The oom events of device `device` in `f` (NULL: none), first in top and trace: a line
 * with their count, then the latest three as frag prints them. */
void sdp_top_ooms_text(FILE *out, const sd_frag *f, int64_t device, bool color);

#endif
