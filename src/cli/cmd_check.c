/* cmd_check.c - `snapdiff check OLD NEW [limits]`: the CI memory gate.
 *
 * Limits from the options and --config FILE (the command line wins) -> load OLD's members
 * -> open NEW and pair its members with OLD's by name (ranks.h: by rank, by name) -> load
 * NEW's members in parallel (load.h), each judged by a diff and a gate (gate.h) and freed
 * in its loading thread -> render (text, JSON, GitHub annotations, JUnit XML:
 * snapdiff/render_check.h) -> exit 0 all hold, 1 a limit is exceeded or a member is missing,
 * 2 error. Every measure and verdict comes from the library.
 */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "msg.h"
#include "snapdiff/render_check.h"
#include "snapdiff/render_ranks.h"
#include "snapdiff/gate.h"
#include "snapdiff/ranks.h"

/* --config FILE's limits (options already there win) and steps. */
struct check_config {
    sd_limits *limits;
    uint64_t *steps;
};

static sd_status parse_config(const char *text, size_t len, const char *path, void *ctx,
                              sd_error *err)
{
    struct check_config *c = ctx;
    return sd_limits_parse(text, len, path, c->limits, c->steps, err);
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

/* OLD's members are loaded first and kept (a baseline: often small summaries); NEW's are
 * then streamed: each is judged against its OLD member in its loading thread, reduced to
 * the gate's verdicts and copied offenders, and freed, so that a job of many large ranks
 * holds OLD plus one NEW model per loading thread, never every rank at once. */
typedef struct check_run {
    const struct cli_opts *o;
    const sd_limits *limits;
    sd_diff_options dopts;
    sd_snapshot **old;              /* OLD's members */
    size_t n_old;
    char **new_names;               /* NEW's members' names (owned), from `opened` */
    size_t n_new;
    struct cli_pairs pairs;
    size_t *pair_of_new;            /* NEW member -> its pair */
    sd_check_member *members;      /* per pair */
    sd_stats *new_totals;           /* per NEW member, for the spread */
    char (*labels)[64];             /* per NEW member: "rank 2", or its name */
    const char **label_ptrs;
    sd_rank_spread spread;          /* of NEW's members */
    struct cli_left_out old_left_out;   /* OLD's members that did not read (warned) */
    bool *unread;                   /* per pair: a side did not read: not judged, dropped */
    bool *judged;                   /* per NEW member: loaded and judged */
    size_t *old_map, *new_map;      /* the names paired -> OLD's (left-out names after
                                     * c->old) and NEW's members: a job's folder of several
                                     * steps pairs each rank's last step only */
} check_run;

static void run_free(check_run *c)
{
    for (size_t i = 0; c->members && i < c->pairs.n; i++) sd_check_member_release(&c->members[i]);
    free(c->members);
    free(c->pair_of_new);
    free(c->new_totals);
    free(c->labels);
    free(c->label_ptrs);
    cli_pairs_free(&c->pairs);
    cli_left_out_free(&c->old_left_out);
    free(c->unread);
    free(c->judged);
    free(c->old_map);
    free(c->new_map);
    for (size_t i = 0; c->new_names && i < c->n_new; i++) free(c->new_names[i]);
    free(c->new_names);
    cli_free_all(c->old, c->n_old);
}

static void error_text(sd_error *err, sd_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void error_text(sd_error *err, sd_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err->code = code;
    vsnprintf(err->text, sizeof err->text, fmt, ap);
    va_end(ap);
}

/* The names check pairs, as indices into names[0..n) (map, room n): all of them, or, for
 * a job's folder of several steps or with OOM dumps (ranks.h: sd_job_names_are_steps),
 * each rank's last step; the earlier steps and the OOM dumps are named, not judged.
 * @return how many. */
static size_t judged_names(const char *side, const char *const *names, size_t n, size_t *map)
{
    sd_job_name *j = sd_job_names_are_steps(names, n, NULL) ? calloc(n, sizeof *j) : NULL;
    if (!j) {   /* no job's folder of steps (or no memory to tell): every name */
        for (size_t i = 0; i < n; i++) map[i] = i;
        return n;
    }
    for (size_t i = 0; i < n; i++) sd_job_name_read(names[i], NULL, &j[i]);
    size_t k = 0, earlier = 0;
    for (size_t i = 0; i < n; i++) {
        if (j[i].oom) {
            msg_note("%s: %s is an OOM dump (what was live when the allocator failed): not "
                     "judged; `snapdiff stats` or `frag` read it", side, names[i]);
            continue;
        }
        bool last = true;   /* no later step of the same rank */
        for (size_t x = 0; x < n && last; x++)
            if (x != i && !j[x].oom && j[x].rank == j[i].rank
                && (j[x].step > j[i].step || (j[x].step == j[i].step && x < i)))
                last = false;
        if (last) map[k++] = i;
        else earlier++;
    }
    free(j);
    if (earlier)
        msg_note("%s: a job's folder of several steps: each rank's last step is judged (%zu "
                 "earlier %s left aside)", side, earlier, earlier == 1 ? "snapshot" : "snapshots");
    return k;
}

/* NEW is open: its members' names pair them with OLD's before any is loaded. */
static sd_status plan(void *ctx, size_t input, const sd_input *in, sd_error *err)
{
    (void)input;
    check_run *c = ctx;
    c->n_new = sd_input_count(in);
    size_t room = c->n_new ? c->n_new : 1;
    c->new_names = calloc(room, sizeof *c->new_names);
    c->new_totals = calloc(room, sizeof *c->new_totals);
    c->pair_of_new = calloc(room, sizeof *c->pair_of_new);
    c->labels = calloc(room, sizeof *c->labels);
    c->label_ptrs = calloc(room, sizeof *c->label_ptrs);
    /* OLD's members that did not read still pair by their names: their ranks are then
     * left out, not compared with another rank's baseline. */
    size_t n_old_named = c->n_old + c->old_left_out.n;
    const char **old_names = calloc(n_old_named ? n_old_named : 1, sizeof *old_names);
    c->judged = calloc(room, sizeof *c->judged);
    if (!c->new_names || !c->new_totals || !c->pair_of_new || !c->labels || !c->label_ptrs ||
        !old_names || !c->judged) {
        free(old_names);
        return msg_nomem(err);
    }
    for (size_t i = 0; i < c->n_new; i++)
        if (!(c->new_names[i] = strdup(sd_input_name(in, i)))) {
            free(old_names);
            return msg_nomem(err);
        }
    for (size_t i = 0; i < c->n_old; i++) old_names[i] = sd_snapshot_source(c->old[i]);
    for (size_t i = 0; i < c->old_left_out.n; i++) old_names[c->n_old + i] = c->old_left_out.names[i];
    if (n_old_named > 1 && c->n_new == 1) {   /* cli_pair_names would print it: one line */
        free(old_names);
        error_text(err, SD_EUSAGE, "OLD (%s) holds %zu snapshots: pick one as %s:MEMBER, "
                       "or give NEW as an archive or directory of ranks too", c->o->files[0],
                       n_old_named, c->o->files[0]);
        return SD_EUSAGE;
    }
    c->old_map = calloc(n_old_named ? n_old_named : 1, sizeof *c->old_map);
    c->new_map = calloc(room, sizeof *c->new_map);
    const char **paired_old = calloc(n_old_named ? n_old_named : 1, sizeof *paired_old);
    const char **paired_new = calloc(room, sizeof *paired_new);
    if (!c->old_map || !c->new_map || !paired_old || !paired_new) {
        free(old_names);
        free(paired_old);
        free(paired_new);
        return msg_nomem(err);
    }
    size_t k_old = judged_names("OLD", old_names, n_old_named, c->old_map);
    size_t k_new = judged_names("NEW", (const char *const *)c->new_names, c->n_new, c->new_map);
    for (size_t i = 0; i < k_old; i++) paired_old[i] = old_names[c->old_map[i]];
    for (size_t i = 0; i < k_new; i++) paired_new[i] = c->new_names[c->new_map[i]];
    for (size_t i = 0; i < c->n_new; i++) c->pair_of_new[i] = SD_RANK_NONE;   /* not judged */
    const char *const *sources[2] = {paired_old, paired_new};
    size_t count[2] = {k_old, k_new};
    int rc = cli_pair_names(c->o->files, sources, count, &c->pairs);
    free(old_names);   /* the pairs point at the names themselves, not at these arrays */
    free(paired_old);
    free(paired_new);
    if (rc != 0) {   /* printed */
        err->code = SD_EUSAGE;
        snprintf(err->text, sizeof err->text, "cannot pair the members");
        return SD_EUSAGE;
    }
    c->members = calloc(c->pairs.n ? c->pairs.n : 1, sizeof *c->members);
    c->unread = calloc(c->pairs.n ? c->pairs.n : 1, sizeof *c->unread);
    if (!c->members || !c->unread) return msg_nomem(err);
    for (size_t i = 0; i < c->pairs.n; i++) {
        const sd_rank_pair *p = &c->pairs.pairs[i];
        sd_check_member *m = &c->members[i];
        bool has_old = p->old_index != SD_RANK_NONE, has_new = p->new_index != SD_RANK_NONE;
        c->unread[i] = has_old && c->old_map[p->old_index] >= c->n_old;
        m->name = cli_pair_name(&c->pairs, i);
        m->old_name = has_old ? c->pairs.names[0][p->old_index] : NULL;
        m->rank = p->rank;
        m->missing = !has_old ? SD_MEMBER_NO_OLD : !has_new ? SD_MEMBER_NO_NEW : SD_MEMBER_PAIRED;
        if (has_new) {
            size_t member = c->new_map[p->new_index];
            c->pair_of_new[member] = i;
            sd_check_member_label(m, c->labels[member], sizeof c->labels[member]);
            c->label_ptrs[member] = c->labels[member];
        }
    }
    return SD_OK;
}

/* In a loading thread, with one NEW member: its totals, and its pair's diff and gate.
 * Only this member's slots are written. */
static sd_status judge_one(void *ctx, size_t input, size_t member, const sd_snapshot *snap,
                           sd_error *err)
{
    (void)input;
    check_run *c = ctx;
    if (c->pair_of_new[member] == SD_RANK_NONE) return SD_OK;   /* an earlier step, a dump */
    sd_stats_total(snap, &c->new_totals[member]);
    c->judged[member] = true;
    sd_check_member *m = &c->members[c->pair_of_new[member]];
    const sd_rank_pair *p = &c->pairs.pairs[c->pair_of_new[member]];
    if (m->missing != SD_MEMBER_PAIRED || c->unread[c->pair_of_new[member]]) return SD_OK;
    sd_diff *d = sd_diff_create(c->old[c->old_map[p->old_index]], snap, &c->dopts, err);
    if (!d) return err->code ? err->code : SD_ENOMEM;
    sd_status st = sd_gate_diff(d, c->limits, &m->gate);
    m->pass = m->gate.pass;
    if (st == SD_OK) st = sd_check_member_take(m, d);
    sd_diff_free(d);
    return st == SD_OK ? SD_OK : msg_nomem(err);
}

/* The pairs a side of which did not read (warned as it was left out) are not judged:
 * they leave the report, and their NEW members the spread. */
static void drop_unread(check_run *c)
{
    size_t k = 0, kept = 0;
    for (size_t i = 0; i < c->pairs.n; i++) {
        if (c->unread[i]) {
            sd_check_member_release(&c->members[i]);
            continue;
        }
        c->members[k] = c->members[i];
        c->pairs.pairs[k] = c->pairs.pairs[i];
        c->unread[k++] = false;
    }
    for (size_t i = k; i < c->pairs.n; i++) memset(&c->members[i], 0, sizeof c->members[i]);
    c->pairs.n = k;
    for (size_t i = 0; i < c->n_new; i++) {   /* the NEW members judged, for the spread */
        if (!c->judged[i]) continue;
        c->new_totals[kept] = c->new_totals[i];
        c->label_ptrs[kept] = c->label_ptrs[i];
        kept++;
    }
    sd_rank_spread_of_totals(c->new_totals, kept, &c->spread);
}

/* Load OLD, then stream NEW through plan() and judge_one(). -1: printed. */
static int judge(check_run *c, const struct cli_opts *o, const sd_limits *limits)
{
    c->o = o;
    c->limits = limits;
    cli_diff_options(o, &c->dopts);
    size_t n_old = 0;
    struct cli_load_options old = {.shape = CLI_LOAD_MEMBERS, .specs = o->files, .n = 1,
                                   .members = &c->old, .counts = &n_old,
                                   .left_out = &c->old_left_out};
    if (cli_load(o, &old) != 0) return -1;
    c->n_old = n_old;
    struct cli_load_options new = {.shape = CLI_LOAD_STREAM, .specs = o->files + 1, .n = 1,
                                   .opened = plan, .each = judge_one, .ctx = c};
    if (cli_load(o, &new) != 0) return -1;
    for (size_t i = 0; i < c->pairs.n; i++) {
        const sd_rank_pair *p = &c->pairs.pairs[i];
        if (p->new_index != SD_RANK_NONE && !c->judged[c->new_map[p->new_index]]) c->unread[i] = true;
    }
    for (size_t i = 0; i < c->pairs.n; i++) {
        const sd_check_member *m = &c->members[i];
        if (m->missing != SD_MEMBER_PAIRED && !c->unread[i])
            msg_warn("%s: %s", m->name,
                     m->missing == SD_MEMBER_NO_OLD ? "only in NEW, no OLD member to compare with"
                                                    : "only in OLD, missing from NEW");
    }
    drop_unread(c);
    return 0;
}

static sd_status render(const struct cli_opts *o, const sd_check_report *r, FILE *out)
{
    switch (o->format) {
    case FORMAT_JSON: return sd_render_check_json(out, r);
    case FORMAT_GITHUB: return sd_render_check_github(out, r);
    case FORMAT_JUNIT: return sd_render_check_junit(out, r);
    case FORMAT_TEXT:
    case FORMAT_FOLDED:
    case FORMAT_PPROF: break;
    }
    return sd_render_check_text(out, r);
}

/* The report to `to` (the command's stream), or to --output FILE. EXIT_OK or EXIT_TROUBLE
 * (printed). */
static int write_report(const struct cli_opts *o, const sd_check_report *r, FILE *to)
{
    FILE *out = o->output ? fopen(o->output, "w") : to;
    if (!out) {
        msg_error("%s: cannot write: %s", o->output, strerror(errno));
        return EXIT_TROUBLE;
    }
    sd_status st = render(o, r, out);
    if (o->output && fclose(out) != 0) st = SD_EIO;
    if (st == SD_ENOMEM) msg_error("out of memory while writing the report");
    if (st == SD_EIO && o->output) msg_error("%s: cannot write: %s", o->output, strerror(errno));
    if (st == SD_EIO && !o->output) return EXIT_OK;   /* the caller checks its stream */
    return st == SD_OK ? EXIT_OK : EXIT_TROUBLE;
}

int cmd_check(const struct cli_opts *opts, FILE *out)
{
    struct cli_opts o = *opts;
    struct check_config config = {o.limits, &o.steps};
    if (o.config && cli_read_config(o.config, parse_config, &config) != 0) return EXIT_TROUBLE;
    if (sd_limits_count(o.limits) == 0) {
        msg_error("check: no limits given (--max-growth SIZE, --max-group-growth SIZE, ... "
                  "or --config FILE); see 'snapdiff check --help'");
        return EXIT_TROUBLE;
    }
    if (sd_limits_get(o.limits, SD_LIMIT_MAX_PER_STEP, NULL, NULL) && o.steps == 0) {
        msg_error("check: --max-per-step needs --steps N (the training steps between OLD and NEW)");
        return EXIT_TROUBLE;
    }
    check_run c;
    memset(&c, 0, sizeof c);
    int status = EXIT_TROUBLE;
    if (judge(&c, &o, o.limits) == 0) {
        sd_check_report r = {.members = c.members, .n = c.pairs.n, .pass = true,
                              .many = c.n_old > 1 || c.n_new > 1,
                              .top = (size_t)o.top == 20 ? 0 : (size_t)o.top,
                              .render = {.color = o.color}, .locate = locate,
                              .locate_ctx = (void *)(o.repo_root ? o.repo_root : "."),
                              .spread = &c.spread, .spread_names = c.label_ptrs};
        for (size_t i = 0; i < c.pairs.n; i++) r.pass = r.pass && c.members[i].pass;
        status = write_report(&o, &r, out);
        if (status == EXIT_OK && !r.pass) {
            status = EXIT_CHECK_FAILED;
            if (o.format != FORMAT_TEXT || o.output) {
                char failed[512] = "";
                size_t k = 0;
                for (size_t i = 0; i < c.pairs.n && k < sizeof failed; i++) {
                    char label[300];
                    if (!c.members[i].pass)
                        k += (size_t)snprintf(failed + k, sizeof failed - k, "%s%s", k ? ", " : "",
                                              sd_check_member_label(&c.members[i], label,
                                                                     sizeof label));
                }
                msg_error("check failed%s%s", r.many ? ": " : "", r.many ? failed : "");
            }
        }
    }
    run_free(&c);
    return status;
}
