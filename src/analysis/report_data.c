/* report_data.c - the report's figures, computed before the page is written
 * (report_data.h). Each comes from the analysis that defines it: peak.c (peak, live
 * series), attrib.c (sites), stats.c and groups.c (totals, OOM), ranks.c (spread),
 * replay.c (the allocator under other settings), folded.c (the icicle's stacks). This
 * file only calls them once per snapshot and keeps the results.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/folded.h"
#include "base/base.h"
#include "snapdiff/report_data.h"

typedef struct report_snap {
    sd_peak *peak;
    uint64_t **live;        /* per device: live bytes after each entry, or NULL */
    size_t *n_live;
    sd_site *sites;         /* per stack id */
    size_t n_sites;
    sd_stats totals;
    sd_groups_oom oom;
} report_snap;

struct sd_report_data {
    report_snap *snaps;
    size_t n;
    sd_rank_spread spread;
    sd_replay *replay;
    bool has_stacks;
    sd_report_stack *stacks;
    size_t n_stacks;
    sdp_arena stack_arena;  /* the stacks' frames */
};


/* The live series of every device with a peak. */
static sd_status live_series(const sd_snapshot *s, report_snap *r, sd_error *err)
{
    size_t nd = sd_snapshot_device_count(s);
    r->live = calloc(nd ? nd : 1, sizeof *r->live);
    r->n_live = calloc(nd ? nd : 1, sizeof *r->n_live);
    if (!r->live || !r->n_live) return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    for (size_t d = 0; d < nd; d++) {
        const sd_peak_device *pd = sd_peak_device_at(r->peak, d);
        size_t n = sd_snapshot_device(s, d)->n_trace;
        if (!pd || !pd->has_peak || n == 0) continue;
        r->live[d] = malloc(n * sizeof *r->live[d]);
        if (!r->live[d]) return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        sd_status st = sd_peak_live_series(r->peak, d, r->live[d], n, err);
        if (st != SD_OK) return st;
        r->n_live[d] = n;
    }
    return SD_OK;
}

/* The site of every stack, with the peak's grouping options. */
static sd_status stack_sites(const sd_snapshot *s, report_snap *r, sd_error *err)
{
    size_t n = sd_snapshot_stack_count(s);
    r->sites = calloc(n ? n : 1, sizeof *r->sites);
    if (!r->sites) return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    const sd_attrib *a = sd_peak_attrib(r->peak);
    for (size_t i = 0; i < n; i++) sd_attrib_site_of_stack(a, s, (uint32_t)i, &r->sites[i]);
    r->n_sites = n;
    return SD_OK;
}

static sd_status snap_data(const sd_snapshot *s, const sd_report_data_options *o, report_snap *r,
                           sd_error *err)
{
    sd_peak_options po;
    memset(&po, 0, sizeof po);
    po.attrib = o->attrib;
    po.max_memory = o->max_memory;
    r->peak = sd_peak_create(s, &po, err);
    if (!r->peak) return err ? err->code : SD_ENOMEM;
    sd_status st = live_series(s, r, err);
    if (st == SD_OK) st = stack_sites(s, r, err);
    sd_stats_total(s, &r->totals);
    sd_groups_oom_of_snapshot(s, &r->oom);
    return st;
}

static int stack_desc(const void *pa, const void *pb)
{
    const sdp_merged_stack *a = *(const sdp_merged_stack *const *)pa;
    const sdp_merged_stack *b = *(const sdp_merged_stack *const *)pb;
    if (a->bytes != b->bytes) return a->bytes < b->bytes ? 1 : -1;
    return strcmp(a->key, b->key);
}

/* A folded line's frames, split at ';', into the data's arena; NULL when out of memory. */
static const char **split_frames(sdp_arena *a, const char *key, size_t len, size_t *n)
{
    size_t parts = 1;
    for (size_t i = 0; i < len; i++) parts += key[i] == ';';
    const char **out = sdp_arena_alloc(a, parts * sizeof *out);
    if (!out) return NULL;
    *n = 0;
    for (const char *s = key, *end = key + len;;) {
        const char *semi = memchr(s, ';', (size_t)(end - s));
        size_t k = semi ? (size_t)(semi - s) : (size_t)(end - s);
        if (!(out[(*n)++] = sdp_arena_strndup(a, s, k))) return NULL;
        if (!semi) break;
        s = semi + 1;
    }
    return out;
}

/* The icicle: the profile's folded stacks that grew, the most bytes first. */
static sd_status icicle_stacks(sd_report_data *d, const sd_profile *p, uint64_t max_memory,
                               sd_error *err)
{
    size_t last = sd_profile_side_count(p) - 1;
    sdp_folded f;
    sd_status st = sdp_folded_create(&f, p, 0, last, max_memory, err);
    if (st != SD_OK) return st;
    qsort(f.lines, f.n, sizeof *f.lines, stack_desc);
    bool growth = last > 0 && sd_profile_snapshot(p, 0);
    sdp_arena_init(&d->stack_arena, max_memory);
    d->stacks = calloc(f.n ? f.n : 1, sizeof *d->stacks);
    if (!d->stacks) st = sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory for the icicle");
    for (size_t i = 0; st == SD_OK && i < f.n; i++) {
        const sdp_merged_stack *m = f.lines[i];
        sd_report_stack *s = &d->stacks[i];
        s->frames = split_frames(&d->stack_arena, m->key, m->len, &s->n_frames);
        if (!s->frames) st = sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory for the icicle");
        s->bytes = (uint64_t)m->bytes;
        s->rounding_only = growth && m->requested == 0;
    }
    d->n_stacks = st == SD_OK ? f.n : 0;
    d->has_stacks = st == SD_OK;
    sdp_folded_free(&f);
    return st;
}

/* The source of the failing snapshot in err, unless the analysis named one. */
static void name_source(sd_error *err, const sd_snapshot *s)
{
    if (err && !err->source[0])
        snprintf(err->source, sizeof err->source, "%s", sd_snapshot_source(s));
}

sd_report_data *sd_report_data_create(const sd_snapshot *const *snaps, size_t n,
                                      const sd_report_data_options *opts, sd_error *err)
{
    sd_error_clear(err);
    sd_report_data_options defaults;
    sd_report_data_options_init(&defaults, SD_REPORT_DATA_OPTIONS_VERSION);
    const sd_report_data_options *o = opts ? opts : &defaults;
    /* version 0 (a zeroed struct) reads as version 1 (docs/architecture.md) */
    if (!snaps || n == 0 || o->version > SD_REPORT_DATA_OPTIONS_VERSION) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "report data: bad arguments");
        return NULL;
    }
    sd_report_data *d = calloc(1, sizeof *d);
    sd_stats *totals = calloc(n, sizeof *totals);
    if (!d || !totals || !(d->snaps = calloc(n, sizeof *d->snaps))) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        goto fail;
    }
    d->n = n;
    for (size_t i = 0; i < n; i++) {
        if (snap_data(snaps[i], o, &d->snaps[i], err) != SD_OK) {
            name_source(err, snaps[i]);
            goto fail;
        }
        totals[i] = d->snaps[i].totals;
    }
    sd_rank_spread_of_totals(totals, n, &d->spread);
    /* A summary keeps only part of the trace: it has no replay, and says so nowhere else
     * on the page than by drawing none. */
    if (o->replay && n == 1 && !sd_snapshot_is_summary(snaps[0])) {
        d->replay = sd_replay_create(snaps[0], &o->replay_options, err);
        if (!d->replay) {
            /* a config that does not parse is the option's error, not the file's */
            if (!err || err->code != SD_EUSAGE) name_source(err, snaps[0]);
            goto fail;
        }
    }
    const sd_profile *p = o->version >= 2 ? o->profile : NULL;
    if (p && icicle_stacks(d, p, o->max_memory, err) != SD_OK) goto fail;
    free(totals);
    return d;
fail:
    free(totals);
    sd_report_data_free(d);
    return NULL;
}

void sd_report_data_free(sd_report_data *d)
{
    if (!d) return;
    for (size_t i = 0; d->snaps && i < d->n; i++) {
        report_snap *r = &d->snaps[i];
        size_t nd = r->peak ? sd_snapshot_device_count(sd_peak_snapshot(r->peak)) : 0;
        for (size_t k = 0; r->live && k < nd; k++) free(r->live[k]);
        free(r->live);
        free(r->n_live);
        free(r->sites);
        sd_peak_free(r->peak);
    }
    free(d->snaps);
    sd_replay_free(d->replay);
    free(d->stacks);
    sdp_arena_free(&d->stack_arena);
    free(d);
}

size_t sd_report_data_snapshot_count(const sd_report_data *d) { return d ? d->n : 0; }

const sd_peak *sd_report_data_peak(const sd_report_data *d, size_t i)
{
    return d && i < d->n ? d->snaps[i].peak : NULL;
}

const uint64_t *sd_report_data_live(const sd_report_data *d, size_t i, size_t dev, size_t *n)
{
    *n = 0;
    if (!d || i >= d->n || !d->snaps[i].live) return NULL;
    const report_snap *r = &d->snaps[i];
    if (dev >= sd_snapshot_device_count(sd_peak_snapshot(r->peak))) return NULL;
    *n = r->n_live[dev];
    return r->live[dev];
}

const sd_site *sd_report_data_site(const sd_report_data *d, size_t i, uint32_t stack)
{
    if (!d || i >= d->n || stack >= d->snaps[i].n_sites) return NULL;
    return &d->snaps[i].sites[stack];
}

const sd_stats *sd_report_data_totals(const sd_report_data *d, size_t i)
{
    return d && i < d->n ? &d->snaps[i].totals : NULL;
}

const sd_groups_oom *sd_report_data_oom(const sd_report_data *d, size_t i)
{
    return d && i < d->n ? &d->snaps[i].oom : NULL;
}

const sd_rank_spread *sd_report_data_spread(const sd_report_data *d)
{
    return d ? &d->spread : NULL;
}

const sd_report_stack *sd_report_data_stacks(const sd_report_data *d, size_t *n)
{
    *n = d && d->has_stacks ? d->n_stacks : 0;
    return d && d->has_stacks ? d->stacks : NULL;
}

const sd_replay *sd_report_data_replay(const sd_report_data *d) { return d ? d->replay : NULL; }
