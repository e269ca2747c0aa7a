#!/usr/bin/env python3
"""Write the fixtures of `snapdiff replay FILE` (issue 20) with CPython's pickle.

    python3 testdata/make_replay_fixtures.py      # rewrites testdata/replay/

Each scenario is a snapshot whose trace is what torch 2.x's caching allocator records for
a short program, and whose segments and blocks are the state that program ends in. The
figures the replay must give are worked out by hand beside each scenario and written to
testdata/replay/expected.json for tests/cli/test_replay_cli.py.

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

Issue 25: one fixture per rule of c10/cuda/CUDACachingAllocator.cpp the model follows, the
trace being what that code records (figures in MiB; the large pool's pages are 20 MiB, the
small pool's 2 MiB; B is the expandable segment's base):

  es_rules.pickle    recorded with expandable_segments:True. K 1 MiB (small pool: its own
                     segment, one 2 MiB page, segment_type small); A 40 maps [0,40); M 10
                     maps [40,60) (split: 10 free at 50); A freed: a 40 gap at 0 and a 10
                     tail at 50. R 8: the smallest fit is the tail, but get_free_block's
                     expandable_size loop prefers the gap: R at B+0. empty_cache() (its
                     frames name it) unmaps the whole free pages of every free block
                     (release_blocks -> unmap_block): [20,40) of the 32 free at 8, nothing
                     of the 10 at 50. S 16: nothing free fits; find_expandable_block takes
                     the lowest unmapped range, [20,40), with the free 12 before it: maps
                     [20,40) again, S at B+8. Recorded peak reserved 60 + 2 = 62; every
                     placement and each of the four maps matched. Under
                     expandable_segments:False (the program's empty_cache replayed as
                     empty_cache): segments 2 (K), 40 (A),
                     10 (M); R splits A's cached 40, S takes the 32 left: peak 52.
  es_hole.pickle     recorded with expandable_segments:True: A 40 maps [0,40), H 40 maps
                     [40,80), C 20 maps [80,100); H is freed (a 40 hole); D 60 fits no free
                     block, so the tail grows: [100,160) mapped, recorded peak 160. At
                     --capacity 130MiB the map fails (100 + 60 > 130): release_cached_blocks
                     unmaps the hole's two whole pages (release_blocks -> unmap_block),
                     reserved 60; the retry's find_expandable_block passes the 40 unmapped
                     hole (C follows it: 40 < 60) and maps the tail again: D fits, peak 120
                     (reserved 100 before the release), one retry, no OOM.
  pending.pickle     P 100 is freed with free_requested only (record_stream: its event is
                     pending); Q 100 then makes a new segment; P's free_completed comes
                     after. Recorded peak 200. At --capacity 150MiB torch's cudaMalloc for
                     Q fails; release_cached_blocks first runs synchronize_and_free_events
                     (P is freed), then releases P's wholly free segment: the retry
                     succeeds, peak 100, one retry, no OOM.
  gc.pickle          A 60, B 80, C 100 MiB requests, each freed before the next: three
                     segments, recorded peak 240. garbage_collection_threshold:0.5 only acts
                     with a memory fraction (set_fraction): without one its peak is the
                     recorded 240 and gc_needs_fraction is true. With --memory-fraction 0.5
                     --capacity 400MiB (allowed 200, GC threshold 100): before C's
                     cudaMalloc 140 > 100 reserved, so garbage_collect_cached_blocks frees
                     blocks at least as old as the average (A: 2 get_free_block calls old,
                     B: 1; average 1.5): A goes, 60 >= the 40 target; C's segment then fits
                     (180 <= 200): peak 180, no retry. The recorded settings under the same
                     fraction: 240 > 200, so cudaMalloc fails, release_cached_blocks frees
                     A and B, the retry makes C: peak 140, one retry.
  oversize.pickle    A 150 and K 500 made and freed; C 400 splits K's cached 500 (recorded
                     peak 650). Under max_split_size_mb:100 --capacity 1000MiB, K is
                     oversize and C >= 100 may only take it if K < C + 20 (get_free_block):
                     a new segment, 650 + 400 > 1000; release_available_cached_blocks frees
                     the one oversize block large enough (K), not the cache: A stays,
                     end reserved 150 + 400 = 550, peak 650, and no retry counted (torch
                     counts num_alloc_retries only for the alloc_block after
                     release_cached_blocks).
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


EMPTY_CACHE = [{"name": "empty_cache", "filename":
                "/usr/lib/python3/dist-packages/torch/cuda/memory.py", "line": 192},
               {"name": "train", "filename": "/home/u/proj/train.py", "line": 40}]


class Run:
    def __init__(self):
        self.trace = []
        self.segs = {}      # addr -> size
        self.live = {}      # addr -> (size, requested)
        self.settings = dict(SETTINGS)

    def e(self, action, addr, size, frames=None):
        d = {"action": action, "addr": addr, "size": size, "stream": 0}
        if frames is not None:
            d["frames"] = frames
        elif action in ("alloc", "free_requested", "free_completed"):
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

    def snapshot_segments(self, segs, expandable):
        self.segs = segs
        snap = self.snapshot()
        for seg in snap["segments"]:
            seg["is_expandable"] = expandable
        return snap

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
            small = size <= 2 * MiB or addr in getattr(self, "small_segs", ())
            segments.append({"device": 0, "address": addr, "total_size": size,
                             "allocated_size": alloc, "active_size": alloc,
                             "requested_size": alloc, "stream": 0,
                             "segment_type": "small" if small else "large",
                             "segment_pool_id": (0, 0), "is_expandable": False,
                             "frames": [], "blocks": blocks})
        return {"segments": segments, "device_traces": [self.trace],
                "allocator_settings": self.settings}


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


def expandable_run():
    """A Run recorded with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True."""
    r = Run()
    r.settings.update({"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
                       "expandable_segments": True})
    return r


def es_rules():
    r = expandable_run()
    B = BASE
    K = BASE + (1 << 40)                     # the small pool's segment: its own range
    r.e("segment_map", K, 2 * MiB)
    r.alloc(K, 1 * MiB, 1 * MiB)
    r.e("segment_map", B, 40 * MiB)
    r.alloc(B, 40 * MiB, 40 * MiB)           # A
    r.e("segment_map", B + 40 * MiB, 20 * MiB)
    r.alloc(B + 40 * MiB, 10 * MiB, 10 * MiB)    # M
    r.free(B)                                # A: a 40 gap, a 10 tail at 50
    r.alloc(B, 8 * MiB, 8 * MiB)             # R: the gap, not the tail
    r.e("segment_unmap", B + 20 * MiB, 20 * MiB, frames=EMPTY_CACHE)
    r.e("segment_map", B + 20 * MiB, 20 * MiB)
    r.alloc(B + 8 * MiB, 16 * MiB, 16 * MiB)     # S: the lowest gap refilled
    r.small_segs = {K}
    snap = r.snapshot_segments({K: 2 * MiB, B: 60 * MiB}, True)
    return snap, {"recorded_peak": 62 * MiB, "placements": 5, "segment_decisions": 4,
                  "configs": {"recorded": {"peak": 62 * MiB},
                              "expandable_segments:False": {"peak": 52 * MiB}}}


def es_hole():
    r = expandable_run()
    B = BASE
    r.e("segment_map", B, 40 * MiB)
    r.alloc(B, 40 * MiB, 40 * MiB)                      # A
    r.e("segment_map", B + 40 * MiB, 40 * MiB)
    r.alloc(B + 40 * MiB, 40 * MiB, 40 * MiB)           # H
    r.e("segment_map", B + 80 * MiB, 20 * MiB)
    r.alloc(B + 80 * MiB, 20 * MiB, 20 * MiB)           # C
    r.free(B + 40 * MiB)                                # the hole
    r.e("segment_map", B + 100 * MiB, 60 * MiB)
    r.alloc(B + 100 * MiB, 60 * MiB, 60 * MiB)          # D: the tail grows
    snap = r.snapshot_segments({B: 160 * MiB}, True)
    return snap, {"recorded_peak": 160 * MiB, "capacity": "130MiB", "configs": {
        "recorded": {"peak": 120 * MiB, "retries": 1, "ooms": []}}}


def pending():
    r = Run()
    r.segment(BASE, 100 * MiB)
    r.alloc(BASE, 100 * MiB, 100 * MiB)
    r.live.pop(BASE)
    r.e("free_requested", BASE, 100 * MiB)   # record_stream: an event is pending
    r.segment(BASE + 1024 * MiB, 100 * MiB)
    r.alloc(BASE + 1024 * MiB, 100 * MiB, 100 * MiB)
    r.e("free_completed", BASE, 100 * MiB)
    return r.snapshot(), {"recorded_peak": 200 * MiB, "capacity": "150MiB",
                          "configs": {"recorded": {"peak": 100 * MiB, "retries": 1,
                                                   "ooms": []}}}


def gc():
    r = Run()
    for k, size in enumerate((60 * MiB, 80 * MiB, 100 * MiB)):
        addr = BASE + k * 1024 * MiB
        r.segment(addr, size)
        r.alloc(addr, size, size)
        if k < 2:
            r.free(addr)
    return r.snapshot(), {"recorded_peak": 240 * MiB, "capacity": "400MiB",
                          "memory_fraction": "0.5", "configs": {
                              "garbage_collection_threshold:0.5": {"peak": 180 * MiB,
                                                                   "retries": 0},
                              "recorded": {"peak": 140 * MiB, "retries": 1}},
                          "no_fraction": {"garbage_collection_threshold:0.5":
                                          {"peak": 240 * MiB, "gc_needs_fraction": True}}}


def oversize():
    r = Run()
    A, K = BASE, BASE + 1024 * MiB
    r.segment(A, 150 * MiB)
    r.alloc(A, 150 * MiB, 150 * MiB)
    r.free(A)
    r.segment(K, 500 * MiB)
    r.alloc(K, 500 * MiB, 500 * MiB)
    r.free(K)
    r.alloc(K, 400 * MiB, 400 * MiB)         # splits the cached 500
    return r.snapshot(), {"recorded_peak": 650 * MiB, "capacity": "1000MiB", "configs": {
        "max_split_size_mb:100": {"peak": 650 * MiB, "end": 550 * MiB, "retries": 0,
                                  "ooms": []}}}


def main():
    os.makedirs(OUT, exist_ok=True)
    expected = {}
    for name, make in (("es_rules", es_rules), ("es_hole", es_hole), ("pending", pending),
                       ("gc", gc),
                       ("oversize", oversize)):
        snap, exp = make()
        with open(os.path.join(OUT, name + ".pickle"), "wb") as f:
            pickle.dump(snap, f, protocol=4)
        expected[name] = exp
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
