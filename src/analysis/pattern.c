/* pattern.c - the known memory patterns of a growing group (pattern.h).
 *
 * Every rule reads the raw frames (innermost first) and, for the graph kept alive, the
 * growth shape; none guesses. The rules run in precedence order (the enum's) and the
 * first that matches wins. The evidence strings below are docs/patterns.md's "recognised by"
 * column (tests/docs/check_pattern_table.py compares them).
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "analysis/diff_internal.h"
#include "snapdiff/pattern.h"

typedef struct pattern_row {
    const char *code;
    const char *evidence;
} pattern_row;

static const pattern_row pattern_table[SD_PATTERN_COUNT] = {
    [SD_PATTERN_NONE] = {NULL, NULL},
    [SD_PATTERN_NO_STACK] = {"no-stack", "the blocks have no frames"},
    [SD_PATTERN_PARAMETER_GRADIENTS] =
        {"parameter-gradients", "a torch::autograd::AccumulateGrad frame"},
    [SD_PATTERN_OPTIMIZER_STATE] =
        {"optimizer-state", "the innermost Python frame (torch's mode shims skipped) is in "
                            "torch/optim/, or is a user function step in an optimizer "
                            "file or called by torch/optim/"},
    [SD_PATTERN_MODEL_COPY] =
        {"model-copy", "copy.py deepcopy or _reconstruct frames, or a user function named "
                       "like ema, copy, deepcopy, clone or shadow that clones or moves "
                       "tensors (clone, _to_copy, copy_, Module.to or _apply)"},
    [SD_PATTERN_HOOK] =
        {"hook-stores-tensors", "a user function named like hook, a frame in "
                                "torch/utils/hooks.py, or a user function other than "
                                "forward called by torch/nn/modules/module.py _call_impl"},
    [SD_PATTERN_CACHE] =
        {"user-cache", "a user function or file named like cache or memo, or a "
                       "functools or lru_cache frame"},
    [SD_PATTERN_EVAL_WITHOUT_NO_GRAD] =
        {"eval-without-no-grad", "forward activations (a forward or module call frame; "
                                 "not in backward, not under a torch decorate_context) "
                                 "under a user function named like eval, valid, test, "
                                 "predict, infer or generate"},
    [SD_PATTERN_GRAPH_KEPT_ALIVE] =
        {"graph-kept-alive", "forward activations (as for eval-without-no-grad) whose OLD "
                             "blocks are all still live in NEW, with "
                             "more beside them"},
    [SD_PATTERN_FRAGMENTATION] =
        {"fragmentation", "whole diff: reserved grew by at least 2 MiB while allocated "
                          "changed by at most a tenth of that"},
};

const char *sd_pattern_code(sd_pattern p)
{
    return (unsigned)p < SD_PATTERN_COUNT ? pattern_table[p].code : NULL;
}

const char *sd_pattern_evidence(sd_pattern p)
{
    return (unsigned)p < SD_PATTERN_COUNT ? pattern_table[p].evidence : NULL;
}

bool sd_pattern_parse(const char *code, sd_pattern *out)
{
    for (int i = 1; code && i < SD_PATTERN_COUNT; i++)
        if (strcmp(code, pattern_table[i].code) == 0) {
            if (out) *out = (sd_pattern)i;
            return true;
        }
    return false;
}

/* ---------- what frames say ---------- */

/* Does path `fn` contain `dir` ("/torch/optim/"), with either separator? */
static bool path_has(const char *fn, const char *dir)
{
    size_t m = strlen(dir);
    for (const char *p = fn; *p; p++) {
        size_t k = 0;
        while (k < m && p[k] &&
               (p[k] == dir[k] || (dir[k] == '/' && p[k] == '\\')))
            k++;
        if (k == m) return true;
    }
    return false;
}

/* The file's last component ("optimizer.py"). */
static const char *base_name(const char *fn)
{
    const char *b = fn;
    for (const char *p = fn; *p; p++)
        if (*p == '/' || *p == '\\') b = p + 1;
    return b;
}

/* Does an identifier have a word that starts with `prefix`? Words split at anything that
 * is not a letter or digit and where a lower-case letter meets an upper-case one
 * ("run_eval", "ModelEMA", "validationStep"); compared without case. */
static bool word_start(const char *s, const char *p)
{
    unsigned char c = (unsigned char)*p;
    if (!isalnum(c)) return false;
    if (p == s) return true;
    unsigned char prev = (unsigned char)p[-1];
    return !isalnum(prev) || (islower(prev) && isupper(c)) ||
           (isupper(prev) && isupper(c) && islower((unsigned char)p[1]));
}

static bool has_word(const char *s, const char *prefix)
{
    size_t m = strlen(prefix);
    for (const char *p = s; *p; p++)
        if (word_start(s, p) && strncasecmp(p, prefix, m) == 0) return true;
    return false;
}

static bool has_any_word(const char *s, const char *const *prefixes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (has_word(s, prefixes[i])) return true;
    return false;
}

/* "cache" anywhere (kvcache, get_cached), or a word starting "memo" that is not
 * "memory". */
static bool names_cache(const char *s)
{
    for (const char *p = s; *p; p++) {
        if (strncasecmp(p, "cache", 5) == 0) return true;
        if (word_start(s, p) && strncasecmp(p, "memo", 4) == 0 &&
            strncasecmp(p, "memory", 6) != 0)
            return true;
    }
    return false;
}

/* Does s contain `needle`, compared without case? */
static bool has_nocase(const char *s, const char *needle)
{
    size_t m = strlen(needle);
    for (; *s; s++)
        if (strncasecmp(s, needle, m) == 0) return true;
    return false;
}

typedef struct stack_view {
    const sd_attrib *a;
    const sd_frame *const *f;
    size_t n;
} stack_view;

static bool is_user(const stack_view *v, size_t i)
{
    return sdp_frame_is_python(v->f[i]) && sd_attrib_classify(v->a, v->f[i]) == SD_FRAME_USER;
}

static bool name_is(const sd_frame *f, const char *name) { return strcmp(f->name, name) == 0; }

/* The next Python frame outside frame i, or SIZE_MAX. */
static size_t outer_python(const stack_view *v, size_t i)
{
    for (size_t k = i + 1; k < v->n; k++)
        if (sdp_frame_is_python(v->f[k])) return k;
    return SIZE_MAX;
}

/* torch's mode shims, which run under any op in a device or function mode and say nothing
 * of who asked (torch/utils/_device.py, torch/overrides.py, __torch_function__). */
static bool is_torch_shim(const sd_frame *f)
{
    return path_has(f->filename, "/torch/utils/_device.py") ||
           path_has(f->filename, "/torch/overrides.py") ||
           (sdp_path_is_torch(f->filename) && name_is(f, "__torch_function__"));
}

/* The innermost Python frame, torch's mode shims skipped. */
static size_t innermost_python(const stack_view *v)
{
    for (size_t i = 0; i < v->n; i++)
        if (sdp_frame_is_python(v->f[i]) && !is_torch_shim(v->f[i])) return i;
    return SIZE_MAX;
}

static bool any_name_has(const stack_view *v, const char *needle)
{
    for (size_t i = 0; i < v->n; i++)
        if (strstr(v->f[i]->name, needle)) return true;
    return false;
}

static bool is_module_call(const sd_frame *f)
{
    return path_has(f->filename, "/torch/nn/modules/module.py") &&
           (name_is(f, "_call_impl") || name_is(f, "_wrapped_call_impl"));
}

/* Memory made by a forward pass that may record a graph: a frame named forward or a
 * module call; not on the autograd engine's thread (backward), and not under a torch
 * decorator context (torch/utils/_contextlib.py or torch/autograd/grad_mode.py
 * decorate_context: @torch.no_grad(), @torch.inference_mode()). */
static bool is_forward(const stack_view *v)
{
    if (any_name_has(v, "torch::autograd::Engine::")) return false;
    for (size_t i = 0; i < v->n; i++)
        if (sdp_frame_is_python(v->f[i]) && name_is(v->f[i], "decorate_context") &&
            sdp_path_is_torch(v->f[i]->filename))
            return false;
    for (size_t i = 0; i < v->n; i++) {
        const sd_frame *f = v->f[i];
        if (sdp_frame_is_python(f) && (name_is(f, "forward") || is_module_call(f))) return true;
    }
    return false;
}

/* ---------- the rules, in precedence order ---------- */

static bool rule_optimizer(const stack_view *v)
{
    size_t i = innermost_python(v);
    if (i == SIZE_MAX) return false;
    const sd_frame *f = v->f[i];
    if (path_has(f->filename, "/torch/optim/")) return true;
    if (!is_user(v, i) || !name_is(f, "step")) return false;
    if (has_nocase(base_name(f->filename), "optim")) return true;
    size_t o = outer_python(v, i);
    return o != SIZE_MAX && path_has(v->f[o]->filename, "/torch/optim/");
}

static bool rule_model_copy(const stack_view *v)
{
    static const char *const copy_words[] = {"ema", "copy", "deepcopy", "clone", "shadow"};
    static const char *const copy_ops[] = {"at::_ops::clone::", "at::_ops::_to_copy::",
                                           "at::_ops::copy_::", "THPVariable_clone"};
    bool named = false, copies = false;
    for (size_t i = 0; i < v->n; i++) {
        const sd_frame *f = v->f[i];
        if (sdp_frame_is_python(f) && sd_attrib_classify(v->a, f) == SD_FRAME_STDLIB &&
            strcmp(base_name(f->filename), "copy.py") == 0 &&
            (name_is(f, "deepcopy") || name_is(f, "_reconstruct")))
            return true;
        if (is_user(v, i) && has_any_word(f->name, copy_words, SDP_ARRAY_LEN(copy_words)))
            named = true;
        if (path_has(f->filename, "/torch/nn/modules/module.py") &&
            (name_is(f, "to") || name_is(f, "_apply")))
            copies = true;
        for (size_t k = 0; k < SDP_ARRAY_LEN(copy_ops); k++)
            if (!sdp_frame_is_python(f) && strstr(f->name, copy_ops[k])) copies = true;
    }
    return named && copies;
}

static bool rule_hook(const stack_view *v)
{
    for (size_t i = 0; i < v->n; i++) {
        const sd_frame *f = v->f[i];
        if (!sdp_frame_is_python(f)) continue;
        if (path_has(f->filename, "/torch/utils/hooks.py")) return true;
        if (!is_user(v, i)) continue;
        if (has_word(f->name, "hook")) return true;
        size_t o = outer_python(v, i);
        if (o != SIZE_MAX && is_module_call(v->f[o]) && !name_is(f, "forward") &&
            f->name[0] != '<')
            return true;
    }
    return false;
}

static bool rule_cache(const stack_view *v)
{
    for (size_t i = 0; i < v->n; i++) {
        const sd_frame *f = v->f[i];
        if (strstr(f->name, "lru_cache")) return true;
        if (sdp_frame_is_python(f) && strcmp(base_name(f->filename), "functools.py") == 0 &&
            sd_attrib_classify(v->a, f) == SD_FRAME_STDLIB)
            return true;
        if (is_user(v, i) && (names_cache(f->name) || names_cache(base_name(f->filename))))
            return true;
    }
    return false;
}

static bool rule_eval(const stack_view *v)
{
    static const char *const eval_words[] = {"eval", "valid", "test", "predict", "infer",
                                             "generate"};
    if (!is_forward(v)) return false;
    for (size_t i = 0; i < v->n; i++)
        if (is_user(v, i) &&
            has_any_word(v->f[i]->name, eval_words, SDP_ARRAY_LEN(eval_words)))
            return true;
    return false;
}

static bool rule_graph_kept(const stack_view *v, const sd_pattern_growth *g)
{
    /* Every OLD block is still live (kept) and more have joined: the floor rose. */
    return g->old_blocks > 0 && g->kept_blocks >= g->old_blocks &&
           g->new_blocks > g->old_blocks && is_forward(v);
}

sd_pattern sd_pattern_classify(const sd_attrib *a, const sd_frame *const *frames, size_t n,
                               const sd_pattern_growth *g)
{
    if (!a || !g || g->new_bytes <= g->old_bytes) return SD_PATTERN_NONE;
    if (n == 0 || !frames) return SD_PATTERN_NO_STACK;
    stack_view v = {.a = a, .f = frames, .n = n};
    if (any_name_has(&v, "torch::autograd::AccumulateGrad::"))
        return SD_PATTERN_PARAMETER_GRADIENTS;
    if (rule_optimizer(&v)) return SD_PATTERN_OPTIMIZER_STATE;
    if (rule_model_copy(&v)) return SD_PATTERN_MODEL_COPY;
    if (rule_hook(&v)) return SD_PATTERN_HOOK;
    if (rule_cache(&v)) return SD_PATTERN_CACHE;
    if (rule_eval(&v)) return SD_PATTERN_EVAL_WITHOUT_NO_GRAD;
    if (rule_graph_kept(&v, g)) return SD_PATTERN_GRAPH_KEPT_ALIVE;
    return SD_PATTERN_NONE;
}

sd_pattern sd_pattern_of_totals(int64_t allocated_delta, int64_t reserved_delta)
{
    if (reserved_delta < (int64_t)SD_PATTERN_FRAG_MIN_RESERVED) return SD_PATTERN_NONE;
    uint64_t moved = allocated_delta < 0 ? (uint64_t)0 - (uint64_t)allocated_delta
                                         : (uint64_t)allocated_delta;
    return moved <= (uint64_t)reserved_delta / 10 ? SD_PATTERN_FRAGMENTATION : SD_PATTERN_NONE;
}
