/* diff_ranks.c - the diff of many ranks laid out member by member (render_ranks.h): the
 * text headings and closing table, the snapdiff.diff-ranks/1 document around each pair's
 * snapdiff.diff/1 document. */
#include <inttypes.h>
#include <string.h>

#include "render/format.h"
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

sd_status sd_render_diff_ranks_json_begin(FILE *out)
{
    fprintf(out, "{\n  \"schema\": \"" SD_DIFF_RANKS_SCHEMA "\",\n  \"members\": [");
    return written(out);
}

sd_status sd_render_diff_rank_json(FILE *out, const sd_diff_rank *m, size_t i)
{
    fprintf(out, "%s\n    {\"member\": ", i == 0 ? "" : ",");
    sdp_put_json_string(out, m->name, strlen(m->name));
    if (m->rank >= 0) fprintf(out, ", \"rank\": %" PRId64, m->rank);
    else fprintf(out, ", \"rank\": null");
    fprintf(out, ", \"old_member\": ");
    if (m->old_name) sdp_put_json_string(out, m->old_name, strlen(m->old_name));
    else fprintf(out, "null");
    fprintf(out, ", \"missing\": %s, \"diff\": ",
            m->missing == SD_MEMBER_PAIRED ? "null"
            : m->missing == SD_MEMBER_NO_OLD ? "\"old\"" : "\"new\"");
    if (m->missing != SD_MEMBER_PAIRED) fprintf(out, "null}");
    else {
        if (m->report) fwrite(m->report, 1, m->report_len, out);
        fprintf(out, "    }");
    }
    return written(out);
}

sd_status sd_render_diff_ranks_json_end(FILE *out)
{
    fprintf(out, "\n  ]\n}\n");
    return written(out);
}
