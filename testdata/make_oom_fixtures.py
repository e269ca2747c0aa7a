#!/usr/bin/env python3
"""Write the out-of-memory fixtures of issue 19 with CPython.

    python3 testdata/make_oom_fixtures.py      # rewrites testdata/oom/

Each file's trace holds one `oom` entry with device_free; the figures at the oom (the
allocator's free memory: wholly free cached segments and space stranded in segments with
live blocks; the largest free block of the request's pool and stream) and the verdict are
worked out beside each scenario and checked against tests/truth/truth_frag.py before writing.
Snapshots shaped as torch 2.x writes them (testdata/make_frag_fixtures.py's Snap).

  capacity_start  the trace starts with the run (segment_alloc first): a 2 GiB segment with
                  1200 + 800 MiB live and 48 MiB free; the oom asks for 1 GiB with 200 MiB
                  free on the device. All free 248 MiB < 1 GiB, and 2 * 48 < 1024 - 200:
                  capacity, at the run's start (nothing to compare with).
  fragmentation   a 1 GiB segment live before the trace began (no segment_alloc in it; its
                  trace places Y, X, Z, Q and frees Y, Z as get_free_block would):
                  P 300 live | 200 free | X 200 live | 150 free | Q 174 live (MiB); the oom
                  asks for 256 MiB with 20 MiB free on the device: all free 370 MiB >= 256,
                  largest piece 200 MiB < 256: fragmentation, not at the run's start.
  both            fragmentation's segment with 336 MiB free in it (200 + 136, a live 14 MiB
                  block ends the second hole) plus a wholly free 64 MiB segment on stream 7
                  (cached); the oom asks for 512 MiB with 100 MiB on the device: all free
                  500 MiB < 512, but the allocator's 400 MiB cover more than half of the
                  412 MiB the device lacked: both.

  process_limit   fragmentation's segment; the oom asks for 512 MiB with 60 GiB free on the
                  device: alloc_block refused it without calling cudaMalloc
                  (set_fraction && total_allocated_memory + size > allowed_memory_maximum):
                  the process's limit. The device's free memory does not count: allocator
                  free 350 MiB < 512, 2 * 350 >= 512: both.

  labels_old / labels_new  one site, many views (issue 28): a torchtitan checkout on
                  Perlmutter's scratch and torch and einops installed in a venv there.
                  Every user frame lies under /pscratch/sd/g/gb555/torchtitan/torchtitan/
                  (the prefix labels drop); torch and einops under .../site-packages/. OLD
                  holds the model's weights (models/llama3/model/model.py:340 forward, via
                  torch/nn/modules/linear.py) in a 2 GiB segment; NEW adds 600 MiB at
                  model.py:352 forward via einops/_backends.py and 200 MiB made on the
                  autograd engine's thread by DivBackward0 (no Python frame: "autograd
                  DivBackward0"), then asks for 1 GiB with 200 MiB free on the device (an
                  oom entry, so that frag names the sites live at the oom).
  ranks/step10_rank{0,1,2,3}.pickle  four ranks of one job (issue 26: how many ranks died,
                  at which entry, on what request): ranks 0 and 2 are fragmentation without
                  its oom entry; rank 1 is fragmentation (256 MiB asked at entry 8 with
                  20 MiB free on the device), rank 3 is both (512 MiB asked with 100 MiB
                  free, at the entry the script checks).
"""
import os
import pickle
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "truth"))
sys.dont_write_bytecode = True
from make_frag_fixtures import (ALLOC, ATTN, BASE, BATCH, FREE, MODEL, OPTIM,  # noqa: E402
                                MiB, GiB, Snap)

OUT = os.path.join(HERE, "oom")


def capacity_start():
    s = Snap()
    s.record_settings()
    A = BASE
    s.segment(A, [(1200 * MiB, ALLOC, MODEL), (800 * MiB, ALLOC, ATTN), (48 * MiB, FREE, None)])
    # a 2 GiB buffer makes the segment (get_allocation_size: 2 MiB rounding, so only a
    # request of its size cuts a segment of this size) and is freed; the two tensors split it
    s.trace("segment_alloc", addr=A, size=2048 * MiB, frames=MODEL)
    s.trace("alloc", addr=A, size=2048 * MiB, frames=MODEL)
    s.trace("free_requested", addr=A, size=2048 * MiB, frames=MODEL)
    s.trace("free_completed", addr=A, size=2048 * MiB, frames=MODEL)
    s.trace("alloc", addr=A, size=1200 * MiB, frames=MODEL)
    s.trace("alloc", addr=A + 1200 * MiB, size=800 * MiB, frames=ATTN)
    s.trace("oom", size=GiB, device_free=200 * MiB, frames=ATTN)
    return s


def fragmentation(extra_free_segment=False, request=256 * MiB, device_free=20 * MiB,
                  second_hole=150 * MiB):
    s = Snap()
    s.record_settings()
    A = BASE
    s.segment(A, [(300 * MiB, ALLOC, MODEL), (200 * MiB, FREE, None),
                  (200 * MiB, ALLOC, ATTN), (150 * MiB, FREE, None),
                  (174 * MiB, ALLOC, OPTIM)])
    if extra_free_segment:
        s.segment(A + 2 * GiB, [(64 * MiB, FREE, None)], stream=7)
    # the trace begins after P was allocated: a 200 MiB batch Y takes the front of the free
    # range (best fit, get_free_block, splits the rest off), X the 200 MiB after it, a
    # temporary Z the second hole's size after X, Q the 174 MiB at the end; Y and Z are
    # freed, which leaves the two holes
    s.trace("alloc", addr=A + 300 * MiB, size=200 * MiB, frames=BATCH)
    s.trace("alloc", addr=A + 500 * MiB, size=200 * MiB, frames=ATTN)
    s.trace("alloc", addr=A + 700 * MiB, size=second_hole, frames=BATCH)
    s.trace("alloc", addr=A + 850 * MiB, size=174 * MiB, frames=OPTIM)
    s.trace("free_requested", addr=A + 300 * MiB, size=200 * MiB, frames=BATCH)
    s.trace("free_completed", addr=A + 300 * MiB, size=200 * MiB, frames=BATCH)
    s.trace("free_requested", addr=A + 700 * MiB, size=second_hole, frames=BATCH)
    s.trace("free_completed", addr=A + 700 * MiB, size=second_hole, frames=BATCH)
    s.trace("oom", size=request, device_free=device_free, frames=BATCH)
    return s


def both():
    s = fragmentation(extra_free_segment=True, request=512 * MiB, device_free=100 * MiB,
                      second_hole=136 * MiB)
    # 336 MiB of the big segment's free space: make the second hole 136 MiB by a live
    # 14 MiB block at its end (the segment stays 1 GiB)
    seg = s.segments[0]
    hole = seg["blocks"][3]
    hole["size"] = 136 * MiB
    tail = {"address": hole["address"] + 136 * MiB, "size": 14 * MiB,
            "requested_size": 14 * MiB, "state": ALLOC, "frames": s.stack(BATCH)}
    seg["blocks"].insert(4, tail)
    seg["allocated_size"] += 14 * MiB
    seg["active_size"] += 14 * MiB
    seg["requested_size"] += 14 * MiB
    return s


def process_limit():
    return fragmentation(request=512 * MiB, device_free=60 * GiB)


def expect(path, cause, at_start, allocator_free, largest, limit=False):
    import truth_frag
    dev = truth_frag.analyse(path, 30.0, 0.5)["devices"][0]
    o = dev["oom_events"][0]
    got = (o["cause"], o["at_run_start"], o["allocator_free_bytes"], o["largest_free_bytes"],
           o["process_limit"])
    assert got == (cause, at_start, allocator_free, largest, limit), (path, got)


def without_oom(snap):
    d = snap.data()
    d["device_traces"] = [[e for e in t if e.get("action") != "oom"] for t in d["device_traces"]]
    return d


def write_ranks():
    out = os.path.join(OUT, "ranks")
    os.makedirs(out, exist_ok=True)
    ranks = [without_oom(fragmentation()), fragmentation().data(),
             without_oom(fragmentation()), both().data()]
    for r, d in enumerate(ranks):
        with open(os.path.join(out, "step10_rank%d.pickle" % r), "wb") as f:
            pickle.dump(d, f, protocol=4)
    ooms = [[(i, e["size"], e["device_free"]) for i, e in enumerate(d["device_traces"][0])
             if e.get("action") == "oom"] for d in ranks]
    assert ooms[0] == ooms[2] == [] and ooms[1] == [(8, 256 * MiB, 20 * MiB)], ooms
    assert [x[1:] for x in ooms[3]] == [(512 * MiB, 100 * MiB)], ooms


TT = "/pscratch/sd/g/gb555/torchtitan/torchtitan"
SITE = "/pscratch/sd/g/gb555/ccl-bench-venv/lib/python3.11/site-packages"
TT_MAIN = [(TT + "/train.py", "train_step", 520), (TT + "/train.py", "<module>", 700)]
TT_CALL = [(SITE + "/torch/nn/modules/module.py", "_call_impl", 1747),
           (SITE + "/torch/nn/modules/module.py", "_wrapped_call_impl", 1736)]
TT_WEIGHTS = ([(SITE + "/torch/nn/modules/linear.py", "forward", 125)] + TT_CALL
              + [(TT + "/models/llama3/model/model.py", "forward", 340)] + TT_CALL + TT_MAIN)
TT_EINSUM = ([(SITE + "/torch/functional.py", "einsum", 407),
              (SITE + "/einops/_backends.py", "einsum", 288),
              (SITE + "/einops/einops.py", "einsum", 907),
              (TT + "/models/llama3/model/model.py", "forward", 352)] + TT_CALL + TT_MAIN)
# torch 2.x on the autograd engine's thread (stacks="all"): no Python frame at all.
TT_DIV = [("??", "torch::unwind::unwind()", 0),
          ("CUDACachingAllocator.cpp", "c10::cuda::CUDACachingAllocator::Native::"
           "DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)", 0),
          ("??", "at::_ops::div_Tensor::call(at::Tensor const&, at::Tensor const&)", 0),
          ("??", "torch::autograd::generated::DivBackward0::apply(std::vector<at::Tensor, "
           "std::allocator<at::Tensor> >&&)", 0),
          ("??", "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd"
           "::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::"
           "shared_ptr<torch::autograd::ReadyQueue> const&)", 0),
          ("??", "start_thread", 0)]


def labels(new):
    s = Snap()
    s.record_settings()
    A = BASE
    if new:
        s.segment(A, [(1200 * MiB, ALLOC, TT_WEIGHTS), (600 * MiB, ALLOC, TT_EINSUM),
                      (200 * MiB, ALLOC, TT_DIV), (48 * MiB, FREE, None)])
    else:
        s.segment(A, [(1200 * MiB, ALLOC, TT_WEIGHTS), (848 * MiB, FREE, None)])
    s.trace("segment_alloc", addr=A, size=2048 * MiB, frames=TT_WEIGHTS)
    s.trace("alloc", addr=A, size=1200 * MiB, frames=TT_WEIGHTS)
    if new:
        s.trace("alloc", addr=A + 1200 * MiB, size=600 * MiB, frames=TT_EINSUM)
        s.trace("alloc", addr=A + 1800 * MiB, size=200 * MiB, frames=TT_DIV)
        s.trace("oom", size=GiB, device_free=200 * MiB, frames=TT_WEIGHTS)
    return s


def main():
    os.makedirs(OUT, exist_ok=True)
    files = {"capacity_start": capacity_start(), "fragmentation": fragmentation(),
             "both": both(), "process_limit": process_limit(),
             "labels_old": labels(False), "labels_new": labels(True)}
    for name, s in files.items():
        with open(os.path.join(OUT, name + ".pickle"), "wb") as f:
            pickle.dump(s.data(), f, protocol=4)
    write_ranks()
    expect(os.path.join(OUT, "capacity_start.pickle"), "capacity", True, 48 * MiB, 48 * MiB)
    expect(os.path.join(OUT, "fragmentation.pickle"), "fragmentation", False, 350 * MiB,
           200 * MiB)
    expect(os.path.join(OUT, "both.pickle"), "both", False, 400 * MiB, 200 * MiB)
    expect(os.path.join(OUT, "process_limit.pickle"), "both", False, 350 * MiB, 200 * MiB,
           limit=True)


if __name__ == "__main__":
    main()
