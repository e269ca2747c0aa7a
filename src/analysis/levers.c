/* levers.c - the levers of one moment, with the bytes each frees then (levers.h,
 * docs/levers.md).
 *
 * The analysis that replays to the moment (peak.c) hands every live block here with its
 * category; sdp_levers_end then reads their frames once per stack: the user `forward`
 * frames (the modules), the loss frames, torch/optim's `_multi_tensor_*`. Nothing here
 * prints; the renderers word the fields.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "diff_internal.h"
#include "levers_internal.h"

typedef struct lblock {
    uint64_t size;
    size_t alloc_entry;
    uint32_t stack;
    uint8_t cat;
    bool frames;              /* its stack is its allocation's */
    bool in_trace;
} lblock;

/* One (module candidate, block) pair: the candidate is the module called at frame
 * `call` of `stack`, keyed by the user forward frames down to that call. */
typedef struct lpair {
    uint64_t key;
    size_t entry;
    uint64_t size;
    uint32_t stack, block_stack;
    int32_t call;
    uint32_t depth;       /* the module's depth among the user forward frames, 1 outermost */
} lpair;

/* Bytes by stack, for the sites. */
typedef struct lstack { uint32_t stack; uint64_t bytes; } lstack;

struct sd_levers {
    sdp_arena arena;
    const sd_snapshot *snap;
    const sd_phases *phases;
    const sd_attrib *attrib;
    size_t dev, entry;
    sd_step_phase phase;          /* of the moment: zero_grad's lever needs a forward */
    lblock *blocks; size_t n_blocks, cap_blocks;
    sd_lever *items; size_t n_items, cap_items;
    bool has_shortfall;
    uint64_t shortfall;
};

static const char *const KIND_NAMES[SD_LEVER_KIND_COUNT] = {
    "activation-checkpointing", "halve-micro-batch", "chunked-loss", "optimizer-foreach-off",
    "zero-grad-set-to-none", "shard-optimizer-state", "shard-gradients", "shard-parameters",
    "allocator-setting"};

const char *sd_lever_kind_name(sd_lever_kind k)
{
    return (unsigned)k < SD_LEVER_KIND_COUNT ? KIND_NAMES[k] : NULL;
}

sd_levers *sdp_levers_begin(const sd_snapshot *s, const sd_phases *ph, const sd_attrib *a,
                            size_t dev, size_t entry, uint64_t max_memory)
{
    sd_levers *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    sdp_arena_init(&l->arena, max_memory);
    l->snap = s;
    l->phases = ph;
    l->attrib = a;
    l->dev = dev;
    l->entry = entry;
    sd_phases_at(ph, dev, entry, &l->phase, NULL);
    return l;
}

void sd_levers_free(sd_levers *l)
{
    if (!l) return;
    free(l->blocks);
    free(l->items);
    sdp_arena_free(&l->arena);
    free(l);
}

sd_status sdp_levers_add(sd_levers *l, const sd_block_life *life, uint64_t size,
                         sd_category c)
{
    if (sdp_grow((void **)&l->blocks, &l->cap_blocks, l->n_blocks + 1, sizeof *l->blocks,
                 &l->arena))
        return SD_ENOMEM;
    l->blocks[l->n_blocks++] = (lblock){.size = size, .alloc_entry = life->alloc_entry,
                                        .stack = life->stack, .cat = (uint8_t)c,
                                        .frames = life->stack_is_alloc && life->stack,
                                        .in_trace = life->in_trace};
    return SD_OK;
}

/* ---------- frames ---------- */

static bool is_user_py(const sd_frame *f)
{
    return sdp_frame_is_python(f) && !sdp_path_is_torch(f->filename);
}

static bool is_user_forward(const sd_frame *f)
{
    return is_user_py(f) && strcmp(f->name, "forward") == 0;
}

static bool is_loss_frame(const sd_frame *f)
{
    return strstr(f->name, "cross_entropy") || strstr(f->name, "log_softmax") ||
           strstr(f->name, "nll_loss");
}

static bool has_ci(const char *s, const char *sub)
{
    size_t n = strlen(sub);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && (s[i] | 0x20) == sub[i]) i++;
        if (i == n) return true;
    }
    return false;
}

static const uint32_t *frames_of(const sd_levers *l, uint32_t stack, size_t *n)
{
    *n = 0;
    const uint32_t *ids = sd_snapshot_stack(l->snap, stack, n);
    if (!ids) *n = 0;
    return ids;
}

/* The innermost user Python frame of a stack (its index), -1 when none. */
static int32_t user_leaf(const sd_levers *l, uint32_t stack)
{
    size_t n;
    const uint32_t *ids = frames_of(l, stack, &n);
    for (size_t i = 0; i < n && i < INT32_MAX; i++)
        if (is_user_py(sd_snapshot_frame(l->snap, ids[i]))) return (int32_t)i;
    return -1;
}

/* A stack with a loss frame, in its frames or its forward_frames (the loss's backward). */
static bool stack_has_loss(const sd_levers *l, uint32_t stack, uint32_t *loss_stack)
{
    uint32_t fwd = sd_snapshot_stack_context(l->snap, stack)->forward_stack;
    uint32_t both[2] = {stack, fwd};
    for (size_t k = 0; k < 2; k++) {
        if (k && !fwd) break;
        size_t n;
        const uint32_t *ids = frames_of(l, both[k], &n);
        for (size_t i = 0; i < n; i++)
            if (is_loss_frame(sd_snapshot_frame(l->snap, ids[i]))) {
                *loss_stack = both[k];
                return true;
            }
    }
    return false;
}

static bool stack_is_foreach(const sd_levers *l, uint32_t stack)
{
    size_t n;
    const uint32_t *ids = frames_of(l, stack, &n);
    for (size_t i = 0; i < n; i++) {
        const sd_frame *f = sd_snapshot_frame(l->snap, ids[i]);
        if (strncmp(f->name, "_multi_tensor_", 14) == 0 &&
            (strstr(f->filename, "torch/optim/") || strstr(f->filename, "torch\\optim\\")))
            return true;
    }
    return false;
}

static bool same_line(const sd_frame *a, const sd_frame *b)
{
    return a->line == b->line && strcmp(a->filename, b->filename) == 0;
}

static bool same_function(const sd_frame *a, const sd_frame *b)
{
    return strcmp(a->name, b->name) == 0 && strcmp(a->filename, b->filename) == 0;
}

/* ---------- levers ---------- */

static sd_lever *lever_new(sd_levers *l, sd_lever_kind k, sd_category c)
{
    if (sdp_grow((void **)&l->items, &l->cap_items, l->n_items + 1, sizeof *l->items,
                 &l->arena))
        return NULL;
    sd_lever *x = &l->items[l->n_items++];
    memset(x, 0, sizeof *x);
    x->kind = k;
    x->category = c;
    x->has_bytes = true;
    return x;
}

static int cmp_lstack(const void *a, const void *b)
{
    const lstack *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_stack_id(const void *a, const void *b)
{
    const lstack *x = a, *y = b;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The lever's largest sites (by the site rule, stacks of one site summed) from the blocks
 * `pick` selects. */
static sd_status lever_sites(sd_levers *l, sd_lever *x, bool (*pick)(const sd_levers *,
                             const lblock *, const void *), const void *ctx)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n_blocks; i++) n += pick(l, &l->blocks[i], ctx);
    if (!n) return SD_OK;
    lstack *s = malloc(n * sizeof *s);
    if (!s) return SD_ENOMEM;
    n = 0;
    for (size_t i = 0; i < l->n_blocks; i++)
        if (pick(l, &l->blocks[i], ctx))
            s[n++] = (lstack){l->blocks[i].frames ? l->blocks[i].stack : 0, l->blocks[i].size};
    qsort(s, n, sizeof *s, cmp_stack_id);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && s[m - 1].stack == s[i].stack) s[m - 1].bytes += s[i].bytes;
        else s[m++] = s[i];
    }
    qsort(s, m, sizeof *s, cmp_lstack);
    /* Merge stacks whose sites read the same, in order, keeping the first three. */
    char a[512], b[512];
    for (size_t i = 0; i < m; i++) {
        if (!s[i].stack) continue;
        sd_site site;
        sd_attrib_site_of_stack(l->attrib, l->snap, s[i].stack, &site);
        if (site.site < 0) continue;
        sd_site_text(l->snap, s[i].stack, &site, a, sizeof a);
        bool merged = false;
        for (size_t k = 0; k < x->n_sites && !merged; k++) {
            sd_site_text(l->snap, x->sites[k].stack, &x->sites[k].site, b, sizeof b);
            if (strcmp(a, b) == 0) {
                x->sites[k].bytes += s[i].bytes;
                merged = true;
            }
        }
        if (!merged && x->n_sites < SD_LEVER_SITES)
            x->sites[x->n_sites++] = (sd_lever_site){s[i].stack, site, s[i].bytes};
    }
    free(s);
    return SD_OK;
}

/* The category holding most of the picked bytes. */
static sd_category main_category(const sd_levers *l, bool (*pick)(const sd_levers *,
                                 const lblock *, const void *), const void *ctx)
{
    uint64_t by[SD_CATEGORY_COUNT] = {0};
    for (size_t i = 0; i < l->n_blocks; i++)
        if (pick(l, &l->blocks[i], ctx)) by[l->blocks[i].cat] += l->blocks[i].size;
    size_t best = 0;                /* the first of the largest, in category order */
    for (size_t c = 1; c < SD_CATEGORY_COUNT; c++)
        if (by[c] > by[best]) best = c;
    return (sd_category)best;
}

/* -- a micro-batch halved: activations, and temporaries of a forward or backward -- */

static bool batch_scaled(const sd_levers *l, const lblock *b, const void *ctx)
{
    (void)ctx;
    if (b->cat == SD_CAT_ACTIVATIONS) return true;
    if (b->cat != SD_CAT_TEMPORARIES || !b->in_trace) return false;
    sd_step_phase ph;
    return sd_phases_at(l->phases, l->dev, b->alloc_entry, &ph, NULL) &&
           (ph == SD_IN_FORWARD || ph == SD_IN_BACKWARD);
}

static sd_status half_batch(sd_levers *l)
{
    uint64_t act = 0, all = 0;
    for (size_t i = 0; i < l->n_blocks; i++)
        if (batch_scaled(l, &l->blocks[i], NULL)) {
            all += l->blocks[i].size;
            if (l->blocks[i].cat == SD_CAT_ACTIVATIONS) act += l->blocks[i].size;
        }
    if (all / 2 == 0) return SD_OK;
    sd_lever *x = lever_new(l, SD_LEVER_KIND_HALF_BATCH,
                            act * 2 >= all ? SD_CAT_ACTIVATIONS : SD_CAT_TEMPORARIES);
    if (!x) return SD_ENOMEM;
    x->of_bytes = all;
    x->less_bytes = act;      /* the activations' share of of_bytes (the text quotes it) */
    x->bytes = all / 2;
    return lever_sites(l, x, batch_scaled, NULL);
}

/* -- the loss: blocks with a loss frame, and those made on a loss line -- */

typedef struct loss_ctx {
    const sd_frame **lines; size_t n_lines;   /* the loss's innermost user frames */
} loss_ctx;

static bool at_loss(const sd_levers *l, const lblock *b, const void *vctx)
{
    const loss_ctx *c = vctx;
    if (!b->frames) return false;
    uint32_t ls;
    if (stack_has_loss(l, b->stack, &ls)) return true;
    int32_t u = user_leaf(l, b->stack);
    if (u < 0) return false;
    size_t n;
    const uint32_t *ids = frames_of(l, b->stack, &n);
    const sd_frame *f = sd_snapshot_frame(l->snap, ids[u]);
    for (size_t i = 0; i < c->n_lines; i++) {
        if (same_line(f, c->lines[i])) return true;
        /* a loss function of its own (HF's ForCausalLMLoss, a compute_loss): its casts */
        if (has_ci(c->lines[i]->name, "loss") && same_function(f, c->lines[i])) return true;
    }
    return false;
}

static sd_status chunked_loss(sd_levers *l)
{
    loss_ctx c = {NULL, 0};
    size_t cap = 0;
    for (size_t i = 0; i < l->n_blocks; i++) {
        const lblock *b = &l->blocks[i];
        uint32_t ls;
        if (!b->frames || !stack_has_loss(l, b->stack, &ls)) continue;
        int32_t u = user_leaf(l, ls);
        if (u < 0) continue;
        size_t n;
        const uint32_t *ids = frames_of(l, ls, &n);
        const sd_frame *f = sd_snapshot_frame(l->snap, ids[u]);
        bool seen = false;
        for (size_t k = 0; k < c.n_lines && !seen; k++) seen = same_line(f, c.lines[k]);
        if (seen) continue;
        if (sdp_grow((void **)&c.lines, &cap, c.n_lines + 1, sizeof *c.lines, NULL)) {
            free(c.lines);
            return SD_ENOMEM;
        }
        c.lines[c.n_lines++] = f;
    }
    uint64_t bytes = 0;
    bool any = false;
    for (size_t i = 0; i < l->n_blocks; i++)
        if (at_loss(l, &l->blocks[i], &c)) {
            bytes += l->blocks[i].size;
            any = true;
        }
    sd_status st = SD_OK;
    if (any && bytes) {
        sd_lever *x = lever_new(l, SD_LEVER_KIND_CHUNKED_LOSS, main_category(l, at_loss, &c));
        if (!x) st = SD_ENOMEM;
        else {
            x->of_bytes = x->bytes = bytes;
            st = lever_sites(l, x, at_loss, &c);
        }
    }
    free(c.lines);
    return st;
}

/* -- the optimizer's foreach temporaries -- */

static bool is_foreach(const sd_levers *l, const lblock *b, const void *ctx)
{
    (void)ctx;
    return b->frames && stack_is_foreach(l, b->stack);
}

/* The `_multi_tensor_*` frame of each foreach stack: the function to switch off, by frame
 * (file, line), the largest first. */
static int32_t foreach_frame(const sd_levers *l, uint32_t stack)
{
    size_t n;
    const uint32_t *ids = frames_of(l, stack, &n);
    for (size_t i = 0; i < n && i < INT32_MAX; i++)
        if (strncmp(sd_snapshot_frame(l->snap, ids[i])->name, "_multi_tensor_", 14) == 0)
            return (int32_t)i;
    return -1;
}

static sd_status foreach_sites(sd_levers *l, sd_lever *x)
{
    for (size_t i = 0; i < l->n_blocks; i++) {
        const lblock *b = &l->blocks[i];
        if (!is_foreach(l, b, NULL)) continue;
        int32_t fi = foreach_frame(l, b->stack);
        size_t n;
        const uint32_t *ids = frames_of(l, b->stack, &n);
        const sd_frame *f = sd_snapshot_frame(l->snap, ids[fi]);
        size_t k = 0;
        for (; k < x->n_sites; k++) {
            size_t m;
            const uint32_t *o = frames_of(l, x->sites[k].stack, &m);
            if (same_line(f, sd_snapshot_frame(l->snap, o[x->sites[k].site.site]))) break;
        }
        if (k < x->n_sites) {
            x->sites[k].bytes += b->size;
        } else if (x->n_sites < SD_LEVER_SITES) {
            x->sites[x->n_sites++] = (sd_lever_site){
                .stack = b->stack, .bytes = b->size,
                .site = {.site = fi, .via = -1, .is_user = false, .how = SD_SITE_FRAME}};
        }
    }
    /* largest first */
    for (size_t i = 1; i < x->n_sites; i++)
        for (size_t j = i; j > 0 && x->sites[j].bytes > x->sites[j - 1].bytes; j--) {
            sd_lever_site t = x->sites[j];
            x->sites[j] = x->sites[j - 1];
            x->sites[j - 1] = t;
        }
    return SD_OK;
}

static sd_status optim_foreach(sd_levers *l)
{
    uint64_t all = 0, largest = 0;
    for (size_t i = 0; i < l->n_blocks; i++)
        if (is_foreach(l, &l->blocks[i], NULL)) {
            all += l->blocks[i].size;
            if (l->blocks[i].size > largest) largest = l->blocks[i].size;
        }
    if (!all) return SD_OK;
    /* Temporaries by their frames: `_multi_tensor_*` makes only the step's temporaries
     * (the state is _init_group's), even where lifetime cannot tell (an oom inside the
     * step ends the trace before they are freed). */
    sd_lever *x = lever_new(l, SD_LEVER_KIND_OPTIM_FOREACH, SD_CAT_TEMPORARIES);
    if (!x) return SD_ENOMEM;
    /* fused=True makes none of them; foreach=False keeps one tensor's at a time, about the
     * largest: bytes is fused's, of_bytes - less_bytes foreach=False's. */
    x->of_bytes = all;
    x->less_bytes = largest;
    x->bytes = all;
    return foreach_sites(l, x);
}

/* -- categories: zero_grad and sharding -- */

static bool of_category(const sd_levers *l, const lblock *b, const void *ctx)
{
    (void)l;
    unsigned mask = *(const unsigned *)ctx;
    return (mask >> b->cat) & 1u;
}

static sd_status by_categories(sd_levers *l)
{
    uint64_t by[SD_CATEGORY_COUNT] = {0};
    for (size_t i = 0; i < l->n_blocks; i++) by[l->blocks[i].cat] += l->blocks[i].size;
    static const unsigned grads = 1u << SD_CAT_GRADIENTS;
    if (l->phase == SD_IN_FORWARD && by[SD_CAT_GRADIENTS]) {
        sd_lever *x = lever_new(l, SD_LEVER_KIND_ZERO_GRAD_NONE, SD_CAT_GRADIENTS);
        if (!x) return SD_ENOMEM;
        x->of_bytes = x->bytes = by[SD_CAT_GRADIENTS];
        if (lever_sites(l, x, of_category, &grads)) return SD_ENOMEM;
    }
    static const struct { sd_lever_kind k; sd_category c; unsigned mask; } shard[] = {
        {SD_LEVER_KIND_SHARD_OPTIM, SD_CAT_OPTIMIZER_STATE, 1u << SD_CAT_OPTIMIZER_STATE},
        {SD_LEVER_KIND_SHARD_GRADS, SD_CAT_GRADIENTS,
         (1u << SD_CAT_OPTIMIZER_STATE) | (1u << SD_CAT_GRADIENTS)},
        {SD_LEVER_KIND_SHARD_PARAMS, SD_CAT_PARAMETERS,
         (1u << SD_CAT_OPTIMIZER_STATE) | (1u << SD_CAT_GRADIENTS) | (1u << SD_CAT_PARAMETERS)},
    };
    uint64_t prev = 0;
    for (size_t k = 0; k < SDP_ARRAY_LEN(shard); k++) {
        uint64_t x_bytes = 0;
        for (size_t c = 0; c < SD_CATEGORY_COUNT; c++)
            if ((shard[k].mask >> c) & 1u) x_bytes += by[c];
        /* A stage that adds nothing to the one before is not another lever. */
        if (x_bytes / 2 == 0 || x_bytes == prev) continue;
        prev = x_bytes;
        sd_lever *x = lever_new(l, shard[k].k, shard[k].c);
        if (!x) return SD_ENOMEM;
        x->of_bytes = x_bytes;
        x->bytes = x_bytes - x_bytes / 2;
        x->bytes_8_ranks = x_bytes - x_bytes / 8;
        if (lever_sites(l, x, of_category, &shard[k].mask)) return SD_ENOMEM;
    }
    return SD_OK;
}

/* -- activation checkpointing -- */

static int cmp_pair(const void *a, const void *b)
{
    const lpair *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->entry != y->entry) return x->entry < y->entry ? -1 : 1;
    return 0;
}

/* Every (module, block) pair of the saved activations: a block whose stack holds user
 * forward frames F0 (outermost) .. Fk is in the module called at F(d-1), d = 1..k. */
static sd_status module_pairs(sd_levers *l, lpair **out, size_t *n_out)
{
    lpair *pairs = NULL;
    size_t n = 0, cap = 0;
    int32_t idx[64];
    for (size_t i = 0; i < l->n_blocks; i++) {
        const lblock *b = &l->blocks[i];
        if (b->cat != SD_CAT_ACTIVATIONS || !b->frames || !b->in_trace) continue;
        size_t nf;
        const uint32_t *ids = frames_of(l, b->stack, &nf);
        size_t k = 0;
        for (size_t f = nf; f-- > 0 && k < SDP_ARRAY_LEN(idx);)
            if (is_user_forward(sd_snapshot_frame(l->snap, ids[f]))) idx[k++] = (int32_t)f;
        uint64_t key = SDP_HASH_SEED;
        for (size_t d = 1; d < k; d++) {
            const sd_frame *call = sd_snapshot_frame(l->snap, ids[idx[d - 1]]);
            key = sdp_hash_mix(key, sdp_hash_bytes(SDP_HASH_SEED, call->filename,
                                                   strlen(call->filename)));
            key = sdp_hash_mix(key, (uint64_t)call->line);
            key = sdp_hash_mix(key, d);
            if (sdp_grow((void **)&pairs, &cap, n + 1, sizeof *pairs, &l->arena)) {
                free(pairs);
                return SD_ENOMEM;
            }
            pairs[n++] = (lpair){.key = key, .entry = b->alloc_entry, .size = b->size,
                                 .stack = b->stack, .block_stack = b->stack,
                                 .call = idx[d - 1], .depth = (uint32_t)d};
        }
    }
    *out = pairs;
    *n_out = n;
    return SD_OK;
}

/* Of two modules that would free as much, the outer one (checkpointing it covers the
 * inner), then the call that comes first by file and line: one answer, whatever the
 * order the modules were met in. */
static bool module_before(const sd_levers *l, const lpair *a, const lpair *b)
{
    if (a->depth != b->depth) return a->depth < b->depth;
    size_t na, nb;
    const sd_frame *fa = sd_snapshot_frame(l->snap, frames_of(l, a->stack, &na)[a->call]);
    const sd_frame *fb = sd_snapshot_frame(l->snap, frames_of(l, b->stack, &nb)[b->call]);
    int c = strcmp(fa->filename, fb->filename);
    return c ? c < 0 : fa->line < fb->line;
}

static sd_status checkpoint(sd_levers *l)
{
    lpair *pairs;
    size_t n;
    if (module_pairs(l, &pairs, &n)) return SD_ENOMEM;
    if (n > 1) qsort(pairs, n, sizeof *pairs, cmp_pair);
    /* Each module: its calls are told by its first allocation's stack recurring (every
     * call of one module runs the same code); the largest call is what one recompute
     * holds again. */
    size_t best = SIZE_MAX;
    uint64_t best_bytes = 0, best_all = 0, best_call = 0;
    uint32_t best_calls = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && pairs[j].key == pairs[i].key) j++;
        uint64_t all = 0, call = 0, largest = 0;
        uint32_t calls = 0;
        for (size_t k = i; k < j; k++) {
            if (pairs[k].block_stack == pairs[i].block_stack) {
                calls++;
                call = 0;
            }
            call += pairs[k].size;
            all += pairs[k].size;
            if (call > largest) largest = call;
        }
        if (calls >= 2 && (all - largest > best_bytes ||
                           (all - largest == best_bytes && best != SIZE_MAX &&
                            module_before(l, &pairs[i], &pairs[best])))) {
            best = i;
            best_bytes = all - largest;
            best_all = all;
            best_call = largest;
            best_calls = calls;
        }
        i = j;
    }
    sd_status st = SD_OK;
    if (best != SIZE_MAX) {
        sd_lever *x = lever_new(l, SD_LEVER_KIND_CHECKPOINT, SD_CAT_ACTIVATIONS);
        if (!x) st = SD_ENOMEM;
        else {
            x->of_bytes = best_all;
            x->less_bytes = best_call;
            x->bytes = best_bytes;
            x->calls = best_calls;
            x->sites[0] = (sd_lever_site){.stack = pairs[best].stack,
                                          .site = {.site = pairs[best].call, .via = -1,
                                                   .is_user = true, .how = SD_SITE_FRAME},
                                          .bytes = best_all};
            x->n_sites = 1;
        }
    }
    free(pairs);
    return st;
}

/* ---------- ranking and judging ---------- */

/* The rank's tiers: code changes on what the moment made (the culprit), sharding the model
 * state that is always there, allocator settings (no live byte freed). */
static int tier(sd_lever_kind k)
{
    if (k == SD_LEVER_KIND_ALLOCATOR) return 2;
    return k >= SD_LEVER_KIND_SHARD_OPTIM && k <= SD_LEVER_KIND_SHARD_PARAMS;
}

static int cmp_lever(const void *a, const void *b)
{
    const sd_lever *x = a, *y = b;
    if (tier(x->kind) != tier(y->kind)) return tier(x->kind) < tier(y->kind) ? -1 : 1;
    if (x->has_bytes != y->has_bytes) return x->has_bytes ? -1 : 1;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return x->kind < y->kind ? -1 : x->kind > y->kind;
}

sd_status sdp_levers_end(sd_levers *l)
{
    if (checkpoint(l) || half_batch(l) || chunked_loss(l) || optim_foreach(l) ||
        by_categories(l))
        return SD_ENOMEM;
    /* A lever freeing under SD_LEVERS_MIN_BYTES (a loss's scalar) is not worth a line. */
    size_t m = 0;
    for (size_t i = 0; i < l->n_items; i++)
        if (l->items[i].bytes >= SD_LEVERS_MIN_BYTES) l->items[m++] = l->items[i];
    l->n_items = m;
    if (l->n_items > 1) qsort(l->items, l->n_items, sizeof *l->items, cmp_lever);
    /* The blocks are not needed past here. */
    free(l->blocks);
    l->blocks = NULL;
    l->n_blocks = l->cap_blocks = 0;
    return SD_OK;
}

sd_status sdp_levers_judge(sd_levers *l, bool has_shortfall, uint64_t shortfall,
                           const sd_frag_whatif *whatif, size_t n_whatif)
{
    l->has_shortfall = has_shortfall;
    l->shortfall = shortfall;
    for (size_t i = 0; i < n_whatif; i++) {
        const sd_frag_whatif *w = &whatif[i];
        sd_lever *x = lever_new(l, SD_LEVER_KIND_ALLOCATOR, SD_CAT_OTHER);
        if (!x) return SD_ENOMEM;
        x->alloc_conf = w->alloc_conf;
        x->has_bytes = w->has_saved;
        x->bytes = w->has_saved ? w->saved_bytes : 0;
        x->fits = w->fits;
        x->has_headroom = w->has_headroom;
        x->headroom_bytes = w->headroom_bytes;
    }
    for (size_t i = 0; i < l->n_items; i++) {
        sd_lever *x = &l->items[i];
        x->has_enough = has_shortfall;
        x->ranks_needed = 0;
        if (!has_shortfall) continue;
        if (x->kind == SD_LEVER_KIND_ALLOCATOR) {
            for (size_t k = 0; k < n_whatif; k++)
                if (whatif[k].alloc_conf == x->alloc_conf) x->enough = whatif[k].enough;
            continue;
        }
        x->enough = x->bytes >= shortfall;
        if (x->kind >= SD_LEVER_KIND_SHARD_OPTIM && x->kind <= SD_LEVER_KIND_SHARD_PARAMS &&
            x->of_bytes > shortfall) {
            /* X (1 - 1/N) >= s  <=>  N >= X / (X - s) */
            uint64_t d = x->of_bytes - shortfall;
            uint64_t need = x->of_bytes / d + (x->of_bytes % d != 0);
            x->ranks_needed = need < 2 ? 2 : need > UINT32_MAX ? UINT32_MAX : (uint32_t)need;
            /* integer halving: check the figure itself at that N */
            while (x->ranks_needed < UINT32_MAX &&
                   x->of_bytes - x->of_bytes / x->ranks_needed < shortfall)
                x->ranks_needed++;
        }
    }
    if (l->n_items > 1) qsort(l->items, l->n_items, sizeof *l->items, cmp_lever);
    return SD_OK;
}

/* ---------- accessors ---------- */

size_t sd_levers_count(const sd_levers *l) { return l ? l->n_items : 0; }

const sd_lever *sd_levers_at(const sd_levers *l, size_t i)
{
    return l && i < l->n_items ? &l->items[i] : NULL;
}

bool sd_levers_shortfall(const sd_levers *l, uint64_t *bytes)
{
    if (bytes) *bytes = l && l->has_shortfall ? l->shortfall : 0;
    return l && l->has_shortfall;
}
