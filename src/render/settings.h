/* settings.h - the allocator settings a snapshot recorded, as each report shows them.
 * One module, so the stats and frag reports cannot drift apart in what they say about
 * PYTORCH_CUDA_ALLOC_CONF. Private (sdp_); the renderers and the CLI call it. */
#ifndef SNAPDIFF_RENDER_SETTINGS_H
#define SNAPDIFF_RENDER_SETTINGS_H

#include <jansson.h>
#include <stdio.h>

#include "snapdiff/snapshot.h"

/* `stats` text: one "allocator settings: key=value ..." line, nothing when not recorded. */
void sdp_settings_stats_text(FILE *out, const sd_allocator_settings *a);
/* `stats --json` "allocator_settings": the recorded dict, or null when not recorded. */
json_t *sdp_settings_stats_json(const sd_allocator_settings *a);
/* "skip_actions" of stats and trace --json: null when the snapshot does not record
 * skip_actions (unknown), else {"actions": [...], "unreliable": [figure, ...]}. */
json_t *sdp_skip_actions_json(const sd_snapshot *s);
/* The same as a text line ("warning: the recording skipped A, B (skip_actions): unreliable:
 * ..."), nothing when nothing was skipped or the snapshot does not say. */
void sdp_skip_actions_text(FILE *out, const sd_snapshot *s, const char *indent);
/* Pinned host memory (sd_snapshot_host_memory) in `top` and the report: one line
 * "pinned host memory: X allocated in N blocks, Y reserved in M segments (...)", nothing
 * when the snapshot has none; JSON {"allocated_bytes", "blocks", "reserved_bytes",
 * "segments", "trace_entries"} or null. The figures are sd_stats_device's. */
void sdp_host_text(FILE *out, const sd_snapshot *s, const char *indent);
json_t *sdp_host_json(const sd_snapshot *s);
/* `frag` text: one line, with the defaults assumed when nothing was recorded. */
void sdp_settings_frag_text(FILE *out, const sd_allocator_settings *a);
/* `frag --json` "settings": every field present, null where not recorded. */
json_t *sdp_settings_frag_json(const sd_allocator_settings *a);

#endif
