/* diff_render.h - what the diff renderers share (private, sdp_); the renderers themselves
 * are public (snapdiff/render_diff.h). A site as JSON names it is site.h's, a pattern's
 * words pattern_words.h's. */
#ifndef SNAPDIFF_RENDER_DIFF_RENDER_H
#define SNAPDIFF_RENDER_DIFF_RENDER_H

#include "snapdiff/render_diff.h"

#endif
