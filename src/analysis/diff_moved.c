/* diff_moved.c - code that moved is not growth (issue 36).
 *
 * An edit above an allocation moves its frames' lines: OLD's group "model.py:51 forward"
 * and NEW's "model.py:52 forward" are one allocation site, and diffing them as two would
 * print its bytes once as growth and once as shrinkage. A group that only OLD has and one
 * that only NEW has are paired when their keys are the same but for the line numbers and
 * their representative stacks have the same shape (the same files and functions, frame for
 * frame, native noise aside). Several groups of one function and shape are paired in line
 * order (an edit above moves them alike), and only when OLD and NEW have as many of them;
 * otherwise none of them is. docs/json-diff.md ("moved_from"); tests/truth/truth_moved.py.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/diff_internal.h"

typedef struct candidate {
    size_t group;      /* index into groups */
    int side;          /* 0: OLD only, 1: NEW only */
    int64_t device;
    size_t sig;        /* offset of its signature in the signature buffer */
    const char *sp;    /* the signature, once the buffer is complete */
    int64_t line;      /* its site frame's line */
    const char *key;
} candidate;

static int candidate_cmp(const void *pa, const void *pb)
{
    const candidate *a = pa, *b = pb;
    if (a->device != b->device) return a->device < b->device ? -1 : 1;
    int c = strcmp(a->sp, b->sp);
    if (c) return c;
    if (a->side != b->side) return a->side < b->side ? -1 : 1;
    if (a->line != b->line) return a->line < b->line ? -1 : 1;
    c = strcmp(a->key, b->key);
    if (c) return c;
    return a->group < b->group ? -1 : a->group > b->group;
}

/* The key without its line numbers: ":" and digits before a space, ';' or the end. */
static void put_key_without_lines(sdp_sbuf *b, const char *key)
{
    for (const char *p = key; *p;) {
        if (*p == ':' && p[1] >= '0' && p[1] <= '9') {
            const char *q = p + 1;
            while (*q >= '0' && *q <= '9') q++;
            if (*q == ' ' || *q == ';' || *q == '\0') {
                sdp_sbuf_put(b, ":#", 2);
                p = q;
                continue;
            }
        }
        sdp_sbuf_put(b, p, 1);
        p++;
    }
}

/* The group's signature: its key without lines, then its stack's files and functions. */
static void put_signature(sdp_sbuf *b, const sd_diff_group *g)
{
    put_key_without_lines(b, g->key);
    sdp_sbuf_put(b, "\x1f", 1);
    size_t n = 0;
    const uint32_t *ids = sd_snapshot_stack(g->rep_snapshot, g->rep_stack, &n);
    for (size_t i = 0; i < n; i++) {
        const sd_frame *f = sd_snapshot_frame(g->rep_snapshot, ids[i]);
        if (!f || sd_frame_is_native_noise(f)) continue;
        sdp_sbuf_puts(b, f->filename);
        sdp_sbuf_put(b, "\x1e", 1);
        sdp_sbuf_puts(b, f->name);
        sdp_sbuf_put(b, "\x1d", 1);
    }
    sdp_sbuf_put(b, "", 1);   /* the NUL that ends it inside the buffer */
}

static const sd_frame *site_frame(const sd_diff_group *g)
{
    if (!g->rep_snapshot || g->rep_site.site < 0) return NULL;
    return sd_site_frame(g->rep_snapshot, g->rep_stack, &g->rep_site, g->rep_site.site);
}

static bool keys_have_lines(const sd_attrib *a)
{
    sd_group_by by = sd_attrib_group_by(a);
    return by == SD_GROUP_SITE || by == SD_GROUP_LEAF || by == SD_GROUP_STACK;
}

/* Merge OLD's group o into NEW's group n (n keeps its key and stack). */
static void merge(sd_diff_group *n, const sd_diff_group *o)
{
    const sd_frame *f = site_frame(o);
    n->old_bytes = o->old_bytes;
    n->old_blocks = o->old_blocks;
    n->old_requested_bytes = o->old_requested_bytes;
    n->delta_bytes = (int64_t)(n->new_bytes - n->old_bytes);
    n->delta_blocks = (int64_t)(n->new_blocks - n->old_blocks);
    n->delta_requested_bytes = (int64_t)(n->new_requested_bytes - n->old_requested_bytes);
    n->moved = true;
    n->moved_file = f ? f->filename : "";
    n->moved_line = f ? f->line : 0;
}

sd_status sdp_diff_pair_moved(sd_diff_group *groups, size_t *n_groups, size_t *group_cell,
                              size_t n_devices, uint32_t *partner, size_t n_keys,
                              const sd_attrib *a, size_t *n_moved, sdp_arena *arena,
                              sd_error *err)
{
    *n_moved = 0;
    for (size_t k = 0; k < n_keys; k++) partner[k] = SD_PROFILE_NO_KEY;
    if (!keys_have_lines(a) || *n_groups < 2) return SD_OK;
    size_t n = 0;
    for (size_t i = 0; i < *n_groups; i++)
        n += (!groups[i].old_blocks || !groups[i].new_blocks) && site_frame(&groups[i]);
    if (n < 2) return SD_OK;
    candidate *c = NULL;
    size_t cap = 0;
    bool *gone = NULL;
    size_t gone_cap = 0;
    sdp_sbuf sigs = {0};
    if (sdp_grow((void **)&c, &cap, n, sizeof *c, arena) ||
        sdp_grow((void **)&gone, &gone_cap, *n_groups, sizeof *gone, arena)) {
        free(c);
        free(gone);
        return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "memory budget exhausted while diffing");
    }
    memset(gone, 0, *n_groups * sizeof *gone);
    size_t m = 0;
    for (size_t i = 0; i < *n_groups; i++) {
        const sd_diff_group *g = &groups[i];
        const sd_frame *f = site_frame(g);
        if ((g->old_blocks && g->new_blocks) || !f) continue;
        c[m] = (candidate){.group = i, .side = g->new_blocks ? 1 : 0, .device = g->device,
                           .sig = sigs.len, .line = f->line, .key = g->key};
        put_signature(&sigs, g);
        m++;
    }
    if (sigs.failed) {
        free(c);
        free(gone);
        sdp_sbuf_free(&sigs);
        return sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory while diffing");
    }
    for (size_t i = 0; i < m; i++) c[i].sp = sigs.p + c[i].sig;
    qsort(c, m, sizeof *c, candidate_cmp);
    for (size_t i = 0; i < m;) {
        size_t j = i, olds = 0;
        while (j < m && c[j].device == c[i].device &&
               strcmp(c[j].sp, c[i].sp) == 0) {
            olds += c[j].side == 0;
            j++;
        }
        /* [i, i + olds) OLD's, [i + olds, j) NEW's, each in line order. */
        if (olds && olds * 2 == j - i)
            for (size_t k = 0; k < olds; k++) {
                sd_diff_group *o = &groups[c[i + k].group], *nw = &groups[c[i + olds + k].group];
                merge(nw, o);
                gone[c[i + k].group] = true;
                partner[group_cell[c[i + k].group] / n_devices] =
                    (uint32_t)(group_cell[c[i + olds + k].group] / n_devices);
                partner[group_cell[c[i + olds + k].group] / n_devices] =
                    (uint32_t)(group_cell[c[i + k].group] / n_devices);
                (*n_moved)++;
            }
        i = j;
    }
    size_t w = 0;
    for (size_t i = 0; i < *n_groups; i++) {
        if (gone[i]) continue;
        groups[w] = groups[i];
        group_cell[w++] = group_cell[i];
    }
    *n_groups = w;
    free(c);
    free(gone);
    sdp_sbuf_free(&sigs);
    return SD_OK;
}
