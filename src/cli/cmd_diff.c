/* cmd_diff.c - `snapdiff OLD NEW`: what grew, grouped by where it was allocated.
 *
 * load (in parallel, load.h) -> analyse (sd_diff, the --max-growth gate) -> render (text,
 * JSON, folded or pprof, snapdiff/render_diff.h) -> exit status. Every figure and verdict
 * comes from the library; this file maps options and words the gate's verdict.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "msg.h"
#include "snapdiff/render_diff.h"
#include "snapdiff/units.h"
#include "snapdiff/gate.h"

/* Write the report to `out`. A failed write on the command's stream is left to the
 * caller's check of it. */
static int render(FILE *out, const struct cli_opts *o, const sd_diff *d)
{
    sd_error err;
    sd_error_clear(&err);
    sd_status st;
    if (o->format == FORMAT_FOLDED || o->format == FORMAT_PPROF) {
        bool folded = o->format == FORMAT_FOLDED;
        sd_stacks *stacks = sd_stacks_create(sd_diff_profile(d), 0, 1,
                                             folded ? SD_STACKS_FOLDED : SD_STACKS_FRAMES,
                                             o->max_memory, &err);
        st = !stacks ? err.code
             : folded ? sd_render_diff_folded(out, stacks, &err)
                      : sd_render_diff_pprof(out, stacks, o->max_memory, &err);
        sd_stacks_free(stacks);
        if (st != SD_OK && st != SD_EIO) msg_sd_error(&err);
    } else if (o->format == FORMAT_JSON) {
        st = sd_render_diff_json(out, d);
        if (st == SD_ENOMEM) msg_error("out of memory while writing JSON");
    } else {
        sd_diff_text_options to = {.render = {.color = o->color}, .top = (size_t)o->top};
        st = sd_render_diff_text(out, d, &to);
    }
    return st == SD_OK || st == SD_EIO ? EXIT_OK : EXIT_TROUBLE;
}

/* What makes the comparison doubtful, on stderr (--quiet silences it; JSON always has it). */
static void print_warnings(const sd_diff *d)
{
    for (size_t i = 0; i < sd_diff_warning_count(d); i++) {
        char msg[512];
        sd_diff_warning_text(sd_diff_warning_at(d, i), msg, sizeof msg);
        msg_warn("%s [%s]", msg, sd_diff_warning_name(sd_diff_warning_at(d, i)->code));
    }
}

/* -o FILE, else `out`; the report is written, then the file closed and checked. */
static int render_to_output(const struct cli_opts *o, FILE *out, const sd_diff *d)
{
    if (!o->output) return render(out, o, d);
    FILE *f = fopen(o->output, "wb");
    if (!f) {
        msg_error("%s: cannot write: %s", o->output, strerror(errno));
        return EXIT_TROUBLE;
    }
    int status = render(f, o, d);
    if (fclose(f) != 0 && status == EXIT_OK) {
        msg_error("%s: error writing: %s", o->output, strerror(errno));
        status = EXIT_TROUBLE;
    }
    return status;
}

/* --max-growth: the CI gate. The report is written either way; the verdict goes to
 * stderr and into the exit status. */
static int apply_gate(const struct cli_opts *o, const sd_diff *d, int status)
{
    if (status != EXIT_OK || !o->has_max_growth) return status;
    sd_gate gate;
    if (cli_diff_gate(o, d, &gate) != SD_OK) {
        msg_error("out of memory");
        return EXIT_TROUBLE;
    }
    for (size_t i = 0; i < gate.n_results; i++) {
        const sd_limit_result *r = &gate.results[i];
        char grew[32], lim[32];
        sd_format_delta(r->measured, grew, sizeof grew);
        sd_format_bytes(r->limit, lim, sizeof lim);
        if (!r->pass)
            msg_error("check failed: allocated memory grew by %s, more than --%s %s", grew,
                      r->name, lim);
        else
            msg_note("check passed: allocated memory grew by %s (limit %s)", grew, lim);
    }
    if (!gate.pass) status = EXIT_CHECK_FAILED;
    sd_gate_release(&gate);
    return status;
}

int cmd_diff(const struct cli_opts *opts, FILE *out)
{
    bool one = opts->n_files == 1;
    if (opts->n_files != 2 &&
        !(one && (opts->format == FORMAT_FOLDED || opts->format == FORMAT_PPROF))) {
        msg_error("diff needs two snapshots, OLD and NEW (one is enough with --format folded "
                  "or pprof)");
        return EXIT_TROUBLE;
    }
    if (opts->format == FORMAT_PPROF && !opts->output && isatty(fileno(out))) {
        msg_error("--format pprof writes a binary profile: give -o FILE or redirect stdout");
        return EXIT_TROUBLE;
    }
    /* snaps[0] OLD (none with one file: an empty baseline), snaps[1] NEW */
    sd_snapshot *snaps[2] = {NULL, NULL};
    if (!one) {   /* archives or directories of ranks: rank by rank (cmd_diff_ranks.c) */
        int st = cmd_diff_ranks(opts, out);
        if (st != CMD_NOT_RANKS) return st;
    }
    struct cli_load_options lo = {.shape = CLI_LOAD_ONE, .specs = opts->files,
                                  .n = (size_t)opts->n_files, .one = snaps + one};
    if (cli_load(opts, &lo) != 0)
        return EXIT_TROUBLE;
    sd_diff_options dopts;
    cli_diff_options(opts, &dopts);
    sd_error err;
    sd_error_clear(&err);
    sd_diff *d = sd_diff_create(snaps[0], snaps[1], &dopts, &err);
    int status = EXIT_TROUBLE;
    if (!d) {
        msg_sd_error(&err);
    } else {
        if (!one) print_warnings(d);
        status = apply_gate(opts, d, render_to_output(opts, out, d));
    }
    sd_diff_free(d);
    sd_snapshot_free(snaps[1]);
    sd_snapshot_free(snaps[0]);
    return status;
}
