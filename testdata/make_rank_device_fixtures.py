#!/usr/bin/env python3
"""Write the fixtures of ranks that hold different devices (issue 19) with CPython.

    python3 testdata/make_rank_device_fixtures.py      # rewrites testdata/ranks_devices/

The 4-rank job of testdata/make_rank_fixtures.py as torch really writes it: rank r runs
on device r, so each file's segments carry device r and its device_traces list r + 1
entries (the lower ones empty). A one-device file must be compared with another one
whatever their ordinals. Rank r at step 100: weights 16 MiB, activations 8 MiB,
optimizer (r + 1) MiB; at step 200 rank 2 alone adds 6 MiB at metrics.py:23.

Files (testdata/ranks_devices/):
  step100/rank{0..3}.pickle   device r
  step200/rank{0..3}.pickle   device r, rank 2 leaks (the outlier)
  same/rank{0..3}.pickle      device r, identical contents: no outlier
  clock/rank{0,1}.pickle      step100's ranks 0 and 1, each with a trace of one `snapshot`
                              entry: rank 1 dumped 1 ms before rank 0, as ranks of one job
                              do (each calls _dump_snapshot on its own), so NEW's newest
                              entry is older than OLD's; `diff` must not call them swapped
                              or two runs (issue 28)
  expected.json               figures computed below from the data: per-rank allocated,
                              reserved, the lower median, the rank furthest from it
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
from make_leak_fixtures import T0  # noqa: E402
from make_rank_fixtures import RANKS, LEAKY, MiB, figures, rank_snap  # noqa: E402

OUT = os.path.join(HERE, "ranks_devices")


def on_device(snap, device):
    for seg in snap.segments:
        seg["device"] = device
    return snap


def dumped_at(snap, device, time_us):
    """The trace entry torch's _dump_snapshot leaves when a marker is recorded
    (CUDACachingAllocator.cpp, recordHistory: TraceEntry::SNAPSHOT), at `time_us`."""
    snap.trace(device, {"action": "snapshot", "addr": 0, "size": 0, "stream": 0,
                        "time_us": time_us})
    return snap


def spread(values):
    """min, lower median, max; the first rank furthest from the lower median (none when
    every rank holds the same: identical ranks have no outlier)."""
    s = sorted(values)
    med = s[(len(s) - 1) // 2]
    if s[0] == s[-1]:
        return {"min": s[0], "median": med, "max": s[-1], "furthest": None,
                "furthest_delta": 0}
    best, far = -1, None
    for i, v in enumerate(values):
        if abs(v - med) > best:
            best, far = abs(v - med), i
    return {"min": s[0], "median": med, "max": s[-1], "furthest": far,
            "furthest_delta": values[far] - med}


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    sets = {
        "step100": [on_device(rank_snap(r, 100), r) for r in range(RANKS)],
        "step200": [on_device(rank_snap(r, 200), r) for r in range(RANKS)],
        "same": [on_device(rank_snap(0, 100), r) for r in range(RANKS)],
    }
    sets["clock"] = [dumped_at(on_device(rank_snap(r, 100), r), r, T0 + 5_000 - 1_000 * r)
                     for r in range(2)]
    exp = {"ranks": RANKS, "leaky_rank": LEAKY, "leak_growth": 6 * MiB}
    for name, snaps in sets.items():
        os.makedirs(os.path.join(OUT, name))
        for r, s in enumerate(snaps):
            s.write(os.path.join(OUT, name, "rank%d.pickle" % r))
        alloc = [figures(s)["allocated"] for s in snaps]
        res = [figures(s)["reserved"] for s in snaps]
        exp[name] = {"allocated": alloc, "reserved": res, "allocated_spread": spread(alloc)}
    # by construction: rank r allocates 25 + r MiB at step 100; rank 2 has 6 MiB more later
    assert exp["step100"]["allocated"] == [(25 + r) * MiB for r in range(RANKS)]
    assert exp["step200"]["allocated"][LEAKY] == (27 + 6) * MiB
    assert exp["step200"]["allocated_spread"]["furthest"] == LEAKY
    assert exp["same"]["allocated_spread"]["furthest"] is None
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(exp, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
