/* diff_text.c - the diff for people: a header of totals, the growing groups as a table,
 * the shrinking ones, then the stacks of the top groups.
 *
 * Every figure and verdict comes from the diff (totals, devices, groups, sum check,
 * outlook); this file words them and lays them out.
 */
#include <inttypes.h>
#include <string.h>

#include "render/diff_render.h"
#include "render/format.h"

enum { STACKS_SHOWN = 5, STACK_FRAMES_SHOWN = 8, NAME_MAX_SHOWN = 60, TOP_DEFAULT = 20 };

typedef struct text_ctx {
    FILE *out;
    bool color;
    size_t top;                   /* growing groups in the table */
    const sd_diff *diff;
    const sd_snapshot *old_snap, *new_snap;
    sd_group_by group_by;
    int depth;
    const char *user_prefix;      /* common directory of user files, stripped on display */
    size_t user_prefix_len;
} text_ctx;

static const char *esc(const text_ctx *r, const char *code) { return r->color ? code : ""; }
static const char *clr_bold(const text_ctx *r) { return esc(r, "\033[1m"); }
static const char *clr_red(const text_ctx *r) { return esc(r, "\033[31m"); }
static const char *clr_green(const text_ctx *r) { return esc(r, "\033[32m"); }
static const char *clr_dim(const text_ctx *r) { return esc(r, "\033[2m"); }
static const char *clr_reset(const text_ctx *r) { return esc(r, "\033[0m"); }

static bool is_sep(char c) { return c == '/' || c == '\\'; }

/* ---------- how frames are shown ---------- */

static const char *display_path(const text_ctx *r, const sd_frame *f, sd_frame_kind kind)
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
static void frame_text(const text_ctx *r, const sd_frame *f, char *buf, size_t size)
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

static const sd_frame *stack_frame(const sd_diff_group *g, size_t i)
{
    size_t n;
    const uint32_t *ids = sd_snapshot_stack(g->rep_snapshot, g->rep_stack, &n);
    return i < n ? sd_snapshot_frame(g->rep_snapshot, ids[i]) : NULL;
}

/* What the table shows for a group: its site (and callers, via) in short form. */
static void group_label(const text_ctx *r, const sd_diff_group *g, char *buf, size_t size)
{
    if (g->rep_site.site < 0 || !g->rep_snapshot) {
        snprintf(buf, size, "%s", SD_NO_STACK);
        return;
    }
    const sd_attrib *a = sd_diff_attrib(r->diff);
    const sd_frame *site = stack_frame(g, (size_t)g->rep_site.site);
    const sd_frame *leaf = stack_frame(g, 0);
    const sd_frame *shown = r->group_by == SD_GROUP_LEAF ? leaf : site;
    char f[512];
    frame_text(r, shown, f, sizeof f);
    if (r->group_by == SD_GROUP_FILE) {
        snprintf(buf, size, "%s", display_path(r, site, sd_attrib_classify(a, site)));
        return;
    }
    size_t len = (size_t)snprintf(buf, size, "%s", f);
    if (r->group_by == SD_GROUP_SITE && r->depth > 0) {
        size_t n;
        sd_snapshot_stack(g->rep_snapshot, g->rep_stack, &n);
        int added = 0;
        for (size_t i = (size_t)g->rep_site.site + 1;
             i < n && added < r->depth && len < size; i++) {
            const sd_frame *c = stack_frame(g, i);
            if (sd_attrib_classify(a, c) != SD_FRAME_USER) continue;
            frame_text(r, c, f, sizeof f);
            len += (size_t)snprintf(buf + len, size - len, " <- %s", f);
            added++;
        }
    }
    if (r->group_by != SD_GROUP_LEAF && g->rep_site.via >= 0 && len < size) {
        frame_text(r, stack_frame(g, (size_t)g->rep_site.via), f, sizeof f);
        snprintf(buf + len, size - len, " %svia %s%s", clr_dim(r), f, clr_reset(r));
    }
}

/* The directory all user files of the shown groups share ("/home/alice/proj/"). */
static void find_user_prefix(text_ctx *r, size_t n_shown)
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

static void print_total_row(const text_ctx *r, const char *label, uint64_t old_v, uint64_t new_v)
{
    int64_t d = sdp_sdelta(new_v, old_v);
    const char *col = d > 0 ? clr_red(r) : d < 0 ? clr_green(r) : "";
    fprintf(r->out, "  %-13s %11s %11s  %s%11s%s\n", label, sdp_fmt_bytes(old_v).s,
            sdp_fmt_bytes(new_v).s, col, sdp_fmt_delta(d).s,
            *col ? clr_reset(r) : "");
}

static void print_devices(const text_ctx *r)
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
        if (!dd->in_old || !dd->in_new) {
            const sd_stats *st = dd->in_old ? &dd->old_stats : &dd->new_stats;
            fprintf(r->out, "  device %" PRId64 ": only in %s (allocated %s, reserved %s)\n",
                    dd->device, dd->in_old ? "OLD" : "NEW",
                    sdp_fmt_bytes(st->allocated_bytes).s, sdp_fmt_bytes(st->reserved_bytes).s);
            continue;
        }
        fprintf(r->out, "  device %" PRId64 ": allocated %s -> %s (%s)\n", dd->device,
                sdp_fmt_bytes(dd->old_stats.allocated_bytes).s,
                sdp_fmt_bytes(dd->new_stats.allocated_bytes).s,
                sdp_fmt_delta(dd->delta.allocated).s);
    }
}

static void print_frag_line(const text_ctx *r)
{
    const sd_frag_brief *fo = &sd_diff_totals_of(r->diff)->old_frag;
    const sd_frag_brief *fn = &sd_diff_totals_of(r->diff)->new_frag;
    fprintf(r->out, "fragmentation: gap %s -> %s, index %.2f -> %.2f\n",
            sdp_fmt_bytes(fo->gap).s, sdp_fmt_bytes(fn->gap).s, fo->index, fn->index);
    const sd_diff_totals *t = sd_diff_totals_of(r->diff);
    const char *code = sd_pattern_code(t->pattern);
    if (code)
        fprintf(r->out, "%s[%s]%s reserved %s, allocated %s: %s\n", clr_bold(r), code,
                clr_reset(r), sdp_fmt_delta(t->delta.reserved).s,
                sdp_fmt_delta(t->delta.allocated).s, sdp_pattern_hint(t->pattern));
}

static void print_steps(const text_ctx *r)
{
    const sd_diff_totals *t = sd_diff_totals_of(r->diff);
    if (t->outlook == SD_OUTLOOK_NO_STEPS) return;
    fprintf(r->out, "growth per step: %s over %s steps", sdp_fmt_delta(t->per_step).s,
            sdp_fmt_count(t->steps).s);
    if (t->outlook == SD_OUTLOOK_FULL || t->outlook == SD_OUTLOOK_REACHED) {
        const sd_diff_device *first = sd_diff_device_at(r->diff, t->capacity_device);
        bool est = first->capacity_source == SD_CAPACITY_OOM;
        const char *what = est ? "estimated capacity " : "capacity ";
        const char *how = est ? " (free at the OOM + reserved)" : "";
        sdp_text cap = sdp_fmt_bytes(first->capacity);
        if (t->outlook == SD_OUTLOOK_FULL)
            fprintf(r->out, "; already at or above the %s%s%s", what, cap.s, how);
        else
            fprintf(r->out, "; %s%s%s reached in about %s steps", what, cap.s, how,
                    sdp_fmt_count(t->steps_to_capacity).s);
        if (sd_diff_device_count(r->diff) > 1)
            fprintf(r->out, " (device %" PRId64 ")", first->device);
    } else if (t->outlook == SD_OUTLOOK_NOT_GROWING) {
        fprintf(r->out, "; not growing");
    } else {
        fprintf(r->out, "; give --capacity to see when it runs out");
    }
    fprintf(r->out, "\n");
}

static void print_header(const text_ctx *r)
{
    const sd_diff_totals *t = sd_diff_totals_of(r->diff);
    const sd_stats *o = &t->old_stats, *n = &t->new_stats;
    fprintf(r->out, "%sOLD%s %s\n%sNEW%s %s\n\n", clr_bold(r), clr_reset(r),
            sd_snapshot_source(r->old_snap), clr_bold(r), clr_reset(r),
            sd_snapshot_source(r->new_snap));
    fprintf(r->out, "  %-13s %11s %11s  %11s\n", "", "old", "new", "delta");
    print_total_row(r, "allocated", o->allocated_bytes, n->allocated_bytes);
    print_total_row(r, "reserved", o->reserved_bytes, n->reserved_bytes);
    print_total_row(r, "active", o->active_bytes, n->active_bytes);
    print_total_row(r, "requested", o->requested_bytes, n->requested_bytes);
    print_total_row(r, "pending-free", o->pending_free_bytes, n->pending_free_bytes);
    fprintf(r->out, "  live blocks: %s kept, %s new, %s freed\n", sdp_fmt_count(t->blocks.kept).s,
            sdp_fmt_count(t->blocks.added).s, sdp_fmt_count(t->blocks.freed).s);
    print_devices(r);
    print_frag_line(r);
    print_steps(r);
}

typedef struct table_widths { int delta, now, blocks; } table_widths;

typedef struct row_cells { sdp_text delta, now; char blocks[112]; } row_cells;

static void cells_of(const sd_diff_group *g, row_cells *c)
{
    c->delta = sdp_fmt_delta(g->delta_bytes);
    c->now = sdp_fmt_bytes(g->new_bytes);
    snprintf(c->blocks, sizeof c->blocks, "%s (%s)", sdp_fmt_count(g->new_blocks).s,
             sdp_fmt_count_delta(g->delta_blocks).s);
}

/* Under a growing group's label: its pattern and the fix, "[code] hint". */
static void print_hint(const text_ctx *r, const sd_diff_group *g, const table_widths *w)
{
    const char *code = sd_pattern_code(g->pattern);
    if (!code || g->delta_bytes <= 0) return;
    int indent = 2 + w->delta + 2 + w->now + 2 + w->blocks + 2;
    fprintf(r->out, "%*s%s[%s] %s%s\n", indent, "", clr_dim(r), code,
            sdp_pattern_hint(g->pattern), clr_reset(r));
}

static void print_rows(const text_ctx *r, size_t from, size_t to, const table_widths *w)
{
    for (size_t i = from; i < to; i++) {
        const sd_diff_group *g = sd_diff_group_at(r->diff, i);
        row_cells c;
        char label[1400];
        cells_of(g, &c);
        group_label(r, g, label, sizeof label);
        const char *col = g->delta_bytes > 0 ? clr_red(r) : clr_green(r);
        fprintf(r->out, "  %s%*s%s  %*s  %*s  %s\n", col, w->delta, c.delta.s, clr_reset(r),
                w->now, c.now.s, w->blocks, c.blocks, label);
        print_hint(r, g, w);
    }
}

static int max_int(int a, size_t b) { return (size_t)a > b ? a : (int)b; }

static void widths_of(const text_ctx *r, size_t n, table_widths *w)
{
    w->delta = 5;   /* "delta" */
    w->now = 3;     /* "new" */
    w->blocks = 6;  /* "blocks" */
    for (size_t i = 0; i < n; i++) {
        row_cells c;
        cells_of(sd_diff_group_at(r->diff, i), &c);
        w->delta = max_int(w->delta, strlen(c.delta.s));
        w->now = max_int(w->now, strlen(c.now.s));
        w->blocks = max_int(w->blocks, strlen(c.blocks));
    }
}

static void print_sum_check(const text_ctx *r)
{
    const sd_diff_totals *t = sd_diff_totals_of(r->diff);
    sdp_text groups = sdp_fmt_delta(t->groups_delta), alloc = sdp_fmt_delta(t->delta.allocated);
    switch (t->sum_check) {
    case SD_SUM_FOCUS:
        fprintf(r->out, "(focus: the groups hold %s of the allocated delta %s)\n", groups.s,
                alloc.s);
        break;
    case SD_SUM_EXACT:
        fprintf(r->out, "(the groups add up to the allocated delta, %s)\n", alloc.s);
        break;
    case SD_SUM_MISMATCH:
        fprintf(r->out, "%s(the groups add up to %s, not to the allocated delta %s)%s\n",
                clr_red(r), groups.s, alloc.s, clr_reset(r));
        break;
    }
}

static void print_table_head(const text_ctx *r, const table_widths *w, const char *by)
{
    fprintf(r->out, "  %*s  %*s  %*s  %s\n", w->delta, "delta", w->now, "new", w->blocks,
            "blocks", by);
}

static void print_table(const text_ctx *r)
{
    size_t growth = sd_diff_growth_count(r->diff), shrink = sd_diff_shrink_count(r->diff);
    size_t top = r->top;
    size_t shown = growth < top ? growth : top;
    table_widths w;
    widths_of(r, growth + shrink, &w);
    const char *by = sd_group_by_name(r->group_by);
    fprintf(r->out, "\n");
    if (growth == 0) {
        fprintf(r->out, "%sNo growth:%s no %s holds more live memory in NEW than in OLD.\n",
                clr_bold(r), clr_reset(r), by);
    } else {
        fprintf(r->out, "%sGrowth by %s%s: %s of %s groups grew", clr_bold(r), by, clr_reset(r),
                sdp_fmt_count(growth).s, sdp_fmt_count(sd_diff_group_count(r->diff)).s);
        if (shown < growth) fprintf(r->out, ", the top %s shown", sdp_fmt_count(shown).s);
        fprintf(r->out, "\n");
        print_table_head(r, &w, by);
        print_rows(r, 0, shown, &w);
    }
    if (shrink) {
        fprintf(r->out, "\n%sShrinking%s: %s group%s\n", clr_bold(r), clr_reset(r),
                sdp_fmt_count(shrink).s, shrink == 1 ? "" : "s");
        print_table_head(r, &w, by);   /* every table has its header */
        print_rows(r, growth, growth + shrink, &w);
    }
    print_sum_check(r);
}

static void print_folded_count(const text_ctx *r, size_t n, const char *what)
{
    if (n) fprintf(r->out, "        %s(%zu %s frame%s)%s\n", clr_dim(r), n, what, n == 1 ? "" : "s",
                   clr_reset(r));
}

/* A few frames of the group's stack, innermost first: the user's frames and `via`. Other
 * frames fold into a count; PyTorch's noise frames (interpreter, unwinder) are dropped. */
static void print_stack(const text_ctx *r, const sd_diff_group *g)
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
            fprintf(r->out, "        %s\n", t);
            shown++;
        }
    }
    print_folded_count(r, folded, "internal");
    print_folded_count(r, rest, "more");
}

static void print_stacks(const text_ctx *r)
{
    size_t growth = sd_diff_growth_count(r->diff);
    size_t top = r->top;
    size_t n = growth < STACKS_SHOWN ? growth : STACKS_SHOWN;
    if (n > top) n = top;
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        const sd_diff_group *g = sd_diff_group_at(r->diff, i);
        if (!g->rep_snapshot || g->rep_site.site < 0) continue;
        if (!any) fprintf(r->out, "\n%sStacks of the top groups%s (innermost frame first)\n",
                          clr_bold(r), clr_reset(r));
        any = true;
        char label[1400];
        group_label(r, g, label, sizeof label);
        fprintf(r->out, "  #%zu %s%s%s  %s\n", i + 1, clr_red(r),
                sdp_fmt_delta(g->delta_bytes).s, clr_reset(r), label);
        print_stack(r, g);
    }
}

sd_status sdp_render_diff_text(FILE *out, const sd_diff *d, const sdp_diff_text_options *o)
{
    const sd_profile *p = sd_diff_profile(d);
    const sd_attrib *a = sd_diff_attrib(d);
    text_ctx r = {.out = out, .color = o->render.color,
                  .top = o->top ? o->top : TOP_DEFAULT, .diff = d,
                  .old_snap = sd_profile_snapshot(p, 0), .new_snap = sd_profile_snapshot(p, 1),
                  .group_by = sd_attrib_group_by(a), .depth = sd_attrib_depth(a)};
    if (!r.old_snap) return SD_EUSAGE;   /* a one-sided diff has folded stacks only */
    size_t growth = sd_diff_growth_count(d);
    find_user_prefix(&r, (growth < r.top ? growth : r.top) + sd_diff_shrink_count(d));
    print_header(&r);
    print_table(&r);
    print_stacks(&r);
    return ferror(out) ? SD_EIO : SD_OK;
}

