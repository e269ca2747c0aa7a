/* pattern_words.c - the one-line hint (the fix) of each pattern code (pattern.h).
 *
 * The wording follows the brief's list of culprits and remedies; docs/patterns.md's table of
 * patterns repeats it word for word (tests/docs/check_pattern_table.py compares them).
 */
#include "render/pattern_words.h"

static const char *const pattern_hints[SD_PATTERN_COUNT] = {
    [SD_PATTERN_NONE] = NULL,
    [SD_PATTERN_NO_STACK] =
        "allocated before recording began: call "
        "torch.cuda.memory._record_memory_history() before the model is built",
    [SD_PATTERN_PARAMETER_GRADIENTS] =
        "parameter gradients (.grad), made once by the first backward: not a leak unless "
        "it keeps growing",
    [SD_PATTERN_OPTIMIZER_STATE] =
        "optimizer state, made once on the first optimizer step: not a leak unless it "
        "keeps growing",
    [SD_PATTERN_MODEL_COPY] =
        "a model copy (EMA, deepcopy): make it once, outside the loop, and update it in "
        "place under torch.no_grad()",
    [SD_PATTERN_HOOK] =
        "a hook stores tensors: keep .detach().cpu() copies or .item() numbers, and "
        "remove the hook when done",
    [SD_PATTERN_CACHE] =
        "a cache in your code keeps GPU tensors: bound it, clear it, or store "
        ".detach().cpu() copies",
    [SD_PATTERN_EVAL_WITHOUT_NO_GRAD] =
        "evaluation without torch.no_grad(): wrap it in torch.no_grad(); keep predictions "
        "as .detach().cpu() or .item()",
    [SD_PATTERN_GRAPH_KEPT_ALIVE] =
        "the autograd graph is kept alive across steps: accumulate loss.item(), not loss, "
        "and .detach() outputs and logits you keep",
    [SD_PATTERN_FRAGMENTATION] =
        "fragmentation, not a leak: the allocator holds more, live tensors did not grow; "
        "try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
};

const char *sdp_pattern_hint(sd_pattern p)
{
    return (unsigned)p < SD_PATTERN_COUNT ? pattern_hints[p] : NULL;
}
