/* cmd_stats.c - `snapdiff stats FILE...`: totals per device and overall. Load, render
 * (render/stats_*.c), exit status. */
#include <stdio.h>

#include "commands.h"
#include "snapdiff/render_stats.h"

int cmd_stats(const struct cli_opts *opts, FILE *out)
{
    sd_snapshot **snaps;
    size_t n;
    struct cli_load_options lo = {.shape = CLI_LOAD_FLAT, .specs = opts->files,
                                  .n = (size_t)opts->n_files, .all = &snaps, .n_all = &n};
    if (cli_load(opts, &lo) != 0) return EXIT_TROUBLE;
    sd_render_options ro = {.color = opts->color};
    sd_status st = SD_OK;
    if (opts->format == FORMAT_JSON) {
        st = sd_render_stats_json(out, (const sd_snapshot *const *)snaps, n);
    } else {
        for (size_t i = 0; i < n && st == SD_OK; i++) {
            if (i) fputc('\n', out);
            st = sd_render_stats_text(out, snaps[i], &ro);
        }
        if (st == SD_OK) cli_print_spread(out, snaps, n, opts->color);
    }
    cli_free_all(snaps, n);
    return st == SD_OK ? EXIT_OK : EXIT_TROUBLE;
}
