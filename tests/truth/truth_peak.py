#!/usr/bin/env python3
"""Independent CPython replay of the peak (docs/peak.md), from the pickle.

    truth_peak.py FILE [--group-by KEY] [--depth N] [--hide RE]... [--show RE]... [--focus RE]...

Per device with trace entries: the blocks live when recording began (the snapshot's
active_allocated blocks at no address the replay holds alive at the end, and the blocks freed
in the trace that were allocated before it, at the free's size, under <no stack>: the free's
frames are not its site), plus the trace's allocations; the peak is the largest live total after an `alloc` (first on ties). Prints JSON
{"devices": [{"device", "start_bytes", "peak_bytes", "peak_entry", "window_alloc_bytes",
"allocated_bytes", "groups": {key: [bytes, blocks]} at the peak, "end": {key: [bytes, blocks]}}]}.
Shares no code with the C implementation; keys are tests/truth/truth_diff.py's.
"""
import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth_diff  # noqa: E402


def replay(trace, upto=None):
    """Replay entries [0, upto] (all when None). Returns (rel list after each entry, live
    dict addr -> (size, entry), early frees [entry index])."""
    live, pending, early, rel = {}, set(), [], []
    cur = 0
    for i, e in enumerate(trace):
        if upto is not None and i > upto:
            break
        act, addr, size = e.get("action"), e.get("addr"), e.get("size", 0)
        if act == "alloc":
            if addr in live:
                cur -= live.pop(addr)[0]
            pending.discard(addr)
            live[addr] = (size, i)
            cur += size
        elif act in ("free_requested", "free_completed"):
            if addr in live:
                cur -= live.pop(addr)[0]
                if act == "free_requested":
                    pending.add(addr)
            elif addr in pending and act == "free_completed":
                pending.discard(addr)
            else:
                cur -= size
                early.append(i)
                if act == "free_requested":
                    pending.add(addr)
                else:
                    pending.discard(addr)
        rel.append(cur)
    return rel, live, early


def key_table(items, rules, by, depth, focus_re):
    out = {}
    for size, st in items:
        if focus_re and not any(r.search(truth_diff.frame_text(f))
                                for f in tuple(st) for r in focus_re):
            continue
        k = truth_diff.group_key(rules, by, depth, st)
        acc = out.setdefault(k, [0, 0])
        acc[0] += size
        acc[1] += 1
    return out


def compute(snap, by="site", depth=0, hide=(), show=(), focus=()):
    rules = truth_diff.Rules(hide, show)
    focus_re = [re.compile(p) for p in focus]
    blocks = [b for b in truth_diff.blocks_of(snap) if b[4] == "active_allocated"]
    devices = []
    for dev, trace in enumerate(snap.get("device_traces") or []):
        if not trace:
            continue
        mine = [b for b in blocks if b[0] == dev]
        rel, live, early = replay(trace)
        leftovers = [b for b in mine if b[1] not in live]
        base = sum(b[2] for b in leftovers) + sum(trace[i].get("size", 0) for i in early)
        peak, at = None, None
        for i, e in enumerate(trace):
            if e.get("action") == "alloc" and (peak is None or rel[i] > peak):
                peak, at = rel[i], i
        d = dict(device=dev, start_bytes=base, allocated_bytes=sum(b[2] for b in mine),
                 window_alloc_bytes=sum(e.get("size", 0) for e in trace
                                        if e.get("action") == "alloc"),
                 peak_bytes=None, peak_entry=at, groups={},
                 end=key_table([(b[2], b[5]) for b in mine], rules, by, depth, focus_re))
        if at is not None:
            d["peak_bytes"] = base + peak
            _r, live_at, _e = replay(trace, at)
            items = [(b[2], b[5]) for b in leftovers]
            # allocated before recording: the free's frames are not its site (issue 26)
            items += [(trace[i].get("size", 0), truth_diff.Stack(()))
                      for i in early if i > at]
            items += [(size, truth_diff.frames_of(trace[i])) for size, i in live_at.values()]
            d["groups"] = key_table(items, rules, by, depth, focus_re)
            d["peak_key"] = truth_diff.group_key(rules, by, depth,
                                                 truth_diff.frames_of(trace[at]))
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
