/* check_json.c - `snapdiff check --json`: schema snapdiff.check/1 (docs/json-check.md).
 * Every verdict comes from the gate (gate.h); this file only names them. */
#include <jansson.h>
#include <stdio.h>

#include "render/check_render.h"
#include "render/check_words.h"
#include "render/pattern_words.h"

static json_t *measured_json(const sd_limit_result *x)
{
    if (!x->measurable) return json_null();
    return x->unit == SD_UNIT_BYTES || x->unit == SD_UNIT_COUNT ? json_integer(x->measured)
                                                                : json_real(x->measured_ratio);
}

static json_t *limit_json(const sd_limit_result *x)
{
    json_t *o = json_object();
    char words[256];
    sdp_check_words(x, words, sizeof words);
    json_object_set_new(o, "name", json_string(x->name));
    bool whole = x->unit == SD_UNIT_BYTES || x->unit == SD_UNIT_COUNT;
    json_object_set_new(o, "unit", json_string(x->unit == SD_UNIT_BYTES ? "bytes"
                                               : x->unit == SD_UNIT_COUNT ? "count"
                                               : x->unit == SD_UNIT_PERCENT ? "percent"
                                                                            : "ratio"));
    json_object_set_new(o, "limit", whole ? json_integer((json_int_t)x->limit)
                                          : json_real(x->limit_ratio));
    json_object_set_new(o, "measured", measured_json(x));
    json_object_set_new(o, "pass", json_boolean(x->pass));
    json_object_set_new(o, "near", json_boolean(x->near));
    json_object_set_new(o, "message", json_string(words));
    return o;
}

static json_t *limits_json(const sd_check_member *m)
{
    json_t *a = json_array();
    for (size_t i = 0; i < m->gate.n_results; i++)
        json_array_append_new(a, limit_json(&m->gate.results[i]));
    return a;
}

static void offenders_into(json_t *a, const sd_check_member *m, bool name_member)
{
    for (size_t i = 0; i < m->gate.n_offenders; i++) {
        const sd_check_offender *g = &m->offenders[i];
        json_t *o = json_object();
        if (name_member) json_object_set_new(o, "member", json_string(m->name));
        json_object_set_new(o, "limit", json_string(sd_limit_name(g->limit)));
        json_object_set_new(o, "key", json_string(g->key));
        json_object_set_new(o, "label", json_string(g->label ? g->label : g->key));
        json_object_set_new(o, "old_bytes", json_integer((json_int_t)g->old_bytes));
        json_object_set_new(o, "new_bytes", json_integer((json_int_t)g->new_bytes));
        json_object_set_new(o, "delta_bytes", json_integer(g->delta_bytes));
        json_object_set_new(o, "delta_blocks", json_integer(g->delta_blocks));
        const char *code = sd_pattern_code(g->pattern), *hint = sdp_pattern_hint(g->pattern);
        json_object_set_new(o, "pattern", code ? json_string(code) : json_null());
        json_object_set_new(o, "hint", hint ? json_string(hint) : json_null());
        json_array_append_new(a, o);
    }
}

static const char *missing_name(sd_member_missing m)
{
    return m == SD_MEMBER_NO_OLD ? "old" : m == SD_MEMBER_NO_NEW ? "new" : NULL;
}

static json_t *member_json(const sd_check_member *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "member", json_string(m->name));
    json_object_set_new(o, "rank", m->rank >= 0 ? json_integer(m->rank) : json_null());
    json_object_set_new(o, "old_member", m->old_name ? json_string(m->old_name) : json_null());
    json_object_set_new(o, "pass", json_boolean(m->pass));
    const char *miss = missing_name(m->missing);
    json_object_set_new(o, "missing", miss ? json_string(miss) : json_null());
    json_object_set_new(o, "limits", limits_json(m));
    json_t *off = json_array();
    if (m->missing == SD_MEMBER_PAIRED) offenders_into(off, m, false);
    json_object_set_new(o, "offenders", off);
    return o;
}

/* Many members: per limit, the worst member's figures (the first failing one, else the
 * largest measure), naming the member. */
static json_t *worst_limits_json(const sd_check_report *r)
{
    json_t *a = json_array();
    for (size_t id = 0; id < SD_LIMIT_COUNT; id++) {
        const sd_limit_result *worst = NULL;
        const char *who = NULL;
        for (size_t i = 0; i < r->n; i++) {
            const sd_check_member *m = &r->members[i];
            for (size_t k = 0; k < m->gate.n_results; k++) {
                const sd_limit_result *x = &m->gate.results[k];
                if (x->id != (sd_limit_id)id) continue;
                bool worse = !worst || (worst->pass && !x->pass)
                             || (worst->pass == x->pass
                                 && (x->unit == SD_UNIT_BYTES || x->unit == SD_UNIT_COUNT
                                         ? x->measured > worst->measured
                                                              : x->measured_ratio > worst->measured_ratio));
                if (worse) {
                    worst = x;
                    who = m->name;
                }
            }
        }
        if (!worst) continue;
        json_t *o = limit_json(worst);
        bool all = true;
        for (size_t i = 0; i < r->n; i++)
            for (size_t k = 0; k < r->members[i].gate.n_results; k++)
                if (r->members[i].gate.results[k].id == (sd_limit_id)id)
                    all = all && r->members[i].gate.results[k].pass;
        json_object_set_new(o, "pass", json_boolean(all));
        json_object_set_new(o, "member", json_string(who));
        json_array_append_new(a, o);
    }
    return a;
}

sd_status sd_render_check_json(FILE *out, const sd_check_report *r)
{
    if (sdp_options_check(r, SD_CHECK_REPORT_VERSION, "sd_check_report", NULL))
        return SD_EUSAGE;
    if (sdp_options_check(&r->render, SD_RENDER_OPTIONS_VERSION, "sd_render_options", NULL))
        return SD_EUSAGE;
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("snapdiff.check/1"));
    json_object_set_new(doc, "pass", json_boolean(r->pass));
    json_t *off = json_array();
    if (r->many) {
        json_object_set_new(doc, "limits", worst_limits_json(r));
        json_t *failed = json_array(), *members = json_array();
        for (size_t i = 0; i < r->n; i++) {
            const sd_check_member *m = &r->members[i];
            if (!m->pass) json_array_append_new(failed, json_string(m->name));
            if (m->missing == SD_MEMBER_PAIRED) offenders_into(off, m, true);
            json_array_append_new(members, member_json(m));
        }
        json_object_set_new(doc, "offenders", off);
        json_object_set_new(doc, "failed_members", failed);
        json_object_set_new(doc, "members", members);
        if (r->spread && r->spread_names && r->spread->n > 1) {
            const sd_rank_spread *sp = r->spread;
            json_t *o = json_object();
            json_object_set_new(o, "ranks", json_integer((json_int_t)sp->n));
            json_object_set_new(o, "allocated_min", json_integer((json_int_t)sp->allocated_min));
            json_object_set_new(o, "allocated_median", json_integer((json_int_t)sp->allocated_median));
            json_object_set_new(o, "allocated_max", json_integer((json_int_t)sp->allocated_max));
            json_object_set_new(o, "reserved_min", json_integer((json_int_t)sp->reserved_min));
            json_object_set_new(o, "reserved_median", json_integer((json_int_t)sp->reserved_median));
            json_object_set_new(o, "reserved_max", json_integer((json_int_t)sp->reserved_max));
            bool has = sp->furthest != SD_RANK_NONE;
            json_object_set_new(o, "furthest", has ? json_string(r->spread_names[sp->furthest])
                                                   : json_null());
            json_object_set_new(o, "furthest_delta", json_integer(sp->furthest_delta));
            json_object_set_new(doc, "spread", o);
        }
    } else {
        json_object_set_new(doc, "limits", limits_json(&r->members[0]));
        offenders_into(off, &r->members[0], false);
        json_object_set_new(doc, "offenders", off);
    }
    int rc = json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(doc);
    if (rc != 0) return SD_ENOMEM;
    return ferror(out) ? SD_EIO : SD_OK;
}
