/* commands.h - one function per subcommand, each in cmd_<name>.c.
 * Each returns the process exit status: 0 success, 1 a check failed (gate), 2 error. */
#ifndef SNAPDIFF_CLI_COMMANDS_H
#define SNAPDIFF_CLI_COMMANDS_H

#include "options.h"
#include "snapdiff/snapshot.h"

enum { EXIT_OK = 0, EXIT_CHECK_FAILED = 1, EXIT_TROUBLE = 2 };

int cmd_diff(const struct cli_opts *opts);
int cmd_stats(const struct cli_opts *opts);
int cmd_dump(const struct cli_opts *opts);
int cmd_frag(const struct cli_opts *opts);
int cmd_report(const struct cli_opts *opts);

/* Shared by the commands (load.c), both through the library's parallel loader (load.h,
 * --jobs). They print the warnings, or the one error line; -1 means: printed, exit 2.
 * cli_load_each: one snapshot per spec (a spec holding several is an error), into
 * out[0..n); every spec's messages are printed. */
int cli_load_each(const char *const *specs, size_t n, const struct cli_opts *opts,
                  sd_snapshot **out);
/* Every member of every spec, as if loaded one after another (messages up to the first
 * input that failed); *out is a malloc'd array of snapshots. */
int cli_load_all(const char **specs, int n_specs, const struct cli_opts *opts,
                 sd_snapshot ***out, size_t *n_out);
void cli_free_all(sd_snapshot **snaps, size_t n);

/* Colour helpers: return "" when colour is off. */
const char *clr_bold(const struct cli_opts *o);
const char *clr_red(const struct cli_opts *o);
const char *clr_green(const struct cli_opts *o);
const char *clr_yellow(const struct cli_opts *o);
const char *clr_dim(const struct cli_opts *o);
const char *clr_reset(const struct cli_opts *o);

#endif
