/* gate.c - the table of limits a CI gate can check (gate.h), and the limits file.
 *
 * Adding a limit: an id in gate.h and a row here with its name, unit and how to measure
 * it. Every limit is "measured <= limit"; byte measures are signed so that shrinking
 * passes. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"
#include "snapdiff/gate.h"
#include "snapdiff/units.h"

/* Measure one limit into r (measured / measured_ratio, measurable). */
typedef void (*measure_fn)(const sd_diff *d, sd_limit_result *r);

static void allocated_growth(const sd_diff *d, sd_limit_result *r)
{
    r->measured = sd_diff_totals_of(d)->delta.allocated;
}

static void growth_pct(const sd_diff *d, sd_limit_result *r)
{
    const sd_diff_totals *t = sd_diff_totals_of(d);
    r->measured = t->delta.allocated;
    if (t->old_stats.allocated_bytes == 0) {
        r->measurable = false;     /* judged on the growth alone */
        return;
    }
    r->measured_ratio = 100.0 * (double)t->delta.allocated / (double)t->old_stats.allocated_bytes;
}

static void group_growth(const sd_diff *d, sd_limit_result *r)
{
    /* Groups come largest growth first. */
    r->measured = sd_diff_growth_count(d) ? sd_diff_group_at(d, 0)->delta_bytes : 0;
}

static void per_step(const sd_diff *d, sd_limit_result *r)
{
    const sd_diff_totals *t = sd_diff_totals_of(d);
    r->measurable = t->has_per_step;
    r->measured = t->has_per_step ? t->per_step : 0;
}

static void reserved(const sd_diff *d, sd_limit_result *r)
{
    uint64_t v = sd_diff_totals_of(d)->new_stats.reserved_bytes;
    r->measured = v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static void frag_index(const sd_diff *d, sd_limit_result *r)
{
    r->measured_ratio = sd_diff_totals_of(d)->new_frag.index;
}

static bool is_new_site(const sd_diff_group *g) { return g->old_blocks == 0 && g->new_bytes > 0; }

static void new_site(const sd_diff *d, sd_limit_result *r)
{
    uint64_t most = 0;
    for (size_t i = 0; i < sd_diff_growth_count(d); i++) {
        const sd_diff_group *g = sd_diff_group_at(d, i);
        if (is_new_site(g) && g->new_bytes > most) most = g->new_bytes;
    }
    r->measured = most > INT64_MAX ? INT64_MAX : (int64_t)most;
}

static void oom_count(const sd_diff *d, sd_limit_result *r)
{
    uint64_t n = sd_diff_totals_of(d)->new_ooms;
    r->measured = n > INT64_MAX ? INT64_MAX : (int64_t)n;
}

static const struct limit_def {
    sd_limit_id id;
    const char *name;
    sd_limit_unit unit;
    measure_fn measure;
} limit_table[SD_LIMIT_COUNT] = {
    {SD_LIMIT_MAX_GROWTH, "max-growth", SD_UNIT_BYTES, allocated_growth},
    {SD_LIMIT_MAX_GROWTH_PCT, "max-growth-pct", SD_UNIT_PERCENT, growth_pct},
    {SD_LIMIT_MAX_GROUP_GROWTH, "max-group-growth", SD_UNIT_BYTES, group_growth},
    {SD_LIMIT_MAX_PER_STEP, "max-per-step", SD_UNIT_BYTES, per_step},
    {SD_LIMIT_MAX_RESERVED, "max-reserved", SD_UNIT_BYTES, reserved},
    {SD_LIMIT_MAX_FRAG_INDEX, "max-frag-index", SD_UNIT_RATIO, frag_index},
    {SD_LIMIT_FAIL_ON_NEW_SITE, "fail-on-new-site", SD_UNIT_BYTES, new_site},
    {SD_LIMIT_MAX_OOMS, "max-ooms", SD_UNIT_COUNT, oom_count},
};

const char *sd_limit_name(sd_limit_id id)
{
    return (unsigned)id < SD_LIMIT_COUNT ? limit_table[id].name : NULL;
}

sd_limit_unit sd_limit_unit_of(sd_limit_id id)
{
    return (unsigned)id < SD_LIMIT_COUNT ? limit_table[id].unit : SD_UNIT_BYTES;
}

bool sd_limit_find(const char *name, sd_limit_id *out)
{
    for (size_t i = 0; i < SD_LIMIT_COUNT; i++)
        if (strcmp(limit_table[i].name, name) == 0) {
            *out = limit_table[i].id;
            return true;
        }
    return false;
}

const char *sd_limit_expects(sd_limit_id id)
{
    switch (sd_limit_unit_of(id)) {
    case SD_UNIT_PERCENT: return "a percentage of at least 0 (e.g. 10 or 2.5)";
    case SD_UNIT_RATIO: return "a number from 0 to 1 (e.g. 0.5)";
    case SD_UNIT_COUNT: return "a count of at least 0 (e.g. 0)";
    case SD_UNIT_BYTES: break;
    }
    return "a size (e.g. 512MiB, or 0)";
}

static bool parse_number(const char *s, double lo, double hi, double *out)
{
    if (!s || !*s || isspace((unsigned char)*s)) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= lo && v <= hi)) return false;
    *out = v;
    return true;
}

/* A count: decimal digits only. */
static bool parse_count(const char *s, uint64_t *out)
{
    if (!s || !*s) return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s) || v > (UINT64_MAX - 9) / 10) return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

/* Private: the arrays grow with the limit table, so callers see only the handle. */
struct sd_limits {
    bool has[SD_LIMIT_COUNT];
    uint64_t value[SD_LIMIT_COUNT];
    double ratio[SD_LIMIT_COUNT];
};

sd_limits *sd_limits_create(void) { return calloc(1, sizeof(sd_limits)); }

void sd_limits_free(sd_limits *limits) { free(limits); }

bool sd_limits_set(sd_limits *limits, sd_limit_id id, uint64_t value, double ratio)
{
    if (!limits || (unsigned)id >= SD_LIMIT_COUNT) return false;
    switch (limit_table[id].unit) {
    case SD_UNIT_BYTES: case SD_UNIT_COUNT: limits->value[id] = value; break;
    case SD_UNIT_PERCENT:
        if (!(ratio >= 0 && ratio <= 1e12)) return false;
        limits->ratio[id] = ratio;
        break;
    case SD_UNIT_RATIO:
        if (!(ratio >= 0 && ratio <= 1)) return false;
        limits->ratio[id] = ratio;
        break;
    }
    limits->has[id] = true;
    return true;
}

bool sd_limits_get(const sd_limits *limits, sd_limit_id id, uint64_t *value, double *ratio)
{
    bool has = limits && (unsigned)id < SD_LIMIT_COUNT && limits->has[id];
    if (value) *value = has ? limits->value[id] : 0;
    if (ratio) *ratio = has ? limits->ratio[id] : 0;
    return has;
}

bool sd_limit_set(sd_limits *limits, sd_limit_id id, const char *text)
{
    if (!limits || (unsigned)id >= SD_LIMIT_COUNT || !text) return false;
    switch (limit_table[id].unit) {
    case SD_UNIT_BYTES:
        if (!sd_parse_size(text, &limits->value[id])) return false;
        break;
    case SD_UNIT_PERCENT:
        if (!parse_number(text, 0, 1e12, &limits->ratio[id])) return false;
        break;
    case SD_UNIT_RATIO:
        if (!parse_number(text, 0, 1, &limits->ratio[id])) return false;
        break;
    case SD_UNIT_COUNT:
        if (!parse_count(text, &limits->value[id])) return false;
        break;
    }
    limits->has[id] = true;
    return true;
}

size_t sd_limits_count(const sd_limits *limits)
{
    size_t n = 0;
    for (size_t i = 0; limits && i < SD_LIMIT_COUNT; i++) n += limits->has[i];
    return n;
}

/* ---- the limits file (its syntax: base/limits_file.c) ---- */

/* What the file sets, kept apart until it has all been read. */
typedef struct gate_file {
    sd_limits limits;
    uint64_t steps;
    bool has_steps;
} gate_file;

static sd_status steps_pair(gate_file *f, const char *value, const sdp_limits_line *at,
                            sd_error *err)
{
    char *end;
    errno = 0;
    unsigned long long v = *value && *value != '-' ? strtoull(value, &end, 10) : 0;
    if (!*value || *value == '-' || errno || *end || v == 0)
        return sdp_limits_file_fail(err, at, "steps: '%.120s' is not a positive number", value);
    f->steps = v;
    f->has_steps = true;
    return SD_OK;
}

static sd_status unknown_limit(const char *key, const sdp_limits_line *at, sd_error *err)
{
    char names[200];
    size_t k = 0;
    names[0] = '\0';
    for (size_t i = 0; i < SD_LIMIT_COUNT && k < sizeof names; i++)
        k += (size_t)snprintf(names + k, sizeof names - k, "%s, ", limit_table[i].name);
    return sdp_limits_file_fail(err, at, "unknown limit '%.60s' (%sor steps)", key, names);
}

static sd_status limits_pair(void *ctx, const char *key, const char *value,
                             const sdp_limits_line *at, sd_error *err)
{
    gate_file *f = ctx;
    if (strcmp(key, "steps") == 0) return steps_pair(f, value, at, err);
    /* `snapdiff curve`'s own keys (curve.h): one file can serve both commands */
    if (strcmp(key, "max-fraction") == 0 || strcmp(key, "horizon") == 0) return SD_OK;
    sd_limit_id id;
    if (!sd_limit_find(key, &id)) return unknown_limit(key, at, err);
    if (f->limits.has[id]) return sdp_limits_file_fail(err, at, "'%s' is set twice", key);
    if (!sd_limit_set(&f->limits, id, value))
        return sdp_limits_file_fail(err, at, "%s: '%.80s' is not %s", key, value,
                                    sd_limit_expects(id));
    return SD_OK;
}

sd_status sd_limits_parse(const char *text, size_t len, const char *path, sd_limits *limits,
                          uint64_t *steps, sd_error *err)
{
    sd_error_clear(err);
    gate_file file;
    memset(&file, 0, sizeof file);
    SDP_TRY(sdp_limits_file_read(text, len, path, limits_pair, &file, err));
    /* The command line wins: only what it left unset. */
    for (size_t i = 0; i < SD_LIMIT_COUNT; i++)
        if (file.limits.has[i] && !limits->has[i]) {
            limits->has[i] = true;
            limits->value[i] = file.limits.value[i];
            limits->ratio[i] = file.limits.ratio[i];
        }
    if (steps && file.has_steps && *steps == 0) *steps = file.steps;
    return SD_OK;
}

/* ---- judging ---- */

static bool within(const sd_limit_result *r)
{
    if (!r->measurable) return r->id == SD_LIMIT_MAX_PER_STEP ? true : r->measured <= 0;
    if (r->unit != SD_UNIT_BYTES && r->unit != SD_UNIT_COUNT)
        return r->measured_ratio <= r->limit_ratio;
    return r->measured <= 0 || (uint64_t)r->measured <= r->limit;
}

static bool near_limit(const sd_limit_result *r)
{
    if (r->unit == SD_UNIT_COUNT) return false;   /* one more oom is not "near" */
    if (r->unit != SD_UNIT_BYTES) return r->limit_ratio > 0 && r->measured_ratio > 0.9 * r->limit_ratio;
    return r->limit > 0 && r->measured > 0 && (double)r->measured > 0.9 * (double)r->limit;
}

static bool failed(const sd_gate *g, sd_limit_id id)
{
    const sd_limit_result *r = sd_gate_result(g, id);
    return r && !r->pass;
}

/* Which limit a group offends, if any (the most specific first). */
static bool offends(const sd_gate *g, const sd_limits *limits, const sd_diff_group *grp,
                    sd_limit_id *why)
{
    static const sd_limit_id totals[] = {SD_LIMIT_MAX_GROWTH, SD_LIMIT_MAX_GROWTH_PCT,
                                         SD_LIMIT_MAX_PER_STEP, SD_LIMIT_MAX_RESERVED};
    if (failed(g, SD_LIMIT_FAIL_ON_NEW_SITE) && is_new_site(grp)
        && grp->new_bytes > limits->value[SD_LIMIT_FAIL_ON_NEW_SITE]) {
        *why = SD_LIMIT_FAIL_ON_NEW_SITE;
        return true;
    }
    if (failed(g, SD_LIMIT_MAX_GROUP_GROWTH) && grp->delta_bytes > 0
        && (uint64_t)grp->delta_bytes > limits->value[SD_LIMIT_MAX_GROUP_GROWTH]) {
        *why = SD_LIMIT_MAX_GROUP_GROWTH;
        return true;
    }
    for (size_t k = 0; k < SDP_ARRAY_LEN(totals); k++)
        if (failed(g, totals[k]) && grp->delta_bytes > 0) {
            *why = totals[k];
            return true;
        }
    return false;
}

sd_status sd_gate_diff(const sd_diff *d, const sd_limits *limits, sd_gate *out)
{
    memset(out, 0, sizeof *out);
    size_t n = sd_limits_count(limits);
    sd_limit_result *results = calloc(n ? n : 1, sizeof *results);
    if (!results) return SD_ENOMEM;     /* out->pass stays false: no verdict */
    out->results = results;
    out->pass = true;
    for (size_t i = 0; n && i < SD_LIMIT_COUNT; i++) {
        const struct limit_def *def = &limit_table[i];
        if (!limits->has[def->id]) continue;
        sd_limit_result *r = &results[out->n_results++];
        r->id = def->id;
        r->name = def->name;
        r->unit = def->unit;
        r->measurable = true;
        r->limit = limits->value[def->id];
        r->limit_ratio = limits->ratio[def->id];
        def->measure(d, r);
        r->pass = within(r);
        r->near = r->pass && r->measurable && near_limit(r);
        out->pass = out->pass && r->pass;
    }
    if (out->pass) return SD_OK;
    for (size_t i = 0; i < sd_diff_growth_count(d); i++) {
        sd_limit_id why;
        if (!offends(out, limits, sd_diff_group_at(d, i), &why)) continue;
        if (out->n_offenders < SD_GATE_MAX_OFFENDERS)
            out->offenders[out->n_offenders++] = (sd_gate_offender){.group = i, .limit = why};
        out->n_offenders_total++;
    }
    return SD_OK;
}

void sd_gate_release(sd_gate *g)
{
    if (!g) return;
    free((void *)g->results);
    memset(g, 0, sizeof *g);
}

const sd_limit_result *sd_gate_result(const sd_gate *g, sd_limit_id id)
{
    for (size_t i = 0; g && i < g->n_results; i++)
        if (g->results[i].id == id) return &g->results[i];
    return NULL;
}
