/* cmd_plan.c - `snapdiff plan`: will it fit? From recordings at other sizes
 * (`plan A B --size 512,1024 --at 2048 [--check REAL]`, `--max` with `--capacity`), or from
 * one recording, what if (`plan RUN [--batch-scale K] [--shard N --zero S]`): plan.h,
 * rendered as text or snapdiff.plan/1 (docs/plan.md, docs/json-plan.md). */
#include <stdio.h>

#include "commands.h"
#include "msg.h"
#include "snapdiff/plan.h"
#include "snapdiff/render_plan.h"

/* The option combinations each path takes, checked before anything is loaded: the
 * message, or NULL when they fit. */
static const char *usage_error(const struct cli_opts *opts)
{
    if (opts->n_files == 1) {
        if (opts->plan.n_sizes || opts->plan.has_at || opts->plan.max || opts->plan.check)
            return "plan: --size, --at, --max and --check need two recordings or more, at "
                   "different sizes; one recording takes --batch-scale, --shard and --zero";
        if ((opts->plan.shard > 1) != (opts->plan.zero > 0))
            return "plan: --shard N and --zero 1|2|3 go together";
        return NULL;
    }
    if (opts->plan.batch_scale > 0 || opts->plan.shard || opts->plan.zero)
        return "plan: --batch-scale, --shard and --zero are what-ifs of one recording: give one file";
    if (opts->plan.n_sizes != opts->n_files)
        return "plan: --size gives one size value per recording, in the order of the files";
    if (opts->plan.has_at == opts->plan.max)
        return "plan: say where to predict: --at SIZE, or --max with --capacity";
    if (opts->plan.max && !opts->capacity)
        return "plan: --max searches the largest size that fits --capacity: give one";
    return NULL;
}

static int render(FILE *out, const struct cli_opts *opts, const sd_plan *p,
                  const sd_plan_view *view)
{
    sd_render_options ro = {.version = SD_RENDER_OPTIONS_VERSION, .color = opts->color};
    sd_error err;
    sd_status st = opts->format == FORMAT_JSON ? sd_render_plan_json(out, p, view, &ro, &err)
                                               : sd_render_plan_text(out, p, view, &ro, &err);
    if (st != SD_OK) {
        msg_sd_error(&err);
        return EXIT_TROUBLE;
    }
    return EXIT_OK;
}

static int plan_whatif(FILE *out, const struct cli_opts *opts, const sd_snapshot *s,
                       const sd_plan_options *po)
{
    sd_plan_whatif w = SD_PLAN_WHATIF_INIT;
    w.batch_scale = opts->plan.batch_scale;
    w.shard_ranks = (unsigned)opts->plan.shard;
    w.zero_stage = (unsigned)opts->plan.zero;
    sd_error err;
    sd_plan *p = sd_plan_create_whatif(s, &w, po, &err);
    if (!p) {
        msg_sd_error(&err);
        return EXIT_TROUBLE;
    }
    int status = render(out, opts, p, NULL);
    sd_plan_free(p);
    return status;
}

static int plan_sweep(FILE *out, const struct cli_opts *opts, sd_snapshot **snaps, size_t n,
                      const sd_plan_options *po)
{
    const sd_snapshot *const *ss = (const sd_snapshot *const *)snaps;
    sd_error err;
    sd_plan_view view = SD_PLAN_VIEW_INIT;
    double at = opts->plan.at;
    if (opts->plan.max) {
        if (sd_plan_largest_fit(ss, opts->plan.sizes, n, po, &view.max_size, &err) != SD_OK) {
            msg_sd_error(&err);
            return EXIT_TROUBLE;
        }
        view.has_max = true;
        /* the plan shown is at the answer; when nothing fits, at the largest recording */
        at = view.max_size;
        for (size_t i = 0; at <= 0 && i < n; i++)
            if (opts->plan.sizes[i] > at) at = opts->plan.sizes[i];
    }
    sd_plan *p = sd_plan_create(ss, opts->plan.sizes, n, at, po, &err);
    if (!p) {
        msg_sd_error(&err);
        return EXIT_TROUBLE;
    }
    int status = EXIT_OK;
    if (opts->plan.check) {
        sd_snapshot *real = NULL;
        struct cli_load_options lo = {.shape = CLI_LOAD_ONE, .specs = &opts->plan.check, .n = 1,
                                      .one = &real};
        if (cli_load(opts, &lo) != 0) status = EXIT_TROUBLE;
        if (status == EXIT_OK && sd_plan_check(p, real, &err) != SD_OK) {
            msg_sd_error(&err);
            status = EXIT_TROUBLE;
        }
        sd_snapshot_free(real);
    }
    if (status == EXIT_OK) status = render(out, opts, p, &view);
    sd_plan_free(p);
    return status;
}

int cmd_plan(const struct cli_opts *opts, FILE *out)
{
    const char *usage = usage_error(opts);
    if (usage) {
        msg_error("%s", usage);
        return EXIT_TROUBLE;
    }
    sd_snapshot **snaps;
    size_t n;
    struct cli_load_options lo = {.shape = CLI_LOAD_FLAT, .specs = opts->files,
                                  .n = (size_t)opts->n_files, .all = &snaps, .n_all = &n};
    if (cli_load(opts, &lo) != 0) return EXIT_TROUBLE;
    sd_plan_options po = SD_PLAN_OPTIONS_INIT;
    po.capacity = opts->capacity;
    po.top_sites = (size_t)opts->top;
    int status = n == 1 ? plan_whatif(out, opts, snaps[0], &po) : plan_sweep(out, opts, snaps, n, &po);
    cli_free_all(snaps, n);
    return status;
}
