/* check_render.h - `snapdiff check` written for people, tools and CI systems: text,
 * JSON (schema snapdiff.check/1, docs/json-check.md), GitHub annotation lines and a
 * JUnit XML report.
 *
 * A report is one member per compared pair (one for two files, one per rank for archives
 * or directories); each holds its gate (gate.h: limits, verdicts, offending groups), or
 * says which side lacks it. The verdicts come from the gate; the renderers word and lay
 * them out. Private to libsnapdiff (prefix sdp_). @return SD_OK, SD_EIO, SD_ENOMEM. */
#ifndef SNAPDIFF_RENDER_CHECK_RENDER_H
#define SNAPDIFF_RENDER_CHECK_RENDER_H

#include <stdio.h>

#include "snapdiff/diff.h"
#include "snapdiff/gate.h"
#include "snapdiff/ranks.h"
#include "snapdiff/render.h"

typedef enum sdp_check_missing {
    SDP_CHECK_PAIRED,         /* both sides: diff and gate valid */
    SDP_CHECK_NO_OLD,         /* only in NEW: fails (nothing to compare with) */
    SDP_CHECK_NO_NEW,         /* only in OLD: fails (the rank is gone) */
} sdp_check_missing;

/* One offending group, copied out of its diff so that the diff and both snapshots can be
 * freed as soon as the pair is judged (check holds one pair of models per loading
 * thread, not every rank's). */
typedef struct sdp_check_offender {
    sd_limit_id limit;        /* the limit it is behind */
    char *key;                /* the group key (owned) */
    uint64_t old_bytes, new_bytes;
    int64_t delta_bytes, delta_blocks;
    sd_pattern pattern;       /* the diff's pattern of the group (pattern.h) */
    bool has_site;
    char *site_file;          /* the representative stack's site frame (owned) */
    int64_t site_line;
} sdp_check_offender;

typedef struct sdp_check_member {
    const char *name;         /* the member as shown: NEW's name, else OLD's */
    const char *old_name;     /* NULL when missing */
    int64_t rank;             /* the rank number both names carry; -1: paired by name */
    sdp_check_missing missing;
    sd_gate gate;             /* its offenders' `group` indices are the diff's, now freed */
    sdp_check_offender *offenders;   /* [gate.n_offenders], for the renderers */
    bool pass;                /* gate.pass and paired */
} sdp_check_member;

/* Copy the offenders of m->gate out of `d` (the diff the gate judged). SD_ENOMEM. */
sd_status sdp_check_member_take(sdp_check_member *m, const sd_diff *d);
void sdp_check_member_release(sdp_check_member *m);

/* Where a site's file is in the repository being checked, for annotations: the path
 * relative to the repository written into buf, or false when it is not there. */
typedef bool (*sdp_locate_fn)(void *ctx, const char *filename, char *buf, size_t size);

typedef struct sdp_check_report {
    const sdp_check_member *members;
    size_t n;
    bool many;                /* inputs with several members: name each */
    bool pass;                /* every member passed */
    size_t top;               /* offending groups shown per member; 0 = 5 */
    sd_render_options render; /* colour */
    sdp_locate_fn locate;     /* github: may be NULL (no file= ever) */
    void *locate_ctx;
    const sd_rank_spread *spread;  /* many: NEW's members across ranks; may be NULL */
    const char *const *spread_names;   /* a label per NEW member ("rank 2") */
} sdp_check_report;

/* "rank 2" when the member carries a rank number, else its name, into buf. */
const char *sdp_check_member_label(const sdp_check_member *m, char *buf, size_t size);

/* The spread of a set of snapshots (ranks.h) for people: min, median and max of
 * allocated and reserved, and the one furthest from the median (`names`: per snapshot;
 * `noun`: "ranks" or "snapshots"). Nothing for fewer than two. */
void sdp_render_spread_text(FILE *out, const sd_rank_spread *sp, const char *const *names,
                            const char *noun, bool color);

sd_status sdp_render_check_text(FILE *out, const sdp_check_report *r);
sd_status sdp_render_check_json(FILE *out, const sdp_check_report *r);
sd_status sdp_render_check_github(FILE *out, const sdp_check_report *r);
sd_status sdp_render_check_junit(FILE *out, const sdp_check_report *r);

#endif
