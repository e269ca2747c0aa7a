/* cmd_trace.c - `snapdiff trace FILE`: the recorded allocation history, replayed.
 *
 * load -> analyse (sd_trace, trace.h) -> render (text or JSON, snapdiff/render_trace.h)
 * -> exit status. This file maps the options (--since/--until parsed here) and nothing else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "msg.h"
#include "snapdiff/render_trace.h"
#include "snapdiff/trace.h"

/* "#N" an entry index, "+US" microseconds after the first recorded time, "T" a time_us. */
static bool parse_bound(const char *name, const char *v, sd_trace_bound *out)
{
    out->kind = SD_BOUND_NONE;
    if (!v) return true;
    const char *p = v;
    sd_trace_bound_kind kind = SD_BOUND_TIME;
    if (*p == '#') { kind = SD_BOUND_INDEX; p++; }
    else if (*p == '+') { kind = SD_BOUND_OFFSET; p++; }
    char *end;
    errno = 0;
    long long x = (*p >= '0' && *p <= '9') ? strtoll(p, &end, 10) : -1;
    if (x < 0 || errno || *end) {
        msg_error("--%s: '%s' is not #N (an entry index), +US (microseconds after the first "
                  "entry) or a time_us", name, v);
        return false;
    }
    out->kind = kind;
    out->value = x;
    return true;
}

int cmd_trace(const struct cli_opts *o, FILE *out)
{
    if (o->group_by == SD_GROUP_ANNOTATION || o->group_by == SD_GROUP_COMPILE_CONTEXT) {
        /* The replay keys entries by their frames; the recorded context is the diff's. */
        msg_error("trace groups by frames: --group-by %s works with diff only",
                  sd_group_by_name(o->group_by));
        return EXIT_TROUBLE;
    }
    sd_trace_options to;
    sd_trace_options_init(&to, SD_TRACE_OPTIONS_VERSION);
    cli_attrib_options(o, &to.attrib);
    to.max_memory = o->max_memory;
    if (!parse_bound("since", o->trace.since, &to.since) ||
        !parse_bound("until", o->trace.until, &to.until))
        return EXIT_TROUBLE;
    sd_snapshot *snap = NULL;
    struct cli_load_options lo = {.shape = CLI_LOAD_ONE, .specs = o->files, .n = 1, .one = &snap};
    if (cli_load(o, &lo) != 0) return EXIT_TROUBLE;
    sd_error err;
    sd_error_clear(&err);
    sd_trace *t = sd_trace_create(snap, &to, &err);
    sd_frag *ooms = NULL;
    int status = EXIT_TROUBLE;
    if (!t) {
        msg_sd_error(&err);
    } else if (cli_oom_analysis(o, snap, &ooms) == EXIT_OK) {
        sd_status st;
        if (o->format == FORMAT_JSON) {
            st = sd_render_trace_json_with_ooms(out, t, ooms);
            if (st == SD_ENOMEM) msg_error("out of memory while writing JSON");
        } else {
            sd_trace_text_options tt = SD_TRACE_TEXT_OPTIONS_INIT;
            tt.render.color = o->color;
            tt.top = (size_t)o->top;
            tt.ooms = ooms;
            st = sd_render_trace_text(out, t, &tt);
        }
        status = st == SD_OK || st == SD_EIO ? EXIT_OK : EXIT_TROUBLE;
    }
    sd_frag_free(ooms);
    sd_trace_free(t);
    sd_snapshot_free(snap);
    return status;
}
