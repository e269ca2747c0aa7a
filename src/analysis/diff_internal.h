/* diff_internal.h - shared by attrib.c, profile.c, diff.c, diff_kept.c and peak_diff.c. Not
 * installed. */
#ifndef SNAPDIFF_DIFF_INTERNAL_H
#define SNAPDIFF_DIFF_INTERNAL_H

#include "base/base.h"
#include "snapdiff/diff.h"
#include "snapdiff/peak.h"

/* The peaks of both snapshots, compared (peak_diff.c): the diff makes and frees it, and
 * hands it out as sd_diff_peak. Either snapshot may lack a trace (then no device pairs);
 * both must outlive the result. @return it, or NULL with err (SD_EUSAGE, SD_ENOMEM). */
sd_peak_diff *sdp_peak_diff_create(const sd_snapshot *old_snap, const sd_snapshot *new_snap,
                                   const sd_peak_options *opts, sd_error *err);
void sdp_peak_diff_free(sd_peak_diff *d);

/* "FILENAME:LINE NAME" (attrib.c) */
void sdp_sbuf_put_frame(sdp_sbuf *b, const sd_frame *f);

/* ---- attribution on pre-classified frames (attrib.c) ----
 * kinds[i] is sd_attrib_classify() of frames[i]; the diff caches kinds per frame id. */
bool sdp_frame_is_python(const sd_frame *f);
bool sdp_path_is_torch(const char *filename);
/* The files of one comparison label their sites with one prefix: the directory their user
 * frames share (attrib.h, labels). */
void sdp_attrib_share_labels(const sd_snapshot *const *snaps, size_t n);
/* The directory every user frame of the file shares, as labels drop it (attrib.c): its
 * length, *out its start (NULL: no user frame). A summary keeps it, since it keeps only
 * some of the file's frames and would otherwise label them by another prefix. */
size_t sdp_attrib_label_prefix(const sd_snapshot *s, const char **out);
void sdp_attrib_site_kinds(const sd_frame *const *frames, const uint8_t *kinds, size_t n,
                           sd_site *out);
/* A stack as the attribution reads it: frames and their kinds. */
typedef struct sdp_stack_view {
    const sd_frame *const *frames;
    const uint8_t *kinds;
    size_t n;
    const sd_stack_context *ctx;   /* the stack's context; NULL: none */
} sdp_stack_view;
/* The site with forward_frames (fwd may be NULL): sd_attrib_site_of_stack's rule. */
void sdp_attrib_site_view(const sdp_stack_view *stack, const sdp_stack_view *fwd,
                          sd_site *out);
/* Append the group key of the stack (and its forward_frames, may be NULL) to b. */
void sdp_attrib_key_view(const sd_attrib *a, const sdp_stack_view *stack,
                         const sdp_stack_view *fwd, sdp_sbuf *b);
/* Append the group key of the stack to b (no forward_frames). */
/* The key of a snapshot's stack as the diff and the peak make it: with its context and
 * forward_frames (attrib.c). @return false when out of memory. */
bool sdp_attrib_key_of_stack(const sd_attrib *a, const sd_snapshot *s, uint32_t stack,
                             sdp_sbuf *b);
void sdp_attrib_key_kinds(const sd_attrib *a, const sd_frame *const *frames,
                          const uint8_t *kinds, size_t n, sdp_sbuf *b);

/* ---- code that moved (diff_moved.c) ----
 * Pair the groups[0..*n_groups) that only OLD has with those that only NEW has when their
 * keys differ only in line numbers and their stacks have one shape; each pair becomes NEW's
 * group with OLD's figures (sd_diff_group.moved) and OLD's is removed (groups and
 * group_cell compacted). partner[key index] (n_keys entries) is the other key of a pair,
 * SD_PROFILE_NO_KEY for the rest; *n_moved the pairs. */
sd_status sdp_diff_pair_moved(sd_diff_group *groups, size_t *n_groups, size_t *group_cell,
                              size_t n_devices, uint32_t *partner, size_t n_keys,
                              const sd_attrib *a, size_t *n_moved, sdp_arena *arena,
                              sd_error *err);
/* The key paired with profile key k as moved code, or SD_PROFILE_NO_KEY (diff.c). */
uint32_t sdp_diff_moved_partner(const sd_diff *d, size_t k);

/* ---- kept blocks (diff_kept.c) ----
 * Count per device the ALLOCATED blocks of each side and those kept (same device,
 * address, size and stack content) into devices[].blocks; old_snap may be NULL. Every
 * device of both snapshots must have its slot in devices[]. When kept_by_key is not NULL
 * (key count of `profile` x n_devices counters, side 1 = new_snap), each kept block also
 * counts under [its group key * n_devices + its device's slot]. */
sd_status sdp_kept_match(const sd_snapshot *old_snap, const sd_snapshot *new_snap,
                         sd_diff_device *devices, size_t n_devices,
                         const sd_profile *profile, uint64_t *kept_by_key, sdp_arena *arena,
                         sd_error *err);

/* ---- warnings (diff_warn.c) ----
 * The warnings of a diff whose groups, devices and profile are made, into an array of
 * at most sdp_diff_warning_cap(d) entries. @return how many. */
size_t sdp_diff_warning_cap(const sd_diff *d);
size_t sdp_diff_warnings(const sd_diff *d, const sd_snapshot *old_snap,
                         const sd_snapshot *new_snap, sd_diff_warning *out);
/* One run twice or two runs (sd_diff_comparison_of), after the warnings; `at` is
 * sd_diff_options.at. */
void sdp_diff_compare(const sd_diff *d, const sd_snapshot *old_snap,
                      const sd_snapshot *new_snap, int at, sd_diff_comparison *out);

#endif
