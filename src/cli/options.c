/* options.c - the one option table, the parser, and --help generated from both.
 *
 * Adding an option: add a row here and a case in apply_option() (and a row in
 * option_values when its value is one of a few words), then run `cmake --build build
 * --target docs`: snapdiff-gendocs (src/cli/gendocs/) writes the man page's OPTIONS and
 * the three completion scripts from this table. docs/reference.md is by hand; the
 * docs-sync test fails until it names the option too.
 */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "shard.h"
#include "snapdiff/curve.h"
#include "snapdiff/replay.h"
#include "snapdiff/snapdiff.h"
#include "snapdiff/units.h"

enum opt_id {
    O_HELP, O_VERSION, O_JSON, O_FORMAT, O_NO_COLOR, O_COLOR, O_MAX_MEMORY, O_QUIET,
    O_GROUP_BY, O_DEPTH, O_HIDE, O_SHOW, O_FOCUS, O_TOP, O_STEPS, O_CAPACITY, O_MAX_GROWTH,
    O_GAP_THRESHOLD, O_INDEX_THRESHOLD, O_MAP, O_SVG, O_JOBS, O_OUTPUT,
    O_SINCE, O_UNTIL,
    O_SORT, O_STEPS_BETWEEN, O_MIN_SLOPE, O_CONFIDENCE, O_ASCII, O_AS_SERIES, O_AS_RANKS,
    O_LIMIT, O_CONFIG, O_REPO_ROOT, O_ALLOC_CONF, O_MEMORY_FRACTION, O_TORCH,
    O_BASELINE_STEP, O_THRESHOLD, O_MAX_FRACTION, O_HORIZON, O_LOG_FORMAT, O_AT,
    O_SHARD, O_FORCE, O_ROOT, O_FORMAT_LIST, O_PATTERN, O_NAME_PATTERN, O_STRICT,
    O_SIZE, O_MAX, O_CHECK, O_BATCH_SCALE, O_ZERO,
};

struct opt_def {
    const char *long_name;
    char short_name;      /* 0 = none */
    const char *arg;      /* NULL = flag; else the argument's name in --help */
    unsigned commands;    /* FOR_* bits */
    enum opt_id id;
    const char *help;
};

static const struct opt_def options[] = {
    {"help", 'h', NULL, FOR_ALL, O_HELP, "show this help and exit"},
    {"version", 'V', NULL, FOR_ALL, O_VERSION, "show the version and exit"},
    {"json", 'j', NULL, FOR_DIFF | FOR_TOP | FOR_STATS | FOR_FRAG | FOR_TRACE | FOR_SERIES | FOR_CHECK | FOR_REPLAY | FOR_CURVE | FOR_PLAN, O_JSON,
     "write JSON (documented, versioned schema) instead of text"},
    {"format", 'f', "FMT", FOR_DIFF | FOR_CHECK | FOR_TOP | FOR_CURVE, O_FORMAT,
     "output format: text, json, folded (collapsed stacks for flame graphs) or pprof "
     "(gzipped profile.proto for go tool pprof; needs -o FILE or a redirect); "
     "check: text, json, github or junit; curve: text, json or github"},
    {"output", 'o', "FILE", FOR_DIFF | FOR_CHECK | FOR_REPORT | FOR_SUMMARIZE, O_OUTPUT,
     "write the result to FILE instead of stdout (check: the JUnit report; report: the page; "
     "summarize: the summary, or a directory for several snapshots: an archive of ranks, several inputs, --shard)"},
    {"no-color", 0, NULL, FOR_ALL, O_NO_COLOR,
     "never colour the output (NO_COLOR is honoured too)"},
    {"color", 0, NULL, FOR_ALL, O_COLOR, "colour the output even when it is not a terminal"},
    {"max-memory", 0, "SIZE", FOR_ALL, O_MAX_MEMORY,
     "memory budget per snapshot, e.g. 8GiB (default: half of physical memory)"},
    {"quiet", 'q', NULL, FOR_ALL, O_QUIET, "do not print warnings and notes on stderr"},
    {"jobs", 0, "N", FOR_DIFF | FOR_TOP | FOR_STATS | FOR_FRAG | FOR_TRACE | FOR_SERIES | FOR_CHECK | FOR_REPORT | FOR_SUMMARIZE | FOR_REPLAY | FOR_PLAN, O_JOBS,
     "load up to N snapshots at once (default: one per CPU core)"},
    {"group-by", 'g', "KEY", FOR_DIFF | FOR_TOP | FOR_TRACE | FOR_SERIES | FOR_CHECK | FOR_REPORT, O_GROUP_BY,
     "group live blocks by site (default), leaf, stack, file, function, annotation or "
     "compile-context"},
    {"depth", 'd', "N", FOR_DIFF | FOR_TOP | FOR_TRACE | FOR_SERIES | FOR_CHECK | FOR_REPORT, O_DEPTH, "add N caller frames to the site key"},
    {"hide", 0, "REGEX", FOR_DIFF | FOR_TOP | FOR_TRACE | FOR_SERIES | FOR_CHECK | FOR_REPORT, O_HIDE,
     "treat matching frames as internal (repeatable)"},
    {"show", 0, "REGEX", FOR_DIFF | FOR_TOP | FOR_TRACE | FOR_SERIES | FOR_CHECK | FOR_REPORT, O_SHOW,
     "treat matching frames as user code, even inside a package (repeatable)"},
    {"focus", 0, "REGEX", FOR_DIFF | FOR_TOP | FOR_TRACE | FOR_SERIES | FOR_CHECK | FOR_REPORT, O_FOCUS, "only blocks with a matching frame (repeatable)"},
    {"top", 'n', "N", FOR_DIFF | FOR_TOP | FOR_TRACE | FOR_SERIES | FOR_CHECK | FOR_PLAN, O_TOP,
     "show the N largest growing groups (default 20); series, trace, top: the first N groups; "
     "plan: the N largest sites at the predicted peak"},
    {"steps", 0, "N", FOR_DIFF | FOR_SERIES | FOR_CHECK, O_STEPS,
     "training steps between the snapshots: growth per step; series: N1,N2,... one per snapshot"},
    {"capacity", 0, "SIZE", FOR_DIFF | FOR_SERIES | FOR_REPLAY | FOR_CURVE | FOR_REPORT | FOR_PLAN, O_CAPACITY,
     "device memory for the steps-until-full estimate, e.g. 80GiB, or a GPU's name "
     "(A100-40GB, A100-80GB, H100, H200, L40S, L40, A10, A6000, RTX4090, RTX3090, T4, "
     "V100-16GB, V100-32GB: the capacity torch reports for it); replay: what the "
     "allocator may reserve (default: from an oom entry)"},
    {"max-growth", 0, "SIZE", FOR_DIFF | FOR_CHECK, O_MAX_GROWTH,
     "CI gate: exit 1 when allocated memory grew by more than SIZE (0 = any growth)"},
    {"max-growth-pct", 0, "P", FOR_CHECK | FOR_CURVE, O_LIMIT,
     "fail when allocated memory grew by more than P percent of OLD's (curve: the floor vs "
     "the baseline)"},
    {"max-group-growth", 0, "SIZE", FOR_CHECK, O_LIMIT,
     "fail when any one group (site) grew by more than SIZE"},
    {"max-per-step", 0, "SIZE", FOR_CHECK | FOR_CURVE, O_LIMIT,
     "fail when allocated memory grew by more than SIZE per step (check: needs the steps "
     "given; curve: a growing floor's slope)"},
    {"max-reserved", 0, "SIZE", FOR_CHECK, O_LIMIT,
     "fail when NEW reserves more than SIZE (all devices)"},
    {"max-frag-index", 0, "F", FOR_CHECK, O_LIMIT,
     "fail when NEW's fragmentation index (0..1) is above F"},
    {"fail-on-new-site", 0, "SIZE", FOR_CHECK, O_LIMIT,
     "fail when a site absent from OLD holds more than SIZE in NEW"},
    {"max-ooms", 0, "N", FOR_CHECK, O_LIMIT,
     "fail when NEW recorded more than N out-of-memory errors (oom trace entries)"},
    {"config", 0, "FILE", FOR_CHECK | FOR_CURVE, O_CONFIG,
     "read limits from FILE ('max-growth = 256MiB' lines; the command line wins)"},
    {"repo-root", 0, "DIR", FOR_CHECK, O_REPO_ROOT,
     "--format github: name a site's file when it is in DIR (default: .)"},
    {"gap-threshold", 0, "PCT", FOR_FRAG | FOR_REPORT, O_GAP_THRESHOLD,
     "gap (reserved - allocated) in % of reserved that counts as large (default 30)"},
    {"index-threshold", 0, "X", FOR_FRAG | FOR_REPORT, O_INDEX_THRESHOLD,
     "stranded index (0..1) that counts as fragmented (default 0.5)"},
    {"map", 0, NULL, FOR_FRAG, O_MAP, "draw a map of the segments with the most free memory stranded"},
    {"svg", 0, "FILE", FOR_FRAG, O_SVG, "write the segment map and free-block histogram as SVG"},
    {"since", 0, "WHEN", FOR_TRACE, O_SINCE,
     "trace window start: #N (entry index), T (time_us) or +US (after the first entry)"},
    {"until", 0, "WHEN", FOR_TRACE, O_UNTIL,
     "trace window end (exclusive): #N, T (time_us) or +US"},
    {"sort", 0, "KEY", FOR_SERIES, O_SORT,
     "order the snapshots by name or time (the trace's last time_us); default: as given"},
    {"steps-between", 0, "N", FOR_SERIES, O_STEPS_BETWEEN,
     "training steps between consecutive snapshots: slopes per step"},
    {"min-slope", 0, "SIZE", FOR_SERIES, O_MIN_SLOPE,
     "smallest slope per snapshot that counts as growing (default 256KiB)"},
    {"confidence", 0, "P", FOR_SERIES, O_CONFIDENCE,
     "trend-test confidence (0..1) needed for growing or shrinking (default 0.99)"},
    {"ascii", 0, NULL, FOR_SERIES, O_ASCII, "draw sparklines in ASCII, not Unicode blocks"},
    {"alloc-conf", 0, "CONF", FOR_REPLAY | FOR_REPORT, O_ALLOC_CONF,
     "replay under this PYTORCH_CUDA_ALLOC_CONF too (repeatable, one config each; report: "
     "the one file's what-ifs, instead of expandable_segments:True and max_split_size_mb:512)"},
    {"memory-fraction", 0, "F", FOR_REPLAY | FOR_REPORT, O_MEMORY_FRACTION,
     "the run's torch.cuda.set_per_process_memory_fraction (0..1]: caps what the allocator "
     "may reserve at F of the capacity and lets garbage_collection_threshold act"},
    {"torch", 0, "VERSION", FOR_REPLAY | FOR_REPORT, O_TORCH,
     "read --alloc-conf as torch VERSION (e.g. 2.5) parses it: the keys it knows, its "
     "limits, its roundup_power2_divisions list (default: the newest rules)"},
    {"as-series", 0, NULL, FOR_SERIES | FOR_REPORT, O_AS_SERIES,
     "read the snapshots as a time series, even when their names look like ranks of one job"},
    {"as-ranks", 0, NULL, FOR_SERIES | FOR_REPORT, O_AS_RANKS,
     "read the snapshots as ranks of one job side by side (default when the names differ only by a rank number)"},
    {"name-pattern", 0, "REGEX", FOR_SERIES | FOR_REPORT, O_NAME_PATTERN,
     "read rank and step from the snapshots' paths by REGEX (POSIX extended), its groups "
     "named (?P<rank>...), (?P<step>...), (?P<oom>...); default: the names torchtitan, "
     "Megatron-LM, Megatron-Bridge and verl give them"},
    {"strict", 0, NULL, FOR_SERIES | FOR_REPORT | FOR_CHECK, O_STRICT,
     "fail (exit 2) on a snapshot of a folder that does not read, instead of leaving it "
     "out with a warning"},
    {"at", 0, "VIEW|SIZE", FOR_DIFF | FOR_PLAN, O_AT,
     "diff: lead with the end states (end: one run twice) or the peaks (peak: two runs); default: decided from the files; "
     "plan: the size value to predict the peak at (a sequence length, a batch: the unit of --size)"},
    {"size", 0, "X1,X2,...", FOR_PLAN, O_SIZE,
     "the size value each recording was made at (sequence length, batch, image side), one per file, in order"},
    {"max", 0, NULL, FOR_PLAN, O_MAX,
     "instead of --at, the largest whole size whose predicted peak fits --capacity"},
    {"check", 0, "FILE", FOR_PLAN, O_CHECK,
     "a real recording made at --at: its peaks beside the prediction, and the error"},
    {"batch-scale", 0, "K", FOR_PLAN, O_BATCH_SCALE,
     "one recording: activations and temporaries K times as large (a micro-batch or sequence K times the recorded one)"},
    {"zero", 0, "STAGE", FOR_PLAN, O_ZERO,
     "one recording, with --shard N: ZeRO stage 1 (optimizer state / N), 2 (also gradients), 3 (also parameters: FSDP)"},
    {"baseline-step", 0, "N", FOR_CURVE | FOR_REPORT, O_BASELINE_STEP,
     "the baseline after warm-up: at step N (default: 200 steps in, or the first 10% of a shorter run)"},
    {"threshold", 0, "F", FOR_CURVE | FOR_REPORT, O_THRESHOLD,
     "fraction of the capacity to stop at gracefully: steps until it (default 0.85)"},
    {"max-fraction", 0, "F", FOR_CURVE, O_MAX_FRACTION,
     "fail when the peak reaches F of the capacity, in the run or within --horizon steps"},
    {"horizon", 0, "N", FOR_CURVE, O_HORIZON,
     "steps ahead that --max-fraction projects a growing curve"},
    {"log-format", 0, "FMT", FOR_CURVE | FOR_REPORT, O_LOG_FORMAT,
     "read the logs as text, jsonl, csv or nvidia-smi (default: detected per file, "
     "framework presets included)"},
    {"pattern", 0, "REGEX", FOR_CURVE, O_PATTERN,
     "read only the lines matching REGEX (POSIX extended), its groups named (?P<name>...): "
     "step, time, rank, gpu, allocated, reserved, max_allocated, max_reserved, used, free, "
     "total, unit"},
    {"format-list", 0, NULL, FOR_CURVE, O_FORMAT_LIST,
     "list the log formats curve reads (the frameworks' presets too), each with a line as it "
     "comes and its unit rule, and exit"},
    {"shard", 0, "SHARE|N", FOR_SUMMARIZE | FOR_PLAN, O_SHARD,
     "summarize: only this task's share of the sorted inputs, one summary each in -o DIR: "
     "I/N (share I of N, from 0), auto (the task of a Slurm job array or of torchrun) or "
     "auto/N (pod JOB_COMPLETION_INDEX of a Kubernetes Indexed Job of N completions); "
     "plan: one recording's model state sharded over N ranks (with --zero)"},
    {"force", 0, NULL, FOR_SUMMARIZE, O_FORCE,
     "with several inputs, summarize those too whose summary in -o DIR is newer than the input"},
    {"root", 0, "DIR", FOR_MCP, O_ROOT,
     "mcp: the tools read and write files only under DIR, links resolved (repeatable; "
     "default: the current directory)"},
};

/* The registry (commands.def), in the order --help lists it: row i is command i + 1. */
static const struct cli_command_info commands[] = {
#define CLI_COMMAND(ID, name, usage, min_files, max_files, help, example, tool, tool_flags, \
                    schemas)                                                                \
    {CMD_##ID, #name, usage, min_files, max_files, help, example, tool, tool_flags, schemas},
#include "commands.def"
#undef CLI_COMMAND
};
_Static_assert(sizeof commands / sizeof commands[0] == CMD_END - 1, "one row per command");

const struct cli_command_info *cli_command_info(enum cli_command c)
{
    return c > CMD_NONE && c < CMD_END ? &commands[c - 1] : NULL;
}

/* `snapdiff help [COMMAND]`: a word of its own, never a file name. */
#define HELP_WORD "help"

const char *cli_command_name(enum cli_command c)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (commands[i].cmd == c) return commands[i].name;
    return "snapdiff";
}

static bool find_command(const char *name, enum cli_command *out);

bool cli_command_find(const char *name, enum cli_command *out)
{
    return find_command(name, out);
}

const char *cli_command_help(enum cli_command c)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (commands[i].cmd == c) return commands[i].help;
    return "";
}

const char *cli_command_usage(enum cli_command c)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (commands[i].cmd == c) return commands[i].usage;
    return "";
}

size_t cli_option_count(void) { return sizeof options / sizeof options[0]; }

void cli_option_at(size_t i, struct cli_option_info *out)
{
    const struct opt_def *o = &options[i];
    *out = (struct cli_option_info){
        .long_name = o->long_name, .short_name = o->short_name, .arg = o->arg, .commands = o->commands, .help = o->help,
        .repeatable = o->id == O_HIDE || o->id == O_SHOW || o->id == O_FOCUS ||
                      o->id == O_ALLOC_CONF || o->id == O_ROOT};
}

static bool find_command(const char *name, enum cli_command *out)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0) {
            *out = commands[i].cmd;
            return true;
        }
    return false;
}

/* The commands a help segment "series, trace: the first N groups" is for: true when the
 * segment starts with command names and a colon; *mine says whether command `cmd` is
 * among them, *rest points past the colon. */
static bool segment_for(const char *s, size_t n, enum cli_command cmd, bool *mine,
                        const char **rest)
{
    const char *p = s, *end = s + n;
    *mine = false;
    for (;;) {
        size_t w = 0;
        while (p + w < end && islower((unsigned char)p[w])) w++;
        if (w == 0) return false;
        bool known = false;
        for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
            if (strlen(commands[c].name) == w && memcmp(commands[c].name, p, w) == 0) {
                known = true;
                *mine = *mine || commands[c].cmd == cmd;
            }
        if (!known) return false;
        p += w;
        if (end - p >= 2 && p[0] == ':' && p[1] == ' ') {
            *rest = p + 2;
            return true;
        }
        if (end - p >= 2 && p[0] == ',' && p[1] == ' ') p += 2;
        else return false;
    }
}

/* Append s[0..n) to buf at *k. */
static void put(char *buf, size_t size, size_t *k, const char *s, size_t n)
{
    if (*k + 1 >= size) return;
    size_t room = size - 1 - *k;
    if (n > room) n = room;
    memcpy(buf + *k, s, n);
    *k += n;
    buf[*k] = '\0';
}

/* The parts of a parenthesis "(check: ...; report: ...)" that are all per-command:
 * `cmd`'s part as "(...)", or nothing. false when the parenthesis is not of that kind. */
static bool own_paren(const char *s, size_t n, enum cli_command cmd, char *buf, size_t size,
                      size_t *k)
{
    const char *p = s, *end = s + n, *found = NULL;
    size_t found_n = 0;
    while (p < end) {
        const char *semi = p;
        while (semi < end && !(semi[0] == ';' && semi + 1 < end && semi[1] == ' ')) semi++;
        bool mine;
        const char *rest;
        if (!segment_for(p, (size_t)(semi - p), cmd, &mine, &rest)) return false;
        if (mine) {
            found = rest;
            found_n = (size_t)(semi - rest);
        }
        p = semi < end ? semi + 2 : end;
    }
    if (found) {
        put(buf, size, k, " (", 2);
        put(buf, size, k, found, found_n);
        put(buf, size, k, ")", 1);
    }
    return true;
}

/* An option's help as one command's help shows it: the parts about other commands left
 * out ("...; check: text, json, github or junit" in diff's help), a part about this one
 * in their place. */
static void own_help(const char *help, enum cli_command cmd, char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = '\0';
    const char *p = help, *end = help + strlen(help);
    while (p < end) {
        const char *q = p;
        int depth = 0;
        while (q < end && !(depth == 0 && q[0] == ';' && q + 1 < end && q[1] == ' ')) {
            depth += *q == '(' ? 1 : *q == ')' ? -1 : 0;
            q++;
        }
        bool mine;
        const char *rest;
        if (segment_for(p, (size_t)(q - p), cmd, &mine, &rest)) {
            if (mine) {   /* about this command: it says it all */
                k = 0;
                put(buf, size, &k, rest, (size_t)(q - rest));
                return;
            }
        } else {
            const char *open = q > p && q[-1] == ')' ? memchr(p, '(', (size_t)(q - p)) : NULL;
            size_t k0 = k;
            if (k) put(buf, size, &k, "; ", 2);
            if (open && open > p && open[-1] == ' ') {
                size_t k1 = k;
                put(buf, size, &k, p, (size_t)(open - 1 - p));
                if (!own_paren(open + 1, (size_t)(q - 1 - open - 1), cmd, buf, size, &k)) {
                    k = k1;
                    buf[k] = '\0';
                    put(buf, size, &k, p, (size_t)(q - p));
                }
            } else {
                put(buf, size, &k, p, (size_t)(q - p));
            }
            (void)k0;
        }
        p = q < end ? q + 2 : end;
    }
}

/* One row of the option table as --help shows it; `tag`: name the commands it applies
 * to when not all (the global help), or not (a command's help lists only its own). */
static void print_option(FILE *out, const struct opt_def *o, bool tag, enum cli_command cmd)
{
    char left[48];
    snprintf(left, sizeof left, "%s%c%s--%s%s%s", o->short_name ? "-" : "   ",
             o->short_name ? o->short_name : ' ', o->short_name ? ", " : " ", o->long_name,
             o->arg ? " " : "", o->arg ? o->arg : "");
    /* Room for every command's name: a tag cut short would hide a command from the
     * docs-sync test and from the reader. */
    char where[256] = "";
    if (tag && o->commands != FOR_ALL) {
        size_t k = 0;
        for (size_t c = 0; c < sizeof commands / sizeof commands[0] && k < sizeof where; c++)
            if (o->commands & (1u << commands[c].cmd))
                k += (size_t)snprintf(where + k, sizeof where - k, "%s%s", k ? "," : " [",
                                      commands[c].name);
        if (k < sizeof where) snprintf(where + k, sizeof where - k, "]");
    }
    char own[512];
    if (!tag) own_help(o->help, cmd, own, sizeof own);
    fprintf(out, "  %-26s %s%s\n", left, tag ? o->help : own, where);
}

static void print_global_help(FILE *out)
{
    fprintf(out,
            "Usage: snapdiff OLD NEW [OPTIONS]        (same as: snapdiff diff OLD NEW)\n"
            "       snapdiff COMMAND FILE... [OPTIONS]\n"
            "       snapdiff help [COMMAND]           (or: snapdiff COMMAND --help)\n\n"
            "Reads PyTorch CUDA memory snapshots (pickles from _dump_snapshot, memory_snapshot,\n"
            "torch.save; raw, gzip, zip of ranks, directory, or - for stdin) without running\n"
            "anything in them, and tells what grew, where it was allocated, and whether it is\n"
            "a leak or fragmentation.\n\nCommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-9s %-9s %s\n", commands[i].name, commands[i].usage, commands[i].help);
    fprintf(out, "  %-9s %-9s %s\n", HELP_WORD, "[COMMAND]", "this help, or one command's");
    fprintf(out, "\nOptions:\n");
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
        print_option(out, &options[i], true, CMD_NONE);
    fprintf(out,
            "\nExit status: 0 success, 1 a check failed, 2 error (bad input, usage).\n"
            "Sizes accept B, KiB, MiB, GiB (binary) and KB, MB, GB (decimal).\n"
            "Definitions: docs/counting.md; JSON schemas: docs/json-*.md (snapdiff(1) lists them).\n");
}

/* `snapdiff CMD --help`: its usage, what it does, only the options that apply to it, and
 * one example, all from the same tables as the global help. */
static void print_command_help(FILE *out, size_t c)
{
    fprintf(out, "Usage: snapdiff %s %s%s[OPTIONS]", commands[c].name, commands[c].usage,
            commands[c].usage[0] ? " " : "");
    if (commands[c].cmd == CMD_DIFF) fprintf(out, "   (or: snapdiff OLD NEW [OPTIONS])");
    fprintf(out, "\n\n%c%s.\n\nOptions:\n", toupper((unsigned char)commands[c].help[0]),
            commands[c].help + 1);
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
        if (options[i].commands & (1u << commands[c].cmd)) print_option(out, &options[i], false, commands[c].cmd);
    fprintf(out, "\nExample:\n  %s\n\n"
            "Exit status: 0 success, 1 a check failed, 2 error (bad input, usage).\n"
            "See 'snapdiff --help' for the other commands, snapdiff(1) for the details.\n",
            commands[c].example);
}

size_t cli_command_count(void) { return sizeof commands / sizeof commands[0]; }

enum cli_command cli_command_at(size_t i) { return commands[i].cmd; }

void cli_option_help_for(size_t i, enum cli_command cmd, char *buf, size_t size)
{
    if (cmd == CMD_NONE) snprintf(buf, size, "%s", options[i].help);
    else own_help(options[i].help, cmd, buf, size);
}

/* The words a value may be, where they are a few fixed words: what the completions
 * offer. Per command where they differ: the first row naming the command wins. They are
 * what apply_option and cli_parse accept for that command; --group-by's come from the
 * library. An option added without a row here completes no words, only paths for FILE
 * and DIR (src/cli/gendocs/gendocs.c). */
static const struct {
    const char *long_name;
    unsigned commands;
    const char *words;
} option_values[] = {
    {"format", FOR_CHECK, "text json github junit"},
    {"format", FOR_CURVE, "text json github"},
    {"format", FOR_ALL, "text json folded pprof"},
    {"log-format", FOR_ALL, "text jsonl csv nvidia-smi"},
    {"sort", FOR_ALL, "name time"},
    {"at", FOR_DIFF, "end peak"},
    {"shard", FOR_SUMMARIZE, "auto"},
    {"zero", FOR_ALL, "1 2 3"},
};

const char *cli_option_values(size_t i, enum cli_command cmd)
{
    const struct opt_def *o = &options[i];
    if (o->id == O_GROUP_BY) {   /* sd_group_by_name's table, space-separated */
        static char keys[160];
        size_t k = 0;
        for (int g = 0; g < SD_GROUP_BY_COUNT && k < sizeof keys; g++)
            k += (size_t)snprintf(keys + k, sizeof keys - k, "%s%s", g ? " " : "",
                                  sd_group_by_name((sd_group_by)g));
        return keys;
    }
    unsigned bit = 1u << (cmd == CMD_NONE ? CMD_DIFF : cmd);   /* before a command: a diff */
    for (size_t v = 0; v < sizeof option_values / sizeof option_values[0]; v++)
        if (strcmp(option_values[v].long_name, o->long_name) == 0 &&
            (option_values[v].commands & bit))
            return option_values[v].words;
    return NULL;
}

void cli_print_help(FILE *out, enum cli_command cmd)
{
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
        if (commands[c].cmd == cmd) {
            print_command_help(out, c);
            return;
        }
    print_global_help(out);
}

/* ---------- parsing ---------- */

static bool parse_uint(const char *s, uint64_t max, uint64_t *out)
{
    if (!s || !*s || *s == '-') return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max) return false;
    *out = v;
    return true;
}

static bool parse_double(const char *s, double lo, double hi, double *out)
{
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= lo && v <= hi)) return false;
    *out = v;
    return true;
}

static bool add_pattern(const char **list, int *n, const char *re, char *errbuf, size_t errlen)
{
    regex_t compiled;
    if (regcomp(&compiled, re, REG_EXTENDED | REG_NOSUB) != 0) {
        snprintf(errbuf, errlen, "invalid regular expression '%s'", re);
        return false;
    }
    regfree(&compiled);
    if (*n >= CLI_MAX_PATTERNS) {
        snprintf(errbuf, errlen, "at most %d patterns per option", CLI_MAX_PATTERNS);
        return false;
    }
    list[(*n)++] = re;
    return true;
}

/* "site, leaf, stack, file or function": the group-by names, from the library's table. */
static void group_by_list(char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < SD_GROUP_BY_COUNT && k < size; i++) {
        const char *sep = i == 0 ? "" : i + 1 == SD_GROUP_BY_COUNT ? " or " : ", ";
        k += (size_t)snprintf(buf + k, size - k, "%s%s", sep, sd_group_by_name((sd_group_by)i));
    }
}

static enum opt_result bad_value(const struct opt_def *o, const char *v, const char *want,
                                 char *errbuf, size_t errlen)
{
    snprintf(errbuf, errlen, "--%s: '%s' is not %s", o->long_name, v, want);
    return OPT_ERROR;
}

/* --size X1,X2,...: positive numbers, one per recording. */
static bool parse_size_list(const char *v, struct cli_opts *opts)
{
    static double list[64];
    int n = 0;
    for (const char *p = v;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        if (len == 0 || len >= sizeof item || n == (int)(sizeof list / sizeof list[0])) return false;
        memcpy(item, p, len);
        item[len] = '\0';
        if (!parse_double(item, 1e-9, 1e15, &list[n])) return false;
        n++;
        if (!comma) break;
        p = comma + 1;
    }
    opts->plan.sizes = list;
    opts->plan.n_sizes = n;
    return true;
}

static enum opt_result apply_option(const struct opt_def *o, const char *v,
                                    struct cli_opts *opts, int *color_mode, char *errbuf,
                                    size_t errlen)
{
    uint64_t u;
    switch (o->id) {
    case O_HELP: return OPT_HELP;
    case O_VERSION: return OPT_VERSION;
    case O_JSON: opts->format = FORMAT_JSON; break;
    case O_FORMAT:
        if (strcmp(v, "text") == 0) opts->format = FORMAT_TEXT;
        else if (strcmp(v, "json") == 0) opts->format = FORMAT_JSON;
        else if (strcmp(v, "folded") == 0) opts->format = FORMAT_FOLDED;
        else if (strcmp(v, "pprof") == 0) opts->format = FORMAT_PPROF;
        else if (strcmp(v, "github") == 0) opts->format = FORMAT_GITHUB;
        else if (strcmp(v, "junit") == 0) opts->format = FORMAT_JUNIT;
        else return bad_value(o, v, "text, json, folded, pprof, github or junit", errbuf, errlen);
        break;
    case O_NO_COLOR: *color_mode = 0; break;
    case O_COLOR: *color_mode = 1; break;
    case O_MAX_MEMORY:
        if (!sd_parse_size(v, &opts->max_memory) || opts->max_memory < (1u << 20))
            return bad_value(o, v, "a size of at least 1MiB (e.g. 8GiB)", errbuf, errlen);
        opts->has_max_memory = true;
        break;
    case O_ROOT:
        if (opts->mcp.n_roots >= CLI_MAX_PATTERNS)
            return bad_value(o, v, "at most 32 roots", errbuf, errlen);
        opts->mcp.roots[opts->mcp.n_roots++] = v;
        break;
    case O_QUIET: opts->quiet = true; break;
    case O_GROUP_BY:
        if (!sd_group_by_parse(v, &opts->group_by)) {
            char keys[96];
            group_by_list(keys, sizeof keys);
            return bad_value(o, v, keys, errbuf, errlen);
        }
        break;
    case O_JOBS:
        if (!parse_uint(v, 1024, &u) || u == 0)
            return bad_value(o, v, "a number from 1 to 1024", errbuf, errlen);
        opts->jobs = (unsigned)u;
        break;
    case O_DEPTH:
        if (!parse_uint(v, 64, &u)) return bad_value(o, v, "a number from 0 to 64", errbuf, errlen);
        opts->depth = (int)u;
        break;
    case O_HIDE:
        if (!add_pattern(opts->hide, &opts->n_hide, v, errbuf, errlen)) return OPT_ERROR;
        break;
    case O_SHOW:
        if (!add_pattern(opts->show, &opts->n_show, v, errbuf, errlen)) return OPT_ERROR;
        break;
    case O_FOCUS:
        if (!add_pattern(opts->focus, &opts->n_focus, v, errbuf, errlen)) return OPT_ERROR;
        break;
    case O_TOP:
        if (!parse_uint(v, 1000000, &u) || u == 0)
            return bad_value(o, v, "a positive number", errbuf, errlen);
        opts->top = (int)u;
        break;
    case O_STEPS: opts->steps_arg = v; break;   /* read once the command is known */
    case O_CAPACITY:
        if ((!sd_parse_size(v, &opts->capacity) || opts->capacity == 0) &&
            !sd_gpu_capacity(v, &opts->capacity))
            return bad_value(o, v, "a size (e.g. 80GiB) or a GPU's name (A100-80GB, H100, "
                             "H200, L40S, RTX4090...)", errbuf, errlen);
        break;
    case O_ALLOC_CONF:
        if (opts->replay.n_alloc_conf >= CLI_MAX_PATTERNS)
            return bad_value(o, v, "at most 32 configs", errbuf, errlen);
        opts->replay.alloc_conf[opts->replay.n_alloc_conf++] = v;
        break;
    case O_TORCH:
        if (!sd_torch_version_parse(v, &opts->replay.torch_version))
            return bad_value(o, v, "a torch version MAJOR.MINOR, 2.0 or later (e.g. 2.5)",
                             errbuf, errlen);
        break;
    case O_MEMORY_FRACTION: {
        char *end;
        errno = 0;
        double f = strtod(v, &end);
        if (end == v || *end || errno || !(f > 0.0 && f <= 1.0))
            return bad_value(o, v, "a fraction above 0 and at most 1 (e.g. 0.9)", errbuf, errlen);
        opts->replay.memory_fraction = f;
        break;
    }
    case O_MAX_GROWTH:
        if (!sd_parse_size(v, &opts->max_growth))
            return bad_value(o, v, "a size (e.g. 512MiB, or 0)", errbuf, errlen);
        opts->has_max_growth = true;
        sd_limit_set(opts->limits, SD_LIMIT_MAX_GROWTH, v);
        break;
    case O_LIMIT: {
        sd_limit_id id = SD_LIMIT_MAX_GROWTH;
        if (!sd_limit_find(o->long_name, &id) || !sd_limit_set(opts->limits, id, v))
            return bad_value(o, v, sd_limit_expects(id), errbuf, errlen);
        break;
    }
    case O_CONFIG: opts->config = v; break;
    case O_REPO_ROOT: opts->repo_root = v; break;
    case O_GAP_THRESHOLD:
        if (!parse_double(v, 0, 100, &opts->frag.gap_threshold))
            return bad_value(o, v, "a percentage from 0 to 100", errbuf, errlen);
        break;
    case O_INDEX_THRESHOLD:
        if (!parse_double(v, 0, 1, &opts->frag.index_threshold))
            return bad_value(o, v, "a number from 0 to 1", errbuf, errlen);
        break;
    case O_MAP: opts->frag.map = true; break;
    case O_SORT:
        if (strcmp(v, "name") == 0) opts->series.sort = SORT_NAME;
        else if (strcmp(v, "time") == 0) opts->series.sort = SORT_TIME;
        else return bad_value(o, v, "name or time", errbuf, errlen);
        break;
    case O_STEPS_BETWEEN:
        if (!parse_uint(v, UINT64_MAX / 1000000, &opts->series.steps_between) ||
            opts->series.steps_between == 0)
            return bad_value(o, v, "a positive number of steps", errbuf, errlen);
        break;
    case O_MIN_SLOPE:
        if (!sd_parse_size(v, &opts->series.min_slope))
            return bad_value(o, v, "a size (e.g. 256KiB)", errbuf, errlen);
        opts->series.has_min_slope = true;
        break;
    case O_CONFIDENCE:
        if (!parse_double(v, 0, 1, &opts->series.confidence) || opts->series.confidence >= 1)
            return bad_value(o, v, "a number from 0 to below 1 (e.g. 0.99)", errbuf, errlen);
        break;
    case O_ASCII: opts->series.ascii = true; break;
    case O_AS_SERIES: opts->as = AS_SERIES; break;
    case O_AS_RANKS: opts->as = AS_RANKS; break;
    case O_AT: opts->at_arg = v; break;   /* its command says how to read it */
    case O_SIZE:
        if (!parse_size_list(v, opts)) return bad_value(o, v, "a list of positive numbers X1,X2,...", errbuf, errlen);
        break;
    case O_MAX: opts->plan.max = true; break;
    case O_CHECK: opts->plan.check = v; break;
    case O_BATCH_SCALE:
        if (!parse_double(v, 1e-6, 1e6, &opts->plan.batch_scale))
            return bad_value(o, v, "a positive number", errbuf, errlen);
        break;
    case O_ZERO:
        if (!parse_uint(v, 3, &u) || u == 0) return bad_value(o, v, "1, 2 or 3", errbuf, errlen);
        opts->plan.zero = (unsigned)u;
        break;
    case O_SVG: opts->frag.svg = v; break;
    case O_OUTPUT: opts->output = v; break;
    case O_BASELINE_STEP:
        if (!parse_uint(v, 1000000000000000ull, &opts->curve.baseline_step))
            return bad_value(o, v, "a step number", errbuf, errlen);
        opts->curve.has_baseline_step = true;
        break;
    case O_THRESHOLD:
        if (!parse_double(v, 0, 1, &opts->curve.threshold) || opts->curve.threshold == 0)
            return bad_value(o, v, "a fraction above 0, at most 1 (e.g. 0.85)", errbuf, errlen);
        break;
    case O_MAX_FRACTION:
        if (!parse_double(v, 0, 1, &opts->curve.max_fraction))
            return bad_value(o, v, "a number from 0 to 1 (e.g. 0.9)", errbuf, errlen);
        opts->curve.has_max_fraction = true;
        break;
    case O_HORIZON:
        if (!parse_uint(v, 1000000000000000ull, &opts->curve.horizon) || opts->curve.horizon == 0)
            return bad_value(o, v, "a positive number of steps", errbuf, errlen);
        break;
    case O_LOG_FORMAT:
        if (strcmp(v, "text") && strcmp(v, "jsonl") && strcmp(v, "csv") && strcmp(v, "nvidia-smi"))
            return bad_value(o, v, "text, jsonl, csv or nvidia-smi", errbuf, errlen);
        opts->curve.log_format = v;
        break;
    case O_SHARD: opts->shard_arg = v; break;   /* its command says how to read it */
    case O_FORCE: opts->summarize.force = true; break;
    case O_FORMAT_LIST: opts->curve.format_list = true; break;
    case O_PATTERN: opts->curve.pattern = v; break;
    case O_NAME_PATTERN: opts->name_pattern = v; break;
    case O_STRICT: opts->strict = true; break;
    case O_SINCE: opts->trace.since = v; break;
    case O_UNTIL: opts->trace.until = v; break;
    }
    return OPT_OK;
}

static const struct opt_def *find_long(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
        if (strlen(options[i].long_name) == n && memcmp(options[i].long_name, name, n) == 0)
            return &options[i];
    return NULL;
}

/* Edits (insert, delete, substitute, swap two neighbours) from a[0..n) to b; capped at
 * 3 (enough to tell a typo from another word). */
static size_t edit_distance(const char *a, size_t n, const char *b)
{
    size_t m = strlen(b);
    if (n > 40 || m > 40) return 3;
    size_t d[41][41];
    for (size_t i = 0; i <= n; i++) d[i][0] = i;
    for (size_t j = 0; j <= m; j++) d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m] < 3 ? d[n][m] : 3;
}

/* The long option nearest to name[0..n), when a typo away (at most 2 edits, fewer for
 * short names); NULL when none is. */
static const char *nearest_long(const char *name, size_t n)
{
    const char *best = NULL;
    size_t best_d = n <= 4 ? 2 : 3;
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        size_t d = edit_distance(name, n, options[i].long_name);
        if (d < best_d) {
            best_d = d;
            best = options[i].long_name;
        }
    }
    return best;
}

static const struct opt_def *find_short(char c)
{
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
        if (options[i].short_name == c) return &options[i];
    return NULL;
}

static uint64_t default_max_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return 8ull << 30;
    return (uint64_t)pages * (uint64_t)page / 2;
}

static void set_defaults(struct cli_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->format = FORMAT_TEXT;
    opts->top = 20;
    opts->frag.gap_threshold = 30;
    opts->frag.index_threshold = 0.5;
    opts->max_memory = default_max_memory();
    opts->series.confidence = -1;
}

/* --steps: a positive number for the diff; a list N1,N2,... for the series. */
static enum opt_result parse_steps(struct cli_opts *opts, char *errbuf, size_t errlen)
{
    static uint64_t list[4096];
    const char *v = opts->steps_arg;
    if (!v) return OPT_OK;
    if (opts->command != CMD_SERIES) {
        if (!parse_uint(v, UINT64_MAX, &opts->steps) || opts->steps == 0) {
            snprintf(errbuf, errlen, "--steps: '%s' is not a positive number of steps", v);
            return OPT_ERROR;
        }
        return OPT_OK;
    }
    int n = 0;
    for (const char *p = v;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        bool ok = len > 0 && len < sizeof item && n < (int)(sizeof list / sizeof list[0]);
        if (ok) {
            memcpy(item, p, len);
            item[len] = '\0';
            ok = parse_uint(item, UINT64_MAX, &list[n]);
        }
        if (!ok) {
            snprintf(errbuf, errlen, "--steps: '%s' is not a list of steps N1,N2,... "
                     "(one per snapshot)", v);
            return OPT_ERROR;
        }
        n++;
        if (!comma) break;
        p = comma + 1;
    }
    opts->series.step_list = list;
    opts->series.n_step_list = n;
    return OPT_OK;
}

/* --at and --shard, read as their command reads them (diff: end|peak, plan: a size;
 * summarize: a share, plan: N ranks), once the command is known. */
static enum opt_result parse_by_command(struct cli_opts *opts, char *errbuf, size_t errlen)
{
    const char *v = opts->at_arg;
    if (v && opts->command == CMD_PLAN) {
        if (!parse_double(v, 1e-9, 1e15, &opts->plan.at)) {
            snprintf(errbuf, errlen, "--at: '%s' is not a positive size value", v);
            return OPT_ERROR;
        }
        opts->plan.has_at = true;
    } else if (v) {
        if (strcmp(v, "end") == 0) opts->at = SD_DIFF_AT_END;
        else if (strcmp(v, "peak") == 0) opts->at = SD_DIFF_AT_PEAK;
        else {
            snprintf(errbuf, errlen, "--at: '%s' is not end or peak", v);
            return OPT_ERROR;
        }
    }
    v = opts->shard_arg;
    uint64_t u;
    if (v && opts->command == CMD_PLAN) {
        if (!parse_uint(v, 1u << 20, &u) || u < 2) {
            snprintf(errbuf, errlen, "--shard: '%s' is not a number of ranks (2 or more)", v);
            return OPT_ERROR;
        }
        opts->plan.shard = (unsigned)u;
    } else if (v) {
        if (!cli_share_syntax_ok(v)) {
            snprintf(errbuf, errlen, "--shard: '%s' is not I/N (0 <= I < N), auto or auto/N", v);
            return OPT_ERROR;
        }
        opts->summarize.shard = v;
    }
    return OPT_OK;
}

/* One argument that starts with '-'. *i advances past a separate option value. */
static enum opt_result parse_one(int argc, char **argv, int *i, struct cli_opts *opts,
                                 unsigned *used, int *color_mode, char *errbuf, size_t errlen)
{
    const char *arg = argv[*i];
    const struct opt_def *o;
    const char *value = NULL;
    if (arg[1] == '-') {
        const char *eq = strchr(arg + 2, '=');
        size_t n = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        o = find_long(arg + 2, n);
        if (!o) {
            const char *near = nearest_long(arg + 2, n);
            if (near)
                snprintf(errbuf, errlen, "unknown option '%.*s'; did you mean '--%s'?",
                         (int)(n + 2), arg, near);
            else
                snprintf(errbuf, errlen, "unknown option '%.*s'", (int)(n + 2), arg);
            return OPT_ERROR;
        }
        if (eq && !o->arg) {
            snprintf(errbuf, errlen, "option '--%s' takes no value", o->long_name);
            return OPT_ERROR;
        }
        value = eq ? eq + 1 : NULL;
    } else {
        o = find_short(arg[1]);
        if (!o || (arg[2] && !o->arg)) {
            snprintf(errbuf, errlen, "unknown option '%s'", arg);
            return OPT_ERROR;
        }
        value = arg[2] ? arg + 2 : NULL;
    }
    if (o->arg && !value) {
        if (*i + 1 >= argc) {
            snprintf(errbuf, errlen, "option '--%s' needs a value (%s)", o->long_name, o->arg);
            return OPT_ERROR;
        }
        value = argv[++*i];
    }
    enum opt_result r = apply_option(o, value, opts, color_mode, errbuf, errlen);
    /* Whether it applies is checked once the command is known. */
    if (r == OPT_OK) used[o - options] = 1;
    return r;
}

static enum opt_result check_applicable(const struct cli_opts *opts, const unsigned *used,
                                        char *errbuf, size_t errlen)
{
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        if (!used[i] || (options[i].commands & (1u << opts->command))) continue;
        snprintf(errbuf, errlen, "option '--%s' does not apply to '%s'", options[i].long_name,
                 cli_command_name(opts->command));
        return OPT_ERROR;
    }
    return OPT_OK;
}

static bool want_color(int mode)
{
    if (mode >= 0) return mode == 1;
    const char *nc = getenv("NO_COLOR");
    if (nc && *nc) return false;
    const char *term = getenv("TERM");
    if (term && strcmp(term, "dumb") == 0) return false;
    return isatty(STDOUT_FILENO);
}

static bool is_file(const char *path)
{
    return access(path, F_OK) == 0;
}

/* No command came first, so the words are files of a diff: say so when one is a command
 * (`snapdiff FILE stats`: the command comes first) or the first is a typo of one
 * (`snapdiff stast FILE`), rather than failing to open a file of that name. A file of
 * that name wins. @return true with the message in errbuf. */
static bool misplaced_command(const char *const *pos, int n_pos, char *errbuf, size_t errlen)
{
    for (int i = 1; i < n_pos; i++) {
        enum cli_command c;
        if (!is_file(pos[i]) && find_command(pos[i], &c)) {
            snprintf(errbuf, errlen, "'%s' is a command: the command comes first "
                     "(snapdiff %s FILE...)", pos[i], pos[i]);
            return true;
        }
    }
    if (n_pos < 1 || is_file(pos[0]) || strchr(pos[0], '/') || strchr(pos[0], '.') ||
        strchr(pos[0], ':'))
        return false;
    size_t n = strlen(pos[0]);
    const char *best = NULL;
    size_t best_d = n <= 4 ? 2 : 3;
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++) {
        size_t d = edit_distance(pos[0], n, commands[c].name);
        if (d < best_d) {
            best_d = d;
            best = commands[c].name;
        }
    }
    if (!best) return false;
    snprintf(errbuf, errlen, "unknown command '%s'; did you mean '%s'?", pos[0], best);
    return true;
}

/* --help anywhere, or `help [COMMAND]` first: which help. opts->command says which
 * (CMD_NONE: the global help). */
static enum opt_result help_for(const char **pos, int n_pos, struct cli_opts *opts,
                                char *errbuf, size_t errlen)
{
    opts->command = CMD_NONE;
    bool word = n_pos > 0 && strcmp(pos[0], HELP_WORD) == 0;
    if (!word) {   /* snapdiff CMD --help; snapdiff OLD NEW --help is the global help */
        if (n_pos > 0) find_command(pos[0], &opts->command);
        return OPT_HELP;
    }
    if (n_pos > 2 || (n_pos == 2 && !find_command(pos[1], &opts->command))) {
        char names[256];
        size_t k = 0;
        for (size_t c = 0; c < sizeof commands / sizeof commands[0] && k < sizeof names; c++)
            k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", c ? ", " : "",
                                  commands[c].name);
        snprintf(errbuf, errlen, "help: '%s' is no command (%s)", pos[n_pos == 2 ? 1 : 2],
                 names);
        return OPT_ERROR;
    }
    return OPT_HELP;
}

/* Too few or too many inputs for the command (its registry row's min_files, max_files):
 * true with the message in errbuf. diff's own (one file with --format folded or pprof) is
 * checked before; curve --format-list reads none. */
static bool arity_error(const struct cli_opts *opts, char *errbuf, size_t errlen)
{
    const struct cli_command_info *c = cli_command_info(opts->command);
    unsigned n = (unsigned)opts->n_files;
    if (opts->command == CMD_DIFF ||
        (opts->command == CMD_CURVE && opts->curve.format_list && n == 0))
        return false;
    if (n >= c->min_files && (c->max_files == 0 || n <= c->max_files)) return false;
    if (c->max_files == 1)
        snprintf(errbuf, errlen, "%s takes one snapshot", c->name);
    else if (c->min_files == 2 && c->max_files == 2)
        snprintf(errbuf, errlen, "%s needs two inputs, OLD and NEW (got %u)", c->name, n);
    else
        snprintf(errbuf, errlen, c->min_files == 1 ? "%s needs at least one snapshot"
                                                   : "%s needs at least %u snapshots",
                 c->name, c->min_files);
    return true;
}

void cli_opts_release(struct cli_opts *opts)
{
    sd_limits_free(opts->limits);
    opts->limits = NULL;
}

enum opt_result cli_parse(int argc, char **argv, struct cli_opts *opts, char *errbuf,
                          size_t errlen)
{
    set_defaults(opts);
    if (!(opts->limits = sd_limits_create())) {
        snprintf(errbuf, errlen, "out of memory");
        return OPT_ERROR;
    }
    static const char *positional[4096];
    unsigned used[sizeof options / sizeof options[0]];
    memset(used, 0, sizeof used);
    int n_pos = 0, color_mode = -1;
    bool only_files = false, help = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_files && strcmp(a, "--") == 0) { only_files = true; continue; }
        if (!only_files && a[0] == '-' && a[1]) {
            enum opt_result r = parse_one(argc, argv, &i, opts, used, &color_mode, errbuf, errlen);
            if (r == OPT_HELP) help = true;     /* the command may come later: stats --help */
            else if (r != OPT_OK) return r;
            continue;
        }
        if (n_pos >= (int)(sizeof positional / sizeof positional[0])) {
            snprintf(errbuf, errlen, "too many files");
            return OPT_ERROR;
        }
        positional[n_pos++] = a;
    }
    if (help || (n_pos > 0 && strcmp(positional[0], HELP_WORD) == 0))
        return help_for(positional, n_pos, opts, errbuf, errlen);
    int first_file = 0;
    opts->command = CMD_DIFF;
    if (n_pos > 0) {
        for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
            if (strcmp(positional[0], commands[c].name) == 0) {
                opts->command = commands[c].cmd;
                first_file = 1;
            }
    }
    if (first_file == 0 && misplaced_command(positional, n_pos, errbuf, errlen)) return OPT_ERROR;
    opts->files = positional + first_file;
    opts->n_files = n_pos - first_file;
    opts->color = want_color(color_mode);
    if (opts->format != FORMAT_TEXT || opts->output) opts->color = false;
    if (opts->command == CMD_MCP) {   /* a server: its files come in the requests */
        if (opts->n_files > 0) {
            snprintf(errbuf, errlen, "mcp takes no file: the agent names them (give --root DIR)");
            return OPT_ERROR;
        }
        return check_applicable(opts, used, errbuf, errlen);
    }
    if (n_pos == 0) {
        snprintf(errbuf, errlen, "no snapshot given");
        return OPT_ERROR;
    }
    /* --format folded and pprof also take one file: the live blocks of that snapshot. */
    bool one_ok = (opts->format == FORMAT_FOLDED || opts->format == FORMAT_PPROF) &&
                  opts->n_files == 1;
    /* `snapdiff FILE`: one snapshot has nothing to diff against; show its top. */
    if (opts->command == CMD_DIFF && first_file == 0 && opts->n_files == 1 && !one_ok &&
        opts->format != FORMAT_GITHUB && opts->format != FORMAT_JUNIT)
        opts->command = CMD_TOP;
    if (opts->command == CMD_DIFF && opts->n_files != 2 && !one_ok) {
        snprintf(errbuf, errlen, "diff needs two snapshots, OLD and NEW (got %d; one is enough with --format folded or pprof)", opts->n_files);
        return OPT_ERROR;
    }
    if (arity_error(opts, errbuf, errlen)) return OPT_ERROR;
    bool for_check = opts->format == FORMAT_GITHUB || opts->format == FORMAT_JUNIT;
    if (opts->command == CMD_CURVE && (opts->format == FORMAT_FOLDED || opts->format == FORMAT_PPROF ||
                                       opts->format == FORMAT_JUNIT)) {
        snprintf(errbuf, errlen, "curve writes text, json or github");
        return OPT_ERROR;
    }
    if (for_check && opts->command != CMD_CHECK && !(opts->command == CMD_CURVE &&
                                                     opts->format == FORMAT_GITHUB)) {
        snprintf(errbuf, errlen, "--format github and junit are for 'check' (github also for 'curve')");
        return OPT_ERROR;
    }
    if (opts->command == CMD_CHECK && (opts->format == FORMAT_FOLDED || opts->format == FORMAT_PPROF)) {
        snprintf(errbuf, errlen, "check writes text, json, github or junit");
        return OPT_ERROR;
    }
    if (opts->format == FORMAT_JUNIT && !opts->output) {
        snprintf(errbuf, errlen, "--format junit needs --output FILE");
        return OPT_ERROR;
    }
    if (check_applicable(opts, used, errbuf, errlen) != OPT_OK) return OPT_ERROR;
    if (opts->command == CMD_SERIES && opts->steps_arg && opts->series.steps_between) {
        snprintf(errbuf, errlen, "series: give --steps N1,N2,... or --steps-between N, not both");
        return OPT_ERROR;
    }
    if (parse_by_command(opts, errbuf, errlen) != OPT_OK) return OPT_ERROR;
    return parse_steps(opts, errbuf, errlen);
}
