/* mcp_paths.c - an agent gets the files under the roots it was given, nothing more.
 *
 * Every path a tool call names is resolved here (realpath: `..` and every symbolic link)
 * before the command sees it, and the command is handed the resolved path. A link that
 * leads out of a root is refused like a path outside; so is a directory holding one, since
 * the loader reads a directory's files (and its folders, four levels down, not following
 * links to folders: source.c's walk_dir). What remains is the race of a file swapped for
 * a link between this check and the open: the roots are the agent's data, not an
 * attacker's, and docs/mcp.md says so.
 */
#define _GNU_SOURCE   /* realpath, strndup */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mcp.h"

void mcp_fault_set(struct mcp_fault *f, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    f->code = code;
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
}

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    size_t k = a;
    if (a == 0 || dir[a - 1] != '/') p[k++] = '/';
    memcpy(p + k, name, b + 1);
    return p;
}

static bool under_root(const struct mcp_server *s, const char *real)
{
    for (size_t i = 0; i < s->n_roots; i++) {
        const char *r = s->roots[i];
        size_t n = strlen(r);
        if (strcmp(r, "/") == 0) return true;
        if (strncmp(real, r, n) == 0 && (real[n] == '\0' || real[n] == '/')) return true;
    }
    return false;
}

static void outside(const struct mcp_server *s, const char *field, const char *path,
                    struct mcp_fault *f)
{
    char roots[256] = "";
    size_t k = 0;
    for (size_t i = 0; i < s->n_roots && k + 1 < sizeof roots; i++)
        k += (size_t)snprintf(roots + k, sizeof roots - k, "%s%s", i ? ", " : "", s->roots[i]);
    mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.%s: '%s' is outside the roots (%s): "
                  "snapdiff mcp reads and writes only under its --root directories", field,
                  path, roots);
}

/* The path as given, made absolute against the first root. */
static char *absolute(const struct mcp_server *s, const char *path)
{
    return path[0] == '/' ? strdup(path) : join(s->roots[0], path);
}

/* Every file the loader would read in directory `dir` resolves under a root; else the
 * first that does not, in *bad (malloc'd). Mirrors source.c's walk_dir. */
enum { WALK_MAX_DEPTH = 4 };
static bool dir_inside(const struct mcp_server *s, const char *dir, int depth, char **bad)
{
    DIR *d = opendir(dir);
    if (!d) return true;                       /* the loader says why */
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char *full = join(dir, e->d_name);
        struct stat lsb;
        if (!full) { ok = false; break; }
        if (lstat(full, &lsb) == 0 && S_ISDIR(lsb.st_mode)) {
            if (depth < WALK_MAX_DEPTH) ok = dir_inside(s, full, depth + 1, bad);
        } else if (lstat(full, &lsb) == 0 && S_ISLNK(lsb.st_mode)) {
            char *real = realpath(full, NULL);
            if (real && !under_root(s, real)) {
                ok = false;
                *bad = full;
                full = NULL;
            }
            free(real);
        }
        free(full);
    }
    closedir(d);
    return ok;
}

/* "ARCHIVE:member" (source.c's split_member): the longest prefix before a colon that
 * resolves, made real, with the member after it. NULL when no prefix resolves. */
static char *archive_member(const char *abs, char **real_archive)
{
    for (const char *c = strrchr(abs, ':'); c; ) {
        char *prefix = strndup(abs, (size_t)(c - abs));
        if (!prefix) return NULL;
        char *real = realpath(prefix, NULL);
        free(prefix);
        if (real) {
            *real_archive = real;
            char *spec = malloc(strlen(real) + strlen(c) + 1);
            if (spec) sprintf(spec, "%s%s", real, c);
            return spec;
        }
        const char *prev = NULL;
        for (const char *q = abs; q < c; q++) if (*q == ':') prev = q;
        c = prev;
    }
    return NULL;
}

/* A name that does not resolve: an archive member, or a file that is not there (the
 * command then says so in the CLI's words) in a folder under a root. */
static char *unresolved(const struct mcp_server *s, const char *abs, const char *field,
                        const char *path, struct mcp_fault *f)
{
    struct stat lsb;
    if (lstat(abs, &lsb) == 0) {   /* there, yet no real path: a dangling link, a loop */
        mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.%s: '%s' does not resolve (a "
                      "broken link?): refused", field, path);
        return NULL;
    }
    char *archive = NULL;
    char *spec = archive_member(abs, &archive);
    if (spec) {
        struct stat sb;
        bool ok = under_root(s, archive) && stat(archive, &sb) == 0 && S_ISREG(sb.st_mode);
        free(archive);
        if (ok) return spec;
        free(spec);
        outside(s, field, path, f);
        return NULL;
    }
    char *slash = strrchr(abs, '/');
    char *parent = strndup(abs, slash && slash != abs ? (size_t)(slash - abs) : 1);
    char *real = parent ? realpath(parent, NULL) : NULL;
    char *out = real && under_root(s, real) && slash ? join(real, slash + 1) : NULL;
    if (!out) outside(s, field, path, f);
    free(parent);
    free(real);
    return out;
}

char *mcp_path_read(const struct mcp_server *s, const char *path, const char *field,
                    struct mcp_fault *f)
{
    if (!path[0]) {
        mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.%s: an empty path", field);
        return NULL;
    }
    char *abs = absolute(s, path);
    if (!abs) {
        mcp_fault_set(f, MCP_INTERNAL_ERROR, "out of memory");
        return NULL;
    }
    char *real = realpath(abs, NULL);
    if (!real) {
        char *out = unresolved(s, abs, field, path, f);
        free(abs);
        return out;
    }
    free(abs);
    if (!under_root(s, real)) {
        outside(s, field, path, f);
        free(real);
        return NULL;
    }
    struct stat sb;
    char *bad = NULL;
    if (stat(real, &sb) == 0 && S_ISDIR(sb.st_mode) && !dir_inside(s, real, 0, &bad)) {
        if (bad) {
            mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.%s: '%s' holds a link out of the "
                          "roots (%s): refused", field, path, bad);
        } else {
            mcp_fault_set(f, MCP_INTERNAL_ERROR, "out of memory");
        }
        free(bad);
        free(real);
        return NULL;
    }
    return real;
}

char *mcp_path_write(const struct mcp_server *s, const char *path, bool overwrite,
                     const char *field, struct mcp_fault *f)
{
    char *abs = path[0] ? absolute(s, path) : NULL;
    const char *slash = abs ? strrchr(abs, '/') : NULL;
    const char *name = slash ? slash + 1 : "";
    if (!abs || !*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.%s: '%s' is no file name", field, path);
        free(abs);
        return NULL;
    }
    char *parent = strndup(abs, slash != abs ? (size_t)(slash - abs) : 1);
    char *real = parent ? realpath(parent, NULL) : NULL;
    char *out = real && under_root(s, real) ? join(real, name) : NULL;
    free(parent);
    free(real);
    free(abs);
    if (!out) {
        outside(s, field, path, f);
        return NULL;
    }
    struct stat lsb;
    if (lstat(out, &lsb) == 0) {
        const char *why = S_ISLNK(lsb.st_mode) ? "is a symbolic link: never written through"
                        : S_ISDIR(lsb.st_mode) ? "is a directory"
                        : !overwrite ? "exists: give \"overwrite\": true to replace it" : NULL;
        if (why) {
            mcp_fault_set(f, MCP_INVALID_PARAMS, "arguments.%s: '%s' %s", field, path, why);
            free(out);
            return NULL;
        }
    }
    return out;
}
