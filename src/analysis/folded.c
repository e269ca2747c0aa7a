/* folded.c - a profile's stacks as folded stacks (analysis/folded.h).
 *
 * A frame is written "NAME (PATH:LINE)", PATH as every view labels it (attrib.h,
 * sd_frame_label_path: library files from their package on, user files without the
 * directory they share); the JSON views keep the full paths.
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

sd_status sdp_folded_create(sdp_folded *f, const sd_profile *p, size_t from, size_t to,
                            uint64_t max_memory, sd_error *err)
{
    memset(f, 0, sizeof *f);
    sdp_arena_init(&f->arena, max_memory);
    if (sdp_stack_merge_growth(&f->merge, &f->arena, p, from, to, folded_key, NULL, &f->lines,
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
