/* cmd_dump.c - `snapdiff dump FILE`: the whole pickle as JSON, for jq. Any plain-data
 * pickle dumps, snapshot-shaped or not; a snapdiff summary dumps as its msgpack. */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "msg.h"
#include "snapdiff/pickle.h"
#include "snapdiff/snapshot.h"
#include "snapdiff/render_summary.h"

static int dump_bytes(FILE *out, const uint8_t *data, size_t len, const char *name,
                      const struct cli_opts *opts)
{
    sd_error err;
    sd_error_clear(&err);
    if (sd_summary_sniff(data, len)) {
        /* A baseline summary: its msgpack as JSON, once the model reads it (so a corrupt
         * one is refused here as everywhere else, not shown). */
        sd_load_options lo = {.version = SD_LOAD_OPTIONS_VERSION, .max_memory = opts->max_memory};
        sd_snapshot *s = sd_snapshot_load_buffer(data, len, name, &lo, &err);
        sd_snapshot_free(s);
        if (s && sd_render_summary_json(out, data, len, &err) == SD_OK) return EXIT_OK;
        if (!err.source[0]) snprintf(err.source, sizeof err.source, "%s", name);
        msg_sd_error(&err);
        return EXIT_TROUBLE;
    }
    sd_pickle_options po = {.version = SD_PICKLE_OPTIONS_VERSION, .max_memory = opts->max_memory};
    sd_pickle *p = sd_pickle_parse(data, len, &po, &err);
    sd_status st = p ? SD_OK : err.code;
    if (p) {
        if (sd_pickle_trailing(p))
            msg_note("%s: %llu bytes after the pickle's STOP were ignored", name,
                     (unsigned long long)sd_pickle_trailing(p));
        /* Shared objects are written at every reference, as json.dumps does. Real
         * snapshots expand to at most ~50 output bytes per input byte (~8 values); bound
         * the expansion at 16 values per input byte so that a file of nested shared lists
         * ends in an error instead of terabytes. */
        uint64_t budget = 16 * (uint64_t)len + 20000000;
        st = sd_value_write_json(sd_pickle_root(p), out, budget, &err);
        sd_pickle_free(p);
    }
    if (st != SD_OK) {
        if (!err.source[0]) snprintf(err.source, sizeof err.source, "%s", name);
        msg_sd_error(&err);
    }
    return st == SD_OK ? EXIT_OK : EXIT_TROUBLE;
}

int cmd_dump(const struct cli_opts *opts, FILE *out)
{
    sd_error err;
    sd_error_clear(&err);
    sd_input_options io = {.version = SD_INPUT_OPTIONS_VERSION, .max_memory = opts->max_memory};
    sd_input *in = sd_input_open(opts->files[0], &io, &err);
    if (!in) {
        msg_sd_error(&err);
        return EXIT_TROUBLE;
    }
    int status = EXIT_TROUBLE;
    sd_bytes bytes = {0};
    if (sd_input_count(in) != 1)
        msg_error("%s: holds %zu snapshots; pick one as %s:MEMBER", opts->files[0],
                  sd_input_count(in), opts->files[0]);
    else if (sd_input_read(in, 0, &bytes, &err) != SD_OK)
        msg_sd_error(&err);
    else
        status = dump_bytes(out, bytes.data, bytes.len, sd_input_name(in, 0), opts);
    sd_bytes_release(&bytes);
    sd_input_free(in);
    return status;
}
