/* cmd_summarize.c - `snapdiff summarize FILE -o base.sdsum`: a baseline to commit.
 *
 * load -> encode (libsnapdiff's summary.h) -> write. One snapshot: -o FILE, or stdout
 * when it is not a terminal. An archive or directory of several (the ranks of a job):
 * -o DIR, one NAME.sdsum per member, so that the directory pairs with the next run's
 * archive by rank as archives do. The size of each summary beside its snapshot's goes to
 * stderr as a note (stdout may be the summary itself).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "msg.h"
#include "snapdiff/summarize.h"
#include "snapdiff/units.h"

static bool write_all(FILE *f, const uint8_t *p, size_t n)
{
    return fwrite(p, 1, n, f) == n;
}

/* Write `data` to `path` ("-" or NULL: stdout). */
static int write_file(const char *path, const uint8_t *data, size_t len)
{
    if (!path || strcmp(path, "-") == 0) {
        if (!write_all(stdout, data, len)) {
            msg_error("error writing the summary to stdout: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        msg_error("%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    bool ok = write_all(f, data, len);
    ok = fclose(f) == 0 && ok;
    if (!ok) {
        msg_error("%s: error writing: %s", path, strerror(errno));
        remove(path);
        return -1;
    }
    return 0;
}

/* The snapshot's own size, when it is a plain file (for the note). */
static bool file_size(const char *spec, uint64_t *out)
{
    struct stat st;
    if (stat(spec, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    *out = (uint64_t)st.st_size;
    return true;
}

static void note_size(const char *what, const char *source_spec, size_t len)
{
    char sz[32], snap[32];
    sd_format_bytes((uint64_t)len, sz, sizeof sz);
    uint64_t in = 0;
    if (source_spec && file_size(source_spec, &in) && in) {
        sd_format_bytes(in, snap, sizeof snap);
        msg_note("wrote %s: %s, %.1f%% of the snapshot's %s", what, sz, 100.0 * (double)len / (double)in,
                 snap);
    } else {
        msg_note("wrote %s: %s", what, sz);
    }
}

/* "ranks.zip:rank3/snap.pickle" -> DIR/"rank3_snap.pickle.sdsum": one flat file per
 * member, named after the member inside the input (its rank number stays in the name). */
static void member_file(const char *dir, const char *spec, const char *member, char *out,
                        size_t size)
{
    size_t n = strlen(spec);
    while (n > 1 && spec[n - 1] == '/') n--;
    if (strncmp(member, spec, n) == 0 && (member[n] == ':' || member[n] == '/')) member += n + 1;
    while (*member == '/') member++;
    char flat[512];
    size_t k = 0;
    for (const char *p = member; *p && k + 1 < sizeof flat; p++)
        flat[k++] = *p == '/' || *p == '\\' ? '_' : *p;
    flat[k] = '\0';
    snprintf(out, size, "%s/%s.sdsum", dir, flat);
}

static int summarize_one(const sd_snapshot *s, const char *path, const char *source_spec)
{
    sd_error err;
    sd_error_clear(&err);
    uint8_t *data = NULL;
    size_t len = 0;
    if (sd_summary_encode(s, "snapdiff " SD_VERSION, &data, &len, &err) != SD_OK) {
        if (!err.source[0]) snprintf(err.source, sizeof err.source, "%s", sd_snapshot_source(s));
        msg_sd_error(&err);
        return -1;
    }
    int rc = write_file(path, data, len);
    free(data);
    if (rc == 0) note_size(path && strcmp(path, "-") ? path : "the summary to stdout", source_spec, len);
    return rc;
}

int cmd_summarize(const struct cli_opts *opts)
{
    const char *out = opts->output;
    if ((!out || strcmp(out, "-") == 0) && isatty(STDOUT_FILENO)) {
        msg_error("summarize writes binary msgpack: give -o FILE (or redirect stdout)");
        return EXIT_TROUBLE;
    }
    sd_snapshot **snaps = NULL;
    size_t n = 0;
    struct cli_load_options lo = {.shape = CLI_LOAD_MEMBERS, .specs = opts->files, .n = 1,
                                  .members = &snaps, .counts = &n};
    if (cli_load(opts, &lo) != 0) return EXIT_TROUBLE;
    int rc = 0;
    if (n == 1) {
        rc = summarize_one(snaps[0], out, opts->files[0]);
    } else {
        struct stat st;
        if (!out || strcmp(out, "-") == 0 || stat(out, &st) != 0 || !S_ISDIR(st.st_mode)) {
            msg_error("%s holds %zu snapshots: give -o DIR, an existing directory, for one "
                      "summary each", opts->files[0], n);
            rc = -1;
        }
        for (size_t i = 0; i < n && rc == 0; i++) {
            char path[4096];
            member_file(out, opts->files[0], sd_snapshot_source(snaps[i]), path, sizeof path);
            rc = summarize_one(snaps[i], path, NULL);
        }
    }
    cli_free_all(snaps, n);
    return rc == 0 ? EXIT_OK : EXIT_TROUBLE;
}
