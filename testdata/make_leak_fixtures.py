#!/usr/bin/env python3
"""Write the fixtures of `snapdiff OLD NEW` (issue 3) with CPython's pickle.

    python3 testdata/make_leak_fixtures.py      # rewrites testdata/leak/ and testdata/example/

Every file is snapshot-shaped the way torch writes it: protocol 4, key strings shared,
each frame dict and each stack list one shared object. The figures each scenario must
produce are worked out by hand below (constants with the arithmetic beside them), checked
against the data this script builds, and written to testdata/leak/expected.json for
tests/cli/test_diff_cli.py.

Scenarios (testdata/leak/):
  churn_old/new    step 100 -> step 150 of a training job: a 64 KiB-per-step leak
                   (metrics.py:23 update) hidden among realistic churn: activations
                   re-allocated at other addresses, an eval cache freed, gradient buffers
                   and an einsum scratch that grow a little, tiny loss scalars, blocks
                   without a stack, a pending-free block. The leak must be the top group;
                   --steps 50 --capacity 1GiB gives exact per-step and steps figures.
  churn_new_oom    churn_new plus an `oom` trace entry, for the capacity estimate.
  move_old/new     the same live set at other addresses (address churn, no growth).
  multidev_old/new device 0 in both, device 1 only in old, device 2 only in new.
  legacy_old/new   torch 1.13 bare-list layout: block `history`, no block addresses.
  sites            one block per attribution case (C++ only, torch only, Windows paths,
                   <frozen>, dist-packages, no stack...), diffed against empty.pickle.
  empty            no segments.
testdata/example/old.pickle, new.pickle: the README's first diff, a 2 MiB-per-step leak.
"""
import json
import os
import pickle
import random

HERE = os.path.dirname(os.path.abspath(__file__))
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
BASE = 0x7F3A_4000_0000          # first segment address; LONG1 in the pickle, as in torch
T0 = 1_717_000_000_000_000       # time_us of the first trace entry


class Snap:
    """A snapshot under construction, with torch's object sharing."""

    def __init__(self, legacy=False):
        self.legacy = legacy      # 1.13: bare list, block history, no block address
        self._frames = {}
        self._stacks = {}
        self.segments = []
        self.traces = {}

    def frame(self, filename, name, line):
        key = (filename, name, line)
        if key not in self._frames:
            if self.legacy:
                self._frames[key] = {"filename": filename, "name": name, "line": line}
            else:
                self._frames[key] = {"name": name, "filename": filename, "line": line}
        return self._frames[key]

    def stack(self, frames):
        key = tuple(frames)
        if key not in self._stacks:
            self._stacks[key] = [self.frame(*f) for f in frames]
        return self._stacks[key]

    def segment(self, address, blocks, device=0, small=False):
        """blocks: (size, state, frames, requested) tuples, in address order."""
        out, addr = [], address
        for size, state, frames, requested in blocks:
            if self.legacy:
                b = {"size": size, "state": state}
                if frames:
                    b["history"] = [{"addr": addr, "real_size": requested,
                                     "frames": self.stack(frames)}]
            else:
                b = {"address": addr, "size": size, "requested_size": requested,
                     "state": state, "frames": self.stack(frames)}
            out.append(b)
            addr += size
        total = addr - address
        alloc = sum(b[0] for b in blocks if b[1] == "active_allocated")
        active = sum(b[0] for b in blocks if b[1] != "inactive")
        seg = {"device": device, "address": address, "total_size": total,
               "allocated_size": alloc, "active_size": active,
               "requested_size": sum(b[3] for b in blocks if b[1] != "inactive"),
               "stream": 0, "segment_type": "small" if small else "large"}
        if not self.legacy:
            seg["segment_pool_id"] = (0, 0)
            seg["is_expandable"] = False
            seg["frames"] = self.stack(())
        seg["blocks"] = out
        self.segments.append(seg)
        return total

    def trace(self, device, entry):
        self.traces.setdefault(device, []).append(entry)

    def obj(self):
        segs = sorted(self.segments, key=lambda s: (s["device"], s["address"]))
        if self.legacy:
            return segs
        n_dev = max([s["device"] for s in segs] + list(self.traces) + [0]) + 1
        return {"segments": segs,
                "device_traces": [self.traces.get(d, []) for d in range(n_dev)],
                "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                       "garbage_collection_threshold": 0.0,
                                       "expandable_segments": False}}

    def write(self, path):
        with open(path, "wb") as f:
            pickle.dump(self.obj(), f, protocol=4)


# ---- stacks, innermost frame first -----------------------------------------------------------

PROJ = "/home/alice/proj"
VENV = "/home/alice/venv/lib/python3.11/site-packages"
CEVAL = ("??", "_PyEval_EvalFrameDefault", 0)
CPP_HEAD = [
    ("??", "torch::unwind::unwind()", 0),
    ("??", "torch::CapturedTraceback::gather(bool, bool, bool)", 0),
    ("memory_snapshot.cpp", "torch::cuda::(anonymous namespace)::gather_with_cpp()", 0),
    ("CUDACachingAllocator.cpp", "c10::cuda::CUDACachingAllocator::Native::"
     "DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)", 0),
    ("", "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::"
     "allocate(unsigned long)", 0),
    ("??", "at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)", 0),
]
CPP_TAIL = [("??", "Py_RunMain", 0), ("??", "main", 0),
            ("./csu/../csu/libc-start.c", "__libc_start_main_impl", 392), ("??", "_start", 0)]


def cpp_stack(op, python):
    """A stacks="all" stack: C++ allocation frames, the op, then Python frames with the
    interpreter between them, as torch merges them."""
    frames = list(CPP_HEAD)
    frames.append(("RegisterCUDA.cpp", "at::(anonymous namespace)::wrapper_CUDA_%s" % op, 0))
    frames.append(("python_variable_methods.cpp",
                   "torch::autograd::THPVariable_%s(_object*, _object*, _object*)" % op, 0))
    for f in python:
        frames.append(f)
        frames.append(CEVAL)
    return frames + CPP_TAIL


def torch_(rel, name, line):
    return (VENV + "/torch/" + rel, name, line)


def user(rel, name, line):
    return (PROJ + "/" + rel, name, line)


MAIN = [user("train.py", "main", 130), user("train.py", "<module>", 140),
        ("/usr/lib/python3.11/runpy.py", "_run_code", 86), ("<frozen runpy>", "_run_module_as_main", 198)]
STEP = [user("train.py", "train_step", 92)] + MAIN
MODULE_CALL = [torch_("nn/modules/module.py", "_call_impl", 1527),
               torch_("nn/modules/module.py", "_wrapped_call_impl", 1518)]

S_PARAMS = cpp_stack("empty", [torch_("nn/modules/linear.py", "__init__", 98),
                               user("model.py", "__init__", 18), user("train.py", "main", 111)]
                     + MAIN[1:])
S_ADAM = cpp_stack("zeros_like", [torch_("optim/adamw.py", "_init_group", 156),
                                  torch_("optim/adamw.py", "step", 209),
                                  torch_("optim/optimizer.py", "wrapper", 484),
                                  user("train.py", "train_step", 101)] + MAIN)
S_ACT = cpp_stack("mm", [torch_("nn/modules/linear.py", "forward", 116)] + MODULE_CALL
                  + [user("model.py", "forward", 44)] + MODULE_CALL
                  + [user("train.py", "train_step", 86)] + MAIN)
S_EVAL = cpp_stack("cat", [user("model.py", "forward", 71)] + MODULE_CALL + STEP)
S_GRAD = cpp_stack("add", [user("train.py", "train_step", 75)] + MAIN)
S_EINSUM = cpp_stack("bmm", [torch_("functional.py", "einsum", 386),
                             (VENV + "/einops/_backends.py", "einsum", 288),
                             (VENV + "/einops/einops.py", "einsum", 907),
                             user("model.py", "forward", 52)] + MODULE_CALL + STEP)
S_LOSS = cpp_stack("mean", [user("train.py", "train_step", 88)] + MAIN)
S_LEAK = cpp_stack("clone", [user("metrics.py", "update", 23)] + STEP)
S_PENDING = cpp_stack("empty", [user("train.py", "train_step", 80)] + MAIN)
NO_STACK = []

A, P, I = "active_allocated", "active_pending_free", "inactive"


def blk(size, frames, state=A, requested=None):
    return (size, state, frames, size if requested is None else requested)


def fill(blocks, total):
    """Pad a segment's block list with one inactive block up to `total` bytes."""
    used = sum(b[0] for b in blocks)
    assert used <= total, (used, total)
    return blocks + ([blk(total - used, NO_STACK, I, 0)] if used < total else [])


# ---- scenario: a leak hidden in churn ----------------------------------------------------------
#
# Group (site key)            old                 new                  delta
# metrics.py:23 update        100 x 64 KiB        150 x 64 KiB         +3,276,800  (50 x 65,536)
# train.py:75 train_step      -                   2 x 512 KiB          +1,048,576
# model.py:52 forward         2 x 2 MiB           2 x 2 MiB + 512 KiB  +  524,288
# train.py:88 train_step      3 x 512 B           6 x 512 B            +    1,536
# model.py:44 forward         3+3+1.5+1.5+6+0.5   3+3+1.5+6+1 MiB      -1,048,576
# model.py:71 forward         1 x 1 MiB           -                    -1,048,576
# model.py:18 __init__        8 x 4 MiB (kept)    same                          0
# train.py:101 train_step     16 x 2 MiB (kept)   same                          0
# <no stack>                  2 x 20 MiB (kept)   same                          0
# allocated delta = 3,276,800 + 1,048,576 + 524,288 + 1,536 - 1,048,576 - 1,048,576
#                 = 2,754,048 bytes;  per step over 50 steps = 55,080.96 -> 55,080.
# old allocated = 100*65,536 + 4 MiB + 1,536 + 15.5 MiB + 1 MiB + 32 MiB + 32 MiB + 40 MiB
#               = 6,553,600 + 1,536 + 124.5 MiB (130,547,712) = 137,102,848
# new allocated = 137,102,848 + 2,754,048 = 139,856,896
# --capacity 1GiB: (1,073,741,824 - 139,856,896) / 55,080 = 16,955.06... -> 16,956 steps.
# pending free: 0 -> 512 KiB (train.py:80, not in any group).

CHURN = {
    "steps": 50,
    "allocated_old": 137_102_848,
    "allocated_new": 139_856_896,
    "allocated_delta": 2_754_048,
    "per_step": 55_080,
    "capacity": 1 * GiB,
    "steps_to_capacity": 16_956,
    "pending_free_delta": 512 * KiB,
    "top_key": PROJ + "/metrics.py:23 update",
    "top_delta": 3_276_800,
    "top_blocks_delta": 50,
    "blocks_kept": 8 + 16 + 2 + 2 + 3 + 100,   # params, adam, no-stack, einsum, loss, leak
    "blocks_new": 50 + 2 + 1 + 3 + 5,          # leak, grad, einsum, loss, activations
    "blocks_freed": 6 + 1,                     # activations, eval cache
    # oom variant: device_free 512 MiB + reserved of new (computed below) = capacity
    "oom_device_free": 512 * MiB,
}


def churn(step):
    """The job at step 100 (old) or 150 (new)."""
    s = Snap()
    new = step == 150
    addr = BASE
    # Blocks allocated before recording began: no stack.
    addr += s.segment(addr, [blk(20 * MiB, NO_STACK), blk(20 * MiB, NO_STACK)])
    addr += s.segment(addr, [blk(4 * MiB, S_PARAMS, requested=4_000_000) for _ in range(8)])
    addr += s.segment(addr, [blk(2 * MiB, S_ADAM) for _ in range(16)])
    # Activations: re-allocated every step, so other addresses in each snapshot.
    act_old = [3 * MiB, 3 * MiB, 3 * MiB // 2, 3 * MiB // 2, 6 * MiB, 512 * KiB]
    act_new = [1 * MiB, 6 * MiB, 3 * MiB, 3 * MiB // 2, 3 * MiB]
    acts = [blk(n, S_ACT, requested=n - 256) for n in (act_new if new else act_old)]
    if new:
        acts = [blk(2 * MiB, NO_STACK, I, 0)] + acts
    addr += s.segment(addr, fill(acts, 20 * MiB))
    evals = [] if new else [blk(1 * MiB, S_EVAL)]
    grads = [blk(512 * KiB, S_GRAD), blk(512 * KiB, S_GRAD)] if new else []
    pend = [blk(512 * KiB, S_PENDING, P)] if new else []
    einsum = [blk(2 * MiB, S_EINSUM), blk(2 * MiB, S_EINSUM)]
    einsum += [blk(512 * KiB, S_EINSUM)] if new else []
    # The einsum blocks come first so that they keep their addresses (kept blocks).
    addr += s.segment(addr, fill(einsum + evals + grads + pend, 20 * MiB))
    # Small pool: 2 MiB segments. Loss scalars, then the leak, one 64 KiB clone per step.
    loss = [blk(512, S_LOSS, requested=4) for _ in range(6 if new else 3)]
    addr += s.segment(addr, fill(loss, 2 * MiB), small=True)
    leak = [blk(64 * KiB, S_LEAK, requested=64_000) for _ in range(step)]
    for i in range(0, 160, 32):
        part = leak[i:i + 32]
        if part:
            addr += s.segment(addr, fill(part, 2 * MiB), small=True)
    return s


# ---- scenario: address churn ----------------------------------------------------------------

def moved(shift, order_seed):
    """The same live blocks, stacks and sizes; other segment addresses and block order."""
    s = Snap()
    blocks = ([blk(2 * MiB, S_ACT)] * 3 + [blk(1 * MiB, S_EVAL)] * 2
              + [blk(4 * MiB, S_PARAMS)] * 2 + [blk(512 * KiB, S_GRAD)] * 4
              + [blk(3 * MiB, NO_STACK)])
    random.Random(order_seed).shuffle(blocks)
    addr = BASE + shift
    addr += s.segment(addr, fill(blocks[:6], 20 * MiB)) + 2 * GiB
    s.segment(addr, fill(blocks[6:], 20 * MiB))
    return s


# ---- scenario: several devices ----------------------------------------------------------------

def multidev(new):
    s = Snap()
    s.segment(BASE, fill([blk(2 * MiB, S_ACT)] * (3 if new else 2), 20 * MiB), device=0)
    if new:
        s.segment(BASE + 8 * GiB, fill([blk(1 * MiB, S_LEAK)], 2 * MiB), device=2, small=True)
        s.trace(2, {"action": "segment_alloc", "addr": BASE + 8 * GiB, "size": 2 * MiB,
                    "stream": 0, "time_us": T0})
    else:
        s.segment(BASE + 4 * GiB, fill([blk(4 * MiB, S_PARAMS)], 20 * MiB), device=1)
    return s


# ---- scenario: torch 1.13 list layout ---------------------------------------------------------

def legacy(n_leak):
    s = Snap(legacy=True)
    py_leak = [user("metrics.py", "update", 23)] + STEP
    py_act = ([torch_("nn/modules/linear.py", "forward", 114)] + MODULE_CALL
              + [user("model.py", "forward", 44)] + STEP)
    addr = BASE
    addr += s.segment(addr, fill([blk(4 * MiB, py_act, requested=4_000_000)] * 2
                                 + [blk(2 * MiB, NO_STACK)], 20 * MiB))
    s.segment(addr, fill([blk(128 * KiB, py_leak, requested=100_000)] * n_leak, 2 * MiB),
              small=True)
    return s


# ---- scenario: one block per attribution case -------------------------------------------------
# Each case: (frames, expected site key, expected via "display" or None). Worked out by hand
# from the rules in docs/json-diff.md.

WIN_VENV = "C:\\research\\proj\\.venv\\lib\\site-packages"
WIN_PY = "C:\\Users\\bob\\AppData\\Local\\Programs\\Python\\Python310"
SITE_CASES = [
    # C++ frames only: no Python frame at all -> the innermost frame but the unwinder's.
    ([("??", "torch::unwind::unwind()", 0), ("??", "c10::cuda::malloc", 0),
      ("RegisterCUDA.cpp", "wrapper_CUDA_empty", 0)],
     "??:0 c10::cuda::malloc", None),
    # Nothing but noise -> the innermost frame.
    ([("??", "torch::unwind::unwind()", 0), ("??", "_start", 0)],
     "??:0 torch::unwind::unwind()", None),
    # torch frames only -> the innermost .py frame (all are torch).
    ([("??", "at::empty", 0), torch_("nn/modules/linear.py", "forward", 116),
      torch_("nn/modules/module.py", "_call_impl", 1527)],
     VENV + "/torch/nn/modules/linear.py:116 forward", None),
    # torch then the standard library -> the first .py frame outside torch; torch below it
    # is its `via`.
    ([torch_("cuda/__init__.py", "init", 300), ("/usr/lib/python3.11/threading.py", "run", 975),
      ("<frozen runpy>", "_run_code", 88)],
     "/usr/lib/python3.11/threading.py:975 run", "torch/cuda/__init__.py:300 init"),
    # Windows: torch under site-packages, then a user frame on another drive; only torch
    # below the site, so its innermost .py frame is `via`.
    ([(WIN_VENV + "\\torch\\nn\\modules\\module.py", "_call_impl", 1527),
      ("D:\\work\\proj\\model.py", "forward", 30)],
     "D:\\work\\proj\\model.py:30 forward", "torch\\nn\\modules\\module.py:1527 _call_impl"),
    # Windows standard library in lower-case "lib", then user code.
    ([(WIN_PY + "\\lib\\threading.py", "run", 953), ("C:\\proj\\lib\\util.py", "load", 7)],
     "C:\\proj\\lib\\util.py:7 load", "threading.py:953 run"),
    # Windows upper-case "Lib" (python.org installer layout).
    ([("C:\\Python311\\Lib\\copy.py", "deepcopy", 172), ("C:\\proj\\ema.py", "update", 12)],
     "C:\\proj\\ema.py:12 update", "copy.py:172 deepcopy"),
    # dist-packages library below the user frame: its innermost .py frame is `via`.
    ([("??", "at::mm", 0), ("/usr/local/lib/python3.10/dist-packages/vllm/layers/linear.py",
      "apply", 140), ("??", "_PyEval_EvalFrameDefault", 0),
      ("/usr/local/lib/python3.10/dist-packages/vllm/worker.py", "run", 77),
      ("/opt/app/serve.py", "handle", 12)],
     "/opt/app/serve.py:12 handle", "vllm/layers/linear.py:140 apply"),
    # A third-party einsum called through torch: `via` skips torch for the package.
    ([torch_("functional.py", "einsum", 386), (VENV + "/einops/_backends.py", "einsum", 288),
      (VENV + "/einops/einops.py", "einsum", 907), user("train.py", "step", 88)],
     PROJ + "/train.py:88 step", "einops/_backends.py:288 einsum"),
    # <frozen ...> and <string> are not user code; conda stdlib neither.
    ([("<string>", "<module>", 1), ("/opt/conda/lib/python3.10/runpy.py", "_run_code", 86),
      ("/srv/job/run.py", "main", 5)],
     "/srv/job/run.py:5 main", "runpy.py:86 _run_code"),
    # Not installed torch: a checkout's torch/ directory is still torch.
    ([("/src/pytorch/torch/optim/sgd.py", "step", 80), ("/src/exp/loop.py", "fit", 3)],
     "/src/exp/loop.py:3 fit", "torch/optim/sgd.py:80 step"),
    # No stack at all.
    ([], "<no stack>", None),
]


def sites():
    s = Snap()
    blocks = [blk((i + 1) * 512, frames) for i, (frames, _k, _v) in enumerate(SITE_CASES)]
    s.segment(BASE, fill(blocks, 2 * MiB), small=True)
    return s


# ---- the README's example pair -----------------------------------------------------------------
# A job dumped at step 200 and step 300. `history.append(logits)` at train.py:88 keeps one
# 2 MiB logits tensor per step: +100 x 2 MiB = +200 MiB, the top group; activations churn.

# `loss = criterion(logits, y)` at train.py:88, each loss kept with its graph (a list of
# losses, or `total_loss += loss`): forward memory whose old blocks all stay alive, the
# `graph-kept-alive` pattern of README's example.
S_EX_LEAK = cpp_stack("_log_softmax", [torch_("nn/functional.py", "cross_entropy", 3059),
                                       torch_("nn/modules/loss.py", "forward", 1179)]
                      + MODULE_CALL + [user("train.py", "train_step", 88)] + MAIN)


def example(step):
    s = Snap()
    addr = BASE
    addr += s.segment(addr, [blk(20 * MiB, NO_STACK)])
    addr += s.segment(addr, [blk(4 * MiB, S_PARAMS)] * 10)
    addr += s.segment(addr, [blk(4 * MiB, S_ADAM)] * 20)
    acts = [3 * MiB, 6 * MiB, 2 * MiB] if step == 200 else [6 * MiB, 3 * MiB, 1 * MiB]
    addr += s.segment(addr, fill([blk(n, S_ACT) for n in acts], 20 * MiB))
    addr += s.segment(addr, fill([blk(2 * MiB, S_EINSUM)] * (2 if step == 200 else 3),
                                 20 * MiB))
    n = step
    for i in range(0, n, 10):
        addr += s.segment(addr, fill([blk(2 * MiB, S_EX_LEAK, requested=2_048_000)]
                                     * min(10, n - i), 20 * MiB))
    s.trace(0, {"action": "snapshot", "addr": 0, "size": 0, "stream": 0,
                "time_us": T0 + step * 1_000_000})
    return s


# ---- checks of the hand arithmetic against the built data ---------------------------------------

def allocated(snap):
    return sum(b["size"] for seg in snap.segments for b in seg["blocks"] if b["state"] == A)


def reserved(snap):
    return sum(seg["total_size"] for seg in snap.segments)


def main():
    leak_dir = os.path.join(HERE, "leak")
    ex_dir = os.path.join(HERE, "example")
    os.makedirs(leak_dir, exist_ok=True)
    os.makedirs(ex_dir, exist_ok=True)

    old, new = churn(100), churn(150)
    assert allocated(old) == CHURN["allocated_old"], allocated(old)
    assert allocated(new) == CHURN["allocated_new"], allocated(new)
    assert CHURN["allocated_new"] - CHURN["allocated_old"] == CHURN["allocated_delta"]
    assert CHURN["allocated_delta"] // CHURN["steps"] == CHURN["per_step"]
    room = CHURN["capacity"] - CHURN["allocated_new"]
    assert -(-room // CHURN["per_step"]) == CHURN["steps_to_capacity"]
    old.write(os.path.join(leak_dir, "churn_old.pickle"))
    new.write(os.path.join(leak_dir, "churn_new.pickle"))

    oom = churn(150)
    CHURN["oom_capacity"] = CHURN["oom_device_free"] + reserved(oom)
    CHURN["oom_steps_to_capacity"] = -(-(CHURN["oom_capacity"] - CHURN["allocated_new"])
                                       // CHURN["per_step"])
    oom.trace(0, {"action": "alloc", "addr": BASE, "size": 512, "stream": 0,
                  "time_us": T0, "frames": oom.stack(S_LOSS)})
    oom.trace(0, {"action": "oom", "device_free": CHURN["oom_device_free"],
                  "size": 1 * GiB, "stream": 0, "time_us": T0 + 5, "frames": oom.stack(S_ACT)})
    oom.write(os.path.join(leak_dir, "churn_new_oom.pickle"))

    moved(0, 1).write(os.path.join(leak_dir, "move_old.pickle"))
    moved(64 * GiB, 2).write(os.path.join(leak_dir, "move_new.pickle"))
    multidev(False).write(os.path.join(leak_dir, "multidev_old.pickle"))
    multidev(True).write(os.path.join(leak_dir, "multidev_new.pickle"))
    legacy(3).write(os.path.join(leak_dir, "legacy_old.pickle"))
    legacy(9).write(os.path.join(leak_dir, "legacy_new.pickle"))
    sites().write(os.path.join(leak_dir, "sites.pickle"))
    Snap().write(os.path.join(leak_dir, "empty.pickle"))

    example(200).write(os.path.join(ex_dir, "old.pickle"))
    example(300).write(os.path.join(ex_dir, "new.pickle"))

    expected = {
        "churn": CHURN,
        "sites": [{"key": k, "via": v, "bytes": (i + 1) * 512}
                  for i, (_f, k, v) in enumerate(SITE_CASES)],
        "example_top_key": PROJ + "/train.py:88 train_step",
        "example_top_delta": 100 * 2 * MiB,
    }
    with open(os.path.join(leak_dir, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
