#!/usr/bin/env python3
"""Write the fixtures of `snapdiff plan` (issue 37): one small transformer-like program
recorded at four sequence lengths, the way torch writes a snapshot
(torch.cuda.memory._dump_snapshot: protocol 4, entries oldest first, frames innermost first).

    python3 testdata/make_plan_fixtures.py      # rewrites testdata/plan/seq{256,512,1024,2048}.pickle

Per recording at sequence length S (bytes):
  weights     8 MiB, allocated before recording (model.py __init__), live throughout
  per layer (2 layers), in the forward (model.py forward):
    act       S * 4096                     linear in S: a power law, exponent 1
    scores    S * S * 16                   attention scores (4 heads, fp32): exponent 2
    fused     1 MiB + S * 2048 + S * S * 4 an exact quadratic: a power law through two
                                           recordings misses the third
    bias      S * 3 + 100, rounded up to 512 as the allocator rounds (round_size): the
              rounding distorts the power law at small sizes
  workspace   4 MiB, only at S >= 1024 (a cuBLAS-style workspace a kernel takes at large
              sizes; native frames only), kept for the rest of the run
  logits      S * 8192 (loss.py cross_entropy)
  backward: the saved act, bias and the logits are freed in reverse.
scores and fused are freed after their layer (temporaries). Every allocation gets a segment
of its own (2 MiB for small requests, else the request rounded up to 2 MiB), as a cold
caching allocator creates them (get_allocation_size), kept cached to the end.

The recording at 2048 was made after an edit above the model's code: every user frame's
line is one higher. `plan` must still align its allocations (by file and function, not line).

tests/truth/truth_plan.py recomputes the plan's figures from these pickles with CPython.
"""
import os
import pickle

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "plan")
MiB = 1 << 20
BASE = 0x7F00_0000_0000
T0 = 1_733_000_000_000_000
SIZES = (256, 512, 1024, 2048)
ALLOC = ("??", "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc("
         "signed char, unsigned long, CUstream_st*)", 0)


def frames(site, shift):
    """site: list of (file, name, line) innermost first, after the allocator's frame."""
    out = [ALLOC]
    for f, n, l in site:
        out.append((f, n, l + shift if f.endswith(".py") else l))
    return [{"filename": f, "name": n, "line": l} for f, n, l in out]


TRAIN = ("/home/bob/lm/train.py", "main", 40)
S_WEIGHTS = [("/home/bob/lm/model.py", "__init__", 12), TRAIN]
S_ACT = [("/home/bob/lm/model.py", "forward", 30), TRAIN]
S_SCORES = [("/home/bob/lm/attention.py", "forward", 21), ("/home/bob/lm/model.py", "forward", 31), TRAIN]
S_FUSED = [("/home/bob/lm/attention.py", "forward", 25), ("/home/bob/lm/model.py", "forward", 31), TRAIN]
S_BIAS = [("/home/bob/lm/model.py", "forward", 33), TRAIN]
S_WORKSPACE = [("??", "at::cuda::getCurrentCUDABlasHandle()", 0),
               ("??", "at::native::addmm_out_cuda_impl(at::Tensor&, at::Tensor const&)", 0)]
S_LOGITS = [("/home/bob/lm/loss.py", "cross_entropy", 8), TRAIN]


def round512(n):
    return max(512, (n + 511) // 512 * 512)


def segment_size(n):
    return 2 * MiB if n <= MiB else (n + 2 * MiB - 1) // (2 * MiB) * (2 * MiB)


def record(S):
    shift = 1 if S == 2048 else 0
    trace, segments = [], []
    state = {"addr": BASE, "t": T0}

    def new_segment(size, live_block_size=None, block_frames=None):
        addr = state["addr"]
        state["addr"] += segment_size(size) + 64 * MiB
        seg = {"device": 0, "address": addr, "total_size": segment_size(size),
               "allocated_size": 0, "active_size": 0, "requested_size": 0, "stream": 0,
               "segment_type": "small" if size <= MiB else "large", "segment_pool_id": (0, 0),
               "is_expandable": False, "frames": [], "blocks": []}
        segments.append(seg)
        return seg

    def entry(action, addr, size, site):
        state["t"] += 10
        trace.append({"action": action, "addr": addr, "size": size, "stream": 0,
                      "time_us": state["t"], "frames": frames(site, shift)})

    live = {}

    def alloc(size, site):
        seg = new_segment(size)
        entry("segment_alloc", seg["address"], seg["total_size"], site)
        entry("alloc", seg["address"], size, site)
        live[seg["address"]] = (seg, size, site)
        return seg["address"]

    def free(addr):
        seg, size, site = live.pop(addr)
        entry("free_requested", addr, size, site)
        entry("free_completed", addr, size, site)

    # before recording: the weights (their segment and block exist, no trace entry)
    w = new_segment(8 * MiB)
    live_before = {w["address"]: (w, 8 * MiB, S_WEIGHTS)}

    saved = []
    for layer in range(2):
        saved.append(alloc(S * 4096, S_ACT))
        if S >= 1024 and layer == 0:
            workspace = alloc(4 * MiB, S_WORKSPACE)
        scores = alloc(S * S * 16, S_SCORES)
        fused = alloc(1 * MiB + S * 2048 + S * S * 4, S_FUSED)
        saved.append(alloc(round512(S * 3 + 100), S_BIAS))
        free(fused)
        free(scores)
    logits = alloc(S * 8192, S_LOGITS)
    free(logits)
    for a in reversed(saved):
        free(a)

    # the end state: every segment cached; the weights (and the workspace) live
    end_live = dict(live_before)
    end_live.update(live)
    for seg in segments:
        held = end_live.get(seg["address"])
        if held:
            _, size, site = held
            seg["blocks"] = [{"address": seg["address"], "size": round512(size), "requested_size": size,
                              "state": "active_allocated", "frames": frames(site, shift)}]
            if seg["total_size"] > round512(size):
                seg["blocks"].append({"address": seg["address"] + round512(size),
                                      "size": seg["total_size"] - round512(size), "requested_size": 0,
                                      "state": "inactive", "frames": []})
            seg["allocated_size"] = seg["active_size"] = round512(size)
            seg["requested_size"] = size
        else:
            seg["blocks"] = [{"address": seg["address"], "size": seg["total_size"], "requested_size": 0,
                              "state": "inactive", "frames": []}]
    return {"segments": segments, "device_traces": [trace],
            "allocator_settings": {"expandable_segments": False}}


def main():
    os.makedirs(OUT, exist_ok=True)
    for S in SIZES:
        with open(os.path.join(OUT, "seq%d.pickle" % S), "wb") as f:
            pickle.dump(record(S), f, protocol=4)


if __name__ == "__main__":
    main()
