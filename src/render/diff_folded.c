/* diff_folded.c - collapsed stacks ("outer;...;inner BYTES") for flame graph tools.
 *
 * flamegraph.pl, inferno and speedscope read one line per stack, outermost frame first.
 * PyTorch's noise frames are left out (as its own _memory_viz does), so different
 * interned stacks can collapse to one line: lines are merged by text. With two snapshots
 * the value is new minus old per line, and only growth (> 0) is written.
 */
#include <stdlib.h>

#include "analysis/diff_internal.h"

typedef struct line_entry {
    const char *text;
    uint64_t hash;
    int64_t bytes;
} line_entry;

typedef struct line_table {
    line_entry *entries;
    size_t n, cap;
    uint32_t *slots;       /* entry index + 1 */
    size_t slots_cap;
    sdp_arena *arena;
} line_table;

static uint64_t text_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h ^ (h >> 31);
}

static bool table_grow(line_table *t)
{
    size_t ncap = t->slots_cap ? t->slots_cap * 2 : 1024;
    if (!sdp_arena_charge(t->arena, ncap * sizeof(uint32_t))) return false;
    uint32_t *slots = calloc(ncap, sizeof *slots);
    if (!slots) return false;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = t->entries[i].hash & (ncap - 1);
        while (slots[j]) j = (j + 1) & (ncap - 1);
        slots[j] = (uint32_t)i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->slots_cap = ncap;
    return true;
}

static bool table_add(line_table *t, const char *text, size_t len, int64_t bytes)
{
    if ((t->n + 1) * 2 > t->slots_cap && !table_grow(t)) return false;
    uint64_t h = text_hash(text, len);
    size_t j = h & (t->slots_cap - 1);
    for (; t->slots[j]; j = (j + 1) & (t->slots_cap - 1)) {
        line_entry *e = &t->entries[t->slots[j] - 1];
        if (e->hash == h && strcmp(e->text, text) == 0) {
            e->bytes += bytes;
            return true;
        }
    }
    if (t->n == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 256;
        if (!sdp_arena_charge(t->arena, (ncap - t->cap) * sizeof(line_entry))) return false;
        line_entry *ne = realloc(t->entries, ncap * sizeof *ne);
        if (!ne) return false;
        t->entries = ne;
        t->cap = ncap;
    }
    const char *copy = sdp_arena_strndup(t->arena, text, len);
    if (!copy) return false;
    t->entries[t->n] = (line_entry){copy, h, bytes};
    t->slots[j] = (uint32_t)++t->n;
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

static void render_stack(const sd_snapshot *s, uint32_t id, sdp_sbuf *b)
{
    size_t n;
    const uint32_t *ids = sd_snapshot_stack(s, id, &n);
    sdp_sbuf_reset(b);
    for (size_t i = n; i-- > 0;) {
        const sd_frame *f = sd_snapshot_frame(s, ids[i]);
        if (sd_frame_is_noise(f)) continue;
        if (b->len) sdp_sbuf_put(b, ";", 1);
        put_clean(b, f->name);
        sdp_sbuf_puts(b, " (");
        put_clean(b, sd_frame_short_path(f->filename));
        sdp_sbuf_put(b, ":", 1);
        sdp_sbuf_put_int(b, f->line);
        sdp_sbuf_put(b, ")", 1);
    }
    if (!b->len) sdp_sbuf_puts(b, SD_NO_STACK);
}

static int line_cmp(const void *pa, const void *pb)
{
    const sd_folded_line *a = pa, *b = pb;
    return strcmp(a->stack, b->stack);
}

static bool add_side(line_table *t, const sdp_side_bytes *side, int64_t sign, sdp_sbuf *b)
{
    for (size_t s = 0; side->snap && s < side->n_stacks; s++) {
        if (side->stack_bytes[s] == 0) continue;
        render_stack(side->snap, (uint32_t)s, b);
        if (b->failed) return false;
        if (!table_add(t, sdp_sbuf_str(b), b->len, sign * (int64_t)side->stack_bytes[s]))
            return false;
    }
    return true;
}

sd_status sdp_folded_build(const sdp_side_bytes *old_side, const sdp_side_bytes *new_side,
                           sdp_arena *arena, sd_folded_line **lines, size_t *n,
                           sd_error *err)
{
    line_table t = {.arena = arena};
    sdp_sbuf b = {0};
    sd_folded_line *out = NULL;
    size_t n_out = 0;
    bool ok = add_side(&t, old_side, -1, &b) && add_side(&t, new_side, 1, &b);
    if (ok) {
        out = malloc((t.n ? t.n : 1) * sizeof *out);
        ok = out != NULL;
    }
    for (size_t i = 0; ok && i < t.n; i++)
        if (t.entries[i].bytes > 0)
            out[n_out++] = (sd_folded_line){t.entries[i].text, (uint64_t)t.entries[i].bytes};
    free(t.entries);
    free(t.slots);
    sdp_sbuf_free(&b);
    if (!ok) {
        free(out);
        return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory for folded stacks");
    }
    qsort(out, n_out, sizeof *out, line_cmp);
    *lines = out;
    *n = n_out;
    return SD_OK;
}
