/* gate.c - the table of limits a CI gate can check (gate.h).
 *
 * Adding a limit: an id in gate.h and a row here with its name and how to measure it.
 * Every limit is "measured <= limit"; the measure is signed so that shrinking passes. */
#include "base/base.h"
#include "snapdiff/gate.h"

typedef int64_t (*measure_fn)(const sd_diff *d);

static int64_t allocated_growth(const sd_diff *d) { return sd_diff_totals_of(d)->delta.allocated; }

static const struct limit_def {
    sd_limit_id id;
    const char *name;
    measure_fn measure;
} limit_table[SD_LIMIT_COUNT] = {
    {SD_LIMIT_MAX_GROWTH, "max-growth", allocated_growth},
};

const char *sd_limit_name(sd_limit_id id)
{
    return (unsigned)id < SD_LIMIT_COUNT ? limit_table[id].name : NULL;
}

static bool within(int64_t measured, uint64_t limit)
{
    return measured <= 0 || (uint64_t)measured <= limit;
}

void sd_gate_diff(const sd_diff *d, const sd_limits *limits, sd_gate *out)
{
    memset(out, 0, sizeof *out);
    out->pass = true;
    for (size_t i = 0; i < SD_LIMIT_COUNT; i++) {
        const struct limit_def *def = &limit_table[i];
        if (!limits->has[def->id]) continue;
        sd_limit_result *r = &out->results[out->n_results++];
        r->id = def->id;
        r->name = def->name;
        r->measured = def->measure(d);
        r->limit = limits->value[def->id];
        r->pass = within(r->measured, r->limit);
        out->pass = out->pass && r->pass;
    }
}
