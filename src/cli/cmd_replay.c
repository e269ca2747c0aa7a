/* cmd_replay.c - `snapdiff replay FILE... [--alloc-conf CONF]... [--capacity SIZE]`: the
 * caching allocator replayed from each snapshot's trace (replay.h), rendered as text or
 * snapdiff.replay/1. Traces that do not add up give one warning per kind, with a count. */
#include <stdio.h>

#include "commands.h"
#include "msg.h"
#include "snapdiff/render_replay.h"
#include "snapdiff/replay.h"

static void warn_counts(const sd_replay *r)
{
    for (size_t i = 0; i < sd_replay_device_count(r); i++) {
        const sd_replay_device *d = sd_replay_device_at(r, i);
        for (int w = 0; w < SD_REPLAY_WARNING_COUNT; w++)
            if (d->warnings[w])
                msg_warn("%s: device %lld: the trace does not add up: %s x%llu; the replay "
                         "went on", sd_snapshot_source(sd_replay_snapshot(r)),
                         (long long)d->device,
                         sd_replay_warning_name((sd_replay_warning_code)w),
                         (unsigned long long)d->warnings[w]);
    }
}

int cmd_replay(const struct cli_opts *opts, FILE *out)
{
    if (cli_check_alloc_confs(opts) != 0) return EXIT_TROUBLE;
    sd_snapshot **snaps;
    size_t n;
    struct cli_load_options lo = {.shape = CLI_LOAD_FLAT, .specs = opts->files,
                                  .n = (size_t)opts->n_files, .all = &snaps, .n_all = &n};
    if (cli_load(opts, &lo) != 0) return EXIT_TROUBLE;
    sd_replay_options ro = {.version = SD_REPLAY_OPTIONS_VERSION,
                            .alloc_confs = opts->replay.alloc_conf,
                            .n_alloc_confs = (size_t)opts->replay.n_alloc_conf,
                            .capacity = opts->capacity,
                            .memory_fraction = opts->replay.memory_fraction,
                            .torch_version = opts->replay.torch_version};
    sd_render_options rendo = {.color = opts->color};
    int status = EXIT_OK;
    for (size_t i = 0; i < n && status == EXIT_OK; i++) {
        sd_error err;
        sd_error_clear(&err);
        sd_replay *r = sd_replay_create(snaps[i], &ro, &err);
        if (!r) {
            msg_sd_error(&err);
            status = EXIT_TROUBLE;
            break;
        }
        warn_counts(r);
        if (i && opts->format != FORMAT_JSON) fputc('\n', out);
        sd_status st = opts->format == FORMAT_JSON ? sd_render_replay_json(out, r, &rendo, &err)
                                                   : sd_render_replay_text(out, r, &rendo, &err);
        if (st != SD_OK) status = EXIT_TROUBLE;
        sd_replay_free(r);
    }
    cli_free_all(snaps, n);
    return status;
}
