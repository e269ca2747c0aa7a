/* groups.c - one snapshot reduced to its group table (groups.h).
 *
 * The profile (profile.h) of the one snapshot gives each stack its key; one pass over the
 * blocks then adds each live block to its (key, device) cell. The rows and every string
 * they name are copied into the table's arena, and the profile is freed before return.
 */
#include <stdlib.h>

#include "base/base.h"
#include "snapdiff/groups.h"
#include "snapdiff/profile.h"
#include "snapdiff/stats.h"

struct sd_groups {
    sdp_arena arena;            /* strings, rows, devices */
    char *source;
    bool has_time;
    int64_t last_time_us;
    sd_group_device *devices;
    size_t n_devices;
    sd_group_row *rows;
    size_t n_rows;
    sd_groups_oom oom;
    bool has_host;
    sd_group_device host;       /* pinned host memory, when has_host */
};

#define DOING "grouping"   /* what sdp_nomem says failed */

static const char *copy(sdp_arena *a, const char *s)
{
    return sdp_arena_strndup(a, s ? s : "", s ? strlen(s) : 0);
}

static bool copy_frame(sdp_arena *a, const sd_frame *f, sd_frame *out)
{
    out->filename = copy(a, f->filename);
    out->name = copy(a, f->name);
    out->line = f->line;
    return out->filename && out->name;
}

static int row_cmp(const void *pa, const void *pb)
{
    const sd_group_row *a = pa, *b = pb;
    int c = strcmp(a->key, b->key);
    if (c) return c;
    return (a->device > b->device) - (a->device < b->device);
}

/* The key's representative site and via, copied. */
static bool rep_frames(sdp_arena *a, const sd_snapshot *s, const sd_profile_key *k,
                       sd_group_row *r)
{
    if (!k->has_rep) return true;
    r->has_rep = true;
    r->rep_stack = k->rep_stack;
    size_t n;
    const uint32_t *ids = sd_snapshot_stack(s, k->rep_stack, &n);
    if (k->rep_site.site >= 0 && (size_t)k->rep_site.site < n) {
        r->has_site = copy_frame(a, sd_snapshot_frame(s, ids[k->rep_site.site]), &r->site);
        if (!r->has_site) return false;
    }
    if (k->rep_site.via >= 0 && (size_t)k->rep_site.via < n) {
        r->has_via = copy_frame(a, sd_snapshot_frame(s, ids[k->rep_site.via]), &r->via);
        if (!r->has_via) return false;
    }
    return true;
}

/* The group's label (attrib.h), copied: a table outlives its snapshot. */
static const char *row_label(sdp_arena *a, const sd_snapshot *s, const sd_profile *p,
                             const sd_profile_key *k)
{
    if (!k->has_rep) return copy(a, k->key);
    char buf[SD_SITE_LABEL_MAX * 8];
    size_t n = sd_group_label(sd_profile_attrib(p), s, k->rep_stack, &k->rep_site, k->key,
                              false, buf, sizeof buf);
    return sdp_arena_strndup(a, buf, n < sizeof buf ? n : sizeof buf - 1);
}

/* Per device, per key: the figures, then the rows of the cells that hold a block. */
static sd_status fill_rows(sd_groups *g, const sd_snapshot *s, const sd_profile *p,
                           sd_error *err)
{
    size_t nk = sd_profile_key_count(p), nd = g->n_devices, ns = sd_profile_stack_count(p, 0);
    if (nk && nd > SIZE_MAX / nk / sizeof(sd_profile_figures)) return sdp_nomem(err, DOING);
    sd_profile_figures *cells = NULL;
    if (nk && nd) {
        if (!sdp_arena_charge(&g->arena, (uint64_t)nk * nd * sizeof *cells))
            return sdp_nomem(err, DOING);
        cells = calloc(nk * nd, sizeof *cells);
        if (!cells) return sdp_nomem(err, DOING);
    }
    size_t n_rows = 0;
    for (size_t d = 0; d < nd; d++) {
        const sd_cuda_device *dev = sd_snapshot_device(s, d);
        for (size_t i = 0; i < dev->n_blocks; i++) {
            const sd_block *b = &dev->blocks[i];
            if (b->state != SD_BLOCK_ALLOCATED) continue;
            uint32_t k = sd_profile_stack_key(p, 0, b->stack < ns ? b->stack : 0);
            if (k == SD_PROFILE_NO_KEY) continue;
            sd_profile_figures *c = &cells[d * nk + k];
            n_rows += c->blocks == 0;
            c->bytes += b->size;
            c->blocks++;
            c->requested += b->requested_size;
        }
    }
    sd_status st = SD_OK;
    g->rows = n_rows ? sdp_arena_alloc(&g->arena, n_rows * sizeof *g->rows) : NULL;
    if (n_rows && !g->rows) st = sdp_nomem(err, DOING);
    for (size_t d = 0; d < nd && st == SD_OK; d++)
        for (size_t k = 0; k < nk && st == SD_OK; k++) {
            const sd_profile_figures *c = &cells[d * nk + k];
            if (!c->blocks) continue;
            const sd_profile_key *pk = sd_profile_key_at(p, k);
            sd_group_row *r = &g->rows[g->n_rows++];
            memset(r, 0, sizeof *r);
            r->key = copy(&g->arena, pk->key);
            r->device = g->devices[d].device;
            r->bytes = c->bytes;
            r->blocks = c->blocks;
            r->requested = c->requested;
            if (!r->key || !rep_frames(&g->arena, s, pk, r) ||
                !(r->label = row_label(&g->arena, s, p, pk)))
                st = sdp_nomem(err, DOING);
        }
    free(cells);
    sdp_arena_uncharge(&g->arena, (uint64_t)nk * nd * sizeof *cells);
    if (st == SD_OK && g->n_rows) qsort(g->rows, g->n_rows, sizeof *g->rows, row_cmp);
    return st;
}

static sd_group_device group_device_of(const sd_stats *st)
{
    return (sd_group_device){.device = st->device, .allocated = st->allocated_bytes,
                             .reserved = st->reserved_bytes, .requested = st->requested_bytes};
}

static sd_status fill_devices(sd_groups *g, const sd_snapshot *s, sd_error *err)
{
    const sd_cuda_device *host = sd_snapshot_host_memory(s);
    if (host) {
        sd_stats st;
        sd_stats_device(host, &st);
        g->has_host = true;
        g->host = group_device_of(&st);
        g->host.device = -1;
    }
    g->n_devices = sd_snapshot_device_count(s);
    if (!g->n_devices) return SD_OK;
    g->devices = sdp_arena_alloc(&g->arena, g->n_devices * sizeof *g->devices);
    if (!g->devices) return sdp_nomem(err, DOING);
    for (size_t d = 0; d < g->n_devices; d++) {
        sd_stats st;
        sd_stats_device(sd_snapshot_device(s, d), &st);
        g->devices[d] = group_device_of(&st);
        if (st.has_time && (!g->has_time || st.last_time_us > g->last_time_us)) {
            g->has_time = true;
            g->last_time_us = st.last_time_us;
        }
    }
    return SD_OK;
}

/* The last oom entry of the snapshot, latest by time across devices (by device order when
 * untimed), and how many there are. */
void sd_groups_oom_of_snapshot(const sd_snapshot *s, sd_groups_oom *out)
{
    sd_groups_oom *o = out;
    memset(o, 0, sizeof *o);
    for (size_t d = 0; d < sd_snapshot_device_count(s); d++) {
        const sd_cuda_device *dev = sd_snapshot_device(s, d);
        for (size_t k = 0; k < dev->n_trace; k++) {
            const sd_trace_entry *e = &dev->trace[k];
            if (e->action != SD_ACT_OOM) continue;
            bool later = !o->count || !o->has_time || !e->has_time || e->time_us >= o->time_us;
            o->count++;
            if (!later) continue;
            o->device = dev->device;
            /* A summary keeps the trace's tail from its first oom on (summary.c): the
             * same entries end both traces. */
            o->entry = (size_t)(sd_snapshot_trace_recorded(s, d) - dev->n_trace) + k;
            o->request_bytes = e->size;
            o->device_free_bytes = e->device_free;
            o->has_time = e->has_time;
            o->time_us = e->has_time ? e->time_us : 0;
        }
    }
}

sd_groups *sd_groups_create(const sd_snapshot *snap, const sd_attrib_options *attrib,
                            uint64_t max_memory, sd_error *err)
{
    sd_error_clear(err);
    if (sdp_options_check(attrib, SD_ATTRIB_OPTIONS_VERSION, "sd_attrib_options", err))
        return NULL;
    if (!snap || !attrib) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "sd_groups_create: no snapshot or options");
        return NULL;
    }
    sd_groups *g = calloc(1, sizeof *g);
    if (!g) {
        sdp_nomem(err, DOING);
        return NULL;
    }
    sdp_arena_init(&g->arena, max_memory);
    sd_profile_options po = {.attrib = *attrib, .max_memory = max_memory};
    sd_profile *p = sd_profile_create(&snap, 1, &po, err);
    sd_status st = p ? SD_OK : SD_ENOMEM;
    if (st == SD_OK) {
        g->source = (char *)copy(&g->arena, sd_snapshot_source(snap));
        st = g->source ? fill_devices(g, snap, err) : sdp_nomem(err, DOING);
        sd_groups_oom_of_snapshot(snap, &g->oom);
    }
    if (st == SD_OK) st = fill_rows(g, snap, p, err);
    sd_profile_free(p);
    if (st != SD_OK) {
        sd_groups_free(g);
        return NULL;
    }
    return g;
}

void sd_groups_free(sd_groups *g)
{
    if (!g) return;
    sdp_arena_free(&g->arena);
    free(g);
}

const char *sd_groups_source(const sd_groups *g) { return g->source; }
const sd_groups_oom *sd_groups_oom_of(const sd_groups *g) { return &g->oom; }

bool sd_groups_last_time(const sd_groups *g, int64_t *time_us)
{
    if (g->has_time && time_us) *time_us = g->last_time_us;
    return g->has_time;
}

size_t sd_groups_device_count(const sd_groups *g) { return g->n_devices; }
const sd_group_device *sd_groups_device(const sd_groups *g, size_t i)
{
    return i < g->n_devices ? &g->devices[i] : NULL;
}

const sd_group_device *sd_groups_host(const sd_groups *g)
{
    return g->has_host ? &g->host : NULL;
}

size_t sd_groups_row_count(const sd_groups *g) { return g->n_rows; }
const sd_group_row *sd_groups_row(const sd_groups *g, size_t i)
{
    return i < g->n_rows ? &g->rows[i] : NULL;
}

const sd_group_row *sd_groups_find(const sd_groups *g, const char *key, int64_t device)
{
    sd_group_row probe = {.key = key, .device = device};
    return g->n_rows ? bsearch(&probe, g->rows, g->n_rows, sizeof *g->rows, row_cmp) : NULL;
}
