/* commands.h - one function per subcommand, each in cmd_<name>.c.
 * Each returns the process exit status: 0 success, 1 a check failed (gate), 2 error. */
#ifndef SNAPDIFF_CLI_COMMANDS_H
#define SNAPDIFF_CLI_COMMANDS_H

#include <stdio.h>

#include "options.h"
#include "snapdiff/curve.h"
#include "snapdiff/diff.h"
#include "snapdiff/frag.h"
#include "snapdiff/gate.h"
#include "snapdiff/ranks.h"
#include "snapdiff/snapshot.h"

enum { EXIT_OK = 0, EXIT_CHECK_FAILED = 1, EXIT_TROUBLE = 2 };

/* A command's run function: the results go to `out` (stdout, or the MCP server's buffer
 * for the call), messages to stderr through msg.h. Each is cmd_<name> in cmd_<name>.c,
 * one per row of the registry (commands.def). */
typedef int cli_run_fn(const struct cli_opts *opts, FILE *out);
#define CLI_COMMAND(ID, name, ...) cli_run_fn cmd_##name;
#include "commands.def"
#undef CLI_COMMAND
/* The run function of `cmd` (commands.c); NULL for CMD_NONE. */
cli_run_fn *cli_command_run(enum cli_command cmd);

/* snapdiff OLD NEW when either holds several snapshots, or does not open (an exit
 * status), else CMD_NOT_RANKS: one snapshot on each side. */
enum { CMD_NOT_RANKS = -1 };
int cmd_diff_ranks(const struct cli_opts *opts, FILE *out);

/* Loading for every command (load.c), through the library's parallel loader (load.h,
 * --jobs): one function, the shape of what comes back chosen by the options. It prints the
 * warnings, the files a directory skipped, or the one error line; -1 means: printed,
 * exit 2. */
typedef sd_status (*cli_each_fn)(void *ctx, size_t input, size_t member,
                                 const sd_snapshot *snap, sd_error *err);
typedef sd_status (*cli_opened_fn)(void *ctx, size_t input, const sd_input *in, sd_error *err);
enum cli_load_shape {
    /* One snapshot per spec (a spec holding several is an error), into one[0..n); every
     * spec's messages are printed. */
    CLI_LOAD_ONE,
    /* Every member of every spec, as if loaded one after another (messages up to the
     * first input that failed): *all is a malloc'd array of *n_all snapshots. */
    CLI_LOAD_FLAT,
    /* Every member of each spec, kept apart: members[i] (malloc'd, free with
     * cli_free_all) holds counts[i] snapshots of specs[i]. All or nothing. */
    CLI_LOAD_MEMBERS,
    /* Every member of every spec handed to `each` in a loading thread as soon as it is
     * built, then freed (load.h's `each`); `opened`, when set, is called in this thread
     * for each input once it is open and before any of its members loads (to plan from
     * the member names). Messages afterwards, as CLI_LOAD_FLAT prints them. */
    CLI_LOAD_STREAM,
};
struct cli_load_options {
    enum cli_load_shape shape;
    const char *const *specs;
    size_t n;
    sd_snapshot **one;                    /* CLI_LOAD_ONE */
    sd_snapshot ***all;                   /* CLI_LOAD_FLAT */
    size_t *n_all;
    sd_snapshot ***members;               /* CLI_LOAD_MEMBERS */
    size_t *counts;
    cli_opened_fn opened;                 /* CLI_LOAD_STREAM */
    cli_each_fn each;
    void *ctx;
    const bool *in_folder;                /* CLI_LOAD_STREAM, optional: per spec, a file
                                           * of a folder (sd_loader_options) */
    struct cli_left_out *left_out;        /* CLI_LOAD_MEMBERS, CLI_LOAD_STREAM, optional:
                                           * the members left out as unreadable */
};

/* The names of the snapshots of a folder that did not read and were left out (warned);
 * free with cli_left_out_free. */
struct cli_left_out {
    char **names;
    size_t n;
};
bool cli_left_out_has(const struct cli_left_out *l, const char *name);
void cli_left_out_free(struct cli_left_out *l);
int cli_load(const struct cli_opts *opts, const struct cli_load_options *lo);
void cli_free_all(sd_snapshot **snaps, size_t n);

/* The attribution options (-g, -d, --hide, --show, --focus) as the library takes them;
 * the diff's add --steps, --capacity and --max-memory. The strings stay borrowed. */
void cli_attrib_options(const struct cli_opts *o, sd_attrib_options *a);
void cli_diff_options(const struct cli_opts *o, sd_diff_options *d);
/* --as-ranks, --as-series as the library takes them (ranks.h, sd_names_view_of). */
sd_read_as cli_read_as(const struct cli_opts *o);
/* diff's --max-growth (o->has_max_growth) judged on d: one limit, as check has it. */
sd_status cli_diff_gate(const struct cli_opts *o, const sd_diff *d, sd_gate *out);

/* --config FILE, read once for check and curve (config.c): at most 64 KiB of text, handed
 * to `parse` (the library's parser, with the command's limits in ctx). 0, or -1 when the
 * file cannot be read or parsed (printed). */
typedef sd_status (*cli_config_parser)(const char *text, size_t len, const char *path,
                                       void *ctx, sd_error *err);
int cli_read_config(const char *path, cli_config_parser parse, void *ctx);

/* Every --alloc-conf parses (as --torch reads it), checked before any file is read, so
 * that a typo is a usage error (replay, report). 0, or -1 with the error printed. */
int cli_check_alloc_confs(const struct cli_opts *o);

/* How curve and report read training logs (cmd_curve.c): --log-format, --baseline-step,
 * --capacity, --threshold (no limits: curve adds its own); and the one warning per file
 * with lines that could not be read. */
void cli_curve_options(const struct cli_opts *o, sd_curve_options *co);
void cli_curve_warn_bad_lines(const sd_curve *c);

/* OLD's and NEW's members paired (pairs.c, ranks.h): by rank number, else by name. */
struct cli_pairs {
    const char **names[2];      /* each member's name inside its input */
    sd_rank_pair *pairs;
    size_t n;
    bool many;                  /* either input holds several members */
    char (*labels)[80];         /* per pair: "rank 2", or the member's name */
};
/* Pair the members of specs[0] and specs[1] from their source names (sources[s][i], as
 * sd_snapshot_source or sd_input_name give them; borrowed: they must outlive the pairs).
 * -1: printed (out of memory, or several OLD members against one NEW snapshot:
 * ambiguous). */
int cli_pair_names(const char *const *specs, const char *const *const *sources,
                   const size_t *count, struct cli_pairs *out);
const char *cli_pair_name(const struct cli_pairs *p, size_t i);  /* NEW's name, else OLD's */
void cli_pairs_free(struct cli_pairs *p);

/* The oom events of `snap` as frag analyses them (cmd_frag.c), for the views that show the
 * oom first (top, trace): *out is NULL when the snapshot records no oom entry (no analysis
 * is run, so a file without one costs nothing). EXIT_TROUBLE: printed. */
int cli_oom_analysis(const struct cli_opts *o, const sd_snapshot *snap, sd_frag **out);

/* The spread across several snapshots (min, median, max; the one furthest from the
 * median), after the members of stats and frag. Nothing for fewer than two. */
void cli_print_spread(FILE *out, sd_snapshot *const *snaps, size_t n, bool color);

#endif
