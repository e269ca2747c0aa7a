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

/* Shared by the commands (load.c): open `spec`, load member(s), print the one error line
 * or the warnings. cli_load_one requires a single member. NULL means: message printed,
 * exit 2. */
sd_snapshot *cli_load_one(const char *spec, const struct cli_opts *opts);
/* Load every member of every spec; *out is a malloc'd array of snapshots. */
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
