/* check_ci.c - `snapdiff check` for CI systems: GitHub Actions annotation lines
 * (`::error ...::`, `::warning ...::`) and a JUnit XML report (one test case per limit,
 * per member). The verdicts come from the gate (gate.h); the words from check_text.c. */
#include <inttypes.h>
#include <string.h>

#include "render/check_render.h"
#include "render/check_words.h"

enum { KEY_SHOWN = 160 };

/* GitHub's workflow-command escaping: data %, CR, LF; properties also ':' and ','. */
static void gh_put(FILE *out, const char *s, bool property)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '%') fputs("%25", out);
        else if (ch == '\r') fputs("%0D", out);
        else if (ch == '\n') fputs("%0A", out);
        else if (property && ch == ':') fputs("%3A", out);
        else if (property && ch == ',') fputs("%2C", out);
        else fputc(ch, out);
    }
}

static void gh_line(FILE *out, const char *level, const char *file, int64_t line,
                    const char *title, const char *message)
{
    fprintf(out, "::%s ", level);
    if (file) {
        fputs("file=", out);
        gh_put(out, file, true);
        if (line > 0) fprintf(out, ",line=%" PRId64, line);
        fputc(',', out);
    }
    fputs("title=", out);
    gh_put(out, title, true);
    fputs("::", out);
    gh_put(out, message, false);
    fputc('\n', out);
}

static void gh_member(FILE *out, const sd_check_report *r, const sd_check_member *m)
{
    char title[320], msg[600], words[256];
    char label[300];
    const char *who = r->many ? sd_check_member_label(m, label, sizeof label) : NULL;
    snprintf(title, sizeof title, "snapdiff check%s%s%s", who ? " (" : "", who ? who : "",
             who ? ")" : "");
    if (m->missing != SD_MEMBER_PAIRED) {
        snprintf(msg, sizeof msg, "%s: %s", m->name, sdp_check_missing_text(m->missing));
        gh_line(out, "error", NULL, 0, title, msg);
        return;
    }
    for (size_t i = 0; i < m->gate.n_results; i++) {
        const sd_limit_result *x = &m->gate.results[i];
        if (x->pass && !x->near) continue;
        sdp_check_words(x, words, sizeof words);
        snprintf(msg, sizeof msg, "--%s: %s%s", x->name, words, x->pass ? " (near the limit)" : "");
        gh_line(out, x->pass ? "warning" : "error", NULL, 0, title, msg);
    }
    for (size_t i = 0; i < m->gate.n_offenders; i++) {
        const sd_check_offender *g = &m->offenders[i];
        char path[1024];
        bool here = g->has_site && r->locate &&
                    r->locate(r->locate_ctx, g->site_file, path, sizeof path);
        int klen = (int)strlen(g->label);
        snprintf(msg, sizeof msg, "%s allocated here (now %s) behind --%s: %.*s%s",
                 sdp_fmt_delta(g->delta_bytes).s, sdp_fmt_bytes(g->new_bytes).s,
                 sd_limit_name(g->limit), klen > KEY_SHOWN ? KEY_SHOWN : klen,
                 g->label, klen > KEY_SHOWN ? "..." : "");
        gh_line(out, "error", here ? path : NULL, here ? g->site_line : 0, title, msg);
    }
}

sd_status sd_render_check_github(FILE *out, const sd_check_report *r)
{
    if (sdp_options_check(r, SD_CHECK_REPORT_VERSION, "sd_check_report", NULL))
        return SD_EUSAGE;
    if (sdp_options_check(&r->render, SD_RENDER_OPTIONS_VERSION, "sd_render_options", NULL))
        return SD_EUSAGE;
    for (size_t i = 0; i < r->n; i++) gh_member(out, r, &r->members[i]);
    if (r->pass) fprintf(out, "snapdiff check passed\n");
    return ferror(out) ? SD_EIO : SD_OK;
}

/* ---- JUnit ---- */

static void xml(FILE *out, const char *s) { sdp_put_xml(out, s, strlen(s)); }

static void junit_case(FILE *out, const char *suite, const char *name, bool pass,
                       const char *message, const char *detail)
{
    fputs("    <testcase classname=\"", out);
    xml(out, suite);
    fputs("\" name=\"", out);
    xml(out, name);
    fputs("\"", out);
    if (pass) {
        fputs(">\n      <system-out>", out);
        xml(out, message);
        fputs("</system-out>\n    </testcase>\n", out);
        return;
    }
    fputs(">\n      <failure type=\"snapdiff.check\" message=\"", out);
    xml(out, message);
    fputs("\">", out);
    /* line by line: sdp_put_xml writes a newline as '?' */
    for (const char *p = detail ? detail : message; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        sdp_put_xml(out, p, n);
        if (!nl) break;
        fputc('\n', out);
        p = nl + 1;
    }
    fputs("</failure>\n    </testcase>\n", out);
}

static size_t member_cases(const sd_check_member *m, size_t *failures)
{
    if (m->missing != SD_MEMBER_PAIRED) {
        *failures = 1;
        return 1;
    }
    *failures = 0;
    for (size_t i = 0; i < m->gate.n_results; i++) *failures += !m->gate.results[i].pass;
    return m->gate.n_results;
}

/* The groups behind one failed limit, a line each, into buf. */
static void offenders_detail(const sd_check_member *m, sd_limit_id id, const char *first,
                             char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "%s", first);
    for (size_t i = 0; i < m->gate.n_offenders && k < size; i++) {
        if (m->gate.offenders[i].limit != id) continue;
        const sd_check_offender *g = &m->offenders[i];
        k += (size_t)snprintf(buf + k, size - k, "\n%s (now %s) at %.*s",
                              sdp_fmt_delta(g->delta_bytes).s, sdp_fmt_bytes(g->new_bytes).s,
                              KEY_SHOWN, g->label);
    }
}

sd_status sd_render_check_junit(FILE *out, const sd_check_report *r)
{
    if (sdp_options_check(r, SD_CHECK_REPORT_VERSION, "sd_check_report", NULL))
        return SD_EUSAGE;
    if (sdp_options_check(&r->render, SD_RENDER_OPTIONS_VERSION, "sd_render_options", NULL))
        return SD_EUSAGE;
    size_t tests = 0, failures = 0;
    for (size_t i = 0; i < r->n; i++) {
        size_t f;
        tests += member_cases(&r->members[i], &f);
        failures += f;
    }
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<testsuites name=\"snapdiff check\" tests=\"%zu\" failures=\"%zu\">\n",
            tests, failures);
    for (size_t i = 0; i < r->n; i++) {
        const sd_check_member *m = &r->members[i];
        size_t f, n = member_cases(m, &f);
        char suite[320];
        if (r->many && m->rank >= 0)
            snprintf(suite, sizeof suite, "snapdiff.check.rank%" PRId64, m->rank);
        else
            snprintf(suite, sizeof suite, "snapdiff.check%s%s", r->many ? "." : "",
                     r->many ? m->name : "");
        fputs("  <testsuite name=\"", out);
        xml(out, suite);
        fprintf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n", n, f);
        if (m->missing != SD_MEMBER_PAIRED) {
            junit_case(out, suite, "present on both sides", false,
                       sdp_check_missing_text(m->missing), NULL);
        }
        for (size_t k = 0; m->missing == SD_MEMBER_PAIRED && k < m->gate.n_results; k++) {
            const sd_limit_result *x = &m->gate.results[k];
            char words[256], detail[4096];
            sdp_check_words(x, words, sizeof words);
            offenders_detail(m, x->id, words, detail, sizeof detail);
            junit_case(out, suite, x->name, x->pass, words, detail);
        }
        fputs("  </testsuite>\n", out);
    }
    fputs("</testsuites>\n", out);
    return ferror(out) ? SD_EIO : SD_OK;
}
