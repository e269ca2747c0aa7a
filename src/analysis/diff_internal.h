/* diff_internal.h - shared by attrib.c, profile.c, diff.c and diff_kept.c. Not installed. */
#ifndef SNAPDIFF_DIFF_INTERNAL_H
#define SNAPDIFF_DIFF_INTERNAL_H

#include "base/base.h"
#include "snapdiff/diff.h"

/* "FILENAME:LINE NAME" (attrib.c) */
void sdp_sbuf_put_frame(sdp_sbuf *b, const sd_frame *f);

/* ---- attribution on pre-classified frames (attrib.c) ----
 * kinds[i] is sd_attrib_classify() of frames[i]; the diff caches kinds per frame id. */
bool sdp_frame_is_python(const sd_frame *f);
bool sdp_path_is_torch(const char *filename);
void sdp_attrib_site_kinds(const sd_frame *const *frames, const uint8_t *kinds, size_t n,
                           sd_site *out);
/* Append the group key of the stack to b. */
void sdp_attrib_key_kinds(const sd_attrib *a, const sd_frame *const *frames,
                          const uint8_t *kinds, size_t n, sdp_sbuf *b);

/* ---- kept blocks (diff_kept.c) ----
 * Count per device the ALLOCATED blocks of each side and those kept (same device,
 * address, size and stack content) into devices[].blocks; old_snap may be NULL. Every
 * device of both snapshots must have its slot in devices[]. When kept_by_key is not NULL
 * (one counter per key of `profile`, side 1 = new_snap), each kept block also counts
 * under its group key. */
sd_status sdp_kept_match(const sd_snapshot *old_snap, const sd_snapshot *new_snap,
                         sd_diff_device *devices, size_t n_devices,
                         const sd_profile *profile, uint64_t *kept_by_key, sdp_arena *arena,
                         sd_error *err);

#endif
