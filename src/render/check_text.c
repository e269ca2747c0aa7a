/* check_text.c - `snapdiff check` for people: one aligned verdict line per limit, then
 * the groups behind the failures; per member when the inputs hold several ranks. The
 * words every check renderer shares are check_words.c's. */
#include <inttypes.h>
#include <string.h>

#include "render/check_render.h"
#include "render/check_words.h"
#include "render/format.h"
#include "render/pattern_words.h"

enum { TOP_DEFAULT = 5, KEY_SHOWN = 100 };

void sd_render_spread_text(FILE *out, const sd_rank_spread *sp, const char *const *names,
                            const char *noun, bool color)
{
    if (sp->n < 2) return;
    char head[64];
    snprintf(head, sizeof head, "Across %zu %s", sp->n, noun);
    fprintf(out, "%s%-17s%s  %12s  %12s  %12s\n", sdp_ansi(color, SDP_BOLD), head,
            sdp_ansi(color, SDP_RESET), "min", "median", "max");
    fprintf(out, "  allocated        %12s  %12s  %12s\n", sdp_fmt_bytes(sp->allocated_min).s,
            sdp_fmt_bytes(sp->allocated_median).s, sdp_fmt_bytes(sp->allocated_max).s);
    fprintf(out, "  reserved         %12s  %12s  %12s\n", sdp_fmt_bytes(sp->reserved_min).s,
            sdp_fmt_bytes(sp->reserved_median).s, sdp_fmt_bytes(sp->reserved_max).s);
    if (sp->furthest != SD_RANK_NONE)
        fprintf(out, "  furthest from the median: %s (allocated %s)\n", names[sp->furthest],
                sdp_fmt_delta(sp->furthest_delta).s);
}

static void limits_text(FILE *out, const sd_check_report *r, const sd_check_member *m,
                        const char *indent)
{
    bool c = r->render.color;
    size_t wn = 0, wm = 0, wl = 0;
    for (size_t i = 0; i < m->gate.n_results; i++) {
        const sd_limit_result *x = &m->gate.results[i];
        size_t a = strlen(x->name), b = strlen(sdp_check_measured_text(x).s),
               d = strlen(sdp_check_limit_text(x).s);
        wn = a > wn ? a : wn;
        wm = b > wm ? b : wm;
        wl = d > wl ? d : wl;
    }
    wn = wn < 5 ? 5 : wn;
    wm = wm < 8 ? 8 : wm;
    fprintf(out, "%s%s      %-*s  %*s      %*s%s\n", indent, sdp_ansi(c, SDP_DIM), (int)wn,
            "limit", (int)wm, "measured", (int)wl, "allowed", sdp_ansi(c, SDP_RESET));
    for (size_t i = 0; i < m->gate.n_results; i++) {
        const sd_limit_result *x = &m->gate.results[i];
        const char *mark = x->pass ? "PASS" : "FAIL";
        fprintf(out, "%s%s%s%s  %-*s  %*s  %s  %*s", indent,
                sdp_ansi(c, x->pass ? SDP_GREEN : SDP_RED), mark, sdp_ansi(c, SDP_RESET),
                (int)wn, x->name, (int)wm, sdp_check_measured_text(x).s,
                x->pass ? "<=" : "> ", (int)wl, sdp_check_limit_text(x).s);
        sdp_text a = sdp_check_measured_text(x), b = sdp_check_limit_text(x);
        if (x->unit == SD_UNIT_BYTES && x->measurable && strstr(a.s, b.s))   /* same rounding */
            fprintf(out, "  (%s B vs %s B)", sdp_fmt_count_delta(x->measured).s,
                    sdp_fmt_count(x->limit).s);
        if (!x->measurable && x->id == SD_LIMIT_MAX_GROWTH_PCT)
            fprintf(out, "  (OLD allocates nothing; growth %s)", sdp_fmt_delta(x->measured).s);
        if (x->near) fprintf(out, "  %s(near the limit)%s", sdp_ansi(c, SDP_YELLOW),
                             sdp_ansi(c, SDP_RESET));
        fputc('\n', out);
    }
}

static void offenders_text(FILE *out, const sd_check_report *r, const sd_check_member *m,
                           const char *indent)
{
    if (!m->gate.n_offenders) return;
    size_t top = r->top ? r->top : TOP_DEFAULT, shown = 0;
    fprintf(out, "\n%sGroups behind the failures (largest growth first):\n", indent);
    fprintf(out, "%s  %12s  %12s  %-16s  %s\n", indent, "growth", "now", "breaks", "site");
    for (size_t i = 0; i < m->gate.n_offenders && shown < top; i++, shown++) {
        const sd_check_offender *g = &m->offenders[i];
        char key[4096];
        fprintf(out, "%s  %12s  %12s  %-16s  %s\n", indent, sdp_fmt_delta(g->delta_bytes).s,
                sdp_fmt_bytes(g->new_bytes).s, sd_limit_name(g->limit),
                sdp_fit_key(g->label, KEY_SHOWN, key, sizeof key));
        /* The diff's pattern and fix under the site, as `snapdiff OLD NEW` shows it. */
        const char *code = sd_pattern_code(g->pattern);
        if (code && g->delta_bytes > 0)
            fprintf(out, "%s  %12s  %12s  %-16s  %s[%s] %s%s\n", indent, "", "", "",
                    sdp_ansi(r->render.color, SDP_DIM), code, sdp_pattern_hint(g->pattern),
                    sdp_ansi(r->render.color, SDP_RESET));
    }
    if (m->gate.n_offenders_total > shown)
        fprintf(out, "%s  ... and %zu more (snapdiff OLD NEW shows every group)\n", indent,
                m->gate.n_offenders_total - shown);
}

static void member_text(FILE *out, const sd_check_report *r, const sd_check_member *m)
{
    bool c = r->render.color;
    const char *indent = r->many ? "  " : "";
    char label[300];
    if (r->many) {
        fprintf(out, "%s%s%s", sdp_ansi(c, SDP_BOLD), sd_check_member_label(m, label, sizeof label),
                sdp_ansi(c, SDP_RESET));
        if (m->rank >= 0) fprintf(out, " (%s)", m->name);
        fprintf(out, ": %s%s%s\n", sdp_ansi(c, m->pass ? SDP_GREEN : SDP_RED),
                m->pass ? "PASS" : "FAIL", sdp_ansi(c, SDP_RESET));
    }
    if (m->missing != SD_MEMBER_PAIRED) {
        fprintf(out, "%s%sFAIL%s  %s\n", indent, sdp_ansi(c, SDP_RED), sdp_ansi(c, SDP_RESET),
                sdp_check_missing_text(m->missing));
        return;
    }
    limits_text(out, r, m, indent);
    offenders_text(out, r, m, indent);
}

sd_status sd_render_check_text(FILE *out, const sd_check_report *r)
{
    if (sdp_options_check(r, SD_CHECK_REPORT_VERSION, "sd_check_report", NULL))
        return SD_EUSAGE;
    if (sdp_options_check(&r->render, SD_RENDER_OPTIONS_VERSION, "sd_render_options", NULL))
        return SD_EUSAGE;
    bool c = r->render.color;
    size_t failed = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (i && r->many) fputc('\n', out);
        member_text(out, r, &r->members[i]);
        failed += !r->members[i].pass;
    }
    fputc('\n', out);
    if (r->many && r->spread && r->spread_names && r->spread->n > 1) {
        sd_render_spread_text(out, r->spread, r->spread_names,
                               r->n && r->members[0].rank >= 0 ? "ranks" : "members", c);
        fputc('\n', out);
    }
    if (r->pass) {
        fprintf(out, "%scheck passed%s", sdp_ansi(c, SDP_GREEN), sdp_ansi(c, SDP_RESET));
        if (r->many) fprintf(out, ": all %zu members within every limit", r->n);
        fputc('\n', out);
    } else {
        fprintf(out, "%scheck FAILED%s", sdp_ansi(c, SDP_RED), sdp_ansi(c, SDP_RESET));
        if (r->many) {
            bool ranks = r->n && r->members[0].rank >= 0;
            fprintf(out, ": %zu of %zu %s:", failed, r->n, ranks ? "ranks" : "members");
            const char *sep = " ";
            for (size_t i = 0; i < r->n; i++)
                if (!r->members[i].pass) {
                    char label[300];
                    const sd_check_member *m = &r->members[i];
                    fprintf(out, "%s%s", sep, sd_check_member_label(m, label, sizeof label));
                    if (m->gate.n_offenders) {
                        const sd_check_offender *g = &m->offenders[0];
                        char key[4096];
                        fprintf(out, " (%s at %s)", sdp_fmt_delta(g->delta_bytes).s,
                                sdp_fit_key(g->label, KEY_SHOWN, key, sizeof key));
                    } else if (m->missing != SD_MEMBER_PAIRED) {
                        fprintf(out, " (%s)", m->missing == SD_MEMBER_NO_NEW ? "missing from NEW"
                                                                              : "not in OLD");
                    }
                    sep = ", ";
                }
        } else {
            fputs(":", out);
            for (size_t i = 0; i < r->members[0].gate.n_results; i++)
                if (!r->members[0].gate.results[i].pass)
                    fprintf(out, " --%s", r->members[0].gate.results[i].name);
        }
        fputc('\n', out);
    }
    return ferror(out) ? SD_EIO : SD_OK;
}
