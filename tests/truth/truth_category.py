#!/usr/bin/env python3
"""Independent CPython computation of the categories, phases and steps (docs/categories.md).

    truth_category.py FILE

Per device with trace entries: the phase and step of every entry, the peak (docs/peak.md)
with its phase and step, and the live blocks by category at the peak and at the end; per
device without a trace, the end state by frames. Prints JSON {"devices": [{"device",
"peak_bytes", "peak_entry", "peak_phase", "peak_step", "allocated_bytes",
"end": {category: [bytes, blocks, frames_bytes, lifetime_bytes, size_bytes,
no_backward_bytes]}, "peak": {...},
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


def builds_module(stack):
    """A module built inside another: two Python __init__ frames or more."""
    return sum(1 for fn, _l, name in stack if name == "__init__" and fn.endswith(".py")) >= 2


def phases(trace):
    """[(phase, run, step)] per entry."""
    named = {GRAD: "backward", BACKWARD: "backward", OPTIM: "optimizer", FORWARD: "forward",
             PARAM: "setup"}
    stacks = [truth_diff.frames_of(e) if e.get("action") == "alloc" else None for e in trace]
    v = [verdict(st) if st is not None else None for st in stacks]
    # the set-up: the start, up to the first forward / backward / optimizer alloc, when an
    # alloc in it builds modules
    first = next((i for i, x in enumerate(v) if x in (FORWARD, BACKWARD, GRAD, OPTIM)),
                 len(trace))
    setup = first if any(v[i] == PARAM or builds_module(stacks[i]) for i in range(first)
                         if v[i] is not None) else 0
    cur = "other"
    for x in v[setup:]:
        if x in named:
            cur = named[x]
            break
    if setup:
        cur = "setup"
    out, run, step, runs = [], -1, 1, []
    for i, x in enumerate(trace):
        ph = cur
        if i < setup:
            ph = "setup"
        elif v[i] in named:
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
    for o in out:
        if o[0] == "setup":
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


class Sizes:
    """The evidence by size (docs/categories.md) of one device's trace and end blocks."""

    def __init__(self, trace, ph, release, blocks, live_end):
        P, state, G = set(), set(), set()
        kept = {a: r is None or ph[r][1] != ph[a][1] for a, r in release.items()}
        for a in release:
            st = truth_diff.frames_of(trace[a])
            v, p, size = verdict(st), ph[a][0], trace[a].get("size", 0)
            opt = (v == OPTIM or p == "optimizer") and kept[a]
            if v in (GRAD, PARAM) or opt or (p == "setup" and kept[a] and builds_module(st)):
                P.add(size)
            if opt:
                state.add(size)
            if v == GRAD:
                G.add(size)
        for b in blocks:
            if verdict(b[5]) in (GRAD, PARAM, OPTIM):
                P.add(b[3] or b[2])
            if verdict(b[5]) == GRAD:
                G.add(b[3] or b[2])
        # first-backward gradients: a backward alloc of a parameter's size alive when the
        # next optimizer run begins (never freed when none follows)
        self.stolen = set()
        for a, r in release.items():
            run = ph[a][1]
            if ph[a][0] != "backward" or verdict(truth_diff.frames_of(trace[a])) in (
                    GRAD, OPTIM, PARAM):
                continue
            nxt = next((rr for p, rr, _s in ph[a:] if p == "optimizer" and rr > run), None)
            alive = r is None if nxt is None else (r is None or ph[r][1] >= nxt)
            if alive and trace[a].get("size", 0) in P:
                self.stolen.add(a)
                G.add(trace[a].get("size", 0))
        # per gradient size: pre-trace leftovers parameters or model state
        most = {}
        per_run = {}
        for a in sorted(release):
            if a in self.stolen or verdict(truth_diff.frames_of(trace[a])) == GRAD:
                key = (trace[a].get("size", 0), ph[a][1])
                per_run[key] = per_run.get(key, 0) + 1
                most[key[0]] = max(most.get(key[0], 0), per_run[key])
        pre = {}
        for b in blocks:
            if b[1] not in live_end:
                pre[b[3] or b[2]] = pre.get(b[3] or b[2], 0) + 1
        self.grads = {g: not (g in state or pre.get(g, 0) <= most.get(g, 0)) for g in G}


def category(stack, alloc_frames, has_trace, alloc, freed_at, ph, size=0, sizes=None,
             trace=None):
    """(category, evidence) of one block; alloc None = before recording. Evidence
    no_backward is lifetime's, for activations no recorded backward followed."""
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
            if sizes and size in sizes.grads:
                return ("model_state" if sizes.grads[size] else "parameters"), "size"
            return "persistent", "lifetime"
        if ph[freed_at][0] == "backward":
            return "activations", "lifetime"
        return "pre_trace", "lifetime"
    same = freed_at is not None and ph[freed_at][1] == ph[alloc][1]
    if v == OPTIM or ph[alloc][0] == "optimizer":
        if same:
            return "temporaries", "lifetime"
        return "optimizer_state", ("frames" if v == OPTIM else "lifetime")
    if ph[alloc][0] == "backward" and sizes and alloc in sizes.stolen:
        return "gradients", "size"
    later = [r for p, r, _s in ph[alloc:] if p == "backward" and r > ph[alloc][1]]
    opt_later = any(p == "optimizer" for p, _r, _s in ph[alloc:])
    if ph[alloc][0] == "forward" and not later and not opt_later:
        # neither a backward nor an optimizer step recorded after it: kept past the
        # forward, or let go of by Python
        # outside any module's forward
        if freed_at is None or not same or \
                verdict(truth_diff.frames_of(trace[freed_at])) == PYTHON:
            return "activations", "no_backward"
    if same:
        return "temporaries", "lifetime"
    if ph[alloc][0] == "setup":
        if builds_module(stack):
            return "parameters", "frames"
        if sizes and size in sizes.grads:
            optim = any(fn.endswith(".py") and "optim" in fn.lower() for fn, _l, _n in stack)
            return ("optimizer_state" if alloc_frames and optim else "model_state"), "size"
    if ph[alloc][0] == "forward":
        # alive when a later run of the backward began
        if later and (freed_at is None or ph[freed_at][1] >= later[0]):
            return "activations", "lifetime"
    return "other", "none"


def add(table, cat, ev, size):
    """table[cat] = [bytes, blocks, frames, lifetime, size, no_backward] bytes."""
    t = table.setdefault(cat, [0, 0, 0, 0, 0, 0])
    t[0] += size
    t[1] += 1
    if ev == "frames":
        t[2] += size
    elif ev in ("lifetime", "no_backward"):
        t[3] += size
    elif ev == "size":
        t[4] += size
    if ev == "no_backward":
        t[5] += size


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
        sz = Sizes(trace, ph, release, mine, live_end)

        def cat(stack, frames, alloc, freed, size):
            return category(stack, frames, True, alloc, freed, ph, size, sz, trace)

        for b in mine:
            if b[1] in live_end:
                i = live_end[b[1]][1]
                add(d["end"], *cat(b[5], True, i, None, trace[i].get("size", 0)), b[2])
            else:
                add(d["end"], *cat(b[5], True, None, None, b[3] or b[2]), b[2])
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
                add(table, *cat(b[5], True, None, None, b[3] or b[2]), b[2])
            for i in early:
                if i > at:
                    size = trace[i].get("size", 0)
                    add(table, *cat(truth_diff.frames_of(trace[i]), False, None, i, size),
                        size)
            for a, r in release.items():
                if a <= at and (r is None or r > at):
                    size = trace[a].get("size", 0)
                    add(table, *cat(truth_diff.frames_of(trace[a]), True, a, r, size), size)
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
