/* memo.h - what the analysis derives once from a snapshot's frames and keeps on it.
 *
 * The label of a site drops the directory common to the file's user frames
 * (analysis/attrib.c, sd_frame_label_path): a property of the file that every view of it
 * must share, so it is computed once per snapshot and kept here. The model only stores
 * it; which frames are the user's is the analysis's rule. Files compared with each other
 * (one profile) share the prefix common to theirs, so that a site reads alike on both
 * sides. Safe to call from several threads: one stores, the others compute for
 * themselves meanwhile. Not
 * installed; no pickle header behind it, so the analysis may include it.
 */
#ifndef SNAPDIFF_MODEL_MEMO_H
#define SNAPDIFF_MODEL_MEMO_H

#include <stdbool.h>
#include <stddef.h>

#include "snapdiff/snapshot.h"

/* Every interned frame of the snapshot (its frame ids are the indices). */
const sd_frame *sdp_snapshot_frames(const sd_snapshot *s, size_t *n);
/* The stored label prefix. @return false when none is stored yet. */
bool sdp_snapshot_label_prefix(const sd_snapshot *s, const char **prefix, size_t *len);
/* Store it (prefix: a string the snapshot owns, or one of a file compared with it). A
 * store while another thread stores is ignored; a later store replaces the value. */
void sdp_snapshot_set_label_prefix(const sd_snapshot *s, const char *prefix, size_t len);

#endif
