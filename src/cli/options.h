/* options.h - the one option table of the CLI, and the parsed result.
 *
 * --help is printed from this table; the man page's OPTIONS and the completions are
 * written from it by snapdiff-gendocs (src/cli/gendocs/, `cmake --build build --target
 * docs`; ctest docs_generated fails when they are stale); tests/docs/check_docs_sync.sh fails
 * when any of them, or docs/reference.md, drifts from `snapdiff --help`.
 */
#ifndef SNAPDIFF_CLI_OPTIONS_H
#define SNAPDIFF_CLI_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

#include "snapdiff/attrib.h"
#include "snapdiff/gate.h"

/* CMD_DIFF, CMD_STATS, ...: one per row of the registry (commands.def), in its order. */
enum cli_command {
    CMD_NONE,
#define CLI_COMMAND(ID, ...) CMD_##ID,
#include "commands.def"
#undef CLI_COMMAND
    CMD_END
};

/* Bit per command an option applies to (FOR_DIFF, ...); FOR_ALL: every command. */
enum {
#define CLI_COMMAND(ID, ...) FOR_##ID = 1u << CMD_##ID,
#include "commands.def"
#undef CLI_COMMAND
    FOR_ALL = (1u << CMD_END) - 2u
};

/* A registry row's tool_flags (commands.def). */
enum { TOOL_WRITES = 1u << 0, TOOL_ONE_INPUT = 1u << 1 };

/* One row of the registry (commands.def), for the dispatchers and the docs. */
struct cli_command_info {
    enum cli_command cmd;
    const char *name;
    const char *usage;          /* "OLD NEW", "FILE...", "" */
    unsigned min_files;
    unsigned max_files;         /* 0: any number */
    const char *help;           /* one line, as --help shows it */
    const char *example;        /* for `snapdiff CMD --help` */
    unsigned tool;              /* place in the MCP tools/list (1: first); 0: not a tool */
    unsigned tool_flags;        /* TOOL_* */
    const char *schemas;        /* its JSON documents' "schema" values, space-separated */
};
/* The row of `cmd`; NULL for CMD_NONE. */
const struct cli_command_info *cli_command_info(enum cli_command cmd);

enum cli_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_FOLDED, FORMAT_PPROF, FORMAT_GITHUB,
                  FORMAT_JUNIT };

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

    /* how the inputs are read, for several commands */
    enum cli_as { AS_GUESS, AS_SERIES, AS_RANKS } as;   /* --as-series, --as-ranks */
    const char *name_pattern;    /* --name-pattern REGEX: rank and step from the paths */
    bool strict;                 /* --strict: a folder's unreadable snapshot is an error */

    /* diff (its grouping options serve the other views too) */
    sd_group_by group_by;        /* --group-by (names: sd_group_by_name) */
    int depth;                   /* --depth N */
    const char *hide[CLI_MAX_PATTERNS]; int n_hide;    /* --hide REGEX */
    const char *show[CLI_MAX_PATTERNS]; int n_show;    /* --show REGEX */
    const char *focus[CLI_MAX_PATTERNS]; int n_focus;  /* --focus REGEX */
    int top;                     /* --top N, default 20 */
    const char *steps_arg;       /* --steps as given: diff N, series N1,N2,... */
    uint64_t steps;              /* --steps N, 0 = not given */
    uint64_t capacity;           /* --capacity SIZE, 0 = not given */
    bool has_max_growth;         /* --max-growth SIZE: the CI gate */
    uint64_t max_growth;
    int at;                      /* --at end|peak: sd_diff_at, 0 = decide */
    const char *at_arg;          /* --at as given: diff end|peak, plan a size (after parsing) */
    const char *shard_arg;       /* --shard as given: summarize I/N|auto, plan N ranks */

    /* check (--max-growth also sets its row) */
    sd_limits *limits;           /* --max-growth, --max-growth-pct, ... (owned: cli_opts_release) */
    const char *config;          /* --config FILE: more limits, the command line wins */
    const char *repo_root;       /* --repo-root DIR: where --format github looks for sites */

    /* frag (also report, which shows its fragmentation) */
    struct {
        double gap_threshold;    /* --gap-threshold PCT (percent of reserved), default 30 */
        double index_threshold;  /* --index-threshold X (0..1), default 0.5 */
        bool map;                /* --map */
        const char *svg;         /* --svg FILE */
    } frag;

    /* trace */
    struct {
        const char *since, *until;   /* --since/--until: #N, T (time_us) or +US (cmd_trace) */
    } trace;

    /* series (also: the diff's grouping options, --top, --capacity, --jobs, --steps) */
    struct {
        const uint64_t *step_list;   /* --steps N1,N2,...: one per snapshot */
        int n_step_list;
        uint64_t steps_between;      /* --steps-between N, 0 = not given */
        enum cli_sort { SORT_GIVEN, SORT_NAME, SORT_TIME } sort;   /* --sort name|time */
        bool has_min_slope;          /* --min-slope SIZE (bytes per snapshot) */
        uint64_t min_slope;
        double confidence;           /* --confidence P (0..1); < 0 = not given */
        bool ascii;                  /* --ascii: sparklines in ASCII */
    } series;

    /* replay (also --capacity; report's what-ifs) */
    struct {
        const char *alloc_conf[CLI_MAX_PATTERNS]; int n_alloc_conf;   /* --alloc-conf CONF */
        double memory_fraction;                    /* --memory-fraction F; 0 = not given */
        unsigned torch_version;                    /* --torch VERSION: 209 for 2.9; 0 = newest */
    } replay;

    /* curve (also: --capacity, --max-per-step, --max-growth-pct, --config; report reads
     * logs as curve does) */
    struct {
        bool has_baseline_step;      /* --baseline-step N */
        uint64_t baseline_step;
        double threshold;            /* --threshold F (0..1]; 0 = not given */
        bool has_max_fraction;       /* --max-fraction F */
        double max_fraction;
        uint64_t horizon;            /* --horizon N, 0 = not given */
        const char *log_format;      /* --log-format text|jsonl|csv|nvidia-smi */
        bool format_list;            /* --format-list: the formats curve reads, then exit */
        const char *pattern;         /* --pattern REGEX with named groups */
    } curve;

    /* summarize */
    struct {
        const char *shard;       /* --shard I/N|auto|auto/N (syntax checked; shard.h) */
        bool force;              /* --force: redo summaries newer than their input */
    } summarize;

    /* plan (also --capacity, --at, --shard) */
    struct {
        const double *sizes; int n_sizes;   /* --size X1,X2,...: one per recording */
        bool has_at;
        double at;                   /* --at SIZE */
        bool max;                    /* --max: the largest size that fits --capacity */
        const char *check;           /* --check FILE: a real recording at the target */
        double batch_scale;          /* --batch-scale K; 0 = not given */
        unsigned shard;              /* --shard N ranks; 0 = not given */
        unsigned zero;               /* --zero 1|2|3; 0 = not given */
    } plan;

    /* mcp */
    struct {
        const char *roots[CLI_MAX_PATTERNS]; int n_roots;   /* --root DIR (repeatable) */
    } mcp;
    bool has_max_memory;         /* --max-memory was given (mcp: the cap of every call) */
};

enum opt_result { OPT_OK, OPT_HELP, OPT_VERSION, OPT_ERROR };

/* Parse argv into opts. On OPT_ERROR, errbuf holds one line for the user. Never exits.
 * Whatever it returns, cli_opts_release frees what opts holds. */
enum opt_result cli_parse(int argc, char **argv, struct cli_opts *opts, char *errbuf,
                          size_t errlen);
void cli_opts_release(struct cli_opts *opts);
/* Write the generated help: the global one for CMD_NONE, else that command's (its usage,
 * the options that apply to it, an example). After OPT_HELP, opts->command says which. */
void cli_print_help(FILE *out, enum cli_command cmd);
/* "diff", "stats", ...: a command's name, for messages. */
const char *cli_command_name(enum cli_command cmd);
/* The command of that name; false when there is none. */
bool cli_command_find(const char *name, enum cli_command *out);
/* A command's one-line description and its usage ("OLD NEW"), as --help shows them. */
const char *cli_command_help(enum cli_command cmd);
const char *cli_command_usage(enum cli_command cmd);

/* One row of the option table, for the mcp server's tool schemas (cmd_mcp.c): the same
 * names, arguments and help as --help. */
struct cli_option_info {
    const char *long_name;
    char short_name;         /* 0: none */
    const char *arg;         /* NULL: a flag; else the argument's name (N, SIZE, ...) */
    unsigned commands;       /* FOR_* bits */
    bool repeatable;         /* --hide, --show, --focus, --alloc-conf, --root */
    const char *help;
};
size_t cli_option_count(void);
void cli_option_at(size_t i, struct cli_option_info *out);

/* For the generated docs (src/cli/gendocs/): the man page's OPTIONS and the completions. */
/* The commands in the order --help lists them (not the enum's). */
size_t cli_command_count(void);
enum cli_command cli_command_at(size_t i);
/* Option i's help as `snapdiff CMD --help` shows it (the parts about other commands left
 * out); CMD_NONE: the whole help. */
void cli_option_help_for(size_t i, enum cli_command cmd, char *buf, size_t size);
/* The words option i's value may be under command cmd ("text json folded pprof"), for the
 * completions; NULL when it takes no value or any value (a size, a number, a path). */
const char *cli_option_values(size_t i, enum cli_command cmd);

#endif
