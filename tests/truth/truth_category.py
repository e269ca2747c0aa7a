#!/usr/bin/env python3
"""Independent CPython computation of the categories, phases and steps (docs/categories.md).

    truth_category.py FILE

Per device with trace entries: the phase and step of every entry, the peak (docs/peak.md)
with its phase and step, and the live blocks by category at the peak and at the end; per
device without a trace, the end state by frames. Prints JSON {"devices": [{"device",
"peak_bytes", "peak_entry", "peak_phase", "peak_step", "allocated_bytes",
"end": {category: [bytes, blocks, frames_bytes, lifetime_bytes]}, "peak": {...},
"phases": {phase: {"bytes", "entry", "categories"}} (the peak of each phase)}]}.
Shares no code with the C implementation (truth_diff.py reads the blocks).
"""
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth_diff  # noqa: E402

GRAD, BACKWARD, OPTIM, PARAM, FORWARD, PYTHON, NONE = 7, 6, 5, 4, 3, 2, 1
MODULE_FNS = {"_apply", "to", "cuda", "load_state_dict", "_load_from_state_dict", "to_empty",
              "register_parameter", "register_buffer"}


def autograd_class(name):
    """CLASS of "torch::autograd::[...::]CLASS::apply(...)", or None."""
    if not name.startswith("torch::autograd::"):
        return None
    i = name.find("::apply")
    if i < 0 or name[i + 7:i + 8] not in ("(", ""):
        return None
    return name[:i].split("::")[-1]


def verdict_of_frame(fn, name):
    fn = fn.replace("\\", "/")
    py = fn.endswith(".py")
    cls = autograd_class(name)
    if cls == "AccumulateGrad":
        return GRAD
    if (cls is not None and "Backward" in cls) or name.startswith("torch::autograd::Engine::"):
        return BACKWARD
    if "torch/autograd/__init__.py" in fn or "torch/autograd/graph.py" in fn:
        return BACKWARD
    if "torch/_tensor.py" in fn and name == "backward":
        return BACKWARD
    if "torch/optim/" in fn or "torch/distributed/optim/" in fn:
        return OPTIM
    if (name == "reset_parameters" and py) or "torch/nn/parameter.py" in fn \
            or "torch/nn/init.py" in fn:
        return PARAM
    if "torch/nn/modules/module.py" in fn and name in MODULE_FNS:
        return PARAM
    if "torch/nn/modules/" in fn and "torch/nn/modules/module.py" not in fn \
            and name == "__init__":
        return PARAM
    if py and name == "forward":
        return FORWARD
    if "torch/nn/modules/module.py" in fn and name in ("_call_impl", "_wrapped_call_impl"):
        return FORWARD
    return PYTHON if py else NONE


def verdict(stack):
    v = max([verdict_of_frame(fn, name) for fn, _line, name in stack] + [NONE])
    if v < BACKWARD and stack.fwd:
        v = BACKWARD
    return v


def phases(trace):
    """[(phase, run, step)] per entry."""
    named = {GRAD: "backward", BACKWARD: "backward", OPTIM: "optimizer", FORWARD: "forward",
             PARAM: "other"}
    v = [verdict(truth_diff.frames_of(e)) if e.get("action") == "alloc" else None
         for e in trace]
    cur = "other"
    for x in v:
        if x in named:
            cur = named[x]
            break
    out, run, step, runs = [], -1, 1, []
    for i, x in enumerate(trace):
        ph = cur
        if v[i] in named:
            ph = named[v[i]]
        elif v[i] == PYTHON:
            ph = "forward" if cur == "forward" else "other"
        if i == 0 or ph != cur:
            if i and cur == "optimizer":
                step += 1
            run += 1
            runs.append(ph)
        cur = ph
        out.append([ph, run, step])
    if "optimizer" not in runs:
        for o in out:
            o[2] = 0
    return out


def replay(trace):
    """alloc entry -> release entry (None: never), early frees [entry], and the live set
    {addr: (size, alloc entry)} after each entry is recomputed on demand."""
    live, pending, release, early = {}, set(), {}, []
    for i, e in enumerate(trace):
        act, addr = e.get("action"), e.get("addr")
        if act == "alloc":
            if addr in live:
                release[live.pop(addr)[1]] = i
            pending.discard(addr)
            live[addr] = (e.get("size", 0), i)
            release[i] = None
        elif act in ("free_requested", "free_completed"):
            if addr in live:
                release[live.pop(addr)[1]] = i
                if act == "free_requested":
                    pending.add(addr)
            elif addr in pending and act == "free_completed":
                pending.discard(addr)
            else:
                early.append(i)
                if act == "free_requested":
                    pending.add(addr)
                else:
                    pending.discard(addr)
    return release, early, live


def category(stack, alloc_frames, has_trace, alloc, freed_at, ph):
    """(category, evidence) of one block; alloc None = before recording."""
    v = verdict(stack) if alloc_frames else NONE
    if v == GRAD:
        return "gradients", "frames"
    if v == PARAM:
        return "parameters", "frames"
    if not has_trace:
        return ("optimizer_state", "frames") if v == OPTIM else ("other", "none")
    if alloc is None:
        if v == OPTIM:
            return "optimizer_state", "frames"
        if freed_at is None:
            return "persistent", "lifetime"
        if ph[freed_at][0] == "backward":
            return "activations", "lifetime"
        return "pre_trace", "lifetime"
    same = freed_at is not None and ph[freed_at][1] == ph[alloc][1]
    if v == OPTIM or ph[alloc][0] == "optimizer":
        if same:
            return "temporaries", "lifetime"
        return "optimizer_state", ("frames" if v == OPTIM else "lifetime")
    if same:
        return "temporaries", "lifetime"
    if ph[alloc][0] == "forward":
        # alive when a later run of the backward began
        later = [r for p, r, _s in ph[alloc:] if p == "backward" and r > ph[alloc][1]]
        if later and (freed_at is None or ph[freed_at][1] >= later[0]):
            return "activations", "lifetime"
    return "other", "none"


def add(table, cat, ev, size):
    t = table.setdefault(cat, [0, 0, 0, 0])
    t[0] += size
    t[1] += 1
    if ev == "frames":
        t[2] += size
    elif ev == "lifetime":
        t[3] += size


def compute(snap):
    blocks = [b for b in truth_diff.blocks_of(snap) if b[4] == "active_allocated"]
    traces = snap.get("device_traces") or []
    out = []
    for dev in truth_diff.devices_of(snap):
        trace = traces[dev] if dev < len(traces) else []
        mine = [b for b in blocks if b[0] == dev]
        d = dict(device=dev, allocated_bytes=sum(b[2] for b in mine), end={}, peak=None,
                 peak_bytes=None, peak_entry=None, peak_phase=None, peak_step=None)
        out.append(d)
        if not trace:
            for b in mine:
                add(d["end"], *category(b[5], True, False, None, None, None), b[2])
            continue
        ph = phases(trace)
        release, early, live_end = replay(trace)
        leftovers = [b for b in mine if b[1] not in live_end]
        for b in mine:
            if b[1] in live_end:
                i = live_end[b[1]][1]
                add(d["end"], *category(b[5], True, True, i, None, ph), b[2])
            else:
                add(d["end"], *category(b[5], True, True, None, None, ph), b[2])
        # the peak: the most live bytes after an alloc (first on ties)
        base = sum(b[2] for b in leftovers) + sum(trace[i].get("size", 0) for i in early)
        best, at = None, None
        phase_best = {}
        ends = {}
        for a, r in release.items():
            if r is not None:
                ends.setdefault(r, []).append(a)
        early_set = set(early)
        cur = base
        for i, e in enumerate(trace):
            if e.get("action") == "alloc":
                cur += e.get("size", 0)
            for a in ends.get(i, []):
                cur -= trace[a].get("size", 0)
            if i in early_set:
                cur -= e.get("size", 0)
            if e.get("action") == "alloc":
                if best is None or cur > best:
                    best, at = cur, i
                p = ph[i][0]
                if p not in phase_best or cur > phase_best[p][0]:
                    phase_best[p] = (cur, i)
        if at is None:
            continue

        def table_at(at):
            table = {}
            for b in leftovers:
                add(table, *category(b[5], True, True, None, None, ph), b[2])
            for i in early:
                if i > at:
                    add(table, *category(truth_diff.frames_of(trace[i]), False, True, None,
                                         i, ph), trace[i].get("size", 0))
            for a, r in release.items():
                if a <= at and (r is None or r > at):
                    add(table, *category(truth_diff.frames_of(trace[a]), True, True, a, r,
                                         ph), trace[a].get("size", 0))
            return table

        d["peak_bytes"], d["peak_entry"] = best, at
        d["peak_phase"], d["peak_step"] = ph[at][0], ph[at][2] or None
        d["peak"] = table_at(at)
        d["phases"] = {p: dict(bytes=b, entry=i, categories=table_at(i))
                       for p, (b, i) in phase_best.items()}
    return {"devices": out}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(json.dumps(compute(truth_diff.load(sys.argv[1])), indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
