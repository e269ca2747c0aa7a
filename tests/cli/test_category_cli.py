#!/usr/bin/env python3
"""Categories, phases and steps (issue 26, docs/categories.md) in `snapdiff top --json`,
against hand-worked figures and tests/truth/truth_category.py.

    test_category_cli.py --bin SNAPDIFF --root REPO PART

PART is one of:
  fixtures  testdata/category/ (testdata/make_category_fixtures.py): two Adam steps with
            parameters, gradients, Adam state (twice the parameters), saved activations and
            temporaries; a trace recorded mid-run with blocks from before it. The figures
            worked by hand, and every one against the Python oracle.
  diff      snapdiff OLD NEW: adam.pickle -> adam_bigstep.pickle by hand (the peaks in the
            backward and in the optimizer: the first line says so), and the peak of each
            phase by category against the oracle, on the fixtures and on consecutive real
            snapshots with a trace
  oom       frag --json on testdata/oom/ and testdata/frag/: each oom's arithmetic (R, D,
            W, S, the shortfall R - D - W, the live share) against tests/truth/truth_frag.py, its
            categories adding up to what was live, its levers (one per cut-able category,
            largest first, the standard lever); fragmentation.pickle by hand (a 236 MiB
            shortfall: 256 MiB asked, 20 MiB free on the device, nothing wholly free)
  real      every real snapshot of ../shared/real-snapshots: the categories at the end and
            at the peak add up to the totals, and equal the oracle's; the peak's phase and
            step too (exit 77 = skipped when absent)
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_category  # noqa: E402
import truth_diff  # noqa: E402

T = clitest.Suite(prefix=["top"])
check, run, run_json = T.check, T.run, T.run_json
ROOT = None
MiB = 1 << 20
CATEGORIES = ("parameters", "gradients", "optimizer_state", "activations", "temporaries",
              "pre_trace", "persistent", "other", "model_state")


def fixture(name):
    return os.path.join(ROOT, "testdata", "category", name + ".pickle")


def evidence(t):
    kinds = [k for k, b in zip(("frames", "lifetime", "size"), t[2:5]) if b]
    return "+".join(kinds) or "none"


def as_table(cats, no_backward=False):
    if no_backward:
        return {c["category"]: [c["bytes"], c["blocks"], c["evidence"],
                                c.get("no_backward_bytes", 0)] for c in cats}
    return {c["category"]: [c["bytes"], c["blocks"], c["evidence"]] for c in cats}


def want_table(t):
    return {k: [v[0], v[1], evidence(v), v[5]] for k, v in t.items()}


def compare_with_truth(path):
    """top --json against the oracle; the categories add up. Returns the document."""
    doc = run_json([path])
    if doc is None:
        return None
    tag = os.path.basename(path)
    want = {d["device"]: d for d in truth_category.compute(truth_diff.load(path))["devices"]}
    for d in doc["devices"]:
        t = "%s device %d" % (tag, d["device"])
        order = [c["category"] for c in d["categories"]]
        check(order == [c for c in CATEGORIES if c in order],
              t + ": categories in their fixed order", order)
        check(sum(c["bytes"] for c in d["categories"]) == d["allocated_bytes"],
              t + ": the end's categories add up to allocated_bytes")
        check(sum(c["blocks"] for c in d["categories"]) == d["blocks"],
              t + ": the end's categories count every block")
        w = want.get(d["device"])
        check(w is not None, t + ": the oracle knows the device")
        if w is None:
            continue
        check(as_table(d["categories"], True) == want_table(w["end"]), t + ": end categories",
              as_table(d["categories"], True), want_table(w["end"]))
        p = d["peak"]
        check((p is None) == (w["peak"] is None), t + ": a peak on both sides or neither")
        if p is None or w["peak"] is None:
            continue
        check(p["bytes"] == w["peak_bytes"] and p["entry"] == w["peak_entry"],
              t + ": the oracle's peak")
        check(sum(c["bytes"] for c in p["categories"]) == p["bytes"],
              t + ": the peak's categories add up to its bytes")
        check(as_table(p["categories"], True) == want_table(w["peak"]), t + ": peak categories",
              as_table(p["categories"], True), want_table(w["peak"]))
        check(p["phase"] == w["peak_phase"] and p["step"] == w["peak_step"],
              t + ": the peak's phase and step", (p["phase"], p["step"]),
              (w["peak_phase"], w["peak_step"]))
    return doc


def window_runs(trace):
    """The timeline by phase (issue 26 §2) worked from the oracle's phase per entry and a
    replay of the window's own allocations: [(phase, step, first, entries, alloc_bytes,
    live_end)]."""
    runs, live, sizes = [], 0, {}
    for i, (e, (ph, _run, step)) in enumerate(zip(trace, truth_category.phases(trace))):
        if not runs or runs[-1][0] != ph or runs[-1][1] != (step or None):
            runs.append([ph, step or None, i, 0, 0, live])
        a, addr = e.get("action"), e.get("addr")
        if a == "alloc":
            if addr in sizes:
                live -= sizes.pop(addr)
            sizes[addr] = e["size"]
            live += e["size"]
            runs[-1][4] += e["size"]
        elif a in ("free_requested", "free_completed") and addr in sizes:
            live -= sizes.pop(addr)
        runs[-1][3] += 1
        runs[-1][5] = live
    return [tuple(r) for r in runs]


def check_step_phases(path):
    """trace --json's step_phases against window_runs; the peak's run holds its entry."""
    T.prefix = ["trace"]
    doc = run_json([path, "--json"])
    T.prefix = ["top"]
    snap = truth_diff.load(path)
    traces = snap.get("device_traces") or []
    for d in doc["devices"]:
        t = "%s device %d" % (os.path.basename(path), d["device"])
        got = [(x["phase"], x["step"], x["first_entry"], x["entries"], x["alloc_bytes"],
                x["live_end"]) for x in d["step_phases"]]
        check(got == window_runs(traces[d["device"]]), t + ": the timeline by phase",
              got, window_runs(traces[d["device"]]))
        peaks = [x for x in d["step_phases"] if x["peak"]]
        p = d["peak"]
        check(len(peaks) == (p is not None) and all(
            x["first_entry"] <= p["entry"] < x["first_entry"] + x["entries"] and
            x["phase"] == p["phase"] and x["step"] == p["step"] for x in peaks),
            t + ": one run holds the peak, with its phase and step")


def part_fixtures():
    for name in ("adam", "adam_bigstep", "pretrace"):
        check_step_phases(fixture(name))
    T.prefix = ["trace"]
    out = run([fixture("adam")]).stdout.splitlines()
    T.prefix = ["top"]
    check("      2  backward   #24                5     400 us      3.0 MiB     -8.0 MiB"
          "     24.0 MiB  <- the peak" in out,
          "trace text: the timeline by phase marks the peak's run (the backward of step 2, "
          "entries 24-28: by hand, BmmBackward0's 3 MiB and the 8 MiB of activations freed)",
          "\n".join(out))
    doc = compare_with_truth(fixture("adam"))
    d = doc["devices"][0]
    check(as_table(d["categories"]) == {"parameters": [6 * MiB, 2, "frames"],
                                        "gradients": [6 * MiB, 2, "frames"],
                                        "optimizer_state": [12 * MiB, 4, "frames"]},
          "adam: end state by hand", as_table(d["categories"]))
    p = d["peak"]
    check(p["bytes"] == 35 * MiB and p["entry"] == 24, "adam: the peak, 35 MiB at entry 24")
    check(p["phase"] == "backward" and p["step"] == 2, "adam: in the backward of step 2",
          p["phase"], p["step"])
    check(as_table(p["categories"]) == {"parameters": [6 * MiB, 2, "frames"],
                                        "gradients": [6 * MiB, 2, "frames"],
                                        "optimizer_state": [12 * MiB, 4, "frames"],
                                        "activations": [8 * MiB, 1, "lifetime"],
                                        "temporaries": [3 * MiB, 1, "lifetime"]},
          "adam: the peak by hand", as_table(p["categories"]))
    cats = as_table(p["categories"])
    check(cats["optimizer_state"][0] == 2 * cats["parameters"][0],
          "adam: fp32 Adam's state is twice the parameters")

    doc = compare_with_truth(fixture("adam_bigstep"))
    p = doc["devices"][0]["peak"]
    check(p["bytes"] == 40 * MiB and p["entry"] == 17 and p["phase"] == "optimizer"
          and p["step"] == 1, "adam_bigstep: 40 MiB at entry 17, the optimizer of step 1")
    check(as_table(p["categories"]).get("temporaries") == [16 * MiB, 1, "lifetime"],
          "adam_bigstep: the foreach temporary at the peak")

    doc = compare_with_truth(fixture("pretrace"))
    d = doc["devices"][0]
    check(as_table(d["categories"]) == {"parameters": [8 * MiB, 1, "frames"],
                                        "gradients": [8 * MiB, 1, "frames"],
                                        "persistent": [2 * MiB, 1, "lifetime"],
                                        "other": [2 * MiB, 1, "none"]},
          "pretrace: end state by hand", as_table(d["categories"]))
    p = d["peak"]
    check(p["bytes"] == 29 * MiB and p["entry"] == 1 and p["phase"] == "backward"
          and p["step"] is None, "pretrace: 29 MiB at entry 1, backward, no step")
    check(as_table(p["categories"]) == {"parameters": [8 * MiB, 1, "frames"],
                                        "gradients": [8 * MiB, 1, "frames"],
                                        "activations": [6 * MiB, 1, "lifetime"],
                                        "temporaries": [4 * MiB, 1, "lifetime"],
                                        "persistent": [2 * MiB, 1, "lifetime"],
                                        "pre_trace": [1 * MiB, 1, "lifetime"]},
          "pretrace: the peak by hand (the saved activations by lifetime, not by the "
          "free's frames)", as_table(p["categories"]))

    keys = [g["key"] for g in d["peak"]["groups"]]
    check(not any("train.py:72" in k for k in keys) and "<no stack>" in keys,
          "pretrace: blocks from before recording are never named by the stack of their free "
          "(train.py:72, the loss.backward() line)", keys)

    part_fixtures_issue36()

    out = run([fixture("adam")]).stdout.splitlines()
    check("  peak: 35.0 MiB at entry #24 (+2.4 ms) in the backward of step 2, reached by an "
          "alloc at autograd BmmBackward0" in out, "text: the peak line names phase and step")
    check("       12.0 MiB        4  optimizer_state  by frames" in out,
          "text: a category row says its evidence")


def part_fixtures_issue36():
    """Issue 36's mechanisms (testdata/make_category_fixtures.py), by hand and against the
    oracle."""
    for name in ("first_backward", "setup", "fwd_only", "fwd_bwd", "model_state"):
        check_step_phases(fixture(name))
    d = compare_with_truth(fixture("first_backward"))["devices"][0]
    check(as_table(d["categories"]) == {"parameters": [6 * MiB, 2, "frames"],
                                        "gradients": [6 * MiB, 2, "frames+size"],
                                        "optimizer_state": [12 * MiB, 4, "frames"]},
          "first_backward: the gradient accumulateGrad stole (MmBackward0's buffer, P1's "
          "size, alive at the optimizer step) is a gradient by size", as_table(d["categories"]))

    d = compare_with_truth(fixture("setup"))["devices"][0]
    check(as_table(d["categories"]) == {"parameters": [6 * MiB, 2, "frames"],
                                        "gradients": [6 * MiB, 2, "frames"],
                                        "optimizer_state": [12 * MiB, 4, "frames"],
                                        "other": [1 * MiB, 1, "none"]},
          "setup: parameters built in the recorded window are parameters, not activations",
          as_table(d["categories"]))
    p = d["peak"]
    check(p["bytes"] == 31 * MiB and p["phase"] == "optimizer" and p["step"] == 1,
          "setup: the peak, 31 MiB in the optimizer of step 1", p["bytes"], p["phase"])
    T.prefix = ["trace"]
    doc = run_json([fixture("setup"), "--json"])
    T.prefix = ["top"]
    got = [(x["phase"], x["step"], x["first_entry"], x["entries"])
           for x in doc["devices"][0]["step_phases"]]
    check(got[0] == ("setup", None, 0, 3) and got[1][:2] == ("forward", 1),
          "setup: the set-up is a phase of its own, before step 1's forward", got)

    only = compare_with_truth(fixture("fwd_only"))["devices"][0]
    check(as_table(only["categories"], True) ==
          {"activations": [1 * MiB, 1, "lifetime", 1 * MiB],
           "persistent": [8 * MiB, 1, "lifetime", 0]},
          "fwd_only: the output kept is an activation, no backward recorded",
          as_table(only["categories"], True))
    check(only["peak"]["bytes"] == 17 * MiB and as_table(only["peak"]["categories"], True) ==
          {"activations": [9 * MiB, 3, "lifetime", 9 * MiB],
           "persistent": [8 * MiB, 1, "lifetime", 0]},
          "fwd_only: at the peak the forward's saved tensors are activations (no backward "
          "recorded), never other or temporaries", as_table(only["peak"]["categories"], True))
    both = compare_with_truth(fixture("fwd_bwd"))["devices"][0]
    check(as_table(both["categories"]) == {"parameters": [8 * MiB, 1, "size"],
                                           "gradients": [8 * MiB, 1, "frames"]},
          "fwd_bwd: the weights from before recording are parameters by size",
          as_table(both["categories"]))
    T.prefix = []
    doc = run_json([fixture("fwd_only"), fixture("fwd_bwd"), "--json"])
    T.prefix = ["top"]
    fwd = [x for x in doc["peak"]["devices"][0]["phases"] if x["phase"] == "forward"][0]
    acts = [c for c in fwd["categories"] if c["category"] == "activations"][0]
    check(acts["old_bytes"] == acts["new_bytes"] == 9 * MiB and acts["delta_bytes"] == 0,
          "fwd_only -> fwd_bwd: one run's two files give the forward's tensors one category",
          fwd["categories"])
    out = run([fixture("fwd_only")]).stdout.splitlines()
    check("        9.0 MiB        3  activations      by lifetime, no backward recorded" in out,
          "text: the activations say no backward was recorded", "\n".join(out))

    d = compare_with_truth(fixture("model_state"))["devices"][0]
    check(as_table(d["categories"]) == {"model_state": [18 * MiB, 6, "size"],
                                        "gradients": [6 * MiB, 2, "frames"]},
          "model_state: 18 MiB from before recording, three blocks of each gradient's size: "
          "parameters and Adam state not told apart", as_table(d["categories"]))


def category_deltas(old, new):
    cats = [c for c in CATEGORIES if c in old or c in new]
    return [{"category": c, "old_bytes": old.get(c, [0])[0], "new_bytes": new.get(c, [0])[0],
             "delta_bytes": new.get(c, [0])[0] - old.get(c, [0])[0]} for c in cats]


def compare_diff_with_truth(old, new, tag):
    T.prefix = []
    doc = run_json([old, new, "--json"])
    T.prefix = ["top"]
    if doc is None or not doc.get("peak"):
        return doc
    wo = {d["device"]: d for d in truth_category.compute(truth_diff.load(old))["devices"]}
    wn = {d["device"]: d for d in truth_category.compute(truth_diff.load(new))["devices"]}
    for dv in doc["peak"]["devices"]:
        t = "%s device %d/%d" % (tag, dv["device_old"], dv["device_new"])
        o, n = wo[dv["device_old"]], wn[dv["device_new"]]
        check(dv["old"]["phase"] == o["peak_phase"] and dv["new"]["phase"] == n["peak_phase"],
              t + ": the peaks' phases")
        check(dv["phases_differ"] == (o["peak_phase"] != n["peak_phase"]),
              t + ": phases_differ")
        check(dv["categories"] == category_deltas(o["peak"], n["peak"]),
              t + ": categories at the two peaks", dv["categories"])
        check(sum(c["old_bytes"] for c in dv["categories"]) == dv["old"]["bytes"] and
              sum(c["new_bytes"] for c in dv["categories"]) == dv["new"]["bytes"],
              t + ": they add up to both peaks")
        want = [p for p in ("forward", "backward", "optimizer", "other", "setup")
                if p in o["phases"] or p in n["phases"]]
        check([p["phase"] for p in dv["phases"]] == want, t + ": the phases", dv["phases"])
        for p in dv["phases"]:
            po, pn = o["phases"].get(p["phase"]), n["phases"].get(p["phase"])
            check(p["old_peak_bytes"] == (po["bytes"] if po else None) and
                  p["new_peak_bytes"] == (pn["bytes"] if pn else None),
                  t + ": the peak of the %s" % p["phase"])
            check(p["categories"] == category_deltas(po["categories"] if po else {},
                                                     pn["categories"] if pn else {}),
                  t + ": the %s by category" % p["phase"], p["categories"])
    return doc


def part_diff():
    old, new = fixture("adam"), fixture("adam_bigstep")
    doc = compare_diff_with_truth(old, new, "adam -> adam_bigstep")
    dv = doc["peak"]["devices"][0]
    check(dv["old"]["phase"] == "backward" and dv["new"]["phase"] == "optimizer"
          and dv["old"]["step"] == 2 and dv["new"]["step"] == 1 and dv["phases_differ"],
          "adam -> adam_bigstep: backward of step 2, optimizer of step 1")
    opt = [p for p in dv["phases"] if p["phase"] == "optimizer"][0]
    check(opt["old_peak_bytes"] == 30 * MiB and opt["new_peak_bytes"] == 40 * MiB,
          "the optimizer's peaks by hand: 6+6+12+6 and 6+6+12+16 MiB")
    T.prefix = []
    lines = run([old, new]).stdout.splitlines()
    T.prefix = ["top"]
    check(lines[2] == "OLD peaks in the backward (activations 8.0 MiB), NEW in the optimizer "
          "(optimizer temporaries 16.0 MiB)", "text: the first line after the header names "
          "the phases and the categories that make each peak", lines[:3])
    compare_diff_with_truth(fixture("adam"), fixture("pretrace"), "adam -> pretrace")
    real = clitest.real_snapshots(ROOT, skip_if_absent=False)
    if not real:
        return
    files = [os.path.join(real, f) for f in sorted(os.listdir(real))
             if f.endswith((".pickle", ".pkl"))]
    traced = [f for f in files if any(truth_diff.load(f).get("device_traces") or [])]
    for a, b in zip(traced, traced[1:]):
        compare_diff_with_truth(a, b, "%s -> %s" % (os.path.basename(a), os.path.basename(b)))
    print("%d real pairs compared by phase" % max(len(traced) - 1, 0))


LEVERS = {"activations": ("activation-checkpointing",),
          "optimizer_state": ("shard-optimizer-state",),
          "gradients": ("shard-or-lower-precision",),
          "parameters": ("shard-or-lower-precision",),
          "temporaries": ("fused-cross-entropy", "foreach-false", "smaller-micro-batch")}


def check_oom_first(path, frag):
    """The oom appears first wherever the file is shown (issue 26 §5): top's ooms are frag's
    oom_events, and in its text each device's oom comes before what was live."""
    name = os.path.basename(path)
    by_dev = {d["device"]: d["oom_events"] for d in frag["devices"]}
    for view, after in (("top", "  live at the end"), ("trace", "  alive at the end")):
        T.prefix = [view]
        doc = run_json([path, "--json"])
        text = run([path]).stdout
        for d in doc["devices"]:
            check(d["ooms"] == by_dev.get(d["device"], []),
                  "%s device %d: %s's ooms are frag's oom_events" % (name, d["device"], view))
            fd = next(x for x in frag["devices"] if x["device"] == d["device"])
            if view == "top" and fd["fragmentation_cost_bytes"] is not None:
                check((fd["peak_phase"], fd["peak_step"]) ==
                      (d["peak"]["phase"], d["peak"]["step"]) and
                      fd["peak_live_bytes"] == d["peak"]["bytes"],
                      "%s device %d: frag's peak is top's, with its phase and step" %
                      (name, d["device"]))
        if any(by_dev.values()):
            lines = text.splitlines()
            first = next((i for i, l in enumerate(lines) if l.startswith("  out of memory: ")),
                         None)
            live = next((i for i, l in enumerate(lines) if l.startswith(after)), None)
            check(first is not None and live is not None and first < live and
                  lines[first + 1].startswith("  oom at "),
                  "%s: %s's text shows the oom before what was live" % (name, view), text[:600])
    T.prefix = ["frag"]


def check_ranks_ooms():
    """series over the ranks of one job: how many died, the last oom's entry and request,
    against the pickles read by CPython (testdata/oom/ranks/, make_oom_fixtures.py)."""
    import glob
    d = os.path.join(ROOT, "testdata", "oom", "ranks")
    want = []
    for path in sorted(glob.glob(os.path.join(d, "*.pickle"))):
        trace = truth_diff.load(path)["device_traces"][0]
        o = [(i, e["size"], e["device_free"]) for i, e in enumerate(trace)
             if e.get("action") == "oom"]
        want.append({"count": len(o), "device": 0, "entry": o[-1][0], "request_bytes": o[-1][1],
                     "device_free_bytes": o[-1][2]} if o else None)
    T.prefix = ["series"]
    doc = run_json([d, "--json"])
    got = [None if r["oom"] is None else {k: v for k, v in r["oom"].items() if k != "time_us"}
           for r in doc["ranks"]]
    check(got == want and doc["ranks_out_of_memory"] == 2,
          "series ranks: each rank's last oom and how many died", got, want)
    out = run([d]).stdout.splitlines()
    check(out[:3] == ["Out of memory: 2 of 4 ranks recorded an oom entry",
                      "  rank 1     the last at entry #8 on device 0: request 256.0 MiB with "
                      "20.0 MiB free on the device (1 oom entry; snapdiff frag FILE for the "
                      "arithmetic)",
                      "  rank 3     the last at entry #8 on device 0: request 512.0 MiB with "
                      "100.0 MiB free on the device (1 oom entry; snapdiff frag FILE for the "
                      "arithmetic)"], "series ranks text: the ooms first", out[:4])
    doc = run_json([d, "--as-series", "--json"])
    got = [None if x["oom"] is None else {k: v for k, v in x["oom"].items() if k != "time_us"}
           for x in doc["snapshots"]]
    check(got == want, "series as a time series: each snapshot's last oom", got, want)
    out = run([d, "--as-series"]).stdout.splitlines()
    check(out[0] == "Out of memory: 2 of 4 snapshots record an oom entry",
          "series text: the ooms first", out[:3])
    T.prefix = ["frag"]


def part_oom():
    check_ranks_ooms()
    import glob
    import truth_frag
    files = sorted(glob.glob(os.path.join(ROOT, "testdata", "oom", "*.pickle")) +
                   glob.glob(os.path.join(ROOT, "testdata", "frag", "oom*.pickle")))
    n = 0
    T.prefix = ["frag"]
    for path in files:
        doc = run_json([path, "--json"])
        want = truth_frag.analyse(path, 30.0, 0.5)
        name = os.path.basename(path)
        check_oom_first(path, doc)
        for d, w in zip(doc["devices"], want["devices"]):
            for o, wo in zip(d["oom_events"], w["oom_events"]):
                t = "%s oom %d" % (name, o["trace_index"])
                n += 1
                r, dv = wo["request_bytes"], wo["device_free_bytes"]
                cw, st = wo["cached_free_bytes"], wo["stranded_free_bytes"]
                check(o["wholly_free_bytes"] == cw and o["stranded_free_bytes"] == st,
                      t + ": W and S are the oracle's")
                if wo["process_limit"]:   # the device's free memory was not the process's
                    dv = 0
                check(o["process_limit"] == wo["process_limit"], t + ": process limit")
                check(o["shortfall_bytes"] == max(0, r - dv - cw), t + ": shortfall R - D - W")
                if o["live_bytes"] is None:
                    check(o["categories"] is None and o["live_share"] is None,
                          t + ": no live figures when not computed")
                    continue
                L = o["live_bytes"]
                if wo["process_limit"]:
                    check(o["live_share"] is None, t + ": no live share under a process limit")
                    continue
                check(abs(o["live_share"] - L / (L + dv + cw + st)) < 1e-9,
                      t + ": live share L / (L + D + W + S)")
                check(sum(c["bytes"] for c in o["categories"]) == L,
                      t + ": the categories add up to what was live")
                bytes_ = [x["bytes"] for x in o["levers"]]
                check(bytes_ == sorted(bytes_, reverse=True) and len(bytes_) <= 5,
                      t + ": levers largest first, at most five")
                for x in o["levers"]:
                    check(x["lever"] in LEVERS.get(x["category"], ()),
                          t + ": %s's lever %s" % (x["category"], x["lever"]))
                for x in o["whatif"]:
                    check(x["headroom_bytes"] is None or x["fits"] or not x["enough_for_next_step"],
                          t + ": a setting that fails is never enough")
    check(n > 0, "oom: no oom event read")
    doc = run_json([os.path.join(ROOT, "testdata", "oom", "fragmentation.pickle"), "--json"])
    o = doc["devices"][0]["oom_events"][0]
    check(o["shortfall_bytes"] == 236 * MiB, "fragmentation.pickle: 236 MiB short by hand")
    check([(x["category"], x["bytes"], x["lever"]) for x in o["levers"]] ==
          [("optimizer_state", 174 * MiB, "shard-optimizer-state")],
          "fragmentation.pickle: Adam's state (torch/optim frames) is the lever", o["levers"])
    out = run([os.path.join(ROOT, "testdata", "oom", "fragmentation.pickle")]).stdout
    check("    request 256.0 MiB <= device free 20.0 MiB + wholly free 0 B + stranded 350.0 MiB"
          " = 370.0 MiB; without the stranded space 236.0 MiB would have had to be freed; "
          "live 674.0 MiB (65% of what the program could reach)" in out.splitlines(),
          "text: the arithmetic adds up on one line")
    T.prefix = ["top"]


def part_real():
    real = clitest.real_snapshots(ROOT)
    files = sorted(os.path.join(real, f) for f in os.listdir(real)
                   if f.endswith((".pickle", ".pkl")))
    n = 0
    for path in files:
        doc = compare_with_truth(path)
        n += doc is not None
    print("%d real snapshots: categories checked" % n)
    check(n > 0, "real: no snapshot read")
    # Issue 36 on one run's two files (NiuHuangxiaozi: a forward-only recording and a
    # training one of the same model and context): the forward's saved tensors are
    # activations in both, as many bytes at the forward-only peak as at the training
    # run's backward peak (where every saved tensor is still live); before, the forward-only
    # file called them temporaries and other. The model's weights, built in the recorded
    # window, are parameters, not other.
    for ctx in (100, 150):
        a = os.path.join(real, "NiuHuangxiaozi_assignment2-systems__fwd_ctx%d_fp32.pickle" % ctx)
        b = os.path.join(real, "NiuHuangxiaozi_assignment2-systems__fwd_bwd_ctx%d_fp32.pickle"
                         % ctx)
        if not (os.path.exists(a) and os.path.exists(b)):
            continue
        da, db = run_json([a])["devices"][0], run_json([b])["devices"][0]
        ca, cb = as_table(da["peak"]["categories"], True), as_table(db["peak"]["categories"])
        # (the training run's also holds its 4-byte loss: within 1 KiB)
        check(db["peak"]["phase"] == "backward" and "activations" in ca and
              "activations" in cb and ca["activations"][0] == ca["activations"][3] and
              0 <= cb["activations"][0] - ca["activations"][0] < 1024,
              "ctx%d: one run's two files give the saved tensors one category" % ctx, ca, cb)
        check("other" not in ca or ca["other"][0] < MiB,
              "ctx%d: nothing but a few bytes is other at the forward-only peak" % ctx, ca)
        check(as_table(da["categories"]).get("parameters", [0])[0] > 80 * MiB,
              "ctx%d: the weights built in the window are parameters" % ctx,
              as_table(da["categories"]))


def main():
    global ROOT
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("part", choices=["fixtures", "diff", "oom", "real"])
    a = ap.parse_args()
    T.bin, ROOT = a.bin, a.root
    {"fixtures": part_fixtures, "diff": part_diff, "oom": part_oom,
     "real": part_real}[a.part]()
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
