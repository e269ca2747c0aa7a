/* cmd_report.c - `snapdiff report FILE... -o report.html`: one self-contained HTML page.
 *
 * load -> analyse (a frag per snapshot; two files: the diff; one or N files: a profile;
 * the ranks of one job, as `series` guesses them or --as-ranks says: side by side;
 * training logs: their curves, curve.h; and for snapshots the figures of report_data.h:
 * peaks, live series, sites, totals, one file's replay under the user's settings) ->
 * render (render/report.c only formats: the page draws from the same JSON the other
 * commands write) -> exit status. HTML is not written to a terminal: -o FILE or a
 * redirect.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "msg.h"
#include "snapdiff/curve.h"
#include "snapdiff/ranks.h"
#include "snapdiff/render_report.h"
#include "snapdiff/report_data.h"
#include "snapdiff/summary.h"
#include "snapdiff/units.h"

/* A frag per snapshot; on failure the error is printed and -1 returned. */
static int analyse_frags(sd_snapshot **snaps, size_t n, const struct cli_opts *o, sd_frag **frags)
{
    sd_error err;
    sd_error_clear(&err);
    sd_frag_options fo = {.version = SD_FRAG_OPTIONS_VERSION,
                          .gap_threshold_pct = o->frag.gap_threshold,
                          .index_threshold = o->frag.index_threshold, .max_memory = o->max_memory};
    for (size_t i = 0; i < n; i++) {
        frags[i] = sd_frag_create(snaps[i], &fo, &err);
        if (!frags[i]) {
            if (!err.source[0])
                snprintf(err.source, sizeof err.source, "%s", sd_snapshot_source(snaps[i]));
            msg_sd_error(&err);
            return -1;
        }
    }
    return 0;
}

/* The analyses the page needs; on failure the error is printed and -1 returned. */
static int analyse(sd_snapshot **snaps, size_t n, const struct cli_opts *o, sd_frag **frags,
                   sd_diff **diff, sd_profile **profile)
{
    sd_error err;
    sd_error_clear(&err);
    if (analyse_frags(snaps, n, o, frags) != 0) return -1;
    if (n == 2) {
        sd_diff_options d;
        sd_diff_options_init(&d, SD_DIFF_OPTIONS_VERSION);
        cli_attrib_options(o, &d.attrib);
        d.max_memory = o->max_memory;
        *diff = sd_diff_create(snaps[0], snaps[1], &d, &err);
    } else {
        sd_profile_options po;
        sd_profile_options_init(&po, SD_PROFILE_OPTIONS_VERSION);
        cli_attrib_options(o, &po.attrib);
        po.max_memory = o->max_memory;
        /* One file: an empty side before it, so that its stacks are the "growth" of the
         * folded stacks, as `diff --format folded` with one file. */
        const sd_snapshot *one[2] = {NULL, snaps[0]};
        *profile = n == 1 ? sd_profile_create(one, 2, &po, &err)
                          : sd_profile_create((const sd_snapshot *const *)snaps, n, &po, &err);
    }
    if (!*diff && !*profile) {
        msg_sd_error(&err);
        return -1;
    }
    return 0;
}

/* The what-ifs one file's page draws when no --alloc-conf is given: the two settings that
 * most often change what a run reserves (docs/report.md). */
static const char *const default_what_ifs[] = {"expandable_segments:True", "max_split_size_mb:512"};

/* The report's own figures (report_data.h), with the user's grouping and replay settings;
 * and the icicle's stacks of `profile` (NULL: none); on failure the error is printed and
 * NULL returned. */
static sd_report_data *analyse_data(sd_snapshot **snaps, size_t n, const struct cli_opts *o,
                                    const sd_profile *profile)
{
    sd_report_data_options ro = SD_REPORT_DATA_OPTIONS_INIT;
    ro.profile = profile;
    cli_attrib_options(o, &ro.attrib);
    ro.max_memory = o->max_memory;
    ro.replay = n == 1;
    bool given = o->replay.n_alloc_conf > 0;
    ro.replay_options = (sd_replay_options){
        .alloc_confs = given ? o->replay.alloc_conf : default_what_ifs,
        .n_alloc_confs = given ? (size_t)o->replay.n_alloc_conf : 2,
        .capacity = o->capacity,
        .memory_fraction = o->replay.memory_fraction,
        .torch_version = o->replay.torch_version,
        .max_memory = o->max_memory};
    sd_error err;
    sd_error_clear(&err);
    sd_report_data *d = sd_report_data_create((const sd_snapshot *const *)snaps, n, &ro, &err);
    if (!d) msg_sd_error(&err);
    return d;
}

/* A job's folder, the ranks of one job or a series, by the rule `series` reads them by
 * (ranks.h, sd_names_view_of). */
static sd_names_view view_of(const struct cli_opts *o, sd_snapshot **snaps, size_t n,
                             const sd_name_pattern *pattern)
{
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names) return SD_NAMES_SERIES;
    for (size_t i = 0; i < n; i++) names[i] = sd_snapshot_source(snaps[i]);
    sd_names_view v = sd_names_view_of(names, n, cli_read_as(o), pattern);
    free(names);
    return v;
}

/* The ranks page: the ranks of one job, or a job's folder with no rank followed (its OOM
 * dumps only) whose names are ranks; two files stay a diff unless --as-ranks says so. */
static bool read_as_ranks(const struct cli_opts *o, sd_snapshot **snaps, size_t n,
                          sd_names_view view)
{
    if (n < 2 || (n < 3 && o->as != AS_RANKS)) return false;
    if (view != SD_NAMES_JOB) return view == SD_NAMES_RANKS;
    const char **names = malloc(n * sizeof *names);
    if (!names) return false;
    for (size_t i = 0; i < n; i++) names[i] = sd_snapshot_source(snaps[i]);
    bool ranks = sd_ranks_names_are_ranks(names, n);
    free(names);
    return ranks;
}

/* ---- a job's folder by step and rank (issue 27) ---- */

/* The rank the page follows: the one that grew most, else the one with the most steps. */
static int64_t followed_rank(const sd_job_rank *ranks, size_t nr, size_t grown)
{
    if (grown != SD_RANK_NONE) return ranks[grown].rank;
    size_t best = 0;
    for (size_t i = 1; i < nr; i++)
        if (ranks[i].n_steps > ranks[best].n_steps) best = i;
    return nr ? ranks[best].rank : -1;
}

static void note_oom_dumps(const sd_job_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!e[i].name.oom) continue;
        char a[32], r[32], step[40] = "";
        sd_format_bytes(e[i].total.allocated_bytes, a, sizeof a);
        sd_format_bytes(e[i].total.reserved_bytes, r, sizeof r);
        if (e[i].name.step >= 0) snprintf(step, sizeof step, " after step %lld", (long long)e[i].name.step);
        msg_note("OOM dump of rank %lld%s: %s (allocated %s, reserved %s: what was live when "
                 "the allocator failed)", (long long)e[i].name.rank, step, e[i].source, a, r);
    }
}

/* The whole folder, for the page's steps-by-ranks table, once the snapshots of the other
 * ranks are freed: the entries own copies of their names. */
typedef struct job_view {
    sd_job_entry *e;
    size_t n;
    sd_job_rank *ranks;
    size_t nr, grown;
} job_view;

static void job_view_free(job_view *jv)
{
    for (size_t i = 0; jv->e && i < jv->n; i++) free((char *)jv->e[i].source);
    free(jv->e);
    free(jv->ranks);
    memset(jv, 0, sizeof *jv);
}

/* Keep e and ranks in jv, each entry's name copied. @return false: out of memory. */
static bool keep_job(job_view *jv, sd_job_entry *e, size_t n, sd_job_rank *ranks, size_t nr,
                     size_t grown)
{
    for (size_t i = 0; i < n; i++) {
        char *copy = strdup(e[i].source);
        if (!copy) {
            for (size_t k = 0; k < i; k++) free((char *)e[k].source);
            return false;
        }
        e[i].source = copy;
    }
    *jv = (job_view){e, n, ranks, nr, grown};
    return true;
}

/* A job's folder (view_of): the page follows one rank across its steps, in step order; the
 * other snapshots are freed and the OOM dumps named; the whole folder stays in *jv for its
 * table. 0: *n and snaps narrowed or left as they were (one step, or OOM dumps only); -1:
 * printed. */
static int follow_one_rank(sd_snapshot **snaps, size_t *n, const sd_name_pattern *pattern,
                           job_view *jv)
{
    const char **names = calloc(*n, sizeof *names);
    sd_job_entry *e = calloc(*n, sizeof *e);
    sd_job_rank *ranks = calloc(*n, sizeof *ranks);
    int rc = 0;
    if (!names || !e || !ranks) {
        msg_error("out of memory");
        rc = -1;
        goto done;
    }
    for (size_t i = 0; i < *n; i++) names[i] = sd_snapshot_source(snaps[i]);
    /* one step read by --name-pattern: no steps to follow, the ranks side by side */
    if (!sd_job_names_are_steps(names, *n, pattern)) goto done;
    for (size_t i = 0; i < *n; i++) {
        e[i].source = names[i];
        sd_job_name_read(names[i], pattern, &e[i].name);
        sd_stats_total(snaps[i], &e[i].total);
    }
    size_t grown, nr = sd_job_summarize(e, *n, ranks, &grown);
    int64_t rank = followed_rank(ranks, nr, grown);
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) k += !e[i].name.oom && e[i].name.rank == rank;
    note_oom_dumps(e, *n);
    if (k == 0) goto done;   /* OOM dumps only: the ranks side by side, as they are */
    msg_note("a job's folder (%s names), %zu ranks: the page follows rank %lld across its %zu "
             "steps (%s); `snapdiff series` shows every rank by step",
             sd_job_layout_name(e[0].name.layout), nr, (long long)rank, k,
             grown != SD_RANK_NONE ? "the rank that grew most" : "no rank grew");
    sd_snapshot **kept = calloc(k, sizeof *kept);
    if (!kept) {
        msg_error("out of memory");
        rc = -1;
        goto done;
    }
    size_t w = 0;
    for (size_t i = 0; i < *n; i++)   /* e is in step order; its sources are the snapshots' */
        if (!e[i].name.oom && e[i].name.rank == rank)
            for (size_t s = 0; s < *n; s++)
                if (snaps[s] && sd_snapshot_source(snaps[s]) == e[i].source) kept[w++] = snaps[s];
    if (!keep_job(jv, e, *n, ranks, nr, grown)) {   /* before the snapshots (names) go */
        free(kept);
        msg_error("out of memory");
        rc = -1;
        goto done;
    }
    e = NULL;      /* jv's now */
    ranks = NULL;
    for (size_t s = 0; s < *n; s++) {
        bool keep = false;
        for (size_t i = 0; i < w && !keep; i++) keep = kept[i] == snaps[s];
        if (!keep) sd_snapshot_free(snaps[s]);
    }
    memcpy(snaps, kept, w * sizeof *snaps);
    *n = w;
    free(kept);
done:
    free(names);
    free(e);
    free(ranks);
    return rc;
}

/* --name-pattern compiled into *out (NULL without the option). -1: printed. */
static int name_pattern(const struct cli_opts *o, sd_name_pattern **out)
{
    sd_error err;
    sd_error_clear(&err);
    *out = NULL;
    if (o->name_pattern && !(*out = sd_name_pattern_create(o->name_pattern, &err))) {
        msg_error("%s", err.text);   /* the option's error: no file to name */
        return -1;
    }
    return 0;
}

static int by_rank(const void *pa, const void *pb)
{
    const sd_snapshot *a = *(const sd_snapshot *const *)pa, *b = *(const sd_snapshot *const *)pb;
    int64_t ra = sd_rank_of_name(sd_snapshot_source(a)), rb = sd_rank_of_name(sd_snapshot_source(b));
    return (ra > rb) - (ra < rb);
}

/* What the page is drawn from, whichever view it is. */
typedef struct report_job {
    sd_snapshot **snaps;
    size_t n;
    sd_frag **frags;
    const sd_diff *diff;
    const sd_profile *profile;
    bool ranks;
    const sd_curve *curve;
    const job_view *job;      /* a job's folder the page follows one rank of, or NULL */
    const sd_report_data *data;
} report_job;

static int write_report(FILE *out, const report_job *j, const struct cli_opts *o)
{
    sd_report_input in = {SD_REPORT_INPUT_VERSION, (const sd_snapshot *const *)j->snaps, j->n,
                           (const sd_frag *const *)j->frags, j->profile, j->diff, o->max_memory,
                           j->ranks, j->curve, j->data, NULL, 0, NULL, 0, 0};
    if (j->job && j->job->n) {
        in.job = j->job->e;
        in.n_job = j->job->n;
        in.job_ranks = j->job->ranks;
        in.n_job_ranks = j->job->nr;
        in.job_grown = j->job->grown;
    }
    sd_error err;
    sd_error_clear(&err);
    sd_status st = sd_render_report(out, &in, &err);
    if (st == SD_OK || st == SD_EIO) return st == SD_OK ? EXIT_OK : EXIT_TROUBLE;
    msg_sd_error(&err);
    return EXIT_TROUBLE;
}

/* -o FILE, else `out` (the command's stream). */
static int render_to_output(const report_job *j, const struct cli_opts *o, FILE *out)
{
    if (!o->output) return write_report(out, j, o);
    FILE *f = fopen(o->output, "wb");
    if (!f) {
        msg_error("%s: cannot write: %s", o->output, strerror(errno));
        return EXIT_TROUBLE;
    }
    int status = write_report(f, j, o);
    if (fclose(f) != 0 && status == EXIT_OK) {
        msg_error("%s: error writing: %s", o->output, strerror(errno));
        status = EXIT_TROUBLE;
    }
    if (status != EXIT_OK) remove(o->output);
    return status;
}

/* ---- training logs (curve.h) ---- */

/* Whether `path` is a plain file of text: no snapshot (a pickle starts with 0x80, or '('
 * in protocol 0), no zip, no gzip, no summary, and no NUL in its first 4 KiB. A gzipped
 * log or stdin is read as a log only with --log-format. */
static bool is_text_log(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return false;
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    uint8_t head[4096];
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    if (n == 0 || head[0] == 0x80 || head[0] == '(' || sd_summary_sniff(head, n)) return false;
    if (n >= 2 && ((head[0] == 'P' && head[1] == 'K') || (head[0] == 0x1f && head[1] == 0x8b)))
        return false;
    return memchr(head, 0, n) == NULL;
}

/* 1: the inputs are training logs; 0: snapshots; -1: both (printed). */
static int inputs_are_logs(const struct cli_opts *o)
{
    if (o->curve.log_format) return 1;
    int logs = 0;
    for (int i = 0; i < o->n_files; i++) logs += is_text_log(o->files[i]);
    if (logs == 0) return 0;
    if (logs == o->n_files) return 1;
    for (int i = 0; i < o->n_files; i++)
        if (!is_text_log(o->files[i])) {
            msg_error("report: %s is no training log, and the other inputs are: give logs (their "
                      "curves) or snapshots, not both", o->files[i]);
            break;
        }
    return -1;
}

/* The curves of the logs, as `snapdiff curve` reads them (its limits are not judged: the
 * page draws; `curve` gates). */
static int report_curves(const struct cli_opts *o, FILE *out)
{
    sd_curve_options co;
    cli_curve_options(o, &co);
    sd_error err;
    sd_error_clear(&err);
    sd_curve *c = sd_curve_create(o->files, (size_t)o->n_files, &co, &err);
    if (!c) {
        msg_sd_error(&err);
        return EXIT_TROUBLE;
    }
    cli_curve_warn_bad_lines(c);
    report_job j = {NULL, sd_curve_file_count(c), NULL, NULL, NULL, false, c, NULL, NULL};
    int status = render_to_output(&j, o, out);
    sd_curve_free(c);
    return status;
}

int cmd_report(const struct cli_opts *opts, FILE *out)
{
    if (!opts->output && isatty(fileno(out))) {
        msg_error("report writes an HTML page: give -o FILE (e.g. -o report.html) or "
                  "redirect stdout");
        return EXIT_TROUBLE;
    }
    int logs = inputs_are_logs(opts);
    if (logs != 0) return logs > 0 ? report_curves(opts, out) : EXIT_TROUBLE;
    if (cli_check_alloc_confs(opts) != 0) return EXIT_TROUBLE;
    sd_snapshot **snaps;
    size_t n;
    struct cli_load_options lo = {.shape = CLI_LOAD_FLAT, .specs = opts->files,
                                  .n = (size_t)opts->n_files, .all = &snaps, .n_all = &n};
    if (cli_load(opts, &lo) != 0) return EXIT_TROUBLE;
    int status = EXIT_TROUBLE;
    sd_frag **frags = calloc(n ? n : 1, sizeof *frags);
    sd_diff *diff = NULL;
    sd_profile *profile = NULL;
    job_view jv = {0};
    sd_name_pattern *pattern = NULL;
    sd_names_view view = SD_NAMES_SERIES;
    sd_report_data *data = NULL;
    if (!frags) msg_error("out of memory");
    else if (n == 0) msg_error("report: no snapshot in the input");
    else if (name_pattern(opts, &pattern) != 0) {
        /* printed */
    } else if ((view = view_of(opts, snaps, n, pattern)) == SD_NAMES_JOB
               && follow_one_rank(snaps, &n, pattern, &jv) != 0) {
        /* printed */
    } else if (read_as_ranks(opts, snaps, n, view)) {
        qsort(snaps, n, sizeof *snaps, by_rank);   /* as `series` lists them */
        if (analyse_frags(snaps, n, opts, frags) == 0 && (data = analyse_data(snaps, n, opts, NULL))) {
            report_job j = {snaps, n, frags, NULL, NULL, true, NULL, NULL, data};
            status = render_to_output(&j, opts, out);
        }
    } else if (analyse(snaps, n, opts, frags, &diff, &profile) == 0 &&
               (data = analyse_data(snaps, n, opts, diff ? sd_diff_profile(diff) : profile))) {
        report_job j = {snaps, n, frags, diff, profile, false, NULL, &jv, data};
        status = render_to_output(&j, opts, out);
    }
    sd_name_pattern_free(pattern);
    sd_report_data_free(data);
    sd_diff_free(diff);
    sd_profile_free(profile);
    job_view_free(&jv);
    for (size_t i = 0; frags && i < n; i++) sd_frag_free(frags[i]);
    free(frags);
    cli_free_all(snaps, n);
    return status;
}
