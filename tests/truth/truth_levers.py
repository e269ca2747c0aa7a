#!/usr/bin/env python3
"""Independent CPython computation of the levers (docs/levers.md) at each device's peak and
at each oom entry.

    truth_levers.py FILE

Prints JSON {"devices": [{"device", "peak": {"entry", "phase", "levers": [...]} or null,
"ooms": [{"entry", "levers": [...]}], "peak_step", "steps": [{"step", "bytes", "entry",
"complete", "categories"}] (the peak inside each step, for the A/B's like steps)}]}, each lever {lever, category, bytes, of_bytes,
less_bytes, calls, bytes_8_ranks, site} ranked as snapdiff ranks them (`site`: the
checkpointed module's call line or the `_multi_tensor_` frame as "file:line", else null).
The live blocks and their categories come from truth_category.py (the categories' own
truth); everything else is computed here from the frames, sharing no code with the C.
"""
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth_category as tc  # noqa: E402
import truth_diff  # noqa: E402

MIN_BYTES = 1 << 20      # SD_LEVERS_MIN_BYTES: a lever freeing less is not given
KINDS = ["activation-checkpointing", "halve-micro-batch", "chunked-loss",
         "optimizer-foreach-off", "zero-grad-set-to-none", "shard-optimizer-state",
         "shard-gradients", "shard-parameters", "allocator-setting"]


def is_py(fn):
    return fn.endswith(".py")


def is_torch(fn):
    return "/torch/" in fn or "\\torch\\" in fn


def user_py(f):
    return is_py(f[0]) and not is_torch(f[0])


def user_forward(f):
    return user_py(f) and f[2] == "forward"


def loss_frame(f):
    return any(w in f[2] for w in ("cross_entropy", "log_softmax", "nll_loss"))


def has_loss(stack):
    """The frames (or forward_frames) holding a loss frame, or None."""
    for fr in (stack, stack.fwd):
        if any(loss_frame(f) for f in fr):
            return fr
    return None


def user_leaf(frames):
    for f in frames:
        if user_py(f):
            return f
    return None


def foreach_frame(stack):
    for f in stack:
        if f[2].startswith("_multi_tensor_") and ("torch/optim/" in f[0]
                                                   or "torch\\optim\\" in f[0]):
            return f
    return None


def live_blocks(trace, leftovers, early, release, ph, at, sz):
    """[(size, category, frames or None, alloc entry or None)] live after entry `at`;
    sz: truth_category.Sizes, the evidence by size."""
    out = []
    for b in leftovers:
        cat, _ = tc.category(b[5], True, True, None, None, ph, b[3] or b[2], sz, trace)
        out.append((b[2], cat, b[5], None))
    for i in early:
        if i > at:
            fr = truth_diff.frames_of(trace[i])
            cat, _ = tc.category(fr, False, True, None, i, ph, trace[i].get("size", 0), sz, trace)
            out.append((trace[i].get("size", 0), cat, None, None))
    for a, r in release.items():
        if a <= at and (r is None or r > at):
            fr = truth_diff.frames_of(trace[a])
            cat, _ = tc.category(fr, True, True, a, r, ph, trace[a].get("size", 0), sz, trace)
            out.append((trace[a].get("size", 0), cat, fr, a))
    return out


def lever(kind, cat, bytes_, of=None, less=None, calls=None, b8=None, site=None):
    return dict(lever=kind, category=cat, bytes=bytes_, of_bytes=of, less_bytes=less,
                calls=calls, bytes_8_ranks=b8, site=site)


def levers_at(blocks, ph, at):
    phase = ph[at][0]
    out = []
    # activation checkpointing
    groups = {}
    for size, cat, fr, a in blocks:
        if cat != "activations" or not fr or a is None:
            continue
        chain = [f for f in reversed(fr) if user_forward(f)]      # outermost first
        for d in range(1, len(chain)):
            key = (d, tuple((f[0], f[1]) for f in chain[:d]))
            groups.setdefault(key, []).append((a, size, tuple(fr), tuple(fr.fwd), chain[d - 1]))
    best = None
    for key in sorted(groups):
        g = sorted(groups[key], key=lambda x: x[0])
        first = (g[0][2], g[0][3])
        calls, cur, largest, total = 0, 0, 0, 0
        for a, size, fr, fwd, call in g:
            if (fr, fwd) == first:
                calls += 1
                cur = 0
            cur += size
            total += size
            largest = max(largest, cur)
        # of two as large, the outer module, then the first call by file and line
        call = g[0][4]
        rank = (-(total - largest), key[0], call[0], call[1])
        if calls >= 2 and total - largest > 0 and (best is None or rank < best[5]):
            best = (total - largest, total, largest, calls, call, rank)
    if best:
        out.append(lever(KINDS[0], "activations", best[0], best[1], best[2], best[3],
                         site="%s:%d" % (best[4][0], best[4][1])))
    # a halved micro-batch
    act = sum(s for s, c, fr, a in blocks if c == "activations")
    tmp = sum(s for s, c, fr, a in blocks if c == "temporaries" and a is not None
              and ph[a][0] in ("forward", "backward"))
    if (act + tmp) // 2:
        out.append(lever(KINDS[1], "activations" if 2 * act >= act + tmp else "temporaries",
                         (act + tmp) // 2, act + tmp, act))
    # the loss
    lines = []
    for s, c, fr, a in blocks:
        lf = has_loss(fr) if fr else None
        if lf is not None:
            u = user_leaf(lf)
            if u is not None:
                lines.append(u)

    def at_loss(fr):
        if not fr:
            return False
        if has_loss(fr) is not None:
            return True
        u = user_leaf(fr)
        if u is None:
            return False
        for x in lines:
            if (u[0], u[1]) == (x[0], x[1]):
                return True
            if "loss" in x[2].lower() and (u[0], u[2]) == (x[0], x[2]):
                return True
        return False
    loss = [(s, c) for s, c, fr, a in blocks if at_loss(fr)]
    if loss and sum(s for s, _ in loss):
        by = {}
        for s, c in loss:
            by[c] = by.get(c, 0) + s
        cat = max(tc_order(by), key=lambda c: by[c])
        total = sum(s for s, _ in loss)
        out.append(lever(KINDS[2], cat, total, total))
    # the optimizer's foreach temporaries
    fe = [(s, foreach_frame(fr)) for s, c, fr, a in blocks if fr and foreach_frame(fr)]
    if sum(s for s, _ in fe):
        by = {}
        for s, f in fe:
            by[(f[0], f[1])] = by.get((f[0], f[1]), 0) + s
        top = max(by.items(), key=lambda kv: kv[1])[0]
        total = sum(s for s, _ in fe)
        out.append(lever(KINDS[3], "temporaries", total, total, max(s for s, _ in fe),
                         site="%s:%d" % top))
    # zero_grad and sharding
    cats = {}
    for s, c, fr, a in blocks:
        cats[c] = cats.get(c, 0) + s
    if phase == "forward" and cats.get("gradients"):
        g = cats["gradients"]
        out.append(lever(KINDS[4], "gradients", g, g))
    prev = 0
    for kind, cat, members in ((KINDS[5], "optimizer_state", ["optimizer_state"]),
                               (KINDS[6], "gradients", ["optimizer_state", "gradients"]),
                               (KINDS[7], "parameters",
                                ["optimizer_state", "gradients", "parameters"])):
        x = sum(cats.get(m, 0) for m in members)
        if x // 2 == 0 or x == prev:
            continue
        prev = x
        out.append(lever(kind, cat, x - x // 2, x, b8=x - x // 8))

    out = [v for v in out if v["bytes"] >= MIN_BYTES]

    def rank(v):
        k = KINDS.index(v["lever"])
        tier = 1 if 5 <= k <= 7 else 0
        return (tier, -v["bytes"], k)
    return sorted(out, key=rank)


def tc_order(by):
    order = ["parameters", "gradients", "optimizer_state", "activations", "temporaries",
             "pre_trace", "persistent", "other"]
    return [c for c in order if c in by] + sorted(c for c in by if c not in order)


def compute(snap):
    blocks = [b for b in truth_diff.blocks_of(snap) if b[4] == "active_allocated"]
    traces = snap.get("device_traces") or []
    out = []
    for dev in truth_diff.devices_of(snap):
        trace = traces[dev] if dev < len(traces) else []
        d = dict(device=dev, peak=None, ooms=[], steps=[], peak_step=0)
        out.append(d)
        if not trace:
            continue
        mine = [b for b in blocks if b[0] == dev]
        ph = tc.phases(trace)
        release, early, live_end = tc.replay(trace)
        leftovers = [b for b in mine if b[1] not in live_end]
        sz = tc.Sizes(trace, ph, release, mine, live_end)
        # the peak (docs/peak.md): the most live bytes after an alloc, first on ties
        ends = {}
        for a, r in release.items():
            if r is not None:
                ends.setdefault(r, []).append(a)
        early_set = set(early)
        base = sum(b[2] for b in leftovers) + sum(trace[i].get("size", 0) for i in early)
        cur, best, at = base, None, None
        steps = {}
        for i, e in enumerate(trace):
            if e.get("action") == "alloc":
                cur += e.get("size", 0)
            for a in ends.get(i, []):
                cur -= trace[a].get("size", 0)
            if i in early_set:
                cur -= e.get("size", 0)
            if e.get("action") == "alloc" and (best is None or cur > best):
                best, at = cur, i
            st = ph[i][2]
            if e.get("action") == "alloc" and st and (st not in steps or cur > steps[st][0]):
                steps[st] = (cur, i)
        last_phase, _run, last_step = ph[-1]
        d["steps"] = []
        for st in sorted(steps):
            lb = live_blocks(trace, leftovers, early, release, ph, steps[st][1], sz)
            cats = {}
            for size, c, fr, a in lb:
                cats[c] = cats.get(c, 0) + size
            d["steps"].append(dict(step=st, bytes=steps[st][0], entry=steps[st][1],
                                   complete=st < last_step or (st == last_step and
                                                               last_phase == "optimizer"),
                                   categories=cats))
        d["peak_step"] = ph[at][2] if at is not None else 0
        if at is not None:
            lb = live_blocks(trace, leftovers, early, release, ph, at, sz)
            d["peak"] = dict(entry=at, phase=ph[at][0], levers=levers_at(lb, ph, at))
        for i, e in enumerate(trace):
            if e.get("action") == "oom":
                lb = live_blocks(trace, leftovers, early, release, ph, i, sz)
                d["ooms"].append(dict(entry=i, levers=levers_at(lb, ph, i)))
    return {"devices": out}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(json.dumps(compute(truth_diff.load(sys.argv[1])), indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
