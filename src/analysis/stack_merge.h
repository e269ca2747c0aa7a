/* stack_merge.h - one table that merges a profile's stacks by the text of their key, for
 * the folded stacks (analysis/folded.h: the folded output and the report's icicle) and the
 * pprof output (private to libsnapdiff).
 *
 * Both outputs drop frames (native noise) and so collapse different interned stacks into
 * one: what merges them is the key each renderer writes for a stack (the folded line, the
 * pprof frame list). The table sums bytes and blocks per key, `to` minus `from`, over the
 * stacks of the profile that hold bytes and have a group key, and hands back the keys
 * whose bytes grew, sorted by key text.
 */
#ifndef SNAPDIFF_ANALYSIS_STACK_MERGE_H
#define SNAPDIFF_ANALYSIS_STACK_MERGE_H

#include "base/base.h"
#include "snapdiff/profile.h"

typedef struct sdp_merged_stack {
    const char *key;         /* NUL-terminated copy (keys hold no NUL) */
    size_t len;
    uint64_t hash;
    int64_t bytes, blocks;   /* to minus from */
    int64_t requested;       /* requested bytes, to minus from: 0 with bytes that moved is
                              * allocator rounding only (sd_diff_group_changed's rule) */
} sdp_merged_stack;

typedef struct sdp_stack_merge {
    sdp_merged_stack *e;
    size_t n, cap;
    sdp_htab index;          /* key -> entry */
    sdp_arena *arena;        /* the keys; charged for the tables */
} sdp_stack_merge;

/* Writes the key of stack `id` of `snap` into `b` (reset first). */
typedef void (*sdp_stack_key_fn)(void *ctx, const sd_snapshot *snap, uint32_t id, sdp_sbuf *b);

/* Merge side `from` (subtracted) and side `to` (added) of `p` by `key`; a side without a
 * snapshot adds nothing. Then *out: the stacks whose bytes grew, sorted by key (malloc'd,
 * the caller frees it; the entries are the table's). @return false when out of memory. */
bool sdp_stack_merge_growth(sdp_stack_merge *m, sdp_arena *arena, const sd_profile *p,
                            size_t from, size_t to, sdp_stack_key_fn key, void *ctx,
                            sdp_merged_stack ***out, size_t *n_out);
void sdp_stack_merge_free(sdp_stack_merge *m);

#endif
