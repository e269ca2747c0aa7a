/* cmd_summarize.c - `snapdiff summarize FILE -o base.sdsum`: a baseline to commit.
 *
 * load -> encode (libsnapdiff's summary.h) -> write. One snapshot: -o FILE, or stdout
 * when it is not a terminal. An archive or directory of several (the ranks of a job):
 * -o DIR, one NAME.sdsum per member, so that the directory pairs with the next run's
 * archive by rank as archives do. The size of each summary beside its snapshot's goes to
 * stderr as a note (stdout may be the summary itself).
 *
 * Several inputs, @FILE lists or --shard: the map of a cluster job (docs/cluster.md). Each
 * input is one snapshot and gets DIR/NAME.sdsum named after it (shard.h), written under a
 * hidden name and renamed, so that a task killed half-way leaves no summary that looks
 * done; one whose summary is newer than it is left alone unless --force.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "msg.h"
#include "shard.h"
#include "snapdiff/source.h"
#include "snapdiff/summarize.h"
#include "snapdiff/units.h"

static bool write_all(FILE *f, const uint8_t *p, size_t n)
{
    return fwrite(p, 1, n, f) == n;
}

/* Write `data` to `path` ("-" or NULL: `to`, the command's stream). */
static int write_file(FILE *to, const char *path, const uint8_t *data, size_t len)
{
    if (!path || strcmp(path, "-") == 0) {
        if (!write_all(to, data, len)) {
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

static int summarize_one(FILE *to, const sd_snapshot *s, const char *path,
                         const char *source_spec)
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
    int rc = write_file(to, path, data, len);
    free(data);
    if (rc == 0) note_size(path && strcmp(path, "-") ? path : "the summary to stdout", source_spec, len);
    return rc;
}

/* ---------- several inputs: the map of a cluster job ---------- */

struct many {
    const char *const *specs;     /* this run's inputs (the share, less the fresh ones) */
    char **paths;                 /* the summary of each */
};

/* Write `data` to `path` by way of DIR/.NAME.PID.tmp and a rename: the summary appears
 * whole or not at all (a hidden file, which a directory load leaves out, in between).
 * @return SD_OK, or SD_EIO with err naming the file (the loader prints it, once). */
static sd_status write_atomically(const char *path, const uint8_t *data, size_t len,
                                  sd_error *err)
{
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    char tmp[4200];
    int w = snprintf(tmp, sizeof tmp, "%.*s.%s.%ld.tmp", (int)dir_len, path,
                     path + dir_len, (long)getpid());
    errno = ENAMETOOLONG;
    FILE *f = w > 0 && (size_t)w < sizeof tmp ? fopen(tmp, "wb") : NULL;
    bool ok = f && write_all(f, data, len);
    int why = errno;   /* the first failure's, before fclose or remove touch it */
    if (f && fclose(f) != 0 && ok) {
        why = errno;
        ok = false;
    }
    if (ok && rename(tmp, path) != 0) {
        why = errno;
        ok = false;
    }
    if (ok) return SD_OK;
    err->code = SD_EIO;
    err->offset = SD_NO_OFFSET;
    snprintf(err->source, sizeof err->source, "%s", path);
    snprintf(err->text, sizeof err->text, "cannot write the summary: %s", strerror(why));
    if (f) remove(tmp);
    return SD_EIO;
}

static sd_status many_opened(void *vctx, size_t input, const sd_input *in, sd_error *err)
{
    struct many *m = vctx;
    size_t n = sd_input_count(in);
    if (n == 1) return SD_OK;
    err->code = SD_EUSAGE;
    err->offset = SD_NO_OFFSET;
    snprintf(err->source, sizeof err->source, "%s", m->specs[input]);
    snprintf(err->text, sizeof err->text, "holds %zu snapshots: with several inputs, each is "
             "one snapshot (list the members, e.g. ARCHIVE:MEMBER)", n);
    return SD_EUSAGE;
}

static sd_status many_each(void *vctx, size_t input, size_t member, const sd_snapshot *snap,
                           sd_error *err)
{
    (void)member;
    struct many *m = vctx;
    uint8_t *data = NULL;
    size_t len = 0;
    sd_status st = sd_summary_encode(snap, "snapdiff " SD_VERSION, &data, &len, err);
    if (st != SD_OK) return st;
    st = write_atomically(m->paths[input], data, len, err);
    free(data);
    if (st == SD_OK) note_size(m->paths[input], m->specs[input], len);
    return st;
}

/* Two inputs whose summaries would have one name ("a/rank0.pickle", "b/rank0.pickle"):
 * refused before any task writes, the same way in every task. */
static bool names_unique(char **paths, size_t n)
{
    bool oom = false;
    const char *dup = cli_first_duplicate(paths, n, &oom);
    if (oom) msg_error("out of memory");
    else if (dup)
        msg_error("two inputs would both write %s: rename one, or summarize them into "
                  "separate directories", dup);
    return !oom && !dup;
}

/* The modification time of the input's file (the archive of "ARCHIVE:member"). */
static bool input_mtime(const char *spec, struct timespec *out)
{
    struct stat st;
    char path[4096];
    snprintf(path, sizeof path, "%s", spec);
    if (stat(path, &st) != 0) {
        char *colon = strchr(path, ':');
        if (!colon) return false;
        *colon = '\0';
        if (stat(path, &st) != 0) return false;
    }
    *out = st.st_mtim;
    return true;
}

/* Whether `summary` exists and is newer than the input: this task's work, done. */
static bool is_fresh(const char *spec, const char *summary)
{
    struct stat st;
    struct timespec in;
    if (stat(summary, &st) != 0 || !input_mtime(spec, &in)) return false;
    return st.st_mtim.tv_sec > in.tv_sec ||
           (st.st_mtim.tv_sec == in.tv_sec && st.st_mtim.tv_nsec > in.tv_nsec);
}

/* mkdir -p: every folder of `path` that is missing. EEXIST is no error: the tasks of an
 * array race to make the same folder. */
static bool make_dirs(const char *path)
{
    char buf[4096];
    int w = snprintf(buf, sizeof buf, "%s", path);
    if (w < 0 || (size_t)w >= sizeof buf) {
        errno = ENAMETOOLONG;
        return false;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return false;
        *p = '/';
    }
    return mkdir(buf, 0777) == 0 || errno == EEXIST;
}

/* -o DIR for several inputs: made when missing, parents too. */
static bool output_dir(const char *out)
{
    struct stat st;
    if (!out || strcmp(out, "-") == 0) {
        msg_error("summarize with several inputs writes one summary each: give -o DIR");
        return false;
    }
    if (!make_dirs(out)) {
        msg_error("%s: cannot make the directory: %s", out, strerror(errno));
        return false;
    }
    if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode)) {
        msg_error("%s: not a directory: give -o DIR for several inputs", out);
        return false;
    }
    return true;
}

/* The share's inputs less those whose summary is fresh, into run/paths. */
static size_t plan(char **inputs, char **paths, size_t first, size_t end, bool force,
                   const char **run, char **run_paths)
{
    size_t k = 0;
    for (size_t i = first; i < end; i++) {
        if (!force && is_fresh(inputs[i], paths[i])) continue;
        run[k] = inputs[i];
        run_paths[k++] = paths[i];
    }
    return k;
}

static int summarize_many(const struct cli_opts *opts)
{
    char errbuf[512];
    char **inputs = NULL, **paths = NULL;
    const char **run = NULL;
    char **run_paths = NULL;
    size_t n = 0;
    struct cli_share share;
    int rc = -1;
    const char *shard = opts->summarize.shard ? opts->summarize.shard : "0/1";
    if (!cli_share_resolve(shard, &share, errbuf, sizeof errbuf) ||
        !cli_inputs_expand(opts->files, (size_t)opts->n_files, &inputs, &n, errbuf, sizeof errbuf)) {
        msg_error("%s", errbuf);
        return EXIT_TROUBLE;
    }
    if (n == 0) {
        msg_error("no input: the lists given hold no path");
        goto done;
    }
    if (!output_dir(opts->output)) goto done;
    paths = calloc(n, sizeof *paths);
    run = calloc(n, sizeof *run);
    run_paths = calloc(n, sizeof *run_paths);
    if (!paths || !run || !run_paths) {
        msg_error("out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        if (!cli_summary_path(opts->output, inputs[i], path, sizeof path)) {
            msg_error("'%s': names no file to summarize (with several inputs, each is one "
                      "snapshot file)", inputs[i]);
            goto done;
        }
        if (!(paths[i] = strdup(path))) {
            msg_error("out of memory");
            goto done;
        }
    }
    if (!names_unique(paths, n)) goto done;
    size_t first, end;
    cli_share_range(n, &share, &first, &end);
    size_t k = plan(inputs, paths, first, end, opts->summarize.force, run, run_paths);
    if (opts->summarize.shard && end > first)
        msg_note("shard %lu/%lu (%s): %zu of %zu inputs, #%zu to #%zu in sorted order",
                 share.index, share.count, share.how, end - first, n, first, end - 1);
    else if (opts->summarize.shard)
        msg_note("shard %lu/%lu (%s): no input (%lu tasks for %zu inputs)", share.index,
                 share.count, share.how, share.count, n);
    struct many m = {.specs = run, .paths = run_paths};
    struct cli_load_options lo = {.shape = CLI_LOAD_STREAM, .specs = run, .n = k,
                                  .opened = many_opened, .each = many_each, .ctx = &m};
    rc = k ? cli_load(opts, &lo) : 0;
    if (end - first - k)
        msg_note("%zu of %zu summaries newer than their input, left as they are (--force "
                 "redoes them)", end - first - k, end - first);
done:
    for (size_t i = 0; paths && i < n; i++) free(paths[i]);
    free(paths);
    free(run);
    free(run_paths);
    cli_inputs_free(inputs, n);
    return rc == 0 ? EXIT_OK : EXIT_TROUBLE;
}

int cmd_summarize(const struct cli_opts *opts, FILE *to)
{
    if (opts->summarize.shard || opts->n_files > 1 || opts->files[0][0] == '@')
        return summarize_many(opts);
    const char *out = opts->output;
    if ((!out || strcmp(out, "-") == 0) && isatty(fileno(to))) {
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
        rc = summarize_one(to, snaps[0], out, opts->files[0]);
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
            rc = summarize_one(to, snaps[i], path, NULL);
        }
    }
    cli_free_all(snaps, n);
    return rc == 0 ? EXIT_OK : EXIT_TROUBLE;
}
