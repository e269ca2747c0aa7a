/* render_ranks.h - the diff of many ranks (`snapdiff OLD.zip NEW.zip`) and the spread of
 * a set of snapshots, for people (text) and tools (snapdiff.diff-ranks/1). See render.h
 * for the rules every renderer keeps.
 *
 * The caller diffs each pair (ranks.h pairs them) and renders each pair's diff with
 * render_diff.h into memory; these functions lay those reports out member by member, so
 * that a caller can stream the members (one model per loading thread) and interleave
 * its own messages. @return SD_OK, or SD_EIO when writing failed. */
#ifndef SNAPDIFF_RENDER_API
#error "snapdiff/render_ranks.h is in libsnapdiff's render tier (docs/architecture.md, \"Tiers\"): define SNAPDIFF_RENDER_API before including it"
#endif

#ifndef SNAPDIFF_RENDER_RANKS_H
#define SNAPDIFF_RENDER_RANKS_H

#include <stdbool.h>
#include <stdio.h>

#include "ranks.h"
#include "render.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_DIFF_RANKS_SCHEMA "snapdiff.diff-ranks/1"

/* One pair of members as the report shows it. */
typedef struct sd_diff_rank {
    const char *label;        /* "rank 2", or the member's name */
    const char *name;         /* NEW's member name, else OLD's */
    const char *old_name;     /* OLD's member name; NULL when only in NEW */
    int64_t rank;             /* the rank number both names carry; -1: paired by name */
    sd_member_missing missing;
    const char *report;       /* the pair's diff as rendered (text or JSON); NULL when missing */
    size_t report_len;
    int64_t grew;             /* allocated delta of the pair */
} sd_diff_rank;

/* Why a member has no diff: "only in NEW: no OLD member to compare with", "only in OLD:
 * missing from NEW"; "" when paired. */
const char *sd_member_missing_text(sd_member_missing m);

/* Text: member i's heading ("=== rank 2 (NAME) ===") and its report, or why it has none. */
sd_status sd_render_diff_rank_text(FILE *out, const sd_diff_rank *m, size_t i);
/* Text, after the members: the growth per rank, then the spread of NEW (sp may be NULL:
 * no spread; names: a label per NEW member). */
sd_status sd_render_diff_ranks_summary_text(FILE *out, const sd_diff_rank *m, size_t n,
                                            const sd_rank_spread *sp,
                                            const char *const *names,
                                            const sd_render_options *ro);
/* JSON: the document's opening, member i's object (its report a snapdiff.diff/1 document
 * as sd_render_diff_json writes it), and the closing. */
sd_status sd_render_diff_ranks_json_begin(FILE *out);
sd_status sd_render_diff_rank_json(FILE *out, const sd_diff_rank *m, size_t i);
sd_status sd_render_diff_ranks_json_end(FILE *out);

/* The spread of a set of snapshots for people: min, median and max of allocated and
 * reserved, and the one furthest from the median (`names`: per snapshot; `noun`:
 * "ranks" or "snapshots"). Nothing for fewer than two. */
void sd_render_spread_text(FILE *out, const sd_rank_spread *sp, const char *const *names,
                           const char *noun, bool color);

#ifdef __cplusplus
}
#endif

#endif
