/* cmd_frag.c - `snapdiff frag FILE...`: is it fragmentation, how bad, what would help.
 *
 * Load, analyse (analysis/frag*.c), render (render/frag_*.c: text, --map, --json the
 * snapdiff.frag/1 document, --svg FILE a picture), exit status.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "msg.h"
#include "snapdiff/render_frag.h"

static int write_svg(const char *path, sd_frag **frags, size_t n)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        msg_error("%s: cannot write: %s", path, strerror(errno));
        return EXIT_TROUBLE;
    }
    sd_status st = sd_render_frag_svg(out, (const sd_frag *const *)frags, n);
    if (fclose(out) != 0) st = SD_EIO;
    if (st != SD_OK) {
        msg_error("%s: cannot write: %s", path, strerror(errno));
        return EXIT_TROUBLE;
    }
    return EXIT_OK;
}

static void free_frags(sd_frag **frags, size_t n)
{
    for (size_t i = 0; frags && i < n; i++) sd_frag_free(frags[i]);
    free(frags);
}

/* One analysis per snapshot; on failure the error is printed and NULL returned. */
static sd_frag **analyse_all(sd_snapshot **snaps, size_t n, const struct cli_opts *opts)
{
    sd_frag_options fo = {.version = SD_FRAG_OPTIONS_VERSION,
                          .gap_threshold_pct = opts->frag.gap_threshold,
                          .index_threshold = opts->frag.index_threshold,
                          .max_memory = opts->max_memory};
    sd_frag **frags = calloc(n ? n : 1, sizeof *frags);
    if (!frags) {
        msg_error("out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        sd_error err;
        sd_error_clear(&err);
        frags[i] = sd_frag_create(snaps[i], &fo, &err);
        if (!frags[i]) {
            if (!err.source[0])
                snprintf(err.source, sizeof err.source, "%s", sd_snapshot_source(snaps[i]));
            msg_sd_error(&err);
            free_frags(frags, n);
            return NULL;
        }
    }
    return frags;
}

int cli_oom_analysis(const struct cli_opts *o, const sd_snapshot *snap, sd_frag **out)
{
    *out = NULL;
    if (sd_snapshot_oom_count(snap) == 0) return EXIT_OK;
    sd_frag_options fo = {.version = SD_FRAG_OPTIONS_VERSION,
                          .gap_threshold_pct = o->frag.gap_threshold,
                          .index_threshold = o->frag.index_threshold, .max_memory = o->max_memory};
    sd_error err;
    sd_error_clear(&err);
    *out = sd_frag_create(snap, &fo, &err);
    if (*out) return EXIT_OK;
    if (!err.source[0]) snprintf(err.source, sizeof err.source, "%s", sd_snapshot_source(snap));
    msg_sd_error(&err);
    return EXIT_TROUBLE;
}

static int render(FILE *out, sd_frag **frags, sd_snapshot **snaps, size_t n,
                  const struct cli_opts *opts)
{
    if (opts->frag.svg && write_svg(opts->frag.svg, frags, n) != EXIT_OK) return EXIT_TROUBLE;
    sd_status st = SD_OK;
    if (opts->format == FORMAT_JSON) {
        st = sd_render_frag_json(out, (const sd_frag *const *)frags, n);
    } else {
        sd_render_options ro = {.color = opts->color};
        for (size_t i = 0; i < n && st == SD_OK; i++) {
            if (i) fputc('\n', out);
            st = sd_render_frag_text(out, frags[i], opts->frag.map, &ro);
        }
        if (st == SD_OK) cli_print_spread(out, snaps, n, opts->color);
    }
    return st == SD_OK ? EXIT_OK : EXIT_TROUBLE;
}

int cmd_frag(const struct cli_opts *opts, FILE *out)
{
    sd_snapshot **snaps;
    size_t n;
    struct cli_load_options lo = {.shape = CLI_LOAD_FLAT, .specs = opts->files,
                                  .n = (size_t)opts->n_files, .all = &snaps, .n_all = &n};
    if (cli_load(opts, &lo) != 0) return EXIT_TROUBLE;
    sd_frag **frags = analyse_all(snaps, n, opts);
    int status = frags ? render(out, frags, snaps, n, opts) : EXIT_TROUBLE;
    free_frags(frags, n);
    cli_free_all(snaps, n);
    return status;
}
