#!/usr/bin/env python3
"""The figures of `snapdiff series`, computed independently in CPython.

    truth_series.py [--steps-between N] [--min-slope BYTES] [--confidence P] FILE...

Reads each pickle with truth_diff.load (a restricted Unpickler), groups the live blocks
with truth_diff's keys per (key, device), and computes per group, with its own code (no
shared logic with src/analysis/series.c): the Theil-Sen slope (median of all pairwise
slopes, statistics.median), the Mann-Kendall S, its tie-corrected variance, z with the
continuity correction, the two-sided p-value (math.erfc) and the verdict by the rules of
docs/json-series.md. Prints JSON: {"groups": {"KEY\\tDEVICE": {...}}, "floor": {...}}.
"""
import argparse
import collections
import itertools
import json
import math
import os
import statistics
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth_diff  # noqa: E402

MIN_SLOPE = 256 * 1024
CONFIDENCE = 0.99


def theil_sen(y, x=None):
    x = list(range(len(y))) if x is None else x
    slopes = [(y[j] - y[i]) / (x[j] - x[i])
              for i, j in itertools.combinations(range(len(y)), 2) if x[j] != x[i]]
    return statistics.median(slopes)


def mann_kendall(y):
    n = len(y)
    s = 0
    for i, j in itertools.combinations(range(n), 2):
        s += (y[j] > y[i]) - (y[j] < y[i])
    var = n * (n - 1) * (2 * n + 5)
    for t in collections.Counter(y).values():
        var -= t * (t - 1) * (2 * t + 5)
    var /= 18.0
    if s == 0 or var <= 0:
        z = 0.0
    else:
        z = (s - math.copysign(1, s)) / math.sqrt(var)
    p = math.erfc(abs(z) / math.sqrt(2))
    return s, max(var, 0.0), z, p, 1 - p


def verdict(y, slope, s, conf, min_slope, confidence):
    if conf >= confidence and s > 0 and slope > 0 and slope >= min_slope:
        return "growing"
    if conf >= confidence and s < 0 and slope < 0 and -slope >= min_slope:
        return "shrinking"
    if max(y) - min(y) > min_slope * (len(y) - 1):
        return "noisy"
    return "flat"


def groups_of(snap, by="site", depth=0):
    rules = truth_diff.Rules((), ())
    out = collections.Counter()
    for dev, _a, size, _r, state, frames in truth_diff.blocks_of(snap):
        if state == "active_allocated":
            out[(truth_diff.group_key(rules, by, depth, frames), dev)] += size
    return out


def compute(paths, steps=None, min_slope=MIN_SLOPE, confidence=CONFIDENCE, by="site"):
    snaps = [truth_diff.load(p) for p in paths]
    tables = [groups_of(s, by) for s in snaps]
    keys = sorted(set().union(*tables))
    groups = {}
    for k in keys:
        y = [t.get(k, 0) for t in tables]
        slope = theil_sen(y)
        s, var, z, p, conf = mann_kendall(y)
        g = {"bytes": y, "slope": slope, "s": s, "var": var, "z": z, "p": p,
             "confidence": conf, "verdict": verdict(y, slope, s, conf, min_slope, confidence)}
        if steps:
            g["slope_per_step"] = theil_sen(y, steps)
        groups["%s\t%d" % k] = g
    alloc = [truth_diff.totals(s)[1]["allocated"] for s in snaps]
    reserved = [truth_diff.totals(s)[1]["reserved"] for s in snaps]
    b = theil_sen(alloc)
    a = statistics.median([v - b * i for i, v in enumerate(alloc)])
    low = [i for i, v in enumerate(alloc) if v <= a + b * i]
    fb = theil_sen([alloc[i] for i in low], low)
    fa = statistics.median([alloc[i] - fb * i for i in low])
    floor = {"slope": fb, "first": fa, "last": fa + fb * (len(alloc) - 1), "points": len(low)}
    return {"groups": groups, "floor": floor, "allocated": alloc, "reserved": reserved,
            "reserved_slope": theil_sen(reserved)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--steps-between", type=int, default=0)
    ap.add_argument("--min-slope", type=int, default=MIN_SLOPE)
    ap.add_argument("--confidence", type=float, default=CONFIDENCE)
    a = ap.parse_args()
    steps = [i * a.steps_between for i in range(len(a.files))] if a.steps_between else None
    json.dump(compute(a.files, steps, a.min_slope, a.confidence), sys.stdout, indent=1,
              sort_keys=True)
    print()


if __name__ == "__main__":
    main()
