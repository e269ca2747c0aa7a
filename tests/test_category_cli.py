#!/usr/bin/env python3
"""Categories, phases and steps (issue 26, docs/categories.md) in `snapdiff top --json`,
against hand-worked figures and tests/truth_category.py.

    test_category_cli.py --bin SNAPDIFF --root REPO PART

PART is one of:
  fixtures  testdata/category/ (testdata/make_category_fixtures.py): two Adam steps with
            parameters, gradients, Adam state (twice the parameters), saved activations and
            temporaries; a trace recorded mid-run with blocks from before it. The figures
            worked by hand, and every one against the Python oracle.
  real      every real snapshot of ../shared/real-snapshots: the categories at the end and
            at the peak add up to the totals, and equal the oracle's; the peak's phase and
            step too (exit 77 = skipped when absent)
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402
import truth_category  # noqa: E402
import truth_diff  # noqa: E402

T = clitest.Suite(prefix=["top"])
check, run, run_json = T.check, T.run, T.run_json
ROOT = None
MiB = 1 << 20


def fixture(name):
    return os.path.join(ROOT, "testdata", "category", name + ".pickle")


def evidence(t):
    if t[2] and t[3]:
        return "frames+lifetime"
    return "frames" if t[2] else "lifetime" if t[3] else "none"


def as_table(cats):
    return {c["category"]: [c["bytes"], c["blocks"], c["evidence"]] for c in cats}


def want_table(t):
    return {k: [v[0], v[1], evidence(v)] for k, v in t.items()}


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
        check(order == [c for c in ("parameters", "gradients", "optimizer_state", "activations",
                                    "temporaries", "pre_trace", "persistent", "other")
                        if c in order], t + ": categories in their fixed order", order)
        check(sum(c["bytes"] for c in d["categories"]) == d["allocated_bytes"],
              t + ": the end's categories add up to allocated_bytes")
        check(sum(c["blocks"] for c in d["categories"]) == d["blocks"],
              t + ": the end's categories count every block")
        w = want.get(d["device"])
        check(w is not None, t + ": the oracle knows the device")
        if w is None:
            continue
        check(as_table(d["categories"]) == want_table(w["end"]), t + ": end categories",
              as_table(d["categories"]), want_table(w["end"]))
        p = d["peak"]
        check((p is None) == (w["peak"] is None), t + ": a peak on both sides or neither")
        if p is None or w["peak"] is None:
            continue
        check(p["bytes"] == w["peak_bytes"] and p["entry"] == w["peak_entry"],
              t + ": the oracle's peak")
        check(sum(c["bytes"] for c in p["categories"]) == p["bytes"],
              t + ": the peak's categories add up to its bytes")
        check(as_table(p["categories"]) == want_table(w["peak"]), t + ": peak categories",
              as_table(p["categories"]), want_table(w["peak"]))
        check(p["phase"] == w["peak_phase"] and p["step"] == w["peak_step"],
              t + ": the peak's phase and step", (p["phase"], p["step"]),
              (w["peak_phase"], w["peak_step"]))
    return doc


def part_fixtures():
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

    out = run([fixture("adam")]).stdout.splitlines()
    check("  peak: 35.0 MiB at entry #24 (+2.4 ms) in the backward of step 2, reached by an "
          "alloc at autograd BmmBackward0" in out, "text: the peak line names phase and step")
    check("       12.0 MiB        4  optimizer_state  by frames" in out,
          "text: a category row says its evidence")


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


def main():
    global ROOT
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("part", choices=["fixtures", "real"])
    a = ap.parse_args()
    T.bin, ROOT = a.bin, a.root
    {"fixtures": part_fixtures, "real": part_real}[a.part]()
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
