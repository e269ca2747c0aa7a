/* check_naming.c - unit tests of naming memory that has no user frame (attrib.c): the
 * native site rule (autograd node, else outermost ATen op, never noise), the readable
 * labels, -g leaf/stack noise, via skipping torch's mode shims, forward_frames read by the
 * model and used as a backward site, and the user_metadata/compile_context context.
 *
 * Each case's expected site is worked out by hand from the rule in docs/json-diff.md; the
 * fixtures are testdata/native/ (written by testdata/make_native_fixtures.py).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapdiff/attrib.h"
#include "snapdiff/diff.h"

#include "check_helpers.h"

#define LEN SDP_TEST_LEN
#define VENV "/home/u/venv/lib/python3.11/site-packages"
#define VEC "std::vector<at::Tensor, std::allocator<at::Tensor> >"

/* Frames as torch 2.x records them on the autograd engine's thread. */
static const sd_frame N_UNWIND = {"??", "torch::unwind::unwind()", 0};
static const sd_frame N_GATHER = {"??", "torch::CapturedTraceback::gather(bool, bool, bool)", 0};
static const sd_frame N_CPP = {"memory_snapshot.cpp",
                               "torch::cuda::(anonymous namespace)::gather_with_cpp()", 0};
static const sd_frame N_MALLOC = {"CUDACachingAllocator.cpp",
                                  "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator"
                                  "::malloc(signed char, unsigned long, CUstream_st*)", 0};
static const sd_frame N_ALLOCATE = {"", "c10::cuda::CUDACachingAllocator::Native::"
                                        "NativeCachingAllocator::allocate(unsigned long)", 0};
static const sd_frame N_EMPTY = {"??", "at::detail::empty_strided_cuda(c10::ArrayRef<long>, "
                                       "c10::ArrayRef<long>, c10::TensorOptions const&)", 0};
static const sd_frame N_WRAP = {"RegisterCUDA.cpp",
                                "c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::"
                                "WrapFunctionIntoFunctor_<...> >::call(c10::OperatorKernel*)", 0};
static const sd_frame N_DISPATCH = {"??", "c10::Dispatcher::callBoxed(c10::OperatorHandle const&)", 0};
static const sd_frame N_BOXED = {"??", "c10::impl::BoxedKernelWrapper<at::Tensor (at::Tensor "
                                       "const&)>::call(c10::BoxedKernel const&)", 0};
static const sd_frame N_BMM_KERNEL = {"??", "at::native::structured_bmm_out_cuda::impl("
                                            "at::Tensor const&, at::Tensor const&)", 0};
static const sd_frame N_BMM_REDISPATCH = {"??", "at::_ops::bmm::redispatch(c10::DispatchKeySet, "
                                                "at::Tensor const&, at::Tensor const&)", 0};
static const sd_frame N_BMM_CALL = {"??", "at::_ops::bmm::call(at::Tensor const&, "
                                          "at::Tensor const&)", 0};
static const sd_frame N_MATMUL = {"??", "at::_ops::matmul::call(at::Tensor const&, "
                                        "at::Tensor const&)", 0};
static const sd_frame N_ACC_LAMBDA = {"??", "void torch::autograd::AccumulateGrad::accumulateGrad"
                                            "<torch::autograd::AccumulateGrad::apply(" VEC
                                            "&&)::{lambda(at::Tensor&&)#1}>(at::Tensor const&)", 0};
static const sd_frame N_ACC = {"??", "torch::autograd::AccumulateGrad::apply(" VEC "&&)", 0};
static const sd_frame N_INDEX_BW = {"??", "torch::autograd::generated::IndexBackward0::apply("
                                          VEC "&&)", 0};
static const sd_frame N_BMM_BW = {"??", "torch::autograd::generated::BmmBackward0::apply(" VEC
                                        "&&)", 0};
static const sd_frame N_CPPNODE = {"??", "torch::autograd::CppNode<MyFunction>::apply(" VEC
                                         "&&)", 0};
static const sd_frame N_DETAILS = {"??", "torch::autograd::generated::details::index_backward("
                                         "at::Tensor, c10::ArrayRef<long>)", 0};
static const sd_frame N_NODE = {"", "torch::autograd::Node::operator()(" VEC "&&)", 0};
static const sd_frame N_ENGINE = {"??", "torch::autograd::Engine::thread_main(std::shared_ptr<"
                                        "torch::autograd::GraphTask> const&)", 0};
static const sd_frame N_PYENGINE = {"??", "torch::autograd::python::PythonEngine::thread_init("
                                          "int, std::shared_ptr<torch::autograd::ReadyQueue> "
                                          "const&, bool)", 0};
static const sd_frame N_THPV = {"python_torch_functions_2.cpp",
                                "torch::autograd::THPVariable_bmm(_object*, _object*, _object*)", 0};
static const sd_frame N_CEVAL = {"??", "_PyEval_EvalFrameDefault", 0};
static const sd_frame N_THREAD = {"thread48.o", "execute_native_thread_routine", 0};
static const sd_frame N_START = {"./nptl/pthread_create.c", "start_thread", 442};
static const sd_frame N_CLONE = {"./misc/../sysdeps/unix/sysv/linux/x86_64/clone3.S", "__clone3", 81};
static const sd_frame N_LIBC = {"../csu/libc-start.c", "__libc_start_main_impl", 392};
static const sd_frame N_OTHER = {"??", "at::cuda::getNewWorkspace()", 0};

static const struct {
    const char *what;
    const sd_frame *frames[20];
    size_t n;
    int site;
    sd_site_how how;
    const char *label;   /* sd_site_native_name; "" for a frame site */
} native_cases[] = {
    {"AccumulateGrad: apply, below the accumulateGrad<lambda> frame",
     {&N_UNWIND, &N_GATHER, &N_CPP, &N_MALLOC, &N_ALLOCATE, &N_EMPTY, &N_WRAP, &N_ACC_LAMBDA,
      &N_ACC, &N_NODE, &N_ENGINE, &N_PYENGINE, &N_THREAD, &N_START, &N_CLONE},
     15, 8, SD_SITE_ACCUMULATE_GRAD, "autograd AccumulateGrad (parameter gradients)"},
    {"AccumulateGrad::apply itself",
     {&N_UNWIND, &N_MALLOC, &N_EMPTY, &N_ACC, &N_NODE, &N_ENGINE, &N_THREAD},
     7, 3, SD_SITE_ACCUMULATE_GRAD, "autograd AccumulateGrad (parameter gradients)"},
    {"IndexBackward0: the node, not index_backward's helper or the ops below it",
     {&N_UNWIND, &N_MALLOC, &N_EMPTY, &N_WRAP, &N_BMM_CALL, &N_DETAILS, &N_INDEX_BW, &N_NODE,
      &N_ENGINE, &N_PYENGINE, &N_START},
     11, 6, SD_SITE_AUTOGRAD, "autograd IndexBackward0"},
    {"BmmBackward0 beats the aten::bmm it calls",
     {&N_UNWIND, &N_GATHER, &N_MALLOC, &N_EMPTY, &N_BMM_KERNEL, &N_WRAP, &N_BMM_REDISPATCH,
      &N_WRAP, &N_BMM_CALL, &N_BMM_BW, &N_NODE, &N_ENGINE, &N_THREAD, &N_START, &N_CLONE},
     15, 9, SD_SITE_AUTOGRAD, "autograd BmmBackward0"},
    {"aten::bmm from Python with no Python frame: the outermost op (call, not redispatch)",
     {&N_UNWIND, &N_MALLOC, &N_ALLOCATE, &N_EMPTY, &N_BMM_KERNEL, &N_WRAP, &N_BMM_REDISPATCH,
      &N_DISPATCH, &N_BOXED, &N_BMM_CALL, &N_THPV, &N_CEVAL, &N_LIBC},
     13, 9, SD_SITE_ATEN, "aten::bmm"},
    {"nested ops: the outermost, matmul",
     {&N_UNWIND, &N_MALLOC, &N_EMPTY, &N_BMM_CALL, &N_MATMUL, &N_THPV, &N_CEVAL},
     7, 4, SD_SITE_ATEN, "aten::matmul"},
    {"a node that is not a Backward one (CppNode) does not name memory",
     {&N_UNWIND, &N_MALLOC, &N_EMPTY, &N_OTHER, &N_CPPNODE, &N_NODE, &N_ENGINE},
     7, 3, SD_SITE_FRAME, ""},
    {"no node, no op: the innermost frame that is not noise",
     {&N_UNWIND, &N_GATHER, &N_CPP, &N_MALLOC, &N_ALLOCATE, &N_EMPTY, &N_OTHER, &N_THREAD},
     8, 6, SD_SITE_FRAME, ""},
    {"all noise: the innermost frame",
     {&N_UNWIND, &N_MALLOC, &N_DISPATCH, &N_START, &N_CLONE},
     5, 0, SD_SITE_FRAME, ""},
};

static sd_attrib *attrib_by(sd_group_by by)
{
    sd_attrib_options o = {.group_by = by};
    sd_attrib *a = sd_attrib_create(&o, NULL);
    ck_assert_ptr_nonnull(a);
    return a;
}

START_TEST(native_site_table)
{
    sd_attrib *a = attrib_by(SD_GROUP_SITE);
    sd_site s;
    sd_attrib_site(a, native_cases[_i].frames, native_cases[_i].n, &s);
    ck_assert_msg(s.site == native_cases[_i].site, "%s: site %d, want %d", native_cases[_i].what,
                  s.site, native_cases[_i].site);
    ck_assert_int_eq(s.how, native_cases[_i].how);
    ck_assert(!s.is_user);
    ck_assert(!s.backward);
    ck_assert_int_eq(s.via, -1);
    char label[SD_SITE_LABEL_MAX];
    sd_site_native_name(native_cases[_i].frames[s.site], (sd_site_how)s.how, label, sizeof label);
    ck_assert_str_eq(label, native_cases[_i].label);
    /* The site key: the label for a named site, the frame as written otherwise. */
    char key[512], want[512];
    sd_attrib_key(a, native_cases[_i].frames, native_cases[_i].n, key, sizeof key);
    const sd_frame *f = native_cases[_i].frames[s.site];
    if (label[0]) snprintf(want, sizeof want, "%s", label);
    else snprintf(want, sizeof want, "%s:%lld %s", f->filename, (long long)f->line, f->name);
    ck_assert_str_eq(key, want);
    sd_attrib_free(a);
}
END_TEST

START_TEST(native_file_and_function_keys)
{
    const sd_frame *const *acc = native_cases[0].frames, *const *bmm = native_cases[4].frames;
    char key[256];
    sd_attrib *a = attrib_by(SD_GROUP_FILE);
    sd_attrib_key(a, acc, native_cases[0].n, key, sizeof key);
    ck_assert_str_eq(key, "<autograd>");
    sd_attrib_key(a, bmm, native_cases[4].n, key, sizeof key);
    ck_assert_str_eq(key, "<aten>");
    sd_attrib_free(a);
    a = attrib_by(SD_GROUP_FUNCTION);
    sd_attrib_key(a, acc, native_cases[0].n, key, sizeof key);
    ck_assert_str_eq(key, "autograd AccumulateGrad (parameter gradients)");
    sd_attrib_free(a);
}
END_TEST

START_TEST(native_noise)
{
    const sd_frame *noisy[] = {&N_UNWIND, &N_GATHER, &N_CPP, &N_MALLOC, &N_ALLOCATE, &N_EMPTY,
                               &N_WRAP, &N_DISPATCH, &N_BOXED, &N_NODE, &N_ENGINE, &N_PYENGINE,
                               &N_THPV, &N_CEVAL, &N_THREAD, &N_START, &N_CLONE, &N_LIBC};
    for (size_t i = 0; i < LEN(noisy); i++)
        ck_assert_msg(sd_frame_is_native_noise(noisy[i]), "%s", noisy[i]->name);
    const sd_frame *named[] = {&N_BMM_CALL, &N_BMM_REDISPATCH, &N_ACC, &N_INDEX_BW,
                               &N_BMM_KERNEL, &N_DETAILS, &N_OTHER};
    for (size_t i = 0; i < LEN(named); i++)
        ck_assert_msg(!sd_frame_is_native_noise(named[i]), "%s", named[i]->name);
    /* torch's own filter is the smaller one. */
    ck_assert(sd_frame_is_noise(&N_UNWIND));
    ck_assert(!sd_frame_is_noise(&N_MALLOC));
    ck_assert_int_eq(sd_frame_native_how(&N_BMM_REDISPATCH), SD_SITE_ATEN);
    ck_assert_int_eq(sd_frame_native_how(&N_DETAILS), SD_SITE_FRAME);
}
END_TEST

START_TEST(leaf_and_stack_keys_skip_noise)
{
    const sd_frame *st[] = {&N_UNWIND, &N_GATHER, &N_MALLOC, &N_EMPTY, &N_BMM_KERNEL, &N_WRAP,
                            &N_BMM_CALL, &N_BMM_BW, &N_NODE, &N_ENGINE, &N_START};
    char key[1024];
    sd_attrib *a = attrib_by(SD_GROUP_LEAF);
    ck_assert_uint_eq(sd_attrib_leaf(st, LEN(st)), 4);
    sd_attrib_key(a, st, LEN(st), key, sizeof key);
    ck_assert_str_eq(key, "??:0 at::native::structured_bmm_out_cuda::impl(at::Tensor const&, "
                          "at::Tensor const&)");
    sd_attrib_free(a);
    a = attrib_by(SD_GROUP_STACK);
    sd_attrib_key(a, st, LEN(st), key, sizeof key);
    ck_assert_str_eq(key, "??:0 at::native::structured_bmm_out_cuda::impl(at::Tensor const&, "
                          "at::Tensor const&);??:0 at::_ops::bmm::call(at::Tensor const&, "
                          "at::Tensor const&);??:0 torch::autograd::generated::BmmBackward0::"
                          "apply(" VEC "&&)");
    sd_attrib_free(a);
}
END_TEST

START_TEST(via_skips_mode_shims)
{
    static const sd_frame cpp = {"??", "at::_ops::index::call(at::Tensor const&)", 0};
    static const sd_frame dev = {VENV "/torch/utils/_device.py", "__torch_function__", 104};
    static const sd_frame ovr = {VENV "/torch/overrides.py", "handle_torch_function", 1720};
    static const sd_frame fn = {VENV "/torch/nn/functional.py", "relu", 1500};
    static const sd_frame user = {"/p/models.py", "update_nodes", 181};
    sd_attrib *a = attrib_by(SD_GROUP_SITE);
    sd_site s;
    const sd_frame *only_shims[] = {&cpp, &dev, &ovr, &user};
    sd_attrib_site(a, only_shims, LEN(only_shims), &s);
    ck_assert_int_eq(s.site, 3);
    ck_assert_int_eq(s.via, -1);
    const sd_frame *with_fn[] = {&cpp, &dev, &fn, &ovr, &user};
    sd_attrib_site(a, with_fn, LEN(with_fn), &s);
    ck_assert_int_eq(s.site, 4);
    ck_assert_int_eq(s.via, 2);
    ck_assert(sd_frame_is_mode_shim(&dev));
    ck_assert(!sd_frame_is_mode_shim(&fn));
    sd_attrib_free(a);
}
END_TEST

/* ---------- forward_frames and context, through the model ---------- */

static uint32_t stack_of_block(const sd_snapshot *s, size_t k)
{
    const sd_cuda_device *d = sd_snapshot_device(s, 0);
    ck_assert_uint_gt(d->n_blocks, k);
    return d->blocks[k].stack;
}

START_TEST(forward_frames_make_a_backward_site)
{
    sd_snapshot *s = sdp_test_load_ok("%s/native/forward.pickle", SNAPDIFF_TESTDATA);
    sd_attrib *a = attrib_by(SD_GROUP_SITE);
    /* Blocks 0 and 1: IndexBackward0 with forward_frames; block 2: AccumulateGrad. */
    for (size_t k = 0; k < 2; k++) {
        uint32_t id = stack_of_block(s, k);
        const sd_stack_context *c = sd_snapshot_stack_context(s, id);
        ck_assert_uint_ne(c->forward_stack, 0);
        ck_assert_str_eq(c->user_metadata, "step 7");
        ck_assert_str_eq(c->compile_context, "");
        sd_site site;
        sd_attrib_site_of_stack(a, s, id, &site);
        ck_assert(site.backward);
        ck_assert(site.is_user);
        ck_assert_int_eq(site.how, SD_SITE_FRAME);
        ck_assert_int_eq(site.via, -1);   /* only torch/utils/_device.py lies below */
        sd_site_label l;
        ck_assert(sd_site_label_of(s, id, &site, &l));
        ck_assert_str_eq(l.filename, "/home/alice/proj/model.py");
        ck_assert_int_eq(l.line, 41);
        ck_assert_str_eq(sd_site_label_name(&l), "forward");
        ck_assert(l.backward && !l.native);
    }
    /* The two blocks' frames differ (zeros vs sort buffer) but share the forward stack. */
    ck_assert_uint_eq(sd_snapshot_stack_context(s, stack_of_block(s, 0))->forward_stack,
                      sd_snapshot_stack_context(s, stack_of_block(s, 1))->forward_stack);
    uint32_t acc = stack_of_block(s, 2);
    const sd_stack_context *c = sd_snapshot_stack_context(s, acc);
    ck_assert_uint_eq(c->forward_stack, 0);
    ck_assert_str_eq(c->compile_context, "0/0");
    sd_site site;
    sd_attrib_site_of_stack(a, s, acc, &site);
    ck_assert(!site.backward);
    ck_assert_int_eq(site.how, SD_SITE_ACCUMULATE_GRAD);
    sd_site_label l;
    ck_assert(sd_site_label_of(s, acc, &site, &l));
    ck_assert_str_eq(l.filename, "");
    ck_assert_int_eq(l.line, 0);
    ck_assert_str_eq(sd_site_label_name(&l), "autograd AccumulateGrad (parameter gradients)");
    ck_assert_str_eq(l.name, "torch::autograd::AccumulateGrad::apply(" VEC "&&)");
    /* Trace entries carry the same context: the first two have forward_frames. */
    const sd_cuda_device *d = sd_snapshot_device(s, 0);
    ck_assert_uint_eq(d->n_trace, 3);
    for (size_t i = 0; i < 3; i++) {
        const sd_stack_context *tc = sd_snapshot_stack_context(s, d->trace[i].stack);
        ck_assert_uint_eq(tc->forward_stack != 0, i < 2);
        sd_site ts;
        sd_attrib_site_of_stack(a, s, d->trace[i].stack, &ts);
        ck_assert_int_eq(ts.backward, i < 2);
    }
    /* Equal frames keep one stack id without context, and frames equal to a block's. */
    size_t n0, n1;
    sd_snapshot_stack(s, stack_of_block(s, 0), &n0);
    sd_snapshot_stack(s, d->trace[0].stack, &n1);
    ck_assert_uint_eq(n0, n1);
    ck_assert_uint_eq(stack_of_block(s, 0), d->trace[0].stack);
    sd_attrib_free(a);
    sd_snapshot_free(s);
}
END_TEST

START_TEST(diff_names_training_memory)
{
    sd_snapshot *old_s = sdp_test_load_ok("%s/native/infer.pickle", SNAPDIFF_TESTDATA);
    sd_snapshot *new_s = sdp_test_load_ok("%s/native/train.pickle", SNAPDIFF_TESTDATA);
    sd_diff_options o = {0};
    sd_error err;
    sd_diff *d = sd_diff_create(old_s, new_s, &o, &err);
    ck_assert_ptr_nonnull(d);
    const sd_diff_group *g = sd_diff_group_at(d, 0);
    ck_assert_str_eq(g->key, "autograd AccumulateGrad (parameter gradients)");
    ck_assert_int_eq(g->delta_bytes, 16 << 20);
    ck_assert_int_eq(g->rep_site.how, SD_SITE_ACCUMULATE_GRAD);
    sd_diff_free(d);
    sd_snapshot_free(old_s);
    sd_snapshot_free(new_s);
}
END_TEST

/* --group-by annotation / compile-context: by hand, forward.pickle's blocks 0 and 1 (2 MiB
 * each) carry user_metadata "step 7", block 2 (4 MiB) compile_context "0/0". */
START_TEST(annotation_and_compile_context_keys)
{
    static const struct { sd_group_by by; const char *key[2]; } want[] = {
        {SD_GROUP_ANNOTATION, {"<no annotation>", "step 7"}},
        {SD_GROUP_COMPILE_CONTEXT, {"0/0", "<no compile context>"}},
    };
    sd_snapshot *old_s = sdp_test_load_ok("%s/native/empty.pickle", SNAPDIFF_TESTDATA);
    sd_snapshot *new_s = sdp_test_load_ok("%s/native/forward.pickle", SNAPDIFF_TESTDATA);
    for (size_t w = 0; w < LEN(want); w++) {
        sd_diff_options o = {.attrib = {.group_by = want[w].by}};
        sd_diff *d = sd_diff_create(old_s, new_s, &o, NULL);
        ck_assert_ptr_nonnull(d);
        ck_assert_uint_eq(sd_diff_group_count(d), 2);
        /* Equal deltas: ties go by key. */
        for (size_t i = 0; i < 2; i++) {
            ck_assert_str_eq(sd_diff_group_at(d, i)->key, want[w].key[i]);
            ck_assert_int_eq(sd_diff_group_at(d, i)->delta_bytes, 4 << 20);
        }
        sd_diff_free(d);
    }
    ck_assert_str_eq(sd_group_by_name(SD_GROUP_COMPILE_CONTEXT), "compile-context");
    sd_snapshot_free(old_s);
    sd_snapshot_free(new_s);
}
END_TEST

static Suite *naming_suite(void)
{
    Suite *s = suite_create("naming");
    TCase *tc = tcase_create("rule");
    tcase_add_loop_test(tc, native_site_table, 0, LEN(native_cases));
    tcase_add_test(tc, native_file_and_function_keys);
    tcase_add_test(tc, native_noise);
    tcase_add_test(tc, leaf_and_stack_keys_skip_noise);
    tcase_add_test(tc, via_skips_mode_shims);
    suite_add_tcase(s, tc);
    TCase *tm = tcase_create("model");
    tcase_add_test(tm, forward_frames_make_a_backward_site);
    tcase_add_test(tm, diff_names_training_memory);
    tcase_add_test(tm, annotation_and_compile_context_keys);
    suite_add_tcase(s, tm);
    return s;
}

int main(void) { return sdp_test_main(naming_suite); }
