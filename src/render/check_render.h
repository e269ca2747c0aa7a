/* check_render.h - what the check renderers share (private, sdp_); the renderers
 * themselves are public (snapdiff/render_check.h), the members they lay out are the
 * analysis's (snapdiff/check.h). */
#ifndef SNAPDIFF_RENDER_CHECK_RENDER_H
#define SNAPDIFF_RENDER_CHECK_RENDER_H

#include "snapdiff/render_check.h"
#include "snapdiff/render_ranks.h"

#endif
