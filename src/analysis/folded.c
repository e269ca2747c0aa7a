/* folded.c - a profile's stacks merged for the stack outputs (analysis/folded.h,
 * profile.h's sd_stacks).
 *
 * Folded: a frame is written "NAME (PATH:LINE)", PATH as every view labels it (attrib.h,
 * sd_frame_label_path: library files from their package on, user files without the
 * directory they share); the JSON views keep the full paths. Frames (pprof): the whole
 * path, as pprof's source view wants it.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/folded.h"

/* Frame names may hold the separators of the format; flame graph tools would split them. */
static void put_clean(sdp_sbuf *b, const char *s)
{
    for (; *s; s++) {
        char c = *s == ';' ? ',' : (*s == '\n' || *s == '\r') ? ' ' : *s;
        sdp_sbuf_put(b, &c, 1);
    }
}

/* Frames outermost first, native noise dropped; an autograd node or ATen op frame is
 * written by its readable name ("autograd IndexBackward0", "aten::bmm"). */
static void put_frames(const sd_snapshot *s, uint32_t id, sdp_sbuf *b)
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
        put_clean(b, sd_frame_label_path(s, f->filename));
        sdp_sbuf_put(b, ":", 1);
        sdp_sbuf_put_int(b, f->line);
        sdp_sbuf_put(b, ")", 1);
    }
}

/* One folded line: with forward_frames, the forward stack that made the autograd node
 * comes first, then "[backward]", then the backward stack. */
static void stack_text(const sd_snapshot *s, uint32_t id, sdp_sbuf *b)
{
    sdp_sbuf_reset(b);
    uint32_t fwd = sd_snapshot_stack_context(s, id)->forward_stack;
    if (fwd) {
        put_frames(s, fwd, b);
        if (b->len) sdp_sbuf_puts(b, ";[backward]");
    }
    put_frames(s, id, b);
    if (!b->len) sdp_sbuf_puts(b, SD_NO_STACK);
}

static void folded_key(void *ctx, const sd_snapshot *snap, uint32_t id, sdp_sbuf *b)
{
    (void)ctx;
    stack_text(snap, id, b);
}

/* ---- frames: pprof's key ----
 * A stack's key is its frames, innermost first, each "FILE\x1fLINE\x1fNAME\x1e": the key
 * is both what merges stacks and, parsed back, the frames the sample points at. */

/* The separators may not appear inside a field; a hostile name gets '?' instead. */
static void put_field(sdp_sbuf *b, const char *s)
{
    for (; *s; s++) {
        char c = (*s == '\x1e' || *s == '\x1f') ? '?' : *s;
        sdp_sbuf_put(b, &c, 1);
    }
}

static void frames_key(void *ctx, const sd_snapshot *s, uint32_t id, sdp_sbuf *b)
{
    (void)ctx;
    size_t n;
    const uint32_t *ids = sd_snapshot_stack(s, id, &n);
    sdp_sbuf_reset(b);
    for (size_t i = 0; i < n; i++) {
        const sd_frame *f = sd_snapshot_frame(s, ids[i]);
        if (sd_frame_is_native_noise(f)) continue;
        /* An autograd node or ATen op by its label, as every view names it (attrib.h). */
        char label[SD_SITE_LABEL_MAX];
        sd_site_how how = sd_frame_native_how(f);
        if (how != SD_SITE_FRAME) sd_site_native_name(f, how, label, sizeof label);
        put_field(b, f->filename);
        sdp_sbuf_put(b, "\x1f", 1);
        sdp_sbuf_put_int(b, f->line);
        sdp_sbuf_put(b, "\x1f", 1);
        put_field(b, how != SD_SITE_FRAME ? label : f->name);
        sdp_sbuf_put(b, "\x1e", 1);
    }
    if (!b->len) sdp_sbuf_puts(b, "\x1f" "0\x1f" SD_NO_STACK "\x1e");
}

static sd_status merge(sdp_folded *f, const sd_profile *p, size_t from, size_t to,
                       sdp_stack_key_fn key, uint64_t max_memory, sd_error *err)
{
    memset(f, 0, sizeof *f);
    sdp_arena_init(&f->arena, max_memory);
    if (sdp_stack_merge_growth(&f->merge, &f->arena, p, from, to, key, NULL, &f->lines, &f->n))
        return SD_OK;
    sdp_folded_free(f);
    return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory for the merged stacks");
}

sd_status sdp_folded_create(sdp_folded *f, const sd_profile *p, size_t from, size_t to,
                            uint64_t max_memory, sd_error *err)
{
    return merge(f, p, from, to, folded_key, max_memory, err);
}

void sdp_folded_free(sdp_folded *f)
{
    free(f->lines);
    sdp_stack_merge_free(&f->merge);
    sdp_arena_free(&f->arena);
    memset(f, 0, sizeof *f);
}

/* ---- the public handle (profile.h) ---- */

struct sd_stacks {
    sdp_folded f;
    sd_stacks_form form;
    bool growth;
};

sd_stacks *sd_stacks_create(const sd_profile *p, size_t from, size_t to, sd_stacks_form form,
                            uint64_t max_memory, sd_error *err)
{
    sd_error_clear(err);
    size_t sides = p ? sd_profile_side_count(p) : 0;
    if (!p || from >= sides || to >= sides || (form != SD_STACKS_FOLDED && form != SD_STACKS_FRAMES)) {
        sdp_fail(err, SD_EUSAGE, SD_NO_OFFSET, "merged stacks: bad arguments");
        return NULL;
    }
    sd_stacks *s = calloc(1, sizeof *s);
    if (!s) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory for the merged stacks");
        return NULL;
    }
    s->form = form;
    s->growth = sd_profile_snapshot(p, from) != NULL;
    if (merge(&s->f, p, from, to, form == SD_STACKS_FOLDED ? folded_key : frames_key,
              max_memory, err) != SD_OK) {
        free(s);
        return NULL;
    }
    return s;
}

void sd_stacks_free(sd_stacks *s)
{
    if (!s) return;
    sdp_folded_free(&s->f);
    free(s);
}

sd_stacks_form sd_stacks_form_of(const sd_stacks *s) { return s->form; }
bool sd_stacks_growth(const sd_stacks *s) { return s->growth; }
size_t sd_stacks_count(const sd_stacks *s) { return s ? s->f.n : 0; }

const char *sd_stacks_key(const sd_stacks *s, size_t i, size_t *len)
{
    if (!s || i >= s->f.n) return NULL;
    if (len) *len = s->f.lines[i]->len;
    return s->f.lines[i]->key;
}

int64_t sd_stacks_bytes(const sd_stacks *s, size_t i)
{
    return s && i < s->f.n ? s->f.lines[i]->bytes : 0;
}

int64_t sd_stacks_blocks(const sd_stacks *s, size_t i)
{
    return s && i < s->f.n ? s->f.lines[i]->blocks : 0;
}
