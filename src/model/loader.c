/* loader.c - the one N-way loader (load.h): inputs loaded by a few threads at once.
 *
 * Workers take the next input in order from a shared counter. Before starting one they
 * wait until its estimated peak fits beside the loads in flight (or nothing is in
 * flight), so parallelism never costs more memory than the budget allows. Each worker
 * writes only its own result slot; nothing is printed, so the caller reports in input
 * order whatever order the loads finished in.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "snapdiff/load.h"

/* A load peaks at about 0.95x its pickle on real-shaped files (bench.sh); files whose
 * dicts stay dicts (old layouts, protocols 0-1) keep more of a value tree, and 3x leaves
 * room for them. */
enum { PEAK_PER_FILE_BYTE = 3 };

typedef struct load_pool {
    const char *const *specs;
    size_t n;
    const sd_loader_options *opts;
    sd_loaded *out;
    uint64_t *estimate;            /* per input: its estimated peak, 0 when unknown */
    pthread_mutex_t lock;
    pthread_cond_t room;           /* signalled when a load finishes */
    size_t next;                   /* the next input to start */
    size_t in_flight;
    uint64_t in_flight_bytes;
} load_pool;

unsigned sd_loader_default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

static uint64_t estimate_peak(const char *spec)
{
    struct stat st;
    if (stat(spec, &st) != 0 || !S_ISREG(st.st_mode)) return 0;  /* "-", DIR, ARCHIVE:m */
    return (uint64_t)st.st_size * PEAK_PER_FILE_BYTE;
}

/* ---------- one input ---------- */

static sd_status load_members(sd_input *in, const sd_loader_options *o, sd_loaded *r,
                              size_t input)
{
    sd_load_options lo = {.max_memory = o->max_memory};
    if (!o->all_members && r->n_members != 1) {
        r->ambiguous = true;
        return sdp_fail(&r->err, SD_EUSAGE, SD_NO_OFFSET, "holds %zu snapshots; pick one",
                        r->n_members);
    }
    r->snaps = calloc(r->n_members ? r->n_members : 1, sizeof *r->snaps);
    if (!r->snaps) return sdp_fail(&r->err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < r->n_members; i++) {
        sd_snapshot *s = sd_snapshot_load_input(in, i, &lo, &r->err);
        if (!s) return r->err.code ? r->err.code : SD_ENOMEM;
        if (o->each) {   /* handed over, then freed: only one model per input at a time */
            sd_status st = o->each(o->ctx, input, i, s, &r->err);
            sd_snapshot_free(s);
            if (st != SD_OK) return st;
            r->n_passed++;
            continue;
        }
        r->snaps[r->n_snaps++] = s;
    }
    return SD_OK;
}

static void load_one(const char *spec, const sd_loader_options *o, sd_loaded *r, size_t input)
{
    memset(r, 0, sizeof *r);
    r->spec = spec;
    sd_error_clear(&r->err);
    sd_input_options io = {.max_memory = o->max_memory};
    sd_input *in = sd_input_open(spec, &io, &r->err);
    if (!in) {
        r->status = r->err.code ? r->err.code : SD_EIO;
        return;
    }
    r->n_members = sd_input_count(in);
    r->n_skipped = sd_input_skipped_count(in);
    snprintf(r->skipped, sizeof r->skipped, "%s", sd_input_skipped(in));
    if (r->n_members)
        snprintf(r->first_member, sizeof r->first_member, "%s", sd_input_name(in, 0));
    r->status = load_members(in, o, r, input);
    sd_input_free(in);
}

/* ---------- the pool ---------- */

static bool fits(const load_pool *p, uint64_t est)
{
    uint64_t budget = p->opts->max_memory;
    return p->in_flight == 0 || budget == 0 || p->in_flight_bytes + est <= budget;
}

static void *worker(void *arg)
{
    load_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    while (p->next < p->n) {
        size_t i = p->next;
        uint64_t est = p->estimate[i];
        if (!fits(p, est)) {
            pthread_cond_wait(&p->room, &p->lock);
            continue;   /* another worker may have taken it meanwhile */
        }
        p->next++;
        p->in_flight++;
        p->in_flight_bytes += est;
        pthread_mutex_unlock(&p->lock);
        load_one(p->specs[i], p->opts, &p->out[i], i);
        pthread_mutex_lock(&p->lock);
        p->in_flight--;
        p->in_flight_bytes -= est;
        pthread_cond_broadcast(&p->room);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Run the workers: this thread is one of them. Threads that cannot be created are not
 * needed: the others (at least this one) take their share. */
static void run_pool(load_pool *p, unsigned jobs)
{
    pthread_t threads[64];
    size_t started = 0;
    if (jobs > SDP_ARRAY_LEN(threads) + 1) jobs = SDP_ARRAY_LEN(threads) + 1;
    while (started + 1 < jobs && pthread_create(&threads[started], NULL, worker, p) == 0)
        started++;
    worker(p);
    for (size_t i = 0; i < started; i++) pthread_join(threads[i], NULL);
}

sd_status sd_load_all(const char *const *specs, size_t n, const sd_loader_options *opts,
                      sd_loaded *out)
{
    sd_loader_options o = opts ? *opts : (sd_loader_options){0};
    unsigned jobs = o.jobs ? o.jobs : sd_loader_default_jobs();
    if (jobs > n) jobs = (unsigned)n;
    load_pool p = {.specs = specs, .n = n, .opts = &o, .out = out};
    p.estimate = calloc(n ? n : 1, sizeof *p.estimate);
    bool pooled = p.estimate && pthread_mutex_init(&p.lock, NULL) == 0;
    if (pooled && pthread_cond_init(&p.room, NULL) != 0) {
        pthread_mutex_destroy(&p.lock);
        pooled = false;
    }
    if (pooled) {
        for (size_t i = 0; i < n; i++) p.estimate[i] = estimate_peak(specs[i]);
        run_pool(&p, jobs);
        pthread_cond_destroy(&p.room);
        pthread_mutex_destroy(&p.lock);
    } else {
        for (size_t i = 0; i < n; i++) load_one(specs[i], &o, &out[i], i);  /* one by one */
    }
    free(p.estimate);
    for (size_t i = 0; i < n; i++)
        if (out[i].status != SD_OK) return out[i].status;
    return SD_OK;
}

void sd_loaded_free(sd_loaded *out, size_t n)
{
    for (size_t i = 0; out && i < n; i++) {
        for (size_t k = 0; k < out[i].n_snaps; k++) sd_snapshot_free(out[i].snaps[k]);
        free(out[i].snaps);
        out[i].snaps = NULL;
        out[i].n_snaps = 0;
    }
}
