/* cmd_curve.c - `snapdiff curve LOG...`: leak or noise from the memory figures training
 * logs already hold (curve.h). Options -> read and analyse -> one warning line per file
 * with unreadable lines -> render -> exit 1 when a limit is broken.
 *
 * Limits come from --max-per-step, --max-growth-pct, --max-fraction (--horizon) and from
 * --config FILE in check's `key = value` format (the command line wins). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "msg.h"
#include "options.h"
#include "snapdiff/curve.h"
#include "snapdiff/render_curve.h"

static sd_status parse_config(const char *text, size_t len, const char *path, void *limits,
                              sd_error *err)
{
    return sd_curve_limits_parse(text, len, path, limits, err);
}

static sd_curve_format log_format(const char *name)
{
    if (!name) return SD_CURVE_FORMAT_AUTO;
    if (strcmp(name, "text") == 0) return SD_CURVE_FORMAT_TEXT;
    if (strcmp(name, "jsonl") == 0) return SD_CURVE_FORMAT_JSONL;
    if (strcmp(name, "csv") == 0) return SD_CURVE_FORMAT_CSV;
    return SD_CURVE_FORMAT_NVIDIA_SMI;
}

void cli_curve_options(const struct cli_opts *o, sd_curve_options *co)
{
    sd_curve_options_init(co, SD_CURVE_OPTIONS_VERSION);
    co->format = log_format(o->curve.log_format);
    co->has_baseline_step = o->curve.has_baseline_step;
    co->baseline_step = (double)o->curve.baseline_step;
    co->capacity = o->capacity;
    co->threshold = o->curve.threshold;
}

static void options_of(const struct cli_opts *o, sd_curve_options *co)
{
    cli_curve_options(o, co);
    sd_curve_limits *l = &co->limits;
    l->has_max_per_step = sd_limits_get(o->limits, SD_LIMIT_MAX_PER_STEP, &l->max_per_step, NULL);
    l->has_max_growth_pct = sd_limits_get(o->limits, SD_LIMIT_MAX_GROWTH_PCT, NULL,
                                          &l->max_growth_pct);
    l->has_max_fraction = o->curve.has_max_fraction;
    l->max_fraction = o->curve.max_fraction;
    l->horizon = o->curve.horizon;
}

void cli_curve_warn_bad_lines(const sd_curve *c)
{
    for (size_t i = 0; i < sd_curve_file_count(c); i++) {
        const sd_curve_file *f = sd_curve_file_at(c, i);
        if (f->bad_lines)
            msg_warn("%s: %" PRIu64 " line%s could not be read, the first at line %" PRIu64 " (%s)",
                     f->path, f->bad_lines, f->bad_lines == 1 ? "" : "s", f->first_bad_line,
                     f->first_bad_why ? f->first_bad_why : "unreadable");
    }
}

static void warn_files(const sd_curve *c)
{
    cli_curve_warn_bad_lines(c);
    for (size_t i = 0; i < sd_curve_limit_count(c); i++) {
        const sd_curve_limit_result *r = sd_curve_limit_at(c, i);
        if (!r->measurable)
            msg_note("--%s: nothing to measure it on%s", r->name,
                     r->id == SD_CURVE_LIMIT_MAX_FRACTION ? " (no capacity: give --capacity)" : "");
    }
}

/* --format-list: each format's name, what its figure is, and a line as it comes. */
static int format_list(FILE *out)
{
    const char *name, *example, *figure;
    for (size_t i = 0; sd_curve_format_at(i, &name, &example, &figure); i++)
        fprintf(out, "%s%s\n  figure   %s\n  example  %s\n", i ? "\n" : "", name, figure, example);
    return EXIT_OK;
}

int cmd_curve(const struct cli_opts *o, FILE *out)
{
    if (o->curve.format_list) return format_list(out);
    sd_curve_options co;
    options_of(o, &co);
    if (o->config && cli_read_config(o->config, parse_config, &co.limits) != 0) return EXIT_TROUBLE;
    if (co.limits.horizon && !co.limits.has_max_fraction)
        msg_note("--horizon projects for --max-fraction, which is not given");
    sd_error err;
    sd_error_clear(&err);
    sd_curve *c = sd_curve_create_pattern(o->files, (size_t)o->n_files, &co, o->curve.pattern,
                                          &err);
    if (!c) {
        msg_sd_error(&err);
        return EXIT_TROUBLE;
    }
    warn_files(c);
    sd_render_options ro = {.color = o->color, .width = 0};
    sd_status st;
    if (o->format == FORMAT_JSON) st = sd_render_curve_json(out, c, &ro, &err);
    else if (o->format == FORMAT_GITHUB) st = sd_render_curve_github(out, c, &ro, &err);
    else st = sd_render_curve_text(out, c, &ro, &err);
    int rc = st != SD_OK ? EXIT_TROUBLE : sd_curve_pass(c) ? EXIT_OK : EXIT_CHECK_FAILED;
    sd_curve_free(c);
    return rc;
}
