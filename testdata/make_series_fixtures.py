#!/usr/bin/env python3
"""Write the fixtures of `snapdiff series` (issue 10) with CPython's pickle.

    python3 testdata/make_series_fixtures.py      # rewrites testdata/series/

Ten snapshots of a training job, one every 100 steps (step_0100 ... step_1000), shaped
the way torch writes them (the Snap class and the stacks of make_leak_fixtures.py: keys
shared, each frame dict and stack list one shared object, C++ frames around the Python
ones). Each snapshot has one segment per group and a trace entry with its time_us
(T0 + 5 s per snapshot), so --sort time has something to sort by.

  series/leak/    params (64 MiB) and AdamW state (128 MiB), constant; activations
                  (model.py:44 forward) of 16 MiB +- up to 8 MiB at random (zero-mean
                  noise, seed 10); metrics.py:23 update leaks one 1 MiB block per
                  snapshot (4 MiB, 5 MiB, ... 13 MiB). The leak must be `growing`, the
                  activations must not.
  series/clean/   the same job without the leak: metrics stay at 4 MiB. Nothing may be
                  `growing`.

The expected figures are not written here: tests/truth/truth_series.py recomputes them from
the pickles with its own implementation of the statistics.
"""
import os
import random
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_leak_fixtures as L  # noqa: E402

KiB, MiB = L.KiB, L.MiB
N = 10
SEG = 2 * MiB                  # segments are rounded up to this, the rest is inactive


def snapshot(i, activations, leaked_blocks):
    s = L.Snap()
    addr = L.BASE
    groups = [
        [(64 * MiB, L.S_PARAMS)],
        [(32 * MiB, L.S_ADAM)] * 4,
        [(activations, L.S_ACT)],
        [(1 * MiB, L.S_LEAK)] * leaked_blocks,
        [(512, L.S_LOSS)] * 3,
    ]
    for g in groups:
        blocks = [(size, "active_allocated", frames, size) for size, frames in g]
        used = sum(b[0] for b in blocks)
        pad = -used % SEG
        if pad:
            blocks.append((pad, "inactive", (), 0))
        addr += s.segment(addr, blocks, small=used < MiB) + SEG
    s.trace(0, {"action": "alloc", "addr": L.BASE, "size": 512, "stream": 0,
                "time_us": L.T0 + i * 5_000_000, "frames": s.stack(L.S_LOSS)})
    return s


def write_series(name, leak):
    rng = random.Random(10)
    d = os.path.join(HERE, "series", name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if f.endswith(".pickle"):
            os.remove(os.path.join(d, f))
    for i in range(N):
        noise = rng.randint(-16, 16) * 512 * KiB          # -8 MiB .. +8 MiB
        s = snapshot(i, 16 * MiB + noise, 4 + i if leak else 4)
        s.write(os.path.join(d, "step_%04d.pickle" % (100 * (i + 1))))


def main():
    write_series("leak", True)
    write_series("clean", False)


if __name__ == "__main__":
    main()
