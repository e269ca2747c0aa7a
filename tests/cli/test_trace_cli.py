#!/usr/bin/env python3
"""Behaviour tests of `snapdiff trace FILE` against tests/truth/truth_trace.py and hand-worked figures.

    test_trace_cli.py --bin SNAPDIFF --root REPO PART

PART is one of:
  fixtures  testdata/trace/ (testdata/make_trace_fixtures.py): the whole-run replay equals
            the snapshot's live blocks, the mid-run and overflow warnings, traces without
            free_requested, phases with a 1 MiB-per-step leak, --since/--until, every
            group-by key and the attribution options against the Python replay
  text      the text report: header, wording, aligned table, phases, --top
  json      --json: the snapdiff.trace/1 schema, keys and types, group order
  errors    bad --since/--until, several files, options of other commands: exit 2
  real      every real snapshot of ../shared/real-snapshots that has a trace: alive-at-end
            counts and bytes, every group and the top site against the Python replay
            (exit 77 = skipped when the directory is absent)
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_diff  # noqa: E402
import truth_peak  # noqa: E402
import truth_trace  # noqa: E402

T = clitest.Suite(prefix=["trace"])
check, run, run_json = T.check, T.run, T.run_json


def compare_with_truth(path, by="site", depth=0, hide=(), show=(), focus=()):
    args = [path, "--group-by", by]
    if depth:
        args += ["--depth", str(depth)]
    for flag, pats in (("--hide", hide), ("--show", show), ("--focus", focus)):
        for p in pats:
            args += [flag, p]
    doc = run_json(args)
    if doc is None:
        return None
    snap = truth_diff.load(path)
    want = truth_trace.compute(snap, by, depth, hide, show, focus)
    peaks = {d["device"]: d for d in truth_peak.compute(snap, by, depth, hide, show)["devices"]}
    trace_of = dict(enumerate(snap.get("device_traces") or []))
    rules = truth_diff.Rules(hide, show)
    tag = "%s [%s]" % (os.path.basename(path), " ".join(args[1:]))
    check([d["device"] for d in doc["devices"]] == [d["device"] for d in want["devices"]],
          tag + ": device list differs")
    for d, w in zip(doc["devices"], want["devices"]):
        t = "%s device %d" % (tag, w["device"])
        for k in ("entries", "alive_bytes", "alive_count", "alloc_count", "alloc_bytes",
                  "free_count", "free_bytes", "unknown_free_count", "unknown_free_bytes",
                  "window_peak_bytes"):
            check(d[k] == w[k], "%s: %s %s, truth %s" % (t, k, d[k], w[k]))
        pk = peaks.get(w["device"])
        check(pk is not None and d["peak_bytes"] == (pk["peak_bytes"] or 0),
              "%s: peak_bytes %s, truth_peak %s" % (t, d["peak_bytes"], pk and pk["peak_bytes"]))
        if pk and pk["peak_entry"] is not None:
            fr = truth_trace.frames_of(trace_of[w["device"]][pk["peak_entry"]])
            check(d["peak"] and d["peak"]["entry"] == pk["peak_entry"]
                  and d["peak"]["key"] == truth_diff.group_key(rules, by, depth, list(fr)),
                  t + ": peak entry/key")
        got = {g["key"]: [g["alive_bytes"], g["alive_count"], g["alloc_count"],
                          g["alloc_bytes"], g["free_count"]] for g in d["groups"]}
        check(len(got) == len(d["groups"]), t + ": duplicate group keys")
        for k, v in w["groups"].items():
            check(got.get(k) == v, "%s: group %r: snapdiff %s, truth %s"
                  % (t, k[:120], got.get(k), v))
        for k in got:
            check(k in w["groups"], "%s: group %r not in truth" % (t, k[:120]))
        check([g["key"] for g in d["groups"]] == w["order"], t + ": group order differs")
        if not focus:
            check(sum(g["alive_bytes"] for g in d["groups"]) == d["alive_bytes"],
                  t + ": groups do not add up to alive_bytes")
        warn = {x["code"] for x in d["warnings"]}
        check(("starts-mid-run" in warn) == (w["unknown_free_count"] > 0),
              t + ": starts-mid-run warning")
    return doc


def fixture(name):
    return os.path.join(ROOT, "testdata", "trace", name + ".pickle")


# ---------------------------------------------------------------------------------------------

def part_fixtures():
    exp = json.load(open(os.path.join(ROOT, "testdata", "trace", "expected.json")))
    for name in ("whole", "midrun", "noreq", "phases"):
        for by in ("site", "leaf", "stack", "file", "function"):
            compare_with_truth(fixture(name), by)
        compare_with_truth(fixture(name), depth=1)
        compare_with_truth(fixture(name), focus=["metrics"])
        compare_with_truth(fixture(name), hide=["metrics"])
        compare_with_truth(fixture(name), show=["linear"])

    # The whole run: the replay's alive blocks are the snapshot's live blocks.
    e = exp["whole"]
    doc = run_json([fixture("whole")])
    if doc:
        d = doc["devices"][0]
        snap = truth_diff.load(fixture("whole"))
        live = sorted([a, s] for _d, a, s, _r, st, _f in truth_diff.blocks_of(snap)
                      if st == "active_allocated")
        check(live == e["alive"], "whole: the fixture's snapshot and expected.json disagree")
        check(d["alive_count"] == len(live) and d["alive_bytes"] == sum(s for _a, s in live),
              "whole: alive %d/%d, snapshot %d/%d" % (d["alive_count"], d["alive_bytes"],
                                                      len(live), sum(s for _a, s in live)))
        want = truth_trace.compute(snap)["devices"][0]
        check(want["alive"] == live, "whole: the Python replay differs from the snapshot")
        check(d["peak_bytes"] == e["peak_bytes"] and d["peak"]["entry"] == e["peak_entry"]
              and d["peak"]["key"] == e["peak_key"] and d["window_peak_bytes"] == e["peak_bytes"],
              "whole: peak (nothing live before the run)")
        check(d["peak"]["site"] == {"filename": "/home/alice/proj/model.py", "line": 52,
                                    "name": "forward", "kind": "user"}, "whole: peak site")
        check(d["groups"][0]["key"] == e["top_key"], "whole: top group")
        for g in d["groups"]:
            check([g["alive_bytes"], g["alive_count"], g["alloc_count"], g["alloc_bytes"],
                   g["free_count"]] == e["groups"][g["key"]], "whole: group " + g["key"])
        check(d["warnings"] == [], "whole: no warnings, got %s" % d["warnings"])

    e = exp["midrun"]
    doc = run_json([fixture("midrun")])
    if doc:
        d = doc["devices"][0]
        check([w["code"] for w in d["warnings"]] == e["warnings"], "midrun: warnings %s"
              % d["warnings"])
        mid = [w for w in d["warnings"] if w["code"] == "starts-mid-run"]
        check(mid and mid[0]["count"] == e["unknown_free_count"]
              and mid[0]["bytes"] == e["unknown_free_bytes"], "midrun: unknown frees")
        check(d["alive_bytes"] == e["alive_bytes"] and d["alive_count"] == e["alive_count"],
              "midrun: alive")
        # expected.json's peak is the window's own allocations (hand-worked); the peak
        # counts the blocks from before the window as well (tests/truth/truth_peak.py).
        check(d["window_peak_bytes"] == e["peak_bytes"], "midrun: window's own peak")
        tp = truth_peak.compute(truth_diff.load(fixture("midrun")))["devices"][0]
        check(d["peak_bytes"] == tp["peak_bytes"] and d["peak"]["entry"] == tp["peak_entry"],
              "midrun: peak %s, truth %s"
              % (d["peak_bytes"], tp["peak_bytes"]))
        check(d["groups"][0]["key"] == e["top_key"], "midrun: top group")

    e = exp["noreq"]
    doc = run_json([fixture("noreq")])
    if doc:
        d = doc["devices"][0]
        check(d["alive_bytes"] == e["alive_bytes"] and d["alive_count"] == e["alive_count"]
              and d["free_count"] == e["free_count"], "noreq: alive/frees")
        check(d["actions"]["free_requested"] == 0, "noreq: no free_requested")
        check(d["groups"][0]["key"] == e["top_key"], "noreq: top group")
        check(d["warnings"] == [], "noreq: no warnings")

    e = exp["phases"]
    doc = run_json([fixture("phases")])
    if doc:
        d = doc["devices"][0]
        check(d["alive_bytes"] == e["alive_bytes"] and d["window_peak_bytes"] == e["peak_bytes"],
              "phases: alive/peak")
        steps = [p for p in d["phases"] if p["kind"] == "scope-start"]
        check(len(steps) == e["steps"] and all(p["name"] == "train_step" for p in steps),
              "phases: %d scope-start phases" % len(steps))
        check(all(p["growth"] == e["leak_per_step"] for p in steps), "phases: growth per step")
        check(sum(p["growth"] for p in d["phases"]) == d["alive_bytes"],
              "phases: growths add up to alive")
        check(sum(p["entries"] for p in d["phases"]) == d["entries"], "phases: entries add up")
        kinds = {p["kind"] for p in d["phases"]}
        check({"snapshot", "annotate", "scope-start"} <= kinds, "phases: kinds %s" % kinds)
        d1 = doc["devices"][1]
        check(d1["device"] == 1 and d1["alive_bytes"] == e["device1_alive"], "phases: device 1")

    # The window: #N entry indices, +US offsets, absolute times; until is exclusive.
    doc = run_json([fixture("phases"), "--since", "#28", "--until", "#53"])
    if doc:
        d = doc["devices"][0]
        check(d["first_entry"] == 28 and d["entries"] == 25, "window #28..#53")
        check(d["alive_bytes"] == 1 << 20 and d["alloc_count"] == 9, "window: one step's leak")
    full = run_json([fixture("phases")])
    if full:
        t0 = full["devices"][0]["first_time_us"]
        doc = run_json([fixture("phases"), "--since", str(t0 + 280), "--until", "+530"])
        if doc:
            check(doc["devices"][0]["first_entry"] == 28 and doc["devices"][0]["entries"] == 25,
                  "window by time: %s" % doc["devices"][0]["first_entry"])
    doc = run_json([fixture("phases"), "--since", "#1000"])
    check(doc and doc["devices"][0]["entries"] == 0 and doc["devices"][0]["groups"] == []
          and doc["devices"][0]["peak"] is None, "window past the end: empty")
    doc = run_json([fixture("midrun"), "--since", "#6"])
    check(doc and not any(w["code"] == "starts-mid-run" for w in doc["devices"][0]["warnings"]),
          "midrun from #6: no unknown frees")


def part_text():
    out = run([fixture("whole")]).stdout
    lines = out.splitlines()
    check(lines[0].startswith("device 0: 13 entries"), "text: header %r" % lines[0])
    check("alive at the end of the window (leak candidates): 7.5 MiB in 4 blocks" in out,
          "text: alive line")
    check("peak live: 14.5 MiB at entry #6" in out and "model.py:52 forward" in out,
          "text: peak line")
    check("leak" not in out.replace("leak candidates", ""), "text: never says leak alone")
    head = [ln for ln in lines if "alive bytes" in ln]
    check(len(head) == 1, "text: one table header")
    rows = [ln for ln in lines if ".py:" in ln and "peak" not in ln]
    # Labels drop the directory the file's user frames share (attrib.h), as top and diff do.
    check(len(rows) == 3 and rows[0].endswith("  model.py:52 forward"), "text: 3 rows, model first")
    check("/home/alice/proj/" not in out, "text: the common directory is dropped")
    if head and rows:
        col = head[0].index("group")
        check(all(r[col - 2:col] == "  " and r[col] != " " for r in rows),
              "text: group column aligned")
    # README's example is a real run: its lines (but "  ...") appear in order.
    readme = open(os.path.join(ROOT, "README.md")).read().splitlines()
    start = [i for i, ln in enumerate(readme) if ln.startswith("$ snapdiff trace testdata/trace/phases.pickle")]
    check(len(start) == 1, "text: README has the trace example")
    if start:
        block = []
        for ln in readme[start[0] + 1:]:
            if ln.startswith("```"):
                break
            if ln != "  ...":
                block.append(ln)
        real = run(["testdata/trace/phases.pickle", "--top", "5"], rc=None,
                   env={"NO_COLOR": "1"}, cwd=ROOT).stdout.splitlines()
        at = 0
        for ln in block:
            while at < len(real) and real[at] != ln:
                at += 1
            check(at < len(real), "text: README line not in the real output: %r" % ln)
            at = min(at + 1, len(real))
        check(len(block) > 10, "text: README example too short")
    out = run([fixture("midrun")]).stdout
    check("ring buffer overflowed" in out and "starts mid-run: 3 frees (6.0 MiB)" in out,
          "text: midrun warnings")
    out = run([fixture("phases")]).stdout
    check("phases" in out and "scope-start train_step" in out and "+1.0 MiB" in out,
          "text: phases")
    check("device 1:" in out, "text: device 1")
    out = run([fixture("phases"), "--top", "1"]).stdout
    check("(1 more group; --top N shows more)" in out, "text: --top 1")
    out = run([os.path.join(ROOT, "testdata", "leak", "empty.pickle")]).stdout
    check("no allocation history recorded" in out, "text: no trace")
    p = run([fixture("whole"), "--color"], rc=None)
    check("\033[" in p.stdout, "text: --color colours")
    p = run([fixture("whole")], rc=None, env={"NO_COLOR": "1"})
    check("\033[" not in p.stdout, "text: NO_COLOR")


def part_json():
    for name in ("whole", "midrun", "noreq", "phases"):
        doc = run_json([fixture(name)])
        if not doc:
            continue
        check(doc["schema"] == "snapdiff.trace/1", name + ": schema")
        for d in doc["devices"]:
            for k, t in (("device", int), ("entries", int), ("alive_bytes", int),
                         ("alive_count", int), ("peak_bytes", int), ("warnings", list),
                         ("phases", list), ("groups", list), ("actions", dict)):
                check(isinstance(d.get(k), t), "%s: devices[].%s is %s" % (name, k, t.__name__))
            check(d["peak"] is None or set(d["peak"]) >= {"bytes", "entry", "time_us", "key",
                                                          "label", "site", "stack"},
                  name + ": peak keys")
            check(isinstance(d["time_span_us"], int), name + ": time_span_us")
            check(d["rates"] is None or set(d["rates"]) == {"allocs_per_s", "alloc_bytes_per_s",
                                                            "frees_per_s"}, name + ": rates")
            for g in d["groups"]:
                check(set(g) == {"key", "label", "site", "alive_bytes", "alive_count", "alloc_count",
                                 "alloc_bytes", "free_count", "free_bytes"}, name + ": group keys")
                # the diff's site object (issue 19): kind always, symbol for a native
                # site, backward for a backward one
                check(g["site"] is None or {"filename", "line", "name", "kind"} <= set(g["site"])
                      <= {"filename", "line", "name", "kind", "symbol", "backward"},
                      name + ": site keys")
            ab = [g["alive_bytes"] for g in d["groups"]]
            check(ab == sorted(ab, reverse=True), name + ": groups largest alive first")
            for p in d["phases"]:
                check(p["growth"] == p["live_end"] - p["live_start"], name + ": phase growth")


def part_errors():
    for bad in ("abc", "#", "#-1", "+x", "12s", "-5"):
        p = run([fixture("whole"), "--since=" + bad], rc=2)
        check(p.stdout == "" and len(p.stderr.strip().splitlines()) == 1
              and "--since" in p.stderr, "errors: --since %r: %r" % (bad, p.stderr))
    run([fixture("whole"), fixture("midrun")], rc=2)
    run([fixture("whole"), "--map"], rc=2)
    run([fixture("whole"), "--focus", "("], rc=2)
    p = run([os.path.join(ROOT, "testdata", "trace", "expected.json")], rc=2)
    check(len(p.stderr.strip().splitlines()) == 1, "errors: not a pickle: one line")
    # Odd shapes of what the replay reads: tolerated, never a crash.
    import pickle
    import tempfile
    frames = [{"filename": "/w/a.py", "line": 1, "name": "f"}]
    odd = [
        {"segments": [], "device_traces": [[{"action": "alloc", "addr": 1, "size": 2**63 - 1},
                                            {"action": "alloc", "addr": 1, "size": 5},
                                            {"action": "free_completed", "addr": 9, "size": 3},
                                            {"action": "bogus", "addr": 1, "size": 1},
                                            {"action": "oom", "device_free": 1, "size": 7}]],
         "external_annotations": "not a list"},
        {"segments": [], "device_traces": [[{"action": "alloc", "addr": 1, "size": 4,
                                             "frames": frames, "time_us": 5}]],
         "external_annotations": [1, None, {"name": 3, "stage": None, "time_us": 2**70},
                                  {"name": "x", "stage": "START", "device": 0, "time_us": 5},
                                  {"name": "y", "device": 7, "time_us": 1}]},
    ]
    for i, snap in enumerate(odd):
        with tempfile.NamedTemporaryFile(suffix=".pickle", delete=False) as f:
            pickle.dump(snap, f, protocol=4)
        try:
            p = run([f.name])
            doc = run_json([f.name])
            check(doc is not None and len(doc["devices"]) == 1, "odd %d: one device" % i)
            if doc and i == 0:
                d = doc["devices"][0]
                codes = [w["code"] for w in d["warnings"]]
                check(codes == ["starts-mid-run", "unrecorded-free", "no-times"],
                      "odd 0: warnings %s" % codes)
                check(d["alive_count"] == 1 and d["alive_bytes"] == 5, "odd 0: alive")
                check("external_annotations" in p.stderr, "odd 0: a note on the odd annotations")
            if doc and i == 1:
                ph = doc["devices"][0]["phases"]
                check([x["kind"] for x in ph] == ["scope-start"] and ph[0]["name"] == "x",
                      "odd 1: phases %s" % ph)
        finally:
            os.unlink(f.name)
    p = run(["--help"], rc=None)
    check(p.returncode == 0 and "--since" in p.stdout and "--until" in p.stdout
          and "--map" not in p.stdout, "errors: trace --help")


def part_real():
    real = clitest.real_snapshots(ROOT)
    files = sorted(os.path.join(real, f) for f in os.listdir(real)
                   if f.endswith((".pickle", ".pkl")))
    n = 0
    for path in files:
        snap = truth_diff.load(path)
        if not any(snap.get("device_traces") or []):
            continue
        n += 1
        doc = compare_with_truth(path)
        compare_with_truth(path, "leaf")
        if doc:
            want = truth_trace.compute(snap)
            for d, w in zip(doc["devices"], want["devices"]):
                if w["order"]:
                    check(d["groups"][0]["key"] == w["order"][0],
                          "%s: top site %r, truth %r" % (os.path.basename(path),
                                                         d["groups"][0]["key"], w["order"][0]))
        run([path])                      # the text report works too
    print("%d real snapshots with a trace" % n)
    check(n > 0, "real: no snapshot with a trace")


def main():
    global ROOT
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("part", choices=["fixtures", "text", "json", "errors", "real"])
    a = ap.parse_args()
    T.bin, ROOT = a.bin, a.root
    {"fixtures": part_fixtures, "text": part_text, "json": part_json, "errors": part_errors,
     "real": part_real}[a.part]()
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
