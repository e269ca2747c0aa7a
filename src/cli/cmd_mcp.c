/* cmd_mcp.c - `snapdiff mcp`: the analyses as tools an AI agent calls, over the Model
 * Context Protocol on stdin/stdout (newline-delimited JSON-RPC 2.0).
 *
 * One request at a time: read a line, answer it, read the next; end of input ends the
 * server. Both eras of the protocol are spoken (docs/mcp.md cites each behaviour's
 * revision): the handshake revisions 2024-11-05 to 2025-11-25 (initialize with version
 * negotiation, notifications/initialized, ping) and the stateless 2026-07-28 (server/
 * discover; the version in each request's _meta, no session). stdout carries protocol
 * messages only: the real stdout is moved to a private descriptor and descriptor 1 points
 * at /dev/null, so nothing else can write there; logs go to stderr.
 */
#define _GNU_SOURCE   /* realpath, strndup */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "mcp.h"
#include "msg.h"
#include "snapdiff/snapdiff.h"
#include "snapdiff/units.h"

#define MODERN_VERSION "2026-07-28"
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
/* The handshake revisions, newest first: initialize answers with the client's when it is
 * one of these, else with the newest (2025-11-25 basic/lifecycle, version negotiation). */
static const char *const handshake_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                 "2024-11-05"};
enum { N_HANDSHAKE = sizeof handshake_versions / sizeof handshake_versions[0] };
/* A request line longer than this is refused (and skipped), not buffered. */
enum { MAX_LINE = 16 << 20 };

typedef struct mcp_session session;

static bool send_message(FILE *out, json_t *msg)
{
    bool ok = msg && json_dumpf(msg, out, JSON_COMPACT) == 0 && fputc('\n', out) != EOF &&
              fflush(out) == 0;
    json_decref(msg);
    return ok;
}

static json_t *error_reply(json_t *id, int code, const char *message, json_t *data)
{
    json_t *err = json_pack("{s:i,s:o}", "code", code, "message", mcp_string(message));
    if (data) json_object_set_new(err, "data", data);
    return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", err);
}

static json_t *versions_json(void)
{
    json_t *a = json_pack("[s]", MODERN_VERSION);
    for (size_t i = 0; i < N_HANDSHAKE; i++) json_array_append_new(a, json_string(handshake_versions[i]));
    return a;
}

static json_t *capabilities(void)
{
    return json_pack("{s:{s:b},s:{s:b}}", "tools", "listChanged", 0, "resources",
                     "listChanged", 0);
}

static json_t *server_info(void)
{
    return json_pack("{s:s,s:s,s:s}", "name", "snapdiff", "title",
                     "snapdiff: PyTorch CUDA memory snapshots", "version", sd_version());
}

static const char instructions[] =
    "Each tool is a snapdiff command on PyTorch CUDA memory snapshots (torch.cuda.memory."
    "_dump_snapshot pickles, or training logs for curve); its result is the command's "
    "versioned JSON document. diff: what grew between two snapshots; top: live memory by "
    "site; frag: fragmentation and OOM explanations; trace: phases of the allocation "
    "history; series: trends over many snapshots; replay: allocator what-ifs; check: a gate "
    "against limits; curve: leak or noise in a log; plan: will it fit, the peak at a size not "
    "recorded from recordings at other sizes, or what if from one. Paths are read only under the server's "
    "roots. resources/list gives the documents that define every field.";

/* initialize (2024-11-05 and later): the client's version when spoken, else the newest. */
static json_t *initialize(session *s, const json_t *params, struct mcp_fault *f)
{
    const char *want = json_string_value(json_object_get(params, "protocolVersion"));
    if (!want) {
        mcp_fault_set(f, MCP_INVALID_PARAMS, "params.protocolVersion: missing (a string such "
                      "as \"2025-11-25\")");
        return NULL;
    }
    s->version = handshake_versions[0];
    for (size_t i = 0; i < N_HANDSHAKE; i++)
        if (strcmp(want, handshake_versions[i]) == 0) s->version = handshake_versions[i];
    return json_pack("{s:s,s:o,s:o,s:s}", "protocolVersion", s->version, "capabilities",
                     capabilities(), "serverInfo", server_info(), "instructions", instructions);
}

/* server/discover (2026-07-28): every version spoken, what is offered, who answers. */
static json_t *discover(void)
{
    return json_pack("{s:o,s:o,s:o,s:s}", "supportedVersions", versions_json(),
                     "capabilities", capabilities(), "serverInfo", server_info(),
                     "instructions", instructions);
}

/* structuredContent and outputSchema came with 2025-06-18 (server/tools). */
static bool structured(const session *s, bool modern)
{
    return modern || !s->version || strcmp(s->version, "2025-06-18") >= 0;
}

static json_t *dispatch(session *s, const char *method, const json_t *params,
                        bool modern, struct mcp_fault *f)
{
    if (strcmp(method, "initialize") == 0 && !modern) return initialize(s, params, f);
    if (strcmp(method, "server/discover") == 0) return discover();
    if (strcmp(method, "ping") == 0 && !modern) return json_object();
    if (strcmp(method, "tools/list") == 0) return mcp_tools_list(structured(s, modern));
    if (strcmp(method, "tools/call") == 0)
        return mcp_tool_call(s->server, params, structured(s, modern), f);
    if (strcmp(method, "resources/list") == 0) return mcp_resources_list();
    if (strcmp(method, "resources/templates/list") == 0)
        return json_pack("{s:[]}", "resourceTemplates");
    if (strcmp(method, "resources/read") == 0) return mcp_resource_read(params, f);
    mcp_fault_set(f, MCP_METHOD_NOT_FOUND, "Method not found: %.200s%s", method,
                  modern && (strcmp(method, "ping") == 0 || strcmp(method, "initialize") == 0)
                      ? " (not in the stateless revision 2026-07-28)" : "");
    return NULL;
}

/* The version a request's _meta carries (2026-07-28 basic: every request says it).
 * 1: modern, 0: none (the handshake era), -1: an error reply was made. */
static int request_era(const json_t *params, json_t *id, json_t **reply)
{
    const json_t *meta = json_object_get(params, "_meta");
    const json_t *v = json_object_get(meta, META_VERSION);
    if (!v) return 0;
    if (json_is_string(v) && strcmp(json_string_value(v), MODERN_VERSION) == 0) return 1;
    json_t *data = json_pack("{s:o,s:O}", "supported", versions_json(), "requested", v);
    *reply = error_reply(id, MCP_UNSUPPORTED_VERSION, "Unsupported protocol version", data);
    return -1;
}

json_t *mcp_handle(session *s, const char *line, size_t len)
{
    json_error_t jerr;
    json_t *req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!req) {
        char msg[300];
        snprintf(msg, sizeof msg, "Parse error: %s (column %d)", jerr.text, jerr.column);
        return error_reply(NULL, MCP_PARSE_ERROR, msg, NULL);
    }
    json_t *reply = NULL;
    json_t *id = json_object_get(req, "id");
    const char *method = json_string_value(json_object_get(req, "method"));
    const json_t *params = json_object_get(req, "params");
    bool valid_id = json_is_string(id) || json_is_integer(id);
    if (json_is_array(req)) {
        reply = error_reply(NULL, MCP_INVALID_REQUEST, "Invalid Request: batches are not "
                            "supported (JSON-RPC batching left MCP in 2025-06-18)", NULL);
    } else if (!json_is_object(req) || !json_is_string(json_object_get(req, "jsonrpc")) ||
               strcmp(json_string_value(json_object_get(req, "jsonrpc")), "2.0") != 0) {
        reply = error_reply(valid_id ? id : NULL, MCP_INVALID_REQUEST,
                            "Invalid Request: not a JSON-RPC 2.0 object (\"jsonrpc\": \"2.0\")", NULL);
    } else if (!method) {
        if (!(id && (json_object_get(req, "result") || json_object_get(req, "error"))))
            reply = error_reply(valid_id ? id : NULL, MCP_INVALID_REQUEST,
                                "Invalid Request: method: missing", NULL);
    } else if (!id) {
        /* notifications/initialized, notifications/cancelled, ...: nothing to answer */
    } else if (!valid_id) {
        reply = error_reply(NULL, MCP_INVALID_REQUEST, "Invalid Request: id must be a "
                            "string or an integer", NULL);
    } else if (params && !json_is_object(params)) {
        reply = error_reply(id, MCP_INVALID_PARAMS, "params: expected an object", NULL);
    } else {
        int era = request_era(params, id, &reply);
        if (era >= 0) {
            struct mcp_fault f = {MCP_INTERNAL_ERROR, "out of memory"};
            json_t *result = dispatch(s, method, params, era == 1, &f);
            if (result && era == 1) json_object_set_new(result, "resultType", json_string("complete"));
            reply = result ? json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result)
                           : error_reply(id, f.code, f.message, NULL);
        }
    }
    json_decref(req);
    return reply;
}

/* The next line of stdin into *buf (grown as needed, up to MAX_LINE). 1: a line, 0: end
 * of input, -1: a line too long (read past and dropped). */
static int read_line(FILE *in, char **buf, size_t *cap, size_t *len)
{
    *len = 0;
    bool too_long = false;
    int c;
    while ((c = getc(in)) != EOF && c != '\n') {
        if (too_long) continue;
        if (*len + 1 >= *cap) {
            size_t want = *cap ? *cap * 2 : 4096;
            char *p = want <= MAX_LINE ? realloc(*buf, want) : NULL;
            if (!p) { too_long = true; continue; }
            *buf = p;
            *cap = want;
        }
        (*buf)[(*len)++] = (char)c;
    }
    if (c == EOF && *len == 0 && !too_long) return 0;
    if (*buf) (*buf)[*len] = '\0';
    return too_long ? -1 : 1;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return false;
    return true;
}

static int serve(session *s, FILE *out)
{
    char *line = NULL;
    size_t cap = 0, len = 0;
    int r, status = EXIT_OK;
    while ((r = read_line(stdin, &line, &cap, &len)) != 0) {
        json_t *reply = r < 0 ? error_reply(NULL, MCP_INVALID_REQUEST, "Invalid Request: a "
                                            "message longer than 16 MiB", NULL)
                      : blank(line, len) ? NULL : mcp_handle(s, line, len);
        if (reply && !send_message(out, reply)) {
            if (errno != EPIPE) {
                msg_error("mcp: error writing to stdout: %s", strerror(errno));
                status = EXIT_TROUBLE;
            }
            break;
        }
    }
    free(line);
    return status;
}

/* The roots, real paths of directories; the current directory when none is given. */
static bool resolve_roots(const struct cli_opts *opts, struct mcp_server *srv)
{
    const char *dot = ".";
    const char *const *given = opts->mcp.n_roots ? opts->mcp.roots : &dot;
    size_t n = opts->mcp.n_roots ? (size_t)opts->mcp.n_roots : 1;
    for (size_t i = 0; i < n; i++) {
        char *real = realpath(given[i], NULL);
        int fd = real ? open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (fd >= 0) close(fd);
        if (fd < 0) {
            msg_error("--root %s: not a directory we can read: %s", given[i], strerror(errno));
            free(real);
            return false;
        }
        srv->roots[srv->n_roots++] = real;
    }
    return true;
}

/* The command's stream (stdout) becomes the protocol's own descriptor; its descriptor
 * (1) goes to /dev/null. */
static FILE *take_stdout(FILE *to)
{
    fflush(to);
    int fd = dup(fileno(to));
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out || null < 0 || dup2(null, fileno(to)) < 0) {
        msg_error("mcp: cannot set up stdout: %s", strerror(errno));
        if (out) fclose(out);
        else if (fd >= 0) close(fd);
        if (null >= 0) close(null);
        return NULL;
    }
    close(null);
    return out;
}

int cmd_mcp(const struct cli_opts *opts, FILE *to)
{
    struct mcp_server srv = {.n_roots = 0, .max_memory = opts->max_memory};
    int status = EXIT_TROUBLE;
    FILE *out = NULL;
    if (resolve_roots(opts, &srv) && (out = take_stdout(to)) != NULL) {
        signal(SIGPIPE, SIG_IGN);     /* a client gone: a failed write, not a kill */
        char cap[32];
        sd_format_bytes(srv.max_memory, cap, sizeof cap);
        msg_note("mcp: serving under %s%s, up to %s per snapshot; end of input ends it",
                 srv.roots[0], srv.n_roots > 1 ? " and more roots" : "", cap);
        session s = {.server = &srv, .version = NULL};
        status = serve(&s, out);
        fclose(out);
    }
    for (size_t i = 0; i < srv.n_roots; i++) free(srv.roots[i]);
    return status;
}
