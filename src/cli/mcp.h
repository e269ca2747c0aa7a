/* mcp.h - the parts of `snapdiff mcp` (cmd_mcp.c: the protocol; mcp_tools.c: the tools;
 * mcp_paths.c: the roots; mcp_resources.c: the documents). docs/mcp.md describes it. */
#ifndef SNAPDIFF_CLI_MCP_H
#define SNAPDIFF_CLI_MCP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

/* JSON-RPC 2.0 and MCP error codes. */
enum {
    MCP_PARSE_ERROR = -32700,
    MCP_INVALID_REQUEST = -32600,
    MCP_METHOD_NOT_FOUND = -32601,
    MCP_INVALID_PARAMS = -32602,
    MCP_INTERNAL_ERROR = -32603,
    MCP_RESOURCE_NOT_FOUND = -32002,           /* 2025-06-18 server/resources */
    MCP_UNSUPPORTED_VERSION = -32004,          /* 2026-07-28 UnsupportedProtocolVersionError */
};

/* What every call runs under: the roots (realpath'd, no trailing slash but "/" itself)
 * and the memory cap from the command line. */
struct mcp_server {
    char *roots[CLI_MAX_PATTERNS];
    size_t n_roots;
    uint64_t max_memory;
};

/* An error for the JSON-RPC reply: the code and one line naming the field. */
struct mcp_fault {
    int code;
    char message[512];
};
void mcp_fault_set(struct mcp_fault *f, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A JSON string of any bytes: invalid UTF-8 (a file name) is shown as '?'. */
json_t *mcp_string(const char *s);

/* Resolve `path` (relative: to the first root) to a real path under a root. Reading: the
 * file must exist (an existing one under a root whose name does not resolve is reported
 * as not found, so that the CLI can say so). A directory's files are checked too, as the
 * loader walks them. Writing: the parent must resolve under a root, the name must not be a
 * link, and an existing file is refused unless `overwrite`. `field` names the argument in
 * the fault. Returns a malloc'd path, or NULL with the fault set. */
char *mcp_path_read(const struct mcp_server *s, const char *path, const char *field,
                    struct mcp_fault *f);
char *mcp_path_write(const struct mcp_server *s, const char *path, bool overwrite,
                     const char *field, struct mcp_fault *f);

/* One connection's state: only the version initialize negotiated (the handshake era);
 * the stateless era keeps none. */
struct mcp_session {
    const struct mcp_server *server;
    const char *version;      /* NULL before initialize */
};
/* One message in (a line without its newline), at most one out: NULL when none is due (a
 * notification, a response, a blank line). cmd_mcp.c; tests/fuzz/fuzz_mcp.c drives it. */
json_t *mcp_handle(struct mcp_session *s, const char *line, size_t len);

/* tools/list's tools (structured: with outputSchema, 2025-06-18 on) and one tools/call.
 * NULL from mcp_tool_call: a protocol error, in *f. */
json_t *mcp_tools_list(bool structured);
json_t *mcp_tool_call(const struct mcp_server *s, const json_t *params, bool structured,
                      struct mcp_fault *f);

/* resources/list and resources/read: the JSON schema documents and the pattern catalogue,
 * built into the binary. */
json_t *mcp_resources_list(void);
json_t *mcp_resource_read(const json_t *params, struct mcp_fault *f);

#endif
