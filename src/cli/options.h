/* options.h - the one option table of the CLI, and the parsed result.
 *
 * --help, the man page and the completions all follow this table; tests/check_docs_sync.sh
 * fails when any of them drifts from `snapdiff --help`.
 */
#ifndef SNAPDIFF_CLI_OPTIONS_H
#define SNAPDIFF_CLI_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

#include "snapdiff/attrib.h"

enum cli_command { CMD_NONE, CMD_DIFF, CMD_STATS, CMD_DUMP, CMD_FRAG };

/* Bit per command an option applies to. */
enum { FOR_DIFF = 1 << CMD_DIFF, FOR_STATS = 1 << CMD_STATS, FOR_DUMP = 1 << CMD_DUMP,
       FOR_FRAG = 1 << CMD_FRAG, FOR_ALL = FOR_DIFF | FOR_STATS | FOR_DUMP | FOR_FRAG };

enum cli_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_FOLDED, FORMAT_PPROF };

#define CLI_MAX_PATTERNS 32

struct cli_opts {
    enum cli_command command;
    const char **files;          /* borrowed from argv */
    int n_files;

    enum cli_format format;      /* --json, --format */
    bool color;                  /* resolved: terminal, no NO_COLOR, no --no-color */
    uint64_t max_memory;         /* --max-memory, default a fraction of physical memory */
    bool quiet;                  /* -q: no notes/warnings on stderr */
    unsigned jobs;               /* --jobs N: files loaded at once, 0 = one per core */
    const char *output;          /* -o FILE: write the result there instead of stdout */

    /* diff */
    sd_group_by group_by;        /* --group-by (names: sd_group_by_name) */
    int depth;                   /* --depth N */
    const char *hide[CLI_MAX_PATTERNS]; int n_hide;    /* --hide REGEX */
    const char *show[CLI_MAX_PATTERNS]; int n_show;    /* --show REGEX */
    const char *focus[CLI_MAX_PATTERNS]; int n_focus;  /* --focus REGEX */
    int top;                     /* --top N, default 20 */
    uint64_t steps;              /* --steps N, 0 = not given */
    uint64_t capacity;           /* --capacity SIZE, 0 = not given */
    bool has_max_growth;         /* --max-growth SIZE: the CI gate */
    uint64_t max_growth;

    /* frag */
    double gap_threshold;        /* --gap-threshold PCT (percent of reserved), default 30 */
    double index_threshold;      /* --index-threshold X (0..1), default 0.5 */
    bool map;                    /* --map */
    const char *svg;             /* --svg FILE */
};

enum opt_result { OPT_OK, OPT_HELP, OPT_VERSION, OPT_ERROR };

/* Parse argv into opts. On OPT_ERROR, errbuf holds one line for the user. Never exits. */
enum opt_result cli_parse(int argc, char **argv, struct cli_opts *opts, char *errbuf,
                          size_t errlen);
/* Write the generated help: the global one for CMD_NONE, else that command's (its usage,
 * the options that apply to it, an example). After OPT_HELP, opts->command says which. */
void cli_print_help(FILE *out, enum cli_command cmd);

#endif
