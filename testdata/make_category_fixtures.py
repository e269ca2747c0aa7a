#!/usr/bin/env python3
"""Write the fixtures of the categories, phases and steps (issue 26: category.h,
docs/categories.md).

    python3 testdata/make_category_fixtures.py      # rewrites testdata/category/

Snapshot-shaped the way torch writes them (torch.cuda.memory._snapshot(): protocol 4,
shared frame dicts, `device_traces` oldest first, `active_allocated` blocks with frames),
with the frames torch's own code would put on the stack: module set-up through
torch/nn/modules/module.py `_apply` (Module.to), AccumulateGrad and `*Backward0` nodes on
the autograd engine's thread (torch::autograd::Engine::evaluate_function), Adam's state
from torch/optim/adam.py `_init_group` (`torch.zeros_like(p)` for exp_avg, exp_avg_sq)
and its foreach temporaries from `_multi_tensor_adam`.

adam.pickle  recorded from the start; two training steps of a model with two parameters
    (4 MiB and 2 MiB) and Adam. Worked by hand (MiB), P the parameters:
      set-up: P 4 + 2                                                   ->  6
      step 1 forward: act 8 (saved), tmp 1 (freed in the forward)       -> 14
             backward: BmmBackward0 buffer 3, grads 4 + 2, buffer and act freed -> 12
             optimizer: exp_avg 4 + 2, exp_avg_sq 4 + 2, foreach tmp 6, freed  -> 24
      step 2 forward: act 8                                             -> 32
             backward: buffer 3 -> 35 = the peak (entry 24, backward of step 2)
                       buffer and act freed                             -> 24
             optimizer: foreach tmp 6, freed                            -> 24
    At the peak: parameters 6, gradients 6, optimizer_state 12 (twice the parameters: fp32
    Adam), activations 8, temporaries 3 = 35. At the end: 6 + 6 + 12 = 24.
adam_bigstep.pickle  the same program with half the activations (4 MiB) and a 16 MiB foreach
    temporary in the optimizer: the peak moves to the optimizer of step 1:
      P 6 | act 4, tmp 1 freed, buffer 3, grads 4 + 2 -> 19 | freed -> 12 | state 12 -> 24
      | foreach tmp 16 -> 40 = the peak (entry 17; step 2 reaches 40 again, later)
    At the peak: parameters 6, gradients 6, optimizer_state 12, temporaries 16 = 40.
    `snapdiff adam.pickle adam_bigstep.pickle` must say the peaks are in different phases:
    OLD in the backward (activations 8 MiB), NEW in the optimizer (optimizer temporaries
    16 MiB).
pretrace.pickle  recorded from the middle of a run (the trace starts in a backward):
    before recording: the weights (8 MiB, Module.to: parameters by frames), a cached batch
    (2 MiB, data.py, never freed: persistent), the forward's saved activations (6 MiB, freed
    in the backward: activations by lifetime; torch recorded the *free's* stack, train.py's
    loss.backward() line, which is never taken for the allocation's) and an eval buffer
    (1 MiB, freed in data loading: pre_trace).
      start 17 | MulBackward0 buffer 4 -> 21 | grad 8 -> 29 = the peak (entry 1, backward)
      | activations freed -> 23 | buffer freed -> 19 | data.py batch 2 -> 21 | eval freed -> 20
    At the peak: parameters 8, gradients 8, activations 6, temporaries 4, persistent 2,
    pre_trace 1 = 29. At the end: parameters 8, gradients 8, persistent 2, other 2 (the new
    batch: allocated in data loading, alive past it) = 20.

Issue 36 (evidence by size, the set-up, no backward recorded):

first_backward.pickle  recorded from the start (Module.to: P 4 + 2). On the first backward
    torch's accumulateGrad (torch/csrc/autograd/functions/accumulate_grad.h) steals the
    buffer MmBackward0 made for P1's gradient when the parameter has no grad yet and the new
    one is not shared: no AccumulateGrad frame allocates it. P2's gradient is cloned by
    AccumulateGrad::apply (its frame). Adam._init_group then makes exp_avg, exp_avg_sq.
      P 6 | act 8 -> 14 | MmBackward0 4 (P1's grad, kept) -> 18 | AccumulateGrad 2 -> 20
      | BmmBackward0 3, freed -> 20 | act freed -> 12 | state 12 -> 24 | foreach 6, freed
    At the end: parameters 6 (frames), gradients 6 (4 by size: a backward alloc of P1's
    size alive at the optimizer step; 2 by frames), optimizer_state 12 (frames) = 24.
setup.pickle  recording starts before the model is built: the model's constructor
    (model.py Model.__init__ builds Linear layers whose __init__ calls torch.empty, the way
    nn.Linear.__init__ does: two Python __init__ frames) makes P 4 + 2, then a batch (1,
    data.py), then step 1 (forward, backward with AccumulateGrad, Adam._init_group's lazy
    state, foreach temporaries). The set-up is a phase of its own (step null): P are
    parameters by frames, not activations of "step 1 forward".
      P 6 | batch 1 -> 7 | act 8 -> 15 | grads 4 + 2 -> 21 | act freed -> 13
      | state 12 -> 25 | foreach 6 -> 31 (the peak, optimizer of step 1), freed -> 25
    At the end: parameters 6 (frames), gradients 6, optimizer_state 12, other 1 (the batch).
fwd_only.pickle / fwd_bwd.pickle  two recordings of one program: weights (8 MiB, before
    recording, no frames), a forward that saves act1 (4) and act2 (4), frees a temporary
    (2) inside the forward and returns out (1). fwd_only: no backward; Python outside the
    forward (train.py:71, the graph let go of) frees act1 and act2; out is kept.
      8 | act1 -> 12 | tmp -> 14, freed -> 12 | act2 -> 16 | out -> 17 = the peak
      | act1, act2 freed -> 9
    At the peak: persistent 8, activations 9 (no backward recorded), at the end
    persistent 8, activations 1 (no backward recorded).
    fwd_bwd: the same forward, then MulBackward0 2 and AccumulateGrad 8 (the weights'
    gradient: the weights from before recording are parameters by size), act1, act2, out
    and the buffer freed in the backward.
      ... 17 | buffer -> 19 | grad 8 -> 27 = the peak | act1, act2, out, buffer freed -> 16
    The forward's peak (17, at out) has activations 9 in both files (by lifetime here).
model_state.pickle  recorded in a later step: P1 4, P2 2 and Adam's exp_avg / exp_avg_sq
    of each (4, 4, 2, 2) live before recording (no frames); the trace's backward makes
    the gradients with AccumulateGrad (4, 2), its optimizer step only foreach temporaries.
    Three blocks of each gradient size from before recording, one gradient of it per
    backward, no optimizer state allocated in the trace: model_state 18 MiB by size
    (parameters and Adam state cannot be told apart).
      18 | act 8 -> 26 | grads 4 + 2 -> 32 = the peak | act freed -> 24 | foreach 6, freed

tests/truth/truth_category.py computes the same from the pickles; tests/cli/test_category_cli.py
asserts both.
"""
import os
import pickle

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "category")
MiB = 1 << 20
BASE = 0x7F00_0000_0000
T0 = 1_733_000_000_000_000
VEC = "std::vector<at::Tensor, std::allocator<at::Tensor> >"
TORCH = "/usr/lib/python3/dist-packages/torch/"

ALLOC = ("??", "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc("
         "signed char, unsigned long, CUstream_st*)", 0)
ENGINE = [("??", "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::"
           "GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr"
           "<torch::autograd::ReadyQueue> const&)", 0),
          ("??", "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::"
           "GraphTask> const&)", 0)]
MAIN = ("/home/bob/run/train.py", "main", 120)
S_PARAM = [ALLOC, (TORCH + "nn/modules/module.py", "convert", 1326),
           (TORCH + "nn/modules/module.py", "_apply", 927),
           (TORCH + "nn/modules/module.py", "to", 1340),
           ("/home/bob/run/train.py", "build", 30), MAIN]
FWD = [(TORCH + "nn/modules/module.py", "_call_impl", 1562),
       (TORCH + "nn/modules/module.py", "_wrapped_call_impl", 1553),
       ("/home/bob/run/train.py", "train_step", 70), MAIN]
S_ACT = [ALLOC, ("/home/bob/run/model.py", "forward", 41)] + FWD
S_TMP = [ALLOC, ("/home/bob/run/model.py", "forward", 44)] + FWD
S_BMM = [ALLOC, ("??", "at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)", 0),
         ("??", "torch::autograd::generated::BmmBackward0::apply(%s&&)" % VEC, 0)] + ENGINE
S_MUL = [ALLOC, ("??", "at::_ops::mul_Tensor::call(at::Tensor const&, at::Tensor const&)", 0),
         ("??", "torch::autograd::generated::MulBackward0::apply(%s&&)" % VEC, 0)] + ENGINE
S_GRAD = [ALLOC, ("??", "torch::autograd::AccumulateGrad::apply(%s&&)" % VEC, 0)] + ENGINE
OPT = [(TORCH + "optim/optimizer.py", "wrapper", 487),
       ("/home/bob/run/train.py", "train_step", 74), MAIN]
S_STATE = [ALLOC, (TORCH + "optim/adam.py", "_init_group", 170),
           (TORCH + "optim/adam.py", "step", 223)] + OPT
S_FOREACH = [ALLOC, (TORCH + "optim/adam.py", "_multi_tensor_adam", 590),
             (TORCH + "optim/adam.py", "adam", 780),
             (TORCH + "optim/adam.py", "step", 234)] + OPT
S_BACKWARD_CALL = [("/home/bob/run/train.py", "train_step", 72), MAIN]   # a free's stack
S_BATCH = [ALLOC, ("/home/bob/run/data.py", "to_device", 12), MAIN]
S_EVAL = [ALLOC, ("/home/bob/run/eval.py", "evaluate", 20), MAIN]
S_LOAD = [ALLOC, ("/home/bob/run/data.py", "load_batch", 18), MAIN]


class Snap:
    def __init__(self):
        self._frames, self._stacks = {}, {}
        self.trace = []
        self.t = T0

    def stack(self, frames):
        key = tuple(frames)
        if key not in self._stacks:
            out = []
            for fn, name, line in frames:
                k = (fn, name, line)
                if k not in self._frames:
                    self._frames[k] = {"name": name, "filename": fn, "line": line}
                out.append(self._frames[k])
            self._stacks[key] = out
        return self._stacks[key]

    def entry(self, action, off, size, frames):
        self.t += 100
        self.trace.append({"action": action, "addr": BASE + off * MiB, "size": size * MiB,
                           "stream": 0, "time_us": self.t, "frames": self.stack(frames)})

    def alloc(self, off, size, frames):
        self.entry("alloc", off, size, frames)

    def free(self, off, size, frames):
        self.entry("free_requested", off, size, frames)
        self.entry("free_completed", off, size, frames)

    def write(self, name, live):
        """live: [(offset MiB, size MiB, frames)] alive at the end, in one 64 MiB segment."""
        seg, segsize = BASE, 64 * MiB
        blocks, pos = [], 0
        for off, size, st in sorted(live, key=lambda x: x[0]):
            if off > pos:
                blocks.append({"address": seg + pos * MiB, "size": (off - pos) * MiB,
                               "requested_size": 0, "state": "inactive", "frames": []})
            blocks.append({"address": seg + off * MiB, "size": size * MiB,
                           "requested_size": size * MiB, "state": "active_allocated",
                           "frames": self.stack(st)})
            pos = off + size
        if pos < 64:
            blocks.append({"address": seg + pos * MiB, "size": (64 - pos) * MiB,
                           "requested_size": 0, "state": "inactive", "frames": []})
        used = sum(s for _, s, _ in live) * MiB
        snap = {"segments": [{"device": 0, "address": seg, "total_size": segsize, "stream": 0,
                              "segment_type": "large", "allocated_size": used,
                              "active_size": used, "requested_size": used,
                              "blocks": blocks, "frames": []}],
                "device_traces": [self.trace],
                "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": None,
                                       "max_split_size": -1,
                                       "garbage_collection_threshold": 0.0,
                                       "expandable_segments": False,
                                       "release_lock_on_cudamalloc": False,
                                       "pinned_use_host_register": False,
                                       "roundup_power2_divisions": {}}}
        with open(os.path.join(OUT, name), "wb") as f:
            pickle.dump(snap, f, protocol=4)


def adam(name="adam.pickle", act=8, foreach=6):
    s = Snap()
    # Offsets (MiB) in one 64 MiB segment: P1 0, P2 4, G1 6, G2 10, state 12..24,
    # act 24, tmp 32, buffer 33, foreach tmp 36.
    s.alloc(0, 4, S_PARAM)
    s.alloc(4, 2, S_PARAM)
    for step in (1, 2):
        s.alloc(24, act, S_ACT)                  # saved for the backward
        s.alloc(32, 1, S_TMP)
        s.free(32, 1, S_TMP)
        s.alloc(33, 3, S_BMM)                    # step 2: the peak (entry 24)
        if step == 1:
            s.alloc(6, 4, S_GRAD)
            s.alloc(10, 2, S_GRAD)
        s.free(33, 3, S_BMM)
        s.free(24, act, S_ACT)
        if step == 1:
            for off, size in ((12, 4), (16, 2), (18, 4), (22, 2)):
                s.alloc(off, size, S_STATE)      # exp_avg, exp_avg_sq of P1 and P2
        s.alloc(36, foreach, S_FOREACH)
        s.free(36, foreach, S_FOREACH)
    s.write(name, [(0, 4, S_PARAM), (4, 2, S_PARAM), (6, 4, S_GRAD), (10, 2, S_GRAD),
                            (12, 4, S_STATE), (16, 2, S_STATE), (18, 4, S_STATE),
                            (22, 2, S_STATE)])


def pretrace():
    s = Snap()
    # Before recording: weights 0..8 (Module.to), batch 8..10, saved activations 10..16,
    # eval buffer 16..17.
    s.alloc(20, 4, S_MUL)                        # entry 0: 21
    s.alloc(24, 8, S_GRAD)                       # entry 1: 29 = the peak
    s.free(10, 6, S_BACKWARD_CALL)               # the saved activations: 23
    s.free(20, 4, S_MUL)                         # 19
    s.alloc(32, 2, S_LOAD)                       # data loading (other): 21
    s.free(16, 1, S_EVAL)                        # the eval buffer, in data loading: 20
    s.write("pretrace.pickle", [(0, 8, S_PARAM), (8, 2, S_BATCH), (24, 8, S_GRAD),
                                (32, 2, S_LOAD)])


S_MMB = [ALLOC, ("??", "at::_ops::mm::call(at::Tensor const&, at::Tensor const&)", 0),
         ("??", "torch::autograd::generated::MmBackward0::apply(%s&&)" % VEC, 0)] + ENGINE
# Model.__init__ -> Linear.__init__ -> torch.empty (nn.Linear.__init__'s way, in user code)
S_INIT = [ALLOC, ("/home/bob/run/model.py", "__init__", 12),
          ("/home/bob/run/model.py", "__init__", 40),
          ("/home/bob/run/train.py", "build", 30), MAIN]
S_OUT = [ALLOC, ("/home/bob/run/model.py", "forward", 50)] + FWD
S_ACT2 = [ALLOC, ("/home/bob/run/model.py", "forward", 46)] + FWD
S_DROP = [("/home/bob/run/train.py", "train_step", 71), MAIN]    # `del out`: a free's stack


def first_backward():
    s = Snap()
    s.alloc(0, 4, S_PARAM)
    s.alloc(4, 2, S_PARAM)
    s.alloc(24, 8, S_ACT)
    s.alloc(6, 4, S_MMB)          # P1's gradient: accumulateGrad stole MmBackward0's buffer
    s.alloc(10, 2, S_GRAD)        # P2's: AccumulateGrad::apply cloned it
    s.alloc(33, 3, S_BMM)
    s.free(33, 3, S_BMM)
    s.free(24, 8, S_ACT)
    for off, size in ((12, 4), (16, 2), (18, 4), (22, 2)):
        s.alloc(off, size, S_STATE)
    s.alloc(36, 6, S_FOREACH)
    s.free(36, 6, S_FOREACH)
    s.write("first_backward.pickle",
            [(0, 4, S_PARAM), (4, 2, S_PARAM), (6, 4, S_MMB), (10, 2, S_GRAD),
             (12, 4, S_STATE), (16, 2, S_STATE), (18, 4, S_STATE), (22, 2, S_STATE)])


def setup():
    s = Snap()
    s.alloc(0, 4, S_INIT)
    s.alloc(4, 2, S_INIT)
    s.alloc(40, 1, S_LOAD)
    s.alloc(24, 8, S_ACT)
    s.alloc(6, 4, S_GRAD)
    s.alloc(10, 2, S_GRAD)
    s.free(24, 8, S_ACT)
    for off, size in ((12, 4), (16, 2), (18, 4), (22, 2)):
        s.alloc(off, size, S_STATE)
    s.alloc(32, 6, S_FOREACH)
    s.free(32, 6, S_FOREACH)
    s.write("setup.pickle",
            [(0, 4, S_INIT), (4, 2, S_INIT), (6, 4, S_GRAD), (10, 2, S_GRAD),
             (12, 4, S_STATE), (16, 2, S_STATE), (18, 4, S_STATE), (22, 2, S_STATE),
             (40, 1, S_LOAD)])


def one_run(backward):
    s = Snap()
    # before recording: the weights at 0..8 (no frames)
    s.alloc(10, 4, S_ACT)
    s.alloc(14, 2, S_TMP)
    s.free(14, 2, S_TMP)          # inside the forward
    s.alloc(16, 4, S_ACT2)
    s.alloc(20, 1, S_OUT)         # the forward's peak: 17
    if not backward:
        s.free(10, 4, S_DROP)
        s.free(16, 4, S_DROP)
        s.write("fwd_only.pickle", [(0, 8, []), (20, 1, S_OUT)])
        return
    s.alloc(22, 2, S_MUL)
    s.alloc(24, 8, S_GRAD)
    for off, size in ((10, 4), (16, 4), (20, 1), (22, 2)):
        s.free(off, size, S_MUL)
    s.write("fwd_bwd.pickle", [(0, 8, []), (24, 8, S_GRAD)])


def model_state():
    s = Snap()
    # before recording: P1 0..4, P2 4..6, exp_avg/exp_avg_sq 6..10, 10..14, 14..16, 16..18
    s.alloc(24, 8, S_ACT)
    s.alloc(32, 4, S_GRAD)
    s.alloc(36, 2, S_GRAD)
    s.free(24, 8, S_ACT)
    s.alloc(40, 6, S_FOREACH)
    s.free(40, 6, S_FOREACH)
    s.write("model_state.pickle",
            [(0, 4, []), (4, 2, []), (6, 4, []), (10, 4, []), (14, 2, []), (16, 2, []),
             (32, 4, S_GRAD), (36, 2, S_GRAD)])


def main():
    os.makedirs(OUT, exist_ok=True)
    adam()
    adam("adam_bigstep.pickle", act=4, foreach=16)
    pretrace()
    first_backward()
    setup()
    one_run(False)
    one_run(True)
    model_state()


if __name__ == "__main__":
    main()
