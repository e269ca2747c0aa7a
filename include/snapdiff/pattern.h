/* pattern.h - which known memory pattern a growing diff group is, from its stack.
 *
 * Each growing group of a diff (diff.h) is matched against the brief's patterns (parameter
 * gradients, optimizer state, model copies, hooks that store tensors, caches in user
 * code, evaluation without torch.no_grad(), an autograd graph kept alive across steps,
 * memory recorded without a stack) from the raw frames of its representative stack and
 * the shape of its growth (old and new bytes and blocks). Matching is conservative: a
 * pattern needs clear evidence, and when several match the first in enum order wins
 * (the documented precedence). No match is an answer: SD_PATTERN_NONE (JSON null).
 *
 * One pattern is about the whole diff, not a group: SD_PATTERN_FRAGMENTATION, reserved
 * memory that grew while allocated memory stayed flat (sd_pattern_of_totals).
 *
 * The codes are stable strings (JSON `pattern`); the hint that names the fix is worded by
 * the renderers from the code. docs/patterns.md's table of patterns is checked against this
 * table (tests/docs/check_pattern_table.py).
 */
#ifndef SNAPDIFF_PATTERN_H
#define SNAPDIFF_PATTERN_H

#include <stdbool.h>
#include <stdint.h>
#include "attrib.h"
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* In precedence order: when several match a group, the first one wins. */
typedef enum sd_pattern {
    SD_PATTERN_NONE,               /* no clear evidence: JSON null */
    SD_PATTERN_NO_STACK,           /* no frames: recorded before _record_memory_history */
    SD_PATTERN_PARAMETER_GRADIENTS,/* autograd AccumulateGrad: the .grad of parameters */
    SD_PATTERN_OPTIMIZER_STATE,    /* torch/optim frames, or a user optimizer's step */
    SD_PATTERN_MODEL_COPY,         /* copy.deepcopy, or to/clone under an ema/copy function */
    SD_PATTERN_HOOK,               /* a hook function (named *hook*, or run by a module) */
    SD_PATTERN_CACHE,              /* a user function or file named cache/memo, lru_cache */
    SD_PATTERN_EVAL_WITHOUT_NO_GRAD,/* forward activations under an eval-like function */
    SD_PATTERN_GRAPH_KEPT_ALIVE,   /* forward activations kept from OLD, and more of them */
    SD_PATTERN_FRAGMENTATION,      /* diff level: reserved grew, allocated flat */
    SD_PATTERN_COUNT
} sd_pattern;

/* The growth of one group: what the shape rules look at. */
typedef struct sd_pattern_growth {
    uint64_t old_bytes, new_bytes;
    uint64_t old_blocks, new_blocks;
    uint64_t kept_blocks;   /* blocks of NEW still live from OLD (same address, size, stack) */
} sd_pattern_growth;

/* The stable code of a pattern ("parameter-gradients", ...); NULL for SD_PATTERN_NONE and
 * out of range. */
const char *sd_pattern_code(sd_pattern p);
/* The pattern whose code is `code`. @return false when none has it. */
bool sd_pattern_parse(const char *code, sd_pattern *out);

/* The diff-level pattern: SD_PATTERN_FRAGMENTATION when reserved grew by at least
 * SD_PATTERN_FRAG_MIN_RESERVED bytes and allocated changed by at most a tenth of that
 * growth (either way); else SD_PATTERN_NONE. */
#define SD_PATTERN_FRAG_MIN_RESERVED (2u << 20)

/* ---- Experimental (docs/architecture.md, "Tiers"): declared only where the includer
 * defines SNAPDIFF_EXPERIMENTAL; exported in the node LIBSNAPDIFF_EXPERIMENTAL_0.3, with no
 * API or ABI promise (they may change in any release). */
#ifdef SNAPDIFF_EXPERIMENTAL
/* How the pattern is recognised, one line (for documentation and --help-like tables). */
const char *sd_pattern_evidence(sd_pattern p);
/* The pattern of a group's stack frames[0..n) (innermost first) with growth `g`; `a`
 * classifies the frames (user, torch, native, ...). Groups that did not grow are
 * SD_PATTERN_NONE. Never SD_PATTERN_FRAGMENTATION. */
sd_pattern sd_pattern_classify(const sd_attrib *a, const sd_frame *const *frames, size_t n,
                               const sd_pattern_growth *g);
sd_pattern sd_pattern_of_totals(int64_t allocated_delta, int64_t reserved_delta);
#endif /* SNAPDIFF_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif
