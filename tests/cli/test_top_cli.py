#!/usr/bin/env python3
"""Behaviour tests of `snapdiff top FILE...` (and `snapdiff FILE`) against tests/truth/truth_peak.py
and hand-worked figures.

    test_top_cli.py --bin SNAPDIFF --root REPO PART

PART is one of:
  fixtures  testdata/peak/ (testdata/make_peak_fixtures.py): the hand-worked peaks (44 MiB
            at entry 4, 34 MiB at entry 6), the by-site tables at the peak and at the end,
            and every figure against the Python replay, with -g leaf and --depth too
  text      the text view: header, peak line, tables; `snapdiff FILE` runs top
  diff      snapdiff OLD NEW at the peak: fp32 -> bf16 by hand and against the Python
            replay, peak_one_side, and consecutive pairs of real snapshots with a trace
  real      every real snapshot of ../shared/real-snapshots: the end table, and where there
            is a trace the peak bytes, entry, time and by-site table against the Python
            replay; trace --json gives the same peak (exit 77 = skipped when absent)
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_diff  # noqa: E402
import truth_peak  # noqa: E402

T = clitest.Suite(prefix=["top"])
check, run, run_json = T.check, T.run, T.run_json
ROOT = None
MiB = 1 << 20


def fixture(name):
    return os.path.join(ROOT, "testdata", "peak", name + ".pickle")


def compare_with_truth(path, by="site", depth=0, hide=(), show=()):
    args = [path, "--group-by", by]
    if depth:
        args += ["--depth", str(depth)]
    for flag, pats in (("--hide", hide), ("--show", show)):
        for p in pats:
            args += [flag, p]
    doc = run_json(args)
    if doc is None:
        return None
    tag = "%s [%s]" % (os.path.basename(path), " ".join(args[1:]))
    check(doc.get("schema") == "snapdiff.top/1", tag + ": schema")
    snap = truth_diff.load(path)
    want = {d["device"]: d for d in truth_peak.compute(snap, by, depth, hide, show)["devices"]}
    for d in doc["devices"]:
        t = "%s device %d" % (tag, d["device"])
        got_end = {g["key"]: [g["bytes"], g["blocks"]] for g in d["groups"]}
        keys = [g["key"] for g in d["groups"]]
        check(keys == sorted(keys, key=lambda k: (-got_end[k][0], k)), t + ": end order")
        w = want.get(d["device"])
        if w is None:          # no trace on this device: only the end table to check
            check(d["peak"] is None, t + ": a peak without a trace")
            continue
        check(d["allocated_bytes"] == w["allocated_bytes"], "%s: allocated %d, truth %d"
              % (t, d["allocated_bytes"], w["allocated_bytes"]))
        check(got_end == w["end"], t + ": the end table differs from the truth")
        if w["peak_entry"] is None:
            check(d["peak"] is None, t + ": peak without an alloc")
            continue
        p = d["peak"]
        check(p is not None and p["bytes"] == w["peak_bytes"] and p["entry"] == w["peak_entry"],
              "%s: peak %s at %s, truth %s at %s" % (t, p and p["bytes"], p and p["entry"],
                                                     w["peak_bytes"], w["peak_entry"]))
        if not p:
            continue
        check(p["start_bytes"] == w["start_bytes"], "%s: start %d, truth %d"
              % (t, p["start_bytes"], w["start_bytes"]))
        check(p["key"] == w["peak_key"], "%s: peak key %r, truth %r" % (t, p["key"], w["peak_key"]))
        got = {g["key"]: [g["bytes"], g["blocks"]] for g in p["groups"]}
        diff = sorted(k for k in set(got) | set(w["groups"]) if got.get(k) != w["groups"].get(k))
        check(got == w["groups"], t + ": the table at the peak differs from the truth",
              diff[:3])
        check(sum(g["bytes"] for g in p["groups"]) == p["bytes"],
              t + ": the table at the peak does not add up to the peak")
    return doc


def part_fixtures():
    for name in ("fp32", "bf16"):
        for by, depth in (("site", 0), ("leaf", 0), ("site", 1)):
            compare_with_truth(fixture(name), by, depth)
    doc = run_json([fixture("fp32")])
    if doc:
        p = doc["devices"][0]["peak"]
        check(p["bytes"] == 44 * MiB and p["entry"] == 4 and p["key"] == "autograd BmmBackward0",
              "fp32: the hand-worked peak (44 MiB at entry 4, BmmBackward0)")
        check(p["start_bytes"] == 10 * MiB, "fp32: 10 MiB live when recording began")
        check(p["time_us"] == 1_717_100_000_000_500, "fp32: the peak's time")
        check({g["key"]: g["bytes"] for g in p["groups"]} == {
            "/home/alice/proj/model.py:60 forward": 16 * MiB, "autograd BmmBackward0": 12 * MiB,
            "/home/alice/proj/model.py:10 __init__": 8 * MiB,
            "/home/alice/proj/model.py:52 forward": 8 * MiB}, "fp32: at the peak, by hand")
        check(p["site"] == {"filename": "", "line": 0, "name": "autograd BmmBackward0",
                            "kind": "native", "symbol": p["site"]["symbol"]}
              and "BmmBackward0::apply" in p["site"]["symbol"], "fp32: the peak's site")
    doc = run_json([fixture("bf16")])
    if doc:
        d = doc["devices"][0]
        p = d["peak"]
        check(p["bytes"] == 34 * MiB and p["entry"] == 6 and p["key"] == "autograd ToCopyBackward0",
              "bf16: the hand-worked peak (34 MiB at entry 6, ToCopyBackward0)")
        check(d["allocated_bytes"] == 16 * MiB and [g["key"] for g in d["groups"]] == [
            "/home/alice/proj/model.py:10 __init__",
            "autograd AccumulateGrad (parameter gradients)"], "bf16: the end state")
        check(all(g["requested_bytes"] == 8 * MiB for g in d["groups"]), "bf16: requested")
    # Several files: one document each, in order.
    p = run([fixture("fp32"), fixture("bf16"), "--json"])
    import json
    docs, dec, s = [], json.JSONDecoder(), p.stdout.strip()
    while s:
        o, i = dec.raw_decode(s)
        docs.append(o)
        s = s[i:].strip()
    check([d["file"].endswith(n) for d, n in zip(docs, ("fp32.pickle", "bf16.pickle"))]
          == [True, True], "two files: two documents")


def part_text():
    out = run([fixture("fp32")]).stdout
    lines = out.splitlines()
    check(lines[0].endswith("testdata/peak/fp32.pickle"), "text: the file first")
    check(lines[1] == "device 0: 16.0 MiB allocated in 2 blocks", "text: device line %r" % lines[1])
    check("  peak: 44.0 MiB at entry #4 (+400 us) in the backward, reached by an alloc at "
          "autograd BmmBackward0" in lines, "text: the peak line, with its phase")
    check("       24.0 MiB        2  activations      by lifetime" in lines,
          "text: the activations at the peak (act 8 + scores 16, alive into the backward)")
    check("       16.0 MiB        1  model.py:60 forward" in lines,
          "text: the largest row at the peak")
    check(not any("/home/alice/proj/" in line for line in lines[1:]),
          "text: the directory every row shares is dropped, as the diff drops it")
    check("        8.0 MiB        1     8.0 MiB  autograd AccumulateGrad (parameter gradients)"
          in lines, "text: an end row with requested bytes")
    # `snapdiff FILE`: one snapshot runs top.
    T.prefix = []
    same = run([fixture("fp32")]).stdout
    check(same == out, "snapdiff FILE is snapdiff top FILE")
    r = run([fixture("fp32"), "--steps", "3"], rc=2)
    check("does not apply to 'top'" in r.stderr, "snapdiff FILE --steps: a diff option")
    T.prefix = ["top"]
    r = run([fixture("fp32"), "-n", "1"]).stdout
    check("... 3 more groups (-n to show)" in r, "text: -n 1 says what it left out")
    run([fixture("fp32"), "--format", "folded"], rc=2)


def part_real():
    real = clitest.real_snapshots(ROOT)
    files = sorted(os.path.join(real, f) for f in os.listdir(real)
                   if f.endswith((".pickle", ".pkl")))
    n = 0
    for path in files:
        doc = compare_with_truth(path)
        if not doc or not any(d["peak"] for d in doc["devices"]):
            continue
        n += 1
        T.prefix = ["trace"]
        tr = run_json([path])
        T.prefix = ["top"]
        if tr:
            for d in tr["devices"]:
                mine = [x for x in doc["devices"] if x["device"] == d["device"]]
                check(mine and mine[0]["peak"] and d["peak_bytes"] == mine[0]["peak"]["bytes"]
                      and d["peak"]["entry"] == mine[0]["peak"]["entry"],
                      "%s: trace's peak is top's" % os.path.basename(path))
    print("%d real snapshots with a peak" % n)
    check(n > 0, "real: no snapshot with a trace")


def compare_diff_with_truth(old, new, tag):
    """snapdiff OLD NEW --json's "peak" against truth_peak.py's tables of both files."""
    T.prefix = []
    doc = run_json([old, new], rc=None)
    T.prefix = ["top"]
    if doc is None:
        return None
    wo = {d["device"]: d for d in truth_peak.compute(truth_diff.load(old))["devices"]}
    wn = {d["device"]: d for d in truth_peak.compute(truth_diff.load(new))["devices"]}
    pk = doc.get("peak")
    po = [d for d in wo.values() if d["peak_entry"] is not None]
    pn = [d for d in wn.values() if d["peak_entry"] is not None]
    if not po or not pn:
        check(pk is None, tag + ": peaks compared with a side that has none")
        return doc
    check(pk is not None and pk["devices"], tag + ": no comparison at the peak")
    if not pk:
        return doc
    for d in pk["devices"]:
        a, b = wo[d["device_old"]], wn[d["device_new"]]
        t = "%s devices %d/%d" % (tag, d["device_old"], d["device_new"])
        check(d["old"]["bytes"] == a["peak_bytes"] and d["old"]["entry"] == a["peak_entry"]
              and d["new"]["bytes"] == b["peak_bytes"] and d["new"]["entry"] == b["peak_entry"],
              t + ": the peaks differ from the truth")
        check(d["delta_bytes"] == b["peak_bytes"] - a["peak_bytes"], t + ": delta")
        got = {g["key"]: [g["old_bytes"], g["new_bytes"], g["old_blocks"], g["new_blocks"]]
               for g in d["groups"]}
        keys = set(a["groups"]) | set(b["groups"])
        want = {k: [a["groups"].get(k, [0, 0])[0], b["groups"].get(k, [0, 0])[0],
                    a["groups"].get(k, [0, 0])[1], b["groups"].get(k, [0, 0])[1]] for k in keys}
        check(got == want, t + ": the table at the peak differs from the truth")
        check(sum(g["delta_bytes"] for g in d["groups"]) == d["delta_bytes"],
              t + ": the groups do not add up to the peak delta")
        deltas = [abs(g["delta_bytes"]) for g in d["groups"]]
        check(deltas == sorted(deltas, reverse=True), t + ": not largest change first")
    return doc


def part_diff():
    doc = compare_diff_with_truth(fixture("fp32"), fixture("bf16"), "fp32 -> bf16")
    if doc:
        d = doc["peak"]["devices"][0]
        check([(g["key"], g["delta_bytes"] // MiB) for g in d["groups"] if g["delta_bytes"]] == [
            ("/home/alice/proj/model.py:60 forward", -8), ("autograd BmmBackward0", -6),
            ("/home/alice/proj/model.py:50 forward", 4), ("autograd ToCopyBackward0", 4),
            ("/home/alice/proj/model.py:52 forward", -4)], "fp32 -> bf16: by hand")
        check(doc["warnings"] == [], "fp32 -> bf16: no warning")
    T.prefix = []
    out = run([fixture("fp32"), fixture("bf16")]).stdout.splitlines()
    check("  peak             44.0 MiB    34.0 MiB    -10.0 MiB" in out, "text: the peak row")
    check("at the peak: OLD 44.0 MiB at entry #4 (backward), NEW 34.0 MiB at entry #6 "
          "(backward) (-10.0 MiB)" in out, "text: the table's title, with the peaks' phases")
    check("(the groups add up to the peak delta, -10.0 MiB)" in out, "text: the sum line")
    # Both tables name a site alike: the common directory (/home/alice/proj/) is dropped
    # from the peak rows as from the growth rows, never cut at a width.
    check("     16.0 MiB     8.0 MiB     -8.0 MiB  model.py:60 forward" in out
          and not any("/home/alice" in line for line in out),
          "text: the peak table shortens paths as the growth table does", out)
    # Reserved grew with a higher peak (the cache it needed, free at the end): said so, and
    # never [fragmentation], which `frag` would contradict (it calls NEW compact).
    doc = compare_diff_with_truth(fixture("fp32"), fixture("fp32_long"), "fp32 -> fp32_long")
    if doc:
        t = doc["totals"]
        check(t["pattern"] is None and t["reserved_with_peak"] == 36 * MiB,
              "fp32 -> fp32_long: reserved grew with the peak, not fragmentation")
    T.prefix = []
    out = run([fixture("fp32"), fixture("fp32_long")]).stdout
    check("reserved +64.0 MiB grew with NEW's higher transient peak, +36.0 MiB" in out
          and "[fragmentation]" not in out, "text: reserved grew with the peak")
    fr = run(["frag", fixture("fp32_long"), "--json"]).stdout
    check('"verdict": "compact"' in fr, "frag calls fp32_long compact")
    # One side without a trace: a warning, nothing compared.
    notrace = os.path.join(ROOT, "testdata", "example", "old.pickle")
    if not any(truth_diff.load(notrace).get("device_traces") or []):
        doc = run_json([notrace, fixture("bf16")], rc=None)
        check(doc and doc["peak"] is None
              and [w["side"] for w in doc["warnings"] if w["code"] == "peak_one_side"] == ["new"],
              "one side with a trace: peak_one_side (new)")
    T.prefix = ["top"]
    real = clitest.real_snapshots(ROOT, skip_if_absent=False)
    if not real:
        print("SKIP (part): %s/real-snapshots is absent" % clitest.shared_dir(ROOT))
        return
    files = [os.path.join(real, f) for f in sorted(os.listdir(real))
             if f.endswith((".pickle", ".pkl"))]
    traced = [f for f in files if any(truth_diff.load(f).get("device_traces") or [])]
    for a, b in zip(traced, traced[1:]):
        compare_diff_with_truth(a, b, "%s -> %s" % (os.path.basename(a), os.path.basename(b)))
    print("%d real pairs compared at their peaks" % max(len(traced) - 1, 0))


def main():
    global ROOT
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("part", choices=["fixtures", "text", "real", "diff"])
    a = ap.parse_args()
    T.bin, ROOT = a.bin, a.root
    {"fixtures": part_fixtures, "text": part_text, "real": part_real,
     "diff": part_diff}[a.part]()
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
