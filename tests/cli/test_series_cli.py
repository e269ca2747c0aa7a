#!/usr/bin/env python3
"""Behaviour tests of `snapdiff series` against tests/truth/truth_series.py (issue 10).

    test_series_cli.py --bin SNAPDIFF --root REPO PART

PART is one of:
  fixtures  testdata/series/leak and clean (testdata/make_series_fixtures.py): the rising
            group is `growing`, the swinging one is not, the clean series flags nothing;
            every group's bytes, slopes, Mann-Kendall figures and verdict, the floor, against
            the Python truth; the text table (verdicts, sparkline, ASCII under --ascii)
  json      --json: the snapdiff.series/1 keys and types, steps and capacity
  options   --sort name|time, --steps N1,N2,..., --steps-between, --min-slope,
            --confidence, -g; errors: one message, exit 2
  real      series over real files of ../shared/real-snapshots: the same file three times
            flags nothing, and each group's bytes (per key and device) match truth_diff's
            grouping (exit 77 = skipped when the directory is absent)
"""
import argparse
import math
import os
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_series  # noqa: E402

T = clitest.Suite()
check, run = T.check, T.run
MiB = 1 << 20


def run_json(args):
    return T.run_json(["series"] + args)


def close(a, b, tol=1e-6):
    return math.isclose(a, b, rel_tol=tol, abs_tol=1e-3)


def series_files(name):
    d = os.path.join(ROOT, "testdata", "series", name)
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".pickle"))


def compare(doc, want, tag, steps=False):
    """Every group of doc against truth_series.compute()'s."""
    got = {"%s\t%d" % (g["key"], g["device"]): g for g in doc["groups"]}
    check(set(got) == set(want["groups"]), tag + ": group keys differ: %s vs %s"
          % (sorted(set(got) ^ set(want["groups"]))[:5], ""))
    for k, w in want["groups"].items():
        g = got.get(k)
        if not g:
            continue
        check(g["bytes"] == w["bytes"], "%s %s: bytes %s, want %s" % (tag, k, g["bytes"], w["bytes"]))
        check(close(g["slope_bytes_per_snapshot"], w["slope"]), "%s %s: slope" % (tag, k))
        check(g["mann_kendall_s"] == w["s"], "%s %s: S %s want %s" % (tag, k, g["mann_kendall_s"], w["s"]))
        check(close(g["mann_kendall_var"], w["var"]), "%s %s: var" % (tag, k))
        check(close(g["confidence"], w["confidence"], 1e-9), "%s %s: confidence" % (tag, k))
        check(g["verdict"] == w["verdict"], "%s %s: verdict %s, want %s"
              % (tag, k, g["verdict"], w["verdict"]))
        if steps:
            check(close(g["slope_bytes_per_step"], w["slope_per_step"]), "%s %s: per step" % (tag, k))
    f, wf = doc["floor"], want["floor"]
    check(close(f["slope_bytes_per_snapshot"], wf["slope"]) and close(f["first_bytes"], wf["first"])
          and close(f["last_bytes"], wf["last"]) and f["points"] == wf["points"],
          tag + ": floor %s, want %s" % (f, wf))
    check([s["allocated"] for s in doc["snapshots"]] == want["allocated"], tag + ": allocated")
    check([s["reserved"] for s in doc["snapshots"]] == want["reserved"], tag + ": reserved")


def part_fixtures():
    leak, clean = series_files("leak"), series_files("clean")
    check(len(leak) == 10 and len(clean) == 10, "ten snapshots per fixture series")
    steps = [100 * i for i in range(10)]
    for name, files in (("leak", leak), ("clean", clean)):
        doc = run_json(files + ["--steps-between", "100"])
        if doc:
            compare(doc, truth_series.compute(files, steps), name, steps=True)
    doc = run_json([os.path.dirname(leak[0])])           # a directory: same order by name
    if doc:
        by = {g["key"].split("/")[-1]: g for g in doc["groups"]}
        check(by["metrics.py:23 update"]["verdict"] == "growing", "leak: the rising group grows")
        check(close(by["metrics.py:23 update"]["slope_bytes_per_snapshot"], MiB), "leak: 1 MiB/snapshot")
        check(by["model.py:44 forward"]["verdict"] != "growing", "leak: the swinging group does not")
        act = by["model.py:44 forward"]["bytes"]
        steps_ = [b - a for a, b in zip(act, act[1:])]
        check(max(abs(d) for d in steps_) > MiB, "leak: noise per step larger than the leak")
        check(doc["groups"][0]["key"].endswith("metrics.py:23 update"), "leak: culprit first")
        check(doc["verdicts"]["growing"] == 1, "leak: exactly one growing group")
    doc = run_json([os.path.dirname(clean[0])])
    if doc:
        check(doc["verdicts"]["growing"] == 0 and doc["verdicts"]["shrinking"] == 0,
              "clean: nothing flagged")
    # text: table, verdict words, sparkline in Unicode or ASCII
    p = run(["series", os.path.dirname(leak[0]), "--steps-between", "100"],
            env={"LC_ALL": "C.UTF-8", "NO_COLOR": "1"})
    lines = p.stdout.splitlines()
    row = [l for l in lines if "metrics.py:23 update" in l]
    check(row and row[0].split()[0] == "growing", "text: the leak row says growing")
    check(row and "\u2581\u2582\u2583" in row[0], "text: a rising Unicode sparkline")
    check(row and "+1.0 MiB" in row[0] and "+10.2 KiB" in row[0], "text: slope per snapshot and per step")
    check(any(l.startswith("Allocated floor:") for l in lines), "text: the floor line")
    check(any(l.startswith("Reserved:") and "not a leak" in l for l in lines), "text: reserved line")
    check("1 group grows steadily" in p.stdout, "text: the conclusion")
    check("\033[" not in p.stdout, "text: no colour off a terminal")
    p = run(["series", os.path.dirname(leak[0]), "--ascii"], env={"LC_ALL": "C.UTF-8"})
    row = [l for l in p.stdout.splitlines() if "metrics.py:23 update" in l]
    check(row and "_.-" in row[0] and all(ord(c) < 128 for c in p.stdout), "--ascii: ASCII only")
    p = run(["series", os.path.dirname(leak[0])], env={"LC_ALL": "C", "LANG": ""})
    check(all(ord(c) < 128 for c in p.stdout), "C locale: ASCII sparklines")
    p = run(["series", os.path.dirname(clean[0])], env={"LC_ALL": "C"})
    check("No group grows steadily" in p.stdout, "clean text: no leak")
    check(not any(l.split()[:1] == ["growing"] for l in p.stdout.splitlines()), "clean text: no growing row")


def part_json():
    leak = series_files("leak")
    doc = run_json(leak + ["--steps-between", "100", "--capacity", "1GiB"])
    if not doc:
        return
    check(doc["schema"] == "snapdiff.series/1", "schema")
    for k in ("snapshots", "groups", "floor", "thresholds", "verdicts", "allocated",
              "reserved", "capacity"):
        check(k in doc, "JSON has " + k)
    s0 = doc["snapshots"][0]
    check(set(s0) == {"source", "time_us", "step", "allocated", "reserved", "host", "oom"} and
          s0["oom"] is None and s0["host"] is None,
          "snapshot keys %s (no oom recorded: oom null; no host memory: host null)" % sorted(s0))
    check([s["step"] for s in doc["snapshots"]] == [100 * i for i in range(10)], "steps from --steps-between")
    times = [s["time_us"] for s in doc["snapshots"]]
    check(times == sorted(times) and len(set(times)) == 10, "time_us per snapshot")
    g = doc["groups"][0]
    for k, t in (("key", str), ("device", int), ("bytes", list), ("slope_bytes_per_snapshot", float),
                 ("slope_bytes_per_step", float), ("confidence", float), ("p_value", float),
                 ("mann_kendall_s", int), ("mann_kendall_var", float), ("verdict", str),
                 ("min_bytes", int), ("max_bytes", int)):
        check(isinstance(g.get(k), t), "group field %s is %s" % (k, t.__name__))
    check(isinstance(g["site"], dict) and set(g["site"]) == {"filename", "line", "name"}, "site frame")
    check(g["site"]["filename"].endswith("metrics.py") and g["site"]["line"] == 23, "site of the leak")
    th = doc["thresholds"]
    check(th["min_slope_bytes_per_snapshot"] == 256 * 1024 and th["confidence"] == 0.99, "default thresholds")
    cap = doc["capacity"]
    last = doc["snapshots"][-1]["allocated"]
    want = math.ceil((1 << 30) - last) / MiB
    check(cap and cap["snapshots_left"] == math.ceil(((1 << 30) - last) / MiB), "capacity: snapshots left %s want %s" % (cap, want))
    check(cap and cap["steps_left"] == math.ceil(((1 << 30) - last) / (MiB / 100.0)), "capacity: steps left")
    doc = run_json(leak)
    check(doc and "step" not in doc["snapshots"][0] and "slope_bytes_per_step" not in doc["groups"][0],
          "no steps: no per-step figures")
    check(doc and doc["capacity"] is None, "no --capacity: capacity null")


def part_options():
    leak = series_files("leak")
    rev = list(reversed(leak))
    doc = run_json(rev)
    check(doc and [os.path.basename(s["source"]) for s in doc["snapshots"]][0] == "step_1000.pickle",
          "files in the order given")
    check(doc and doc["groups"][0]["verdict"] == "shrinking", "reversed: the leak shrinks")
    for how in ("name", "time"):
        doc = run_json(rev + ["--sort", how])
        check(doc and [s["source"] for s in doc["snapshots"]] == leak, "--sort %s" % how)
        check(doc and doc["groups"][0]["verdict"] == "growing", "--sort %s: growing again" % how)
    steps = ",".join(str(s) for s in (10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120))
    doc = run_json(leak + ["--steps", steps])
    if doc:
        want = truth_series.compute(leak, [int(s) for s in steps.split(",")])
        compare(doc, want, "--steps list", steps=True)
    doc = run_json(leak + ["--min-slope", "2MiB"])
    check(doc and doc["verdicts"]["growing"] == 0, "--min-slope 2MiB: the 1 MiB leak is not enough")
    doc = run_json(leak[:5] + ["--confidence", "0.95"])
    check(doc and doc["verdicts"]["growing"] == 1, "five snapshots at 95%: growing")
    p = run(["series"] + leak[:5])
    check("reaches at most" in p.stdout, "five snapshots at 99%: the note says why nothing can grow")
    doc = run_json(leak + ["-g", "file"])
    check(doc and any(g["key"].endswith("metrics.py") and g["verdict"] == "growing"
                      for g in doc["groups"]), "-g file")
    # errors: one line, exit 2
    for args, what in ((leak[:2], "at least 3"),
                       (leak + ["--steps", "1,2,3"], "one per snapshot"),
                       (leak[:3] + ["--steps", "3,2,1"], "increase"),
                       (leak + ["--steps", "1,x"], "--steps"),
                       (leak + ["--steps", "1,2", "--steps-between", "5"], "not both"),
                       (leak + ["--sort", "size"], "--sort"),
                       (leak + ["--confidence", "1.5"], "--confidence"),
                       (leak + ["--min-slope", "lots"], "--min-slope"),
                       (leak + [os.path.join(ROOT, "no-such.pickle")], "no-such")):
        p = run(["series"] + args, rc=2)
        lines = p.stderr.strip().splitlines()   # usage errors add a 'Try --help' line
        check(lines and what in lines[0] and (len(lines) == 1 or "--help" in lines[1]),
              "error %s: %r" % (what, p.stderr))
    p = run([leak[0], leak[1], "--steps", "1,2"], rc=2)
    check("--steps" in p.stderr, "diff --steps takes one number")
    run(["stats", leak[0], "--ascii"], rc=2)


def part_real():
    real = clitest.real_snapshots(ROOT)
    files = sorted(os.path.join(real, f) for f in os.listdir(real)
                   if f.endswith((".pickle", ".pkl")))
    for f in files:
        doc = run_json([f, f, f])
        if not doc:
            continue
        name = os.path.basename(f)
        check(doc["verdicts"]["growing"] == 0 and doc["verdicts"]["shrinking"] == 0
              and doc["verdicts"]["noisy"] == 0, name + " x3: flags nothing")
        want = truth_series.groups_of(truth_series.truth_diff.load(f))
        got = {(g["key"], g["device"]): g["bytes"] for g in doc["groups"]}
        check(set(got) == set(want), name + ": group keys differ from truth_diff's")
        for k, b in want.items():
            check(got.get(k) == [b, b, b], "%s %s: bytes %s, want %d" % (name, k, got.get(k), b))
        print("ok %s (%d groups)" % (name, len(got)))
    # three different files in a row: bytes per group against the truth (zeros where absent)
    trio = files[:3]
    doc = run_json(trio)
    if doc:
        want = truth_series.compute(trio)
        got = {"%s\t%d" % (g["key"], g["device"]): g["bytes"] for g in doc["groups"]}
        check(got == {k: w["bytes"] for k, w in want["groups"].items()}, "three real files: bytes per group")


def main():
    global ROOT
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("part", choices=("fixtures", "json", "options", "real"))
    a = ap.parse_args()
    T.bin, ROOT = a.bin, os.path.abspath(a.root)
    globals()["part_" + a.part]()
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
