/* gate.h - CI gates: a table of named limits, each measured on an analysis and judged.
 *
 * `snapdiff OLD NEW --max-growth SIZE` checks one limit; a `check` command will add more
 * rows to the same table. A limit is asked for by id with its value; the gate measures
 * each one, compares and says pass or fail per limit and overall. Wording is the
 * renderer's: the result holds numbers only.
 */
#ifndef SNAPDIFF_GATE_H
#define SNAPDIFF_GATE_H

#include <stdbool.h>
#include "diff.h"

typedef enum sd_limit_id {
    SD_LIMIT_MAX_GROWTH,      /* allocated bytes new - old, all devices: at most the limit */
    SD_LIMIT_COUNT
} sd_limit_id;

/* What was asked for: one optional value per limit. */
typedef struct sd_limits {
    bool has[SD_LIMIT_COUNT];
    uint64_t value[SD_LIMIT_COUNT];
} sd_limits;

typedef struct sd_limit_result {
    sd_limit_id id;
    const char *name;         /* the option that sets it: "max-growth" */
    int64_t measured;         /* e.g. the allocated delta in bytes */
    uint64_t limit;
    bool pass;                /* measured <= limit */
} sd_limit_result;

typedef struct sd_gate {
    sd_limit_result results[SD_LIMIT_COUNT];   /* the limits asked for, in table order */
    size_t n_results;
    bool pass;                                 /* every limit passed (true when none) */
} sd_gate;

/* The name of a limit ("max-growth"), or NULL when out of range. */
const char *sd_limit_name(sd_limit_id id);

/* Judge a diff against the limits asked for. Never fails. */
void sd_gate_diff(const sd_diff *d, const sd_limits *limits, sd_gate *out);

#endif
