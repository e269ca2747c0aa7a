/* diff_folded.c - collapsed stacks ("outer;...;inner BYTES") for flame graph tools.
 *
 * flamegraph.pl, inferno and speedscope read one line per stack, outermost frame first.
 * PyTorch's noise frames are left out (as its own _memory_viz does), so different
 * interned stacks can collapse to one line: lines are merged by text. With two sides the
 * value is `to` minus `from` per line, and only growth (> 0) is written. The bytes per
 * stack come from the profile; this file only writes stacks as text, and the merge is
 * render/stack_merge.c's (the pprof output's too).
 *
 * Paths are written as the text report shows them (display paths): user files without
 * the directory they all share, library files from their package on; the JSON keeps the
 * full paths.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/diff_render.h"
#include "render/format.h"
#include "render/stack_merge.h"

/* Frame names may hold the separators of the format; flame graph tools would split them. */
static void put_clean(sdp_sbuf *b, const char *s)
{
    for (; *s; s++) {
        char c = *s == ';' ? ',' : (*s == '\n' || *s == '\r') ? ' ' : *s;
        sdp_sbuf_put(b, &c, 1);
    }
}

/* The directory all user files share ("/home/alice/proj/"), as the text report strips
 * it: here over every stack that is written. */
typedef struct user_root { const char *prefix; size_t len; } user_root;


static void root_add(user_root *u, const char *fn)
{
    if (!u->prefix) {
        u->prefix = fn;
        u->len = strlen(fn);
    }
    size_t m = 0;
    while (m < u->len && fn[m] == u->prefix[m]) m++;
    u->len = m;
}

static void find_user_root(const sd_profile *p, size_t side, user_root *u)
{
    const sd_snapshot *snap = sd_profile_snapshot(p, side);
    const sd_attrib *a = sd_profile_attrib(p);
    size_t n = snap ? sd_profile_stack_count(p, side) : 0;
    for (uint32_t s = 0; s < n; s++) {
        if (sd_profile_stack(p, side, s)->bytes == 0 ||
            sd_profile_stack_key(p, side, s) == SD_PROFILE_NO_KEY)
            continue;
        size_t nf;
        const uint32_t *ids = sd_snapshot_stack(snap, s, &nf);
        for (size_t i = 0; i < nf; i++) {
            const sd_frame *f = sd_snapshot_frame(snap, ids[i]);
            if (sd_attrib_classify(a, f) == SD_FRAME_USER) root_add(u, f->filename);
        }
        uint32_t fwd = sd_snapshot_stack_context(snap, s)->forward_stack;
        ids = sd_snapshot_stack(snap, fwd, &nf);
        for (size_t i = 0; fwd && i < nf; i++) {
            const sd_frame *f = sd_snapshot_frame(snap, ids[i]);
            if (sd_attrib_classify(a, f) == SD_FRAME_USER) root_add(u, f->filename);
        }
    }
}

static void root_finish(user_root *u)
{
    u->len = sdp_user_prefix_len(u->prefix, u->len);
}

static const char *display_path(const sd_attrib *a, const user_root *u, const sd_frame *f)
{
    if (sd_attrib_classify(a, f) != SD_FRAME_USER) return sd_frame_short_path(f->filename);
    if (u->len && strncmp(f->filename, u->prefix, u->len) == 0) return f->filename + u->len;
    return f->filename;
}

/* Frames outermost first, native noise dropped; an autograd node or ATen op frame is
 * written by its readable name ("autograd IndexBackward0", "aten::bmm"). */
static void put_frames(const sd_snapshot *s, const sd_attrib *a, const user_root *u,
                       uint32_t id, sdp_sbuf *b)
{
    size_t n;
    const uint32_t *ids = sd_snapshot_stack(s, id, &n);
    char last[SD_SITE_LABEL_MAX] = "";
    for (size_t i = n; i-- > 0;) {
        const sd_frame *f = sd_snapshot_frame(s, ids[i]);
        if (sd_frame_is_native_noise(f)) continue;
        sd_site_how how = sd_frame_native_how(f);
        if (how != SD_SITE_FRAME) {
            char label[SD_SITE_LABEL_MAX];
            sd_site_native_name(f, how, label, sizeof label);
            if (strcmp(label, last) == 0) continue;   /* call, then redispatch: one op */
            memcpy(last, label, sizeof last);
            if (b->len) sdp_sbuf_put(b, ";", 1);
            put_clean(b, label);
            continue;
        }
        last[0] = '\0';
        if (b->len) sdp_sbuf_put(b, ";", 1);
        put_clean(b, f->name);
        sdp_sbuf_puts(b, " (");
        put_clean(b, display_path(a, u, f));
        sdp_sbuf_put(b, ":", 1);
        sdp_sbuf_put_int(b, f->line);
        sdp_sbuf_put(b, ")", 1);
    }
}

/* One folded line: with forward_frames, the forward stack that made the autograd node
 * comes first, then "[backward]", then the backward stack. */
static void stack_text(const sd_snapshot *s, const sd_attrib *a, const user_root *u,
                       uint32_t id, sdp_sbuf *b)
{
    sdp_sbuf_reset(b);
    uint32_t fwd = sd_snapshot_stack_context(s, id)->forward_stack;
    if (fwd) {
        put_frames(s, a, u, fwd, b);
        if (b->len) sdp_sbuf_puts(b, ";[backward]");
    }
    put_frames(s, a, u, id, b);
    if (!b->len) sdp_sbuf_puts(b, SD_NO_STACK);
}

typedef struct folded_ctx { const sd_attrib *attrib; const user_root *root; } folded_ctx;

static void folded_key(void *ctx, const sd_snapshot *snap, uint32_t id, sdp_sbuf *b)
{
    const folded_ctx *c = ctx;
    stack_text(snap, c->attrib, c->root, id, b);
}

sd_status sdp_folded_create(sdp_folded *f, const sd_profile *p, size_t from, size_t to,
                            uint64_t max_memory, sd_error *err)
{
    memset(f, 0, sizeof *f);
    sdp_arena_init(&f->arena, max_memory);
    user_root u = {0};
    find_user_root(p, from, &u);
    find_user_root(p, to, &u);
    root_finish(&u);
    folded_ctx ctx = {sd_profile_attrib(p), &u};
    if (sdp_stack_merge_growth(&f->merge, &f->arena, p, from, to, folded_key, &ctx, &f->lines,
                               &f->n))
        return SD_OK;
    sdp_folded_free(f);
    return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory for folded stacks");
}

void sdp_folded_free(sdp_folded *f)
{
    free(f->lines);
    sdp_stack_merge_free(&f->merge);
    sdp_arena_free(&f->arena);
    memset(f, 0, sizeof *f);
}

sd_status sd_render_diff_folded(FILE *out, const sd_profile *p, size_t from, size_t to,
                            uint64_t max_memory, sd_error *err)
{
    sdp_folded f;
    sd_status st = sdp_folded_create(&f, p, from, to, max_memory, err);
    if (st != SD_OK) return st;
    for (size_t i = 0; i < f.n; i++)
        fprintf(out, "%s %" PRIu64 "\n", f.lines[i]->key, (uint64_t)f.lines[i]->bytes);
    if (ferror(out)) st = sdp_fail(err, SD_EIO, SD_NO_OFFSET, "error writing output");
    sdp_folded_free(&f);
    return st;
}
