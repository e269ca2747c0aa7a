#!/usr/bin/env python3
"""Write the fixtures of `snapdiff trace FILE` (issue 10) with CPython's pickle.

    python3 testdata/make_trace_fixtures.py      # rewrites testdata/trace/

Snapshot-shaped the way torch writes them: protocol 4, each frame dict and each stack
list one shared object, trace entries oldest first, time_us as LONG1. The figures each
scenario must produce are worked out by hand below (constants with the arithmetic beside
them), asserted against the data this script builds, and written to
testdata/trace/expected.json for tests/cli/test_trace_cli.py and tests/unit/check_trace.c.

  whole.pickle    the window covers the whole run (it starts with the first
                  segment_alloc): the blocks alive at the end of the replay are exactly the
                  snapshot's active_allocated blocks (addresses and sizes); one block is
                  freed with free_requested only (active_pending_free in the snapshot).
  midrun.pickle   the ring buffer overflowed (allocator_settings.trace_alloc_overflowed):
                  the window starts with frees of blocks allocated before it.
  noreq.pickle    recorded with skip_actions=["free_requested"]: only free_completed.
  phases.pickle   a 1 MiB-per-step leak (metrics.py:23 update) under 8 MiB of activations
                  per step, five steps split by `snapshot` entries, `annotate` entries and
                  external_annotations; device 1 has a short trace of its own.
"""
import json
import os
import pickle

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "trace")
KiB, MiB = 1 << 10, 1 << 20
BASE = 0x7F3A_4000_0000
T0 = 1_717_000_000_000_000


class Snap:
    def __init__(self):
        self._frames, self._stacks = {}, {}
        self.traces = [[]]
        self.segments = []
        self.extra = {}
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

    def entry(self, action, addr, size, frames=None, dev=0, dt=10, timed=True):
        while len(self.traces) <= dev:
            self.traces.append([])
        e = {"action": action, "addr": addr, "size": size, "stream": 0}
        if timed:
            self.t += dt
            e["time_us"] = self.t
        if frames:
            e["frames"] = self.stack(frames)
        self.traces[dev].append(e)

    def write(self, name):
        snap = {"segments": self.segments, "device_traces": self.traces}
        snap.update(self.extra)
        with open(os.path.join(OUT, name), "wb") as f:
            pickle.dump(snap, f, protocol=4)


# Stacks, innermost first.
CPP = ("??", "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc", 0)
TORCH_EMPTY = ("/usr/lib/python3.11/site-packages/torch/_tensor.py", "__torch_function__", 1512)
LINEAR = ("/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py", "forward", 125)
MODEL = ("/home/alice/proj/model.py", "forward", 52)
TRAIN = ("/home/alice/proj/train.py", "train_step", 88)
METRICS = ("/home/alice/proj/metrics.py", "update", 23)
LOADER = ("/home/alice/proj/data.py", "to_device", 40)
S_ACT = [CPP, LINEAR, MODEL, TRAIN]          # site model.py:52 forward
S_LEAK = [CPP, TORCH_EMPTY, METRICS, TRAIN]   # site metrics.py:23 update
S_DATA = [CPP, LOADER, TRAIN]                 # site data.py:40 to_device
K_ACT = "/home/alice/proj/model.py:52 forward"
K_LEAK = "/home/alice/proj/metrics.py:23 update"
K_DATA = "/home/alice/proj/data.py:40 to_device"


def whole():
    """The whole run: segment, allocs, frees, one pending free; snapshot = replay."""
    s = Snap()
    seg, segsize = BASE, 20 * MiB
    s.entry("segment_alloc", seg, segsize, S_ACT)
    # (offset, size, stack, fate): fate "free" = requested + completed, "pending" =
    # requested only, "live" = never freed.
    plan = [(0, 2 * MiB, S_DATA, "live"),
            (2 * MiB, 4 * MiB, S_ACT, "free"),
            (6 * MiB, 4 * MiB, S_ACT, "pending"),
            (10 * MiB, 1 * MiB, S_LEAK, "live"),
            (11 * MiB, 512 * KiB, S_LEAK, "live"),
            (11 * MiB + 512 * KiB, 3 * MiB, S_ACT, "free")]
    for off, size, st, _fate in plan:
        s.entry("alloc", seg + off, size, st)
    for off, size, st, fate in plan:
        if fate in ("free", "pending"):
            s.entry("free_requested", seg + off, size, st)
        if fate == "free":
            s.entry("free_completed", seg + off, size, st)
    # The 2 MiB..6 MiB hole is reused by a new 4 MiB activation that stays.
    s.entry("alloc", seg + 2 * MiB, 4 * MiB, S_ACT)
    plan[1] = (2 * MiB, 4 * MiB, S_ACT, "live")
    # Blocks of the snapshot in address order, tiling the segment.
    blocks, addr = [], seg
    for off, size, st, fate in sorted(plan):
        if addr < seg + off:
            blocks.append({"address": addr, "size": seg + off - addr, "requested_size": 0,
                           "state": "inactive", "frames": []})
        state = {"live": "active_allocated", "pending": "active_pending_free",
                 "free": "inactive"}[fate]
        blocks.append({"address": seg + off, "size": size, "requested_size": size,
                       "state": state, "frames": s.stack(st) if state != "inactive" else []})
        addr = seg + off + size
    blocks.append({"address": addr, "size": seg + segsize - addr, "requested_size": 0,
                   "state": "inactive", "frames": []})
    s.segments.append({"device": 0, "address": seg, "total_size": segsize, "stream": 0,
                       "segment_type": "large", "allocated_size": 0, "active_size": 0,
                       "requested_size": 0, "blocks": blocks, "frames": s.stack(S_ACT)})
    s.write("whole.pickle")
    live = [(seg + off, size) for off, size, _st, fate in sorted(plan) if fate == "live"]
    # Alive: 2 MiB (data) + 4 MiB (reused act) + 1 MiB + 512 KiB (leak) = 7.5 MiB in 4.
    alive_bytes = 2 * MiB + 4 * MiB + 1 * MiB + 512 * KiB
    assert sum(sz for _a, sz in live) == alive_bytes and len(live) == 4
    # Peak: all six first allocs live = 2+4+4+1+0.5+3 = 14.5 MiB, reached by the 3 MiB act.
    return {"alive_bytes": alive_bytes, "alive_count": 4, "alive": live,
            "peak_bytes": 14 * MiB + 512 * KiB, "peak_entry": 6, "peak_key": K_ACT,
            "top_key": K_ACT,        # 4 MiB alive beats data's 2 MiB and the leak's 1.5 MiB
            "groups": {K_ACT: [4 * MiB, 1, 4, 15 * MiB, 3],   # alive b, alive n, allocs, bytes, frees
                       K_DATA: [2 * MiB, 1, 1, 2 * MiB, 0],
                       K_LEAK: [1 * MiB + 512 * KiB, 2, 2, 1 * MiB + 512 * KiB, 0]},
            "entries": len(s.traces[0])}


def midrun():
    """Starts mid-run: frees of blocks allocated before the window."""
    s = Snap()
    s.extra["allocator_settings"] = {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                     "expandable_segments": False,
                                     "trace_alloc_overflowed": True}
    seg = BASE
    # Three blocks from before the window are freed: 1 MiB + 2 MiB + 3 MiB = 6 MiB.
    for i, size in enumerate((1 * MiB, 2 * MiB, 3 * MiB)):
        s.entry("free_requested", seg + i * 8 * MiB, size, S_ACT)
        s.entry("free_completed", seg + i * 8 * MiB, size, S_ACT)
    # Then: two allocs at the freed addresses, one freed again, one leak alloc kept.
    s.entry("alloc", seg, 1 * MiB, S_ACT)
    s.entry("alloc", seg + 8 * MiB, 2 * MiB, S_LEAK)
    s.entry("free_requested", seg, 1 * MiB, S_ACT)
    s.entry("free_completed", seg, 1 * MiB, S_ACT)
    s.entry("alloc", seg + 16 * MiB, 512 * KiB, S_DATA)
    s.write("midrun.pickle")
    return {"alive_bytes": 2 * MiB + 512 * KiB, "alive_count": 2,
            "unknown_free_count": 3, "unknown_free_bytes": 6 * MiB,
            "top_key": K_LEAK, "peak_bytes": 3 * MiB, "peak_entry": 7,   # 1 + 2 at #7; -1, +0.5
            "warnings": ["ring-buffer-overflowed", "starts-mid-run"],
            "entries": len(s.traces[0])}


def noreq():
    """skip_actions=["free_requested"]: frees show as free_completed only."""
    s = Snap()
    seg = BASE
    for i in range(10):                       # ten steps: 1 MiB act freed, 256 KiB leak kept
        s.entry("alloc", seg + i * MiB, 1 * MiB, S_ACT)
        s.entry("alloc", seg + 64 * MiB + i * 256 * KiB, 256 * KiB, S_LEAK)
        s.entry("free_completed", seg + i * MiB, 1 * MiB, S_ACT)
    s.write("noreq.pickle")
    return {"alive_bytes": 10 * 256 * KiB, "alive_count": 10, "top_key": K_LEAK,
            "free_count": 10, "entries": len(s.traces[0])}


def phases():
    """Five steps with a 1 MiB-per-step leak under 8 MiB of activations per step."""
    s = Snap()
    seg = BASE
    leak_addr = seg + 256 * MiB
    ann = []
    for step in range(5):
        if step:
            s.entry("snapshot", 0, 0)          # torch writes addr 0, size = active bytes
        s.entry("annotate", 0, 0)              # user_metadata would name it
        t_start = s.t + 1
        ann.append({"name": "train_step", "stage": "START", "device": 0, "time_us": t_start})
        for k in range(8):                     # 8 x 1 MiB activations, all freed
            s.entry("alloc", seg + k * MiB, 1 * MiB, S_ACT)
        s.entry("alloc", leak_addr + step * MiB, 1 * MiB, S_LEAK)
        for k in range(8):
            s.entry("free_requested", seg + k * MiB, 1 * MiB, S_ACT)
            s.entry("free_completed", seg + k * MiB, 1 * MiB, S_ACT)
        ann.append({"stage": "END", "name": "train_step", "device": 0, "time_us": s.t + 1})
    # Device 1: one alloc, kept.
    s.entry("alloc", BASE + (1 << 40), 64 * KiB, S_DATA, dev=1)
    s.extra["external_annotations"] = ann
    s.write("phases.pickle")
    return {"alive_bytes": 5 * MiB, "alive_count": 5, "top_key": K_LEAK,
            "peak_bytes": 9 * MiB + 4 * MiB,   # last step: 8 act + 5 leak = 13 MiB
            "leak_per_step": 1 * MiB, "steps": 5,
            "device1_alive": 64 * KiB, "entries": len(s.traces[0])}


def main():
    os.makedirs(OUT, exist_ok=True)
    exp = {"whole": whole(), "midrun": midrun(), "noreq": noreq(), "phases": phases()}
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(exp, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
