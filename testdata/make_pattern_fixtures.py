#!/usr/bin/env python3
"""Write the fixtures of the diff's patterns (issue 9) with CPython's pickle.

    python3 testdata/make_pattern_fixtures.py      # rewrites testdata/patterns/

One OLD/NEW pair per pattern of include/snapdiff/pattern.h, snapshot-shaped the way torch
writes them (make_leak_fixtures.Snap: protocol 4, frames and stacks shared), with stacks
as torch records them with stacks="all": the allocator's C++ frames, the op, then the
Python frames with the interpreter between them; backward memory has the autograd
engine thread's frames only. In each pair the named pattern is the growth; the rest of
the job (parameters, blocks recorded without a stack) is kept unchanged at the same
addresses. testdata/patterns/expected.json lists, per pair, each growing group's delta
(how tests find it, whatever its key) and the pattern code it must get, and the pair's
diff-level pattern; tests/cli/test_pattern_cli.py checks the text and JSON against it.

Pairs (NAME_old.pickle, NAME_new.pickle):
  no_stack             two more blocks allocated before recording began        no-stack
  parameter_gradients  the first backward: AccumulateGrad makes each .grad      parameter-gradients
  optimizer_state      the first AdamW step (torch/optim), and a user optimizer
                       (optim/lion.py step, called by torch/optim's wrapper)    optimizer-state (both)
  model_copy           an EMA made with copy.deepcopy                           model-copy
  hook                 a forward hook (not named *hook*) that clones outputs    hook-stores-tensors
  user_cache           a feature cache (data/feature_cache.py) moving tensors   user-cache
  eval_without_no_grad forward activations under evaluate(), no no_grad        eval-without-no-grad
  graph_kept_alive     losses kept with their graph: all OLD blocks still live,
                       50 more                                                  graph-kept-alive
  unknown              growth at a plain user line, and forward activations that
                       grew at other addresses (not kept): no clear evidence    null (both)
  fragmentation        the same live bytes in a new, mostly free segment:
                       reserved +64 MiB, allocated flat                         fragmentation (diff)
"""
import json
import os
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_leak_fixtures import (  # noqa: E402
    BASE, I, KiB, MAIN, MiB, MODULE_CALL, NO_STACK, PROJ,
    S_PARAMS, Snap, blk, cpp_stack, fill, torch_, user)

STD = "/usr/lib/python3.11"

# ---- stacks, innermost frame first ---------------------------------------------------------

# The allocation frames of an empty_strided made on the autograd engine's thread.
ENGINE_ALLOC = [
    ("??", "torch::unwind::unwind()", 0),
    ("??", "torch::CapturedTraceback::gather(bool, bool, bool)", 0),
    ("memory_snapshot.cpp", "torch::cuda::(anonymous namespace)::gather_with_cpp()", 0),
    ("CUDACachingAllocator.cpp", "c10::cuda::CUDACachingAllocator::Native::"
     "DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)", 0),
    ("", "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**, "
     "signed char, unsigned long, CUstream_st*)", 0),
    ("", "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::"
     "allocate(unsigned long)", 0),
    ("", "at::TensorBase at::detail::_empty_strided_generic<c10::ArrayRef<long> >("
     "c10::ArrayRef<long>, c10::ArrayRef<long>, c10::Allocator*, c10::DispatchKeySet, "
     "c10::ScalarType)", 0),
    ("??", "at::detail::empty_strided_generic(c10::ArrayRef<long>, c10::ArrayRef<long>, "
     "c10::Allocator*, c10::DispatchKeySet, c10::ScalarType)", 0),
    ("??", "at::detail::empty_strided_cuda(c10::ArrayRef<long>, c10::ArrayRef<long>, "
     "c10::ScalarType, std::optional<c10::Device>)", 0),
    ("??", "at::native::empty_strided_cuda(c10::ArrayRef<long>, c10::ArrayRef<long>, "
     "std::optional<c10::ScalarType>, std::optional<c10::Layout>, "
     "std::optional<c10::Device>, std::optional<bool>)", 0),
    ("RegisterCUDA.cpp", "at::(anonymous namespace)::(anonymous namespace)::"
     "wrapper_CUDA__empty_strided(c10::ArrayRef<c10::SymInt>, c10::ArrayRef<c10::SymInt>, "
     "std::optional<c10::ScalarType>, std::optional<c10::Layout>, "
     "std::optional<c10::Device>, std::optional<bool>)", 0),
    ("??", "at::_ops::empty_strided::redispatch(c10::DispatchKeySet, "
     "c10::ArrayRef<c10::SymInt>, c10::ArrayRef<c10::SymInt>, "
     "std::optional<c10::ScalarType>, std::optional<c10::Layout>, "
     "std::optional<c10::Device>, std::optional<bool>)", 0),
    ("??", "at::_ops::empty_strided::call(c10::ArrayRef<c10::SymInt>, "
     "c10::ArrayRef<c10::SymInt>, std::optional<c10::ScalarType>, "
     "std::optional<c10::Layout>, std::optional<c10::Device>, std::optional<bool>)", 0),
    ("??", "at::native::new_empty_strided_symint(at::Tensor const&, "
     "c10::ArrayRef<c10::SymInt>, c10::ArrayRef<c10::SymInt>, "
     "std::optional<c10::ScalarType>, std::optional<c10::Layout>, "
     "std::optional<c10::Device>, std::optional<bool>)", 0),
    ("??", "at::_ops::new_empty_strided::call(at::Tensor const&, "
     "c10::ArrayRef<c10::SymInt>, c10::ArrayRef<c10::SymInt>, "
     "std::optional<c10::ScalarType>, std::optional<c10::Layout>, "
     "std::optional<c10::Device>, std::optional<bool>)", 0),
]
ENGINE_THREAD = [
    ("", "torch::autograd::Node::operator()(std::vector<at::Tensor, "
     "std::allocator<at::Tensor> >&&)", 0),
    ("??", "torch::autograd::Engine::evaluate_function(std::shared_ptr<"
     "torch::autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, "
     "std::shared_ptr<torch::autograd::ReadyQueue> const&)", 0),
    ("??", "torch::autograd::Engine::thread_main(std::shared_ptr<"
     "torch::autograd::GraphTask> const&)", 0),
    ("??", "torch::autograd::Engine::thread_init(int, std::shared_ptr<"
     "torch::autograd::ReadyQueue> const&, bool)", 0),
    ("??", "torch::autograd::python::PythonEngine::thread_init(int, std::shared_ptr<"
     "torch::autograd::ReadyQueue> const&, bool)", 0),
    ("thread48.o", "execute_native_thread_routine", 0),
    ("./nptl/pthread_create.c", "start_thread", 442),
    ("./misc/../sysdeps/unix/sysv/linux/x86_64/clone3.S", "__clone3", 81),
]
S_GRAD = ENGINE_ALLOC + [
    ("", "torch::autograd::utils::clone_obey_contract(at::Tensor const&, "
     "at::Tensor const&)", 0),
    ("accumulate_grad.cpp", "void torch::autograd::AccumulateGrad::accumulateGrad<"
     "torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor, "
     "std::allocator<at::Tensor> >&&)::{lambda(at::Tensor&&)#1}>(at::Tensor const&, "
     "at::Tensor&, at::Tensor const&, long, unsigned long, "
     "torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor, "
     "std::allocator<at::Tensor> >&&)::{lambda(at::Tensor&&)#1} const&)", 0),
    ("??", "torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor, "
     "std::allocator<at::Tensor> >&&)", 0),
] + ENGINE_THREAD

OPT_STEP = [torch_("optim/optimizer.py", "_use_grad", 79),
            torch_("optim/optimizer.py", "wrapper", 484),
            user("train.py", "train_step", 101)] + MAIN
S_ADAM = cpp_stack("zeros_like", [torch_("optim/adamw.py", "_init_group", 156),
                                  torch_("optim/adamw.py", "step", 209)] + OPT_STEP)
S_LION = cpp_stack("zeros_like", [user("optim/lion.py", "step", 57),
                                  torch_("optim/optimizer.py", "wrapper", 484),
                                  user("train.py", "train_step", 104)] + MAIN)

S_EMA = cpp_stack("clone", [torch_("nn/parameter.py", "__deepcopy__", 68),
                            (STD + "/copy.py", "deepcopy", 153),
                            (STD + "/copy.py", "_deepcopy_dict", 231),
                            (STD + "/copy.py", "deepcopy", 146),
                            (STD + "/copy.py", "_reconstruct", 265),
                            (STD + "/copy.py", "deepcopy", 172),
                            (STD + "/copy.py", "_deepcopy_dict", 231),
                            (STD + "/copy.py", "deepcopy", 146),
                            (STD + "/copy.py", "_reconstruct", 265),
                            (STD + "/copy.py", "deepcopy", 172),
                            user("ema.py", "__init__", 14),
                            user("train.py", "train_step", 110)] + MAIN)

FORWARD = [torch_("nn/modules/linear.py", "forward", 116)] + MODULE_CALL + \
    [user("model.py", "forward", 44)] + MODULE_CALL
S_HOOK = cpp_stack("clone", [user("features.py", "save_activation", 22),
                             torch_("nn/modules/module.py", "_call_impl", 1574)]
                   + MODULE_CALL[1:] + [user("model.py", "forward", 47)] + MODULE_CALL
                   + [user("train.py", "train_step", 86)] + MAIN)
S_CACHE = cpp_stack("_to_copy", [torch_("_tensor.py", "to", 1099),
                                 user("data/feature_cache.py", "get", 41),
                                 user("train.py", "train_step", 83)] + MAIN)
S_EVAL = cpp_stack("mm", FORWARD + [user("train.py", "evaluate", 121),
                                    user("train.py", "main", 135)] + MAIN[1:])
S_LOSS = cpp_stack("_log_softmax", [torch_("nn/functional.py", "cross_entropy", 3059),
                                    torch_("nn/modules/loss.py", "forward", 1179)]
                   + MODULE_CALL + [user("train.py", "train_step", 88)] + MAIN)
S_PLAIN = cpp_stack("add", [user("train.py", "train_step", 75)] + MAIN)
S_ACT = cpp_stack("mm", FORWARD + [user("train.py", "train_step", 86)] + MAIN)


# ---- the pairs -----------------------------------------------------------------------------

def base(s):
    """What every pair has, unchanged: blocks from before recording, the parameters."""
    addr = BASE
    addr += s.segment(addr, [blk(20 * MiB, NO_STACK)])
    addr += s.segment(addr, [blk(4 * MiB, S_PARAMS, requested=4_000_000) for _ in range(8)])
    return addr


def pair(build):
    old, new = Snap(), Snap()
    build(old, base(old), False)
    build(new, base(new), True)
    return old, new


def no_stack(s, addr, new):
    if new:
        s.segment(addr, [blk(20 * MiB, NO_STACK), blk(12 * MiB, NO_STACK)])


def parameter_gradients(s, addr, new):
    if new:
        s.segment(addr, [blk(4 * MiB, S_GRAD, requested=4_000_000) for _ in range(8)])


def optimizer_state(s, addr, new):
    if new:
        addr += s.segment(addr, [blk(4 * MiB, S_ADAM, requested=4_000_000)
                                 for _ in range(16)])
        s.segment(addr, fill([blk(2 * MiB, S_LION)], 20 * MiB))


def model_copy(s, addr, new):
    if new:
        s.segment(addr, [blk(4 * MiB, S_EMA, requested=4_000_000) for _ in range(8)])


def hook(s, addr, new):
    s.segment(addr, fill([blk(1 * MiB, S_HOOK)] * (4 if new else 1), 20 * MiB))


def user_cache(s, addr, new):
    s.segment(addr, fill([blk(512 * KiB, S_CACHE)] * (30 if new else 10), 20 * MiB))


def eval_without_no_grad(s, addr, new):
    if new:
        s.segment(addr, fill([blk(2 * MiB, S_EVAL)] * 6, 20 * MiB))


def graph_kept_alive(s, addr, new):
    # 100 losses in OLD; the same 100 still live in NEW (same addresses) and 50 more.
    for i in range(0, 150 if new else 100, 10):
        addr += s.segment(addr, fill([blk(1 * MiB, S_LOSS)] * 10, 20 * MiB))


def unknown(s, addr, new):
    addr += s.segment(addr, fill([blk(1 * MiB, S_PLAIN)] * (6 if new else 2), 20 * MiB))
    # Forward activations that grew, but none of OLD's is still live: not evidence that
    # the graph is kept (each step made its own at other addresses).
    if new:
        addr += s.segment(addr, fill([blk(6 * MiB, NO_STACK, I, 0)]
                                     + [blk(3 * MiB, S_ACT)] * 3, 20 * MiB))
    else:
        addr += s.segment(addr, fill([blk(3 * MiB, S_ACT)] * 2, 20 * MiB))


def fragmentation(s, addr, new):
    # The same 24 MiB of activations; NEW's are split: one small block stays in
    # OLD's 24 MiB segment, the rest went to a new 64 MiB one: reserved +64 MiB, allocated flat.
    if new:
        addr += s.segment(addr, fill([blk(2 * MiB, S_ACT)], 24 * MiB))
        s.segment(addr, fill([blk(22 * MiB, S_ACT)], 64 * MiB))
    else:
        s.segment(addr, fill([blk(2 * MiB, S_ACT)] + [blk(11 * MiB, S_ACT)] * 2, 24 * MiB))


# name -> (builder, [(delta bytes of a growing group, pattern code or None)], diff pattern)
PAIRS = {
    "no_stack": (no_stack, [(32 * MiB, "no-stack")], None),
    "parameter_gradients": (parameter_gradients, [(32 * MiB, "parameter-gradients")], None),
    "optimizer_state": (optimizer_state, [(64 * MiB, "optimizer-state"),
                                          (2 * MiB, "optimizer-state")], None),
    "model_copy": (model_copy, [(32 * MiB, "model-copy")], None),
    "hook": (hook, [(3 * MiB, "hook-stores-tensors")], None),
    "user_cache": (user_cache, [(10 * MiB, "user-cache")], None),
    "eval_without_no_grad": (eval_without_no_grad, [(12 * MiB, "eval-without-no-grad")],
                             None),
    "graph_kept_alive": (graph_kept_alive, [(50 * MiB, "graph-kept-alive")], None),
    "unknown": (unknown, [(4 * MiB, None), (9 * MiB - 6 * MiB, None)], None),
    "fragmentation": (fragmentation, [], "fragmentation"),
}


def live_by_stack(snap):
    """Live bytes per stack object (by identity: stacks are shared objects)."""
    out = {}
    for seg in snap.segments:
        for b in seg["blocks"]:
            if b["state"] == "active_allocated":
                key = tuple((f["filename"], f["line"], f["name"]) for f in b["frames"])
                out[key] = out.get(key, 0) + b["size"]
    return out


def reserved(snap):
    return sum(seg["total_size"] for seg in snap.segments)


def main():
    out_dir = os.path.join(HERE, "patterns")
    os.makedirs(out_dir, exist_ok=True)
    expected = {}
    for name, (build, growing, diff_pattern) in PAIRS.items():
        old, new = pair(build)
        # The hand-stated deltas are the data's: every stack that grew, by how much.
        a, b = live_by_stack(old), live_by_stack(new)
        grew = sorted((b.get(k, 0) - a.get(k, 0) for k in set(a) | set(b)
                       if b.get(k, 0) > a.get(k, 0)), reverse=True)
        assert grew == sorted((d for d, _ in growing), reverse=True), (name, grew)
        alloc_delta = sum(b.values()) - sum(a.values())
        res_delta = reserved(new) - reserved(old)
        if diff_pattern == "fragmentation":
            assert alloc_delta == 0 and res_delta == 64 * MiB, (alloc_delta, res_delta)
        old.write(os.path.join(out_dir, name + "_old.pickle"))
        new.write(os.path.join(out_dir, name + "_new.pickle"))
        expected[name] = {"growing": [{"delta_bytes": d, "pattern": p} for d, p in growing],
                          "pattern": diff_pattern, "allocated_delta": alloc_delta,
                          "reserved_delta": res_delta}
    with open(os.path.join(out_dir, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
