/* category.c - categories of live memory, phases and steps of a trace (category.h,
 * docs/categories.md).
 *
 * The frames' verdict on a stack (a "hint") is computed once per stack id and cached. The
 * phases are one pass over each device's trace: an alloc whose frames name a phase opens
 * it, everything else continues the phase before it. A run is a maximal stretch of entries
 * in one phase; "freed within its phase" means freed in the run it was allocated in.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "diff_internal.h"
#include "snapdiff/attrib.h"
#include "snapdiff/category.h"
#include "trace_walk.h"

/* The frames' verdict on a stack, strongest last (the strongest frame anywhere wins). */
enum hint {
    H_UNSET, H_NONE, H_PYTHON, H_FORWARD, H_PARAM, H_OPTIM, H_BACKWARD, H_ACCUM
};
/* Cached beside the verdict: the stack has two Python __init__ frames or more (a module
 * being built inside another: the way a model's constructor builds its layers). One
 * __init__ is no evidence: datasets, caches and a gradient estimator's state are built
 * there too. */
#define H_INIT_BIT 0x80u
/* Cached too: a Python frame whose path says "optim" (a user's own optimizer class,
 * cs336_basics/optimizer/optimizer.py): in the set-up, with a gradient's size, evidence of
 * optimizer state. */
#define H_OPTNAME_BIT 0x40u
#define H_BITS (H_INIT_BIT | H_OPTNAME_BIT)

/* Does `fn` hold "optim", in any case? */
static bool names_optim(const char *fn)
{
    for (const char *c = fn; *c; c++) {
        static const char w[] = "optim";
        size_t k = 0;
        while (k < 5 && c[k] && (c[k] | 0x20) == w[k]) k++;
        if (k == 5) return true;
    }
    return false;
}

typedef struct run_rec {
    uint8_t phase;
    uint32_t step;
    uint32_t next_backward;   /* the first backward run after this one; UINT32_MAX: none */
    uint32_t next_optimizer;  /* the first optimizer run after this one; UINT32_MAX: none */
} run_rec;

/* A gradient's size, and what blocks of it from before recording are. */
typedef struct grad_size {
    uint64_t size;
    bool model_state;         /* parameters and optimizer state, not told apart */
} grad_size;

typedef struct dev_phases {
    size_t n;                 /* entries */
    uint32_t *run;            /* per entry: its run (a mapping of run_mapped bytes) */
    size_t run_mapped;
    run_rec *runs; size_t n_runs;
    uint32_t steps;
    uint8_t *grad_by_size;    /* per entry: 1 for a backward alloc that is a gradient by size */
    grad_size *grads; size_t n_grads;   /* sorted by size */
} dev_phases;

struct sd_phases {
    const sd_snapshot *snap;
    uint8_t *hints;           /* per stack id */
    size_t n_stacks;
    dev_phases *devs;
    size_t n_devs;
};

static const char *const CATEGORY_NAMES[SD_CATEGORY_COUNT] = {
    "parameters", "gradients", "optimizer_state", "activations", "temporaries", "pre_trace",
    "persistent", "other", "model_state"};
static const char *const EVIDENCE_NAMES[SD_EVIDENCE_COUNT] = {"frames", "lifetime", "none",
                                                              "size", "no_backward"};
static const char *const PHASE_NAMES[SD_STEP_PHASE_COUNT] = {"forward", "backward",
                                                             "optimizer", "other", "setup"};

const char *sd_category_name(sd_category c)
{
    return (unsigned)c < SD_CATEGORY_COUNT ? CATEGORY_NAMES[c] : NULL;
}

const char *sd_evidence_name(sd_evidence e)
{
    return (unsigned)e < SD_EVIDENCE_COUNT ? EVIDENCE_NAMES[e] : NULL;
}

const char *sd_step_phase_name(sd_step_phase p)
{
    return (unsigned)p < SD_STEP_PHASE_COUNT ? PHASE_NAMES[p] : NULL;
}

const char *sd_category_total_evidence(const sd_category_total *t)
{
    static const char *const names[8] = {"none", "frames", "lifetime", "frames+lifetime",
                                         "size", "frames+size", "lifetime+size",
                                         "frames+lifetime+size"};
    /* Blocks of 0 bytes still have a rule; a total with bytes from none has none. */
    return names[(t->frames_bytes ? 1 : 0) | (t->lifetime_bytes ? 2 : 0) |
                 (t->size_bytes ? 4 : 0)];
}

/* ---------- the frames' verdict ---------- */

/* A path that holds `sub` ("torch/optim/"), with / or with Windows' \\. */
static bool has_path(const char *fn, const char *sub)
{
    if (strstr(fn, sub)) return true;
    char win[64];
    size_t n = strlen(sub);
    if (n >= sizeof win || !strchr(fn, '\\')) return false;
    for (size_t i = 0; i <= n; i++) win[i] = sub[i] == '/' ? '\\' : sub[i];
    return strstr(fn, win) != NULL;
}

/* torch.nn code that creates or moves parameters and buffers. */
static bool is_param_setup(const sd_frame *f)
{
    static const char *const module_fns[] = {"_apply", "to", "cuda", "load_state_dict",
                                             "_load_from_state_dict", "to_empty",
                                             "register_parameter", "register_buffer"};
    const char *fn = f->filename, *name = f->name;
    if (strcmp(name, "reset_parameters") == 0) return sdp_frame_is_python(f);
    if (has_path(fn, "torch/nn/parameter.py") || has_path(fn, "torch/nn/init.py")) return true;
    if (has_path(fn, "torch/nn/modules/module.py")) {
        for (size_t i = 0; i < SDP_ARRAY_LEN(module_fns); i++)
            if (strcmp(name, module_fns[i]) == 0) return true;
        return false;
    }
    return has_path(fn, "torch/nn/modules/") && strcmp(name, "__init__") == 0;
}

static bool is_forward(const sd_frame *f)
{
    if (!sdp_frame_is_python(f)) return false;
    if (strcmp(f->name, "forward") == 0) return true;
    return has_path(f->filename, "torch/nn/modules/module.py") &&
           (strcmp(f->name, "_call_impl") == 0 || strcmp(f->name, "_wrapped_call_impl") == 0);
}

static bool is_backward(const sd_frame *f)
{
    if (sd_frame_native_how(f) == SD_SITE_AUTOGRAD) return true;
    if (strncmp(f->name, "torch::autograd::Engine::", 25) == 0) return true;
    /* torch.autograd.backward / grad and Tensor.backward (not autograd/function.py: a
     * custom Function's apply runs in the forward). */
    if (has_path(f->filename, "torch/autograd/__init__.py") ||
        has_path(f->filename, "torch/autograd/graph.py"))
        return true;
    return has_path(f->filename, "torch/_tensor.py") && strcmp(f->name, "backward") == 0;
}

static bool is_optim(const sd_frame *f)
{
    return has_path(f->filename, "torch/optim/") ||
           has_path(f->filename, "torch/distributed/optim/");
}

static uint8_t frame_hint(const sd_frame *f)
{
    if (sd_frame_native_how(f) == SD_SITE_ACCUMULATE_GRAD) return H_ACCUM;
    if (is_backward(f)) return H_BACKWARD;
    if (is_optim(f)) return H_OPTIM;
    if (is_param_setup(f)) return H_PARAM;
    if (is_forward(f)) return H_FORWARD;
    if (sdp_frame_is_python(f)) return H_PYTHON;
    return H_NONE;
}

static uint8_t stack_hints(sd_phases *p, uint32_t stack)
{
    if (stack >= p->n_stacks) stack = 0;
    if (p->hints[stack] != H_UNSET) return p->hints[stack];
    size_t n = 0;
    const uint32_t *ids = sd_snapshot_stack(p->snap, stack, &n);
    uint8_t h = H_NONE;
    unsigned inits = 0;
    bool optname = false;
    for (size_t i = 0; i < n; i++) {
        const sd_frame *f = sd_snapshot_frame(p->snap, ids[i]);
        uint8_t fh = h == H_ACCUM ? H_NONE : frame_hint(f);
        if (fh > h) h = fh;
        inits += strcmp(f->name, "__init__") == 0 && sdp_frame_is_python(f);
        optname |= sdp_frame_is_python(f) && names_optim(f->filename);
    }
    /* forward_frames are written only for memory allocated in a backward. */
    if (h < H_BACKWARD && sd_snapshot_stack_context(p->snap, stack)->forward_stack)
        h = H_BACKWARD;
    p->hints[stack] = (uint8_t)(h | (inits >= 2 ? H_INIT_BIT : 0) | (optname ? H_OPTNAME_BIT : 0));
    return p->hints[stack];
}

static uint8_t stack_hint(sd_phases *p, uint32_t stack)
{
    return stack_hints(p, stack) & (uint8_t)~H_BITS;
}

static bool stack_builds(sd_phases *p, uint32_t stack)
{
    return (stack_hints(p, stack) & H_INIT_BIT) != 0;
}

static bool stack_names_optim(sd_phases *p, uint32_t stack)
{
    return (stack_hints(p, stack) & H_OPTNAME_BIT) != 0;
}

/* ---------- phases ---------- */

/* The phase an alloc's frames name, or SD_STEP_PHASE_COUNT when they name none. */
static unsigned phase_of_hint(uint8_t h, unsigned cur)
{
    switch (h) {
    case H_ACCUM: case H_BACKWARD: return SD_IN_BACKWARD;
    case H_OPTIM: return SD_IN_OPTIMIZER;
    case H_FORWARD: return SD_IN_FORWARD;
    case H_PARAM: return SD_IN_SETUP;
    /* Python outside any module: the loss right after the forward belongs to it; else
     * set-up, data loading, evaluation glue. */
    case H_PYTHON: return cur == SD_IN_FORWARD ? SD_IN_FORWARD : SD_IN_OTHER;
    default: return SD_STEP_PHASE_COUNT;
    }
}

static sd_status device_phases(sd_phases *p, const sd_cuda_device *d, dev_phases *dp)
{
    size_t n = d->n_trace;
    dp->n = n;
    if (!n) return SD_OK;
    if (n >= UINT32_MAX) return SD_OK;     /* no phases: every entry reads as other */
    /* 4 bytes per entry, written once in order: in huge pages (base/region.c), as the
     * model's trace records are, since on the VMs measured a fault per 4 KiB page cost
     * more than the pass that fills them (2,900 faults, most of 65 ms on 3 million
     * entries). */
    dp->run = sdp_map_aligned(n * sizeof *dp->run, false, &dp->run_mapped);
    if (!dp->run) return SD_ENOMEM;
    /* The phase before the first alloc that names one is that alloc's; the set-up when
     * the trace starts by building modules (module set-up frames, or a Python __init__)
     * before its first forward, backward or optimizer alloc. */
    unsigned cur = SD_IN_OTHER;
    size_t setup_end = 0;
    bool builds = false;
    for (size_t i = 0; i < n; i++) {
        if (d->trace[i].action != SD_ACT_ALLOC) continue;
        uint8_t h = stack_hint(p, d->trace[i].stack);
        if (h == H_FORWARD || h == H_OPTIM || h == H_BACKWARD || h == H_ACCUM) {
            setup_end = i;
            break;
        }
        setup_end = n;
        builds |= h == H_PARAM || stack_builds(p, d->trace[i].stack);
    }
    if (!builds) setup_end = 0;
    for (size_t i = setup_end; i < n; i++) {
        if (d->trace[i].action != SD_ACT_ALLOC) continue;
        unsigned ph = phase_of_hint(stack_hint(p, d->trace[i].stack), SD_IN_OTHER);
        if (ph != SD_STEP_PHASE_COUNT && stack_hint(p, d->trace[i].stack) != H_PYTHON) {
            cur = ph;
            break;
        }
    }
    if (setup_end) cur = SD_IN_SETUP;
    size_t cap = 0;
    uint32_t step = 1;
    bool any_optim = false;
    for (size_t i = 0; i < n; i++) {
        unsigned ph = cur;
        if (i < setup_end) {
            ph = SD_IN_SETUP;
        } else if (d->trace[i].action == SD_ACT_ALLOC) {
            unsigned named = phase_of_hint(stack_hint(p, d->trace[i].stack), cur);
            if (named != SD_STEP_PHASE_COUNT) ph = named;
        }
        if (i == 0 || ph != cur) {
            if (i && cur == SD_IN_OPTIMIZER) step++;
            if (sdp_grow((void **)&dp->runs, &cap, dp->n_runs + 1, sizeof *dp->runs, NULL))
                return SD_ENOMEM;
            dp->runs[dp->n_runs++] = (run_rec){(uint8_t)ph, ph == SD_IN_SETUP ? 0 : step,
                                               UINT32_MAX, UINT32_MAX};
            cur = ph;
        }
        if (ph == SD_IN_OPTIMIZER) any_optim = true;
        dp->run[i] = (uint32_t)(dp->n_runs - 1);
    }
    if (!any_optim)
        for (size_t r = 0; r < dp->n_runs; r++) dp->runs[r].step = 0;
    uint32_t next = UINT32_MAX, next_opt = UINT32_MAX;
    for (size_t r = dp->n_runs; r-- > 0;) {
        dp->runs[r].next_backward = next;
        dp->runs[r].next_optimizer = next_opt;
        if (dp->runs[r].phase == SD_IN_BACKWARD) next = (uint32_t)r;
        if (dp->runs[r].phase == SD_IN_OPTIMIZER) next_opt = (uint32_t)r;
    }
    dp->steps = any_optim ? dp->runs[dp->n_runs - 1].step : 0;
    /* A trace that ends in the optimizer step has completed that step. */
    return SD_OK;
}

/* ---------- evidence by size ---------- */

/* A growable list of sizes, sorted and made unique by sizes_sort. */
typedef struct size_list {
    uint64_t *v;
    size_t n, cap;
} size_list;

static sd_status sizes_add(size_list *l, uint64_t size)
{
    if (sdp_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v, NULL)) return SD_ENOMEM;
    l->v[l->n++] = size;
    return SD_OK;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void sizes_sort(size_list *l)
{
    if (l->n > 1) qsort(l->v, l->n, sizeof *l->v, u64_cmp);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        if (!k || l->v[k - 1] != l->v[i]) l->v[k++] = l->v[i];
    l->n = k;
}

/* The index of `size` in a sorted unique list, or SIZE_MAX. */
static size_t sizes_find(const uint64_t *v, size_t n, uint64_t size)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < size) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && v[lo] == size ? lo : SIZE_MAX;
}

static const grad_size *grad_of(const dev_phases *dp, uint64_t size)
{
    size_t lo = 0, hi = dp->n_grads;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (dp->grads[mid].size < size) lo = mid + 1;
        else hi = mid;
    }
    return size && lo < dp->n_grads && dp->grads[lo].size == size ? &dp->grads[lo] : NULL;
}

/* The evidence by size of one device (docs/categories.md, "Evidence by size"), after
 * device_phases: one walk of the trace says when each alloc's block was released.
 *  - P, the parameters' sizes: allocs (and the snapshot's blocks) whose frames are
 *    AccumulateGrad, module set-up or the optimizer's, kept past their run; set-up allocs
 *    under a Python __init__ kept past the set-up;
 *  - a gradient by size: a backward alloc (no AccumulateGrad frame: accumulateGrad stole
 *    the buffer its XBackward node made) of a size in P, alive when the next optimizer run
 *    began (never freed, when no optimizer run follows);
 *  - G, the gradients' sizes (AccumulateGrad's and those), each with whether blocks of it
 *    from before recording are parameters or model state: parameters when the trace
 *    allocates the optimizer state of that size itself, or when there are no more of them
 *    than the most gradients of that size one run allocates; else model state. */
/* A snapshot block's size as a trace entry gives it: torch's trace records the request
 * (orig_size), the block its rounded size. */
static uint64_t block_request(const sd_block *bl)
{
    return bl->requested_size ? bl->requested_size : bl->size;
}

static sd_status device_sizes(sd_phases *p, const sd_cuda_device *d, dev_phases *dp)
{
    size_t n = dp->n;
    if (!dp->run) return SD_OK;
    sd_status st = SD_ENOMEM;
    size_list P = {0}, G = {0}, state = {0};
    uint32_t *rel = malloc(n * sizeof *rel);
    uint32_t *cnt = NULL, *cnt_run = NULL, *cnt_max = NULL, *pre = NULL;
    sdp_arena budget;
    sdp_arena_init(&budget, 0);
    sdp_trace_walk w;
    sdp_trace_walk_init(&w, &budget);
    dp->grad_by_size = calloc(n, 1);
    if (!rel || !dp->grad_by_size || sdp_trace_walk_reset(&w)) goto out;
    memset(rel, 0xff, n * sizeof *rel);
    for (size_t i = 0; i < n; i++) {
        sdp_walk_step step;
        if (sdp_trace_walk_entry(&w, &d->trace[i], i, &step)) goto out;
        if (step.released && step.old.entry < n) rel[step.old.entry] = (uint32_t)i;
    }
    /* P, and the optimizer state the trace allocates. */
    for (size_t i = 0; i < n; i++) {
        const sd_trace_entry *e = &d->trace[i];
        if (e->action != SD_ACT_ALLOC) continue;
        uint8_t h = stack_hint(p, e->stack);
        uint32_t r = dp->run[i];
        bool kept = rel[i] == UINT32_MAX || dp->run[rel[i]] != r;
        uint8_t ph = dp->runs[r].phase;
        bool opt = (h == H_OPTIM || ph == SD_IN_OPTIMIZER) && kept;
        if (h == H_ACCUM || h == H_PARAM || opt ||
            (ph == SD_IN_SETUP && kept && stack_builds(p, e->stack)))
            if (sizes_add(&P, e->size)) goto out;
        if (opt && sizes_add(&state, e->size)) goto out;
        if (h == H_ACCUM && sizes_add(&G, e->size)) goto out;
    }
    for (size_t b = 0; b < d->n_blocks; b++) {
        const sd_block *bl = &d->blocks[b];
        if (bl->state != SD_BLOCK_ALLOCATED) continue;
        uint8_t h = stack_hint(p, bl->stack);
        if ((h == H_ACCUM || h == H_PARAM || h == H_OPTIM) && sizes_add(&P, block_request(bl)))
            goto out;
        if (h == H_ACCUM && sizes_add(&G, block_request(bl))) goto out;
    }
    sizes_sort(&P);
    sizes_sort(&state);
    /* Gradients by size. */
    for (size_t i = 0; i < n; i++) {
        const sd_trace_entry *e = &d->trace[i];
        if (e->action != SD_ACT_ALLOC) continue;
        const run_rec *r = &dp->runs[dp->run[i]];
        uint8_t h = stack_hint(p, e->stack);
        if (r->phase != SD_IN_BACKWARD || h == H_ACCUM || h == H_OPTIM || h == H_PARAM)
            continue;
        bool alive = r->next_optimizer == UINT32_MAX
                         ? rel[i] == UINT32_MAX
                         : rel[i] == UINT32_MAX || dp->run[rel[i]] >= r->next_optimizer;
        if (!alive || sizes_find(P.v, P.n, e->size) == SIZE_MAX) continue;
        dp->grad_by_size[i] = 1;
        if (sizes_add(&G, e->size)) goto out;
    }
    sizes_sort(&G);
    /* Per gradient size: the most gradients of it one run allocates, and the blocks of it
     * from before recording never freed (the snapshot's blocks the walk does not hold). */
    cnt = calloc(G.n ? G.n : 1, sizeof *cnt);
    cnt_run = malloc((G.n ? G.n : 1) * sizeof *cnt_run);
    cnt_max = calloc(G.n ? G.n : 1, sizeof *cnt_max);
    pre = calloc(G.n ? G.n : 1, sizeof *pre);
    dp->grads = calloc(G.n ? G.n : 1, sizeof *dp->grads);
    if (!cnt || !cnt_run || !cnt_max || !pre || !dp->grads) goto out;
    memset(cnt_run, 0xff, (G.n ? G.n : 1) * sizeof *cnt_run);
    for (size_t i = 0; i < n; i++) {
        const sd_trace_entry *e = &d->trace[i];
        if (e->action != SD_ACT_ALLOC) continue;
        if (!dp->grad_by_size[i] && stack_hint(p, e->stack) != H_ACCUM) continue;
        size_t k = sizes_find(G.v, G.n, e->size);
        if (k == SIZE_MAX) continue;
        if (cnt_run[k] != dp->run[i]) {
            cnt_run[k] = dp->run[i];
            cnt[k] = 0;
        }
        if (++cnt[k] > cnt_max[k]) cnt_max[k] = cnt[k];
    }
    for (size_t b = 0; b < d->n_blocks; b++) {
        const sd_block *bl = &d->blocks[b];
        if (bl->state != SD_BLOCK_ALLOCATED || sdp_trace_walk_live(&w, bl->address)) continue;
        size_t k = sizes_find(G.v, G.n, block_request(bl));
        if (k != SIZE_MAX) pre[k]++;
    }
    for (size_t k = 0; k < G.n; k++) {
        bool params = sizes_find(state.v, state.n, G.v[k]) != SIZE_MAX || pre[k] <= cnt_max[k];
        dp->grads[k] = (grad_size){G.v[k], !params};
    }
    dp->n_grads = G.n;
    st = SD_OK;
out:
    free(rel);
    free(cnt);
    free(cnt_run);
    free(cnt_max);
    free(pre);
    free(P.v);
    free(G.v);
    free(state.v);
    sdp_trace_walk_free(&w);
    sdp_arena_free(&budget);
    return st;
}

sd_phases *sd_phases_create(const sd_snapshot *s, sd_error *err)
{
    sd_error_clear(err);
    sd_phases *p = calloc(1, sizeof *p);
    if (!p) {
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory finding the phases");
        return NULL;
    }
    p->snap = s;
    p->n_stacks = sd_snapshot_stack_count(s);
    if (!p->n_stacks) p->n_stacks = 1;
    p->n_devs = sd_snapshot_device_count(s);
    p->hints = calloc(p->n_stacks, 1);
    p->devs = calloc(p->n_devs ? p->n_devs : 1, sizeof *p->devs);
    bool ok = p->hints && p->devs;
    for (size_t i = 0; ok && i < p->n_devs; i++)
        ok = device_phases(p, sd_snapshot_device(s, i), &p->devs[i]) == SD_OK &&
             device_sizes(p, sd_snapshot_device(s, i), &p->devs[i]) == SD_OK;
    if (!ok) {
        sd_phases_free(p);
        sdp_fail(err, SD_ENOMEM, SD_NO_OFFSET, "out of memory finding the phases");
        return NULL;
    }
    return p;
}

void sd_phases_free(sd_phases *p)
{
    if (!p) return;
    for (size_t i = 0; p->devs && i < p->n_devs; i++) {
        sdp_unmap(p->devs[i].run, p->devs[i].run_mapped);
        free(p->devs[i].runs);
        free(p->devs[i].grad_by_size);
        free(p->devs[i].grads);
    }
    free(p->devs);
    free(p->hints);
    free(p);
}

static const run_rec *run_at(const sd_phases *p, size_t dev, size_t entry, uint32_t *run)
{
    if (!p || dev >= p->n_devs) return NULL;
    const dev_phases *dp = &p->devs[dev];
    if (!dp->run || entry >= dp->n) return NULL;
    if (run) *run = dp->run[entry];
    return &dp->runs[dp->run[entry]];
}

bool sd_phases_at(const sd_phases *p, size_t dev, size_t entry, sd_step_phase *phase,
                  uint32_t *step)
{
    const run_rec *r = run_at(p, dev, entry, NULL);
    if (phase) *phase = r ? (sd_step_phase)r->phase : SD_IN_OTHER;
    if (step) *step = r ? r->step : 0;
    return r != NULL;
}

/* An order-free hash of a multiset of sizes: the sum of each size's mix. */
static uint64_t size_mix(uint64_t s) { return sdp_hash_mix(SDP_HASH_SEED, s); }

int sd_phases_request_sizes_vary(const sd_phases *p, size_t dev)
{
    if (!p || dev >= p->n_devs) return -1;
    const dev_phases *dp = &p->devs[dev];
    if (!dp->run || dp->steps < 2) return -1;
    const sd_cuda_device *d = sd_snapshot_device(p->snap, dev);
    /* Step k (>= 2) is complete when a later step exists, or it ends in an optimizer run. */
    uint32_t last = dp->steps;
    if (dp->runs[dp->n_runs - 1].phase != SD_IN_OPTIMIZER) last--;
    if (last < 3) return -1;            /* steps 2..last: at least two */
    uint64_t *h = calloc(last + 1, sizeof *h);
    if (!h) return -1;
    for (size_t i = 0; i < dp->n; i++) {
        uint32_t s = dp->runs[dp->run[i]].step;
        if (d->trace[i].action == SD_ACT_ALLOC && s >= 2 && s <= last)
            h[s] += size_mix(d->trace[i].size);
    }
    int vary = 0;
    for (uint32_t s = 3; s <= last; s++) vary |= h[s] != h[2];
    free(h);
    return vary;
}

/* ---------- categories ---------- */

static sd_category decided(sd_category c, sd_evidence e, sd_evidence *out)
{
    *out = e;
    return c;
}

/* A block allocated before recording: by its frames when they are its allocation's, else
 * by its size (a gradient's: parameters, or model state), else by when it was freed. */
static sd_category before_trace(const sd_phases *p, size_t dev, const sd_block_life *b,
                                uint64_t size, uint8_t h, sd_evidence *ev)
{
    if (h == H_OPTIM) return decided(SD_CAT_OPTIMIZER_STATE, SD_EVIDENCE_FRAMES, ev);
    if (!b->freed) {
        const grad_size *g = dev < p->n_devs ? grad_of(&p->devs[dev], size) : NULL;
        if (g)
            return decided(g->model_state ? SD_CAT_MODEL_STATE : SD_CAT_PARAMETERS,
                           SD_EVIDENCE_SIZE, ev);
        return decided(SD_CAT_PERSISTENT, SD_EVIDENCE_LIFETIME, ev);
    }
    sd_step_phase ph;
    if (sd_phases_at(p, dev, b->free_entry, &ph, NULL) && ph == SD_IN_BACKWARD)
        return decided(SD_CAT_ACTIVATIONS, SD_EVIDENCE_LIFETIME, ev);
    return decided(SD_CAT_PRE_TRACE, SD_EVIDENCE_LIFETIME, ev);
}

/* The block's bytes: its own, else its trace entry's. */
static uint64_t life_size(const sd_phases *p, size_t dev, const sd_block_life *b)
{
    if (b->size || !p || dev >= p->n_devs) return b->size;
    const sd_cuda_device *d = sd_snapshot_device(p->snap, dev);
    if (b->in_trace && b->alloc_entry < d->n_trace) return d->trace[b->alloc_entry].size;
    if (!b->in_trace && b->freed && b->free_entry < d->n_trace)
        return d->trace[b->free_entry].size;
    return 0;
}

/* A forward alloc of a run no backward nor optimizer step follows (a forward-only
 * recording, an OOM in the forward; a step with no backward seen is not that): kept past the forward (never freed, freed
 * after its run, or freed by Python outside any module's forward: the graph let go of) it
 * is an activation saved for a backward the trace did not record. */
static bool kept_for_no_backward(sd_phases *p, size_t dev, const sd_block_life *b,
                                 bool same_run)
{
    if (!b->freed || !same_run) return true;
    const sd_cuda_device *d = sd_snapshot_device(p->snap, dev);
    if (b->free_entry >= d->n_trace) return false;
    return stack_hint(p, d->trace[b->free_entry].stack) == H_PYTHON;
}

sd_category sd_category_of(const sd_phases *p, size_t dev, const sd_block_life *b,
                           sd_evidence *evidence)
{
    sd_evidence dummy;
    sd_evidence *ev = evidence ? evidence : &dummy;
    /* The hint cache fills lazily; the handle is logically const. */
    sd_phases *pm = (sd_phases *)p;
    uint8_t h = b->stack_is_alloc ? stack_hint(pm, b->stack) : H_NONE;
    if (h == H_ACCUM) return decided(SD_CAT_GRADIENTS, SD_EVIDENCE_FRAMES, ev);
    if (h == H_PARAM) return decided(SD_CAT_PARAMETERS, SD_EVIDENCE_FRAMES, ev);
    if (!b->has_trace) {
        if (h == H_OPTIM) return decided(SD_CAT_OPTIMIZER_STATE, SD_EVIDENCE_FRAMES, ev);
        return decided(SD_CAT_OTHER, SD_EVIDENCE_NONE, ev);
    }
    uint64_t size = life_size(p, dev, b);
    if (!b->in_trace) return before_trace(p, dev, b, size, h, ev);
    uint32_t run_a = 0, run_f = UINT32_MAX;
    const run_rec *ra = run_at(p, dev, b->alloc_entry, &run_a);
    if (!ra) return decided(SD_CAT_OTHER, SD_EVIDENCE_NONE, ev);
    if (b->freed) run_at(p, dev, b->free_entry, &run_f);
    bool same_run = b->freed && run_f == run_a;
    if (h == H_OPTIM || ra->phase == SD_IN_OPTIMIZER)
        return decided(same_run ? SD_CAT_TEMPORARIES : SD_CAT_OPTIMIZER_STATE,
                       h == H_OPTIM && !same_run ? SD_EVIDENCE_FRAMES : SD_EVIDENCE_LIFETIME, ev);
    if (ra->phase == SD_IN_BACKWARD && p->devs[dev].grad_by_size[b->alloc_entry])
        return decided(SD_CAT_GRADIENTS, SD_EVIDENCE_SIZE, ev);
    if (ra->phase == SD_IN_FORWARD && ra->next_backward == UINT32_MAX &&
        ra->next_optimizer == UINT32_MAX && kept_for_no_backward(pm, dev, b, same_run))
        return decided(SD_CAT_ACTIVATIONS, SD_EVIDENCE_NO_BACKWARD, ev);
    if (same_run) return decided(SD_CAT_TEMPORARIES, SD_EVIDENCE_LIFETIME, ev);
    /* Built in the set-up and kept: a parameter when allocated while a module builds
     * another; else by a gradient's size. */
    if (ra->phase == SD_IN_SETUP) {
        if (b->stack_is_alloc && stack_builds(pm, b->stack))
            return decided(SD_CAT_PARAMETERS, SD_EVIDENCE_FRAMES, ev);
        /* A gradient's size: an optimizer's state when a frame's path says optim (a user's
         * own optimizer building it eagerly), else parameters or optimizer state. */
        if (grad_of(&p->devs[dev], size))
            return decided(b->stack_is_alloc && stack_names_optim(pm, b->stack)
                               ? SD_CAT_OPTIMIZER_STATE : SD_CAT_MODEL_STATE,
                           SD_EVIDENCE_SIZE, ev);
    }
    /* Alive when a backward began after its forward: saved for it. */
    if (ra->phase == SD_IN_FORWARD && ra->next_backward != UINT32_MAX &&
        (!b->freed || run_f >= ra->next_backward))
        return decided(SD_CAT_ACTIVATIONS, SD_EVIDENCE_LIFETIME, ev);
    return decided(SD_CAT_OTHER, SD_EVIDENCE_NONE, ev);
}
