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

/* The frames' verdict on a stack, strongest last (the strongest frame anywhere wins). */
enum hint {
    H_UNSET, H_NONE, H_PYTHON, H_FORWARD, H_PARAM, H_OPTIM, H_BACKWARD, H_ACCUM
};

typedef struct run_rec {
    uint8_t phase;
    uint32_t step;
    uint32_t next_backward;   /* the first backward run after this one; UINT32_MAX: none */
} run_rec;

typedef struct dev_phases {
    size_t n;                 /* entries */
    uint32_t *run;            /* per entry: its run (a mapping of run_mapped bytes) */
    size_t run_mapped;
    run_rec *runs; size_t n_runs;
    uint32_t steps;
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
    "persistent", "other"};
static const char *const EVIDENCE_NAMES[SD_EVIDENCE_COUNT] = {"frames", "lifetime", "none"};
static const char *const PHASE_NAMES[SD_STEP_PHASE_COUNT] = {"forward", "backward",
                                                             "optimizer", "other"};

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
    if (t->frames_bytes && t->lifetime_bytes) return "frames+lifetime";
    if (t->frames_bytes) return "frames";
    if (t->lifetime_bytes) return "lifetime";
    /* Blocks of 0 bytes still have a rule; a total with bytes from neither has none. */
    return "none";
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

static uint8_t stack_hint(sd_phases *p, uint32_t stack)
{
    if (stack >= p->n_stacks) stack = 0;
    if (p->hints[stack] != H_UNSET) return p->hints[stack];
    size_t n = 0;
    const uint32_t *ids = sd_snapshot_stack(p->snap, stack, &n);
    uint8_t h = H_NONE;
    for (size_t i = 0; i < n && h != H_ACCUM; i++) {
        uint8_t fh = frame_hint(sd_snapshot_frame(p->snap, ids[i]));
        if (fh > h) h = fh;
    }
    /* forward_frames are written only for memory allocated in a backward. */
    if (h < H_BACKWARD && sd_snapshot_stack_context(p->snap, stack)->forward_stack)
        h = H_BACKWARD;
    p->hints[stack] = h;
    return h;
}

/* ---------- phases ---------- */

/* The phase an alloc's frames name, or SD_STEP_PHASE_COUNT when they name none. */
static unsigned phase_of_hint(uint8_t h, unsigned cur)
{
    switch (h) {
    case H_ACCUM: case H_BACKWARD: return SD_IN_BACKWARD;
    case H_OPTIM: return SD_IN_OPTIMIZER;
    case H_FORWARD: return SD_IN_FORWARD;
    case H_PARAM: return SD_IN_OTHER;
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
    /* The phase before the first alloc that names one is that alloc's. */
    unsigned cur = SD_IN_OTHER;
    for (size_t i = 0; i < n; i++) {
        if (d->trace[i].action != SD_ACT_ALLOC) continue;
        unsigned ph = phase_of_hint(stack_hint(p, d->trace[i].stack), SD_IN_OTHER);
        if (ph != SD_STEP_PHASE_COUNT && stack_hint(p, d->trace[i].stack) != H_PYTHON) {
            cur = ph;
            break;
        }
    }
    size_t cap = 0;
    uint32_t step = 1;
    bool any_optim = false;
    for (size_t i = 0; i < n; i++) {
        unsigned ph = cur;
        if (d->trace[i].action == SD_ACT_ALLOC) {
            unsigned named = phase_of_hint(stack_hint(p, d->trace[i].stack), cur);
            if (named != SD_STEP_PHASE_COUNT) ph = named;
        }
        if (i == 0 || ph != cur) {
            if (i && cur == SD_IN_OPTIMIZER) step++;
            if (sdp_grow((void **)&dp->runs, &cap, dp->n_runs + 1, sizeof *dp->runs, NULL))
                return SD_ENOMEM;
            dp->runs[dp->n_runs++] = (run_rec){(uint8_t)ph, step, UINT32_MAX};
            cur = ph;
        }
        if (ph == SD_IN_OPTIMIZER) any_optim = true;
        dp->run[i] = (uint32_t)(dp->n_runs - 1);
    }
    if (!any_optim)
        for (size_t r = 0; r < dp->n_runs; r++) dp->runs[r].step = 0;
    uint32_t next = UINT32_MAX;
    for (size_t r = dp->n_runs; r-- > 0;) {
        dp->runs[r].next_backward = next;
        if (dp->runs[r].phase == SD_IN_BACKWARD) next = (uint32_t)r;
    }
    dp->steps = any_optim ? dp->runs[dp->n_runs - 1].step : 0;
    /* A trace that ends in the optimizer step has completed that step. */
    return SD_OK;
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
        ok = device_phases(p, sd_snapshot_device(s, i), &p->devs[i]) == SD_OK;
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
 * by when it was freed. */
static sd_category before_trace(const sd_phases *p, size_t dev, const sd_block_life *b,
                                uint8_t h, sd_evidence *ev)
{
    if (h == H_OPTIM) return decided(SD_CAT_OPTIMIZER_STATE, SD_EVIDENCE_FRAMES, ev);
    if (!b->freed) return decided(SD_CAT_PERSISTENT, SD_EVIDENCE_LIFETIME, ev);
    sd_step_phase ph;
    if (sd_phases_at(p, dev, b->free_entry, &ph, NULL) && ph == SD_IN_BACKWARD)
        return decided(SD_CAT_ACTIVATIONS, SD_EVIDENCE_LIFETIME, ev);
    return decided(SD_CAT_PRE_TRACE, SD_EVIDENCE_LIFETIME, ev);
}

sd_category sd_category_of(const sd_phases *p, size_t dev, const sd_block_life *b,
                           sd_evidence *evidence)
{
    sd_evidence dummy;
    sd_evidence *ev = evidence ? evidence : &dummy;
    /* The hint cache fills lazily; the handle is logically const. */
    uint8_t h = b->stack_is_alloc ? stack_hint((sd_phases *)p, b->stack) : H_NONE;
    if (h == H_ACCUM) return decided(SD_CAT_GRADIENTS, SD_EVIDENCE_FRAMES, ev);
    if (h == H_PARAM) return decided(SD_CAT_PARAMETERS, SD_EVIDENCE_FRAMES, ev);
    if (!b->has_trace) {
        if (h == H_OPTIM) return decided(SD_CAT_OPTIMIZER_STATE, SD_EVIDENCE_FRAMES, ev);
        return decided(SD_CAT_OTHER, SD_EVIDENCE_NONE, ev);
    }
    if (!b->in_trace) return before_trace(p, dev, b, h, ev);
    uint32_t run_a = 0, run_f = UINT32_MAX;
    const run_rec *ra = run_at(p, dev, b->alloc_entry, &run_a);
    if (!ra) return decided(SD_CAT_OTHER, SD_EVIDENCE_NONE, ev);
    if (b->freed) run_at(p, dev, b->free_entry, &run_f);
    bool same_run = b->freed && run_f == run_a;
    if (h == H_OPTIM || ra->phase == SD_IN_OPTIMIZER)
        return decided(same_run ? SD_CAT_TEMPORARIES : SD_CAT_OPTIMIZER_STATE,
                       h == H_OPTIM && !same_run ? SD_EVIDENCE_FRAMES : SD_EVIDENCE_LIFETIME, ev);
    if (same_run) return decided(SD_CAT_TEMPORARIES, SD_EVIDENCE_LIFETIME, ev);
    /* Alive when a backward began after its forward: saved for it. */
    if (ra->phase == SD_IN_FORWARD && ra->next_backward != UINT32_MAX &&
        (!b->freed || run_f >= ra->next_backward))
        return decided(SD_CAT_ACTIVATIONS, SD_EVIDENCE_LIFETIME, ev);
    return decided(SD_CAT_OTHER, SD_EVIDENCE_NONE, ev);
}
