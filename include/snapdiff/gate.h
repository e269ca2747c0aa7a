/* gate.h - CI gates: a table of named limits, each measured on a diff and judged.
 *
 * `snapdiff OLD NEW --max-growth SIZE` checks one limit; `snapdiff check OLD NEW` checks
 * any combination of the rows below. A limit is asked for by id with its value (from an
 * option, or a `key = value` line of a limits file: the key is the limit's name); the
 * gate measures each one on the diff, compares, and says pass or fail per limit and
 * overall, and which groups offend. Wording is the renderer's: the result holds numbers
 * and codes only. Definitions: docs/json-check.md.
 *
 * Every limit is "measured <= limit". Byte limits measure signed bytes (shrinking passes);
 * the percentage and the fragmentation index are ratios.
 */
#ifndef SNAPDIFF_GATE_H
#define SNAPDIFF_GATE_H

#include <stdbool.h>
#include "diff.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sd_limit_id {
    SD_LIMIT_MAX_GROWTH,       /* allocated bytes new - old, all devices */
    SD_LIMIT_MAX_GROWTH_PCT,   /* 100 * that growth / old allocated (percent) */
    SD_LIMIT_MAX_GROUP_GROWTH, /* the largest growth of any one group (site) */
    SD_LIMIT_MAX_PER_STEP,     /* allocated growth / steps (needs steps in the diff) */
    SD_LIMIT_MAX_RESERVED,     /* reserved bytes of NEW, all devices */
    SD_LIMIT_MAX_FRAG_INDEX,   /* fragmentation index of NEW (0..1, frag.h) */
    SD_LIMIT_FAIL_ON_NEW_SITE, /* the most bytes a group absent from OLD holds in NEW */
    SD_LIMIT_MAX_OOMS,         /* the `oom` trace entries NEW recorded, all devices */
    SD_LIMIT_COUNT
} sd_limit_id;

typedef enum sd_limit_unit {
    SD_UNIT_BYTES,             /* measured, limit: bytes */
    SD_UNIT_PERCENT,           /* limit_ratio, measured_ratio: percent */
    SD_UNIT_RATIO,             /* limit_ratio, measured_ratio: 0..1 */
    SD_UNIT_COUNT,             /* limit, measured: a count (e.g. oom entries) */
} sd_limit_unit;

/* What was asked for: an opaque set of limits, one optional value per limit (a value
 * for byte and count limits, a ratio for the percentage and the index). Opaque so that
 * a limit added to the table changes no caller's layout (docs/architecture.md). */
typedef struct sd_limits sd_limits;

typedef struct sd_limit_result {
    sd_limit_id id;
    const char *name;         /* the option that sets it: "max-growth" */
    sd_limit_unit unit;
    bool measurable;          /* false: nothing to measure (growth % of an empty OLD);
                               * passes unless memory grew */
    int64_t measured;         /* SD_UNIT_BYTES: e.g. the allocated delta in bytes */
    uint64_t limit;
    double measured_ratio;    /* SD_UNIT_PERCENT / SD_UNIT_RATIO */
    double limit_ratio;
    bool pass;                /* measured <= limit */
    bool near;                /* passed, but measured above 90% of a nonzero limit */
} sd_limit_result;

#define SD_GATE_MAX_OFFENDERS 16

/* A group that offends a failed limit: its index for sd_diff_group_at, and the limit. */
typedef struct sd_gate_offender {
    size_t group;
    sd_limit_id limit;
} sd_gate_offender;

/* The verdict of sd_gate_diff. `results` is owned by the gate (sd_gate_release frees
 * it): a pointer, not an array sized by the limit table, so that a limit added to the
 * table moves no field (docs/architecture.md). */
typedef struct sd_gate {
    const sd_limit_result *results;            /* the limits asked for, in table order */
    size_t n_results;
    bool pass;                                 /* every limit passed (true when none) */
    /* Groups behind the failures, in the diff's report order (largest growth first):
     * a group over --max-group-growth, a new site over --fail-on-new-site, and, when a
     * total limit (growth, percent, per step, reserved) failed, the growing groups. */
    sd_gate_offender offenders[SD_GATE_MAX_OFFENDERS];
    size_t n_offenders;
    size_t n_offenders_total;                  /* before the cut at SD_GATE_MAX_OFFENDERS */
} sd_gate;

/* The name of a limit ("max-growth"), or NULL when out of range. */
const char *sd_limit_name(sd_limit_id id);
sd_limit_unit sd_limit_unit_of(sd_limit_id id);
/* The limit called `name` ("max-growth"). @return false when there is none. */
bool sd_limit_find(const char *name, sd_limit_id *out);
/* Set limit `id` from text: a size ("256MiB", "0") for byte limits, a number for the
 * percentage (>= 0) and the index (0..1). @return false (limits unchanged) on junk. */
bool sd_limit_set(sd_limits *limits, sd_limit_id id, const char *text);

/* An empty set of limits (none asked for). @return NULL when out of memory. */
sd_limits *sd_limits_create(void);
void sd_limits_free(sd_limits *limits);
/* Ask for limit `id` with a number: `value` for byte and count limits, `ratio` for the
 * percentage (>= 0) and the index (0..1); the other is ignored. @return false (limits
 * unchanged) for a limit this library does not know or a ratio out of range. */
bool sd_limits_set(sd_limits *limits, sd_limit_id id, uint64_t value, double ratio);
/* Whether limit `id` is asked for, and its value and ratio (either pointer may be NULL;
 * both 0 when not asked for). A NULL `limits`, or a limit past the ones this library
 * knows, is "not asked for". */
bool sd_limits_get(const sd_limits *limits, sd_limit_id id, uint64_t *value, double *ratio);
/* What sd_limit_set accepts for `id`, for messages: "a size (e.g. 512MiB, or 0)". */
const char *sd_limit_expects(sd_limit_id id);

/* Read a limits file: one `key = value` per line, `#` starts a comment, blank lines
 * ignored; keys are limit names (above) or "steps" (a positive number, into *steps when
 * steps is not NULL). Values set here do not replace limits already in `limits` (the
 * command line wins), nor a nonzero *steps. @return SD_OK, or SD_EFORMAT naming the
 * line ("limits.conf:3: ...", err->source = path) on the first bad line. */
sd_status sd_limits_parse(const char *text, size_t len, const char *path, sd_limits *limits,
                          uint64_t *steps, sd_error *err);

/* How many limits are asked for (0 for NULL). */
size_t sd_limits_count(const sd_limits *limits);

/* Judge a diff against the limits asked for (a NULL `limits`: none). SD_LIMIT_MAX_PER_STEP
 * is measured on the diff's per-step growth: without steps it is not measurable (callers
 * require steps with it). The gate owns its results: sd_gate_release frees them.
 * @return SD_OK, or SD_ENOMEM (then *out holds no results and fails). */
sd_status sd_gate_diff(const sd_diff *d, const sd_limits *limits, sd_gate *out);
/* Free what sd_gate_diff allocated (the gate itself is the caller's); zeroes *g. */
void sd_gate_release(sd_gate *g);
/* The result of limit `id`, or NULL when it was not asked for (or this library does not
 * know it). */
const sd_limit_result *sd_gate_result(const sd_gate *g, sd_limit_id id);

#ifdef __cplusplus
}
#endif

#endif
