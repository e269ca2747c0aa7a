/* cmd_top.c - `snapdiff top FILE...` (and `snapdiff FILE`): live memory by site at the end
 * and at the peak of each snapshot.
 *
 * load -> analyse (sd_peak, peak.h) -> render (render_top.h) -> exit status. One text
 * section, or one snapdiff.top/1 document, per snapshot (several documents form a stream
 * that jq reads as it comes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "msg.h"
#include "snapdiff/peak.h"
#include "snapdiff/render_top.h"

static int top_one(const struct cli_opts *o, FILE *out, const sd_snapshot *snap, bool first)
{
    sd_peak_options po;
    sd_peak_options_init(&po, SD_PEAK_OPTIONS_VERSION);
    cli_attrib_options(o, &po.attrib);
    po.max_memory = o->max_memory;
    sd_error err;
    sd_error_clear(&err);
    sd_peak *p = sd_peak_create(snap, &po, &err);
    if (!p) {
        msg_sd_error(&err);
        return EXIT_TROUBLE;
    }
    sd_frag *ooms = NULL;
    if (cli_oom_analysis(o, snap, &ooms) != EXIT_OK) {
        sd_peak_free(p);
        return EXIT_TROUBLE;
    }
    sd_render_options ro = {.color = o->color};
    sd_status st;
    if (o->format == FORMAT_JSON) {
        st = sd_render_top_json_with_ooms(out, p, ooms, &ro, &err);
    } else {
        if (!first) fputc('\n', out);
        sd_top_text_options tt = {.version = SD_TOP_TEXT_OPTIONS_VERSION, .top = (size_t)o->top,
                                  .ooms = ooms};
        st = sd_render_top_text(out, p, &ro, &tt, &err);
    }
    sd_frag_free(ooms);
    sd_peak_free(p);
    if (st == SD_ENOMEM) msg_error("out of memory while writing the result");
    return st == SD_OK || st == SD_EIO ? EXIT_OK : EXIT_TROUBLE;
}

int cmd_top(const struct cli_opts *o, FILE *out)
{
    if (o->format != FORMAT_TEXT && o->format != FORMAT_JSON) {
        msg_error("top writes text or json");
        return EXIT_TROUBLE;
    }
    if (o->group_by == SD_GROUP_ANNOTATION || o->group_by == SD_GROUP_COMPILE_CONTEXT) {
        /* Trace entries carry frames only; the recorded context is the diff's. */
        msg_error("top groups by frames: --group-by %s works with diff only",
                  sd_group_by_name(o->group_by));
        return EXIT_TROUBLE;
    }
    sd_snapshot **snaps = NULL;
    size_t n = 0;
    struct cli_load_options lo = {.shape = CLI_LOAD_FLAT, .specs = o->files,
                                  .n = (size_t)o->n_files, .all = &snaps, .n_all = &n};
    if (cli_load(o, &lo) != 0) return EXIT_TROUBLE;
    int status = EXIT_OK;
    for (size_t i = 0; i < n && status == EXIT_OK; i++)
        status = top_one(o, out, snaps[i], i == 0);
    cli_free_all(snaps, n);
    return status;
}
