/* check.h - the members of `snapdiff check`: per compared pair (one for two files, one per
 * rank for archives or directories), its gate (gate.h: limits, verdicts, offending groups)
 * with the offending groups copied out of the diff, or which side lacks it.
 *
 * A member outlives the diff and both snapshots it was judged on, so that a caller can
 * free a pair as soon as it is judged (check holds one pair of models per loading thread,
 * not every rank's). Its renderers: render_check.h. */
#ifndef SNAPDIFF_CHECK_H
#define SNAPDIFF_CHECK_H

#include <stdbool.h>

#include "diff.h"
#include "gate.h"
#include "ranks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One offending group, copied out of its diff. */
typedef struct sd_check_offender {
    sd_limit_id limit;        /* the limit it is behind */
    char *key;                /* the group key (owned) */
    uint64_t old_bytes, new_bytes;
    int64_t delta_bytes, delta_blocks;
    sd_pattern pattern;       /* the diff's pattern of the group (pattern.h) */
    bool has_site;
    char *site_file;          /* the representative stack's site frame (owned) */
    int64_t site_line;
    char *label;              /* the group as every view names it (attrib.h,
                               * sd_group_label without via; owned); the key without a
                               * representative stack */
} sd_check_offender;

typedef struct sd_check_member {
    const char *name;         /* the member as shown: NEW's name, else OLD's */
    const char *old_name;     /* NULL when missing */
    int64_t rank;             /* the rank number both names carry; -1: paired by name */
    sd_member_missing missing;
    sd_gate gate;             /* its offenders' `group` indices are the diff's, now freed;
                               * released by sd_check_member_release */
    sd_check_offender *offenders;   /* [gate.n_offenders], for the renderers */
    bool pass;                /* gate.pass and paired */
} sd_check_member;

/* Copy the offenders of m->gate out of `d` (the diff the gate judged). SD_ENOMEM. */
sd_status sd_check_member_take(sd_check_member *m, const sd_diff *d);
/* Free what sd_check_member_take copied and the member's gate (sd_gate_release; the
 * member itself is the caller's). */
void sd_check_member_release(sd_check_member *m);

/* "rank 2" when the member carries a rank number, else its name, into buf. */
const char *sd_check_member_label(const sd_check_member *m, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
