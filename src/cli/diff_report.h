/* diff_report.h - shared by cmd_diff.c (text, folded) and diff_json.c (JSON). */
#ifndef SNAPDIFF_CLI_DIFF_REPORT_H
#define SNAPDIFF_CLI_DIFF_REPORT_H

#include "options.h"
#include "snapdiff/diff.h"

typedef struct diff_report {
    const struct cli_opts *o;
    const sd_snapshot *old_snap, *new_snap;
    const sd_diff *diff;
    const char *user_prefix;      /* common directory of user files, stripped on display */
    size_t user_prefix_len;
} diff_report;

/* Indexed by enum cli_group_by. */
extern const char *const diff_group_by_names[];

/* new - old as a signed delta. */
int64_t diff_sdelta(uint64_t new_v, uint64_t old_v);
/* Frame i of the group's representative stack (borrowed from its snapshot), or NULL. */
const sd_frame *diff_stack_frame(const sd_diff_group *g, size_t i);
/* Write the whole diff as JSON to stdout. @return the exit status. */
int diff_print_json(const diff_report *r);

#endif
