/* mcp_tools.c - the subcommands as MCP tools: schemas from the one option table, and a
 * call run through the subcommand itself.
 *
 * A tools/call is turned into the argument vector the CLI would get (`snapdiff diff
 * --json --max-memory=... --OPTION=VALUE ... -- OLD NEW`), parsed by cli_parse and run by
 * the same cmd_* function (the registry's, commands.c), its output stream and msg.h's
 * messages pointed at memory for the call. So structuredContent is the CLI's --json
 * document byte for byte, the option names, defaults and checks are the CLI's, and an
 * error is the CLI's one line. Nothing is re-implemented here: this file maps arguments,
 * checks paths (mcp_paths.c), bounds the result and words a short summary.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "mcp.h"
#include "msg.h"
#include "snapdiff/units.h"

enum { MAX_ARGV = 4096, DEFAULT_MAX_ITEMS = 100 };

/* Several documents from one call (mcp_tools.c's read_documents, docs/mcp.md). */
#define DOCUMENTS "snapdiff.mcp-documents/1"

/* A tool is a command of the registry (commands.def) with a place in tools/list: its
 * name, usage and help, its inputs and its documents' schemas come from there. */
struct tool {
    const struct cli_command_info *c;
    const char *name;
    enum cli_command cmd;
    unsigned min_files, max_files;    /* max 0: any number */
    bool writes;                      /* summarize, report: -o under a root, no JSON */
};

static bool tool_of(enum cli_command cmd, struct tool *t)
{
    const struct cli_command_info *c = cli_command_info(cmd);
    if (!c || !c->tool) return false;
    *t = (struct tool){c, c->name, cmd, c->min_files,
                       c->tool_flags & TOOL_ONE_INPUT ? 1 : c->max_files,
                       (c->tool_flags & TOOL_WRITES) != 0};
    return true;
}

/* Options a tool never takes: the output format and its colours are the server's choice,
 * --svg writes a file, --map and --ascii draw text, --repo-root is for --format github,
 * --jobs is the server's to share, --root is the server's own; -o only for the writers. */
static bool option_hidden(const char *name, const struct tool *t)
{
    static const char *const hidden[] = {"help", "version", "json", "format", "no-color",
                                         "color", "quiet", "svg", "map", "ascii",
                                         "repo-root", "jobs", "root"};
    for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
        if (strcmp(name, hidden[i]) == 0) return true;
    return strcmp(name, "output") == 0 && !t->writes;
}

json_t *mcp_string(const char *s)
{
    json_t *j = json_string(s);
    if (j) return j;
    char *copy = strdup(s);
    if (!copy) return NULL;
    for (char *c = copy; *c; c++)
        if ((unsigned char)*c >= 0x80 || (unsigned char)*c < 0x20) *c = '?';
    j = json_string(copy);
    free(copy);
    return j;
}

/* ---------- schemas ---------- */

/* "(default 20)" in an option's help: its default as --help states it; NULL when the
 * help names none or words it ("default: half of physical memory"). */
static json_t *help_default(const char *help, const char *arg)
{
    const char *d = strstr(help, "(default ");
    if (!d) return NULL;
    d += strlen("(default ");
    size_t n = strcspn(d, "),; ");
    if (n == 0 || n > 31 || (d[n] != ')' && d[n] != ',' && d[n] != ';')) return NULL;
    char tok[32];
    memcpy(tok, d, n);
    tok[n] = '\0';
    char *end;
    double v = strtod(tok, &end);
    if (*end == '\0')
        return strcmp(arg, "N") == 0 ? json_integer((json_int_t)v) : json_real(v);
    return json_string(tok);
}

/* The JSON type of an option's value, from its argument's name in the table. */
static json_t *value_schema(const struct cli_option_info *o)
{
    if (!o->arg) return json_pack("{s:s}", "type", "boolean");
    const char *a = o->arg;
    json_t *item;
    if (strcmp(a, "N") == 0 && strcmp(o->long_name, "steps") != 0)
        item = json_pack("{s:s}", "type", "integer");
    else if (strcmp(a, "SIZE") == 0 || strcmp(o->long_name, "steps") == 0)
        item = json_pack("{s:[s,s]}", "type", "string", "integer");
    else if (strcmp(a, "P") == 0 || strcmp(a, "F") == 0 || strcmp(a, "X") == 0 ||
             strcmp(a, "PCT") == 0)
        item = json_pack("{s:s}", "type", "number");
    else
        item = json_pack("{s:s}", "type", "string");
    if (o->repeatable) return json_pack("{s:s,s:o}", "type", "array", "items", item);
    return item;
}

static json_t *option_schema(const struct cli_option_info *o)
{
    json_t *s = value_schema(o);
    char desc[600];
    snprintf(desc, sizeof desc, "--%s%s%s: %s", o->long_name, o->arg ? " " : "",
             o->arg ? o->arg : "", o->help);
    json_object_set_new(s, "description", mcp_string(desc));
    json_t *d = o->arg ? help_default(o->help, o->arg) : NULL;
    if (d) json_object_set_new(s, "default", d);
    return s;
}

static json_t *files_schema(const struct tool *t)
{
    char desc[300];
    snprintf(desc, sizeof desc, "the inputs, as `snapdiff %s %s` takes them: paths under the "
             "server's roots (relative ones: to the first root)", t->name,
             cli_command_usage(t->cmd));
    json_t *s = json_pack("{s:s,s:{s:s},s:i,s:s}", "type", "array", "items", "type", "string",
                          "minItems", (json_int_t)t->min_files, "description", desc);
    if (t->max_files) json_object_set_new(s, "maxItems", json_integer(t->max_files));
    return s;
}

static json_t *input_schema(const struct tool *t)
{
    json_t *props = json_object();
    json_object_set_new(props, "files", files_schema(t));
    for (size_t i = 0; i < cli_option_count(); i++) {
        struct cli_option_info o;
        cli_option_at(i, &o);
        if (!(o.commands & (1u << t->cmd)) || option_hidden(o.long_name, t)) continue;
        json_object_set_new(props, o.long_name, option_schema(&o));
    }
    json_t *required = json_pack("[s]", "files");
    if (t->writes) {
        json_object_set_new(props, "overwrite", json_pack(
            "{s:s,s:b,s:s}", "type", "boolean", "default", 0, "description",
            "replace an existing output file (never done otherwise)"));
        json_array_append_new(required, json_string("output"));
    } else {
        json_object_set_new(props, "max_items", json_pack(
            "{s:s,s:i,s:i,s:s}", "type", "integer", "minimum", 0, "default",
            DEFAULT_MAX_ITEMS, "description",
            "longest array kept in the result (0: no limit); a longer one is cut to its "
            "first items (largest first) and the result says so in truncated, "
            "truncated_arrays"));
    }
    return json_pack("{s:s,s:o,s:o,s:b}", "type", "object", "properties", props,
                     "required", required, "additionalProperties", 0);
}

/* The "schema" values the result takes: the command's own (docs/json-*.md), then the
 * several-documents one; the writers' result is this server's own small one. */
static json_t *schema_names(const struct tool *t)
{
    json_t *names = json_array();
    if (t->writes) {
        json_array_append_new(names, json_string("snapdiff.mcp-output/1"));
        return names;
    }
    for (const char *p = t->c->schemas; *p;) {
        size_t n = strcspn(p, " ");
        if (n) json_array_append_new(names, json_stringn(p, n));
        p += n + (p[n] == ' ');
    }
    json_array_append_new(names, json_string(DOCUMENTS));
    return names;
}

static json_t *output_schema(const struct tool *t)
{
    json_t *names = schema_names(t);
    json_t *props = json_pack("{s:{s:s,s:o}}", "schema", "type", "string", "enum", names);
    if (t->writes) {
        json_object_set_new(props, "output", json_pack("{s:s}", "type", "string"));
        json_object_set_new(props, "bytes", json_pack("{s:s}", "type", "integer"));
    } else {
        json_object_set_new(props, "truncated", json_pack("{s:s}", "type", "boolean"));
        json_object_set_new(props, "truncated_arrays", json_pack("{s:s}", "type", "array"));
        json_object_set_new(props, "documents", json_pack("{s:s,s:{s:s}}", "type", "array",
                                                          "items", "type", "object"));
    }
    return json_pack("{s:s,s:o,s:[s]}", "type", "object", "properties", props,
                     "required", "schema");
}

static json_t *tool_entry(const struct tool *t, bool structured)
{
    char desc[600];
    if (t->writes)
        snprintf(desc, sizeof desc, "%s (`snapdiff %s %s -o FILE`): writes FILE under a root, "
                 "never over an existing one unless overwrite is true",
                 cli_command_help(t->cmd), t->name, cli_command_usage(t->cmd));
    else
        snprintf(desc, sizeof desc, "%s (`snapdiff %s %s --json`). The fields: resource "
                 "snapdiff://docs/json-%s.md", cli_command_help(t->cmd), t->name,
                 cli_command_usage(t->cmd), t->cmd == CMD_DIFF ? "diff" : t->name);
    json_t *e = json_pack("{s:s,s:s,s:o}", "name", t->name, "description", desc,
                          "inputSchema", input_schema(t));
    if (structured) json_object_set_new(e, "outputSchema", output_schema(t));
    json_object_set_new(e, "annotations", json_pack(
        "{s:b,s:b,s:b}", "readOnlyHint", !t->writes, "destructiveHint", 0,
        "openWorldHint", 0));
    return e;
}

json_t *mcp_tools_list(bool structured)
{
    json_t *list = json_array();
    for (unsigned place = 1; place < CMD_END; place++)
        for (enum cli_command cmd = CMD_NONE + 1; cmd < CMD_END; cmd++) {
            struct tool t;
            if (tool_of(cmd, &t) && t.c->tool == place)
                json_array_append_new(list, tool_entry(&t, structured));
        }
    return json_pack("{s:o}", "tools", list);
}

/* ---------- a call: arguments to an argument vector ---------- */

struct argv_buf {
    char *v[MAX_ARGV];
    int n;
};

static bool push(struct argv_buf *a, char *s)
{
    if (!s || a->n + 1 >= MAX_ARGV) {
        free(s);
        return false;
    }
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
    return true;
}

static bool pushf(struct argv_buf *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool pushf(struct argv_buf *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) s = NULL;
    va_end(ap);
    return push(a, s);
}

static void argv_free(struct argv_buf *a)
{
    for (int i = 0; i < a->n; i++) free(a->v[i]);
    a->n = 0;
}

static bool find_option(const char *name, const struct tool *t, struct cli_option_info *out)
{
    for (size_t i = 0; i < cli_option_count(); i++) {
        cli_option_at(i, out);
        if (strcmp(out->long_name, name) == 0)
            return (out->commands & (1u << t->cmd)) && !option_hidden(name, t);
    }
    return false;
}

/* A JSON string as C text; NULL when it is no string or holds a NUL (which would cut it
 * short: "a\u0000b" must not pass for "a"). */
static const char *plain_string(const json_t *v)
{
    const char *s = json_string_value(v);
    return s && strlen(s) == json_string_length(v) ? s : NULL;
}

/* One value as its text on the command line; false when its JSON type is not the option's. */
static bool value_text(const json_t *v, const struct cli_option_info *o, char *buf, size_t size)
{
    if (json_is_string(v)) {
        const char *s = plain_string(v);
        if (!s) return false;
        snprintf(buf, size, "%s", s);
        return strlen(s) < size;
    }
    if (json_is_integer(v)) {
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return true;
    }
    if (json_is_real(v) && o->arg && strcmp(o->arg, "N") != 0 && strcmp(o->arg, "SIZE") != 0) {
        snprintf(buf, size, "%.17g", json_real_value(v));
        return true;
    }
    return false;
}

static bool add_option(struct argv_buf *a, const char *key, const json_t *v,
                       const struct cli_option_info *o, struct mcp_fault *f)
{
    char text[4096];
    if (!o->arg) {
        if (!json_is_boolean(v)) {
            mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.%s: expected true or false", key);
            return false;
        }
        return json_is_false(v) || pushf(a, "--%s", key);
    }
    if (o->repeatable && json_is_array(v)) {
        size_t i;
        const json_t *item;
        json_array_foreach(v, i, item) {
            if (!value_text(item, o, text, sizeof text)) {
                mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.%s[%zu]: expected a string",
                              key, i);
                return false;
            }
            if (!pushf(a, "--%s=%s", key, text)) goto full;
        }
        return true;
    }
    if (!value_text(v, o, text, sizeof text)) {
        mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.%s: expected %s (%s)", key,
                      strcmp(o->arg, "N") == 0 ? "an integer"
                      : strcmp(o->arg, "SIZE") == 0 ? "a size: bytes or a string like 8GiB"
                      : "a string or number", o->arg);
        return false;
    }
    if (pushf(a, "--%s=%s", key, text)) return true;
full:
    mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.%s: too many values", key);
    return false;
}

/* --max-memory: the server's, or a smaller one the call asks for. */
static bool add_max_memory(struct argv_buf *a, const struct mcp_server *s, const json_t *v,
                           struct mcp_fault *f)
{
    uint64_t want = s->max_memory;
    if (v) {
        bool ok = json_is_integer(v) ? json_integer_value(v) > 0
                  : json_is_string(v) && sd_parse_size(json_string_value(v), &want);
        if (ok && json_is_integer(v)) want = (uint64_t)json_integer_value(v);
        if (!ok) {
            mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.max-memory: expected a size "
                          "(bytes, or a string like 8GiB)");
            return false;
        }
        if (want > s->max_memory) {
            char cap[32];
            sd_format_bytes(s->max_memory, cap, sizeof cap);
            mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.max-memory: above the server's "
                          "limit of %s (snapdiff mcp --max-memory)", cap);
            return false;
        }
    }
    return pushf(a, "--max-memory=%llu", (unsigned long long)want);
}

static bool add_files(struct argv_buf *a, const struct mcp_server *s, const struct tool *t,
                      const json_t *files, struct mcp_fault *f)
{
    if (!files) {
        mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.files: missing (the inputs: %s)",
                      cli_command_usage(t->cmd));
        return false;
    }
    if (!json_is_array(files) || json_array_size(files) < t->min_files ||
        (t->max_files && json_array_size(files) > t->max_files)) {
        if (t->min_files == t->max_files)
            mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.files: expected an array of %u "
                          "path%s (%s)", t->min_files, t->min_files == 1 ? "" : "s",
                          cli_command_usage(t->cmd));
        else
            mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.files: expected an array of at "
                          "least %u path", t->min_files);
        return false;
    }
    if (!push(a, strdup("--"))) goto full;
    size_t i;
    const json_t *p;
    json_array_foreach(files, i, p) {
        char field[32];
        snprintf(field, sizeof field, "files[%zu]", i);
        if (!plain_string(p)) {
            mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.%s: expected a path (a string)", field);
            return false;
        }
        char *real = mcp_path_read(s, plain_string(p), field, f);
        if (!real) return false;
        if (!push(a, real)) goto full;
    }
    return true;
full:
    mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.files: too many files");
    return false;
}

/* The path options: --config and plan's --check are read, -o written; all checked
 * against the roots. */
static bool add_path_option(struct argv_buf *a, const struct mcp_server *s, const char *key,
                            const json_t *v, bool overwrite, struct mcp_fault *f)
{
    const char *path = plain_string(v);
    if (!path) {
        mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.%s: expected a path (a string)", key);
        return false;
    }
    bool write = strcmp(key, "output") == 0;
    char *real = write ? mcp_path_write(s, path, overwrite, key, f)
                       : mcp_path_read(s, path, key, f);
    if (!real) return false;
    bool ok = pushf(a, "--%s=%s", key, real);
    free(real);
    return ok;
}

/* The whole vector: `snapdiff TOOL [--json] --no-color OPTIONS --max-memory=M -- FILES`. */
static bool build_argv(struct argv_buf *a, const struct mcp_server *s, const struct tool *t,
                       const json_t *args, struct mcp_fault *f)
{
    push(a, strdup("snapdiff"));
    push(a, strdup(t->name));
    if (!t->writes) push(a, strdup("--json"));
    push(a, strdup("--no-color"));
    const json_t *ow = json_object_get(args, "overwrite");
    if (ow && (!t->writes || !json_is_boolean(ow))) {
        mcp_fault_set(f, MCP_INVALID_PARAMS, t->writes ? "arguments.overwrite: expected true or false"
                      : "arguments.overwrite: '%s' writes no file", t->name);
        return false;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)args, key, v) {
        struct cli_option_info o;
        if (strcmp(key, "files") == 0 || strcmp(key, "overwrite") == 0 ||
            strcmp(key, "max-memory") == 0 || (strcmp(key, "max_items") == 0 && !t->writes))
            continue;
        if (!find_option(key, t, &o)) {
            mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.%s: '%s' takes no such option "
                          "(tools/list gives its inputSchema)", key, t->name);
            return false;
        }
        bool ok = strcmp(key, "config") == 0 || strcmp(key, "output") == 0 ||
                          strcmp(key, "check") == 0
                      ? add_path_option(a, s, key, v, json_is_true(ow), f)
                      : add_option(a, key, v, &o, f);
        if (!ok) return false;
    }
    if (t->writes && !json_object_get(args, "output")) {
        mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.output: missing (the file to write, "
                      "under a root)");
        return false;
    }
    return add_max_memory(a, s, json_object_get(args, "max-memory"), f) &&
           add_files(a, s, t, json_object_get(args, "files"), f);
}

/* ---------- a call: running the command ---------- */

struct captured {
    char *out, *err;
    size_t n_out, n_err;
};

/* Run the command through the registry (commands.c) with its output and its messages in
 * memory. -1: the streams could not be made. */
static int run_captured(const struct cli_opts *o, struct captured *c)
{
    FILE *mo = open_memstream(&c->out, &c->n_out);
    FILE *me = open_memstream(&c->err, &c->n_err);
    cli_run_fn *run = cli_command_run(o->command);
    if (!mo || !me || !run) {
        if (mo) fclose(mo);
        if (me) fclose(me);
        return -1;
    }
    msg_set_stream(me);
    msg_set_quiet(false);
    int status = run(o, mo);
    msg_set_stream(NULL);
    fclose(mo);
    fclose(me);
    if (c->n_err) fwrite(c->err, 1, c->n_err, stderr);   /* the server's log */
    return status;
}

/* ---------- a call: the result ---------- */

struct cut {
    json_t *list;      /* [{"path", "total", "kept"}] */
    size_t max;
};

/* Cut every array longer than max to its first max items, noting where (JSON Pointer). */
static void cut_arrays(json_t *j, char *path, size_t len, size_t size, struct cut *c)
{
    if (json_is_array(j)) {
        size_t total = json_array_size(j);
        if (total > c->max) {
            while (json_array_size(j) > c->max) json_array_remove(j, json_array_size(j) - 1);
            json_array_append_new(c->list, json_pack("{s:s,s:I,s:I}", "path", len ? path : "",
                                                     "total", (json_int_t)total, "kept",
                                                     (json_int_t)c->max));
        }
        for (size_t i = 0; i < json_array_size(j); i++) {
            int k = snprintf(path + len, size - len, "/%zu", i);
            if (k > 0 && (size_t)k < size - len)
                cut_arrays(json_array_get(j, i), path, len + (size_t)k, size, c);
            path[len] = '\0';
        }
    } else if (json_is_object(j)) {
        const char *key;
        json_t *v;
        json_object_foreach(j, key, v) {
            int k = snprintf(path + len, size - len, "/%s", key);
            if (k > 0 && (size_t)k < size - len) cut_arrays(v, path, len + (size_t)k, size, c);
            path[len] = '\0';
        }
    }
}

static size_t bound(json_t *doc, size_t max)
{
    if (max == 0 || !json_is_object(doc)) return 0;
    struct cut c = {json_array(), max};
    char path[1024] = "";
    cut_arrays(doc, path, 0, sizeof path, &c);
    size_t n = json_array_size(c.list);
    if (n) {
        json_object_set_new(doc, "truncated", json_true());
        json_object_set_new(doc, "truncated_arrays", c.list);
    } else {
        json_decref(c.list);
    }
    return n;
}

/* Append to the summary; a full buffer just stops it. */
static void say(char *buf, size_t size, size_t *k, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void say(char *buf, size_t size, size_t *k, const char *fmt, ...)
{
    if (*k >= size) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *k, size - *k, fmt, ap);
    va_end(ap);
    if (n > 0) *k = *k + (size_t)n < size ? *k + (size_t)n : size;
}

/* The first integer field named *bytes of a group, for its headline. */
static const char *bytes_field(const json_t *o, json_int_t *v)
{
    static const char *const names[] = {"delta_bytes", "bytes", "live_bytes", "allocated_bytes"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const json_t *x = json_object_get(o, names[i]);
        if (json_is_integer(x)) {
            *v = json_integer_value(x);
            return names[i];
        }
    }
    return NULL;
}

struct headlines {
    char *buf;
    size_t size, *k;
    int groups, verdicts;
};

/* The document's first groups (culprit first, as the commands order them) and its
 * verdicts, in document order: what an agent reads first. */
static void find_headlines(const json_t *j, struct headlines *h, int depth)
{
    if (depth > 8) return;
    if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++) find_headlines(json_array_get(j, i), h, depth + 1);
        return;
    }
    if (!json_is_object(j)) return;
    const char *key = json_string_value(json_object_get(j, "key"));
    json_int_t v = 0;
    const char *field = key ? bytes_field(j, &v) : NULL;
    if (field && h->groups < 3) {
        char size[32];
        if (strcmp(field, "delta_bytes") == 0) sd_format_delta((int64_t)v, size, sizeof size);
        else sd_format_bytes((uint64_t)v, size, sizeof size);
        say(h->buf, h->size, h->k, "\n  %s %s: %s", field, size, key);
        h->groups++;
    }
    const char *verdict = json_string_value(json_object_get(j, "verdict"));
    const json_t *dev = json_object_get(j, "device");
    if (verdict && json_is_integer(dev) && h->verdicts < 4) {
        say(h->buf, h->size, h->k, "\n  device %" JSON_INTEGER_FORMAT ": %s", json_integer_value(dev), verdict);
        h->verdicts++;
    }
    const char *k2;
    const json_t *v2;
    json_object_foreach((json_t *)j, k2, v2) {
        if (json_is_array(v2) || json_is_object(v2)) find_headlines(v2, h, depth + 1);
    }
}

/* The short text beside the document: what ran, how it ended, the top level's plain
 * figures (the document has the rest), the CLI's warnings, and what was cut. */
static char *summary_text(const struct tool *t, int status, const json_t *doc, size_t n_cut,
                          size_t max_items, const struct captured *c)
{
    char buf[4096];
    size_t k = 0;
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    say(buf, sizeof buf, &k, "snapdiff %s: %s, exit status %d%s", t->name,
        schema ? schema : "no document", status,
        status == EXIT_CHECK_FAILED ? " (a limit was broken: the check failed)" : "");
    const char *key;
    const json_t *v;
    int shown = 0;
    json_object_foreach((json_t *)doc, key, v) {
        if (strcmp(key, "schema") == 0 || strncmp(key, "truncated", 9) == 0 || shown >= 12)
            continue;
        if (json_is_string(v)) say(buf, sizeof buf, &k, "\n%s: %s", key, json_string_value(v));
        else if (json_is_integer(v))
            say(buf, sizeof buf, &k, "\n%s: %" JSON_INTEGER_FORMAT, key, json_integer_value(v));
        else if (json_is_real(v)) say(buf, sizeof buf, &k, "\n%s: %g", key, json_real_value(v));
        else if (json_is_boolean(v)) say(buf, sizeof buf, &k, "\n%s: %s", key, json_is_true(v) ? "true" : "false");
        else if (json_is_array(v)) say(buf, sizeof buf, &k, "\n%s: %zu items", key, json_array_size(v));
        else continue;
        shown++;
    }
    struct headlines h = {buf, sizeof buf, &k, 0, 0};
    find_headlines(doc, &h, 0);
    if (c->n_err) say(buf, sizeof buf, &k, "\n%.*s", (int)(c->n_err > 1500 ? 1500 : c->n_err), c->err);
    if (n_cut)
        say(buf, sizeof buf, &k, "\ntruncated: %zu array%s cut to their first %zu items "
            "(truncated_arrays says which); call again with a larger max_items (0: no limit) "
            "or a smaller top for all of them", n_cut, n_cut == 1 ? "" : "s", max_items);
    while (k > 0 && k <= sizeof buf && buf[k - 1] == '\n') k--;
    return strndup(buf, k < sizeof buf ? k : sizeof buf - 1);
}

static json_t *text_block(const char *s)
{
    return json_pack("{s:s,s:o}", "type", "text", "text", mcp_string(s ? s : ""));
}

/* A failed call: the CLI's message(s), as the agent may act on them. */
static json_t *error_result(const char *message)
{
    return json_pack("{s:[o],s:b}", "content", text_block(message), "isError", 1);
}

static json_t *written_result(const struct tool *t, const char *output, int status,
                              const struct captured *c, bool structured)
{
    struct stat sb;
    json_int_t bytes = stat(output, &sb) == 0 ? (json_int_t)sb.st_size : 0;
    json_t *doc = json_pack("{s:s,s:s,s:o,s:I}", "schema", "snapdiff.mcp-output/1",
                            "command", t->name, "output", mcp_string(output), "bytes", bytes);
    char text[2048];
    snprintf(text, sizeof text, "snapdiff %s wrote %s (%lld bytes), exit status %d%s%.*s",
             t->name, output, (long long)bytes, status, c->n_err ? "\n" : "",
             (int)(c->n_err > 1500 ? 1500 : c->n_err), c->err ? c->err : "");
    char *dump = json_dumps(doc, JSON_COMPACT);
    json_t *content = json_pack("[o,o]", text_block(text), text_block(dump));
    free(dump);
    json_t *r = json_pack("{s:o,s:b}", "content", content, "isError", 0);
    if (structured) json_object_set(r, "structuredContent", doc);
    json_decref(doc);
    return r;
}

/* The command's output as one document: the document itself, or, when it wrote several
 * (one per snapshot: top and replay over several files or the ranks of an archive),
 * {"schema": "snapdiff.mcp-documents/1", "documents": [...]} in the order written. NULL
 * when it does not read back as JSON (*jerr says where). */
static json_t *read_documents(const char *buf, size_t len, json_error_t *jerr)
{
    json_t *docs = json_array();
    size_t at = 0;
    for (;;) {
        while (at < len && (buf[at] == ' ' || buf[at] == '\n' || buf[at] == '\t' || buf[at] == '\r'))
            at++;
        if (at >= len) break;
        json_t *d = json_loadb(buf + at, len - at, JSON_DISABLE_EOF_CHECK, jerr);
        if (!d || !json_is_object(d) || jerr->position == 0) {
            json_decref(d);
            json_decref(docs);
            return NULL;
        }
        json_array_append_new(docs, d);
        at += (size_t)jerr->position;
    }
    if (json_array_size(docs) == 1) {
        json_t *one = json_incref(json_array_get(docs, 0));
        json_decref(docs);
        return one;
    }
    if (json_array_size(docs) == 0) {
        json_decref(docs);
        snprintf(jerr->text, sizeof jerr->text, "no document written");
        return NULL;
    }
    return json_pack("{s:s,s:o}", "schema", "snapdiff.mcp-documents/1", "documents", docs);
}

static json_t *document_result(const struct tool *t, int status, const struct captured *c,
                               size_t max_items, bool structured)
{
    json_error_t jerr;
    memset(&jerr, 0, sizeof jerr);
    json_t *doc = read_documents(c->out ? c->out : "", c->n_out, &jerr);
    if (!doc) {
        char msg[512];
        snprintf(msg, sizeof msg, "snapdiff %s: its JSON did not read back (%s, line %d): "
                 "please report this", t->name, jerr.text, jerr.line);
        return error_result(msg);
    }
    size_t n_cut = bound(doc, max_items);
    char *text = summary_text(t, status, doc, n_cut, max_items, c);
    char *dump = json_dumps(doc, JSON_COMPACT);
    json_t *content = json_pack("[o,o]", text_block(text), text_block(dump));
    free(text);
    free(dump);
    json_t *r = json_pack("{s:o,s:b}", "content", content, "isError", 0);
    if (structured) json_object_set(r, "structuredContent", doc);
    json_decref(doc);
    return r;
}

static bool find_tool(const char *name, struct tool *t)
{
    enum cli_command cmd;
    return cli_command_find(name, &cmd) && tool_of(cmd, t);
}

static bool max_items_arg(const json_t *args, size_t *out, struct mcp_fault *f)
{
    const json_t *v = json_object_get(args, "max_items");
    *out = DEFAULT_MAX_ITEMS;
    if (!v) return true;
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.max_items: expected an integer >= 0");
        return false;
    }
    *out = (size_t)json_integer_value(v);
    return true;
}

json_t *mcp_tool_call(const struct mcp_server *s, const json_t *params, bool structured,
                      struct mcp_fault *f)
{
    const json_t *name = json_object_get(params, "name");
    if (!json_is_string(name)) {
        mcp_fault_set(f, MCP_INVALID_PARAMS, "params.name: missing (the tool to call)");
        return NULL;
    }
    struct tool tool;
    const struct tool *t = &tool;
    if (!find_tool(json_string_value(name), &tool)) {
        mcp_fault_set(f, MCP_INVALID_PARAMS, "params.name: unknown tool '%s' (tools/list "
                      "names them)", json_string_value(name));
        return NULL;
    }
    json_t *args = json_object_get(params, "arguments");
    if (args && !json_is_object(args)) {
        mcp_fault_set(f, MCP_INVALID_PARAMS, "params.arguments: expected an object");
        return NULL;
    }
    json_t *empty = args ? NULL : json_object();
    if (!args) args = empty;
    size_t max_items = 0;
    struct argv_buf a = {.n = 0};
    json_t *result = NULL;
    if (max_items_arg(args, &max_items, f) && build_argv(&a, s, t, args, f)) {
        struct cli_opts o;
        char errbuf[512] = "";
        enum opt_result pr = cli_parse(a.n, a.v, &o, errbuf, sizeof errbuf);
        if (pr != OPT_OK) {
            /* "--top: 'x' is not ...": the field is the option the message names */
            const char *dash = strstr(errbuf, "--");
            size_t n = dash ? strspn(dash + 2, "abcdefghijklmnopqrstuvwxyz-") : 0;
            mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments%s%.*s: %s", n ? "." : "", (int)n,
                          dash ? dash + 2 : "", errbuf);
        } else {
            struct captured c = {0};
            int status = run_captured(&o, &c);
            if (status < 0)
                mcp_fault_set(f, MCP_INTERNAL_ERROR, "out of memory");
            else if (status == EXIT_TROUBLE)
                result = error_result(c.n_err ? c.err : "snapdiff: the command failed");
            else if (t->writes)
                result = written_result(t, o.output, status, &c, structured);
            else
                result = document_result(t, status, &c, max_items, structured);
            free(c.out);
            free(c.err);
        }
        cli_opts_release(&o);
    }
    argv_free(&a);
    json_decref(empty);
    return result;
}
