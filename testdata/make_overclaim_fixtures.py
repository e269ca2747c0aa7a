#!/usr/bin/env python3
"""Write the fixtures of issue 9's "never over-claim" part with CPython's pickle.

    python3 testdata/make_overclaim_fixtures.py   # rewrites testdata/overclaim/*.pickle

Snapshot-shaped the way torch writes them (protocol 4, keys, frames and stacks shared;
the Snap builder of make_frag_fixtures.py). Each file lands clearly in one case; the
arithmetic is beside each, and the script checks the frag verdicts with
tests/truth/truth_frag.py and the diff warnings with tests/truth/truth_diff.py before writing.

frag, one snapshot each:
  full         1 GiB segment, 1020 MiB live, 4 MiB free: gap 0.4%, free 0.4% < 5%: full.
  cached       7 segments of 512 MiB: 6 wholly free (3 GiB cache), one with 12 MiB live
               and one 500 MiB hole: gap 99.7%, stranded 500 MiB (14%) but in one piece
               (stranded index 0.00): compact, no advice.
  stranded     1 GiB segment: 100 x (6 MiB live, 3.5 MiB hole), 74 MiB live: stranded
               350 MiB = 34.2% of reserved (over the 256 MiB floor), gap 34.2%, stranded
               index 0.99: fragmented.
  below_floor  128 MiB segment: 20 x (3 MiB live, 2 MiB hole), 28 MiB live: gap 31%,
               stranded 40 MiB (31%) in 20 pieces, but under the 256 MiB floor: compact.
  oom_frames   the trace ends in an oom of 4.9 GiB asked at models.py:181 update_nodes
               through torch/nn/functional.py relu and C++ frames (capacity; full).
diff, pairs OLD/NEW (each triggers its own warning and no other):
  clean        the same sites, one grows: no warning.
  no_shared    the same program with its file renamed: no_shared_site.
  few_shared   one small shared site, the big ones differ: few_shared_sites.
  devices      OLD on device 0, NEW on device 1: no warning since issue 19 (one-device
               files are ranks of one job, paired whatever their ordinals).
  settings     expandable_segments off in OLD, on in NEW: settings_differ.
  overflow     NEW records trace_alloc_overflowed: trace_overflowed.
  nostack      most of NEW's live bytes have no frames: mostly_no_stack.
  swapped      the traces' times say NEW is older: swapped.
  multidev     a 2-GPU job: train.py:30 forward lives on devices 0 and 1; it grows by
               64 MiB on device 1 only, and embed shrinks by 16 MiB on device 0: per device
               groups, never summed (no warning).
  rounding     optimizer.py:77 step holds the same requested bytes in smaller blocks
               (-1.9 MiB of rounding), train.py:30 forward grows by 8 MiB requested.
"""
import os
import pickle
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "overclaim")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "truth"))
from make_frag_fixtures import ALLOC, FREE, BASE, KiB, MiB, GiB, Snap  # noqa: E402

# Stacks innermost first, as torch records them: C++ frames, torch's Python, the user's.
CPP = [("??", "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc", 0),
       ("??", "at::native::empty_cuda", 0), ("??", "at::_ops::relu::call", 0)]
MODELS = "/home/u/gnn/models.py"
TRAIN = "/home/u/gnn/train.py"
OPT = "/home/u/gnn/optimizer.py"
RELU = CPP + [("/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py", "relu", 1500),
              (MODELS, "update_nodes", 181), (MODELS, "forward", 240), (TRAIN, "step", 30),
              (TRAIN, "<module>", 90)]
FWD = CPP + [(TRAIN, "forward", 30), (TRAIN, "step", 31), (TRAIN, "<module>", 90)]
STEP = CPP + [(OPT, "step", 77), (TRAIN, "step", 40), (TRAIN, "<module>", 90)]
EMB = CPP + [(MODELS, "embed", 12), (TRAIN, "<module>", 88)]


def renamed(frames, old, new):
    return [(f.replace(old, new), n, l) for f, n, l in frames]


# ---- frag -----------------------------------------------------------------------------

def full():
    s = Snap()
    s.record_settings()
    s.segment(BASE, [(1000 * MiB, ALLOC, FWD), (4 * MiB, FREE, None), (20 * MiB, ALLOC, STEP)])
    return s


def cached():
    s = Snap()
    s.record_settings()
    for i in range(7):
        blocks = [(512 * MiB, FREE, None)]
        if i == 5:
            blocks = [(12 * MiB, ALLOC, FWD), (500 * MiB, FREE, None)]
        s.segment(BASE + i * GiB, blocks)
    return s


def stranded():
    s = Snap()
    s.record_settings()
    blocks = []
    for i in range(100):
        blocks += [(6 * MiB, ALLOC, [FWD, STEP][i % 2]), (3 * MiB + 512 * KiB, FREE, None)]
    blocks.append((74 * MiB, ALLOC, EMB))
    s.segment(BASE, blocks)
    return s


def below_floor():
    s = Snap()
    s.record_settings()
    blocks = []
    for i in range(20):
        blocks += [(3 * MiB, ALLOC, FWD), (2 * MiB, FREE, None)]
    blocks.append((28 * MiB, ALLOC, EMB))
    s.segment(BASE, blocks)
    return s


def oom_frames():
    s = Snap()
    s.segment(BASE, [(2 * GiB, ALLOC, EMB), (40 * MiB, FREE, None)])
    s.trace("segment_alloc", addr=BASE, size=2 * GiB + 40 * MiB, frames=EMB)
    s.trace("alloc", addr=BASE, size=2 * GiB, frames=EMB)
    s.trace("oom", size=4900 * MiB, device_free=int(91.2 * MiB), frames=RELU)
    return s


# ---- diff pairs -------------------------------------------------------------------------

def side(blocks, device=0, settings=True, times=None, overflow=False):
    """One snapshot: blocks (size, frames[, requested]) live in one segment per device."""
    s = Snap()
    if settings:
        s.record_settings(expandable=settings == "expandable",
                          conf="expandable_segments:True" if settings == "expandable" else "")
        if overflow:
            s.settings["trace_alloc_overflowed"] = True
    out = [(b[0], ALLOC, b[1]) + ((b[2],) if len(b) > 2 else ()) for b in blocks]
    total = sum(b[0] for b in blocks)
    pad = (-total) % (2 * MiB) or 2 * MiB
    s.segment(BASE + device * 0x1000_0000_0000, out + [(pad, FREE, None)], device=device)
    if times is not None:
        s.t = times
        s.trace("alloc", device=device, addr=BASE + device * 0x1000_0000_0000,
                size=blocks[0][0], frames=blocks[0][1])
    return s


BASE_BLOCKS = [(64 * MiB, FWD), (32 * MiB, STEP), (16 * MiB, EMB)]


def pair_clean():
    return side(BASE_BLOCKS), side(BASE_BLOCKS + [(8 * MiB, FWD)])


def pair_no_shared():
    new = [(b[0], renamed(b[1], "/home/u/gnn/", "/home/u/gnn2/")) for b in BASE_BLOCKS]
    return side(BASE_BLOCKS), side(new)


def pair_few_shared():
    old = [(2 * MiB, EMB), (200 * MiB, FWD)]
    new = [(2 * MiB, EMB), (200 * MiB, STEP)]
    return side(old), side(new)


def pair_devices():
    return side(BASE_BLOCKS, device=0), side(BASE_BLOCKS + [(8 * MiB, FWD)], device=1)


def pair_settings():
    return side(BASE_BLOCKS), side(BASE_BLOCKS + [(8 * MiB, FWD)], settings="expandable")


def pair_overflow():
    return side(BASE_BLOCKS), side(BASE_BLOCKS + [(8 * MiB, FWD)], overflow=True)


def pair_nostack():
    return side(BASE_BLOCKS), side(BASE_BLOCKS + [(400 * MiB, None)])


T0 = 1_717_000_000_000_000


def pair_swapped():
    return (side(BASE_BLOCKS, times=T0 + 3_600_000_000),
            side(BASE_BLOCKS + [(8 * MiB, FWD)], times=T0))


def two_devices(per_device):
    s = Snap()
    s.record_settings()
    for dev, blocks in per_device.items():
        out = [(b[0], ALLOC, b[1]) for b in blocks]
        s.segment(BASE + dev * 0x1000_0000_0000, out + [(2 * MiB, FREE, None)], device=dev)
    return s


def pair_multidev():
    old = {0: [(64 * MiB, FWD), (16 * MiB, EMB)], 1: [(64 * MiB, FWD)]}
    new = {0: [(64 * MiB, FWD)], 1: [(64 * MiB, FWD), (64 * MiB, FWD)]}
    return two_devices(old), two_devices(new)


STEP_ROUND = CPP + [(OPT, "step", 77), (TRAIN, "step", 41), (TRAIN, "<module>", 90)]


def pair_rounding():
    # optimizer.py:77 step: 40 tensors asking 1 MiB + 100 KiB each, held in 2 MiB blocks
    # in OLD and in blocks of exactly the request in NEW: -36.1 MiB of block bytes, the
    # requested bytes identical: rounding, not shrinkage. train.py:30 forward grows 8 MiB.
    req = MiB + 100 * KiB
    old = BASE_BLOCKS + [(2 * MiB, STEP_ROUND, req)] * 40
    new = BASE_BLOCKS + [(req, STEP_ROUND, req)] * 40 + [(8 * MiB, FWD)]
    return side(old), side(new)


SINGLE = {"full": (full, "full"), "cached": (cached, "compact"),
          "stranded": (stranded, "fragmented"), "below_floor": (below_floor, "compact"),
          "oom_frames": (oom_frames, "full")}
PAIRS = {"clean": (pair_clean, []), "no_shared": (pair_no_shared, ["no_shared_site"]),
         "few_shared": (pair_few_shared, ["few_shared_sites"]),
         "devices": (pair_devices, []),
         "settings": (pair_settings, ["settings_differ"]),
         "overflow": (pair_overflow, ["trace_overflowed"]),
         "nostack": (pair_nostack, ["mostly_no_stack"]),
         "swapped": (pair_swapped, ["swapped"]),
         "multidev": (pair_multidev, []), "rounding": (pair_rounding, [])}


def write(snap, path):
    with open(path, "wb") as f:
        pickle.dump(snap.data(), f, protocol=4)


def main():
    import truth_diff
    import truth_frag
    os.makedirs(OUT, exist_ok=True)
    for name, (build, want) in SINGLE.items():
        path = os.path.join(OUT, name + ".pickle")
        write(build(), path)
        got = truth_frag.analyse(path, 30.0, 0.5)["total"]["verdict"]
        if got != want:
            sys.exit("%s: verdict %s, meant %s" % (name, got, want))
        print("%-12s %7d bytes  %s" % (name, os.path.getsize(path), got))
    for name, (build, want) in PAIRS.items():
        old, new = build()
        po, pn = (os.path.join(OUT, "%s_%s.pickle" % (name, w)) for w in ("old", "new"))
        write(old, po)
        write(new, pn)
        got = [w["code"] for w in truth_diff.warnings(truth_diff.load(po), truth_diff.load(pn))]
        if got != want:
            sys.exit("%s: warnings %s, meant %s" % (name, got, want))
        print("%-12s pair         %s" % (name, ", ".join(got) or "no warning"))


if __name__ == "__main__":
    main()
