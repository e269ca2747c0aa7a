/* category.h - what live memory is (parameters, gradients, optimizer state, activations,
 * temporaries, ...) and when a trace entry ran (forward, backward, optimizer step).
 *
 * Users think in parameters, gradients, optimizer state and activations, and in forward,
 * backward and optimizer step. The rules (docs/categories.md) decide from evidence only:
 *  - frames: the stack that allocated a block (torch/optim/, the autograd engine and its
 *    `*Backward` nodes, AccumulateGrad, module set-up: torch.nn's _apply / to() / cuda() /
 *    load_state_dict / reset_parameters / __init__, a module's forward), and the
 *    forward_frames torch writes for memory allocated in a backward;
 *  - lifetime: when, in the trace, the block was allocated and freed (a forward allocation
 *    alive past its phase is an activation; one freed in its phase a temporary; a block
 *    allocated before recording and freed in a backward an activation of an earlier forward,
 *    never freed a persistent one; a forward's kept in a trace with no backward after it an
 *    activation with no backward recorded);
 *  - size (0.3): a backward buffer of a parameter's size alive at the optimizer step is a
 *    gradient accumulateGrad stole; a block from before recording of a gradient's size is
 *    a parameter, or model state when parameters and optimizer state cannot be told apart.
 * A block neither decides is `other` (or `pre_trace`): null beats a wrong label. Every live
 * block gets exactly one category, so the categories of a moment add up to its total.
 */
#ifndef SNAPDIFF_CATEGORY_H
#define SNAPDIFF_CATEGORY_H

#include <stdbool.h>
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sd_category {
    SD_CAT_PARAMETERS,        /* module set-up frames */
    SD_CAT_GRADIENTS,         /* AccumulateGrad */
    SD_CAT_OPTIMIZER_STATE,   /* torch/optim frames, alive past its optimizer phase */
    SD_CAT_ACTIVATIONS,       /* allocated in a forward, alive past it */
    SD_CAT_TEMPORARIES,       /* allocated and freed within one phase */
    SD_CAT_PRE_TRACE,         /* allocated before recording, nothing else known */
    SD_CAT_PERSISTENT,        /* allocated before recording, never freed in the trace */
    SD_CAT_OTHER,             /* no rule decides */
    SD_CAT_MODEL_STATE,       /* allocated before recording, a gradient's size: parameters
                               * and optimizer state that cannot be told apart (0.3) */
    SD_CATEGORY_COUNT
} sd_category;

/* "parameters", "gradients", "optimizer_state", "activations", "temporaries", "pre_trace",
 * "persistent", "other", "model_state"; NULL past the count. Tables list the categories in
 * this enum's order (model_state, added last for the ABI, is printed after other). */
const char *sd_category_name(sd_category c);

/* What decided a block's category. */
typedef enum sd_evidence {
    SD_EVIDENCE_FRAMES,       /* the allocation's frames */
    SD_EVIDENCE_LIFETIME,     /* when it was allocated and freed in the trace */
    SD_EVIDENCE_NONE,         /* nothing (other, pre_trace) */
    SD_EVIDENCE_SIZE,         /* its size equals a parameter's or a gradient's (0.3):
                               * first-backward gradients, model state from before recording */
    SD_EVIDENCE_NO_BACKWARD,  /* lifetime, in a trace that recorded no backward after its
                               * forward: activations saved for a backward not recorded (0.3) */
    SD_EVIDENCE_COUNT
} sd_evidence;

/* "frames", "lifetime", "none", "size", "no_backward". Unused by the tool (its views word the evidence), kept
 * for library users: every public enum has its stable name, as sd_group_by_name. */
const char *sd_evidence_name(sd_evidence e);

/* The phase of a training step a trace entry belongs to. */
typedef enum sd_step_phase {
    SD_IN_FORWARD,
    SD_IN_BACKWARD,
    SD_IN_OPTIMIZER,
    SD_IN_OTHER,              /* data loading, evaluation, checkpoints; or unknown */
    SD_IN_SETUP,              /* building the model and moving it (0.3): module set-up
                               * frames, and the trace's start before the first forward
                               * when it builds modules (a Python __init__ frame) */
    SD_STEP_PHASE_COUNT
} sd_step_phase;

/* "forward", "backward", "optimizer", "other", "setup". */
const char *sd_step_phase_name(sd_step_phase p);

/* The bytes of one category at one moment. bytes = the sum over evidence. */
typedef struct sd_category_total {
    sd_category category;
    uint64_t bytes, blocks;
    uint64_t frames_bytes, lifetime_bytes;   /* decided by frames / by lifetime (with
                                              * no_backward_bytes) */
    uint64_t size_bytes;                     /* decided by size (0.3) */
    uint64_t no_backward_bytes;              /* of lifetime_bytes: activations of a forward
                                              * no recorded backward followed (0.3) */
} sd_category_total;

/* How a total was decided: the kinds with bytes, joined by "+" in the order "frames",
 * "lifetime", "size" ("frames", "frames+lifetime", "lifetime+size", ...), or "none".
 * no_backward_bytes count as lifetime. */
const char *sd_category_total_evidence(const sd_category_total *t);

/* The phases and steps of every device's trace, and the frames' verdict on each stack.
 * Phases per entry (docs/categories.md): an alloc takes the phase its frames show; an
 * alloc whose frames show nothing, and every other entry, continues the phase before it;
 * the trace's start before its first forward, backward or optimizer alloc is the set-up
 * when it builds modules. Steps are counted from the trace's first entry: step 1 until the
 * first optimizer phase ends, step 2 after it, ...; a trace with no optimizer phase has no
 * steps (0), nor has the set-up. Creating them also walks each trace once for the
 * evidence by size (the sizes of parameters and of gradients). */
typedef struct sd_phases sd_phases;

/* One live block, as the trace knows it. */
typedef struct sd_block_life {
    uint32_t stack;           /* its frames */
    bool stack_is_alloc;      /* the frames are its allocation's: false for a block from
                               * before recording known only by its free, whose frames may
                               * be the free's (torch records the free's stack then) */
    bool has_trace;           /* the device recorded a trace: lifetime rules apply */
    bool in_trace;            /* allocated at entry alloc_entry of the trace */
    size_t alloc_entry;
    bool freed;               /* released at entry free_entry of the trace */
    size_t free_entry;
    uint64_t size;            /* its size as torch's trace records it (0.3): the request,
                               * a block's requested_size; 0: the trace entry's (alloc_entry
                               * when in_trace, else free_entry when freed), else unknown
                               * (no rule by size) */
} sd_block_life;

/* ---- Experimental (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_EXPERIMENTAL; exported in the node LIBSNAPDIFF_EXPERIMENTAL_0.3, with no
 * API or ABI promise (they may change in any release). */
#ifdef SNAPDIFF_EXPERIMENTAL
/* @return the phases of every device of `s` (which must outlive them), or NULL with err
 * (SD_ENOMEM). */
sd_phases *sd_phases_create(const sd_snapshot *s, sd_error *err);
void sd_phases_free(sd_phases *p);
/* The phase of entry `entry` of device index `dev` and its step (0 when the trace shows no
 * step). @return false (phase other, step 0) for an entry or device that has none. */
bool sd_phases_at(const sd_phases *p, size_t dev, size_t entry, sd_step_phase *phase,
                  uint32_t *step);
/* Do the allocs' request sizes (as a multiset) differ between the complete steps of the
 * trace of device index `dev`? A step is complete when it is not the first (the trace may
 * start inside it) and an optimizer run ends it. @return -1 (fewer than two complete
 * steps: unknown), 0 (every complete step asks for the same sizes) or 1. */
int sd_phases_request_sizes_vary(const sd_phases *p, size_t dev);
/* The category of a block of device index `dev`, and what decided it. */
sd_category sd_category_of(const sd_phases *p, size_t dev, const sd_block_life *b,
                           sd_evidence *evidence);
#endif /* SNAPDIFF_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif
