/* diff_folded.c - collapsed stacks ("outer;...;inner BYTES") for flame graph tools.
 *
 * flamegraph.pl, inferno and speedscope read one line per stack, outermost frame first.
 * PyTorch's noise frames are left out (as its own _memory_viz does), so different
 * interned stacks can collapse to one line: lines are merged by text. With two sides the
 * value is `to` minus `from` per line, and only growth (> 0) is written. The bytes per
 * stack come from the profile; this file only writes stacks as text and merges them.
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

typedef struct line_entry {
    const char *text;
    uint64_t hash;
    int64_t bytes;
} line_entry;

typedef struct line_table {
    line_entry *entries;
    size_t n, cap;
    sdp_htab index;        /* text -> entry */
    sdp_arena *arena;      /* the texts; charged for the tables */
} line_table;

static uint64_t text_hash(const char *s, size_t n)
{
    uint64_t h = sdp_hash_bytes(SDP_HASH_SEED, s, n);
    return h ^ (h >> 31);   /* FNV's low bits are weak; the table indexes by them */
}

static uint64_t entry_hash(const void *ctx, uint32_t id)
{
    return ((const line_table *)ctx)->entries[id].hash;
}

static bool table_add(line_table *t, const char *text, size_t len, int64_t bytes)
{
    uint64_t h = text_hash(text, len);
    size_t j = sdp_htab_first(&t->index, h);
    for (; t->index.slots[j]; j = sdp_htab_next(&t->index, j)) {
        line_entry *e = &t->entries[t->index.slots[j] - 1];
        if (e->hash == h && strcmp(e->text, text) == 0) {
            e->bytes += bytes;
            return true;
        }
    }
    if (sdp_htab_reserve_one(&t->index, entry_hash, t) ||
        sdp_grow((void **)&t->entries, &t->cap, t->n + 1, sizeof *t->entries, t->arena))
        return false;
    const char *copy = sdp_arena_strndup(t->arena, text, len);
    if (!copy) return false;
    t->entries[t->n] = (line_entry){copy, h, bytes};
    j = sdp_htab_first(&t->index, h);   /* the table may have grown */
    while (t->index.slots[j]) j = sdp_htab_next(&t->index, j);
    sdp_htab_put(&t->index, j, (uint32_t)t->n++);
    return true;
}

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

static bool add_side(line_table *t, const sd_profile *p, size_t side, int64_t sign,
                     const user_root *u, sdp_sbuf *b)
{
    const sd_snapshot *snap = sd_profile_snapshot(p, side);
    size_t n = snap ? sd_profile_stack_count(p, side) : 0;
    for (uint32_t s = 0; s < n; s++) {
        uint64_t bytes = sd_profile_stack(p, side, s)->bytes;
        if (bytes == 0 || sd_profile_stack_key(p, side, s) == SD_PROFILE_NO_KEY) continue;
        stack_text(snap, sd_profile_attrib(p), u, s, b);
        if (b->failed) return false;
        if (!table_add(t, sdp_sbuf_str(b), b->len, sign * (int64_t)bytes)) return false;
    }
    return true;
}

static int line_cmp(const void *pa, const void *pb)
{
    const line_entry *a = *(const line_entry *const *)pa, *b = *(const line_entry *const *)pb;
    return strcmp(a->text, b->text);
}

/* The lines that grew, sorted by text. */
static line_entry **growing_lines(line_table *t, size_t *n_out)
{
    if (!sdp_arena_charge(t->arena, (t->n + 1) * sizeof(line_entry *))) return NULL;
    line_entry **out = malloc((t->n + 1) * sizeof *out);
    if (!out) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->entries[i].bytes > 0) out[n++] = &t->entries[i];
    qsort(out, n, sizeof *out, line_cmp);
    *n_out = n;
    return out;
}

sd_status sd_render_diff_folded(FILE *out, const sd_profile *p, size_t from, size_t to,
                            uint64_t max_memory, sd_error *err)
{
    sdp_arena arena;
    sdp_arena_init(&arena, max_memory);
    line_table t = {.arena = &arena};
    sdp_sbuf b = {0};
    line_entry **lines = NULL;
    size_t n = 0;
    user_root u = {0};
    find_user_root(p, from, &u);
    find_user_root(p, to, &u);
    root_finish(&u);
    bool ok = sdp_htab_init(&t.index, 1024, &arena) == SD_OK &&
              add_side(&t, p, from, -1, &u, &b) && add_side(&t, p, to, 1, &u, &b) &&
              (lines = growing_lines(&t, &n)) != NULL;
    sd_status st = SD_OK;
    if (!ok) st = sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory for folded stacks");
    for (size_t i = 0; ok && i < n; i++)
        fprintf(out, "%s %" PRIu64 "\n", lines[i]->text, (uint64_t)lines[i]->bytes);
    if (ok && ferror(out)) st = sdp_fail(err, SD_EIO, SD_NO_OFFSET, "error writing output");
    free(lines);
    free(t.entries);
    sdp_htab_free(&t.index);
    sdp_sbuf_free(&b);
    sdp_arena_free(&arena);
    return st;
}
