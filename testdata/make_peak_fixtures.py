#!/usr/bin/env python3
"""Write the fixtures of the peak (issue 19: peak.h, `snapdiff top`, the diff at the peak).

    python3 testdata/make_peak_fixtures.py      # rewrites testdata/peak/

Two runs of one small model, one training step each, recorded from the middle of the run
(the weights and a cached input batch were allocated before recording began), snapshot-
shaped the way torch writes them (protocol 4, shared frame dicts, entries oldest first):

  fp32.pickle   activations, attention scores and the BmmBackward0 buffer at fp32 sizes.
  bf16.pickle   the same at half the size, plus the weights' bf16 copy (model.py:50
                forward) and a ToCopyBackward0 buffer in the backward.
  fp32_long.pickle  fp32 at twice the sequence length: an 80 MiB peak that needed a
                second 64 MiB segment, free (cached) at the end: reserved grew with the
                peak, which the diff must not call fragmentation.

The end states match: 8 MiB of weights (model.py:10 __init__, live before recording) and
8 MiB of gradients (AccumulateGrad) in one 64 MiB segment each. The peaks differ; worked
by hand (MiB), with W the weights and B the 2 MiB batch (allocated before the trace, freed
in it):

  fp32: W8 B2 | act 8, scores 16 -> 34 | B freed -> 32 | bmm 12 -> 44 = the peak (entry 4)
  bf16: W8 B2 | cast 4, act 4, scores 8 -> 26 | B freed -> 24 | bmm 6 -> 30 | tocopy 4
        -> 34 = the peak (entry 6)

tests/truth/truth_peak.py computes the same from the pickles; tests/cli/test_top_cli.py asserts both.
"""
import os
import pickle

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "peak")
MiB = 1 << 20
BASE = 0x7F3A_8000_0000
T0 = 1_717_100_000_000_000
VEC = "std::vector<at::Tensor, std::allocator<at::Tensor> >"

ALLOC = ("??", "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc("
         "signed char, unsigned long, CUstream_st*)", 0)
ENGINE = [("??", "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::"
           "GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr"
           "<torch::autograd::ReadyQueue> const&)", 0),
          ("??", "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::"
           "GraphTask> const&)", 0)]
TRAIN = ("/home/alice/proj/train.py", "train_step", 88)
S_WEIGHTS = [ALLOC, ("/home/alice/proj/model.py", "__init__", 10), TRAIN]
S_BATCH = [ALLOC, ("/home/alice/proj/data.py", "to_device", 40), TRAIN]
S_CAST = [ALLOC, ("/home/alice/proj/model.py", "forward", 50), TRAIN]
S_ACT = [ALLOC, ("/home/alice/proj/model.py", "forward", 52), TRAIN]
S_SCORES = [ALLOC, ("/home/alice/proj/model.py", "forward", 60), TRAIN]
S_BMM = [ALLOC, ("??", "at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)", 0),
         ("??", "torch::autograd::generated::BmmBackward0::apply(%s&&)" % VEC, 0)] + ENGINE
S_TOCOPY = [ALLOC, ("??", "at::_ops::_to_copy::call(at::Tensor const&, std::optional<"
                    "c10::ScalarType>, bool, std::optional<c10::MemoryFormat>)", 0),
            ("??", "torch::autograd::generated::ToCopyBackward0::apply(%s&&)" % VEC, 0)] + ENGINE
S_GRAD = [ALLOC, ("??", "torch::autograd::AccumulateGrad::apply(%s&&)" % VEC, 0)] + ENGINE


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

    def entry(self, action, addr, size, frames):
        self.t += 100
        self.trace.append({"action": action, "addr": addr, "size": size, "stream": 0,
                           "time_us": self.t, "frames": self.stack(frames)})

    def free(self, addr, size, frames):
        self.entry("free_requested", addr, size, frames)
        self.entry("free_completed", addr, size, frames)

    def write(self, name, extra_segment=False):
        seg, segsize = BASE, 64 * MiB
        live = [(0, 8 * MiB, S_WEIGHTS), (8 * MiB, 8 * MiB, S_GRAD)]
        blocks = [{"address": seg + off, "size": size, "requested_size": size,
                   "state": "active_allocated", "frames": self.stack(st)}
                  for off, size, st in live]
        blocks.append({"address": seg + 16 * MiB, "size": segsize - 16 * MiB,
                       "requested_size": 0, "state": "inactive", "frames": []})
        snap = {"segments": [{"device": 0, "address": seg, "total_size": segsize, "stream": 0,
                              "segment_type": "large", "allocated_size": 16 * MiB,
                              "active_size": 16 * MiB, "requested_size": 16 * MiB,
                              "blocks": blocks, "frames": self.stack(S_WEIGHTS)}],
                "device_traces": [self.trace]}
        if extra_segment:      # the cache the longer sequence's peak needed, now free
            snap["segments"].append({
                "device": 0, "address": seg + segsize, "total_size": segsize, "stream": 0,
                "segment_type": "large", "allocated_size": 0, "active_size": 0,
                "requested_size": 0, "frames": self.stack(S_SCORES),
                "blocks": [{"address": seg + segsize, "size": segsize, "requested_size": 0,
                            "state": "inactive", "frames": []}]})
        with open(os.path.join(OUT, name), "wb") as f:
            pickle.dump(snap, f, protocol=4)


def run(name, half):
    s = Snap()
    a = lambda off: BASE + off * MiB  # noqa: E731
    k = 2 if half else 1
    if half:
        s.entry("alloc", a(18), 4 * MiB, S_CAST)                   # the bf16 weight copy
    s.entry("alloc", a(22), 8 * MiB // k, S_ACT)
    s.entry("alloc", a(30), 16 * MiB // k, S_SCORES)
    s.free(a(16), 2 * MiB, S_BATCH)                                # allocated before the trace
    s.entry("alloc", a(46), 12 * MiB // k, S_BMM)
    if half:
        s.entry("alloc", a(58), 4 * MiB, S_TOCOPY)
    s.free(a(30), 16 * MiB // k, S_SCORES)
    s.entry("alloc", a(8), 8 * MiB, S_GRAD)                        # stays: the gradients
    s.free(a(22), 8 * MiB // k, S_ACT)
    s.free(a(46), 12 * MiB // k, S_BMM)
    if half:
        s.free(a(58), 4 * MiB, S_TOCOPY)
        s.free(a(18), 4 * MiB, S_CAST)
    s.write(name)


def run_long(name):
    """fp32 at twice the sequence length: act 16, scores 32 (in a second segment), bmm 24.
    W8 B2 | act 16, scores 32 -> 58 | B freed -> 56 | bmm 24 -> 80 MiB = the peak (entry 4).
    Reserved +64 MiB (the second segment, free at the end), allocated +0: the peak, not
    fragmentation."""
    s = Snap()
    a = lambda off: BASE + off * MiB  # noqa: E731
    s.entry("alloc", a(22), 16 * MiB, S_ACT)
    s.entry("alloc", a(64), 32 * MiB, S_SCORES)
    s.free(a(16), 2 * MiB, S_BATCH)
    s.entry("alloc", a(96), 24 * MiB, S_BMM)
    s.free(a(64), 32 * MiB, S_SCORES)
    s.entry("alloc", a(8), 8 * MiB, S_GRAD)
    s.free(a(22), 16 * MiB, S_ACT)
    s.free(a(96), 24 * MiB, S_BMM)
    s.write(name, extra_segment=True)


def main():
    os.makedirs(OUT, exist_ok=True)
    run("fp32.pickle", False)
    run("bf16.pickle", True)
    run_long("fp32_long.pickle")


if __name__ == "__main__":
    main()
