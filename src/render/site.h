/* site.h - a site as every JSON view writes it (private, sdp_): diff, top, trace, frag
 * (its oom events' live sites and levers) and, through frag, check. One place decides the
 * object's keys, what a native or backward site adds, and that a site with no frame to
 * name is null (docs/json-diff.md, "site"). */
#ifndef SNAPDIFF_RENDER_SITE_H
#define SNAPDIFF_RENDER_SITE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "snapdiff/attrib.h"

/* The size of a buffer a label is written into (sd_group_label, sd_site_text). */
enum { SDP_LABEL_BUF = 1400 };

/* The site of `stack`: {filename, line, name, kind}. A native site has filename "", line
 * 0, its readable label as name and the raw C++ symbol as `symbol`; a backward site adds
 * "backward": true. JSON null when there is no frame to name: no snapshot, an empty stack
 * (`<no stack>`), a site index outside the stack. */
json_t *sdp_site_json(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                      const sd_site *site);
/* The same for a stack whose site is not at hand: the rules' site of `stack` (0: null). */
json_t *sdp_stack_site_json(const sd_attrib *a, const sd_snapshot *s, uint32_t stack);
/* The frames of `stack`, innermost first, native noise left out; each with its kind when
 * `a` is given (the diff), as written otherwise (trace). */
json_t *sdp_stack_json(const sd_attrib *a, const sd_snapshot *s, uint32_t stack);
/* A frame with its kind: {filename, line, name, kind}; null for NULL. */
json_t *sdp_kind_frame_json(const sd_attrib *a, const sd_frame *f);

/* The one label of a group, as the text's table shows it (sd_group_label; with_via: the
 * diff's " via ..."); `key` when the label cannot be stored. */
json_t *sdp_group_label_json(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                             const sd_site *site, const char *key, bool with_via);
/* The one label of a site (sd_site_text); `fallback` (NULL: JSON null) when it cannot be
 * stored. */
json_t *sdp_site_label_json(const sd_snapshot *s, uint32_t stack, const sd_site *site,
                            const char *fallback);

#endif
