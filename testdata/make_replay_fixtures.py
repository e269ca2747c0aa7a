#!/usr/bin/env python3
"""Write the fixtures of `snapdiff replay FILE` (issue 20) with CPython's pickle.

    python3 testdata/make_replay_fixtures.py      # rewrites testdata/replay/

Each scenario is a snapshot whose trace is what torch 2.x's caching allocator records for
a short program, and whose segments and blocks are the state that program ends in. The
figures the replay must give are worked out by hand beside each scenario and written to
testdata/replay/expected.json for tests/test_replay_cli.py.

  split600.pickle    a 600 MiB block is freed, then 100 MiB is requested: torch splits the
                     cached block (peak reserved 600 MiB, as recorded); under
                     max_split_size_mb:512 a block >= 512 MiB is never split for a smaller
                     request, so a new 100 MiB segment is made: peak 700 MiB.
  retry.pickle       a cached 100 MiB segment, then a 200 MiB request: recorded (no
                     capacity), a new segment: peak 300 MiB. At --capacity 250MiB the
                     cudaMalloc would fail, the cached segment is released and the request
                     retried: peak 200 MiB, one retry, no OOM.
  stranded.pickle    a 60 MiB segment split into three 20 MiB blocks; the outer two are
                     freed (40 MiB stranded in two pieces around a live one), then 40 MiB is
                     requested: a new segment (peak 100 MiB). At --capacity 80MiB nothing
                     can be released (the segment holds a live block): one OOM, at that
                     entry; at --capacity 100MiB none.
  growing.pickle     requests of 30, 32, ... 48 MiB, each freed before the next: each needs
                     a new segment (nothing cached is large enough), peak 390 MiB (their
                     sum). Under expandable_segments:True one segment grows by 20 MiB pages
                     to hold the largest: peak 60 MiB.
"""
import json
import os
import pickle

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "replay")
MiB = 1 << 20
BASE = 0x7F3A_0000_0000
SETTINGS = {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
            "garbage_collection_threshold": 0.0, "expandable_segments": False}
FRAMES = [{"name": "forward", "filename": "/home/u/proj/model.py", "line": 12}]


class Run:
    def __init__(self):
        self.trace = []
        self.segs = {}      # addr -> size
        self.live = {}      # addr -> (size, requested)

    def e(self, action, addr, size):
        d = {"action": action, "addr": addr, "size": size, "stream": 0}
        if action in ("alloc", "free_requested", "free_completed"):
            d["frames"] = FRAMES
        self.trace.append(d)

    def segment(self, addr, size):
        self.e("segment_alloc", addr, size)
        self.segs[addr] = size

    def alloc(self, addr, req, size):
        self.e("alloc", addr, req)
        self.live[addr] = (size, req)

    def free(self, addr):
        req = self.live.pop(addr)[1]
        self.e("free_requested", addr, req)
        self.e("free_completed", addr, req)

    def snapshot(self):
        segments = []
        for addr in sorted(self.segs):
            size = self.segs[addr]
            blocks, at = [], addr
            for b in sorted(a for a in self.live if addr <= a < addr + size):
                if b > at:
                    blocks.append({"address": at, "size": b - at, "requested_size": 0,
                                   "state": "inactive", "frames": []})
                bs, req = self.live[b]
                blocks.append({"address": b, "size": bs, "requested_size": req,
                               "state": "active_allocated", "frames": FRAMES})
                at = b + bs
            if at < addr + size:
                blocks.append({"address": at, "size": addr + size - at, "requested_size": 0,
                               "state": "inactive", "frames": []})
            alloc = sum(b["size"] for b in blocks if b["state"] != "inactive")
            segments.append({"device": 0, "address": addr, "total_size": size,
                             "allocated_size": alloc, "active_size": alloc,
                             "requested_size": alloc, "stream": 0,
                             "segment_type": "small" if size <= 2 * MiB else "large",
                             "segment_pool_id": (0, 0), "is_expandable": False,
                             "frames": [], "blocks": blocks})
        return {"segments": segments, "device_traces": [self.trace],
                "allocator_settings": dict(SETTINGS)}


def split600():
    r = Run()
    r.segment(BASE, 600 * MiB)
    r.alloc(BASE, 600 * MiB, 600 * MiB)
    r.free(BASE)
    r.alloc(BASE, 100 * MiB, 100 * MiB)      # split: 500 MiB stays cached
    return r, {"recorded_peak": 600 * MiB, "configs": {
        # the 600 MiB segment is made inside the trace, so the replay makes it too
        "recorded": {"peak": 600 * MiB, "segment_allocs": 1},
        "max_split_size_mb:512": {"peak": 700 * MiB, "segment_allocs": 2}}}


def retry():
    r = Run()
    r.segment(BASE, 100 * MiB)
    r.alloc(BASE, 100 * MiB, 100 * MiB)
    r.free(BASE)
    r.segment(BASE + 1024 * MiB, 200 * MiB)
    r.alloc(BASE + 1024 * MiB, 200 * MiB, 200 * MiB)
    return r, {"recorded_peak": 300 * MiB, "capacity": "250MiB", "configs": {
        "recorded": {"peak": 200 * MiB, "retries": 1, "ooms": []}}}


def stranded():
    r = Run()
    r.segment(BASE, 60 * MiB)
    r.alloc(BASE, 60 * MiB, 60 * MiB)
    r.free(BASE)
    for k in range(3):                          # 20 MiB each: split, 40 then 20 MiB left
        r.alloc(BASE + k * 20 * MiB, 20 * MiB, 20 * MiB)
    r.free(BASE)
    r.free(BASE + 40 * MiB)                     # 40 MiB stranded around the live middle
    r.segment(BASE + 1024 * MiB, 40 * MiB)
    r.alloc(BASE + 1024 * MiB, 40 * MiB, 40 * MiB)
    oom_entry = len(r.trace) - 1
    return r, {"recorded_peak": 100 * MiB, "oom_entry": oom_entry,
               "capacities": {"80MiB": 1, "100MiB": 0}}


def growing():
    r = Run()
    sizes = [(30 + 2 * k) * MiB for k in range(10)]
    for k, s in enumerate(sizes):
        addr = BASE + k * 1024 * MiB
        r.segment(addr, s)
        r.alloc(addr, s, s)
        r.free(addr)
    assert sum(sizes) == 390 * MiB
    return r, {"recorded_peak": 390 * MiB, "configs": {
        "recorded": {"peak": 390 * MiB},
        "expandable_segments:True": {"peak": 60 * MiB}}}


def main():
    os.makedirs(OUT, exist_ok=True)
    expected = {}
    for name, make in (("split600", split600), ("retry", retry), ("stranded", stranded),
                       ("growing", growing)):
        run, exp = make()
        with open(os.path.join(OUT, name + ".pickle"), "wb") as f:
            pickle.dump(run.snapshot(), f, protocol=4)
        expected[name] = exp
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
