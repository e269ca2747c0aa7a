/* load.c - the one N-way loader (load.h): snapshots loaded by a few threads at once.
 *
 * First every input is opened, in this thread, to learn its members (a file is one, an
 * archive or directory of ranks many); then each member is one piece of work. Workers
 * take the next piece in order from a shared counter, and before starting one wait until
 * its estimated peak fits beside the loads in flight (or nothing is in flight), so
 * parallelism never costs more memory than the budget allows. A piece of an archive with
 * several members opens the archive again for itself (libzip's handles are not shared
 * between threads); the members of a directory, files read by path, and the only member
 * of an input read through the handle opened first (so that standard input, which cannot
 * be opened twice, works, and a directory of N ranks is listed once, not N times: the
 * reduce of a cluster job reads 4,096 summaries from one). Each worker writes only
 * its own slot; nothing is printed, so the caller reports in input order whatever order
 * the loads finished in.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "snapdiff/load.h"
#include "source/source_internal.h"

/* A load peaks at about 0.95x its pickle on real-shaped files (bench.sh); files whose
 * dicts stay dicts (old layouts, protocols 0-1) keep more of a value tree, and 3x leaves
 * room for them. */
enum { PEAK_PER_FILE_BYTE = 3 };

typedef struct load_item {
    size_t input, member;
    uint64_t estimate;             /* its estimated peak, 0 when unknown */
    sd_status status;
    sd_error err;
} load_item;

typedef struct load_pool {
    const sd_loader_options *opts;
    sd_input **inputs;             /* per input: the handle opened first (NULL: failed) */
    sd_loaded *out;
    load_item *items;
    size_t n_items;
    pthread_mutex_t lock;
    pthread_cond_t room;           /* signalled when a load finishes */
    size_t next;                   /* the next item to start */
    size_t in_flight;
    uint64_t in_flight_bytes;
} load_pool;

unsigned sd_loader_default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

static uint64_t file_size(const char *spec)
{
    struct stat st;
    if (stat(spec, &st) != 0 || !S_ISREG(st.st_mode)) return 0;  /* "-", DIR, ARCHIVE:m */
    return (uint64_t)st.st_size;
}

/* ---------- opening the inputs ---------- */

static void open_one(const char *spec, const sd_loader_options *o, sd_loaded *r, sd_input **in)
{
    memset(r, 0, sizeof *r);
    r->spec = spec;
    sd_error_clear(&r->err);
    sd_input_options io = {.max_memory = o->max_memory,
                          .skip_summaries = o->skip_summaries};
    *in = sd_input_open(spec, &io, &r->err);
    if (!*in) {
        r->status = r->err.code ? r->err.code : SD_EIO;
        return;
    }
    r->n_members = sd_input_count(*in);
    r->n_skipped = sd_input_skipped_count(*in);
    if (r->n_skipped) r->skipped = strdup(sd_input_skipped(*in));
    if (r->n_members) r->first_member = strdup(sd_input_name(*in, 0));
    if ((r->n_skipped && !r->skipped) || (r->n_members && !r->first_member)) {
        r->status = sdp_fail(&r->err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        return;
    }
    if (!o->all_members && r->n_members != 1) {
        r->ambiguous = true;
        r->status = sdp_fail(&r->err, SD_EUSAGE, SD_NO_OFFSET, "holds %zu snapshots; pick one",
                             r->n_members);
        return;
    }
    r->snaps = calloc(r->n_members ? r->n_members : 1, sizeof *r->snaps);
    if (!r->snaps) r->status = sdp_fail(&r->err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
}

/* ---------- one member ---------- */

static sd_status load_item_now(load_pool *p, load_item *it)
{
    const sd_loader_options *o = p->opts;
    sd_loaded *r = &p->out[it->input];
    sd_input *in = p->inputs[it->input], *own = NULL;
    if (r->n_members > 1 && !sdp_input_reads_in_parallel(in)) {   /* see the top of the file */
        sd_input_options io = {.max_memory = o->max_memory,
                              .skip_summaries = o->skip_summaries};
        own = sd_input_open(r->spec, &io, &it->err);
        if (!own) return it->err.code ? it->err.code : SD_EIO;
        if (sd_input_count(own) != r->n_members) {
            sd_input_free(own);
            sdp_error_set_source(&it->err, r->spec);
            return sdp_fail(&it->err, SD_EIO, SD_NO_OFFSET, "changed while it was read");
        }
        in = own;
    }
    sd_load_options lo = {.max_memory = o->max_memory};
    sd_snapshot *s = sd_snapshot_load_input(in, it->member, &lo, &it->err);
    sd_input_free(own);
    if (!s) return it->err.code ? it->err.code : SD_ENOMEM;
    if (o->each) {   /* handed over, then freed: no model is kept */
        sd_status st = o->each(o->ctx, it->input, it->member, s, &it->err);
        sd_snapshot_free(s);
        return st;
    }
    r->snaps[it->member] = s;
    return SD_OK;
}

static bool fits(const load_pool *p, uint64_t est)
{
    uint64_t budget = p->opts->max_memory;
    return p->in_flight == 0 || budget == 0 || p->in_flight_bytes + est <= budget;
}

static void *worker(void *arg)
{
    load_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    while (p->next < p->n_items) {
        load_item *it = &p->items[p->next];
        if (!fits(p, it->estimate)) {
            pthread_cond_wait(&p->room, &p->lock);
            continue;   /* another worker may have taken it meanwhile */
        }
        p->next++;
        p->in_flight++;
        p->in_flight_bytes += it->estimate;
        pthread_mutex_unlock(&p->lock);
        it->status = load_item_now(p, it);
        pthread_mutex_lock(&p->lock);
        p->in_flight--;
        p->in_flight_bytes -= it->estimate;
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

/* ---------- results, as if loaded one after another ---------- */

/* Whether a member that failed with `st` is left out (skip_unreadable) rather than
 * failing its input: only a member of a directory, only input that does not read. */
static bool leave_out(const load_pool *p, size_t input, sd_status st)
{
    const sd_loader_options *o = p->opts;
    bool folder = sdp_input_reads_in_parallel(p->inputs[input])
                  || (o->in_folder && o->in_folder[input]);
    bool unreadable = st == SD_EIO || st == SD_ETRUNC || st == SD_EFORMAT || st == SD_EREFUSED
                      || st == SD_ESNAPSHOT;
    return o->skip_unreadable && folder && unreadable;
}

static bool keep_unreadable(sd_loaded *r, const sd_error *err)
{
    sd_error *grown = realloc(r->unreadable, (r->n_unreadable + 1) * sizeof *grown);
    if (!grown) return false;
    r->unreadable = grown;
    r->unreadable[r->n_unreadable++] = *err;
    return true;
}

/* Each input: the first member that failed decides its status and error; the snapshots
 * before it are kept, those after it freed (a member loaded in parallel with a failing
 * one is not reported past the failure). Members left out (leave_out) close up: the
 * snapshots kept stay in member order without gaps. */
static void settle(load_pool *p, size_t n_inputs)
{
    size_t k = 0;
    for (size_t i = 0; i < n_inputs; i++) {
        sd_loaded *r = &p->out[i];
        size_t n = r->status == SD_OK ? r->n_members : 0;
        bool failed = false;
        for (size_t m = 0; m < n; m++, k++) {
            load_item *it = &p->items[k];
            if (failed) {
                sd_snapshot_free(r->snaps[m]);
                r->snaps[m] = NULL;
                continue;
            }
            if (it->status != SD_OK && leave_out(p, i, it->status)) {
                if (!it->err.source[0]) sdp_error_set_source(&it->err, r->spec);
                if (keep_unreadable(r, &it->err)) continue;
                it->status = sdp_fail(&it->err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
            }
            if (it->status != SD_OK) {
                failed = true;
                r->status = it->status;
                r->err = it->err;
                continue;
            }
            if (p->opts->each) {
                r->n_passed++;
            } else {
                r->snaps[r->n_snaps] = r->snaps[m];
                if (r->n_snaps++ != m) r->snaps[m] = NULL;
            }
        }
    }
}

sd_status sd_loader_options_init(sd_loader_options *opts, unsigned version)
{
    static const sd_loader_options tmpl = SD_LOADER_OPTIONS_INIT;
    return sdp_options_init(opts, sizeof *opts, &tmpl, version, SD_LOADER_OPTIONS_VERSION);
}

sd_status sd_load_all(const char *const *specs, size_t n, const sd_loader_options *opts,
                      sd_loaded *out)
{
    /* A struct newer than this library: every input fails with the one error. */
    sd_error verr;
    sd_error_clear(&verr);
    if (sdp_options_check(opts, SD_LOADER_OPTIONS_VERSION, "sd_loader_options", &verr)) {
        for (size_t i = 0; i < n; i++) {
            memset(&out[i], 0, sizeof out[i]);
            out[i].spec = specs[i];
            out[i].status = verr.code;
            out[i].err = verr;
        }
        return verr.code;
    }
    sd_loader_options o = opts ? *opts : (sd_loader_options){0};
    unsigned jobs = o.jobs ? o.jobs : sd_loader_default_jobs();
    load_pool p = {.opts = &o, .out = out};
    p.inputs = calloc(n ? n : 1, sizeof *p.inputs);
    size_t total = 0;
    for (size_t i = 0; p.inputs && i < n; i++) {
        open_one(specs[i], &o, &out[i], &p.inputs[i]);
        if (out[i].status == SD_OK && o.opened) {
            out[i].status = o.opened(o.ctx, i, p.inputs[i], &out[i].err);
            if (out[i].status != SD_OK && !out[i].err.source[0])
                sdp_error_set_source(&out[i].err, specs[i]);
        }
        if (out[i].status == SD_OK) total += out[i].n_members;
    }
    p.items = p.inputs ? calloc(total ? total : 1, sizeof *p.items) : NULL;
    if (!p.items) {
        for (size_t i = 0; i < n; i++) {
            if (p.inputs) sd_input_free(p.inputs[i]);
            if (out[i].status == SD_OK)
                out[i].status = sdp_fail(&out[i].err, SD_ENOMEM, SD_NO_OFFSET, "out of memory");
        }
        free(p.inputs);
        return n ? out[0].status : SD_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (out[i].status != SD_OK) continue;
        uint64_t each_est = file_size(specs[i]) * PEAK_PER_FILE_BYTE /
                            (out[i].n_members ? out[i].n_members : 1);
        for (size_t m = 0; m < out[i].n_members; m++) {
            load_item *it = &p.items[p.n_items++];
            *it = (load_item){.input = i, .member = m, .estimate = each_est};
            sd_error_clear(&it->err);
        }
    }
    if (jobs > p.n_items) jobs = p.n_items ? (unsigned)p.n_items : 1;
    bool pooled = pthread_mutex_init(&p.lock, NULL) == 0;
    if (pooled && pthread_cond_init(&p.room, NULL) != 0) {
        pthread_mutex_destroy(&p.lock);
        pooled = false;
    }
    if (pooled) {
        run_pool(&p, jobs);
        pthread_cond_destroy(&p.room);
        pthread_mutex_destroy(&p.lock);
    } else {
        for (size_t k = 0; k < p.n_items; k++) p.items[k].status = load_item_now(&p, &p.items[k]);
    }
    settle(&p, n);
    for (size_t i = 0; i < n; i++) sd_input_free(p.inputs[i]);
    free(p.inputs);
    free(p.items);
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
        free(out[i].skipped);
        out[i].skipped = NULL;
        free(out[i].first_member);
        out[i].first_member = NULL;
        free(out[i].unreadable);
        out[i].unreadable = NULL;
        out[i].n_unreadable = 0;
        out[i].n_snaps = 0;
    }
}
