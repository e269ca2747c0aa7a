/* load.c - opening inputs for the commands: one error line, or the warnings, then on. */
#include <stdlib.h>

#include "commands.h"
#include "msg.h"

static void print_warnings(const sd_snapshot *s)
{
    for (size_t i = 0; i < sd_snapshot_warning_count(s); i++)
        msg_warn("%s: %s", sd_snapshot_source(s), sd_snapshot_warning(s, i));
}

static sd_input *open_input(const char *spec, const struct cli_opts *opts)
{
    sd_error err;
    sd_error_clear(&err);
    sd_input_options io = {.max_memory = opts->max_memory};
    sd_input *in = sd_input_open(spec, &io, &err);
    if (!in) msg_sd_error(&err);
    return in;
}

static sd_snapshot *load_member(sd_input *in, size_t i, const struct cli_opts *opts)
{
    sd_error err;
    sd_error_clear(&err);
    sd_load_options lo = {.max_memory = opts->max_memory};
    sd_snapshot *s = sd_snapshot_load_input(in, i, &lo, &err);
    if (!s) msg_sd_error(&err);
    else print_warnings(s);
    return s;
}

sd_snapshot *cli_load_one(const char *spec, const struct cli_opts *opts)
{
    sd_input *in = open_input(spec, opts);
    if (!in) return NULL;
    sd_snapshot *s = NULL;
    if (sd_input_count(in) != 1)
        msg_error("%s: holds %zu snapshots (%s, ...); pick one as %s:MEMBER", spec,
                  sd_input_count(in), sd_input_name(in, 0), spec);
    else
        s = load_member(in, 0, opts);
    sd_input_free(in);
    return s;
}

int cli_load_all(const char **specs, int n_specs, const struct cli_opts *opts,
                 sd_snapshot ***out, size_t *n_out)
{
    sd_snapshot **all = NULL;
    size_t n = 0;
    *out = NULL;
    *n_out = 0;
    for (int k = 0; k < n_specs; k++) {
        sd_input *in = open_input(specs[k], opts);
        if (!in) goto fail;
        for (size_t i = 0; i < sd_input_count(in); i++) {
            sd_snapshot **grown = realloc(all, (n + 1) * sizeof *grown);
            sd_snapshot *s = grown ? load_member(in, i, opts) : NULL;
            if (grown) all = grown;
            if (!s) {
                if (!grown) msg_error("out of memory");
                sd_input_free(in);
                goto fail;
            }
            all[n++] = s;
        }
        sd_input_free(in);
    }
    *out = all;
    *n_out = n;
    return 0;
fail:
    cli_free_all(all, n);
    return -1;
}

void cli_free_all(sd_snapshot **snaps, size_t n)
{
    for (size_t i = 0; i < n; i++) sd_snapshot_free(snaps[i]);
    free(snaps);
}

static const char *esc(const struct cli_opts *o, const char *code) { return o->color ? code : ""; }
const char *clr_bold(const struct cli_opts *o) { return esc(o, "\033[1m"); }
const char *clr_red(const struct cli_opts *o) { return esc(o, "\033[31m"); }
const char *clr_green(const struct cli_opts *o) { return esc(o, "\033[32m"); }
const char *clr_yellow(const struct cli_opts *o) { return esc(o, "\033[33m"); }
const char *clr_dim(const struct cli_opts *o) { return esc(o, "\033[2m"); }
const char *clr_reset(const struct cli_opts *o) { return esc(o, "\033[0m"); }
