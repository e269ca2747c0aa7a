/* cmd_check.c - `snapdiff check OLD NEW [limits]`: the CI memory gate.
 *
 * Limits from the options and --config FILE (the command line wins) -> load every member
 * of both inputs (in parallel, load.h) -> pair them (ranks.h: by rank, by name) -> a diff
 * and a gate per pair (gate.h) -> render (text, JSON, GitHub annotations, JUnit XML:
 * render/check_render.h) -> exit 0 all hold, 1 a limit is exceeded or a member is missing,
 * 2 error. Every measure and verdict comes from the library.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "msg.h"
#include "render/check_render.h"
#include "snapdiff/gate.h"
#include "snapdiff/ranks.h"

enum { CONFIG_MAX = 64 * 1024 };

/* --config FILE into *limits (options already there win) and *steps. -1: printed. */
static int read_config(const char *path, sd_limits *limits, uint64_t *steps)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        msg_error("%s: cannot open limits file: %s", path, strerror(errno));
        return -1;
    }
    static char text[CONFIG_MAX + 1];
    size_t len = fread(text, 1, sizeof text, f);
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        msg_error("%s: cannot read limits file", path);
        return -1;
    }
    if (len > CONFIG_MAX) {
        msg_error("%s: limits file larger than 64 KiB", path);
        return -1;
    }
    sd_error err;
    sd_error_clear(&err);
    if (sd_limits_parse(text, len, path, limits, steps, &err) != SD_OK) {
        msg_sd_error(&err);
        return -1;
    }
    return 0;
}

/* --format github: `filename` as a path of the repository at `root`, when that file is
 * there: relative as given, else the longest tail of an absolute path that exists. */
static bool locate(void *ctx, const char *filename, char *buf, size_t size)
{
    const char *root = ctx;
    char full[PATH_MAX];
    struct stat sb;
    if (!filename[0]) return false;
    for (const char *tail = filename; tail; tail = strchr(tail + 1, '/')) {
        const char *t = tail[0] == '/' ? tail + 1 : tail;
        if (!*t || (t == filename && filename[0] == '/')) continue;
        if (strncmp(t, "../", 3) == 0) continue;
        int n = snprintf(full, sizeof full, "%s/%s", root, t);
        if (n < 0 || (size_t)n >= sizeof full) continue;
        if (stat(full, &sb) == 0 && S_ISREG(sb.st_mode)) {
            snprintf(buf, size, "%s", t);
            return true;
        }
    }
    return false;
}

typedef struct check_run {
    sd_snapshot **side[2];          /* OLD's and NEW's members */
    size_t count[2];
    struct cli_pairs pairs;
    size_t n_pairs;
    sdp_check_member *members;
    sd_diff **diffs;
    char (*labels)[64];             /* per NEW member: "rank 2", or its name */
    const char **label_ptrs;
    sd_rank_spread spread;          /* of NEW's members */
} check_run;

static void run_free(check_run *c)
{
    for (size_t i = 0; c->diffs && i < c->n_pairs; i++) sd_diff_free(c->diffs[i]);
    free(c->diffs);
    free(c->labels);
    free(c->label_ptrs);
    free(c->members);
    cli_pairs_free(&c->pairs);
    for (int s = 0; s < 2; s++) cli_free_all(c->side[s], c->count[s]);
}

/* Pair, diff and judge every member. -1: printed. */
static int judge(check_run *c, const struct cli_opts *o, const sd_limits *limits)
{
    if (cli_pair_members(o->files, c->side, c->count, &c->pairs) != 0) return -1;
    size_t room = c->pairs.n ? c->pairs.n : 1;
    c->members = calloc(room, sizeof *c->members);
    c->diffs = calloc(room, sizeof *c->diffs);
    c->labels = calloc(c->count[1] ? c->count[1] : 1, sizeof *c->labels);
    c->label_ptrs = calloc(c->count[1] ? c->count[1] : 1, sizeof *c->label_ptrs);
    if (!c->members || !c->diffs || !c->labels || !c->label_ptrs) goto oom;
    sd_rank_spread_of((const sd_snapshot *const *)c->side[1], c->count[1], &c->spread);
    c->n_pairs = c->pairs.n;
    sd_diff_options dopts;
    cli_diff_options(o, &dopts);
    for (size_t i = 0; i < c->n_pairs; i++) {
        const sd_rank_pair *p = &c->pairs.pairs[i];
        sdp_check_member *m = &c->members[i];
        bool has_old = p->old_index != SD_RANK_NONE, has_new = p->new_index != SD_RANK_NONE;
        m->name = cli_pair_name(&c->pairs, i);
        m->old_name = has_old ? c->pairs.names[0][p->old_index] : NULL;
        m->rank = p->rank;
        if (has_new) {
            sdp_check_member_label(m, c->labels[p->new_index], sizeof c->labels[p->new_index]);
            c->label_ptrs[p->new_index] = c->labels[p->new_index];
        }
        m->missing = !has_old ? SDP_CHECK_NO_OLD : !has_new ? SDP_CHECK_NO_NEW : SDP_CHECK_PAIRED;
        if (m->missing != SDP_CHECK_PAIRED) {
            msg_warn("%s: %s", m->name,
                     m->missing == SDP_CHECK_NO_OLD ? "only in NEW, no OLD member to compare with"
                                                    : "only in OLD, missing from NEW");
            continue;
        }
        sd_error err;
        sd_error_clear(&err);
        c->diffs[i] = sd_diff_create(c->side[0][p->old_index], c->side[1][p->new_index], &dopts,
                                     &err);
        if (!c->diffs[i]) {
            msg_sd_error(&err);
            return -1;
        }
        m->diff = c->diffs[i];
        sd_gate_diff(m->diff, limits, &m->gate);
        m->pass = m->gate.pass;
    }
    return 0;
oom:
    msg_error("out of memory");
    return -1;
}

static sd_status render(const struct cli_opts *o, const sdp_check_report *r, FILE *out)
{
    switch (o->format) {
    case FORMAT_JSON: return sdp_render_check_json(out, r);
    case FORMAT_GITHUB: return sdp_render_check_github(out, r);
    case FORMAT_JUNIT: return sdp_render_check_junit(out, r);
    case FORMAT_TEXT:
    case FORMAT_FOLDED:
    case FORMAT_PPROF: break;
    }
    return sdp_render_check_text(out, r);
}

/* The report to stdout, or to --output FILE. EXIT_OK or EXIT_TROUBLE (printed). */
static int write_report(const struct cli_opts *o, const sdp_check_report *r)
{
    FILE *out = o->output ? fopen(o->output, "w") : stdout;
    if (!out) {
        msg_error("%s: cannot write: %s", o->output, strerror(errno));
        return EXIT_TROUBLE;
    }
    sd_status st = render(o, r, out);
    if (o->output && fclose(out) != 0) st = SD_EIO;
    if (st == SD_ENOMEM) msg_error("out of memory while writing the report");
    if (st == SD_EIO && o->output) msg_error("%s: cannot write: %s", o->output, strerror(errno));
    if (st == SD_EIO && !o->output) return EXIT_OK;   /* main checks stdout */
    return st == SD_OK ? EXIT_OK : EXIT_TROUBLE;
}

int cmd_check(const struct cli_opts *opts)
{
    struct cli_opts o = *opts;
    if (o.config && read_config(o.config, &o.limits, &o.steps) != 0) return EXIT_TROUBLE;
    if (sd_limits_count(&o.limits) == 0) {
        msg_error("check: no limits given (--max-growth SIZE, --max-group-growth SIZE, ... "
                  "or --config FILE); see 'snapdiff check --help'");
        return EXIT_TROUBLE;
    }
    if (o.limits.has[SD_LIMIT_MAX_PER_STEP] && o.steps == 0) {
        msg_error("check: --max-per-step needs --steps N (the training steps between OLD and NEW)");
        return EXIT_TROUBLE;
    }
    check_run c;
    memset(&c, 0, sizeof c);
    sd_snapshot **loaded[2];
    if (cli_load_members(o.files, 2, &o, loaded, c.count) != 0) return EXIT_TROUBLE;
    c.side[0] = loaded[0];
    c.side[1] = loaded[1];
    int status = EXIT_TROUBLE;
    if (judge(&c, &o, &o.limits) == 0) {
        sdp_check_report r = {.members = c.members, .n = c.n_pairs, .pass = true,
                              .many = c.count[0] > 1 || c.count[1] > 1,
                              .top = (size_t)o.top == 20 ? 0 : (size_t)o.top,
                              .render = {.color = o.color}, .locate = locate,
                              .locate_ctx = (void *)(o.repo_root ? o.repo_root : "."),
                              .spread = &c.spread, .spread_names = c.label_ptrs};
        for (size_t i = 0; i < c.n_pairs; i++) r.pass = r.pass && c.members[i].pass;
        status = write_report(&o, &r);
        if (status == EXIT_OK && !r.pass) {
            status = EXIT_CHECK_FAILED;
            if (o.format != FORMAT_TEXT || o.output) {
                char failed[512] = "";
                size_t k = 0;
                for (size_t i = 0; i < c.n_pairs && k < sizeof failed; i++) {
                    char label[300];
                    if (!c.members[i].pass)
                        k += (size_t)snprintf(failed + k, sizeof failed - k, "%s%s", k ? ", " : "",
                                              sdp_check_member_label(&c.members[i], label,
                                                                     sizeof label));
                }
                msg_error("check failed%s%s", r.many ? ": " : "", r.many ? failed : "");
            }
        }
    }
    run_free(&c);
    return status;
}
