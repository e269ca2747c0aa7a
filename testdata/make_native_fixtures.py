#!/usr/bin/env python3
"""Write the fixtures of memory with no user frame (issue 9) with CPython's pickle.

    python3 testdata/make_native_fixtures.py      # rewrites testdata/native/

Snapshot-shaped the way torch 2.x writes them with stacks="all" (protocol 4, each frame
dict and stack list one shared object). The C++ stacks are full length, modelled on what
torch 2.x records on the autograd engine's thread: the unwinder, the caching allocator,
at::detail::empty*, the dispatcher's wrappers and boxing, the op, the autograd node, the
engine loop and thread start-up. The figures each scenario must produce are worked out by
hand below and written to testdata/native/expected.json for tests/cli/test_naming_cli.py.

Scenarios (testdata/native/):
  infer / train   the same model at inference and after one training step: train adds
                  parameter gradients (AccumulateGrad), IndexBackward0 buffers on two
                  different C++ paths, a BmmBackward0 buffer, optimizer state, and an
                  aten::bmm call whose stack has no Python frame.
  forward         newer torch: IndexBackward0 blocks carry forward_frames (the user's
                  model.py:41 forward), AccumulateGrad blocks none; user_metadata and
                  compile_context on blocks and trace entries.
  jupyter         a notebook cell (/tmp/ipykernel_114/3105878423.py) leaking.
  empty           no segments.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_leak_fixtures import (A, BASE, KiB, MiB, MODULE_CALL, PROJ, Snap, T0,  # noqa: E402
                                blk, fill, torch_, user)

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- C++ frames, innermost first ----------------------------------------------------------

VEC = "std::vector<at::Tensor, std::allocator<at::Tensor> >"
UNWIND = [
    ("??", "torch::unwind::unwind()", 0),
    ("??", "torch::CapturedTraceback::gather(bool, bool, bool)", 0),
    ("memory_snapshot.cpp", "torch::cuda::(anonymous namespace)::gather_with_cpp()", 0),
]
ALLOC = [
    ("CUDACachingAllocator.cpp", "c10::cuda::CUDACachingAllocator::Native::"
     "DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)", 0),
    ("", "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**, "
     "signed char, unsigned long, CUstream_st*)", 0),
    ("", "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate("
     "unsigned long)", 0),
]
EMPTY_STRIDED = [
    ("", "at::TensorBase at::detail::_empty_strided_generic<c10::ArrayRef<long> >("
     "c10::ArrayRef<long>, c10::ArrayRef<long>, c10::Allocator*, c10::DispatchKeySet, "
     "c10::ScalarType)", 0),
    ("??", "at::detail::empty_strided_cuda(c10::ArrayRef<long>, c10::ArrayRef<long>, "
     "c10::ScalarType, std::optional<c10::Device>)", 0),
    ("??", "at::detail::empty_strided_cuda(c10::ArrayRef<long>, c10::ArrayRef<long>, "
     "c10::TensorOptions const&)", 0),
]
EMPTY = [
    ("", "at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, "
     "c10::Allocator*, c10::DispatchKeySet, c10::ScalarType, "
     "std::optional<c10::MemoryFormat>)", 0),
    ("??", "at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType, "
     "std::optional<c10::Device>, std::optional<c10::MemoryFormat>)", 0),
    ("??", "at::native::empty_cuda(c10::ArrayRef<long>, std::optional<c10::ScalarType>, "
     "std::optional<c10::Layout>, std::optional<c10::Device>, std::optional<bool>, "
     "std::optional<c10::MemoryFormat>)", 0),
]


def wrapper(reg, kernel, op, args):
    """A registered kernel and the unboxed functor the dispatcher calls it through."""
    return [
        (reg, "at::(anonymous namespace)::(anonymous namespace)::wrapper_%s(%s)"
         % (kernel, args), 0),
        (reg, "c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::"
         "WrapFunctionIntoFunctor_<c10::CompileTimeFunctionPointer<at::Tensor (%s), "
         "&at::(anonymous namespace)::(anonymous namespace)::wrapper_%s>, at::Tensor, "
         "c10::guts::typelist::typelist<%s> >, at::Tensor (%s)>::call(c10::OperatorKernel*, "
         "c10::DispatchKeySet, %s)" % (args, kernel, args, args, args), 0),
    ]


def op_call(op, args, redispatch=True):
    out = []
    if redispatch:
        out.append(("??", "at::_ops::%s::redispatch(c10::DispatchKeySet, %s)" % (op, args), 0))
        out += wrapper("VariableType_2.cpp", "Autograd_" + op, op,
                       "c10::DispatchKeySet, " + args)
    out.append(("??", "at::_ops::%s::call(%s)" % (op, args), 0))
    return out


ENGINE = [
    ("", "torch::autograd::Node::operator()(%s&&)" % VEC, 0),
    ("??", "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::"
     "GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, "
     "std::shared_ptr<torch::autograd::ReadyQueue> const&)", 0),
    ("??", "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> "
     "const&)", 0),
    ("??", "torch::autograd::Engine::thread_init(int, std::shared_ptr<torch::autograd::"
     "ReadyQueue> const&, bool)", 0),
    ("??", "torch::autograd::python::PythonEngine::thread_init(int, std::shared_ptr<torch::"
     "autograd::ReadyQueue> const&, bool)", 0),
    ("thread48.o", "execute_native_thread_routine", 0),
    ("./nptl/pthread_create.c", "start_thread", 442),
    ("./misc/../sysdeps/unix/sysv/linux/x86_64/clone3.S", "__clone3", 81),
]
T1 = "at::Tensor const&"
ES_ARGS = "c10::ArrayRef<long>, c10::ArrayRef<long>, std::optional<c10::ScalarType>, " \
          "std::optional<c10::Layout>, std::optional<c10::Device>, std::optional<bool>"
EM_ARGS = "c10::ArrayRef<long>, std::optional<c10::ScalarType>, std::optional<c10::Layout>, " \
          "std::optional<c10::Device>, std::optional<bool>, std::optional<c10::MemoryFormat>"

# .grad of a parameter: AccumulateGrad clones the incoming gradient (torch 2.x).
S_ACCUMULATE = (UNWIND + ALLOC + EMPTY_STRIDED + wrapper("RegisterCUDA.cpp", "CUDA__empty_strided",
                                                         "empty_strided", ES_ARGS)
                + [("??", "at::_ops::empty_strided::redispatch(c10::DispatchKeySet, %s)"
                    % ES_ARGS, 0)]
                + wrapper("RegisterBackendSelect.cpp", "BackendSelect_empty_strided",
                          "empty_strided", ES_ARGS)
                + [("??", "at::_ops::empty_strided::call(%s)" % ES_ARGS, 0),
                   ("??", "at::native::empty_like(at::Tensor const&, std::optional<c10::"
                    "ScalarType>, std::optional<c10::Layout>, std::optional<c10::Device>, "
                    "std::optional<bool>, std::optional<c10::MemoryFormat>)", 0)]
                + op_call("empty_like", T1 + ", std::optional<c10::ScalarType>")
                + [("??", "at::native::clone(at::Tensor const&, std::optional<c10::"
                    "MemoryFormat>)", 0)]
                + op_call("clone", T1 + ", std::optional<c10::MemoryFormat>")
                + [("??", "void torch::autograd::AccumulateGrad::accumulateGrad<torch::"
                    "autograd::AccumulateGrad::apply(%s&&)::{lambda(at::Tensor&&)#1}>("
                    "at::Tensor const&, at::Tensor&, at::Tensor const&, long, unsigned long, "
                    "torch::autograd::AccumulateGrad::apply(%s&&)::{lambda(at::Tensor&&)#1} "
                    "const&)" % (VEC, VEC), 0),
                   ("??", "torch::autograd::AccumulateGrad::apply(%s&&)" % VEC, 0)]
                + ENGINE)

# IndexBackward0, path 1: the zeros buffer index_backward scatters into.
INDEX_TAIL = [
    ("??", "torch::autograd::generated::details::index_backward(at::Tensor, c10::ArrayRef<"
     "long>, c10::List<std::optional<at::Tensor> > const&, at::Tensor const&)", 0),
    ("??", "torch::autograd::generated::IndexBackward0::apply(%s&&)" % VEC, 0),
] + ENGINE
S_INDEX_ZEROS = (UNWIND + ALLOC + EMPTY + wrapper("RegisterCUDA.cpp", "CUDA_memory_format_empty",
                                                  "empty", EM_ARGS)
                 + op_call("empty_memory_format", EM_ARGS)
                 + [("??", "at::native::zeros_symint(c10::ArrayRef<c10::SymInt>, "
                     "std::optional<c10::ScalarType>, std::optional<c10::Layout>, "
                     "std::optional<c10::Device>, std::optional<bool>)", 0)]
                 + op_call("zeros", "c10::ArrayRef<c10::SymInt>, std::optional<c10::ScalarType>",
                           redispatch=False)
                 + [("??", "at::native::new_zeros(at::Tensor const&, c10::ArrayRef<long>, "
                     "std::optional<c10::ScalarType>, std::optional<c10::Layout>, "
                     "std::optional<c10::Device>, std::optional<bool>)", 0)]
                 + op_call("new_zeros", T1 + ", c10::ArrayRef<c10::SymInt>")
                 + INDEX_TAIL)
# IndexBackward0, path 2: the sort buffer of index_put_ with accumulate=True.
S_INDEX_SORT = (UNWIND + ALLOC + EMPTY + wrapper("RegisterCUDA.cpp", "CUDA_memory_format_empty",
                                                 "empty", EM_ARGS)
                + op_call("empty_memory_format", EM_ARGS)
                + [("??", "at::native::(anonymous namespace)::index_put_with_sort_kernel("
                    "at::Tensor&, c10::List<std::optional<at::Tensor> > const&, at::Tensor "
                    "const&, bool, bool)", 0),
                   ("??", "at::native::_index_put_impl_(at::Tensor&, c10::List<std::optional<"
                    "at::Tensor> > const&, at::Tensor const&, bool, bool)", 0)]
                + op_call("_index_put_impl_", "at::Tensor&, c10::List<std::optional<at::Tensor>"
                          " > const&, at::Tensor const&, bool, bool")
                + [("??", "at::native::index_put_(at::Tensor&, c10::List<std::optional<"
                    "at::Tensor> > const&, at::Tensor const&, bool)", 0)]
                + op_call("index_put_", "at::Tensor&, c10::List<std::optional<at::Tensor> > "
                          "const&, at::Tensor const&, bool")
                + INDEX_TAIL)
BMM_ARGS = "at::Tensor const&, at::Tensor const&"
BMM_KERNEL = [
    ("Blas.cpp", "at::native::(anonymous namespace)::baddbmm_out_cuda_impl(at::Tensor const&, "
     "at::Tensor const&, at::Tensor const&, at::Tensor const&, c10::Scalar const&, "
     "c10::Scalar const&)", 0),
    ("??", "at::native::structured_bmm_out_cuda::impl(at::Tensor const&, at::Tensor const&, "
     "at::Tensor const&)", 0),
]
BMM_META = [
    ("RegisterCUDA.cpp", "at::(anonymous namespace)::structured_bmm_out_cuda_functional::"
     "set_output_raw_strided(long, c10::ArrayRef<long>, c10::ArrayRef<long>, "
     "c10::TensorOptions, c10::ArrayRef<at::Dimname>)", 0),
    ("??", "at::meta::structured_bmm::meta(at::Tensor const&, at::Tensor const&)", 0),
]
# BmmBackward0: grad_self = grad.bmm(mat2.transpose(1, 2)) on the engine's thread.
S_BMM_BACKWARD = (UNWIND + ALLOC + EMPTY_STRIDED + BMM_META
                  + wrapper("RegisterCUDA.cpp", "CUDA_bmm", "bmm", BMM_ARGS)
                  + op_call("bmm", BMM_ARGS)
                  + [("??", "torch::autograd::generated::BmmBackward0::apply(%s&&)" % VEC, 0)]
                  + ENGINE)
# at::_ops::bmm called from Python, recorded with no Python frame (a C++ extension's
# thread): the outermost ATen op names it.
S_BMM_PY = (UNWIND + ALLOC + EMPTY_STRIDED + BMM_META
            + wrapper("RegisterCUDA.cpp", "CUDA_bmm", "bmm", BMM_ARGS)
            + op_call("bmm", BMM_ARGS)
            + [("python_torch_functions_2.cpp", "torch::autograd::THPVariable_bmm(_object*, "
                "_object*, _object*)", 0),
               ("??", "cfunction_call", 0), ("??", "_PyObject_MakeTpCall", 0),
               ("??", "_PyEval_EvalFrameDefault", 0), ("??", "PyEval_EvalCode", 0),
               ("??", "run_eval_code_obj", 0), ("??", "run_mod", 0),
               ("??", "pyrun_file", 0), ("??", "_PyRun_SimpleFileObject", 0),
               ("??", "Py_RunMain", 0), ("??", "Py_BytesMain", 0),
               ("../sysdeps/nptl/libc_start_call_main.h", "__libc_start_call_main", 58),
               ("../csu/libc-start.c", "__libc_start_main_impl", 392), ("??", "_start", 0)])

# Python stacks of the model (innermost first), with the interpreter frames torch merges.
CEVAL = ("??", "_PyEval_EvalFrameDefault", 0)
MAIN = [user("train.py", "main", 60), CEVAL, user("train.py", "<module>", 72), CEVAL]
STEP = [user("train.py", "train_step", 31), CEVAL] + MAIN


def py_stack(cpp_op, python):
    frames = UNWIND + ALLOC + EMPTY_STRIDED + op_call(cpp_op, BMM_ARGS)
    for f in python:
        frames.append(f)
        if f is not CEVAL:
            frames.append(CEVAL)
    return frames


S_WEIGHTS = py_stack("empty", [torch_("nn/modules/linear.py", "__init__", 98),
                               user("model.py", "__init__", 18)] + MAIN)
S_ACT = py_stack("mm", [torch_("nn/modules/linear.py", "forward", 116)] + MODULE_CALL
                 + [user("model.py", "forward", 44)] + MODULE_CALL + STEP)
# The forward of x[idx] (model.py:41): the Python stack torch records as forward_frames.
S_FWD_INDEX = py_stack("index", [torch_("utils/_device.py", "__torch_function__", 104),
                                 user("model.py", "forward", 41)] + MODULE_CALL + STEP)
S_ADAM = py_stack("zeros_like", [torch_("optim/adamw.py", "_init_group", 156),
                                 torch_("optim/adamw.py", "step", 209),
                                 torch_("optim/optimizer.py", "wrapper", 484),
                                 user("train.py", "train_step", 35)] + MAIN)
S_CELL = py_stack("randn", [torch_("utils/_device.py", "__torch_function__", 104),
                            ("/tmp/ipykernel_114/3105878423.py", "<module>", 3),
                            ("/usr/lib/python3.11/site-packages/IPython/core/"
                             "interactiveshell.py", "run_code", 3577)])

# ---- the scenarios ---------------------------------------------------------------------------
#
# infer -> train (site keys)                         infer      train       delta
# autograd AccumulateGrad (parameter gradients)      -          4 x 4 MiB   +16 MiB
# train.py:35 train_step (optimizer state)           -          2 x 4 MiB   +8 MiB
# autograd IndexBackward0 (zeros + sort buffer)      -          2 MiB + 1 MiB  +3 MiB
# autograd BmmBackward0                              -          6 MiB       +6 MiB
# aten::bmm                                          -          512 KiB     +512 KiB
# model.py:18 __init__ (weights)                     4 x 4 MiB  4 x 4 MiB   0
# model.py:44 forward (activations)                  2 x 2 MiB  2 x 2 MiB   0

EXPECT_TRAIN = {
    "autograd AccumulateGrad (parameter gradients)": 16 * MiB,
    PROJ + "/train.py:35 train_step": 8 * MiB,
    "autograd BmmBackward0": 6 * MiB,
    "autograd IndexBackward0": 3 * MiB,
    "aten::bmm": 512 * KiB,
}


def model(s, training):
    addr = BASE
    addr += s.segment(addr, fill([blk(4 * MiB, S_WEIGHTS)] * 4, 20 * MiB))
    addr += s.segment(addr, fill([blk(2 * MiB, S_ACT, requested=2_000_000)] * 2, 4 * MiB))
    if not training:
        return s
    addr += s.segment(addr, fill([blk(4 * MiB, S_ACCUMULATE)] * 4, 16 * MiB))
    addr += s.segment(addr, fill([blk(4 * MiB, S_ADAM)] * 2, 8 * MiB))
    addr += s.segment(addr, fill([blk(6 * MiB, S_BMM_BACKWARD), blk(2 * MiB, S_INDEX_ZEROS),
                                  blk(1 * MiB, S_INDEX_SORT)], 10 * MiB))
    s.segment(addr, fill([blk(512 * KiB, S_BMM_PY)], 2 * MiB), small=True)
    return s


# empty -> forward (site keys)
# model.py:41 forward [backward]      2 x 2 MiB (IndexBackward0 with forward_frames)
# autograd AccumulateGrad ...         1 x 4 MiB (no forward_frames: not a forward op)
EXPECT_FORWARD = {
    PROJ + "/model.py:41 forward [backward]": 4 * MiB,
    "autograd AccumulateGrad (parameter gradients)": 4 * MiB,
}


def forward():
    s = Snap()
    s.segment(BASE, fill([blk(2 * MiB, S_INDEX_ZEROS), blk(2 * MiB, S_INDEX_SORT),
                          blk(4 * MiB, S_ACCUMULATE)], 10 * MiB))
    blocks = s.segments[-1]["blocks"]
    fwd = s.stack(S_FWD_INDEX)
    for b in blocks[:2]:
        b["forward_frames"] = fwd
        b["user_metadata"] = "step 7"
    blocks[2]["compile_context"] = "0/0"
    for i, b in enumerate(blocks[:3]):
        entry = {"action": "alloc", "addr": b["address"], "size": b["size"], "stream": 0,
                 "time_us": T0 + i, "compile_context": "", "user_metadata": "",
                 "frames": b["frames"]}
        if "forward_frames" in b:
            entry["forward_frames"] = fwd
            entry["user_metadata"] = "step 7"
        s.trace(0, entry)
    return s


def jupyter(n):
    s = Snap()
    s.segment(BASE, fill([blk(1 * MiB, S_CELL)] * n, 8 * MiB))
    return s


def main():
    out = os.path.join(HERE, "native")
    os.makedirs(out, exist_ok=True)
    model(Snap(), False).write(os.path.join(out, "infer.pickle"))
    model(Snap(), True).write(os.path.join(out, "train.pickle"))
    forward().write(os.path.join(out, "forward.pickle"))
    jupyter(1).write(os.path.join(out, "jupyter_old.pickle"))
    jupyter(3).write(os.path.join(out, "jupyter_new.pickle"))
    Snap().write(os.path.join(out, "empty.pickle"))
    expected = {
        "train": EXPECT_TRAIN,
        "forward": EXPECT_FORWARD,
        "train_top_key": "autograd AccumulateGrad (parameter gradients)",
        "jupyter_display": "ipykernel_114/3105878423.py:3 <module>",
    }
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
