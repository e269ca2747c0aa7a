/* stack_merge.c - the stack-merge table of the folded stacks and the pprof output. */
#include <stdlib.h>
#include <string.h>

#include "analysis/stack_merge.h"

static uint64_t key_hash(const char *s, size_t n)
{
    uint64_t h = sdp_hash_bytes(SDP_HASH_SEED, s, n);
    return h ^ (h >> 31);   /* FNV's low bits are weak; the table indexes by them */
}

static uint64_t entry_hash(const void *ctx, uint32_t id)
{
    return ((const sdp_stack_merge *)ctx)->e[id].hash;
}

static bool merge_add(sdp_stack_merge *m, const char *key, size_t len, int64_t bytes,
                      int64_t blocks, int64_t requested)
{
    uint64_t h = key_hash(key, len);
    for (size_t j = sdp_htab_first(&m->index, h); m->index.slots[j];
         j = sdp_htab_next(&m->index, j)) {
        sdp_merged_stack *e = &m->e[m->index.slots[j] - 1];
        if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0) {
            e->bytes += bytes;
            e->blocks += blocks;
            e->requested += requested;
            return true;
        }
    }
    if (sdp_htab_reserve_one(&m->index, entry_hash, m) ||
        sdp_grow((void **)&m->e, &m->cap, m->n + 1, sizeof *m->e, m->arena))
        return false;
    const char *copy = sdp_arena_strndup(m->arena, key, len);
    if (!copy) return false;
    m->e[m->n] = (sdp_merged_stack){copy, len, h, bytes, blocks, requested};
    size_t j = sdp_htab_first(&m->index, h);   /* the table may have grown */
    while (m->index.slots[j]) j = sdp_htab_next(&m->index, j);
    sdp_htab_put(&m->index, j, (uint32_t)m->n++);
    return true;
}

static bool add_side(sdp_stack_merge *m, const sd_profile *p, size_t side, int64_t sign,
                     sdp_stack_key_fn key, void *ctx, sdp_sbuf *b)
{
    const sd_snapshot *snap = sd_profile_snapshot(p, side);
    size_t n = snap ? sd_profile_stack_count(p, side) : 0;
    for (uint32_t s = 0; s < n; s++) {
        const sd_profile_figures *f = sd_profile_stack(p, side, s);
        if (f->bytes == 0 || sd_profile_stack_key(p, side, s) == SD_PROFILE_NO_KEY) continue;
        key(ctx, snap, s, b);
        if (b->failed ||
            !merge_add(m, sdp_sbuf_str(b), b->len, sign * (int64_t)f->bytes,
                       sign * (int64_t)f->blocks, sign * (int64_t)f->requested))
            return false;
    }
    return true;
}

static int key_cmp(const void *pa, const void *pb)
{
    const sdp_merged_stack *a = *(const sdp_merged_stack *const *)pa;
    const sdp_merged_stack *b = *(const sdp_merged_stack *const *)pb;
    return strcmp(a->key, b->key);
}

/* The stacks that grew, sorted by key. */
static sdp_merged_stack **growing(sdp_stack_merge *m, size_t *n_out)
{
    if (!sdp_arena_charge(m->arena, (m->n + 1) * sizeof(sdp_merged_stack *))) return NULL;
    sdp_merged_stack **out = malloc((m->n + 1) * sizeof *out);
    if (!out) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->e[i].bytes > 0) out[n++] = &m->e[i];
    qsort(out, n, sizeof *out, key_cmp);
    *n_out = n;
    return out;
}

bool sdp_stack_merge_growth(sdp_stack_merge *m, sdp_arena *arena, const sd_profile *p,
                            size_t from, size_t to, sdp_stack_key_fn key, void *ctx,
                            sdp_merged_stack ***out, size_t *n_out)
{
    memset(m, 0, sizeof *m);
    m->arena = arena;
    *out = NULL;
    *n_out = 0;
    sdp_sbuf b = {0};
    bool ok = sdp_htab_init(&m->index, 1024, arena) == SD_OK &&
              add_side(m, p, from, -1, key, ctx, &b) && add_side(m, p, to, 1, key, ctx, &b) &&
              (*out = growing(m, n_out)) != NULL;
    sdp_sbuf_free(&b);
    return ok;
}

void sdp_stack_merge_free(sdp_stack_merge *m)
{
    free(m->e);
    sdp_htab_free(&m->index);
    memset(m, 0, sizeof *m);
}
