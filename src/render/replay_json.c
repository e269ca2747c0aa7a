/* replay_json.c - the replay as JSON: schema snapdiff.replay/1 (docs/json-replay.md). */
#include <jansson.h>
#include <stdio.h>

#include "base/base.h"
#include "render/json_frame.h"
#include "snapdiff/render_replay.h"

static json_t *jint(uint64_t v) { return json_integer((json_int_t)v); }

static json_t *choice_json(const sd_replay_choice *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "new_segment", json_boolean(c->new_segment));
    json_object_set_new(o, "address", c->new_segment && !c->address ? json_null() : jint(c->address));
    json_object_set_new(o, "segment_bytes",
                        c->new_segment && c->segment_bytes ? jint(c->segment_bytes) : json_null());
    return o;
}

static json_t *fidelity_json(const sd_replay_device *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "placements_checked", jint(d->placements_checked));
    json_object_set_new(o, "placements_matched", jint(d->placements_matched));
    json_object_set_new(o, "segment_decisions_checked", jint(d->segment_decisions_checked));
    json_object_set_new(o, "segment_decisions_matched", jint(d->segment_decisions_matched));
    json_t *m = json_null();
    if (d->has_first_mismatch) {
        m = json_object();
        json_object_set_new(m, "entry", jint(d->first_mismatch.entry));
        json_object_set_new(m, "request_bytes", jint(d->first_mismatch.request_bytes));
        json_object_set_new(m, "model", choice_json(&d->first_mismatch.model));
        json_object_set_new(m, "recorded", choice_json(&d->first_mismatch.recorded));
        json_t *seen = json_array();
        for (size_t k = 0; k < d->first_mismatch.n_seen; k++) {
            const sd_replay_free_block *b = &d->first_mismatch.seen[k];
            json_t *x = json_object();
            json_object_set_new(x, "address", jint(b->address));
            json_object_set_new(x, "bytes", jint(b->bytes));
            json_object_set_new(x, "expandable_bytes", jint(b->expandable_bytes));
            json_array_append_new(seen, x);
        }
        json_object_set_new(m, "free_blocks_seen", seen);
    }
    json_object_set_new(o, "first_mismatch", m);
    json_object_set_new(o, "trusted", json_boolean(d->trusted));
    json_object_set_new(o, "peak_compared", json_boolean(d->trust_peak_compared));
    json_object_set_new(o, "untrusted_why", d->untrusted_why ? json_string(d->untrusted_why) : json_null());
    return o;
}

static json_t *config_json(const sd_replay_config *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "alloc_conf", json_string(c->alloc_conf));
    json_object_set_new(o, "capacity_bytes", c->capacity_bytes ? jint(c->capacity_bytes) : json_null());
    json_object_set_new(o, "peak_reserved_bytes", jint(c->peak_reserved_bytes));
    json_object_set_new(o, "end_reserved_bytes", jint(c->end_reserved_bytes));
    json_object_set_new(o, "segment_allocs", jint(c->segment_allocs));
    json_object_set_new(o, "alloc_retries", jint(c->alloc_retries));
    json_t *ooms = json_array();
    for (size_t k = 0; k < c->n_ooms; k++) {
        json_t *x = json_object();
        json_object_set_new(x, "entry", jint(c->ooms[k].entry));
        json_object_set_new(x, "request_bytes", jint(c->ooms[k].request_bytes));
        json_object_set_new(x, "label", c->ooms[k].label ? json_string(c->ooms[k].label) : json_null());
        json_array_append_new(ooms, x);
    }
    json_object_set_new(o, "ooms", ooms);
    json_t *stop = json_null();
    if (c->n_ooms) {
        stop = json_object();
        json_object_set_new(stop, "entry", jint(c->ooms[0].entry));
        json_object_set_new(stop, "peak_reserved_bytes", jint(c->stop_peak_reserved_bytes));
        json_object_set_new(stop, "alloc_retries", jint(c->stop_alloc_retries));
    }
    json_object_set_new(o, "first_oom", stop);
    json_object_set_new(o, "stranded_bytes", jint(c->stranded_bytes));
    json_object_set_new(o, "largest_free_bytes", jint(c->largest_free_bytes));
    json_t *oc = json_array();
    for (size_t k = 0; k < c->n_oom_outcomes; k++) {
        const sd_replay_oom_outcome *x = &c->oom_outcomes[k];
        json_t *j = json_object();
        json_object_set_new(j, "entry", jint(x->entry));
        json_object_set_new(j, "request_bytes", jint(x->request_bytes));
        json_object_set_new(j, "label", x->label ? json_string(x->label) : json_null());
        json_object_set_new(j, "succeeds", json_boolean(x->succeeds));
        json_object_set_new(j, "headroom_bytes",
                            x->succeeds && c->capacity_bytes ? jint(x->headroom_bytes) : json_null());
        json_array_append_new(oc, j);
    }
    json_object_set_new(o, "recorded_ooms", oc);
    json_object_set_new(o, "memory_fraction",
                        c->conf.memory_fraction > 0 ? json_real(c->conf.memory_fraction) : json_null());
    json_object_set_new(o, "gc_needs_fraction", json_boolean(c->gc_needs_fraction));
    return o;
}

/* trust_reasons (docs/json-replay.md): [{"code", "message"}], a non-upstream-keys one
 * with the keys' names. */
static json_t *trust_reasons_json(const sd_replay_device *d, const sd_snapshot *s)
{
    json_t *a = json_array();
    for (unsigned r = 0; r < SD_TRUST_REASON_COUNT; r++) {
        if (!(d->trust_reasons & 1u << r)) continue;
        json_t *o = json_object();
        json_object_set_new(o, "code", json_string(sd_replay_trust_reason_name(r)));
        json_object_set_new(o, "message", json_string(sd_replay_trust_reason_text(r)));
        if (r == SD_TRUST_NON_UPSTREAM_KEYS) {
            json_t *k = json_array();
            for (size_t i = 0; i < sd_snapshot_foreign_key_count(s); i++)
                json_array_append_new(k, json_string(sd_snapshot_foreign_key(s, i)));
            json_object_set_new(o, "keys", k);
        }
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *device_json(const sd_replay_device *d, const sd_snapshot *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "device", json_integer(d->device));
    json_object_set_new(o, "entries", jint(d->entries));
    json_object_set_new(o, "allocs", jint(d->allocs));
    json_t *st = json_object();
    json_object_set_new(st, "reserved_bytes", jint(d->start_reserved_bytes));
    json_object_set_new(st, "allocated_bytes", jint(d->start_allocated_bytes));
    json_object_set_new(o, "start", st);
    json_t *rec = json_object();
    json_object_set_new(rec, "peak_reserved_bytes", jint(d->recorded_peak_reserved_bytes));
    json_object_set_new(rec, "end_reserved_bytes", jint(d->recorded_end_reserved_bytes));
    json_object_set_new(rec, "segment_allocs", jint(d->recorded_segment_allocs));
    json_object_set_new(rec, "ooms", jint(d->recorded_ooms));
    json_object_set_new(o, "recorded", rec);
    json_t *fid = fidelity_json(d);
    json_object_set_new(fid, "trust_reasons", trust_reasons_json(d, s));
    json_object_set_new(o, "fidelity", fid);
    json_object_set_new(o, "warm_start", json_boolean(d->warm_start));
    json_t *cs = json_array();
    for (size_t c = 0; c < d->n_configs; c++) json_array_append_new(cs, config_json(&d->configs[c]));
    json_object_set_new(o, "configs", cs);
    return o;
}

sd_status sd_render_replay_json(FILE *out, const sd_replay *r, const sd_render_options *ro,
                                sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(ro, SD_RENDER_OPTIONS_VERSION, "sd_render_options", err))
        return SD_EUSAGE;
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string(SD_REPLAY_SCHEMA));
    json_object_set_new(doc, "source", json_string(sd_snapshot_source(sd_replay_snapshot(r))));
    unsigned tv = sd_replay_torch_version(r);
    char ver[16];
    snprintf(ver, sizeof ver, "%u.%u", tv / 100, tv % 100);
    json_object_set_new(doc, "torch_rules", json_string(tv ? ver : "newest"));
    json_t *devs = json_array();
    for (size_t i = 0; i < sd_replay_device_count(r); i++)
        json_array_append_new(devs, device_json(sd_replay_device_at(r, i),
                                                sd_replay_snapshot(r)));
    json_object_set_new(doc, "devices", devs);
    return sdp_json_write(out, doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
}
