/* gendocs.c - the parts of the man page and of the completions that the option table
 * (src/cli/options.c) decides, written from that table as curl and jq write theirs.
 *
 * Usage: snapdiff-gendocs [--check] SOURCE_DIR
 *
 * In man/snapdiff.1, completions/snapdiff.bash, completions/_snapdiff and
 * completions/snapdiff.fish, the lines between the comment line starting "BEGIN
 * GENERATED" and the one starting "END GENERATED" are replaced by what this writes now; the rest of each file
 * is hand-written (the prose, the shells' logic). The output depends on the table only,
 * so running it twice changes nothing. `cmake --build build --target docs` runs it;
 * --check writes nothing and exits 1 naming each file that differs (ctest docs_generated).
 * Exit 2: a file is missing, has no markers, or cannot be written; or a word the
 * completions would offer for a value (option_values in options.c) is one the parser
 * refuses for that command.
 *
 * Built from options.c itself, not from `snapdiff --help`'s text: no parsing back.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../options.h"

/* ---------- a growing string ---------- */

struct text {
    char *s;
    size_t n, cap;
};

static void add(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0) abort();
    if (t->n + (size_t)need + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->n + (size_t)need + 1) cap *= 2;
        char *s = realloc(t->s, cap);
        if (!s) {
            fprintf(stderr, "snapdiff-gendocs: out of memory\n");
            exit(2);
        }
        t->s = s;
        t->cap = cap;
    }
    vsnprintf(t->s + t->n, (size_t)need + 1, fmt, ap2);
    va_end(ap2);
    t->n += (size_t)need;
}

/* s with each character in `from` replaced by the string at the same index of `to`. */
static void add_escaped(struct text *t, const char *s, const char *from, const char *const *to)
{
    for (; *s; s++) {
        const char *hit = strchr(from, *s);
        if (hit) add(t, "%s", to[hit - from]);
        else add(t, "%c", *s);
    }
}

/* ---------- the table, as the generators need it ---------- */

#define HELP_MAX 1024

static struct cli_option_info option(size_t i)
{
    struct cli_option_info o;
    cli_option_at(i, &o);
    return o;
}

static bool applies(size_t i, enum cli_command cmd)
{
    return cmd == CMD_NONE || (option(i).commands & (1u << cmd));
}

static bool for_all(size_t i) { return option(i).commands == FOR_ALL; }

/* What a shell offers for option i's value under cmd. */
enum value_kind { VALUE_NONE, VALUE_ANY, VALUE_WORDS, VALUE_FILE, VALUE_DIR };

static enum value_kind value_kind(size_t i, enum cli_command cmd, const char **words)
{
    struct cli_option_info o = option(i);
    *words = NULL;
    if (!o.arg) return VALUE_NONE;
    if ((*words = cli_option_values(i, cmd))) return VALUE_WORDS;
    if (strcmp(o.arg, "FILE") == 0) return VALUE_FILE;
    if (strcmp(o.arg, "DIR") == 0) return VALUE_DIR;
    return VALUE_ANY;
}

/* The help of option i for cmd, short enough for a shell's menu: the parentheses left
 * out, cut at the first "; " outside them. */
static void short_help(size_t i, enum cli_command cmd, char *buf, size_t size)
{
    char help[HELP_MAX];
    cli_option_help_for(i, cmd, help, sizeof help);
    size_t k = 0;
    int depth = 0;
    for (const char *p = help; *p && k + 1 < size; p++) {
        if (*p == '(') {
            if (depth++ == 0 && k > 0 && buf[k - 1] == ' ') k--;   /* " (...)": the space too */
            continue;
        }
        if (depth > 0) {
            depth -= *p == ')';
            continue;
        }
        if (p[0] == ';' && p[1] == ' ') break;
        buf[k++] = *p;
    }
    buf[k] = '\0';
}

/* The commands option i applies to whose value completes like cmd's: a group of them. */
static unsigned same_value_as(size_t i, enum cli_command cmd)
{
    const char *mine, *other;
    enum value_kind k = value_kind(i, cmd, &mine);
    unsigned group = 0;
    for (size_t c = 0; c < cli_command_count(); c++) {
        enum cli_command o = cli_command_at(c);
        if (!applies(i, o) || value_kind(i, o, &other) != k) continue;
        if (k == VALUE_WORDS && strcmp(mine, other) != 0) continue;
        group |= 1u << o;
    }
    return group;
}

/* The value groups of option i, in the order of their first command, except that a
 * diff's group (the one that holds before any command is given) comes last: the shells'
 * default. Returns the count (at least 1). */
static size_t value_groups(size_t i, unsigned *groups, enum cli_command *firsts)
{
    size_t n = 0;
    unsigned seen = 0;
    for (size_t c = 0; c < cli_command_count(); c++) {
        enum cli_command cmd = cli_command_at(c);
        if (!applies(i, cmd) || (seen & (1u << cmd))) continue;
        groups[n] = same_value_as(i, cmd);
        firsts[n++] = cmd;
        seen |= groups[n - 1];
    }
    for (size_t g = 0; g + 1 < n; g++)
        if (groups[g] & FOR_DIFF) {   /* rotate it to the end */
            unsigned keep = groups[g];
            enum cli_command keep_first = firsts[g];
            memmove(groups + g, groups + g + 1, (n - g - 1) * sizeof *groups);
            memmove(firsts + g, firsts + g + 1, (n - g - 1) * sizeof *firsts);
            groups[n - 1] = keep;
            firsts[n - 1] = keep_first;
            break;
        }
    return n;
}

/* Whether a shell offers anything for option i's value (words or paths), for some command. */
static bool completes_value(size_t i)
{
    const char *words;
    for (size_t c = 0; c < cli_command_count(); c++)
        if (applies(i, cli_command_at(c)) && value_kind(i, cli_command_at(c), &words) > VALUE_ANY)
            return true;
    return false;
}

/* "diff top": the names of the commands in `mask`, in --help's order. */
static void add_command_names(struct text *t, unsigned mask, const char *sep)
{
    bool first = true;
    for (size_t c = 0; c < cli_command_count(); c++) {
        enum cli_command cmd = cli_command_at(c);
        if (!(mask & (1u << cmd))) continue;
        add(t, "%s%s", first ? "" : sep, cli_command_name(cmd));
        first = false;
    }
}

/* ---------- man/snapdiff.1: the OPTIONS sections ---------- */

static const char roff_from[] = "\\-";
static const char *const roff_to[] = {"\\e", "\\-"};

static void man_entry(struct text *t, size_t i, enum cli_command cmd)
{
    struct cli_option_info o = option(i);
    add(t, ".TP\n");
    if (o.short_name) add(t, "\\fB\\-%c\\fR, ", o.short_name);
    add(t, "\\fB");
    add_escaped(t, "--", roff_from, roff_to);
    add_escaped(t, o.long_name, roff_from, roff_to);
    add(t, "\\fR");
    if (o.arg) add(t, " \\fI%s\\fR", o.arg);
    add(t, "\n");
    char help[HELP_MAX];
    cli_option_help_for(i, cmd, help, sizeof help);
    help[0] = (char)toupper((unsigned char)help[0]);
    if (help[0] == '.' || help[0] == '\'') add(t, "\\&");
    add_escaped(t, help, roff_from, roff_to);
    add(t, ".\n");
}

static void gen_man(struct text *t)
{
    add(t, ".SS \"Options of every command\"\n");
    for (size_t i = 0; i < cli_option_count(); i++)
        if (for_all(i)) man_entry(t, i, CMD_NONE);
    for (size_t c = 0; c < cli_command_count(); c++) {
        enum cli_command cmd = cli_command_at(c);
        add(t, ".SS \"Options of %s\"\n", cli_command_name(cmd));
        size_t shown = 0;
        for (size_t i = 0; i < cli_option_count(); i++)
            if (!for_all(i) && applies(i, cmd)) {
                man_entry(t, i, cmd);
                shown++;
            }
        if (!shown) add(t, "Only those of every command.\n");
    }
}

/* ---------- the option names and value-taking options, for the shells ---------- */

/* "--json -j --jobs ...": every name of the options cmd takes (CMD_NONE: all). */
static void add_option_words(struct text *t, enum cli_command cmd)
{
    bool first = true;
    for (size_t i = 0; i < cli_option_count(); i++) {
        if (!applies(i, cmd)) continue;
        struct cli_option_info o = option(i);
        add(t, "%s--%s", first ? "" : " ", o.long_name);
        if (o.short_name) add(t, " -%c", o.short_name);
        first = false;
    }
}

/* "--format|-f|--output|-o...": the options that take a value, joined by sep. */
static void add_value_options(struct text *t, const char *sep)
{
    bool first = true;
    for (size_t i = 0; i < cli_option_count(); i++) {
        struct cli_option_info o = option(i);
        if (!o.arg) continue;
        add(t, "%s--%s", first ? "" : sep, o.long_name);
        if (o.short_name) add(t, "%s-%c", sep, o.short_name);
        first = false;
    }
}

/* "diff stats ... mcp" */
static void add_commands(struct text *t)
{
    add_command_names(t, FOR_ALL, " ");
}

/* ---------- completions/snapdiff.bash ---------- */

static void bash_value_case(struct text *t, size_t i, enum cli_command cmd)
{
    const char *words;
    switch (value_kind(i, cmd, &words)) {
    case VALUE_WORDS: add(t, "echo 'words %s'", words); break;
    case VALUE_FILE: add(t, "echo files"); break;
    case VALUE_DIR: add(t, "echo dirs"); break;
    default: add(t, ":"); break;
    }
}

static void gen_bash(struct text *t)
{
    add(t, "# The commands, in --help's order.\n_snapdiff_commands()\n{\n    echo '");
    add_commands(t);
    add(t, "'\n}\n\n# The options of COMMAND (before a command is given: all of them).\n"
           "_snapdiff_options()\n{\n    case $1 in\n");
    for (size_t c = 0; c < cli_command_count(); c++) {
        enum cli_command cmd = cli_command_at(c);
        add(t, "        %s) echo '", cli_command_name(cmd));
        add_option_words(t, cmd);
        add(t, "' ;;\n");
    }
    add(t, "        *) echo '");
    add_option_words(t, CMD_NONE);
    add(t, "' ;;\n    esac\n}\n\n# Does OPTION take a value (the next word, or after '=')?\n"
           "_snapdiff_takes_value()\n{\n    case $1 in\n        ");
    add_value_options(t, "|");
    add(t, ") return 0 ;;\n    esac\n    return 1\n}\n\n"
           "# What COMMAND's OPTION takes: 'words W...', files, dirs, or anything (nothing).\n"
           "_snapdiff_value()\n{\n    case $2 in\n");
    for (size_t i = 0; i < cli_option_count(); i++) {
        struct cli_option_info o = option(i);
        if (!completes_value(i)) continue;   /* a number, a size, a pattern: nothing */
        add(t, "        --%s", o.long_name);
        if (o.short_name) add(t, "|-%c", o.short_name);
        unsigned groups[32];
        enum cli_command firsts[32];
        size_t n = value_groups(i, groups, firsts);
        if (n == 1) {
            add(t, ") ");
            bash_value_case(t, i, firsts[0]);
            add(t, " ;;\n");
            continue;
        }
        add(t, ")\n            case $1 in\n");
        for (size_t g = 0; g < n; g++) {
            add(t, "                ");
            if (g + 1 == n) add(t, "*");
            else add_command_names(t, groups[g], "|");
            add(t, ") ");
            bash_value_case(t, i, firsts[g]);
            add(t, " ;;\n");
        }
        add(t, "            esac ;;\n");
    }
    add(t, "    esac\n}\n");
}

/* ---------- completions/_snapdiff (zsh) ---------- */

/* Inside '...' of zsh, and inside an _arguments description's [...]. */
static const char zsh_from[] = "'[]";
static const char *const zsh_to[] = {"'\\''", "\\[", "\\]"};

static void zsh_spec(struct text *t, size_t i, enum cli_command cmd)
{
    struct cli_option_info o = option(i);
    const char *eq = o.arg ? "=" : "";
    add(t, "    ");
    if (o.repeatable) add(t, "'*'");
    else if (o.short_name) add(t, "'(-%c --%s)'", o.short_name, o.long_name);
    if (o.short_name) add(t, "{-%c%s,--%s%s}'", o.short_name, o.arg ? "+" : "", o.long_name, eq);
    else add(t, "'--%s%s", o.long_name, eq);
    char help[HELP_MAX];
    short_help(i, cmd, help, sizeof help);
    add(t, "[");
    add_escaped(t, help, zsh_from, zsh_to);
    add(t, "]");
    const char *words;
    switch (value_kind(i, cmd, &words)) {
    case VALUE_WORDS: add(t, ":%s:(%s)", o.arg, words); break;
    case VALUE_FILE: add(t, ":%s:_files", o.arg); break;
    case VALUE_DIR: add(t, ":%s:_files -/", o.arg); break;
    case VALUE_ANY: add(t, ":%s: ", o.arg); break;
    case VALUE_NONE: break;
    }
    add(t, "'\n");
}

static void zsh_specs(struct text *t, enum cli_command cmd)
{
    for (size_t i = 0; i < cli_option_count(); i++)
        if (applies(i, cmd)) zsh_spec(t, i, cmd);
}

static void gen_zsh(struct text *t)
{
    add(t, "# The commands, name:description, in --help's order.\n"
           "_snapdiff_commands() {\n  reply=(\n");
    for (size_t c = 0; c < cli_command_count(); c++) {
        enum cli_command cmd = cli_command_at(c);
        add(t, "    '%s:", cli_command_name(cmd));
        add_escaped(t, cli_command_help(cmd), zsh_from, zsh_to);
        add(t, "'\n");
    }
    add(t, "  )\n}\n\n# Does OPTION take a value (the next word)?\n"
           "_snapdiff_takes_value() {\n  case $1 in\n    (");
    add_value_options(t, "|");
    add(t, ") return 0 ;;\n  esac\n  return 1\n}\n\n"
           "# The _arguments specs of COMMAND's options (before a command: all of them).\n"
           "_snapdiff_specs() {\n  case $1 in\n");
    for (size_t c = 0; c < cli_command_count(); c++) {
        enum cli_command cmd = cli_command_at(c);
        add(t, "  (%s) reply=(\n", cli_command_name(cmd));
        zsh_specs(t, cmd);
        add(t, "  ) ;;\n");
    }
    add(t, "  (*) reply=(\n");
    zsh_specs(t, CMD_NONE);
    add(t, "  ) ;;\n  esac\n}\n");
}

/* ---------- completions/snapdiff.fish ---------- */

/* Inside '...' of fish. */
static const char fish_from[] = "'\\";
static const char *const fish_to[] = {"\\'", "\\\\"};

/* One `complete` line: option i for the commands in group (whose first is `first`);
 * strict: only once one of them is given (__snapdiff_is), else before any command too. */
static void fish_option(struct text *t, size_t i, unsigned group, enum cli_command first,
                        bool strict)
{
    struct cli_option_info o = option(i);
    add(t, "complete -c snapdiff");
    if (o.commands != FOR_ALL) {
        add(t, " -n '%s ", strict ? "__snapdiff_is" : "__snapdiff_for");
        add_command_names(t, group, " ");
        add(t, "'");
    }
    if (o.short_name) add(t, " -s %c", o.short_name);
    add(t, " -l %s", o.long_name);
    const char *words;
    switch (value_kind(i, first, &words)) {
    case VALUE_WORDS: add(t, " -x -a '%s'", words); break;
    case VALUE_FILE: add(t, " -r -F"); break;
    case VALUE_DIR: add(t, " -x -a '(__fish_complete_directories)'"); break;
    case VALUE_ANY: add(t, " -x"); break;
    case VALUE_NONE: break;
    }
    char help[HELP_MAX];
    short_help(i, o.commands == FOR_ALL ? CMD_NONE : first, help, sizeof help);
    add(t, " -d '");
    add_escaped(t, help, fish_from, fish_to);
    add(t, "'\n");
}

static void gen_fish(struct text *t)
{
    add(t, "# Does OPTION take a value (the next word)?\n"
           "function __snapdiff_takes_value\n    contains -- $argv[1] ");
    add_value_options(t, " ");
    add(t, "\nend\n\n# The commands, in --help's order.\nfunction __snapdiff_commands\n"
           "    string split ' ' -- '");
    add_commands(t);
    add(t, "'\nend\n\n# Commands, while none is given; after help, the commands again.\n");
    for (size_t c = 0; c < cli_command_count(); c++) {
        enum cli_command cmd = cli_command_at(c);
        add(t, "complete -c snapdiff -n 'test -z \"$(__snapdiff_command)\"' -a %s -d '",
            cli_command_name(cmd));
        add_escaped(t, cli_command_help(cmd), fish_from, fish_to);
        add(t, "'\n");
    }
    add(t, "complete -c snapdiff -n 'test \"$(__snapdiff_command)\" = help' -a '");
    add_commands(t);
    add(t, "'\n\n# The options, each for the commands it applies to; where its values differ\n"
           "# by command, one line per group (before a command is given: a diff's).\n");
    for (size_t i = 0; i < cli_option_count(); i++) {
        unsigned groups[32];
        enum cli_command firsts[32];
        size_t n = value_groups(i, groups, firsts);
        for (size_t g = 0; g < n; g++)
            fish_option(t, i, n == 1 ? option(i).commands : groups[g], firsts[g], g + 1 < n);
    }
}

/* ---------- splicing ---------- */

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    struct text t = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) add(&t, "%.*s", (int)got, chunk);
    fclose(f);
    *len = t.n;
    return t.s ? t.s : calloc(1, 1);
}

/* The first line from `from` on that is a comment starting with `marker` ("# BEGIN
 * GENERATED", ".\" END GENERATED OPTIONS"): its start, or with past, the start of the next
 * line; NULL when there is none. Prose that names the markers is no marker. */
static const char *marker_line(const char *from, const char *marker, bool past)
{
    for (const char *line = from; *line;) {
        const char *nl = strchr(line, '\n');
        const char *next = nl ? nl + 1 : line + strlen(line);
        const char *p = line;
        if (strncmp(p, ".\\\"", 3) == 0) p += 3;
        else if (*p == '#') p++;
        else p = NULL;
        if (p) {
            while (*p == ' ') p++;
            if (strncmp(p, marker, strlen(marker)) == 0) return past ? next : line;
        }
        line = next;
    }
    return NULL;
}

/* Writes (or with check, compares) SRC/rel with its generated block replaced by `gen`.
 * Returns 0 when unchanged or written, 1 when it differs (check), 2 on an error. */
static int splice(const char *src, const char *rel, const struct text *gen, bool check)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", src, rel);
    size_t len;
    char *old = read_all(path, &len);
    if (!old) {
        fprintf(stderr, "snapdiff-gendocs: cannot read %s\n", path);
        return 2;
    }
    const char *body = marker_line(old, "BEGIN GENERATED", true);
    const char *end = body ? marker_line(body, "END GENERATED", false) : NULL;
    if (!end) {
        fprintf(stderr, "snapdiff-gendocs: %s has no BEGIN GENERATED ... END GENERATED lines\n",
                path);
        free(old);
        return 2;
    }
    struct text now = {0};
    add(&now, "%.*s%.*s%s", (int)(body - old), old, (int)gen->n, gen->s, end);
    int rc = 0;
    if (now.n != len || memcmp(now.s, old, len) != 0) {
        if (check) {
            fprintf(stderr, "snapdiff-gendocs: %s differs from what the option table in "
                    "src/cli/options.c gives: run `cmake --build build --target docs` "
                    "and commit it\n", rel);
            rc = 1;
        } else {
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(now.s, 1, now.n, f) != now.n || fclose(f) != 0) {
                fprintf(stderr, "snapdiff-gendocs: cannot write %s\n", path);
                rc = 2;
            } else {
                printf("snapdiff-gendocs: wrote %s\n", rel);
            }
        }
    }
    free(now.s);
    free(old);
    return rc;
}

/* Every word the completions offer for a value is one the parser takes for that command:
 * `snapdiff CMD --OPT=WORD` must not be refused as a bad value (apply_option's
 * "--OPT: 'WORD' is not ..."). Other complaints (no files given) are not about the word.
 * Returns the number of words refused. */
static int check_values(void)
{
    int refused = 0;
    for (size_t i = 0; i < cli_option_count(); i++) {
        struct cli_option_info o = option(i);
        for (size_t c = 0; c < cli_command_count(); c++) {
            enum cli_command cmd = cli_command_at(c);
            const char *words;
            if (!applies(i, cmd) || value_kind(i, cmd, &words) != VALUE_WORDS) continue;
            char list[512];
            snprintf(list, sizeof list, "%s", words);
            for (char *w = strtok(list, " "); w; w = strtok(NULL, " ")) {
                char arg[256], bad[256], err[512];
                snprintf(arg, sizeof arg, "--%s=%s", o.long_name, w);
                snprintf(bad, sizeof bad, "--%s: '", o.long_name);
                char *argv[] = {"snapdiff", (char *)cli_command_name(cmd), arg, NULL};
                struct cli_opts opts;
                err[0] = '\0';
                enum opt_result r = cli_parse(3, argv, &opts, err, sizeof err);
                cli_opts_release(&opts);
                if (r == OPT_ERROR && strncmp(err, bad, strlen(bad)) == 0) {
                    fprintf(stderr, "snapdiff-gendocs: the completions offer '%s' for "
                            "%s --%s, which the parser refuses: %s\n", w,
                            cli_command_name(cmd), o.long_name, err);
                    refused++;
                }
            }
        }
    }
    return refused;
}

int main(int argc, char **argv)
{
    bool check = argc == 3 && strcmp(argv[1], "--check") == 0;
    if (argc != 2 + check) {
        fprintf(stderr, "usage: snapdiff-gendocs [--check] SOURCE_DIR\n");
        return 2;
    }
    const char *src = argv[argc - 1];
    static const struct {
        const char *file;
        void (*gen)(struct text *);
    } targets[] = {
        {"man/snapdiff.1", gen_man},
        {"completions/snapdiff.bash", gen_bash},
        {"completions/_snapdiff", gen_zsh},
        {"completions/snapdiff.fish", gen_fish},
    };
    if (check_values() > 0) return 2;   /* fix option_values in options.c first */
    int worst = 0;
    for (size_t k = 0; k < sizeof targets / sizeof targets[0]; k++) {
        struct text t = {0};
        targets[k].gen(&t);
        int rc = splice(src, targets[k].file, &t, check);
        if (rc > worst) worst = rc;
        free(t.s);
    }
    if (check && worst == 0)
        printf("snapdiff-gendocs: the man page's options and the completions follow the "
               "option table\n");
    return worst;
}
