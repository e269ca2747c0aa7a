/* render_frag.h - the report of `snapdiff frag` as text, JSON (snapdiff.frag/1) and SVG,
 * and the words of its verdicts and advice (see render.h for the rules every renderer
 * keeps). The analysis decides; these functions only word and lay out. */
#ifndef SNAPDIFF_RENDER_FRAG_H
#define SNAPDIFF_RENDER_FRAG_H

#include <stdbool.h>
#include <stdio.h>

#include "frag.h"
#include "render.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_FRAG_SCHEMA "snapdiff.frag/1"

/* The snapdiff.frag/1 document of n analyses (one file: the file's object itself). */
sd_status sd_render_frag_json(FILE *out, const sd_frag *const *frags, size_t n);

/* ---- Render tier (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_RENDER_API; exported in the node LIBSNAPDIFF_RENDER_0.3. Words and
 * layout for people, which change with the tool's output: no API promise past the
 * SONAME's. */
#ifdef SNAPDIFF_RENDER_API
/* One analysis as text: per device the verdict with its reason, the advice, the figures
 * per device, pool and stream, the histogram, the oom events; with_map adds the segment
 * maps. opts NULL = no colour. */
sd_status sd_render_frag_text(FILE *out, const sd_frag *f, bool with_map,
                              const sd_render_options *opts);
/* The picture of n analyses as one <svg> element, to embed in HTML or another document:
 * per device the verdict, the segment map to scale and the free-block histogram. */
sd_status sd_render_frag_svg_element(FILE *out, const sd_frag *const *frags, size_t n);
/* The same as a self-contained SVG document (XML prolog, then the element). */
sd_status sd_render_frag_svg(FILE *out, const sd_frag *const *frags, size_t n);
/* The reason of a verdict / one piece of advice in English, as snprintf does: at most
 * size bytes with the NUL. @return the length the whole text needs. */
size_t sd_frag_explain(const sd_frag_why *why, char *buf, size_t size);
size_t sd_frag_advice_text(const sd_frag_advice *a, char *buf, size_t size);
/* Why an oom event was not replayed ("" when it was), the same way. */
size_t sd_frag_oom_note(const sd_frag_oom *o, char *buf, size_t size);
/* The line an oom event's request came from, "FILE:LINE NAME" (library paths shortened,
 * long C++ names cut), "" when its trace entry has no frames; s is the analysed snapshot. */
size_t sd_frag_oom_site(const sd_snapshot *s, const sd_frag_oom *o, char *buf, size_t size);
#define SD_FRAG_TEXT_MAX 1024    /* enough for any of them */
#endif /* SNAPDIFF_RENDER_API */

#ifdef __cplusplus
}
#endif

#endif
