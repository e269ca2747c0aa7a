/* render_replay.h - the report of `snapdiff replay` as text and as JSON
 * (snapdiff.replay/1, docs/json-replay.md); see render.h for the rules every renderer
 * keeps. */
#ifndef SNAPDIFF_RENDER_REPLAY_H
#define SNAPDIFF_RENDER_REPLAY_H

#include <stdio.h>

#include "render.h"
#include "replay.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_REPLAY_SCHEMA "snapdiff.replay/1"

/* The snapdiff.replay/1 document of one replay. */
sd_status sd_render_replay_json(FILE *out, const sd_replay *r, const sd_render_options *ro,
                                sd_error *err);

/* ---- Render tier (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_RENDER_API; exported in the node LIBSNAPDIFF_RENDER_0.3. Words and
 * layout for people, which change with the tool's output: no API promise past the
 * SONAME's. */
#ifdef SNAPDIFF_RENDER_API
/* Per device: the fidelity line, a table of configs (peak reserved, change against the
 * recorded peak, retries, OOMs, stranded at the end), one verdict line per config, the
 * limits. ro NULL = no colour. */
sd_status sd_render_replay_text(FILE *out, const sd_replay *r, const sd_render_options *ro,
                                sd_error *err);
#endif /* SNAPDIFF_RENDER_API */

#ifdef __cplusplus
}
#endif

#endif
