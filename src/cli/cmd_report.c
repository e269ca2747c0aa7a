/* cmd_report.c - `snapdiff report FILE... -o report.html`: one self-contained HTML page.
 *
 * load -> analyse (a frag per snapshot; two files: the diff; one or N files: a profile;
 * the ranks of one job, as `series` guesses them or --as-ranks says: side by side;
 * training logs: their curves, curve.h) -> render (render/report.c: the page draws from
 * the same JSON the other commands write) -> exit status. HTML is not written to a
 * terminal: -o FILE or a redirect.
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
#include "snapdiff/summary.h"

/* A frag per snapshot; on failure the error is printed and -1 returned. */
static int analyse_frags(sd_snapshot **snaps, size_t n, const struct cli_opts *o, sd_frag **frags)
{
    sd_error err;
    sd_error_clear(&err);
    sd_frag_options fo = {o->gap_threshold, o->index_threshold, o->max_memory, false};
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
        memset(&d, 0, sizeof d);
        cli_attrib_options(o, &d.attrib);
        d.max_memory = o->max_memory;
        *diff = sd_diff_create(snaps[0], snaps[1], &d, &err);
    } else {
        sd_profile_options po;
        memset(&po, 0, sizeof po);
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

/* The snapshots are the ranks of one job, as `series` decides it (sd_ranks_names_are_ranks,
 * --as-ranks, --as-series); two files stay a diff unless --as-ranks says so. */
static bool read_as_ranks(const struct cli_opts *o, sd_snapshot **snaps, size_t n)
{
    if (n < 2 || o->as == AS_SERIES) return false;
    if (o->as == AS_RANKS) return true;
    if (n < 3) return false;
    const char **names = malloc(n * sizeof *names);
    if (!names) return false;
    for (size_t i = 0; i < n; i++) names[i] = sd_snapshot_source(snaps[i]);
    bool ranks = sd_ranks_names_are_ranks(names, n);
    free(names);
    return ranks;
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
} report_job;

static int write_report(FILE *out, const report_job *j, const struct cli_opts *o)
{
    sd_report_input in = {SD_REPORT_INPUT_VERSION, (const sd_snapshot *const *)j->snaps, j->n,
                           (const sd_frag *const *)j->frags, j->profile, j->diff, o->max_memory,
                           j->ranks, j->curve};
    sd_error err;
    sd_error_clear(&err);
    sd_status st = sd_render_report(out, &in, &err);
    if (st == SD_OK || st == SD_EIO) return st == SD_OK ? EXIT_OK : EXIT_TROUBLE;
    msg_sd_error(&err);
    return EXIT_TROUBLE;
}

static int render_to_output(const report_job *j, const struct cli_opts *o)
{
    if (!o->output) return write_report(stdout, j, o);
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
    if (o->log_format) return 1;
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
static int report_curves(const struct cli_opts *o)
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
    report_job j = {NULL, sd_curve_file_count(c), NULL, NULL, NULL, false, c};
    int status = render_to_output(&j, o);
    sd_curve_free(c);
    return status;
}

int cmd_report(const struct cli_opts *opts)
{
    if (!opts->output && isatty(STDOUT_FILENO)) {
        msg_error("report writes an HTML page: give -o FILE (e.g. -o report.html) or "
                  "redirect stdout");
        return EXIT_TROUBLE;
    }
    int logs = inputs_are_logs(opts);
    if (logs != 0) return logs > 0 ? report_curves(opts) : EXIT_TROUBLE;
    sd_snapshot **snaps;
    size_t n;
    struct cli_load_options lo = {.shape = CLI_LOAD_FLAT, .specs = opts->files,
                                  .n = (size_t)opts->n_files, .all = &snaps, .n_all = &n};
    if (cli_load(opts, &lo) != 0) return EXIT_TROUBLE;
    int status = EXIT_TROUBLE;
    sd_frag **frags = calloc(n ? n : 1, sizeof *frags);
    sd_diff *diff = NULL;
    sd_profile *profile = NULL;
    if (!frags) msg_error("out of memory");
    else if (n == 0) msg_error("report: no snapshot in the input");
    else if (read_as_ranks(opts, snaps, n)) {
        qsort(snaps, n, sizeof *snaps, by_rank);   /* as `series` lists them */
        if (analyse_frags(snaps, n, opts, frags) == 0) {
            report_job j = {snaps, n, frags, NULL, NULL, true, NULL};
            status = render_to_output(&j, opts);
        }
    } else if (analyse(snaps, n, opts, frags, &diff, &profile) == 0) {
        report_job j = {snaps, n, frags, diff, profile, false, NULL};
        status = render_to_output(&j, opts);
    }
    sd_diff_free(diff);
    sd_profile_free(profile);
    for (size_t i = 0; frags && i < n; i++) sd_frag_free(frags[i]);
    free(frags);
    cli_free_all(snaps, n);
    return status;
}
