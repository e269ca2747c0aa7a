/* cmd_diff.c - `snapdiff OLD NEW`: what grew, grouped by where it was allocated.
 *
 * Text (a header of totals, the growing groups as a table, the shrinking ones, then the
 * stacks of the top groups) or folded stacks for flame graphs; JSON is in diff_json.c.
 * The figures come from sd_diff (src/core/diff.c); these files only lay them out.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "diff_report.h"
#include "msg.h"
#include "snapdiff/frag.h"
#include "snapdiff/units.h"

enum { STACKS_SHOWN = 5, STACK_FRAMES_SHOWN = 8, NAME_MAX_SHOWN = 60 };

const char *const diff_group_by_names[] = {"site", "leaf", "stack", "file", "function"};

/* ---------- small formatting helpers ---------- */

static const char *bytes_str(uint64_t v, char *buf, size_t size)
{
    sd_format_bytes(v, buf, size);
    return buf;
}

static const char *delta_str(int64_t v, char *buf, size_t size)
{
    sd_format_delta(v, buf, size);
    return buf;
}

/* 16956 -> "16,956" */
static const char *count_str(uint64_t v, char *buf, size_t size)
{
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%" PRIu64, v);
    size_t j = 0;
    for (int i = 0; i < n && j + 2 < size; i++) {
        if (i > 0 && (n - i) % 3 == 0) buf[j++] = ',';
        buf[j++] = digits[i];
    }
    buf[j] = '\0';
    return buf;
}

int64_t diff_sdelta(uint64_t new_v, uint64_t old_v) { return (int64_t)(new_v - old_v); }

static bool is_sep(char c) { return c == '/' || c == '\\'; }

/* ---------- how frames are shown ---------- */

static const char *display_path(const diff_report *r, const sd_frame *f, sd_frame_kind kind)
{
    const char *fn = f->filename;
    if (kind == SD_FRAME_USER) {
        if (r->user_prefix_len && strncmp(fn, r->user_prefix, r->user_prefix_len) == 0)
            return fn + r->user_prefix_len;
        return fn;
    }
    return sd_frame_short_path(fn);
}

/* "path:line name", the name cut to a readable length (C++ names run to kilobytes). */
static void frame_text(const diff_report *r, const sd_frame *f, char *buf, size_t size)
{
    sd_frame_kind kind = sd_attrib_classify(sd_diff_attrib(r->diff), f);
    int name_len = (int)strlen(f->name);
    const char *ell = "";
    if (name_len > NAME_MAX_SHOWN) {
        name_len = NAME_MAX_SHOWN;
        ell = "...";
    }
    snprintf(buf, size, "%s:%" PRId64 " %.*s%s", display_path(r, f, kind), f->line, name_len,
             f->name, ell);
}

const sd_frame *diff_stack_frame(const sd_diff_group *g, size_t i)
{
    size_t n;
    const uint32_t *ids = sd_snapshot_stack(g->rep_snapshot, g->rep_stack, &n);
    return i < n ? sd_snapshot_frame(g->rep_snapshot, ids[i]) : NULL;
}

/* What the table shows for a group: its site (and callers, via) in short form. */
static void group_label(const diff_report *r, const sd_diff_group *g, char *buf, size_t size)
{
    if (g->rep_site.site < 0 || !g->rep_snapshot) {
        snprintf(buf, size, "%s", SD_NO_STACK);
        return;
    }
    const sd_attrib *a = sd_diff_attrib(r->diff);
    const sd_frame *site = diff_stack_frame(g, (size_t)g->rep_site.site);
    const sd_frame *leaf = diff_stack_frame(g, 0);
    const sd_frame *shown = r->o->group_by == GROUP_LEAF ? leaf : site;
    char f[512];
    frame_text(r, shown, f, sizeof f);
    if (r->o->group_by == GROUP_FILE) {
        snprintf(buf, size, "%s", display_path(r, site, sd_attrib_classify(a, site)));
        return;
    }
    size_t len = (size_t)snprintf(buf, size, "%s", f);
    if (r->o->group_by == GROUP_SITE && r->o->depth > 0) {
        size_t n;
        sd_snapshot_stack(g->rep_snapshot, g->rep_stack, &n);
        int added = 0;
        for (size_t i = (size_t)g->rep_site.site + 1;
             i < n && added < r->o->depth && len < size; i++) {
            const sd_frame *c = diff_stack_frame(g, i);
            if (sd_attrib_classify(a, c) != SD_FRAME_USER) continue;
            frame_text(r, c, f, sizeof f);
            len += (size_t)snprintf(buf + len, size - len, " <- %s", f);
            added++;
        }
    }
    if (r->o->group_by != GROUP_LEAF && g->rep_site.via >= 0 && len < size) {
        frame_text(r, diff_stack_frame(g, (size_t)g->rep_site.via), f, sizeof f);
        snprintf(buf + len, size - len, " %svia %s%s", clr_dim(r->o), f, clr_reset(r->o));
    }
}

/* The directory all user files of the shown groups share ("/home/alice/proj/"). */
static void find_user_prefix(diff_report *r, size_t n_shown)
{
    const sd_attrib *a = sd_diff_attrib(r->diff);
    const char *prefix = NULL;
    size_t len = 0;
    for (size_t i = 0; i < n_shown; i++) {
        const sd_diff_group *g = sd_diff_group_at(r->diff, i);
        if (!g->rep_snapshot || g->rep_site.site < 0) continue;
        size_t n;
        const uint32_t *ids = sd_snapshot_stack(g->rep_snapshot, g->rep_stack, &n);
        for (size_t k = 0; k < n; k++) {
            const sd_frame *f = sd_snapshot_frame(g->rep_snapshot, ids[k]);
            if (sd_attrib_classify(a, f) != SD_FRAME_USER) continue;
            if (!prefix) {
                prefix = f->filename;
                len = strlen(prefix);
            }
            size_t m = 0;
            while (m < len && f->filename[m] == prefix[m]) m++;
            len = m;
        }
    }
    while (len > 0 && !is_sep(prefix[len - 1])) len--;
    r->user_prefix = prefix;
    r->user_prefix_len = len > 1 ? len : 0;
}

/* ---------- text ---------- */

static void print_total_row(const diff_report *r, const char *label, uint64_t old_v, uint64_t new_v)
{
    char a[32], b[32], c[32];
    int64_t d = diff_sdelta(new_v, old_v);
    const char *col = d > 0 ? clr_red(r->o) : d < 0 ? clr_green(r->o) : "";
    printf("  %-13s %11s %11s  %s%11s%s\n", label, bytes_str(old_v, a, sizeof a),
           bytes_str(new_v, b, sizeof b), col, delta_str(d, c, sizeof c),
           *col ? clr_reset(r->o) : "");
}

static void print_devices(const diff_report *r)
{
    size_t nd = sd_diff_device_count(r->diff);
    bool all_both = true;
    for (size_t i = 0; i < nd; i++) {
        const sd_diff_device *dd = sd_diff_device_at(r->diff, i);
        all_both = all_both && dd->in_old && dd->in_new;
    }
    if (nd <= 1 && all_both) return;
    for (size_t i = 0; i < nd; i++) {
        const sd_diff_device *dd = sd_diff_device_at(r->diff, i);
        char a[32], b[32], c[32];
        if (!dd->in_old || !dd->in_new) {
            const sd_stats *st = dd->in_old ? &dd->old_stats : &dd->new_stats;
            printf("  device %" PRId64 ": only in %s (allocated %s, reserved %s)\n", dd->device,
                   dd->in_old ? "OLD" : "NEW", bytes_str(st->allocated_bytes, a, sizeof a),
                   bytes_str(st->reserved_bytes, b, sizeof b));
            continue;
        }
        printf("  device %" PRId64 ": allocated %s -> %s (%s)\n", dd->device,
               bytes_str(dd->old_stats.allocated_bytes, a, sizeof a),
               bytes_str(dd->new_stats.allocated_bytes, b, sizeof b),
               delta_str(diff_sdelta(dd->new_stats.allocated_bytes, dd->old_stats.allocated_bytes),
                         c, sizeof c));
    }
}

static void print_frag_line(const diff_report *r)
{
    sd_frag_brief fo, fn;
    sd_frag_brief_of(r->old_snap, &fo);
    sd_frag_brief_of(r->new_snap, &fn);
    char a[32], b[32];
    printf("fragmentation: gap %s -> %s, index %.2f -> %.2f\n", bytes_str(fo.gap, a, sizeof a),
           bytes_str(fn.gap, b, sizeof b), fo.index, fn.index);
}

static void print_steps(const diff_report *r)
{
    const sd_diff_totals *t = sd_diff_totals_of(r->diff);
    if (!t->has_per_step) return;
    char a[32], b[32], c[32];
    printf("growth per step: %s over %s steps", delta_str(t->per_step, a, sizeof a),
           count_str(r->o->steps, b, sizeof b));
    if (t->has_steps_to_capacity) {
        const sd_diff_device *first = NULL;
        for (size_t i = 0; i < sd_diff_device_count(r->diff); i++) {
            const sd_diff_device *dd = sd_diff_device_at(r->diff, i);
            if (dd->has_steps_to_capacity && dd->steps_to_capacity == t->steps_to_capacity) {
                first = dd;
                break;
            }
        }
        bool est = first->capacity_source == SD_CAPACITY_OOM;
        const char *what = est ? "estimated capacity " : "capacity ";
        const char *how = est ? " (free at the OOM + reserved)" : "";
        bytes_str(first->capacity, c, sizeof c);
        if (t->steps_to_capacity == 0)
            printf("; already at or above the %s%s%s", what, c, how);
        else
            printf("; %s%s%s reached in about %s steps", what, c, how,
                   count_str(t->steps_to_capacity, a, sizeof a));
        if (sd_diff_device_count(r->diff) > 1) printf(" (device %" PRId64 ")", first->device);
    } else if (t->per_step <= 0) {
        printf("; not growing");
    } else {
        printf("; give --capacity to see when it runs out");
    }
    printf("\n");
}

static void print_header(const diff_report *r)
{
    const sd_diff_totals *t = sd_diff_totals_of(r->diff);
    const sd_stats *o = &t->old_stats, *n = &t->new_stats;
    char a[24], b[24], c[24];
    printf("%sOLD%s %s\n%sNEW%s %s\n\n", clr_bold(r->o), clr_reset(r->o),
           sd_snapshot_source(r->old_snap), clr_bold(r->o), clr_reset(r->o),
           sd_snapshot_source(r->new_snap));
    printf("  %-13s %11s %11s  %11s\n", "", "old", "new", "delta");
    print_total_row(r, "allocated", o->allocated_bytes, n->allocated_bytes);
    print_total_row(r, "reserved", o->reserved_bytes, n->reserved_bytes);
    print_total_row(r, "active", o->active_bytes, n->active_bytes);
    print_total_row(r, "requested", o->requested_bytes, n->requested_bytes);
    print_total_row(r, "pending-free", o->pending_free_bytes, n->pending_free_bytes);
    printf("  live blocks: %s kept, %s new, %s freed\n", count_str(t->blocks.kept, a, sizeof a),
           count_str(t->blocks.added, b, sizeof b), count_str(t->blocks.freed, c, sizeof c));
    print_devices(r);
    print_frag_line(r);
    print_steps(r);
}

typedef struct table_widths { int delta, now, blocks; } table_widths;

static void row_cells(const sd_diff_group *g, char *d, char *nw, char *bl, size_t size)
{
    sd_format_delta(g->delta_bytes, d, size);
    sd_format_bytes(g->new_bytes, nw, size);
    snprintf(bl, size, "%" PRIu64 " (%s%" PRId64 ")", g->new_blocks,
             g->delta_blocks > 0 ? "+" : "", g->delta_blocks);
}

static void print_rows(const diff_report *r, size_t from, size_t to, const table_widths *w)
{
    for (size_t i = from; i < to; i++) {
        const sd_diff_group *g = sd_diff_group_at(r->diff, i);
        char d[32], nw[32], bl[48], label[1400];
        row_cells(g, d, nw, bl, sizeof d);
        group_label(r, g, label, sizeof label);
        const char *col = g->delta_bytes > 0 ? clr_red(r->o) : clr_green(r->o);
        printf("  %s%*s%s  %*s  %*s  %s\n", col, w->delta, d, clr_reset(r->o), w->now, nw,
               w->blocks, bl, label);
    }
}

static void widths_of(const diff_report *r, size_t n, table_widths *w)
{
    w->delta = 5;   /* "delta" */
    w->now = 3;     /* "new" */
    w->blocks = 6;  /* "blocks" */
    for (size_t i = 0; i < n; i++) {
        char d[32], nw[32], bl[48];
        row_cells(sd_diff_group_at(r->diff, i), d, nw, bl, sizeof d);
        if ((int)strlen(d) > w->delta) w->delta = (int)strlen(d);
        if ((int)strlen(nw) > w->now) w->now = (int)strlen(nw);
        if ((int)strlen(bl) > w->blocks) w->blocks = (int)strlen(bl);
    }
}

static void print_sum_check(const diff_report *r)
{
    const sd_diff_totals *t = sd_diff_totals_of(r->diff);
    int64_t groups = diff_sdelta(t->group_new_bytes, t->group_old_bytes);
    int64_t alloc = diff_sdelta(t->new_stats.allocated_bytes, t->old_stats.allocated_bytes);
    char a[32], b[32];
    if (r->o->n_focus > 0)
        printf("(focus: the groups hold %s of the allocated delta %s)\n",
               delta_str(groups, a, sizeof a), delta_str(alloc, b, sizeof b));
    else if (groups == alloc)
        printf("(the groups add up to the allocated delta, %s)\n", delta_str(alloc, a, sizeof a));
    else
        printf("%s(the groups add up to %s, not to the allocated delta %s)%s\n", clr_red(r->o),
               delta_str(groups, a, sizeof a), delta_str(alloc, b, sizeof b), clr_reset(r->o));
}

static void print_table(const diff_report *r)
{
    size_t growth = sd_diff_growth_count(r->diff), shrink = sd_diff_shrink_count(r->diff);
    size_t top = r->o->top > 0 ? (size_t)r->o->top : 20;
    size_t shown = growth < top ? growth : top;
    table_widths w;
    widths_of(r, growth + shrink, &w);
    const char *by = diff_group_by_names[r->o->group_by];
    printf("\n");
    if (growth == 0) {
        printf("%sNo growth:%s no %s holds more live memory in NEW than in OLD.\n",
               clr_bold(r->o), clr_reset(r->o), by);
    } else {
        printf("%sGrowth by %s%s: %zu of %zu groups grew", clr_bold(r->o), by, clr_reset(r->o),
               growth, sd_diff_group_count(r->diff));
        if (shown < growth) printf(", the top %zu shown", shown);
        printf("\n  %*s  %*s  %*s  %s\n", w.delta, "delta", w.now, "new", w.blocks, "blocks",
               by);
        print_rows(r, 0, shown, &w);
    }
    if (shrink) {
        printf("\n%sShrinking%s: %zu group%s\n", clr_bold(r->o), clr_reset(r->o), shrink,
               shrink == 1 ? "" : "s");
        print_rows(r, growth, growth + shrink, &w);
    }
    print_sum_check(r);
}

static void print_folded_count(const diff_report *r, size_t n, const char *what)
{
    if (n) printf("        %s(%zu %s frame%s)%s\n", clr_dim(r->o), n, what, n == 1 ? "" : "s",
                  clr_reset(r->o));
}

/* A few frames of the group's stack, innermost first: the user's frames and `via`. Other
 * frames fold into a count; PyTorch's noise frames (interpreter, unwinder) are dropped. */
static void print_stack(const diff_report *r, const sd_diff_group *g)
{
    size_t n;
    const uint32_t *ids = sd_snapshot_stack(g->rep_snapshot, g->rep_stack, &n);
    const sd_attrib *a = sd_diff_attrib(r->diff);
    size_t folded = 0, shown = 0, rest = 0;
    for (size_t i = 0; i < n; i++) {
        const sd_frame *f = sd_snapshot_frame(g->rep_snapshot, ids[i]);
        bool keep = (int32_t)i == g->rep_site.site || (int32_t)i == g->rep_site.via ||
                    sd_attrib_classify(a, f) == SD_FRAME_USER;
        if (shown == STACK_FRAMES_SHOWN) {
            rest++;
        } else if (!keep) {
            folded += !sd_frame_is_noise(f);
        } else {
            print_folded_count(r, folded, "internal");
            folded = 0;
            char t[512];
            frame_text(r, f, t, sizeof t);
            printf("        %s\n", t);
            shown++;
        }
    }
    print_folded_count(r, folded, "internal");
    print_folded_count(r, rest, "more");
}

static void print_stacks(const diff_report *r)
{
    size_t growth = sd_diff_growth_count(r->diff);
    size_t top = r->o->top > 0 ? (size_t)r->o->top : 20;
    size_t n = growth < STACKS_SHOWN ? growth : STACKS_SHOWN;
    if (n > top) n = top;
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        const sd_diff_group *g = sd_diff_group_at(r->diff, i);
        if (!g->rep_snapshot || g->rep_site.site < 0) continue;
        if (!any) printf("\n%sStacks of the top groups%s (innermost frame first)\n",
                         clr_bold(r->o), clr_reset(r->o));
        any = true;
        char d[32], label[1400];
        group_label(r, g, label, sizeof label);
        printf("  #%zu %s%s%s  %s\n", i + 1, clr_red(r->o),
               delta_str(g->delta_bytes, d, sizeof d), clr_reset(r->o), label);
        print_stack(r, g);
    }
}

static void print_text(diff_report *r)
{
    size_t growth = sd_diff_growth_count(r->diff);
    size_t top = r->o->top > 0 ? (size_t)r->o->top : 20;
    find_user_prefix(r, (growth < top ? growth : top) + sd_diff_shrink_count(r->diff));
    print_header(r);
    print_table(r);
    print_stacks(r);
}

/* ---------- folded ---------- */

static int print_folded(sd_diff *d)
{
    const sd_folded_line *lines;
    size_t n;
    sd_error err;
    sd_error_clear(&err);
    if (sd_diff_folded(d, &lines, &n, &err) != SD_OK) {
        msg_sd_error(&err);
        return EXIT_TROUBLE;
    }
    for (size_t i = 0; i < n; i++) printf("%s %" PRIu64 "\n", lines[i].stack, lines[i].bytes);
    return EXIT_OK;
}

/* ---------- the command ---------- */

static void diff_options(const struct cli_opts *o, sd_diff_options *d)
{
    memset(d, 0, sizeof *d);
    static const sd_group_by by[] = {SD_GROUP_SITE, SD_GROUP_LEAF, SD_GROUP_STACK,
                                     SD_GROUP_FILE, SD_GROUP_FUNCTION};
    d->attrib.group_by = by[o->group_by];
    d->attrib.depth = o->depth;
    d->attrib.hide = o->hide;
    d->attrib.n_hide = (size_t)o->n_hide;
    d->attrib.show = o->show;
    d->attrib.n_show = (size_t)o->n_show;
    d->attrib.focus = o->focus;
    d->attrib.n_focus = (size_t)o->n_focus;
    d->steps = o->steps;
    d->capacity = o->capacity;
    d->max_memory = o->max_memory;
}

/* ---------- loading both inputs at once ----------
 * The two parses are independent and take most of the run, so NEW loads in a second
 * thread while this one loads OLD. The worker only computes; every message is printed
 * afterwards from this thread, OLD's before NEW's, in load.c's words, so the output does
 * not depend on which thread finished first. */

typedef struct load_job {
    const char *spec;
    uint64_t max_memory;
    sd_snapshot *snap;
    sd_error err;
    bool opened;
    size_t members;
    char first_member[256];
} load_job;

static void *load_job_run(void *arg)
{
    load_job *j = arg;
    sd_error_clear(&j->err);
    sd_input_options io = {.max_memory = j->max_memory};
    sd_input *in = sd_input_open(j->spec, &io, &j->err);
    if (!in) return NULL;
    j->opened = true;
    j->members = sd_input_count(in);
    if (j->members == 1) {
        sd_load_options lo = {.max_memory = j->max_memory};
        j->snap = sd_snapshot_load_input(in, 0, &lo, &j->err);
    } else if (j->members > 1) {
        snprintf(j->first_member, sizeof j->first_member, "%s", sd_input_name(in, 0));
    }
    sd_input_free(in);
    return NULL;
}

static sd_snapshot *load_job_report(const load_job *j)
{
    if (j->snap) {
        for (size_t i = 0; i < sd_snapshot_warning_count(j->snap); i++)
            msg_warn("%s: %s", sd_snapshot_source(j->snap), sd_snapshot_warning(j->snap, i));
    } else if (j->opened && j->members != 1) {
        msg_error("%s: holds %zu snapshots (%s, ...); pick one as %s:MEMBER", j->spec,
                  j->members, j->first_member, j->spec);
    } else {
        msg_sd_error(&j->err);
    }
    return j->snap;
}

/* Load OLD (unless NULL) and NEW. false: a message was printed. */
static bool load_pair(const char *old_spec, const char *new_spec, uint64_t max_memory,
                      sd_snapshot **old_snap, sd_snapshot **new_snap)
{
    load_job jobs[2] = {{.spec = old_spec, .max_memory = max_memory},
                        {.spec = new_spec, .max_memory = max_memory}};
    pthread_t worker;
    bool threaded = old_spec && pthread_create(&worker, NULL, load_job_run, &jobs[1]) == 0;
    if (old_spec) load_job_run(&jobs[0]);
    if (threaded) pthread_join(worker, NULL);
    else load_job_run(&jobs[1]);
    *old_snap = old_spec ? load_job_report(&jobs[0]) : NULL;
    *new_snap = load_job_report(&jobs[1]);
    if ((!old_spec || *old_snap) && *new_snap) return true;
    sd_snapshot_free(*old_snap);
    sd_snapshot_free(*new_snap);
    *old_snap = *new_snap = NULL;
    return false;
}

/* --max-growth: the CI gate. The report is written either way; the verdict goes to
 * stderr and into the exit status. */
static int apply_gate(const struct cli_opts *opts, const sd_diff *d, int status)
{
    if (status != EXIT_OK || !opts->has_max_growth) return status;
    const sd_diff_totals *t = sd_diff_totals_of(d);
    int64_t grew = (int64_t)t->new_stats.allocated_bytes - (int64_t)t->old_stats.allocated_bytes;
    char g[32], lim[32];
    sd_format_delta(grew, g, sizeof g);
    sd_format_bytes(opts->max_growth, lim, sizeof lim);
    if (grew > 0 && (uint64_t)grew > opts->max_growth) {
        msg_error("check failed: allocated memory grew by %s, more than --max-growth %s", g, lim);
        return EXIT_CHECK_FAILED;
    }
    msg_note("check passed: allocated memory grew by %s (limit %s)", g, lim);
    return status;
}

int cmd_diff(const struct cli_opts *opts)
{
    bool one = opts->n_files == 1;
    if (opts->n_files != 2 && !(one && opts->format == FORMAT_FOLDED)) {
        msg_error("diff needs two snapshots, OLD and NEW (one is enough with --format folded)");
        return EXIT_TROUBLE;
    }
    sd_snapshot *old_snap, *new_snap;
    if (!load_pair(one ? NULL : opts->files[0], opts->files[one ? 0 : 1], opts->max_memory,
                   &old_snap, &new_snap))
        return EXIT_TROUBLE;
    sd_diff_options dopts;
    diff_options(opts, &dopts);
    sd_error err;
    sd_error_clear(&err);
    sd_diff *d = sd_diff_create(old_snap, new_snap, &dopts, &err);
    int status = EXIT_TROUBLE;
    if (!d) {
        msg_sd_error(&err);
    } else {
        diff_report r = {.o = opts, .old_snap = old_snap, .new_snap = new_snap, .diff = d};
        if (opts->format == FORMAT_FOLDED) {
            status = print_folded(d);
        } else if (opts->format == FORMAT_JSON) {
            status = diff_print_json(&r);
        } else {
            print_text(&r);
            status = EXIT_OK;
        }
        status = apply_gate(opts, d, status);
    }
    sd_diff_free(d);
    sd_snapshot_free(new_snap);
    sd_snapshot_free(old_snap);
    return status;
}
