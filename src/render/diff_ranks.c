/* diff_ranks.c - the diff of many ranks laid out member by member (render_ranks.h): the
 * text headings and closing table, the snapdiff.diff-ranks/1 document around each pair's
 * snapdiff.diff/1 document. */
#include <inttypes.h>
#include <string.h>

#include "render/format.h"
#include "render/json_frame.h"
#include "snapdiff/render_ranks.h"

const char *sd_member_missing_text(sd_member_missing m)
{
    return m == SD_MEMBER_NO_OLD ? "only in NEW: no OLD member to compare with"
           : m == SD_MEMBER_NO_NEW ? "only in OLD: missing from NEW"
                                   : "";
}

static sd_status written(FILE *out) { return ferror(out) ? SD_EIO : SD_OK; }

sd_status sd_render_diff_rank_text(FILE *out, const sd_diff_rank *m, size_t i)
{
    if (i != 0) fprintf(out, "\n");
    fprintf(out, "=== %s", m->label);
    if (m->rank >= 0) fprintf(out, " (%s)", m->name);
    if (m->missing == SD_MEMBER_PAIRED && m->old_name && strcmp(m->old_name, m->name) != 0)
        fprintf(out, ", OLD %s", m->old_name);
    fprintf(out, " ===\n");
    if (m->missing != SD_MEMBER_PAIRED) fprintf(out, "%s\n", sd_member_missing_text(m->missing));
    else if (m->report) fwrite(m->report, 1, m->report_len, out);
    return written(out);
}

sd_status sd_render_diff_ranks_summary_text(FILE *out, const sd_diff_rank *m, size_t n,
                                            const sd_rank_spread *sp,
                                            const char *const *names,
                                            const sd_render_options *ro)
{
    if (sdp_options_check(ro, SD_RENDER_OPTIONS_VERSION, "sd_render_options", NULL))
        return SD_EUSAGE;
    bool c = ro && ro->color;
    fprintf(out, "\n%sGrowth per %s%s\n", sdp_ansi(c, SDP_BOLD),
            n && m[0].rank >= 0 ? "rank" : "member", sdp_ansi(c, SDP_RESET));
    fprintf(out, "  %12s  %s\n", "allocated", "member");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %12s  %s\n",
                m[i].missing != SD_MEMBER_PAIRED ? "missing" : sdp_fmt_delta(m[i].grew).s,
                m[i].label);
    if (sp && names && sp->n > 1) {
        fprintf(out, "\n");
        sd_render_spread_text(out, sp, names, n && m[0].rank >= 0 ? "ranks" : "members", c);
    }
    return written(out);
}

/* The document's members are streamed one at a time (one model per loading thread): the
 * document and each member are built with jansson, and each member's "diff" (the pair's
 * snapdiff.diff/1 document, rendered before) is written where jansson left its null. */
sd_status sd_render_diff_ranks_json_begin(FILE *out)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string(SD_DIFF_RANKS_SCHEMA));
    json_object_set_new(doc, "members", json_null());
    sd_status st = sdp_json_write_open(out, doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (st != SD_OK) return st;
    fputc('[', out);
    return written(out);
}

static json_t *missing_json(sd_member_missing m)
{
    return m == SD_MEMBER_PAIRED ? json_null()
           : json_string(m == SD_MEMBER_NO_OLD ? "old" : "new");
}

sd_status sd_render_diff_rank_json(FILE *out, const sd_diff_rank *m, size_t i)
{
    json_t *j = json_object();
    json_object_set_new(j, "member", sdp_json_text(m->name));
    json_object_set_new(j, "rank", m->rank >= 0 ? json_integer(m->rank) : json_null());
    json_object_set_new(j, "old_member", sdp_json_text(m->old_name));
    json_object_set_new(j, "missing", missing_json(m->missing));
    json_object_set_new(j, "diff", json_null());
    fprintf(out, "%s\n    ", i == 0 ? "" : ",");
    sd_status st = sdp_json_write_open(out, j, JSON_PRESERVE_ORDER);   /* on one line */
    if (st != SD_OK) return st;
    if (m->missing == SD_MEMBER_PAIRED && m->report) {
        fwrite(m->report, 1, m->report_len, out);
        fputs("    }", out);
    } else {
        fputs("null}", out);
    }
    return written(out);
}

sd_status sd_render_diff_ranks_json_end(FILE *out)
{
    fprintf(out, "\n  ]\n}\n");   /* the members' list, then the document begun above */
    return written(out);
}
