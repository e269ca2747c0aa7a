/* fuzz_mcp.c - `snapdiff mcp` on arbitrary bytes: each line of the input is one message to
 * the server (cmd_mcp.c's mcp_handle, the same function its stdin loop calls), so libFuzzer
 * drives arbitrary JSON-RPC: both protocol eras, every method, tool calls with arbitrary
 * arguments and paths, through the real tools on a scratch root that holds two fixtures.
 * Invariants: no crash, no sanitizer report, no leak; every reply is a JSON-RPC 2.0 object
 * with an id and exactly one of result and error; nothing is left written outside the
 * root, and what a call wrote inside it is removed before the next input. */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_check.h"
#include "mcp.h"

static struct mcp_server server;
static char root[PATH_MAX];
static const char *const seeds[] = {"leak/churn_old.pickle", "frag/oom.pickle"};

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    FUZZ_CHECK(in && out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) FUZZ_CHECK(fwrite(buf, 1, n, out) == n);
    fclose(in);
    FUZZ_CHECK(fclose(out) == 0);
}

/* The root holds the two fixtures and nothing else: whatever a call wrote (summarize,
 * report, even over a fixture with overwrite) is removed and the fixtures copied afresh. */
static void reset_root(void)
{
    DIR *d = opendir(root);
    FUZZ_CHECK(d != NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", root, e->d_name);
        unlink(p);
    }
    closedir(d);
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        char from[PATH_MAX], to[PATH_MAX];
        snprintf(from, sizeof from, "%s/%s", SNAPDIFF_TESTDATA, seeds[i]);
        snprintf(to, sizeof to, "%s/s%zu.pickle", root, i);
        copy_file(from, to);
    }
}

static void set_up(void)
{
    char tmpl[] = "/tmp/fuzz_mcp.XXXXXX";
    FUZZ_CHECK(mkdtemp(tmpl) != NULL);
    FUZZ_CHECK(realpath(tmpl, root) != NULL);
    reset_root();
    server.roots[0] = strdup(root);
    server.n_roots = 1;
    server.max_memory = 256u << 20;
}

static void check_reply(json_t *r)
{
    FUZZ_CHECK(json_is_object(r));
    FUZZ_CHECK(json_is_string(json_object_get(r, "jsonrpc")));
    FUZZ_CHECK(json_object_get(r, "id") != NULL);
    FUZZ_CHECK((json_object_get(r, "result") != NULL) != (json_object_get(r, "error") != NULL));
    char *text = json_dumps(r, JSON_COMPACT);
    FUZZ_CHECK(text != NULL && strchr(text, '\n') == NULL);   /* one line on the wire */
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!server.n_roots) set_up();
    struct mcp_session s = {.server = &server, .version = NULL};
    const char *p = (const char *)data, *end = p + size;
    for (int lines = 0; p < end && lines < 16; lines++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        json_t *r = mcp_handle(&s, p, len);
        if (r) check_reply(r);
        json_decref(r);
        p += len + (nl != NULL);
    }
    reset_root();
    return 0;
}
