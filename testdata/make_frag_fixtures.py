#!/usr/bin/env python3
"""Write the fixtures of `snapdiff frag` (issue 4) with CPython's pickle.

    python3 testdata/make_frag_fixtures.py       # rewrites testdata/frag/*.pickle

Snapshot-shaped the way torch writes them: protocol 4 (the legacy one: protocol 2, as
torch 1.13 users' pickle.dump of memory_snapshot() on old Pythons did not), key strings
shared, each frame dict and each stack list one shared object. The layouts are chosen by
hand so that each scenario lands clearly inside one verdict; the arithmetic is beside
each one, and the script checks it with tests/truth/truth_frag.py before writing anything.

  compact      one device, 122 MiB reserved, 18.5 MiB gap (15%), free room 10 MiB:
               compact, no advice.
  fragmented   a 1 GiB segment carved by 48 live tensors with 48 free holes of mixed sizes
               (4 KiB .. 8 MiB) between them, plus a small segment: gap 58%, index 0.98,
               stranded 58%: fragmented; advice expandable_segments, max_split_size_mb and
               bucketing (settings recorded: expandable off, max_split_size unlimited).
  expandable   expandable_segments:True recorded; one 500 MiB expandable segment (20 MiB
               pages) with 80 mixed free holes and a 20 MiB free page at its end, one 4 MiB
               small expandable segment with a free last page: fragmented, but the advice
               must not suggest expandable_segments again; empty_cache() would return the
               two whole free pages (20 MiB + 2 MiB).
  expandable_tail  (issue 36) one 1 GiB expandable segment: 200 MiB live at its start,
               an 824 MiB free tail (820 MiB of whole pages): compact, and its cached
               memory is the free tail of a live segment, not wholly free segments.
  oom          the trace ends in an oom for 256 MiB while the 1 GiB segment had 344 MiB free
               in three holes (largest 124 MiB); after the oom a 200 MiB tensor was freed,
               so the snapshot alone shows a 420 MiB hole. Replaying the trace backwards
               recovers the state at the oom: fragmentation. No allocator_settings (torch
               2.2): advice expandable_segments and max_split_size_mb.
  oom_broken   like oom, but an alloc after the oom names an address that is not live in
               the snapshot: the replay stops and the oom is judged from the snapshot
               (unclear). The trace still shows what fragmentation cost at its peak: 1.0 GiB
               reserved for 744 MiB live, 282 MiB (27.5%): fragmented (issue 26; compact
               before, from the end state alone).
  oom_many     like oom with 66 oom entries in a row: the oldest two lie beyond the replay
               limit (64) and are judged from the snapshot.
  legacy       torch 1.13 bare list (block history, no block addresses), protocol 2;
               all-free segment releasable, full (gap 4.2%).
  multidev     device 0 compact, device 1 fragmented, private pool (1,2) on device 0.
  empty        no segments at all.
"""
import os
import pickle
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "frag")
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
BASE = 0x7F3A_4000_0000
T0 = 1_717_000_000_000_000

ALLOC, PEND, FREE = "active_allocated", "active_pending_free", "inactive"

# The frames of the fictitious program, innermost first.
MODEL = [("/src/model.py", "forward", 42), ("/src/train.py", "step", 88),
         ("/src/train.py", "<module>", 120)]
ATTN = [("/src/attn.py", "attention", 17), ("/src/model.py", "forward", 40),
        ("/src/train.py", "step", 88), ("/src/train.py", "<module>", 120)]
BATCH = [("/src/data.py", "collate", 61), ("/src/train.py", "step", 80),
         ("/src/train.py", "<module>", 120)]
OPTIM = [("/usr/lib/python3/site-packages/torch/optim/adam.py", "_init_group", 150),
         ("/src/train.py", "step", 95), ("/src/train.py", "<module>", 120)]


class Snap:
    """A snapshot under construction, sharing keys, frames and stacks as torch does."""

    def __init__(self, legacy=False):
        self.legacy = legacy
        self.frames, self.stacks = {}, {}
        self.segments, self.traces = [], {}
        self.settings = None
        self.t = T0

    def stack(self, frames):
        key = tuple(frames or ())
        if key not in self.stacks:
            out = []
            for f in key:
                if f not in self.frames:
                    self.frames[f] = {"name": f[1], "filename": f[0], "line": f[2]}
                out.append(self.frames[f])
            self.stacks[key] = out
        return self.stacks[key]

    def segment(self, address, blocks, device=0, small=False, stream=0, pool=(0, 0),
                expandable=False):
        """blocks: (size, state, frames[, requested]) in address order."""
        out, addr = [], address
        for b in blocks:
            size, state, frames = b[0], b[1], b[2]
            req = b[3] if len(b) > 3 else (size if state != FREE else 0)
            if self.legacy:
                blk = {"size": size, "state": state}
                if state != FREE and frames:
                    blk["history"] = [{"addr": addr, "real_size": req,
                                       "frames": self.stack(frames)}]
            else:
                blk = {"address": addr, "size": size, "requested_size": req,
                       "state": state, "frames": self.stack(frames if state != FREE else ())}
            out.append(blk)
            addr += size
        seg = {"device": device, "address": address, "total_size": addr - address,
               "allocated_size": sum(b[0] for b in blocks if b[1] == ALLOC),
               "active_size": sum(b[0] for b in blocks if b[1] != FREE),
               "stream": stream, "segment_type": "small" if small else "large",
               "blocks": out}
        if not self.legacy:
            seg["requested_size"] = sum(o["requested_size"] for o in out
                                        if o["state"] != FREE)
            seg["segment_pool_id"] = tuple(pool)
            seg["is_expandable"] = expandable
            seg["frames"] = self.stack(blocks[0][2] if blocks else ())
        self.segments.append(seg)
        return address

    def trace(self, action, device=0, addr=0, size=0, stream=0, frames=None, **extra):
        self.t += 1000
        e = {"action": action, "addr": addr, "size": size, "stream": stream,
             "time_us": self.t}
        if action == "oom":
            del e["addr"]
        e.update(extra)
        if frames:
            e["frames"] = self.stack(frames)
        self.traces.setdefault(device, []).append(e)

    def record_settings(self, expandable=False, max_split=-1, conf=""):
        self.settings = {
            "PYTORCH_CUDA_ALLOC_CONF": conf, "max_split_size": max_split,
            "garbage_collection_threshold": 0.0, "expandable_segments": expandable,
            "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
            "pinned_use_cuda_host_register": False,
            "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)}}

    def data(self):
        if self.legacy:
            return self.segments
        n = max([s["device"] for s in self.segments] + list(self.traces) + [-1]) + 1
        top = {"segments": self.segments,
               "device_traces": [self.traces.get(d, []) for d in range(n)]}
        if self.settings is not None:
            top["allocator_settings"] = self.settings
        return top


def compact():
    # seg A 60 MiB: 40 + 12 live, 8 free; seg B 60 MiB: 50 live, 10 free (largest);
    # small 2 MiB: 1.5 MiB live in 3 blocks, 0.5 MiB free.
    # reserved 122 MiB, allocated 103.5 MiB, gap 18.5 MiB = 15.2% < 30%: compact;
    # free 18.5 MiB = 15% of reserved, largest 10 MiB >= 2 MiB: there is room.
    s = Snap()
    s.record_settings()
    s.segment(BASE, [(40 * MiB, ALLOC, MODEL, 40 * MiB - 1000), (12 * MiB, ALLOC, ATTN),
                     (8 * MiB, FREE, None)])
    s.segment(BASE + 64 * MiB, [(50 * MiB, ALLOC, OPTIM), (10 * MiB, FREE, None)])
    s.segment(BASE + 128 * MiB, [(512 * KiB, ALLOC, BATCH, 500 * KiB)] * 3
              + [(512 * KiB, FREE, None)], small=True)
    s.trace("segment_alloc", addr=BASE, size=60 * MiB, frames=MODEL)
    s.trace("alloc", addr=BASE, size=40 * MiB - 1000, frames=MODEL)
    s.trace("alloc", addr=BASE + 40 * MiB, size=12 * MiB, frames=ATTN)
    return s


MIXED = [4 * KiB, 64 * KiB, 512 * KiB, 2 * MiB, 8 * MiB, 1 * MiB, 256 * KiB, 4 * MiB]


def fragmented():
    # 1 GiB segment: 48 live tensors cycling 6, 7, 9 MiB (352 MiB) with 48 holes cycling
    # MIXED (6 cycles of 15.8 MiB = 94.9 MiB), 100 MiB live weights, 11 holes of 40 MiB
    # split by live 1 MiB buffers (440 + 11 MiB), and a free 26.1 MiB remainder.
    # Plus a small 2 MiB segment half used. reserved 1026 MiB, allocated 464 MiB,
    # gap 562 MiB = 54.8%; free 562 MiB in 61 blocks, largest 40 MiB: index 0.93; all of
    # it stranded in segments with live blocks. The big segment holds 561 MiB of it.
    s = Snap()
    s.record_settings(expandable=False, max_split=-1)
    blocks = []
    for i in range(48):
        blocks += [([6, 7, 9][i % 3] * MiB, ALLOC, [MODEL, ATTN, BATCH][i % 3]),
                   (MIXED[i % 8], FREE, None)]
    blocks.append((100 * MiB, ALLOC, OPTIM))
    for i in range(11):
        blocks += [(40 * MiB, FREE, None), (1 * MiB, ALLOC, BATCH)]
    blocks.append((GiB - sum(b[0] for b in blocks), FREE, None))
    s.segment(BASE, blocks)
    s.segment(BASE + 2 * GiB, [(1 * MiB, ALLOC, BATCH), (1 * MiB, FREE, None)], small=True)
    return s


def expandable():
    # 500 MiB expandable large segment = 25 pages of 20 MiB (under 512 MiB: no large split).
    # 80 pairs of live 2 MiB blocks and holes cycling twice MIXED (10 cycles: 316.4 MiB;
    # every hole is smaller than a page, so none holds a whole page), a live block up to
    # 480 MiB, then a free tail of exactly one page (20 MiB): empty_cache() would unmap that
    # page only. Small expandable segment 4 MiB (2 pages of 2 MiB): 1.5 MiB live + 0.5 MiB
    # free in page 0, page 1 free: 2 MiB releasable. reserved 504 MiB, free 338.8 MiB
    # (gap 67.2%), stranded 316.8 MiB = 62.9% of reserved (over the 256 MiB floor),
    # largest stranded piece 16 MiB: stranded index 0.95: fragmented.
    s = Snap()
    s.record_settings(expandable=True, max_split=-1, conf="expandable_segments:True")
    blocks, used = [], 0
    for i in range(80):
        blocks += [(2 * MiB, ALLOC, [MODEL, ATTN][i % 2]), (2 * MIXED[i % 8], FREE, None)]
        used += 2 * MiB + 2 * MIXED[i % 8]
    blocks.append((480 * MiB - used, ALLOC, OPTIM))
    blocks.append((20 * MiB, FREE, None))
    s.segment(BASE, blocks, expandable=True)
    s.segment(BASE + GiB, [(1536 * KiB, ALLOC, BATCH), (512 * KiB + 2 * MiB, FREE, None)],
              small=True, expandable=True)
    s.trace("segment_map", addr=BASE, size=500 * MiB, frames=MODEL)
    s.trace("segment_map", addr=BASE + GiB, size=4 * MiB, frames=BATCH)
    return s


def oom(broken=False, repeats=1):
    # At the oom the 1 GiB segment was: P 200 live | 100 free | X 200 live | 120 free |
    # Q 280 live | 124 free (MiB): 344 MiB free, largest 124 MiB < 256 MiB request.
    # After the oom X is freed; the snapshot shows P | 420 free | Q | 124 free.
    s = Snap()
    A = BASE
    s.segment(A, [(200 * MiB, ALLOC, MODEL), (420 * MiB, FREE, None),
                  (280 * MiB, ALLOC, OPTIM), (124 * MiB, FREE, None)])
    s.segment(A + 2 * GiB, [(512 * KiB, ALLOC, BATCH), (1536 * KiB, FREE, None)], small=True)
    s.trace("segment_alloc", addr=A, size=GiB, frames=MODEL)
    s.trace("alloc", addr=A, size=200 * MiB, frames=MODEL)
    s.trace("alloc", addr=A + 200 * MiB, size=64 * MiB, frames=ATTN)     # transient
    s.trace("alloc", addr=A + 300 * MiB, size=200 * MiB, frames=ATTN)    # X
    s.trace("alloc", addr=A + 620 * MiB, size=280 * MiB, frames=OPTIM)   # Q
    s.trace("free_requested", addr=A + 200 * MiB, size=64 * MiB, frames=ATTN)
    s.trace("free_completed", addr=A + 200 * MiB, size=64 * MiB, frames=ATTN)
    s.trace("segment_alloc", addr=A + 2 * GiB, size=2 * MiB, frames=BATCH)
    s.trace("alloc", addr=A + 2 * GiB, size=400 * KiB, frames=BATCH)
    for _ in range(repeats):
        s.trace("oom", size=256 * MiB, device_free=100 * MiB, frames=MODEL)
    s.trace("free_requested", addr=A + 300 * MiB, size=200 * MiB, frames=ATTN)
    s.trace("free_completed", addr=A + 300 * MiB, size=200 * MiB, frames=ATTN)
    if broken:
        s.trace("alloc", addr=A + 3 * GiB, size=1 * MiB, frames=BATCH)  # not in the snapshot
    s.trace("snapshot", addr=0, size=480 * MiB + 512 * KiB)
    return s


def legacy():
    # torch 1.13: 3 segments; 80 MiB large with 78 MiB live + 2 MiB free, a 20 MiB all-free
    # segment (releasable), a 2 MiB small one full. reserved 102 MiB, allocated 80 MiB,
    # gap 22 MiB = 21.6% < 30%; free 22 MiB = 21.6% of reserved, largest 20 MiB: compact?
    # No: make it full: the all-free segment is 2 MiB small, not 20 MiB large.
    # reserved 84 MiB (80 + 2 + 2), allocated 80.5 MiB, gap 3.5 MiB = 4.2%; largest free
    # 2 MiB is not below 2 MiB, but free 3.5 MiB = 4.2% < 5% of reserved: full.
    s = Snap(legacy=True)
    s.segment(BASE, [(78 * MiB, ALLOC, MODEL, 78 * MiB - 4096), (1536 * KiB, FREE, None),
                     (512 * KiB, ALLOC, BATCH)])
    s.segment(BASE + 128 * MiB, [(2 * MiB, FREE, None)], small=True)
    s.segment(BASE + 256 * MiB, [(2 * MiB, ALLOC, ATTN, 2 * MiB - 512)], small=True)
    return s


def multidev():
    # device 0: compact (the compact layout) plus a private pool (1,2) segment 20 MiB
    #           with 18 MiB live;
    # device 1: the fragmented 1 GiB segment's layout at another base.
    s = compact()
    s.segment(BASE + 512 * MiB, [(18 * MiB, ALLOC, MODEL), (2 * MiB, FREE, None)],
              pool=(1, 2))
    f = fragmented()
    for seg in f.segments:
        if seg["segment_type"] == "large":
            seg = dict(seg)
            seg["device"] = 1
            seg["address"] += 0x1000_0000_0000
            seg["blocks"] = [dict(b, address=b["address"] + 0x1000_0000_0000)
                             for b in seg["blocks"]]
            s.segments.append(seg)
    return s


def expandable_tail():
    # Issue 36: expandable_segments:True recorded; one 1 GiB expandable large segment whose
    # live 200 MiB sit at its start and whose free 824 MiB are its tail (torch's
    # expandable segment grows by pages, map_block, and frees leave the tail). The whole
    # 20 MiB pages of the tail, [200, 1020) MiB, are 820 MiB that release_blocks ->
    # unmap_block hands back; 4 MiB past the last page boundary are stranded. Gap 80.5%
    # (over 30%), stranded 4 MiB (under the 256 MiB floor): compact, and the 820 MiB are the
    # free tail of a live expandable segment, not "wholly free segments".
    s = Snap()
    s.record_settings(expandable=True, max_split=-1, conf="expandable_segments:True")
    s.segment(BASE, [(120 * MiB, ALLOC, MODEL), (80 * MiB, ALLOC, OPTIM),
                     (824 * MiB, FREE, None)], expandable=True)
    s.trace("segment_map", addr=BASE, size=220 * MiB, frames=MODEL)
    return s


def empty():
    s = Snap()
    s.record_settings()
    return s


SCENARIOS = {
    "compact": (compact, {"verdict": "compact"}),
    "fragmented": (fragmented, {"verdict": "fragmented"}),
    "expandable": (expandable, {"verdict": "fragmented"}),
    "oom": (oom, {"verdict": "fragmented"}),
    "oom_broken": (lambda: oom(broken=True), {"verdict": "fragmented"}),
    "oom_many": (lambda: oom(repeats=66), {"verdict": "fragmented"}),
    "legacy": (legacy, {"verdict": "full"}),
    "multidev": (multidev, {"verdict": "fragmented"}),
    "empty": (empty, {"verdict": "compact"}),
    "expandable_tail": (expandable_tail, {"verdict": "compact"}),
}


def main():
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "truth"))
    import truth_frag
    os.makedirs(OUT, exist_ok=True)
    for name, (build, want) in SCENARIOS.items():
        snap = build()
        path = os.path.join(OUT, name + ".pickle")
        with open(path, "wb") as f:
            pickle.dump(snap.data(), f, protocol=2 if snap.legacy else 4)
        got = truth_frag.analyse(path, 30.0, 0.5)["total"]["verdict"]
        if got != want["verdict"]:
            sys.exit("%s: verdict %s, meant %s" % (name, got, want["verdict"]))
        print("%-11s %6d bytes  %s" % (name, os.path.getsize(path), got))


if __name__ == "__main__":
    main()
