#!/usr/bin/env python3
"""Write the fixtures of the replay's trust reasons (issue 36) with CPython's pickle.

    python3 testdata/make_trust_fixtures.py      # rewrites testdata/trust/

Each file is one short program's snapshot (make_replay_fixtures.Run: torch 2.x's trace and
end state), written as a build of torch writes it, one per reason `snapdiff replay` gives
for its fidelity (docs/json-replay.md, "trust_reasons"):

  cold.pickle      segment_alloc, then allocs and frees: every placement and segment
                   decision checked; trusted, no reason (the control).
  warm.pickle      the same program recorded after its segment was made
                   (_record_memory_history started late): allocs and frees only, 0 segment
                   decisions: "placements-only".
  idle.pickle      a warm start whose window holds no alloc and no segment event (only a
                   free): "nothing-checked".
  patched.pickle   cold, written by a patched torch build: keys upstream's
                   torch/csrc/cuda/memory_snapshot.cpp never writes (a top-level
                   "allocator_backend", a segment "owner", a block "tensor_name", a trace
                   entry "seq"): "non-upstream-keys".
  npu.pickle       cold, as torch_npu's memory_snapshot.cpp (_memory_snapshot_pickled)
                   writes it: the stream is the aclrtStream pointer (its default stream is
                   never 0), no time_us, no segment_pool_id, no allocator_settings:
                   "npu-streams".

tests/truth/truth_trust.py derives each file's reasons from the pickle on its own.
"""
import os
import pickle
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_replay_fixtures as R  # noqa: E402

MiB, BASE = R.MiB, R.BASE
NPU_STREAM = 0xAAAA_F1B2_C3D0     # an aclrtStream pointer, as torch_npu writes it
T0 = 1_717_000_000_000_000


def program(r, segment=True):
    if segment:
        r.segment(BASE, 20 * MiB)
    else:
        r.segs[BASE] = 20 * MiB
    r.alloc(BASE, 4 * MiB, 4 * MiB)
    r.alloc(BASE + 4 * MiB, 2 * MiB, 2 * MiB)
    r.free(BASE)
    r.alloc(BASE, 3 * MiB, 3 * MiB)            # reuses the freed 4 MiB block, split
    return r


def timed(snap):
    """time_us on every entry, as torch >= 2.1 records it."""
    for i, e in enumerate(snap["device_traces"][0]):
        e["time_us"] = T0 + 10 * i
    return snap


def cold():
    return timed(program(R.Run()).snapshot())


def warm():
    return timed(program(R.Run(), segment=False).snapshot())


def idle():
    r = R.Run()
    r.segs[BASE] = 20 * MiB
    r.live[BASE] = (4 * MiB, 4 * MiB)
    r.live[BASE + 4 * MiB] = (2 * MiB, 2 * MiB)
    r.free(BASE)
    return timed(r.snapshot())


def patched():
    s = cold()
    s["allocator_backend"] = "custom"
    s["segments"][0]["owner"] = "rank0"
    for b in s["segments"][0]["blocks"]:
        b["tensor_name"] = "w"
    for e in s["device_traces"][0]:
        e["seq"] = 1
    return s


def npu():
    s = program(R.Run()).snapshot()
    del s["allocator_settings"]
    for seg in s["segments"]:
        seg["stream"] = NPU_STREAM
        del seg["segment_pool_id"]
    for e in s["device_traces"][0]:
        e["stream"] = NPU_STREAM
    return s


def main():
    out = os.path.join(HERE, "trust")
    os.makedirs(out, exist_ok=True)
    for name, make in (("cold", cold), ("warm", warm), ("idle", idle), ("patched", patched),
                       ("npu", npu)):
        with open(os.path.join(out, name + ".pickle"), "wb") as f:
            pickle.dump(make(), f, protocol=4)


if __name__ == "__main__":
    main()
