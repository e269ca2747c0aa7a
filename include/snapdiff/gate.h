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
    SD_UNIT_BYTES,             /* measured, limit: bytes (value[], measured) */
    SD_UNIT_PERCENT,           /* ratio[], measured_ratio: percent */
    SD_UNIT_RATIO,             /* ratio[], measured_ratio: 0..1 */
    SD_UNIT_COUNT,             /* value[], measured: a count (e.g. oom entries) */
} sd_limit_unit;

/* What was asked for: one optional value per limit (value[] for bytes, ratio[] else). */
typedef struct sd_limits {
    bool has[SD_LIMIT_COUNT];
    uint64_t value[SD_LIMIT_COUNT];
    double ratio[SD_LIMIT_COUNT];
} sd_limits;

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

typedef struct sd_gate {
    sd_limit_result results[SD_LIMIT_COUNT];   /* the limits asked for, in table order */
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
/* What sd_limit_set accepts for `id`, for messages: "a size (e.g. 512MiB, or 0)". */
const char *sd_limit_expects(sd_limit_id id);

/* Read a limits file: one `key = value` per line, `#` starts a comment, blank lines
 * ignored; keys are limit names (above) or "steps" (a positive number, into *steps when
 * steps is not NULL). Values set here do not replace limits already in `limits` (the
 * command line wins), nor a nonzero *steps. @return SD_OK, or SD_EFORMAT naming the
 * line ("limits.conf:3: ...", err->source = path) on the first bad line. */
sd_status sd_limits_parse(const char *text, size_t len, const char *path, sd_limits *limits,
                          uint64_t *steps, sd_error *err);

/* How many limits are asked for. */
size_t sd_limits_count(const sd_limits *limits);

/* Judge a diff against the limits asked for. Never fails. SD_LIMIT_MAX_PER_STEP is
 * measured on the diff's per-step growth: without steps it is not measurable (callers
 * require steps with it). */
void sd_gate_diff(const sd_diff *d, const sd_limits *limits, sd_gate *out);

#ifdef __cplusplus
}
#endif

#endif
