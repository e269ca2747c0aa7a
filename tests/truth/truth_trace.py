#!/usr/bin/env python3
"""Independent CPython replay of `snapdiff trace FILE` (the figures, not the layout).

    truth_trace.py FILE [--group-by site|leaf|stack|file|function] [--depth N]
                   [--hide RE]... [--show RE]... [--focus RE]...

Loads the file with pickle.load (test data only: never run it on untrusted files) and
prints JSON per device (index in device_traces, devices with entries only): entries,
alive_bytes, alive_count, alloc/free counts and bytes, unknown frees, window_peak_bytes
(the most bytes allocated in the window live at once; the peak is tests/truth/truth_peak.py's) and
its entry, the alive blocks [[addr, size], ...] by address, every group
{key: [alive_bytes, alive_count, alloc_count, alloc_bytes, free_count]} and the group
order. It shares no code with the C implementation; it follows docs/json-trace.md. The
group key is tests/truth/truth_diff.py's (the same rule as the diff).
"""
import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth_diff  # noqa: E402


def frames_of(entry):
    return tuple((f.get("filename", ""), f.get("line", 0), f.get("name", ""))
                 for f in entry.get("frames") or [])


def replay(trace):
    """One device's entries, oldest first."""
    live = {}          # addr -> (size, frames, index) of the block allocated in the window
    pending = set()    # addresses whose free was requested and not yet completed
    out = dict(entries=len(trace), alloc_count=0, alloc_bytes=0, free_count=0, free_bytes=0,
               unknown_free_count=0, unknown_free_bytes=0, unrecorded_free_count=0,
               window_peak_bytes=0, peak_entry=None)
    per_stack = {}     # frames -> [alive_bytes, alive_count, alloc_count, alloc_bytes, free_count]
    cur = 0

    def release(addr):
        nonlocal cur
        size, fr, _i = live.pop(addr)
        g = per_stack[fr]
        g[0] -= size
        g[1] -= 1
        g[4] += 1
        out["free_count"] += 1
        out["free_bytes"] += size
        cur -= size

    for i, e in enumerate(trace):
        act = e.get("action")
        addr = e.get("addr")
        size = e.get("size", 0)
        if act == "alloc":
            if addr in live:             # the earlier block's free was not recorded
                out["unrecorded_free_count"] += 1
                release(addr)
            pending.discard(addr)
            fr = frames_of(e)
            live[addr] = (size, fr, i)
            g = per_stack.setdefault(fr, [0, 0, 0, 0, 0])
            g[0] += size
            g[1] += 1
            g[2] += 1
            g[3] += size
            out["alloc_count"] += 1
            out["alloc_bytes"] += size
            cur += size
            if out["peak_entry"] is None or cur > out["window_peak_bytes"]:
                out["window_peak_bytes"], out["peak_entry"] = cur, i
        elif act in ("free_requested", "free_completed"):
            if addr in live:
                release(addr)
                if act == "free_requested":
                    pending.add(addr)
            elif addr in pending and act == "free_completed":
                pending.discard(addr)
            else:
                out["unknown_free_count"] += 1
                out["unknown_free_bytes"] += size
                if act == "free_requested":
                    pending.add(addr)
                else:
                    pending.discard(addr)
    out["alive_bytes"] = cur
    out["alive_count"] = len(live)
    out["alive"] = sorted([a, v[0]] for a, v in live.items())
    out["peak_frames"] = None
    if out["peak_entry"] is not None:
        out["peak_frames"] = frames_of(trace[out["peak_entry"]])
    return out, per_stack


def compute(snap, group_by="site", depth=0, hide=(), show=(), focus=()):
    rules = truth_diff.Rules(hide, show)
    focus_re = [re.compile(p) for p in focus]
    devices = []
    for dev, trace in enumerate(snap.get("device_traces") or []):
        if not trace:
            continue
        d, per_stack = replay(trace)
        groups = {}
        for fr, g in per_stack.items():
            if focus_re and not any(r.search(truth_diff.frame_text(f))
                                    for f in fr for r in focus_re):
                continue
            k = truth_diff.group_key(rules, group_by, depth, list(fr))
            acc = groups.setdefault(k, [0, 0, 0, 0, 0])
            for j in range(5):
                acc[j] += g[j]
        d["device"] = dev
        d["groups"] = groups
        d["order"] = sorted(groups, key=lambda k: (-groups[k][0], -groups[k][3], k))
        d["peak_key"] = (truth_diff.group_key(rules, group_by, depth, list(d["peak_frames"]))
                         if d["peak_frames"] is not None else None)
        del d["peak_frames"]
        devices.append(d)
    return {"devices": devices}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--group-by", default="site")
    ap.add_argument("--depth", type=int, default=0)
    ap.add_argument("--hide", action="append", default=[])
    ap.add_argument("--show", action="append", default=[])
    ap.add_argument("--focus", action="append", default=[])
    a = ap.parse_args()
    out = compute(truth_diff.load(a.file), a.group_by, a.depth, a.hide, a.show, a.focus)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
