#!/usr/bin/env python3
"""Job folders as the frameworks write them (issue 27): `series`, `report` and `check` on
testdata/jobs (testdata/make_job_fixtures.py), every figure against CPython.

    test_job_cli.py --bin SNAPDIFF --root REPO

The truth here is independent of snapdiff's rule: each framework's naming as its own code
writes it (a regular expression per layout, below), and the bytes read back from each
pickle with CPython (allocated: active_allocated blocks at block size; reserved: the
segments' total_size).
"""
import argparse
import json
import os
import pickle
import re
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402

T = clitest.Suite(no_color=True)
check, run = T.check, T.run

# Per layout: (regex on the path, its name). Groups: rank, step, oom.
LAYOUTS = {
    "torchtitan": r"iteration_(?P<step>\d+)(?P<oom>_exit)?/rank(?P<rank>\d+)_memory_snapshot\.pickle$",
    "Megatron-LM": r"/(?P<oom>oom)_rank-(?P<rank>\d+)_[^/]*$",
    "Megatron-Bridge": r"/snapshot_(?P<oom>oom_)?(?:rank-)?(?P<rank>\d+)\.pickle$",
    "verl": r"/step(?P<step>\d+)/torch_memory_(?P<oom>oom_)?rank(?P<rank>\d+)_pid\d+\.pickle$",
}


def truth_bytes(path):
    with open(path, "rb") as f:
        snap = pickle.load(f)
    alloc = sum(b["size"] for seg in snap["segments"] for b in seg["blocks"]
                if b["state"] == "active_allocated")
    return alloc, sum(seg["total_size"] for seg in snap["segments"])


def truth_names(layout, paths):
    out = {}
    for p in paths:
        m = re.search(LAYOUTS[layout], p)
        check(m is not None, "%s: the layout's regex reads %s" % (layout, p))
        if m:
            g = m.groupdict()
            out[p] = (int(g["step"]) if g.get("step") else None, int(g["rank"]), bool(g.get("oom")))
    return out


def files(d):
    return sorted(os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs)


def job_view(root, layout, sub):
    d = os.path.join(root, "testdata", "jobs", sub)
    doc = T.run_json(["series", d], default={})
    check(doc.get("schema") == "snapdiff.series-job/1", "%s: a job view" % sub, doc.get("schema"))
    check(doc.get("layout") == layout, "%s: layout %s" % (sub, layout), doc.get("layout"))
    names = truth_names(layout, files(d))
    snaps = doc.get("snapshots", [])
    check(len(snaps) == len(names), "%s: every file a snapshot" % sub, len(snaps))
    for s in snaps:
        want = names.get(s["source"])
        a, r = truth_bytes(s["source"])
        check(want == (s["step"], s["rank"], s["oom"]), "%s: step, rank, oom of %s" % (sub, s["source"]),
              (s["step"], s["rank"], s["oom"], want))
        check((s["allocated_bytes"], s["reserved_bytes"]) == (a, r), "%s: bytes of %s" % (sub, s["source"]))
    order = [(s["step"] if s["step"] is not None else -1, s["oom"], s["rank"]) for s in snaps]
    check(order == sorted(order), "%s: by step, then rank, OOM dumps after" % sub, order)
    # steps per rank, from the truth
    grew, best = None, 0
    for rk in doc.get("ranks", []):
        mine = sorted((st, src) for src, (st, r, oom) in names.items()
                      if r == rk["rank"] and not oom)
        ooms = sum(1 for (st, r, oom) in names.values() if r == rk["rank"] and oom)
        check(rk["steps"] == len(mine) and rk["oom_dumps"] == ooms, "%s: rank %d's counts" % (sub, rk["rank"]))
        if len(mine) >= 2:
            change = truth_bytes(mine[-1][1])[0] - truth_bytes(mine[0][1])[0]
            check(rk["change_bytes"] == change, "%s: rank %d's change" % (sub, rk["rank"]),
                  rk["change_bytes"], change)
            if change > best:
                grew, best = rk["rank"], change
        else:
            check(rk["change_bytes"] is None, "%s: no change with one step" % sub)
    check(doc.get("grew_most") == grew, "%s: grew most" % sub, doc.get("grew_most"), grew)
    return doc, names


def test_layouts(root):
    doc, names = job_view(root, "torchtitan", "torchtitan")
    series = doc.get("series_of_grew_most", {})
    check(series.get("schema") == "snapdiff.series/1", "torchtitan: the series of rank 1")
    check([s.get("step") for s in series.get("snapshots", [])] == [10, 20, 30],
          "torchtitan: its steps", [s.get("step") for s in series.get("snapshots", [])])
    job_view(root, "verl", "verl")
    job_view(root, "Megatron-LM", "megatron_lm")
    job_view(root, "Megatron-Bridge", "megatron_bridge")
    # text: the OOM dump called out, with its file
    d = os.path.join(root, "testdata", "jobs", "torchtitan")
    out = run(["series", d]).stdout
    exit_file = os.path.join(d, "memory_snapshot", "iteration_30_exit", "rank1_memory_snapshot.pickle")
    check("OOM dumps (taken when the allocator failed" in out and exit_file in out,
          "torchtitan text: the OOM dump named", out[:400])
    check("<- grew most" in out, "torchtitan text: the rank that grew most marked")
    # one step of two ranks (verl's pids differ): the ranks side by side
    doc = T.run_json(["series", os.path.join(root, "testdata", "jobs", "verl", "step2")], default={})
    check(doc.get("schema") == "snapdiff.series-ranks/1", "verl step2: ranks side by side", doc.get("schema"))
    check([x["rank"] for x in doc.get("ranks", [])] == [0, 1], "verl step2: ranks 0 and 1")
    # --as-series: the files as one series
    doc = T.run_json(["series", "--as-series", os.path.join(root, "testdata", "jobs", "verl")], default={})
    check(doc.get("schema") == "snapdiff.series/1", "--as-series overrides the job view")


def test_name_pattern(root):
    d = os.path.join(root, "testdata", "jobs", "custom")
    pat = r"-s(?P<step>[0-9]+)-r(?P<rank>[0-9]+)\.pkl$"
    doc = T.run_json(["series", "--name-pattern", pat, d], default={})
    check(doc.get("layout") == "--name-pattern", "--name-pattern: its layout", doc.get("layout"))
    got = sorted((s["step"], s["rank"]) for s in doc.get("snapshots", []))
    want = sorted((int(m.group("step")), int(m.group("rank")))
                  for m in (re.search(pat.replace("?P<", "?P<"), f) for f in files(d)))
    check(got == want, "--name-pattern: steps and ranks", got, want)
    p = run(["series", "--name-pattern", r"(?P<node>[0-9]+)", d], rc=2)
    check(p.stderr.count("\n") == 1 and "unknown group name 'node'" in p.stderr,
          "--name-pattern: an unknown group is one error line", p.stderr)
    p = run(["series", "--name-pattern", r"(?P<rank>[0-9]+", d], rc=2)
    check(p.stderr.count("\n") == 1 and "--name-pattern: " in p.stderr, "--name-pattern: a bad expression",
          p.stderr)


def test_truncated(root):
    """A job killed while it dumped: iteration_20's rank 1 cut to half its bytes."""
    tmp = tempfile.mkdtemp(prefix="snapdiff_job_")
    try:
        src = os.path.join(root, "testdata", "jobs", "torchtitan", "memory_snapshot")
        d = os.path.join(tmp, "memory_snapshot")
        for it in ("iteration_10", "iteration_20"):
            shutil.copytree(os.path.join(src, it), os.path.join(d, it))
        cut = os.path.join(d, "iteration_20", "rank1_memory_snapshot.pickle")
        with open(cut, "rb") as f:
            data = f.read()
        with open(cut, "wb") as f:
            f.write(data[:len(data) // 2])
        try:
            with open(cut, "rb") as f:
                pickle.load(f)
            check(False, "the truncated file does not unpickle")
        except Exception:
            pass
        p = run(["series", d])
        warnings = [ln for ln in p.stderr.splitlines() if "warning" in ln]
        check(len(warnings) == 1 and cut in warnings[0] and "--strict" in warnings[0],
              "series: one warning naming the truncated file", p.stderr)
        doc = T.run_json(["series", d], default={})
        check(all(s["source"] != cut for s in doc.get("snapshots", []))
              and len(doc.get("snapshots", [])) == 3, "series: the truncated file left out")
        p = run(["series", "--strict", d], rc=2)
        check(p.stderr.strip().splitlines()[-1].startswith("snapdiff: " + cut),
              "--strict: exit 2 naming it", p.stderr)
        old, new = os.path.join(d, "iteration_10"), os.path.join(d, "iteration_20")
        for a, b in ((old, new), (new, old)):
            doc = T.run_json(["check", "--max-growth", "1MiB", a, b], default={})
            names = [m.get("member") for m in doc.get("members", [])]
            check(names == ["rank0_memory_snapshot.pickle"],
                  "check %s %s: rank 1 left out on both sides"
                  % (os.path.basename(a), os.path.basename(b)), names)
        run(["check", "--strict", "--max-growth", "1MiB", old, new], rc=2)
        out = os.path.join(tmp, "r.html")
        p = run(["report", "-o", out, new])
        check(os.path.getsize(out) > 0 and cut in p.stderr, "report: written, the file named")
    finally:
        shutil.rmtree(tmp)


def test_check_steps(root):
    """check OLD=one step, NEW=the whole folder: each rank's last step is judged."""
    d = os.path.join(root, "testdata", "jobs", "torchtitan", "memory_snapshot")
    old = os.path.join(d, "iteration_10")
    p = run(["check", "--max-growth", "3MiB", "--json", old, d], rc=1)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = {}
    members = {m.get("member"): m for m in doc.get("members", [])}
    want = {os.path.join("iteration_30", "rank%d_memory_snapshot.pickle" % r) for r in (0, 1)}
    check(set(members) == want, "check: each rank's last step", sorted(members))
    growth = (truth_bytes(os.path.join(d, "iteration_30", "rank1_memory_snapshot.pickle"))[0]
              - truth_bytes(os.path.join(old, "rank1_memory_snapshot.pickle"))[0])
    lim = [x for x in doc.get("limits", []) if x.get("name") == "max-growth"
           and "rank1" in x.get("member", "")]
    check(len(lim) == 1 and lim[0].get("measured") == growth and lim[0].get("pass") is False,
          "check: rank 1's growth from CPython", lim, growth)
    check("iteration_30_exit/rank1_memory_snapshot.pickle is an OOM dump" in p.stderr
          and "(4 earlier snapshots left aside)" in p.stderr,
          "check: the OOM dump and the earlier steps named", p.stderr)


def test_report(root):
    d = os.path.join(root, "testdata", "jobs", "torchtitan")
    tmp = tempfile.mkdtemp(prefix="snapdiff_job_")
    try:
        out = os.path.join(tmp, "t.html")
        p = run(["report", "-o", out, d])
        exit_file = os.path.join(d, "memory_snapshot", "iteration_30_exit", "rank1_memory_snapshot.pickle")
        check("OOM dump of rank 1 after step 30: " + exit_file in p.stderr, "report: the OOM dump named", p.stderr)
        check("follows rank 1 across its 3 steps" in p.stderr, "report: follows the rank that grew most", p.stderr)
        check(os.path.getsize(out) > 1000, "report: the page written")
        # the steps-by-ranks table: the page embeds what `series --json` writes over the folder
        page = open(out, encoding="utf-8").read()
        m = re.search(r'<script type="application/json" id="sd-job">(.*?)</script>', page, re.S)
        check(m is not None, "report: the job folder's document embedded")
        series = T.run_json(["series", d], default={})
        if m:
            job = json.loads(m.group(1))
            for k in ("schema", "layout", "snapshots", "ranks", "grew_most"):
                check(job.get(k) == series.get(k), "report: sd-job %s as series --json" % k,
                      job.get(k), series.get(k))
        check("drawJob" in page, "report: the table's script")
    finally:
        shutil.rmtree(tmp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    a = ap.parse_args()
    T.bin = a.bin
    root = os.path.abspath(a.root)
    test_layouts(root)
    test_name_pattern(root)
    test_truncated(root)
    test_check_steps(root)
    test_report(root)
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
