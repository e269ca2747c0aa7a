/* cmd_series.c - `snapdiff series S1 S2 ... SN`: which groups grow across snapshots and
 * which only swing.
 *
 * load (in parallel; each snapshot is reduced to its group table, groups.h, in the loading
 * thread and freed at once) -> order (--sort) and steps -> analyse (series.h) -> render
 * (text or JSON, snapdiff/render_series.h) -> exit status.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "msg.h"
#include "snapdiff/ranks.h"
#include "snapdiff/render_series.h"
#include "snapdiff/series.h"

typedef struct input_tables {
    sd_groups **t;
    size_t n, cap;
} input_tables;

typedef struct series_ctx {
    sd_attrib_options attrib;
    uint64_t max_memory;
    input_tables *inputs;       /* per input: its members' tables, by member index */
    pthread_mutex_t lock;       /* the loading threads file their tables under it */
} series_ctx;

/* In a loading thread (the members of one input load in parallel too): the table is
 * made outside the lock, then filed under its member index. */
static sd_status reduce(void *vctx, size_t input, size_t member, const sd_snapshot *snap,
                        sd_error *err)
{
    series_ctx *c = vctx;
    input_tables *in = &c->inputs[input];
    sd_groups *g = sd_groups_create(snap, &c->attrib, c->max_memory, err);
    if (!g) return err->code ? err->code : SD_ENOMEM;
    sd_status st = SD_OK;
    pthread_mutex_lock(&c->lock);
    if (member >= in->cap) {
        size_t cap = in->cap ? in->cap : 4;
        while (cap <= member) cap *= 2;
        sd_groups **t = realloc(in->t, cap * sizeof *t);
        if (t) {
            memset(t + in->cap, 0, (cap - in->cap) * sizeof *t);
            in->t = t;
            in->cap = cap;
        } else {
            st = SD_ENOMEM;
        }
    }
    if (st == SD_OK) {
        in->t[member] = g;
        if (member + 1 > in->n) in->n = member + 1;
    }
    pthread_mutex_unlock(&c->lock);
    if (st != SD_OK) {
        sd_groups_free(g);
        err->code = SD_ENOMEM;
        snprintf(err->text, sizeof err->text, "out of memory");
    }
    return st;
}

static int by_name(const void *pa, const void *pb)
{
    const sd_groups *a = *(const sd_groups *const *)pa, *b = *(const sd_groups *const *)pb;
    return strcmp(sd_groups_source(a), sd_groups_source(b));
}

static int by_time(const void *pa, const void *pb)
{
    const sd_groups *a = *(const sd_groups *const *)pa, *b = *(const sd_groups *const *)pb;
    int64_t ta = 0, tb = 0;
    sd_groups_last_time(a, &ta);
    sd_groups_last_time(b, &tb);
    return (ta > tb) - (ta < tb);
}

/* --sort time: the snapshots with a trace time are put in time order among the places
 * they hold; those without one keep their place, and are named. */
static int sort_by_time(sd_groups **all, size_t n)
{
    sd_groups **timed = malloc((n ? n : 1) * sizeof *timed);
    if (!timed) {
        msg_error("out of memory");
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (sd_groups_last_time(all[i], NULL)) timed[k++] = all[i];
        else {
            msg_note("%s: no trace time_us; kept at place %zu of the series",
                     sd_groups_source(all[i]), i + 1);
        }
    }
    /* stable (insertion: series are tens of files): equal times keep their order */
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && by_time(&timed[j - 1], &timed[j]) > 0; j--) {
            sd_groups *t = timed[j];
            timed[j] = timed[j - 1];
            timed[j - 1] = t;
        }
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (sd_groups_last_time(all[i], NULL)) all[i] = timed[k++];
    free(timed);
    return 0;
}

static bool utf8_locale(void)
{
    const char *vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (size_t i = 0; i < 3; i++) {
        const char *v = getenv(vars[i]);
        if (!v || !*v) continue;
        char low[64];
        size_t k = 0;
        for (; v[k] && k + 1 < sizeof low; k++) low[k] = (char)tolower((unsigned char)v[k]);
        low[k] = '\0';
        return strstr(low, "utf-8") || strstr(low, "utf8");
    }
    return false;
}

/* job_steps: the steps a job's folder names (the job view), else NULL: from the options. */
static int analyse(const struct cli_opts *o, FILE *out, sd_groups **all, size_t n,
                   const uint64_t *job_steps)
{
    uint64_t *steps = NULL;
    if (job_steps) {
        steps = malloc((n ? n : 1) * sizeof *steps);
        if (!steps) {
            msg_error("out of memory");
            return EXIT_TROUBLE;
        }
        memcpy(steps, job_steps, n * sizeof *steps);
    } else if (o->series.steps_between || o->series.step_list) {
        if (o->series.step_list && (size_t)o->series.n_step_list != n) {
            msg_error("series: --steps names %d steps for %zu snapshots (one per snapshot)",
                      o->series.n_step_list, n);
            return EXIT_TROUBLE;
        }
        steps = malloc(n * sizeof *steps);
        if (!steps) {
            msg_error("out of memory");
            return EXIT_TROUBLE;
        }
        for (size_t i = 0; i < n; i++)
            steps[i] = o->series.step_list ? o->series.step_list[i] : i * o->series.steps_between;
    }
    sd_series_options so = {.version = SD_SERIES_OPTIONS_VERSION, .steps = steps,
                            .min_slope = o->series.has_min_slope ? o->series.min_slope
                                                                 : SD_SERIES_DEFAULT_MIN_SLOPE,
                            .min_confidence = o->series.confidence >= 0 ? o->series.confidence
                                                                 : SD_SERIES_DEFAULT_CONFIDENCE,
                            .capacity = o->capacity};
    sd_error err;
    sd_error_clear(&err);
    sd_series *s = sd_series_create((const sd_groups *const *)all, n, &so, &err);
    free(steps);
    if (!s) {
        msg_sd_error(&err);
        return EXIT_TROUBLE;
    }
    sd_status st;
    if (o->format == FORMAT_JSON) {
        st = sd_render_series_json(out, s);
    } else {
        sd_series_text_options to = {.render = {.color = o->color}, .top = (size_t)o->top,
                                      .unicode = !o->series.ascii && utf8_locale()};
        st = sd_render_series_text(out, s, &to);
    }
    if (st == SD_ENOMEM) msg_error("out of memory while writing the report");
    sd_series_free(s);
    return st == SD_OK || st == SD_EIO ? EXIT_OK : EXIT_TROUBLE;
}

/* ---- ranks of one job, side by side (issue 19) ---- */

static int by_rank(const void *pa, const void *pb)
{
    const sd_groups *a = *(const sd_groups *const *)pa, *b = *(const sd_groups *const *)pb;
    int64_t ra = sd_rank_of_name(sd_groups_source(a)), rb = sd_rank_of_name(sd_groups_source(b));
    return (ra > rb) - (ra < rb);
}

/* A job's folder, the ranks of one job or a series: --as-ranks, --as-series, or what the
 * names say (ranks.h: the one rule, which `report` follows too). */
static sd_names_view view_of(const struct cli_opts *o, sd_groups **all, size_t n,
                             const sd_name_pattern *pattern)
{
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names) return SD_NAMES_SERIES;
    for (size_t i = 0; i < n; i++) names[i] = sd_groups_source(all[i]);
    sd_names_view v = sd_names_view_of(names, n, cli_read_as(o), pattern);
    free(names);
    return v;
}

static void total_of(const sd_groups *g, sd_stats *st)
{
    memset(st, 0, sizeof *st);
    st->device = -1;
    for (size_t d = 0; d < sd_groups_device_count(g); d++) {
        const sd_group_device *x = sd_groups_device(g, d);
        st->allocated_bytes += x->allocated;
        st->reserved_bytes += x->reserved;
        st->requested_bytes += x->requested;
    }
}

/* The rank's label ("rank 3"), or the snapshot's name when it carries no rank. */
static void rank_label(const sd_groups *g, char *buf, size_t size)
{
    int64_t r = sd_rank_of_name(sd_groups_source(g));
    if (r >= 0) snprintf(buf, size, "rank %lld", (long long)r);
    else snprintf(buf, size, "%s", sd_groups_source(g));
}

/* Per-rank figures, the spread, the rank furthest from the median (none when they are all
 * the same): the ranks of one job are not a time series. */
static int ranks_view(const struct cli_opts *o, FILE *out, sd_groups **all, size_t n)
{
    qsort(all, n, sizeof *all, by_rank);
    sd_stats *t = calloc(n ? n : 1, sizeof *t);
    const char **names = calloc(n ? n : 1, sizeof *names);
    char (*labels)[300] = calloc(n ? n : 1, sizeof *labels);
    if (!t || !names || !labels) {
        free(t);
        free(names);
        free(labels);
        msg_error("out of memory");
        return EXIT_TROUBLE;
    }
    for (size_t i = 0; i < n; i++) {
        total_of(all[i], &t[i]);
        rank_label(all[i], labels[i], sizeof labels[i]);
        names[i] = labels[i];
    }
    sd_rank_spread sp;
    sd_rank_spread_of_totals(t, n, &sp);
    const char **sources = calloc(n ? n : 1, sizeof *sources);
    sd_groups_oom *ooms = calloc(n ? n : 1, sizeof *ooms);
    sd_status st = SD_ENOMEM;
    if (sources && ooms) {
        for (size_t i = 0; i < n; i++) {
            sources[i] = sd_groups_source(all[i]);
            ooms[i] = *sd_groups_oom_of(all[i]);
        }
        st = o->format == FORMAT_JSON
                 ? sd_render_series_ranks_oom_json(out, sources, t, ooms, n, &sp)
                 : sd_render_series_ranks_oom_text(out, sources, names, t, ooms, n, &sp,
                                                   o->color);
    }
    free(ooms);
    free(sources);
    free(t);
    free(names);
    free(labels);
    if (st == SD_ENOMEM) msg_error("out of memory");
    return st == SD_OK ? EXIT_OK : EXIT_TROUBLE;
}

/* ---- a job's folder by step and rank (issue 27) ---- */

static sd_groups *group_of(sd_groups **all, size_t n, const char *source)
{
    for (size_t i = 0; i < n; i++)
        if (sd_groups_source(all[i]) == source) return all[i];
    return NULL;
}

/* The series of the rank that grew most, over its steps (its OOM dumps left out): which
 * groups grew. `*out` gets its tables in step order and `steps` their steps. */
static size_t grown_rank_series(const sd_job_entry *e, size_t n, int64_t rank, sd_groups **all,
                                sd_groups **out, uint64_t *steps)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].name.oom || e[i].name.rank != rank) continue;
        out[k] = group_of(all, n, e[i].source);
        steps[k++] = e[i].name.step >= 0 ? (uint64_t)e[i].name.step : 0;
    }
    return k;
}

/* Steps that rise one after another can scale the slopes; else (a step not named, or twice)
 * the series is per snapshot. */
static const uint64_t *rising(const uint64_t *steps, size_t n, const sd_job_entry *e, size_t n_e)
{
    for (size_t i = 0; i < n_e; i++)
        if (e[i].name.step < 0) return NULL;
    for (size_t i = 1; i < n; i++)
        if (steps[i] <= steps[i - 1]) return NULL;
    return steps;
}

static int job_view(const struct cli_opts *o, FILE *out, sd_groups **all, size_t n,
                    const sd_name_pattern *pattern)
{
    sd_job_entry *e = calloc(n, sizeof *e);
    sd_job_rank *ranks = calloc(n, sizeof *ranks);
    sd_groups **sub = calloc(n, sizeof *sub);
    uint64_t *steps = calloc(n, sizeof *steps);
    int status = EXIT_TROUBLE;
    if (!e || !ranks || !sub || !steps) {
        msg_error("out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        e[i].source = sd_groups_source(all[i]);
        sd_job_name_read(e[i].source, pattern, &e[i].name);
        total_of(all[i], &e[i].total);
    }
    size_t grown;
    size_t nr = sd_job_summarize(e, n, ranks, &grown);
    size_t k = grown == SD_RANK_NONE ? 0
                                     : grown_rank_series(e, n, ranks[grown].rank, all, sub, steps);
    sd_status st;
    if (o->format == FORMAT_JSON) {
        st = sd_render_series_job_json(out, e, n, ranks, nr, grown, k >= SD_SERIES_MIN_SNAPSHOTS);
        if (st == SD_OK && k >= SD_SERIES_MIN_SNAPSHOTS) {
            fprintf(out, "  \"series_of_grew_most\": ");
            fflush(out);
            status = analyse(o, out, sub, k, rising(steps, k, e, n));
            fprintf(out, "}\n");
            goto done;
        }
    } else {
        st = sd_render_series_job_text(out, e, n, ranks, nr, grown, o->color);
        if (st == SD_OK && k >= SD_SERIES_MIN_SNAPSHOTS) {
            fprintf(out, "\nGroups of rank %lld across its steps (the rank that grew most)\n",
                    (long long)ranks[grown].rank);
            status = analyse(o, out, sub, k, rising(steps, k, e, n));
            goto done;
        }
    }
    if (st == SD_ENOMEM) msg_error("out of memory");
    status = st == SD_OK || st == SD_EIO ? EXIT_OK : EXIT_TROUBLE;
done:
    free(e);
    free(ranks);
    free(sub);
    free(steps);
    return status;
}

static int run_series(const struct cli_opts *opts, FILE *out, const char *const *files,
                      const bool *folder, size_t n_in)
{
    series_ctx c = {.max_memory = opts->max_memory, .inputs = calloc(n_in ? n_in : 1, sizeof *c.inputs)};
    if (!c.inputs) {
        msg_error("out of memory");
        return EXIT_TROUBLE;
    }
    if (pthread_mutex_init(&c.lock, NULL) != 0) {
        free(c.inputs);
        msg_error("out of memory");
        return EXIT_TROUBLE;
    }
    cli_attrib_options(opts, &c.attrib);
    int status = EXIT_TROUBLE;
    size_t n = 0;
    sd_groups **all = NULL;
    struct cli_load_options lo = {.shape = CLI_LOAD_STREAM, .specs = files, .n = n_in,
                                  .each = reduce, .ctx = &c, .in_folder = folder};
    int loaded = cli_load(opts, &lo);
    pthread_mutex_destroy(&c.lock);
    if (loaded == 0) {
        for (size_t i = 0; i < n_in; i++) n += c.inputs[i].n;
        all = malloc((n ? n : 1) * sizeof *all);
        if (!all) msg_error("out of memory");
    }
    if (all) {
        size_t k = 0;
        for (size_t i = 0; i < n_in; i++)
            for (size_t m = 0; m < c.inputs[i].n; m++) all[k++] = c.inputs[i].t[m];
        int sorted = 0;
        if (opts->series.sort == SORT_NAME) {
            /* stable: insertion sort keeps equal names in the order given */
            for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && by_name(&all[j - 1], &all[j]) > 0; j--) {
                    sd_groups *t = all[j];
                    all[j] = all[j - 1];
                    all[j - 1] = t;
                }
        } else if (opts->series.sort == SORT_TIME) {
            sorted = sort_by_time(all, n);
        }
        sd_error err;
        sd_error_clear(&err);
        sd_name_pattern *pattern = NULL;
        if (opts->name_pattern && !(pattern = sd_name_pattern_create(opts->name_pattern, &err))) {
            msg_error("%s", err.text);   /* the option's error: no file to name */
            sorted = -1;
        }
        sd_names_view view = sorted == 0 ? view_of(opts, all, n, pattern) : SD_NAMES_SERIES;
        if (sorted == 0)
            status = view == SD_NAMES_JOB     ? job_view(opts, out, all, n, pattern)
                     : view == SD_NAMES_RANKS ? ranks_view(opts, out, all, n)
                                              : analyse(opts, out, all, n, NULL);
        sd_name_pattern_free(pattern);
    }
    for (size_t i = 0; i < n_in; i++) {
        for (size_t m = 0; m < c.inputs[i].n; m++) sd_groups_free(c.inputs[i].t[m]);
        free(c.inputs[i].t);
    }
    free(c.inputs);
    free(all);
    return status;
}

/* A directory becomes its snapshot files, so that they load in parallel (--jobs) and
 * within --max-memory by their sizes, like files given one by one; the files it leaves
 * out as no snapshot are noted here, as the loader notes them. Other specs stay as they
 * are (a directory that does not open is left to the loader to report). *out holds
 * owned strings; (*folder)[i]: spec i came from a directory (its file may be left out
 * when it does not read). @return the number of specs, or -1 (printed). */
static int expand_dirs(const struct cli_opts *o, char ***out, bool **folder)
{
    size_t n = 0, cap = 0;
    char **specs = NULL;
    bool *from = NULL;
    for (int i = 0; i < o->n_files; i++) {
        const char *spec = o->files[i];
        struct stat st;
        sd_input *in = NULL;
        if (stat(spec, &st) == 0 && S_ISDIR(st.st_mode)) {
            sd_input_options io = {.version = SD_INPUT_OPTIONS_VERSION,
                                   .max_memory = o->max_memory};
            in = sd_input_open(spec, &io, NULL);
        }
        size_t k = in ? sd_input_count(in) : 1;
        if (n + k > cap) {
            cap = (n + k) * 2;
            char **grown = realloc(specs, cap * sizeof *grown);
            if (grown) specs = grown;
            bool *grown_from = grown ? realloc(from, cap * sizeof *grown_from) : NULL;
            if (grown_from) from = grown_from;
            if (!grown || !grown_from) {
                sd_input_free(in);
                goto nomem;
            }
        }
        if (in && sd_input_skipped_count(in))
            msg_note("%s: skipped %zu %s: %s", spec, sd_input_skipped_count(in),
                     sd_input_skipped_count(in) == 1 ? "file that is not a snapshot"
                                                     : "files that are not snapshots",
                     sd_input_skipped(in));
        for (size_t m = 0; m < k; m++) {
            specs[n] = strdup(in ? sd_input_name(in, m) : spec);
            if (!specs[n]) {
                sd_input_free(in);
                goto nomem;
            }
            from[n++] = in != NULL;
        }
        sd_input_free(in);
    }
    *out = specs;
    *folder = from;
    return (int)n;
nomem:
    for (size_t i = 0; i < n; i++) free(specs[i]);
    free(specs);
    free(from);
    msg_error("out of memory");
    return -1;
}

int cmd_series(const struct cli_opts *opts, FILE *out)
{
    char **specs = NULL;
    bool *folder = NULL;
    int n_specs = expand_dirs(opts, &specs, &folder);
    if (n_specs < 0) return EXIT_TROUBLE;
    int status = run_series(opts, out, (const char *const *)specs, folder, (size_t)n_specs);
    for (int i = 0; i < n_specs; i++) free(specs[i]);
    free(specs);
    free(folder);
    return status;
}
