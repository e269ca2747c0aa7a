#!/usr/bin/env python3
"""Independent CPython prediction of `snapdiff plan`'s peak allocated (docs/plan.md), from
the pickles alone.

    truth_plan.py AT SIZE:FILE SIZE:FILE...  -> JSON {"devices": [{"device", "base",
        "allocations", "fitted": {rule: count}, "peak_allocated_bytes"}]}

Aligns each recording's allocs by site (the Python frames' (file, function), else every
frame's, no lines) and rank at the site, fits each base allocation's size (constant; a
power law through the two recordings nearest AT; the quadratic through the three nearest
when the power law misses the third by more than max(512, 1%)), rounds it (half up; up to
512 when every recorded size was a multiple of 512), puts the predicted sizes into the base
trace and computes its peak with tests/truth/truth_peak.py. Shares no code with the C.
"""
import copy
import json
import math
import os
import pickle
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth_peak  # noqa: E402


def key_of(entry):
    frames = entry.get("frames") or []
    py = [f for f in frames if f.get("filename", "").endswith(".py")]
    use = py if py else frames
    return tuple((f.get("filename", ""), f.get("name", "")) for f in use)


def allocs_by_key(trace):
    """{(key, rank): (size, entry index)} of a trace's allocs."""
    out, seen = {}, {}
    for i, e in enumerate(trace):
        if e.get("action") != "alloc":
            continue
        k = key_of(e)
        r = seen.get(k, 0)
        seen[k] = r + 1
        out[(k, r)] = (e["size"], i)
    return out


def power(a, b, x):
    """Through (a.x, a.y) and (b.x, b.y), b the nearer."""
    (ax, ay), (bx, by) = a, b
    if ay <= 0 or by <= 0:
        return by + (by - ay) / (bx - ax) * (x - bx)
    e = math.log(by / ay) / math.log(bx / ax)
    return by * math.pow(x / bx, e)


def quadratic(pts, x):
    v = 0.0
    for i in range(3):
        term = pts[i][1]
        for j in range(3):
            if j != i:
                term *= (x - pts[j][0]) / (pts[i][0] - pts[j][0])
        v += term
    return v


def fit(pts, at):
    if all(y == pts[0][1] for _, y in pts):
        return "constant", pts[0][1]
    v = power(pts[1], pts[0], at)
    if len(pts) < 3:
        return "power", v
    check = power(pts[1], pts[0], pts[2][0])
    if abs(check - pts[2][1]) <= max(512.0, 0.01 * pts[2][1]):
        return "power", v
    return "quadratic", quadratic(pts, at)


def plan(at, recordings):
    snaps = [(x, pickle.load(open(f, "rb"))) for x, f in recordings]
    devices = []
    ntr = max(len(s.get("device_traces") or []) for _, s in snaps)
    for dev in range(ntr):
        sides = [(i, x, s) for i, (x, s) in enumerate(snaps)
                 if len(s.get("device_traces") or []) > dev and s["device_traces"][dev]]
        if len(sides) < 2:
            continue
        base = min(sides, key=lambda t: (abs(t[1] - at), -t[1]))
        tables = {i: allocs_by_key(s["device_traces"][dev]) for i, x, s in sides}
        fitted = {"constant": 0, "power": 0, "quadratic": 0, "unaligned": 0}
        snap = copy.deepcopy(base[2])
        trace = snap["device_traces"][dev]
        for kr, (size, idx) in tables[base[0]].items():
            pts = [(x, tables[i][kr][0]) for i, x, s in sides if kr in tables[i]]
            if len(pts) < 2:
                fitted["unaligned"] += 1
                continue
            pts.sort(key=lambda p: (abs(p[0] - at), -p[0]))
            rule, v = fit(pts, at)
            fitted[rule] += 1
            u = int(math.floor(v + 0.5))
            if all(y % 512 == 0 for _, y in pts):
                u = (u + 511) // 512 * 512
            trace[idx]["size"] = u
        peak = [d for d in truth_peak.compute(snap)["devices"] if d["device"] == dev][0]
        devices.append({"device": dev, "base": base[0],
                        "allocations": len(tables[base[0]]), "fitted": fitted,
                        "peak_allocated_bytes": peak["peak_bytes"]})
    return {"devices": devices}


def main():
    at = float(sys.argv[1])
    recs = []
    for a in sys.argv[2:]:
        x, f = a.split(":", 1)
        recs.append((float(x), f))
    json.dump(plan(at, recs), sys.stdout)
    print()


if __name__ == "__main__":
    main()
