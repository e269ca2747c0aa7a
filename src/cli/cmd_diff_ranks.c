/* cmd_diff_ranks.c - `snapdiff OLD.zip NEW.zip`: the diff rank by rank, when either input
 * holds several snapshots (an archive or a directory of ranks).
 *
 * Members are paired by name before any loads (pairs.c, ranks.h); OLD's members are
 * loaded and kept, NEW's are streamed (load.h): each is diffed against its OLD member in
 * its loading thread, its report (text, or a snapdiff.diff/1 document inside
 * snapdiff.diff-ranks/1) rendered into memory and the model freed, so a job of many large
 * ranks holds OLD plus one NEW model per loading thread, never every rank at once. Then
 * the reports are printed in pair order; a member on one side only is reported, never
 * skipped; then one line per rank with its growth, and the spread of NEW.
 * --max-growth gates every rank: exit 1 when any grew too much (or is missing).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "msg.h"
#include "snapdiff/gate.h"
#include "snapdiff/render_diff.h"
#include "snapdiff/render_ranks.h"
#include "snapdiff/units.h"

/* What one pair leaves once its models are gone. */
typedef struct pair_result {
    char *report;              /* the rendered diff (malloc'd); NULL for a missing member */
    size_t report_len;
    int64_t grew;              /* allocated delta */
    bool gate_failed;
    int64_t gate_measured;
} pair_result;

typedef struct ranks_run {
    const struct cli_opts *o;
    FILE *out;                   /* the command's stream, or -o FILE */
    sd_diff_options dopts;
    char **names[2];             /* every member's source name, as opened (owned) */
    size_t count[2];
    struct cli_pairs pairs;      /* point into names */
    size_t *pair_of_new;         /* NEW member -> its pair */
    pair_result *results;        /* per pair */
    sd_stats *new_totals;        /* per NEW member, for the spread */
    sd_snapshot **old;           /* OLD's members, in member order */
    size_t n_old;
} ranks_run;

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++) free(names[i]);
    free(names);
}

static void run_free(ranks_run *r)
{
    for (size_t i = 0; r->results && i < r->pairs.n; i++) free(r->results[i].report);
    free(r->results);
    free(r->pair_of_new);
    free(r->new_totals);
    cli_pairs_free(&r->pairs);
    cli_free_all(r->old, r->n_old);
    for (int s = 0; s < 2; s++) free_names(r->names[s], r->count[s]);
}

/* The members' names of `spec`, by opening it (nothing large is read). false when it does
 * not open (printed, as the load would have said it). */
static bool member_names(const char *spec, const struct cli_opts *o, char ***names, size_t *n)
{
    sd_input_options io = {.version = SD_INPUT_OPTIONS_VERSION, .max_memory = o->max_memory};
    sd_error err;
    sd_error_clear(&err);
    sd_input *in = sd_input_open(spec, &io, &err);
    *names = NULL;
    *n = 0;
    if (!in) {
        msg_sd_error(&err);
        return false;
    }
    size_t count = sd_input_count(in);
    char **out = calloc(count ? count : 1, sizeof *out);
    for (size_t i = 0; out && i < count; i++)
        if (!(out[i] = strdup(sd_input_name(in, i)))) {
            free_names(out, i);
            out = NULL;
        }
    sd_input_free(in);
    if (!out) {
        msg_error("out of memory");
        return false;
    }
    *names = out;
    *n = count;
    return true;
}

/* The load found the members the names were taken from: an input that changed in between
 * would pair the wrong ranks. */
static bool same_members(char **names, size_t n, const char *const *got, size_t n_got)
{
    if (n != n_got) return false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], got[i]) != 0) return false;
    return true;
}

static sd_status changed(const char *spec, sd_error *err)
{
    err->code = SD_EIO;
    snprintf(err->text, sizeof err->text, "%s changed while it was read (its members differ "
             "from a moment ago)", spec);
    return SD_EIO;
}

static sd_status check_new(void *ctx, size_t input, const sd_input *in, sd_error *err)
{
    (void)input;
    ranks_run *r = ctx;
    size_t n = sd_input_count(in);
    bool same = n == r->count[1];
    for (size_t i = 0; same && i < n; i++) same = strcmp(sd_input_name(in, i), r->names[1][i]) == 0;
    return same ? SD_OK : changed(r->o->files[1], err);
}

/* The pair's diff rendered as the whole report would have it. */
static sd_status render_pair(const ranks_run *r, const sd_diff *d, pair_result *out,
                             sd_error *err)
{
    FILE *mem = open_memstream(&out->report, &out->report_len);
    if (!mem) return msg_nomem(err);
    sd_status st;
    if (r->o->format == FORMAT_JSON) {
        st = sd_render_diff_json(mem, d);
    } else {
        sd_diff_text_options to = {.render = {.color = r->o->color}, .top = (size_t)r->o->top};
        st = sd_render_diff_text(mem, d, &to);
    }
    if (fclose(mem) != 0 && st == SD_OK) st = SD_ENOMEM;
    if (st != SD_OK) {
        free(out->report);
        out->report = NULL;
        return msg_nomem(err);
    }
    return SD_OK;
}

/* In a loading thread, with one NEW member: its totals, and its pair's diff, report and
 * gate. Only this member's slots are written. */
static sd_status diff_one(void *ctx, size_t input, size_t member, const sd_snapshot *snap,
                          sd_error *err)
{
    (void)input;
    ranks_run *r = ctx;
    sd_stats_total(snap, &r->new_totals[member]);
    size_t i = r->pair_of_new[member];
    const sd_rank_pair *p = &r->pairs.pairs[i];
    if (p->old_index == SD_RANK_NONE) return SD_OK;
    sd_diff *d = sd_diff_create(r->old[p->old_index], snap, &r->dopts, err);
    if (!d) return err->code ? err->code : SD_ENOMEM;
    pair_result *out = &r->results[i];
    out->grew = sd_diff_totals_of(d)->delta.allocated;
    if (r->o->has_max_growth) {
        sd_gate gate;
        if (cli_diff_gate(r->o, d, &gate) != SD_OK) {
            sd_diff_free(d);
            return msg_nomem(err);
        }
        out->gate_failed = !gate.pass;
        out->gate_measured = gate.results[0].measured;
        sd_gate_release(&gate);
    }
    sd_status st = render_pair(r, d, out, err);
    sd_diff_free(d);
    return st;
}

/* Pair i as the renderers lay it out. */
static sd_diff_rank rank_of(const ranks_run *r, size_t i)
{
    const struct cli_pairs *pp = &r->pairs;
    const sd_rank_pair *p = &pp->pairs[i];
    const pair_result *res = &r->results[i];
    bool has_old = p->old_index != SD_RANK_NONE, has_new = p->new_index != SD_RANK_NONE;
    sd_diff_rank m = {.label = pp->labels[i], .name = cli_pair_name(pp, i),
                      .old_name = has_old ? pp->names[0][p->old_index] : NULL,
                      .rank = p->rank, .report = res->report, .report_len = res->report_len,
                      .grew = res->grew,
                      .missing = !has_old ? SD_MEMBER_NO_OLD
                                 : !has_new ? SD_MEMBER_NO_NEW : SD_MEMBER_PAIRED};
    return m;
}

/* Pair i's heading and report, its messages on stderr. */
static void print_pair(const ranks_run *r, size_t i, bool *gate_failed)
{
    const struct cli_opts *o = r->o;
    sd_diff_rank m = rank_of(r, i);
    if (o->format == FORMAT_JSON) sd_render_diff_rank_json(r->out, &m, i);
    else sd_render_diff_rank_text(r->out, &m, i);
    if (m.missing != SD_MEMBER_PAIRED) {
        msg_warn("%s: %s", m.label, sd_member_missing_text(m.missing));
        *gate_failed = *gate_failed || o->has_max_growth;
        return;
    }
    if (r->results[i].gate_failed) {
        char grew[32], lim[32];
        sd_format_delta(r->results[i].gate_measured, grew, sizeof grew);
        sd_format_bytes(o->max_growth, lim, sizeof lim);
        msg_error("check failed: %s: allocated memory grew by %s, more than --max-growth %s",
                  m.label, grew, lim);
        *gate_failed = true;
    }
}

/* The closing table: growth per rank, then the spread of NEW. */
static void summary(const ranks_run *r)
{
    const struct cli_pairs *pp = &r->pairs;
    size_t n_new = r->count[1];
    sd_diff_rank *m = calloc(pp->n ? pp->n : 1, sizeof *m);
    const char **names = calloc(n_new ? n_new : 1, sizeof *names);
    if (!m || !names) {
        free(m);
        free(names);
        return;
    }
    for (size_t i = 0; i < pp->n; i++) {
        m[i] = rank_of(r, i);
        if (pp->pairs[i].new_index != SD_RANK_NONE) names[pp->pairs[i].new_index] = pp->labels[i];
    }
    bool all = true;
    for (size_t i = 0; i < n_new; i++) all = all && names[i];
    sd_rank_spread sp;
    sd_rank_spread_of_totals(r->new_totals, n_new, &sp);
    sd_render_options ro = {.version = SD_RENDER_OPTIONS_VERSION, .color = r->o->color};
    sd_render_diff_ranks_summary_text(r->out, m, pp->n, all ? &sp : NULL, names, &ro);
    free(names);
    free(m);
}

/* Pairs planned, OLD loaded, NEW streamed. -1: printed. */
static int diff_all(ranks_run *r)
{
    const struct cli_opts *o = r->o;
    const char *const *names[2] = {(const char *const *)r->names[0],
                                   (const char *const *)r->names[1]};
    if (cli_pair_names(o->files, names, r->count, &r->pairs) != 0) return -1;
    size_t room = r->count[1] ? r->count[1] : 1;
    r->pair_of_new = calloc(room, sizeof *r->pair_of_new);
    r->new_totals = calloc(room, sizeof *r->new_totals);
    r->results = calloc(r->pairs.n ? r->pairs.n : 1, sizeof *r->results);
    if (!r->pair_of_new || !r->new_totals || !r->results) {
        msg_error("out of memory");
        return -1;
    }
    for (size_t i = 0; i < r->pairs.n; i++)
        if (r->pairs.pairs[i].new_index != SD_RANK_NONE)
            r->pair_of_new[r->pairs.pairs[i].new_index] = i;
    struct cli_load_options old = {.shape = CLI_LOAD_MEMBERS, .specs = o->files, .n = 1,
                                   .members = &r->old, .counts = &r->n_old};
    if (cli_load(o, &old) != 0) return -1;
    const char **got = calloc(r->n_old ? r->n_old : 1, sizeof *got);
    if (!got) {
        msg_error("out of memory");
        return -1;
    }
    for (size_t i = 0; i < r->n_old; i++) got[i] = sd_snapshot_source(r->old[i]);
    bool same = same_members(r->names[0], r->count[0], got, r->n_old);
    free(got);
    if (!same) {
        sd_error err;
        sd_error_clear(&err);
        changed(o->files[0], &err);
        msg_sd_error(&err);
        return -1;
    }
    cli_diff_options(o, &r->dopts);
    struct cli_load_options new = {.shape = CLI_LOAD_STREAM, .specs = o->files + 1, .n = 1,
                                   .opened = check_new, .each = diff_one, .ctx = r};
    return cli_load(o, &new);
}

/* -o FILE flushed, checked and closed: 0, or -1 with the error printed (as main does for
 * stdout: a closed pipe is no message). */
static int close_output(FILE *f)
{
    bool bad = fflush(f) != 0 || ferror(f);
    int why = errno;
    if (fclose(f) != 0 && !bad) {
        bad = true;
        why = errno;
    }
    if (bad && why != EPIPE) msg_error("error writing output: %s", strerror(why));
    return bad ? -1 : 0;
}

int cmd_diff_ranks(const struct cli_opts *o, FILE *out)
{
    ranks_run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.out = out;
    bool opened = member_names(o->files[0], o, &r.names[0], &r.count[0]);
    opened = member_names(o->files[1], o, &r.names[1], &r.count[1]) && opened;
    if (opened && r.count[0] == 1 && r.count[1] == 1) {
        run_free(&r);
        return CMD_NOT_RANKS;
    }
    int status = EXIT_TROUBLE;
    if (!opened) {
        /* printed */
    } else if (o->format != FORMAT_TEXT && o->format != FORMAT_JSON) {
        msg_error("--format folded and pprof take one snapshot per input; pick a member as "
                  "ARCHIVE:MEMBER");
    } else if (o->output && !(r.out = fopen(o->output, "w"))) {
        msg_error("%s: cannot write: %s", o->output, strerror(errno));
    } else if (diff_all(&r) == 0) {
        bool json = o->format == FORMAT_JSON, gate_failed = false;
        if (json) sd_render_diff_ranks_json_begin(r.out);
        for (size_t i = 0; i < r.pairs.n; i++) print_pair(&r, i, &gate_failed);
        if (json) sd_render_diff_ranks_json_end(r.out);
        else summary(&r);
        status = gate_failed ? EXIT_CHECK_FAILED : EXIT_OK;
    }
    if (r.out && r.out != out && close_output(r.out) != 0) status = EXIT_TROUBLE;
    run_free(&r);
    return status;
}
