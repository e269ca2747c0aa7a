/* replay.c - sd_replay: a snapshot's trace run through the allocator model, device by
 * device (alloc/alloc_run.c does the run), the configurations parsed, the results owned,
 * and each OOM's request named by its site as every view names it (attrib.h). */
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc_run.h"
#include "base/base.h"
#include "snapdiff/attrib.h"
#include "snapdiff/replay.h"

struct sd_replay {
    const sd_snapshot *snap;
    sd_replay_device *devices;
    size_t n_devices;
    void **owned;              /* every array the results point to */
    size_t n_owned, cap_owned;
    sd_alloc_conf *confs;      /* [0] recorded, then one per option */
    const char *const *conf_text;
    size_t n_confs;
    unsigned torch_version;    /* the option rules the configs were parsed by; 0 = newest */
    sd_attrib *rules;          /* the default rules, to name an OOM's site (made when needed) */
};

static void *own(sd_replay *r, size_t bytes);

/* The site of a request's stack as every view names it (attrib.h), owned by the replay:
 * the renderers print it, they do not attribute. *out is NULL for an entry without
 * frames. @return false when out of memory. */
static bool site_label(void *owner, uint32_t stack, const char **out)
{
    sd_replay *r = owner;
    *out = NULL;
    if (!stack) return true;
    if (!r->rules) {
        sd_attrib_options ao = SD_ATTRIB_OPTIONS_INIT;
        r->rules = sd_attrib_create(&ao, NULL);
        if (!r->rules) return false;
    }
    sd_site site;
    sd_attrib_site_of_stack(r->rules, r->snap, stack, &site);
    if (site.site < 0) return true;
    char buf[512];
    size_t n = sd_site_text(r->snap, stack, &site, buf, sizeof buf);
    if (n >= sizeof buf) n = sizeof buf - 1;
    char *copy = own(r, n + 1);
    if (!copy) return false;
    memcpy(copy, buf, n);
    copy[n] = '\0';
    *out = copy;
    return true;
}

static void *own(sd_replay *r, size_t bytes)
{
    if (r->n_owned == r->cap_owned) {
        size_t n = r->cap_owned ? r->cap_owned * 2 : 32;
        void **p = realloc(r->owned, n * sizeof *p);
        if (!p) return NULL;
        r->owned = p;
        r->cap_owned = n;
    }
    void *q = calloc(1, bytes ? bytes : 1);
    if (q) r->owned[r->n_owned++] = q;
    return q;
}

static void *own_cb(void *owner, size_t bytes) { return own(owner, bytes); }

sd_replay *sd_replay_create(const sd_snapshot *s, const sd_replay_options *opts, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(opts, SD_REPLAY_OPTIONS_VERSION, "sd_replay_options", err))
        return NULL;
    if (sd_snapshot_is_summary(s)) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET,
                 "a summary keeps only part of the trace: replay needs the snapshot itself");
        return NULL;
    }
    sd_replay *r = calloc(1, sizeof *r);
    if (!r) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return NULL;
    }
    r->snap = s;
    size_t nc = opts ? opts->n_alloc_confs : 0;
    r->n_confs = nc + 1;
    r->conf_text = opts ? opts->alloc_confs : NULL;
    r->confs = own(r, r->n_confs * sizeof *r->confs);
    if (!r->confs) goto nomem;
    sd_alloc_conf_recorded(s, &r->confs[0]);
    r->torch_version = opts ? opts->torch_version : 0;
    for (size_t i = 0; i < nc; i++)
        if (sd_alloc_conf_parse_torch(opts->alloc_confs[i], r->torch_version, &r->confs[i + 1],
                                      err) != SD_OK) {
            sd_replay_free(r);
            return NULL;
        }
    for (size_t i = 0; opts && opts->memory_fraction > 0 && i < r->n_confs; i++)
        if (!(r->confs[i].memory_fraction > 0)) r->confs[i].memory_fraction = opts->memory_fraction;
    sdp_alloc_run run = {s, r->confs, r->conf_text, r->n_confs, r, own_cb, site_label};
    size_t nd = sd_snapshot_device_count(s);
    r->devices = own(r, nd * sizeof *r->devices);
    if (!r->devices) goto nomem;
    for (size_t i = 0; i < nd; i++) {
        const sd_cuda_device *d = sd_snapshot_device(s, i);
        if (!d->n_trace) continue;
        if (sdp_alloc_run_device(&run, d, opts, &r->devices[r->n_devices]) != SD_OK) goto nomem;
        r->n_devices++;
    }
    return r;
nomem:
    sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory while replaying the trace");
    sd_replay_free(r);
    return NULL;
}

void sd_replay_free(sd_replay *r)
{
    if (!r) return;
    sd_attrib_free(r->rules);
    for (size_t i = 0; i < r->n_owned; i++) free(r->owned[i]);
    free(r->owned);
    free(r);
}

const sd_snapshot *sd_replay_snapshot(const sd_replay *r) { return r->snap; }
size_t sd_replay_device_count(const sd_replay *r) { return r->n_devices; }
unsigned sd_replay_torch_version(const sd_replay *r) { return r->torch_version; }
const sd_replay_device *sd_replay_device_at(const sd_replay *r, size_t i)
{
    return i < r->n_devices ? &r->devices[i] : NULL;
}
