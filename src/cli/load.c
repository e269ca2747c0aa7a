/* load.c - loading for the commands through the library's N-way loader (load.h): the
 * files load in parallel; the messages (warnings, the one error line) are printed here
 * afterwards, in the order the files were given. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "msg.h"
#include "snapdiff/render_ranks.h"
#include "snapdiff/load.h"
#include "snapdiff/ranks.h"
#include "snapdiff/replay.h"

static void print_warnings(const sd_snapshot *s)
{
    for (size_t i = 0; i < sd_snapshot_warning_count(s); i++)
        msg_warn("%s: %s", sd_snapshot_source(s), sd_snapshot_warning(s, i));
}

/* A summary keeps only part of the trace (summary.h): the commands that show or replay
 * the trace, or count its entries, need the snapshot itself. */
static bool takes_summaries(enum cli_command c)
{
    return c == CMD_DIFF || c == CMD_CHECK || c == CMD_SERIES || c == CMD_SUMMARIZE;
}

/* A job killed while it dumped leaves a truncated rank file: series, report and check
 * leave such a file of a folder out with a warning, unless --strict. */
static bool skips_unreadable(const struct cli_opts *o)
{
    return !o->strict && (o->command == CMD_SERIES || o->command == CMD_REPORT
                          || o->command == CMD_CHECK);
}

static void warn_unreadable(const sd_loaded *r)
{
    for (size_t k = 0; k < r->n_unreadable; k++) {
        char line[768];
        sd_error_format(&r->unreadable[k], line, sizeof line);
        msg_warn("%s; left out (--strict makes it an error)", line);
    }
}

/* The names of what was left out, for the caller (NULL: not wanted). -1: out of memory. */
static int note_left_out(const sd_loaded *res, size_t n, struct cli_left_out *l)
{
    if (!l) return 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < res[i].n_unreadable; k++) {
            char **grown = realloc(l->names, (l->n + 1) * sizeof *grown);
            char *name = grown ? strdup(res[i].unreadable[k].source) : NULL;
            if (grown) l->names = grown;
            if (!name) {
                msg_error("out of memory");
                return -1;
            }
            l->names[l->n++] = name;
        }
    return 0;
}

bool cli_left_out_has(const struct cli_left_out *l, const char *name)
{
    for (size_t i = 0; l && i < l->n; i++)
        if (strcmp(l->names[i], name) == 0) return true;
    return false;
}

void cli_left_out_free(struct cli_left_out *l)
{
    for (size_t i = 0; l && i < l->n; i++) free(l->names[i]);
    if (l) free(l->names);
    if (l) memset(l, 0, sizeof *l);
}

/* The warnings of what loaded, then why the rest did not. @return whether it loaded and
 * the command can use what it loaded. */
static bool report(const sd_loaded *r, const struct cli_opts *o)
{
    if (r->n_skipped)
        msg_note("%s: skipped %zu %s: %s", r->spec, r->n_skipped,
                 r->n_skipped == 1 ? "file that is not a snapshot" : "files that are not snapshots",
                 r->skipped ? r->skipped : "");
    for (size_t k = 0; k < r->n_snaps; k++) print_warnings(r->snaps[k]);
    warn_unreadable(r);
    if (r->status != SD_OK) {
        if (r->ambiguous)
            msg_error("%s: holds %zu snapshots (%s, ...); pick one as %s:MEMBER", r->spec,
                      r->n_members, r->first_member ? r->first_member : "", r->spec);
        else
            msg_sd_error(&r->err);
        return false;
    }
    for (size_t k = 0; k < r->n_snaps; k++) {
        if (!sd_snapshot_is_summary(r->snaps[k]) || takes_summaries(o->command)) continue;
        msg_error("%s: is a snapdiff summary, which keeps only part of the trace; '%s' needs "
                  "the snapshot itself (summaries are baselines for diff, check and series)",
                  sd_snapshot_source(r->snaps[k]), cli_command_name(o->command));
        return false;
    }
    return true;
}

static sd_loaded *load(const char *const *specs, size_t n, const struct cli_opts *opts,
                       bool all_members)
{
    sd_loaded *res = calloc(n ? n : 1, sizeof *res);
    if (!res) {
        msg_error("out of memory");
        return NULL;
    }
    sd_loader_options lo = {.version = SD_LOADER_OPTIONS_VERSION,
                            .max_memory = opts->max_memory, .jobs = opts->jobs,
                            .all_members = all_members,
                            .skip_summaries = !takes_summaries(opts->command),
                            .skip_unreadable = skips_unreadable(opts)};
    sd_load_all(specs, n, &lo, res);
    return res;
}

static int load_one(const char *const *specs, size_t n, const struct cli_opts *opts,
                    sd_snapshot **out)
{
    sd_loaded *res = load(specs, n, opts, false);
    if (!res) return -1;
    bool ok = true;
    for (size_t i = 0; i < n; i++) ok = report(&res[i], opts) && ok;
    for (size_t i = 0; i < n; i++) {
        out[i] = ok ? res[i].snaps[0] : NULL;
        if (ok) res[i].snaps[0] = NULL;     /* kept: not freed below */
    }
    sd_loaded_free(res, n);
    free(res);
    return ok ? 0 : -1;
}

static int load_flat(const char *const *specs, size_t n, const struct cli_opts *opts,
                     sd_snapshot ***out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    sd_loaded *res = load(specs, n, opts, true);
    if (!res) return -1;
    /* As if loaded one after another: stop at the first input that failed. */
    size_t total = 0, good = 0;
    for (; good < n; good++) {
        bool fine = report(&res[good], opts);
        total += res[good].n_snaps;
        if (!fine) break;
    }
    sd_snapshot **all = good == n ? malloc((total ? total : 1) * sizeof *all) : NULL;
    if (good == n && !all) msg_error("out of memory");
    for (size_t i = 0; all && i < n; i++)
        for (size_t k = 0; k < res[i].n_snaps; k++) {
            all[(*n_out)++] = res[i].snaps[k];
            res[i].snaps[k] = NULL;
        }
    sd_loaded_free(res, n);
    free(res);
    *out = all;
    return all ? 0 : -1;
}

/* ---------- streaming: each snapshot handed over as it loads ---------- */

typedef struct stream_ctx {
    cli_each_fn each;
    cli_opened_fn opened;
    void *ctx;
    char **warnings;          /* per input: its snapshots' warnings, one per line */
    pthread_mutex_t lock;     /* members of one input load in parallel: for `warnings` */
} stream_ctx;

static sd_status stream_opened(void *vctx, size_t input, const sd_input *in, sd_error *err)
{
    stream_ctx *c = vctx;
    return c->opened(c->ctx, input, in, err);
}

static sd_status stream_each(void *vctx, size_t input, size_t member, const sd_snapshot *snap,
                             sd_error *err)
{
    stream_ctx *c = vctx;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < sd_snapshot_warning_count(snap); i++) {
        const char *src = sd_snapshot_source(snap), *w = sd_snapshot_warning(snap, i);
        char *old = c->warnings[input];
        size_t had = old ? strlen(old) : 0, add = strlen(src) + strlen(w) + 3;
        char *grown = realloc(old, had + add + 1);
        if (!grown) {
            pthread_mutex_unlock(&c->lock);
            err->code = SD_ENOMEM;
            snprintf(err->text, sizeof err->text, "out of memory");
            return SD_ENOMEM;
        }
        snprintf(grown + had, add + 1, "%s: %s\n", src, w);
        c->warnings[input] = grown;
    }
    pthread_mutex_unlock(&c->lock);
    return c->each(c->ctx, input, member, snap, err);
}

static int load_stream(const char *const *specs, size_t n, const struct cli_opts *opts,
                       cli_opened_fn opened, cli_each_fn each, void *ctx,
                       const bool *in_folder, struct cli_left_out *left_out)
{
    sd_loaded *res = calloc(n ? n : 1, sizeof *res);
    stream_ctx sc = {.each = each, .ctx = ctx, .warnings = calloc(n ? n : 1, sizeof(char *))};
    if (!res || !sc.warnings || pthread_mutex_init(&sc.lock, NULL) != 0) {
        free(res);
        free(sc.warnings);
        msg_error("out of memory");
        return -1;
    }
    sd_loader_options lo = {.version = SD_LOADER_OPTIONS_VERSION,
                            .max_memory = opts->max_memory, .jobs = opts->jobs,
                            .all_members = true, .each = stream_each,
                            .opened = opened ? stream_opened : NULL, .ctx = &sc,
                            .skip_summaries = !takes_summaries(opts->command),
                            .skip_unreadable = skips_unreadable(opts), .in_folder = in_folder};
    sc.opened = opened;
    sd_load_all(specs, n, &lo, res);
    pthread_mutex_destroy(&sc.lock);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {   /* as if one after another: stop at a failure */
        for (char *w = sc.warnings[i], *nl; w && *w; w = nl + 1) {
            nl = strchr(w, '\n');
            *nl = '\0';
            msg_warn("%s", w);
        }
        ok = report(&res[i], opts);
    }
    if (ok && note_left_out(res, n, left_out) != 0) ok = false;
    for (size_t i = 0; i < n; i++) free(sc.warnings[i]);
    free(sc.warnings);
    sd_loaded_free(res, n);
    free(res);
    return ok ? 0 : -1;
}

static int load_members(const char *const *specs, size_t n, const struct cli_opts *opts,
                        sd_snapshot ***out, size_t *counts, struct cli_left_out *left_out)
{
    sd_loaded *res = load(specs, n, opts, true);
    if (!res) return -1;
    bool ok = true;
    for (size_t i = 0; i < n; i++) ok = report(&res[i], opts) && ok;
    if (ok && note_left_out(res, n, left_out) != 0) ok = false;
    for (size_t i = 0; i < n; i++) {
        out[i] = NULL;
        counts[i] = 0;
        if (!ok) continue;
        out[i] = res[i].snaps;     /* kept: the array moves to the caller */
        counts[i] = res[i].n_snaps;
        res[i].snaps = NULL;
        res[i].n_snaps = 0;
    }
    sd_loaded_free(res, n);
    free(res);
    return ok ? 0 : -1;
}

int cli_load(const struct cli_opts *opts, const struct cli_load_options *lo)
{
    switch (lo->shape) {
    case CLI_LOAD_ONE: return load_one(lo->specs, lo->n, opts, lo->one);
    case CLI_LOAD_FLAT: return load_flat(lo->specs, lo->n, opts, lo->all, lo->n_all);
    case CLI_LOAD_MEMBERS:
        return load_members(lo->specs, lo->n, opts, lo->members, lo->counts, lo->left_out);
    case CLI_LOAD_STREAM:
        return load_stream(lo->specs, lo->n, opts, lo->opened, lo->each, lo->ctx, lo->in_folder,
                           lo->left_out);
    }
    msg_error("internal error: unknown load shape");
    return -1;
}

void cli_attrib_options(const struct cli_opts *o, sd_attrib_options *a)
{
    sd_attrib_options_init(a, SD_ATTRIB_OPTIONS_VERSION);
    a->group_by = o->group_by;
    a->depth = o->depth;
    a->hide = o->hide;
    a->n_hide = (size_t)o->n_hide;
    a->show = o->show;
    a->n_show = (size_t)o->n_show;
    a->focus = o->focus;
    a->n_focus = (size_t)o->n_focus;
}

int cli_check_alloc_confs(const struct cli_opts *o)
{
    for (int i = 0; i < o->replay.n_alloc_conf; i++) {
        sd_alloc_conf c;
        sd_error err;
        sd_error_clear(&err);
        if (sd_alloc_conf_parse_torch(o->replay.alloc_conf[i], o->replay.torch_version, &c,
                                      &err) != SD_OK) {
            msg_error("%s", err.text);
            return -1;
        }
    }
    return 0;
}

void cli_diff_options(const struct cli_opts *o, sd_diff_options *d)
{
    sd_diff_options_init(d, SD_DIFF_OPTIONS_VERSION);
    cli_attrib_options(o, &d->attrib);
    d->steps = o->steps;
    d->capacity = o->capacity;
    d->max_memory = o->max_memory;
    d->at = o->at;
}

void cli_free_all(sd_snapshot **snaps, size_t n)
{
    for (size_t i = 0; i < n; i++) sd_snapshot_free(snaps[i]);
    free(snaps);
}

/* After the members of stats and frag: the spread across them (ranks.h), when several. */
void cli_print_spread(FILE *out, sd_snapshot *const *snaps, size_t n, bool color)
{
    if (n < 2) return;
    char (*labels)[64] = calloc(n, sizeof *labels);
    const char **names = calloc(n, sizeof *names);
    bool ranks = true;
    for (size_t i = 0; labels && names && i < n; i++) {
        int64_t r = sd_rank_of_name(sd_snapshot_source(snaps[i]));
        for (size_t k = 0; k < i && r >= 0; k++)
            if (sd_rank_of_name(sd_snapshot_source(snaps[k])) == r) r = -1;
        ranks = ranks && r >= 0;
    }
    for (size_t i = 0; labels && names && i < n; i++) {
        if (ranks)
            snprintf(labels[i], sizeof labels[i], "rank %" PRId64,
                     sd_rank_of_name(sd_snapshot_source(snaps[i])));
        else
            snprintf(labels[i], sizeof labels[i], "%s", sd_snapshot_source(snaps[i]));
        names[i] = labels[i];
    }
    if (labels && names) {
        sd_rank_spread sp;
        sd_rank_spread_of((const sd_snapshot *const *)snaps, n, &sp);
        fputc('\n', out);
        sd_render_spread_text(out, &sp, names, ranks ? "ranks" : "snapshots", color);
    }
    free(labels);
    free(names);
}

sd_read_as cli_read_as(const struct cli_opts *o)
{
    return o->as == AS_RANKS ? SD_READ_AS_RANKS : o->as == AS_SERIES ? SD_READ_AS_SERIES
                                                                      : SD_READ_AS_GUESS;
}

sd_status cli_diff_gate(const struct cli_opts *o, const sd_diff *d, sd_gate *out)
{
    sd_limits *limits = sd_limits_create();
    if (!limits) {
        memset(out, 0, sizeof *out);
        return SD_ENOMEM;
    }
    sd_limits_set(limits, SD_LIMIT_MAX_GROWTH, o->max_growth, 0);
    sd_status st = sd_gate_diff(d, limits, out);
    sd_limits_free(limits);
    return st;
}
