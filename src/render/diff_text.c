/* diff_text.c - the diff for people: a header of totals, the growing groups as a table,
 * the shrinking ones, then the stacks of the top groups.
 *
 * Every figure and verdict comes from the diff (totals, devices, groups, sum check,
 * outlook); this file words them and lays them out.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/diff_render.h"
#include "render/format.h"
#include "render/pattern_words.h"
#include "snapdiff/peak.h"

enum { STACKS_SHOWN = 5, STACK_FRAMES_SHOWN = 8, TOP_DEFAULT = 20 };
/* Why a group has no stack, and the fix. */
#define NO_STACK_WHY                                                                       \
    "allocated before recording began; call "                                             \
    "torch.cuda.memory._record_memory_history() earlier, before the model is built"

typedef struct text_ctx {
    FILE *out;
    bool color;
    size_t top;                   /* growing groups in the table */
    const sd_diff *diff;
    const sd_snapshot *old_snap, *new_snap;
    sd_group_by group_by;
    uint64_t *label_hash;         /* -g stack: per group, its label's hash + 1 (0: not yet) */
    size_t n_label_hash;
} text_ctx;

/* The one colour helper of the renderers (format.h), by the names this file uses. */
static const char *clr_bold(const text_ctx *r) { return sdp_ansi(r->color, SDP_BOLD); }
static const char *clr_red(const text_ctx *r) { return sdp_ansi(r->color, SDP_RED); }
static const char *clr_green(const text_ctx *r) { return sdp_ansi(r->color, SDP_GREEN); }
static const char *clr_dim(const text_ctx *r) { return sdp_ansi(r->color, SDP_DIM); }
static const char *clr_reset(const text_ctx *r) { return sdp_ansi(r->color, SDP_RESET); }


/* ---------- how groups are named: the analysis's labels (attrib.h) ---------- */

/* What the table shows for a group: its label with via (and callers). */
static void group_label(const text_ctx *r, const sd_diff_group *g, char *buf, size_t size)
{
    sd_group_label(sd_diff_attrib(r->diff), g->rep_snapshot, g->rep_stack, &g->rep_site,
                   g->key, true, buf, size);
}

enum { LABEL_MAX = 1400 };

static void label_of_row(void *ctx, size_t j, char *buf, size_t size)
{
    const text_ctx *r = ctx;
    group_label(r, sd_diff_group_at(r->diff, j), buf, size);
}

/* The label of row i, distinct from the earlier rows' (attrib.h: -g stack's "(stack 2)"). */
static void row_label(const text_ctx *r, size_t i, char *buf, size_t size)
{
    sd_group_label_distinct(sd_diff_attrib(r->diff), label_of_row, (void *)r, i, r->label_hash,
                            r->n_label_hash, buf, size);
}

/* A row of the "at the peak" table as the diff's group, for its label: the same key,
 * representative stack and site, so both tables name a site alike. */
static sd_diff_group peak_row_as_group(const sd_peak_diff_group *pg)
{
    sd_diff_group g;
    memset(&g, 0, sizeof g);
    g.key = pg->key;
    g.rep_snapshot = pg->rep_snapshot;
    g.rep_stack = pg->rep_stack;
    g.rep_site = pg->rep_site;
    return g;
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

/* A host row when only one side recorded host memory: "-" for the other and the change. */
static void print_host_one_side(const text_ctx *r, const char *label, bool in_old, uint64_t v)
{
    sdp_text b = sdp_fmt_bytes(v);
    fprintf(r->out, "  %-13s %11s %11s  %11s\n", label, in_old ? b.s : "-", in_old ? "-" : b.s, "-");
}

/* Pinned host memory: rows of their own, in no figure above them. */
static void print_host(const text_ctx *r)
{
    const sd_diff_host *h = sd_diff_host_of(r->diff);
    if (!h) return;
    fprintf(r->out, "  pinned host memory (host_segments: in no device figure or total)%s\n",
            !h->in_old ? "; OLD did not record it" : !h->in_new ? "; NEW did not record it" : "");
    if (h->in_old && h->in_new) {
        print_total_row(r, "allocated", h->old_stats.allocated_bytes, h->new_stats.allocated_bytes);
        print_total_row(r, "reserved", h->old_stats.reserved_bytes, h->new_stats.reserved_bytes);
        return;
    }
    /* one side unrecorded: its figures and the change are unknown, not zero */
    const sd_stats *st = h->in_old ? &h->old_stats : &h->new_stats;
    print_host_one_side(r, "allocated", h->in_old, st->allocated_bytes);
    print_host_one_side(r, "reserved", h->in_old, st->reserved_bytes);
}

static void print_devices(const text_ctx *r)
{
    size_t nd = sd_diff_device_count(r->diff);
    bool all_both = true;
    for (size_t i = 0; i < nd; i++) {
        const sd_diff_device *dd = sd_diff_device_at(r->diff, i);
        all_both = all_both && dd->in_old && dd->in_new;
        if (dd->in_old && dd->in_new && dd->device != dd->device_new)
            fprintf(r->out, "  device %" PRId64 " vs device %" PRId64
                    ": one device per file, compared as ranks of one job\n",
                    dd->device, dd->device_new);
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
    else if (t->reserved_with_peak)
        fprintf(r->out, "reserved %s grew with NEW's %s transient peak, %s (not fragmentation: "
                "the cache follows the peak; see \"at the peak\")\n",
                sdp_fmt_delta(t->delta.reserved).s, t->peak_delta > 0 ? "higher" : "different",
                sdp_fmt_delta(t->peak_delta).s);
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

/* The peaks beside allocated and reserved (docs/peak.md): one row, or one per device. */
static void print_peak_rows(const text_ctx *r)
{
    const sd_peak_diff *pd = sd_diff_peak(r->diff);
    size_t n = pd ? sd_peak_diff_device_count(pd) : 0;
    for (size_t i = 0; i < n; i++) {
        const sd_peak_diff_device *dv = sd_peak_diff_device_at(pd, i);
        char label[32];
        if (n == 1) snprintf(label, sizeof label, "peak");
        else snprintf(label, sizeof label, "peak dev %" PRId64, dv->device_new);
        print_total_row(r, label, dv->old->peak_bytes, dv->new_->peak_bytes);
    }
}

/* "activations", "optimizer state", "backward temporaries": a category as people say it. */
static void category_words(sd_category c, sd_step_phase ph, char *buf, size_t size)
{
    const char *name = sd_category_name(c);
    size_t n = 0;
    if (c == SD_CAT_TEMPORARIES)
        n = (size_t)snprintf(buf, size, "%s ", sd_step_phase_name(ph));
    for (const char *p = name; *p && n + 1 < size; p++) buf[n++] = *p == '_' ? ' ' : *p;
    if (n < size) buf[n] = '\0';
}

static uint64_t category_bytes(const sd_peak_diff_device *dv, sd_category c, int side)
{
    for (size_t i = 0; i < dv->n_categories; i++)
        if (dv->categories[i].category == c)
            return side ? dv->categories[i].new_bytes : dv->categories[i].old_bytes;
    return 0;
}

/* When the two peaks fall in different phases, say so first: the tables below compare
 * different moments of a step. */
static void print_phase_line(const text_ctx *r)
{
    const sd_peak_diff *pd = sd_diff_peak(r->diff);
    size_t n = pd ? sd_peak_diff_device_count(pd) : 0;
    for (size_t i = 0; i < n; i++) {
        const sd_peak_diff_device *dv = sd_peak_diff_device_at(pd, i);
        if (!dv->phases_differ) continue;
        char lo[64], ln[64];
        category_words(dv->old_lead, dv->old->peak_phase, lo, sizeof lo);
        category_words(dv->new_lead, dv->new_->peak_phase, ln, sizeof ln);
        fprintf(r->out, "%sOLD peaks in the %s (%s %s), NEW in the %s (%s %s)%s", clr_bold(r),
                sd_step_phase_name(dv->old->peak_phase), lo,
                sdp_fmt_bytes(category_bytes(dv, dv->old_lead, 0)).s,
                sd_step_phase_name(dv->new_->peak_phase), ln,
                sdp_fmt_bytes(category_bytes(dv, dv->new_lead, 1)).s, clr_reset(r));
        if (n > 1) fprintf(r->out, " on device %" PRId64, dv->device_new);
        fprintf(r->out, "\n");
    }
}

/* Issue 36: peaks in different steps are not like for like: say which steps, then the
 * steady step's peaks (the last complete step of both) by category. */
static void print_steps_line(const text_ctx *r)
{
    const sd_peak_diff *pd = sd_diff_peak(r->diff);
    size_t n = pd ? sd_peak_diff_device_count(pd) : 0;
    for (size_t i = 0; i < n; i++) {
        const sd_peak_diff_device *dv = sd_peak_diff_device_at(pd, i);
        if (!dv->old_step || !dv->new_step || dv->old_step == dv->new_step) continue;
        fprintf(r->out, "%sthe peaks are in different steps: OLD's in step %u, NEW's in step "
                "%u%s", clr_bold(r), (unsigned)dv->old_step, (unsigned)dv->new_step,
                clr_reset(r));
        if (n > 1) fprintf(r->out, " on device %" PRId64, dv->device_new);
        if (!dv->steady_step) {
            fprintf(r->out, "; no complete step in both to compare instead\n");
            continue;
        }
        fprintf(r->out, "; at step %u (the last complete step of both): OLD %s, NEW %s (%s)",
                (unsigned)dv->steady_step, sdp_fmt_bytes(dv->old_steady_bytes).s,
                sdp_fmt_bytes(dv->new_steady_bytes).s,
                sdp_fmt_delta((int64_t)dv->new_steady_bytes - (int64_t)dv->old_steady_bytes).s);
        const char *sep = ": ";
        for (size_t k = 0; k < dv->n_steady_categories; k++) {
            const sd_peak_diff_category *c = &dv->steady_categories[k];
            if (!c->delta_bytes) continue;
            fprintf(r->out, "%s%s %s", sep, sd_category_name(c->category),
                    sdp_fmt_delta(c->delta_bytes).s);
            sep = ", ";
        }
        fprintf(r->out, "\n");
    }
}

/* The peak of each phase in OLD and NEW, by category. */
static void print_phase_table(const text_ctx *r, const sd_peak_diff_device *dv)
{
    if (!dv->n_phases) return;
    fprintf(r->out, "  %-22s %11s %11s  %11s\n", "peak of each phase", "old", "new", "delta");
    for (size_t i = 0; i < dv->n_phases; i++) {
        const sd_peak_diff_phase *p = &dv->phases[i];
        char o[64], w[64];
        snprintf(o, sizeof o, "%s", p->has_old ? sdp_fmt_bytes(p->old_peak_bytes).s : "-");
        snprintf(w, sizeof w, "%s", p->has_new ? sdp_fmt_bytes(p->new_peak_bytes).s : "-");
        fprintf(r->out, "  %-22s %11s %11s  %11s\n", sd_step_phase_name(p->phase), o, w,
                p->has_old && p->has_new
                    ? sdp_fmt_delta((int64_t)p->new_peak_bytes - (int64_t)p->old_peak_bytes).s
                    : "");
        for (size_t k = 0; k < p->n_categories; k++) {
            const sd_peak_diff_category *c = &p->categories[k];
            fprintf(r->out, "    %-20s %11s %11s  %11s\n", sd_category_name(c->category),
                    p->has_old ? sdp_fmt_bytes(c->old_bytes).s : "-",
                    p->has_new ? sdp_fmt_bytes(c->new_bytes).s : "-",
                    p->has_old && p->has_new ? sdp_fmt_delta(c->delta_bytes).s : "");
        }
    }
}

/* "at the peak": what was live at OLD's peak and at NEW's, by site, largest change first. */
static void print_peak_table(const text_ctx *r)
{
    const sd_peak_diff *pd = sd_diff_peak(r->diff);
    size_t n = pd ? sd_peak_diff_device_count(pd) : 0;
    for (size_t i = 0; i < n; i++) {
        const sd_peak_diff_device *dv = sd_peak_diff_device_at(pd, i);
        fprintf(r->out, "\n%sat the peak%s", clr_bold(r), clr_reset(r));
        if (dv->device_old != dv->device_new || n > 1) {
            if (dv->device_old == dv->device_new)
                fprintf(r->out, " (device %" PRId64 ")", dv->device_new);
            else
                fprintf(r->out, " (OLD device %" PRId64 ", NEW device %" PRId64 ")",
                        dv->device_old, dv->device_new);
        }
        char po[64] = "", pn[64] = "";
        if (dv->old->peak_has_phase)
            snprintf(po, sizeof po, " (%s)", sd_step_phase_name(dv->old->peak_phase));
        if (dv->new_->peak_has_phase)
            snprintf(pn, sizeof pn, " (%s)", sd_step_phase_name(dv->new_->peak_phase));
        fprintf(r->out, ": OLD %s at entry #%zu%s, NEW %s at entry #%zu%s (%s)\n",
                sdp_fmt_bytes(dv->old->peak_bytes).s, dv->old->peak_entry, po,
                sdp_fmt_bytes(dv->new_->peak_bytes).s, dv->new_->peak_entry, pn,
                sdp_fmt_delta(dv->delta_bytes).s);
        print_phase_table(r, dv);
        fprintf(r->out, "  %11s %11s  %11s  %s\n", "old", "new", "delta", "site");
        size_t shown = 0;
        int64_t sum = 0, rest = 0;
        for (size_t k = 0; k < dv->n_groups; k++) {
            const sd_peak_diff_group *g = &dv->groups[k];
            sum += g->delta_bytes;
            if (g->delta_bytes == 0) continue;
            if (shown >= r->top) {
                rest += g->delta_bytes;
                continue;
            }
            const char *col = g->delta_bytes > 0 ? clr_red(r) : clr_green(r);
            char label[LABEL_MAX];
            sd_diff_group as_group = peak_row_as_group(g);
            if (g->rep_snapshot) group_label(r, &as_group, label, sizeof label);
            else snprintf(label, sizeof label, "%s", g->key);
            fprintf(r->out, "  %11s %11s  %s%11s%s  %s\n", sdp_fmt_bytes(g->old_bytes).s,
                    sdp_fmt_bytes(g->new_bytes).s, col, sdp_fmt_delta(g->delta_bytes).s,
                    *col ? clr_reset(r) : "", label);
            shown++;
        }
        size_t changed = 0;
        for (size_t k = 0; k < dv->n_groups; k++) changed += dv->groups[k].delta_bytes != 0;
        if (changed > shown)
            fprintf(r->out, "  %11s %11s  %11s  ... %s more changed group%s (-n to show)\n", "",
                    "", sdp_fmt_delta(rest).s, sdp_fmt_count(changed - shown).s,
                    changed - shown == 1 ? "" : "s");
        if (sum == dv->delta_bytes)
            fprintf(r->out, "(the groups add up to the peak delta, %s)\n",
                    sdp_fmt_delta(dv->delta_bytes).s);
        else
            fprintf(r->out, "(focus: the groups hold %s of the peak delta %s)\n",
                    sdp_fmt_delta(sum).s, sdp_fmt_delta(dv->delta_bytes).s);
    }
}

/* Said once, when the files are compared as two runs (sd_diff_comparison_of): why. */
static void print_compared_as(const text_ctx *r)
{
    const sd_diff_comparison *c = sd_diff_comparison_of(r->diff);
    if (!c->two_runs) return;
    /* Ranks of one job are never "two runs": the header already says what they are. */
    fprintf(r->out, c->ranks ? "ranks compared at their peaks first: "
                             : "compared as two runs, not one run twice: ");
    if (c->forced) {
        fprintf(r->out, "--at peak");
    } else {
        const char *sep = "";
        if (c->why & SD_TWO_RUNS_FEW_SHARED) {
            fprintf(r->out, "%sonly %.0f%% of NEW's allocated bytes are at sites OLD has", sep,
                    c->shared_new_pct);
            sep = "; ";
        }
        if (c->why & SD_TWO_RUNS_SWAPPED) {
            fprintf(r->out, "%sNEW was recorded before OLD", sep);
            sep = "; ";
        }
        if (c->why & SD_TWO_RUNS_SCRIPTS) {
            fprintf(r->out, "%sdifferent scripts", sep);
            sep = "; ";
        }
        if (c->why & SD_TWO_RUNS_STEPS)
            fprintf(r->out, "%seach trace covers a step (forward and backward)", sep);
    }
    const sd_peak_diff *pd = sd_diff_peak(r->diff);
    if (!pd || !sd_peak_diff_device_count(pd))
        fprintf(r->out, " (no peaks to compare: both need a trace)");
    fprintf(r->out, "\n");
}

static void print_header(const text_ctx *r)
{
    const sd_diff_totals *t = sd_diff_totals_of(r->diff);
    const sd_stats *o = &t->old_stats, *n = &t->new_stats;
    fprintf(r->out, "%sOLD%s %s\n%sNEW%s %s\n", clr_bold(r), clr_reset(r),
            sd_snapshot_source(r->old_snap), clr_bold(r), clr_reset(r),
            sd_snapshot_source(r->new_snap));
    print_phase_line(r);
    print_steps_line(r);
    fprintf(r->out, "\n");
    fprintf(r->out, "  %-13s %11s %11s  %11s\n", "", "old", "new", "delta");
    print_total_row(r, "allocated", o->allocated_bytes, n->allocated_bytes);
    print_total_row(r, "reserved", o->reserved_bytes, n->reserved_bytes);
    print_total_row(r, "active", o->active_bytes, n->active_bytes);
    print_total_row(r, "requested", o->requested_bytes, n->requested_bytes);
    print_total_row(r, "pending-free", o->pending_free_bytes, n->pending_free_bytes);
    print_peak_rows(r);
    fprintf(r->out, "  live blocks: %s kept, %s new, %s freed\n", sdp_fmt_count(t->blocks.kept).s,
            sdp_fmt_count(t->blocks.added).s, sdp_fmt_count(t->blocks.freed).s);
    if (t->live_identical)
        fprintf(r->out, "  %slive memory identical%s: every site holds the same bytes and "
                "blocks in both files%s\n", clr_bold(r), clr_reset(r),
                t->moved_groups ? " (some at other lines: moved code)" : "");
    print_host(r);
    print_devices(r);
    print_frag_line(r);
    print_steps(r);
    print_compared_as(r);
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

/* A moved group's label ends with "(moved 51 -> 52)": OLD's line of its site, then NEW's. */
static void append_moved(const sd_diff_group *g, char *label, size_t size)
{
    if (!g->moved) return;
    const sd_frame *f = g->rep_snapshot ? sd_site_frame(g->rep_snapshot, g->rep_stack,
                                                        &g->rep_site, g->rep_site.site)
                                        : NULL;
    size_t len = strlen(label);
    if (len + 1 >= size) return;
    if (f && f->line != g->moved_line)
        snprintf(label + len, size - len, " (moved %" PRId64 " -> %" PRId64 ")", g->moved_line,
                 f->line);
    else
        snprintf(label + len, size - len, " (moved: its callers' lines)");
}

/* Groups paired as moved code whose figures did not change: one line, a few named. */
static void print_moved_unchanged(const text_ctx *r, size_t from)
{
    size_t n = 0;
    for (size_t i = from; i < sd_diff_group_count(r->diff); i++)
        n += sd_diff_group_at(r->diff, i)->moved;
    if (!n) return;
    fprintf(r->out, "%s(%s site%s moved to other lines with the same function and stack, "
            "the same bytes: not growth", clr_dim(r), sdp_fmt_count(n).s, n == 1 ? "" : "s");
    size_t shown = 0;
    for (size_t i = from; i < sd_diff_group_count(r->diff) && shown < 3; i++) {
        const sd_diff_group *g = sd_diff_group_at(r->diff, i);
        if (!g->moved) continue;
        char label[LABEL_MAX];
        row_label(r, i, label, sizeof label);
        append_moved(g, label, sizeof label);
        fprintf(r->out, "%s %s", shown ? ";" : ":", label);
        shown++;
    }
    fprintf(r->out, "%s)%s\n", shown < n ? "; ..." : "", clr_reset(r));
}

static void print_rows(const text_ctx *r, size_t from, size_t to, const table_widths *w)
{
    for (size_t i = from; i < to; i++) {
        const sd_diff_group *g = sd_diff_group_at(r->diff, i);
        row_cells c;
        char label[LABEL_MAX];
        cells_of(g, &c);
        row_label(r, i, label, sizeof label);
        append_moved(g, label, sizeof label);
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

/* Groups whose block bytes moved while their requested bytes did not: the same tensors in
 * blocks of other sizes (allocator rounding), reported as neither growth nor shrinkage. */
static void print_rounding(const text_ctx *r, size_t from)
{
    size_t n = 0;
    int64_t sum = 0;
    for (size_t i = from; i < sd_diff_group_count(r->diff); i++) {
        const sd_diff_group *g = sd_diff_group_at(r->diff, i);
        if (g->delta_bytes == 0) continue;
        n++;
        sum += g->delta_bytes;
    }
    if (n)
        fprintf(r->out, "%s(%s group%s moved by %s of allocator rounding only: the requested "
                "bytes did not change)%s\n", clr_dim(r), sdp_fmt_count(n).s, n == 1 ? "" : "s",
                sdp_fmt_delta(sum).s, clr_reset(r));
}

static bool is_no_stack(const sd_diff_group *g)
{
    return g->rep_site.site < 0 || !g->rep_snapshot;
}

/* `<no stack>` among the rows shown: say why and what to do. */
static void print_no_stack_note(const text_ctx *r, size_t shown, size_t growth, size_t shrink)
{
    bool any = false;
    for (size_t i = 0; i < growth + shrink && !any; i++)
        if (i < shown || i >= growth) any = is_no_stack(sd_diff_group_at(r->diff, i));
    if (any)
        fprintf(r->out, "%s: %s\n", SD_NO_STACK, NO_STACK_WHY);
}

static void print_table_head(const text_ctx *r, const table_widths *w, const char *by)
{
    fprintf(r->out, "  %*s  %*s  %*s  %s\n", w->delta, "delta", w->now, "new", w->blocks,
            "blocks", by);
}

/* Rows from..to of one device (or all when !split), at most `max`. @return how many. */
static size_t print_device_rows(const text_ctx *r, size_t from, size_t to, size_t max,
                                bool split, int64_t dev, const table_widths *w)
{
    size_t n = 0;
    for (size_t i = from; i < to && n < max; i++) {
        if (split && sd_diff_group_at(r->diff, i)->device != dev) continue;
        print_rows(r, i, i + 1, w);
        n++;
    }
    return n;
}

static size_t count_device(const text_ctx *r, size_t from, size_t to, bool split, int64_t dev)
{
    size_t n = 0;
    for (size_t i = from; i < to; i++)
        n += !split || sd_diff_group_at(r->diff, i)->device == dev;
    return n;
}

/* The growth and shrinking tables of one device, or of all when !split. @return the
 * number of growth rows shown. */
static size_t print_tables_of(const text_ctx *r, const table_widths *w, bool split,
                              int64_t dev)
{
    size_t growth = sd_diff_growth_count(r->diff), shrink = sd_diff_shrink_count(r->diff);
    size_t n_grow = count_device(r, 0, growth, split, dev);
    size_t n_shrink = count_device(r, growth, growth + shrink, split, dev);
    size_t n_all = count_device(r, 0, sd_diff_group_count(r->diff), split, dev);
    size_t shown = n_grow < r->top ? n_grow : r->top;
    const char *by = sd_group_by_name(r->group_by);
    char on[48] = "";
    if (split) snprintf(on, sizeof on, " on device %" PRId64, dev);
    fprintf(r->out, "\n");
    if (n_grow == 0) {
        fprintf(r->out, "%sNo growth%s%s: no %s holds more live memory in NEW than in OLD.\n",
                clr_bold(r), on, clr_reset(r), by);
    } else {
        fprintf(r->out, "%sGrowth by %s%s%s: %s of %s groups grew", clr_bold(r), by, on,
                clr_reset(r), sdp_fmt_count(n_grow).s, sdp_fmt_count(n_all).s);
        if (shown < n_grow) fprintf(r->out, ", the top %s shown", sdp_fmt_count(shown).s);
        fprintf(r->out, "\n");
        print_table_head(r, w, by);
        print_device_rows(r, 0, growth, shown, split, dev, w);
    }
    if (n_shrink) {
        fprintf(r->out, "\n%sShrinking%s%s: %s group%s\n", clr_bold(r), on, clr_reset(r),
                sdp_fmt_count(n_shrink).s, n_shrink == 1 ? "" : "s");
        print_table_head(r, w, by);   /* every table has its header */
        print_device_rows(r, growth, growth + shrink, SIZE_MAX, split, dev, w);
    }
    return shown;
}

static void print_table(const text_ctx *r)
{
    size_t growth = sd_diff_growth_count(r->diff), shrink = sd_diff_shrink_count(r->diff);
    size_t shown = growth < r->top ? growth : r->top;
    table_widths w;
    widths_of(r, growth + shrink, &w);
    /* more than one device with memory: one set of tables per device, never summed */
    if (sd_diff_memory_device_count(r->diff) > 1) {
        for (size_t i = 0; i < sd_diff_device_count(r->diff); i++) {
            const sd_diff_device *dd = sd_diff_device_at(r->diff, i);
            if (dd->old_stats.allocated_bytes || dd->new_stats.allocated_bytes)
                print_tables_of(r, &w, true, dd->device);
        }
    } else {
        print_tables_of(r, &w, false, -1);
    }
    print_rounding(r, growth + shrink);
    print_moved_unchanged(r, growth + shrink);
    print_no_stack_note(r, shown, growth, shrink);
    print_sum_check(r);
}

static void print_folded_count(const text_ctx *r, size_t n, const char *what)
{
    if (n) fprintf(r->out, "        %s(%zu %s frame%s)%s\n", clr_dim(r), n, what, n == 1 ? "" : "s",
                   clr_reset(r));
}

/* A few frames of a stack, innermost first: the user's frames, the site and `via`. Other
 * frames fold into a count; native noise (allocator, unwinder, dispatcher, interpreter)
 * is dropped. */
static void print_frames(const text_ctx *r, const sd_snapshot *snap, uint32_t stack,
                         int32_t site, int32_t via)
{
    size_t n;
    const uint32_t *ids = sd_snapshot_stack(snap, stack, &n);
    const sd_attrib *a = sd_diff_attrib(r->diff);
    size_t folded = 0, shown = 0, rest = 0;
    for (size_t i = 0; i < n; i++) {
        const sd_frame *f = sd_snapshot_frame(snap, ids[i]);
        bool keep = (int32_t)i == site || (int32_t)i == via ||
                    sd_attrib_classify(a, f) == SD_FRAME_USER;
        if (shown == STACK_FRAMES_SHOWN) {
            rest++;
        } else if (!keep) {
            folded += !sd_frame_is_native_noise(f);
        } else {
            print_folded_count(r, folded, "internal");
            folded = 0;
            char t[512];
            sd_frame_label(snap, f, t, sizeof t);
            fprintf(r->out, "        %s\n", t);
            shown++;
        }
    }
    print_folded_count(r, folded, "internal");
    print_folded_count(r, rest, "more");
}

/* The group's stack; for a backward site, then the forward stack that made the node. */
static void print_stack(const text_ctx *r, const sd_diff_group *g)
{
    const sd_site *st = &g->rep_site;
    if (!st->backward) {
        print_frames(r, g->rep_snapshot, g->rep_stack, st->site, st->via);
        return;
    }
    print_frames(r, g->rep_snapshot, g->rep_stack, -1, -1);
    fprintf(r->out, "        %sallocated in the backward of:%s\n", clr_dim(r), clr_reset(r));
    print_frames(r, g->rep_snapshot,
                 sd_snapshot_stack_context(g->rep_snapshot, g->rep_stack)->forward_stack,
                 st->site, st->via);
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
        if (!any) fprintf(r->out, "\n%sStacks of the top groups%s (innermost frame first)\n",
                          clr_bold(r), clr_reset(r));
        any = true;
        if (is_no_stack(g)) {       /* keep the numbering of the table: #1 stays #1 */
            fprintf(r->out, "  #%zu %s%s%s  %s\n        %s(no frames: %s)%s\n", i + 1,
                    clr_red(r), sdp_fmt_delta(g->delta_bytes).s, clr_reset(r), SD_NO_STACK,
                    clr_dim(r), NO_STACK_WHY, clr_reset(r));
            continue;
        }
        char label[LABEL_MAX];
        row_label(r, i, label, sizeof label);
        fprintf(r->out, "  #%zu %s%s%s  %s", i + 1, clr_red(r),
                sdp_fmt_delta(g->delta_bytes).s, clr_reset(r), label);
        if (sd_diff_memory_device_count(r->diff) > 1)
            fprintf(r->out, " (device %" PRId64 ")", g->device);
        fprintf(r->out, "\n");
        print_stack(r, g);
    }
}

sd_status sd_render_diff_text(FILE *out, const sd_diff *d, const sd_diff_text_options *o)
{
    if (sdp_options_check(o, SD_DIFF_TEXT_OPTIONS_VERSION, "sd_diff_text_options", NULL))
        return SD_EUSAGE;
    if (sdp_options_check(o ? &o->render : NULL, SD_RENDER_OPTIONS_VERSION, "sd_render_options", NULL))
        return SD_EUSAGE;
    const sd_profile *p = sd_diff_profile(d);
    const sd_attrib *a = sd_diff_attrib(d);
    text_ctx r = {.out = out, .color = o->render.color,
                  .top = o->top ? o->top : TOP_DEFAULT, .diff = d,
                  .old_snap = sd_profile_snapshot(p, 0), .new_snap = sd_profile_snapshot(p, 1),
                  .group_by = sd_attrib_group_by(a)};
    if (!r.old_snap) return SD_EUSAGE;   /* a one-sided diff has folded stacks only */
    if (r.group_by == SD_GROUP_STACK) {
        /* Without the cache rows are still told apart, only more slowly. */
        r.n_label_hash = sd_diff_group_count(d);
        r.label_hash = calloc(r.n_label_hash ? r.n_label_hash : 1, sizeof *r.label_hash);
        if (!r.label_hash) r.n_label_hash = 0;
    }
    print_header(&r);
    if (sd_diff_comparison_of(d)->two_runs) {   /* two runs: the peaks lead */
        print_peak_table(&r);
        print_table(&r);
    } else {
        print_table(&r);
        print_peak_table(&r);
    }
    print_stacks(&r);
    free(r.label_hash);
    return ferror(out) ? SD_EIO : SD_OK;
}

