#!/usr/bin/env python3
"""Write the fixtures of the levers (issue 36: levers.h, docs/levers.md).

    python3 testdata/make_levers_fixtures.py      # rewrites testdata/levers/

Snapshot-shaped as torch.cuda.memory._snapshot() writes them (protocol 4, shared frame
dicts, `device_traces` oldest first), with the frames torch's own code puts on the stack:

gpt.pickle  a GPT-like model (nanoGPT's shape): GPT.forward (model.py:120) runs three
    Blocks in a loop (`x = block(x)`), each Block.forward saving attention (6 MiB,
    model.py:82) and MLP (4 MiB, model.py:84) activations and freeing a 1 MiB temporary
    (model.py:83); lm_head (torch/nn/modules/linear.py forward) makes 12 MiB of logits; the
    loss line (train.py:61, `F.cross_entropy(logits.float().view(-1, V), y)`) upcasts them
    (24 MiB, freed when cross_entropy returns) and torch/nn/functional.py `cross_entropy`
    -> aten::_log_softmax saves 24 MiB for its backward. The backward's AccumulateGrad makes
    the gradients; zero_grad(set_to_none=False) keeps them across steps. Adam (torch/optim/
    adam.py `_init_group`: exp_avg and exp_avg_sq, `_multi_tensor_adam`: its foreach
    temporaries) runs after each backward. Worked by hand (MiB): parameters 3 x 8 = 24,
    gradients 24, optimizer state 48. The peak is step 2's log_softmax alloc (its forward):
      parameters 24, gradients 24, optimizer_state 48, activations 3 x 10 + 12 + 24 = 66,
      temporaries 24 (the upcast) = 186.
    The levers there: activation checkpointing of the module called at model.py:120 (3
    calls): 30 - 10 (one call) = 20; halve the micro-batch: (66 + 24) / 2 = 45; a chunked
    loss: 24 + 24 = 48 at train.py:61; zero_grad(set_to_none=True): 24; shard ZeRO-1
    48 -> 24 (N=2), 42 (N=8); ZeRO-2 72 -> 36, 63; ZeRO-3 96 -> 48, 84.
adam_oom.pickle  recorded from the run's start (segment_alloc first): four 16 MiB
    parameters, 2 x 16 MiB of activations freed in the backward, gradients 64, then Adam's
    first step: state 128 (`_init_group`), `_multi_tensor_adam` temporaries 6 x 16 (the
    first reuse the activations' place), then an oom asking 16 MiB with 2 MiB free on the
    device and the 352 MiB segment full: shortfall 14 MiB. Live at the oom: parameters 64,
    gradients 64, Adam state 128, foreach temporaries 96 = 352. The levers: fused=True 96
    (foreach=False: 96 - 16 = 80), enough; ZeRO-1 over the optimizer state and the step's
    temporaries (224) 112, enough from N=2; ZeRO-2 288 -> 144; ZeRO-3 352 -> 176.

tests/truth/truth_levers.py recomputes every lever from the pickles; tests/cli/
test_levers_cli.py asserts both, and the hand figures above.
"""
import os
import pickle

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "levers")
MiB = 1 << 20
BASE = 0x7F00_0000_0000
T0 = 1_733_000_000_000_000
VEC = "std::vector<at::Tensor, std::allocator<at::Tensor> >"
TORCH = "/usr/lib/python3/dist-packages/torch/"
RUN = "/home/ann/gpt/"

ALLOC = ("??", "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc("
         "signed char, unsigned long, CUstream_st*)", 0)
ENGINE = [("??", "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::"
           "GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr"
           "<torch::autograd::ReadyQueue> const&)", 0),
          ("??", "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::"
           "GraphTask> const&)", 0)]
MAIN = (RUN + "train.py", "main", 200)
CALL = [(TORCH + "nn/modules/module.py", "_call_impl", 1562),
        (TORCH + "nn/modules/module.py", "_wrapped_call_impl", 1553)]
S_PARAM = [ALLOC, (TORCH + "nn/modules/module.py", "convert", 1326),
           (TORCH + "nn/modules/module.py", "_apply", 927),
           (TORCH + "nn/modules/module.py", "to", 1340),
           (RUN + "train.py", "build", 30), MAIN]
MODEL = CALL + [(RUN + "train.py", "train_step", 60), MAIN]          # logits = model(x)
GPT = [(RUN + "model.py", "forward", 120)] + MODEL                   # x = block(x)


def block(line):
    return [ALLOC, (RUN + "model.py", "forward", line)] + CALL + GPT


S_ATTN, S_BTMP, S_MLP = block(82), block(83), block(84)
S_LOGITS = [ALLOC, ("??", "at::_ops::linear::call(at::Tensor const&, at::Tensor const&, "
                          "std::optional<at::Tensor> const&)", 0),
            (TORCH + "nn/modules/linear.py", "forward", 125)] + CALL + \
           [(RUN + "model.py", "forward", 124)] + MODEL
LOSS_LINE = (RUN + "train.py", "train_step", 61)
S_UPCAST = [ALLOC, LOSS_LINE, MAIN]
S_LOGSM = [ALLOC, ("??", "at::_ops::_log_softmax::call(at::Tensor const&, long, bool)", 0),
           (TORCH + "nn/functional.py", "cross_entropy", 3104), LOSS_LINE, MAIN]
S_BWD = [ALLOC, ("??", "at::_ops::mm::call(at::Tensor const&, at::Tensor const&)", 0),
         ("??", "torch::autograd::generated::MmBackward0::apply(%s&&)" % VEC, 0)] + ENGINE
S_GRAD = [ALLOC, ("??", "torch::autograd::AccumulateGrad::apply(%s&&)" % VEC, 0)] + ENGINE
OPT = [(TORCH + "optim/optimizer.py", "wrapper", 487), (RUN + "train.py", "train_step", 64),
       MAIN]
S_STATE = [ALLOC, (TORCH + "optim/adam.py", "_init_group", 170),
           (TORCH + "optim/adam.py", "step", 223)] + OPT
S_FOREACH = [ALLOC, ("??", "at::_ops::_foreach_sqrt::call(c10::ArrayRef<at::Tensor>)", 0),
             (TORCH + "optim/adam.py", "_multi_tensor_adam", 590),
             (TORCH + "optim/adam.py", "adam", 780),
             (TORCH + "optim/adam.py", "step", 234)] + OPT


class Snap:
    def __init__(self, segment_mib):
        self._frames, self._stacks = {}, {}
        self.trace = []
        self.t = T0
        self.segment = segment_mib

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

    def entry(self, action, off, size, frames, **extra):
        self.t += 100
        e = {"action": action, "addr": BASE + off * MiB, "size": size * MiB, "stream": 0,
             "time_us": self.t, "frames": self.stack(frames)}
        e.update(extra)
        self.trace.append(e)

    def alloc(self, off, size, frames):
        self.entry("alloc", off, size, frames)

    def free(self, off, size, frames):
        self.entry("free_requested", off, size, frames)
        self.entry("free_completed", off, size, frames)

    def write(self, name, live):
        """live: [(offset MiB, size MiB, frames)] alive at the end, in one segment."""
        seg, total = BASE, self.segment
        blocks, pos = [], 0
        for off, size, st in sorted(live, key=lambda x: x[0]):
            if off > pos:
                blocks.append({"address": seg + pos * MiB, "size": (off - pos) * MiB,
                               "requested_size": 0, "state": "inactive", "frames": []})
            blocks.append({"address": seg + off * MiB, "size": size * MiB,
                           "requested_size": size * MiB, "state": "active_allocated",
                           "frames": self.stack(st)})
            pos = off + size
        if pos < total:
            blocks.append({"address": seg + pos * MiB, "size": (total - pos) * MiB,
                           "requested_size": 0, "state": "inactive", "frames": []})
        used = sum(s for _, s, _ in live) * MiB
        snap = {"segments": [{"device": 0, "address": seg, "total_size": total * MiB,
                              "stream": 0, "segment_type": "large", "allocated_size": used,
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


def gpt():
    s = Snap(256)
    # Offsets (MiB): P 0..24, G 24..48, state 48..96, blocks' activations 96..126, the
    # blocks' temporary 126, logits 128..140, upcast 140..164, log_softmax 164..188, the
    # backward's buffer 188..196, foreach temporaries 200..224.
    for k in range(3):
        s.alloc(8 * k, 8, S_PARAM)
    for step in (1, 2):
        for layer in range(3):
            base = 96 + 10 * layer
            s.alloc(base, 6, S_ATTN)
            s.alloc(126, 1, S_BTMP)
            s.free(126, 1, S_BTMP)
            s.alloc(base + 6, 4, S_MLP)
        s.alloc(128, 12, S_LOGITS)
        s.alloc(140, 24, S_UPCAST)
        s.alloc(164, 24, S_LOGSM)                # step 2: the peak
        s.free(140, 24, S_UPCAST)
        s.alloc(188, 8, S_BWD)
        if step == 1:
            for k in range(3):
                s.alloc(24 + 8 * k, 8, S_GRAD)
        s.free(188, 8, S_BWD)
        s.free(164, 24, S_LOGSM)
        for layer in reversed(range(3)):
            s.free(96 + 10 * layer + 6, 4, S_MLP)
            s.free(96 + 10 * layer, 6, S_ATTN)
        s.free(128, 12, S_LOGITS)
        if step == 1:
            for k in range(6):
                s.alloc(48 + 8 * k, 8, S_STATE)
        for k in range(3):
            s.alloc(200 + 8 * k, 8, S_FOREACH)
        for k in range(3):
            s.free(200 + 8 * k, 8, S_FOREACH)
    live = [(8 * k, 8, S_PARAM) for k in range(3)] + \
           [(24 + 8 * k, 8, S_GRAD) for k in range(3)] + \
           [(48 + 8 * k, 8, S_STATE) for k in range(6)]
    s.write("gpt.pickle", live)


def adam_oom():
    s = Snap(352)
    # P 0..64, G 64..128, state 128..256, activations 256..288, then the foreach
    # temporaries 256..352 (the first two in the activations' place).
    s.entry("segment_alloc", 0, 352, [MAIN])
    for k in range(4):
        s.alloc(16 * k, 16, S_PARAM)
    s.alloc(256, 16, S_ATTN)
    s.alloc(272, 16, S_MLP)
    s.alloc(288, 16, S_BWD)                  # a backward buffer, freed
    for k in range(4):
        s.alloc(64 + 16 * k, 16, S_GRAD)
    s.free(288, 16, S_BWD)
    s.free(272, 16, S_MLP)
    s.free(256, 16, S_ATTN)
    for k in range(8):
        s.alloc(128 + 16 * k, 16, S_STATE)
    for k in range(6):
        s.alloc(256 + 16 * k, 16, S_FOREACH)
    s.entry("oom", 0, 16, S_FOREACH, device_free=2 * MiB)
    s.trace[-1]["addr"] = 0
    live = [(16 * k, 16, S_PARAM) for k in range(4)] + \
           [(64 + 16 * k, 16, S_GRAD) for k in range(4)] + \
           [(128 + 16 * k, 16, S_STATE) for k in range(8)] + \
           [(256 + 16 * k, 16, S_FOREACH) for k in range(6)]
    s.write("adam_oom.pickle", live)


def main():
    os.makedirs(OUT, exist_ok=True)
    gpt()
    adam_oom()


if __name__ == "__main__":
    main()
