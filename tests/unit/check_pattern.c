/* check_pattern.c - unit tests of the pattern classifier (src/analysis/pattern.c).
 *
 * Tables of stacks (innermost frame first, cut to the frames each rule reads plus the
 * C++ frames around them) with the pattern worked out by hand from the rules in
 * include/snapdiff/pattern.h and their precedence; the growth-shape rules; the table of
 * codes; the diff-level rule; then the diffs of testdata/patterns/ (written by
 * testdata/make_pattern_fixtures.py), whose top growing group must get the pattern each
 * pair was built to show.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "render/pattern_words.h"
#include "snapdiff/diff.h"
#include "snapdiff/pattern.h"

#include "check_helpers.h"

#define LEN SDP_TEST_LEN
#define TORCH "/home/u/venv/lib/python3.11/site-packages/torch/"
#define STD "/usr/lib/python3.11/"
#define MAX_FRAMES 8

static const sd_frame UNWIND = {"??", "torch::unwind::unwind()", 0};
static const sd_frame MALLOC = {"CUDACachingAllocator.cpp",
                                "c10::cuda::CUDACachingAllocator::Native::"
                                "DeviceCachingAllocator::malloc(signed char, unsigned long, "
                                "CUstream_st*)", 0};
static const sd_frame CLONE = {"??", "torch::autograd::THPVariable_clone(_object*, "
                                     "_object*, _object*)", 0};
static const sd_frame TO_COPY = {"??", "at::_ops::_to_copy::call(at::Tensor const&, ...)", 0};
static const sd_frame MM = {"RegisterCUDA.cpp", "at::(anonymous namespace)::wrapper_CUDA_mm("
                                                "at::Tensor const&, at::Tensor const&)", 0};
static const sd_frame ACC = {"??", "torch::autograd::AccumulateGrad::apply(std::vector<"
                                   "at::Tensor, std::allocator<at::Tensor> >&&)", 0};
static const sd_frame ENGINE = {"??", "torch::autograd::Engine::thread_main(std::shared_ptr<"
                                      "torch::autograd::GraphTask> const&)", 0};
static const sd_frame EVAL_FRAME = {"??", "_PyEval_EvalFrameDefault", 0};

static const sd_frame LINEAR = {TORCH "nn/modules/linear.py", "forward", 116};
static const sd_frame CALL = {TORCH "nn/modules/module.py", "_call_impl", 1527};
static const sd_frame WCALL = {TORCH "nn/modules/module.py", "_wrapped_call_impl", 1518};
static const sd_frame MODEL_FWD = {"/p/model.py", "forward", 44};
static const sd_frame STEP = {"/p/train.py", "train_step", 88};
static const sd_frame MAIN = {"/p/train.py", "main", 130};
static const sd_frame ADAM = {TORCH "optim/adamw.py", "_init_group", 156};
static const sd_frame OPT_WRAP = {TORCH "optim/optimizer.py", "wrapper", 484};
static const sd_frame LION = {"/p/lion.py", "step", 57};
static const sd_frame MY_OPT = {"/p/my_optimizer.py", "step", 30};
static const sd_frame OTHER_STEP = {"/p/sim.py", "step", 12};
static const sd_frame DEEPCOPY = {STD "copy.py", "deepcopy", 153};
static const sd_frame RECONSTRUCT = {STD "copy.py", "_reconstruct", 265};
static const sd_frame EMA = {"/p/ema.py", "update_ema", 20};
static const sd_frame MODEL_EMA = {"/p/ema.py", "ModelEMA", 9};
static const sd_frame MODULE_TO = {TORCH "nn/modules/module.py", "to", 1160};
static const sd_frame SAVE = {"/p/features.py", "save_activation", 22};
static const sd_frame GRAD_HOOK = {"/p/train.py", "grad_hook", 40};
static const sd_frame HOOKS_PY = {TORCH "utils/hooks.py", "hook", 12};
static const sd_frame CACHE_GET = {"/p/data/feature_cache.py", "get", 41};
static const sd_frame CACHED = {"/p/model.py", "get_cached_rope", 70};
static const sd_frame MEMO = {"/p/util.py", "memoized_embed", 5};
static const sd_frame MEMORY = {"/p/util.py", "allocate_memory", 5};
static const sd_frame LRU = {"??", "bounded_lru_cache_wrapper", 0};
static const sd_frame EVALUATE = {"/p/train.py", "evaluate", 121};
static const sd_frame RUN_VALIDATION = {"/p/train.py", "run_validation", 121};
static const sd_frame TEST_EPOCH = {"/p/train.py", "testEpoch", 121};
static const sd_frame GENERATE = {"/p/gen.py", "generate", 9};
static const sd_frame LATEST = {"/p/train.py", "load_latest", 9};
static const sd_frame CONTEST = {"/p/train.py", "contest", 9};
static const sd_frame NO_GRAD = {TORCH "utils/_contextlib.py", "decorate_context", 115};
static const sd_frame DEVICE_SHIM = {TORCH "utils/_device.py", "__torch_function__", 104};
static const sd_frame CS336_STEP = {"/p/cs336_basics/optimizer.py", "step", 74};
static const sd_frame LOSS_FWD = {TORCH "nn/modules/loss.py", "forward", 1179};

typedef struct pattern_case {
    const char *what;
    const sd_frame *frames[MAX_FRAMES];
    sd_pattern_growth growth;
    sd_pattern want;
} pattern_case;

/* Growth shapes: first appearance; more blocks with every OLD one kept; more blocks
 * none kept; shrinking. */
#define FIRST {0, 4096, 0, 2, 0}
#define KEPT_MORE {4096, 8192, 2, 4, 2}
#define NOT_KEPT {4096, 8192, 2, 4, 0}
#define SHRINK {8192, 4096, 4, 2, 2}

static const pattern_case cases[] = {
    {"no frames", {NULL}, FIRST, SD_PATTERN_NO_STACK},
    {"no frames, not growing", {NULL}, SHRINK, SD_PATTERN_NONE},
    {"AccumulateGrad on the engine thread", {&UNWIND, &MALLOC, &ACC, &ENGINE}, FIRST,
     SD_PATTERN_PARAMETER_GRADIENTS},
    {"AccumulateGrad wins over everything after it",
     {&MALLOC, &ACC, &ADAM, &EVALUATE}, KEPT_MORE, SD_PATTERN_PARAMETER_GRADIENTS},
    {"adamw _init_group", {&MALLOC, &ADAM, &OPT_WRAP, &STEP, &MAIN}, FIRST,
     SD_PATTERN_OPTIMIZER_STATE},
    {"a user step called by torch/optim", {&MALLOC, &LION, &EVAL_FRAME, &OPT_WRAP, &STEP},
     FIRST, SD_PATTERN_OPTIMIZER_STATE},
    {"a user step in an optimizer file", {&MALLOC, &MY_OPT, &STEP}, FIRST,
     SD_PATTERN_OPTIMIZER_STATE},
    {"a user optimizer's step under torch's device mode",
     {&MALLOC, &DEVICE_SHIM, &EVAL_FRAME, &CS336_STEP, &STEP}, FIRST,
     SD_PATTERN_OPTIMIZER_STATE},
    {"a user step elsewhere is not optimizer state", {&MALLOC, &OTHER_STEP, &MAIN}, FIRST,
     SD_PATTERN_NONE},
    {"torch/optim outside the innermost Python frame", {&MALLOC, &LINEAR, &CALL, &OPT_WRAP},
     FIRST, SD_PATTERN_NONE},
    {"copy.deepcopy", {&CLONE, &DEEPCOPY, &RECONSTRUCT, &DEEPCOPY, &MAIN}, FIRST,
     SD_PATTERN_MODEL_COPY},
    {"clone under update_ema", {&MALLOC, &CLONE, &EMA, &STEP}, FIRST, SD_PATTERN_MODEL_COPY},
    {"Module.to under ModelEMA", {&MALLOC, &TO_COPY, &MODULE_TO, &MODEL_EMA, &MAIN}, FIRST,
     SD_PATTERN_MODEL_COPY},
    {"update_ema without a copy op", {&MALLOC, &MM, &EMA, &STEP}, FIRST, SD_PATTERN_NONE},
    {"clone without an ema/copy function", {&MALLOC, &CLONE, &STEP}, FIRST, SD_PATTERN_NONE},
    {"a hook run by module.py", {&CLONE, &SAVE, &EVAL_FRAME, &CALL, &WCALL, &MODEL_FWD},
     FIRST, SD_PATTERN_HOOK},
    {"a function named like hook", {&MALLOC, &GRAD_HOOK, &MAIN}, FIRST, SD_PATTERN_HOOK},
    {"torch/utils/hooks.py", {&MALLOC, &HOOKS_PY, &STEP}, FIRST, SD_PATTERN_HOOK},
    {"forward called by module.py is no hook", {&MM, &MODEL_FWD, &CALL, &WCALL, &STEP},
     FIRST, SD_PATTERN_NONE},
    {"a cache file", {&TO_COPY, &CACHE_GET, &STEP}, FIRST, SD_PATTERN_CACHE},
    {"a cached function", {&MM, &CACHED, &STEP}, FIRST, SD_PATTERN_CACHE},
    {"a memoized function", {&MM, &MEMO, &STEP}, FIRST, SD_PATTERN_CACHE},
    {"memory is not memo", {&MM, &MEMORY, &STEP}, FIRST, SD_PATTERN_NONE},
    {"an lru_cache frame", {&MM, &LRU, &STEP}, FIRST, SD_PATTERN_CACHE},
    {"forward under evaluate", {&MM, &LINEAR, &CALL, &MODEL_FWD, &CALL, &EVALUATE, &MAIN},
     FIRST, SD_PATTERN_EVAL_WITHOUT_NO_GRAD},
    {"forward under run_validation", {&MM, &MODEL_FWD, &CALL, &RUN_VALIDATION}, FIRST,
     SD_PATTERN_EVAL_WITHOUT_NO_GRAD},
    {"forward under testEpoch", {&MM, &MODEL_FWD, &CALL, &TEST_EPOCH}, FIRST,
     SD_PATTERN_EVAL_WITHOUT_NO_GRAD},
    {"forward under generate", {&MM, &MODEL_FWD, &CALL, &GENERATE}, FIRST,
     SD_PATTERN_EVAL_WITHOUT_NO_GRAD},
    {"load_latest and contest are not test", {&MM, &MODEL_FWD, &CALL, &LATEST, &CONTEST},
     FIRST, SD_PATTERN_NONE},
    {"forward under a @torch.no_grad() predict",
     {&MM, &MODEL_FWD, &CALL, &GENERATE, &NO_GRAD, &MAIN}, FIRST, SD_PATTERN_NONE},
    {"a kept graph under a decorator context", {&MM, &MODEL_FWD, &CALL, &NO_GRAD, &STEP},
     KEPT_MORE, SD_PATTERN_NONE},
    {"evaluate without a forward", {&MALLOC, &CLONE, &EVALUATE, &MAIN}, FIRST,
     SD_PATTERN_NONE},
    {"backward under evaluate is not forward", {&MM, &ENGINE, &MODEL_FWD, &EVALUATE}, FIRST,
     SD_PATTERN_NONE},
    {"a kept loss graph", {&MALLOC, &LOSS_FWD, &CALL, &WCALL, &STEP, &MAIN}, KEPT_MORE,
     SD_PATTERN_GRAPH_KEPT_ALIVE},
    {"forward activations new in NEW", {&MM, &LINEAR, &CALL, &MODEL_FWD, &STEP}, FIRST,
     SD_PATTERN_NONE},
    {"forward activations at other addresses", {&MM, &LINEAR, &CALL, &MODEL_FWD, &STEP},
     NOT_KEPT, SD_PATTERN_NONE},
    {"a plain user line", {&MALLOC, &STEP, &MAIN}, KEPT_MORE, SD_PATTERN_NONE},
    {"shrinking forward memory", {&MM, &LINEAR, &CALL, &MODEL_FWD, &STEP}, SHRINK,
     SD_PATTERN_NONE},
};

START_TEST(classify_table)
{
    const pattern_case *c = &cases[_i];
    sd_attrib_options ao = {0};
    sd_attrib *a = sd_attrib_create(&ao, NULL);
    ck_assert_ptr_nonnull(a);
    size_t n = 0;
    while (n < MAX_FRAMES && c->frames[n]) n++;
    sd_pattern got = sd_pattern_classify(a, c->frames, n, &c->growth);
    ck_assert_msg(got == c->want, "%s: got %s, wanted %s", c->what,
                  sd_pattern_code(got) ? sd_pattern_code(got) : "null",
                  sd_pattern_code(c->want) ? sd_pattern_code(c->want) : "null");
    sd_attrib_free(a);
}
END_TEST

/* A hide pattern makes a frame internal: a hidden hook is no evidence. */
START_TEST(hidden_frames_are_not_user)
{
    const char *hide[] = {"features\\.py"};
    sd_attrib_options ao = {.hide = hide, .n_hide = 1};
    sd_attrib *a = sd_attrib_create(&ao, NULL);
    ck_assert_ptr_nonnull(a);
    const sd_frame *f[] = {&MALLOC, &SAVE, &CALL, &STEP};
    sd_pattern_growth g = FIRST;
    ck_assert_int_eq(sd_pattern_classify(a, f, LEN(f), &g), SD_PATTERN_NONE);
    sd_attrib_free(a);
}
END_TEST

START_TEST(codes_and_hints)
{
    ck_assert_ptr_null(sd_pattern_code(SD_PATTERN_NONE));
    ck_assert_ptr_null(sd_pattern_code(SD_PATTERN_COUNT));
    ck_assert_ptr_null(sdp_pattern_hint(SD_PATTERN_NONE));
    for (int p = 1; p < SD_PATTERN_COUNT; p++) {
        const char *code = sd_pattern_code((sd_pattern)p);
        ck_assert_ptr_nonnull(code);
        ck_assert_ptr_nonnull(sd_pattern_evidence((sd_pattern)p));
        ck_assert_ptr_nonnull(sdp_pattern_hint((sd_pattern)p));
        sd_pattern back;
        ck_assert(sd_pattern_parse(code, &back));
        ck_assert_int_eq(back, p);
        for (int q = 1; q < p; q++) ck_assert_str_ne(code, sd_pattern_code((sd_pattern)q));
    }
    ck_assert(!sd_pattern_parse("leak", NULL));
    ck_assert(!sd_pattern_parse(NULL, NULL));
    ck_assert_str_eq(sd_pattern_code(SD_PATTERN_GRAPH_KEPT_ALIVE), "graph-kept-alive");
}
END_TEST

START_TEST(fragmentation_rule)
{
    const int64_t MiB = 1 << 20;
    ck_assert_int_eq(sd_pattern_of_totals(0, 64 * MiB), SD_PATTERN_FRAGMENTATION);
    ck_assert_int_eq(sd_pattern_of_totals(-6 * MiB, 64 * MiB), SD_PATTERN_FRAGMENTATION);
    /* a tenth of 64 MiB is 6,710,886 bytes: one byte more is no longer flat */
    ck_assert_int_eq(sd_pattern_of_totals(6710886, 64 * MiB), SD_PATTERN_FRAGMENTATION);
    ck_assert_int_eq(sd_pattern_of_totals(6710887, 64 * MiB), SD_PATTERN_NONE);
    ck_assert_int_eq(sd_pattern_of_totals(64 * MiB, 64 * MiB), SD_PATTERN_NONE);
    ck_assert_int_eq(sd_pattern_of_totals(0, 2 * MiB - 1), SD_PATTERN_NONE);
    ck_assert_int_eq(sd_pattern_of_totals(0, 2 * MiB), SD_PATTERN_FRAGMENTATION);
    ck_assert_int_eq(sd_pattern_of_totals(0, -64 * MiB), SD_PATTERN_NONE);
    ck_assert_int_eq(sd_pattern_of_totals(INT64_MIN, 64 * MiB), SD_PATTERN_NONE);
}
END_TEST

/* ---------- the fixtures ---------- */

static const struct {
    const char *pair;
    sd_pattern top;       /* the pattern of the largest growing group */
    sd_pattern diff;      /* the diff-level pattern */
} fixture_cases[] = {
    {"no_stack", SD_PATTERN_NO_STACK, SD_PATTERN_NONE},
    {"parameter_gradients", SD_PATTERN_PARAMETER_GRADIENTS, SD_PATTERN_NONE},
    {"optimizer_state", SD_PATTERN_OPTIMIZER_STATE, SD_PATTERN_NONE},
    {"model_copy", SD_PATTERN_MODEL_COPY, SD_PATTERN_NONE},
    {"hook", SD_PATTERN_HOOK, SD_PATTERN_NONE},
    {"user_cache", SD_PATTERN_CACHE, SD_PATTERN_NONE},
    {"eval_without_no_grad", SD_PATTERN_EVAL_WITHOUT_NO_GRAD, SD_PATTERN_NONE},
    {"graph_kept_alive", SD_PATTERN_GRAPH_KEPT_ALIVE, SD_PATTERN_NONE},
    {"unknown", SD_PATTERN_NONE, SD_PATTERN_NONE},
    {"fragmentation", SD_PATTERN_NONE, SD_PATTERN_FRAGMENTATION},
};

START_TEST(fixture_pairs)
{
    const char *pair = fixture_cases[_i].pair;
    sd_snapshot *o = sdp_test_load_ok(SNAPDIFF_TESTDATA "/patterns/%s_old.pickle", pair);
    sd_snapshot *n = sdp_test_load_ok(SNAPDIFF_TESTDATA "/patterns/%s_new.pickle", pair);
    sd_diff_options opts = {0};
    sd_diff *d = sd_diff_create(o, n, &opts, NULL);
    ck_assert_ptr_nonnull(d);
    size_t growth = sd_diff_growth_count(d);
    if (fixture_cases[_i].diff == SD_PATTERN_FRAGMENTATION) {
        ck_assert_uint_eq(growth, 0);
    } else {
        ck_assert_uint_gt(growth, 0);
        ck_assert_int_eq(sd_diff_group_at(d, 0)->pattern, fixture_cases[_i].top);
    }
    /* Groups that did not grow never carry a pattern. */
    for (size_t i = growth; i < sd_diff_group_count(d); i++)
        ck_assert_int_eq(sd_diff_group_at(d, i)->pattern, SD_PATTERN_NONE);
    ck_assert_int_eq(sd_diff_totals_of(d)->pattern, fixture_cases[_i].diff);
    sd_diff_free(d);
    sd_snapshot_free(o);
    sd_snapshot_free(n);
}
END_TEST

/* The graph-kept-alive pair keeps every OLD loss block: 100 kept, 50 new. */
START_TEST(kept_blocks_per_group)
{
    sd_snapshot *o = sdp_test_load_ok(SNAPDIFF_TESTDATA "/patterns/graph_kept_alive_old.pickle");
    sd_snapshot *n = sdp_test_load_ok(SNAPDIFF_TESTDATA "/patterns/graph_kept_alive_new.pickle");
    sd_diff_options opts = {0};
    sd_diff *d = sd_diff_create(o, n, &opts, NULL);
    ck_assert_ptr_nonnull(d);
    const sd_diff_group *g = sd_diff_group_at(d, 0);
    ck_assert_uint_eq(g->old_blocks, 100);
    ck_assert_uint_eq(g->new_blocks, 150);
    ck_assert_uint_eq(g->kept_blocks, 100);
    uint64_t kept = 0;
    for (size_t i = 0; i < sd_diff_group_count(d); i++)
        kept += sd_diff_group_at(d, i)->kept_blocks;
    ck_assert_uint_eq(kept, sd_diff_totals_of(d)->blocks.kept);
    sd_diff_free(d);
    sd_snapshot_free(o);
    sd_snapshot_free(n);
}
END_TEST

static Suite *pattern_suite(void)
{
    Suite *s = suite_create("pattern");
    TCase *tc = tcase_create("classify");
    tcase_add_loop_test(tc, classify_table, 0, LEN(cases));
    tcase_add_test(tc, hidden_frames_are_not_user);
    tcase_add_test(tc, codes_and_hints);
    tcase_add_test(tc, fragmentation_rule);
    suite_add_tcase(s, tc);
    TCase *tf = tcase_create("fixtures");
    tcase_add_loop_test(tf, fixture_pairs, 0, LEN(fixture_cases));
    tcase_add_test(tf, kept_blocks_per_group);
    suite_add_tcase(s, tf);
    return s;
}

int main(void) { return sdp_test_main(pattern_suite); }
