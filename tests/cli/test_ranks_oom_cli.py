#!/usr/bin/env python3
"""Ranks and OOMs that users can trust (issue 19).

    test_ranks_oom_cli.py --bin SNAPDIFF --root REPO oom      # testdata/oom vs tests/truth/truth_frag.py
    test_ranks_oom_cli.py --bin SNAPDIFF --root REPO gate     # check --max-ooms in every output
    test_ranks_oom_cli.py --bin SNAPDIFF --root REPO ranks    # one-device files of other ordinals
    test_ranks_oom_cli.py --bin SNAPDIFF --root REPO real     # real one-device files, pairwise

Expected figures come from CPython (tests/truth/truth_frag.py, testdata/ranks_devices/expected.json
written by testdata/make_rank_device_fixtures.py). Exit 0 pass, 1 fail, 77 skipped.
"""
import argparse
import glob
import json
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_frag  # noqa: E402

T = clitest.Suite(no_color=True)
check, run = T.check, T.run
ROOT = None
OOM_KEYS = ["request_bytes", "device_free_bytes", "largest_free_bytes", "free_bytes", "cause",
            "allocator_free_bytes", "cached_free_bytes", "stranded_free_bytes",
            "all_free_bytes", "at_run_start", "live_bytes", "live_blocks"]


def fix(*parts):
    return os.path.join(ROOT, "testdata", *parts)


def part_oom():
    want_cause = {"capacity_start": "capacity", "fragmentation": "fragmentation", "both": "both"}
    for name, cause in want_cause.items():
        path = fix("oom", name + ".pickle")
        doc = json.loads(run(["frag", "--json", path]).stdout)
        truth = truth_frag.analyse(path, 30.0, 0.5)["devices"][0]["oom_events"]
        got = doc["devices"][0]["oom_events"]
        if not check(len(got) == len(truth) == 1, name + ": one oom"):
            continue
        g, w = got[0], truth[0]
        for k in OOM_KEYS:
            check(g[k] == w[k], "%s: %s is %r, truth %r" % (name, k, g[k], w[k]))
        check(g["cause"] == cause, "%s: cause %s" % (name, g["cause"]))
        check([x["bytes"] for x in g["live_sites"]] == w["live_site_bytes"],
              name + ": live sites %r" % g["live_sites"])
        for x in g["live_sites"]:
            check(set(x["site"]) >= {"filename", "line", "name", "kind"},
                  name + ": a live site is named as the diff names it: %r" % x["site"])
        advice = "\n".join(doc["devices"][0]["advice"])
        text = run(["frag", path]).stdout
        if cause == "capacity":
            check("compare two snapshots" not in advice and "compare two snapshots" not in text,
                  name + ": no 'compare two snapshots' for an oom at the run's start")
            check("ran out of memory at its start" in advice, name + ": at-start advice")
            check("PYTORCH_CUDA_ALLOC_CONF" not in advice,
                  name + ": no allocator settings where fragmentation did not contribute")
            check("the trace reaches back to the run's start" in text, name + ": run start said")
        elif cause == "both" or name == "fragmentation":
            # the replay (trusted: every placement matched) shows neither setting avoids it
            # (issue 20); fragmentation's segments were cut before its trace, so a setting
            # cannot re-cut them within the window (issue 25), which the advice says
            check("the replay shows no setting avoids this oom" in advice.lower()
                  and "PYTORCH_CUDA_ALLOC_CONF" not in advice,
                  name + ": no allocator settings where the replay shows none helps")
            check("segments were cut" in advice, name + ": the warm start is said")
        else:
            check("PYTORCH_CUDA_ALLOC_CONF" in advice,
                  name + ": allocator settings where fragmentation contributed")
            check("ran out of memory at its start" not in advice, name + ": not at the start")
        # every site of the table whole, one a line, largest first
        rows = re.findall(r"^ {6}\s*([\d.]+ [KMG]i?B|\d+ B)  (\S+:\d+ \S+)$", text, re.M)
        check(len(rows) == min(5, len(g["live_sites"])),
              name + ": the largest 5 live sites in the text %r" % rows)


def part_gate():
    one, none = fix("oom", "fragmentation.pickle"), fix("frag", "compact.pickle")
    p = run(["check", "--max-ooms", "0", none, one], 1)
    check(re.search(r"FAIL\s+max-ooms\s+1\s+>\s+0", p.stdout) is not None,
          "text: max-ooms row %r" % p.stdout)
    run(["check", "--max-ooms", "1", none, one], 0)
    run(["check", "--max-ooms", "0", none, none], 0)
    doc = T.run_json(["check", "--max-ooms", "0", none, one], 1, default={})
    lim = [x for x in doc.get("limits", []) if x["name"] == "max-ooms"]
    check(len(lim) == 1 and lim[0]["unit"] == "count" and lim[0]["measured"] == 1
          and lim[0]["limit"] == 0 and not lim[0]["pass"], "JSON: max-ooms %r" % lim)
    p = run(["check", "--max-ooms", "0", "--format", "github", none, one], 1)
    check("::error" in p.stdout and "max-ooms" in p.stdout and "out-of-memory" in p.stdout,
          "github: %r" % p.stdout)
    with tempfile.TemporaryDirectory() as d:
        xml = os.path.join(d, "junit.xml")
        run(["check", "--max-ooms", "0", "--format", "junit", "-o", xml, none, one], 1)
        cases = ET.parse(xml).getroot().iter("testcase")
        bad = [c for c in cases if c.get("name") == "max-ooms" and c.find("failure") is not None]
        check(len(bad) == 1, "junit: a failing max-ooms case")
        conf = os.path.join(d, "limits.conf")
        with open(conf, "w") as f:
            f.write("max-ooms = 0   # an OOMed run fails\n")
        run(["check", "--config", conf, none, one], 1)
        with open(conf, "w") as f:
            f.write("max-ooms = -1\n")
        p = run(["check", "--config", conf, none, one], 2)
        check("max-ooms" in p.stderr, "config: a bad count is refused %r" % p.stderr)
    p = run(["check", "--max-ooms", "x", none, one], 2)
    check("max-ooms" in p.stderr, "a bad count is refused")


def part_ranks():
    exp = json.load(open(fix("ranks_devices", "expected.json")))
    old, new = fix("ranks_devices", "step100"), fix("ranks_devices", "step200")
    leaky = exp["leaky_rank"]
    # two one-device files of different ordinals: one device, said once
    p = run([os.path.join(old, "rank0.pickle"), os.path.join(new, "rank1.pickle")])
    check("only in" not in p.stdout, "rank0 vs rank1: no 'only in OLD/NEW' %r" % p.stdout)
    check(p.stdout.count("device 0 vs device 1") == 1, "rank0 vs rank1: said once")
    doc = T.run_json([os.path.join(old, "rank0.pickle"), os.path.join(new, "rank1.pickle")])
    if doc:
        devs = doc["devices"]
        check(len(devs) == 1 and devs[0]["device"] == 0 and devs[0]["device_new"] == 1
              and devs[0]["in_old"] and devs[0]["in_new"], "JSON: one paired device %r" % devs)
        want = exp["step200"]["allocated"][1] - exp["step100"]["allocated"][0]
        check(doc["totals"]["allocated_delta"] == want, "JSON: allocated delta")
    # same ordinals: unchanged, no pairing line
    p = run([os.path.join(old, "rank1.pickle"), os.path.join(new, "rank1.pickle")])
    check(" vs device " not in p.stdout, "rank1 vs rank1: no pairing line")
    # one baseline for every rank: only the leaking rank fails
    base = os.path.join(old, "rank0.pickle")
    growth = [a - exp["step100"]["allocated"][0] for a in exp["step200"]["allocated"]]
    limit = 4 << 20
    p = run(["check", "--max-growth", "4MiB", base, new], 1)
    for r, g in enumerate(growth):
        state = "FAIL" if g > limit else "PASS"
        check(("rank %d (rank%d.pickle): %s" % (r, r, state)) in p.stdout,
              "check baseline: rank %d %s" % (r, state))
    check("only in" not in p.stdout, "check baseline: nothing 'only in'")
    check(("1 of 4 ranks: rank %d" % leaky) in p.stdout, "check baseline: rank %d alone" % leaky)
    # the spread: the outlier, and none among identical ranks
    sp = exp["step200"]["allocated_spread"]
    out = run(["stats", new]).stdout
    check(("furthest from the median: rank %d (allocated +%.1f MiB)"
           % (sp["furthest"], sp["furthest_delta"] / 2**20)) in out, "stats: outlier %r" % out[-300:])
    out = run(["stats", fix("ranks_devices", "same")]).stdout
    check("Across 4 ranks" in out and "furthest from the median" not in out,
          "identical ranks: no outlier")
    doc = T.run_json(["check", "--max-growth", "1GiB", fix("ranks_devices", "same"),
                      fix("ranks_devices", "same")], 0, default={})
    spread = doc.get("spread") or {}
    check(spread.get("furthest") is None, "check JSON: identical ranks have no outlier %r" % spread)


def part_series():
    """series over rank files: ranks side by side (per-rank figures, spread, outlier),
    --as-series / --as-ranks override the guess; a real series stays a series."""
    exp = json.load(open(fix("ranks_devices", "expected.json")))
    new = fix("ranks_devices", "step200")
    out = run(["series", new]).stdout
    check(out.startswith("Ranks of one job, side by side: 4 snapshots"), "series: ranks view %r"
          % out[:200])
    for r, a in enumerate(exp["step200"]["allocated"]):
        check(re.search(r"^  rank %d\s+%.1f MiB" % (r, a / 2**20), out, re.M) is not None,
              "series: rank %d allocated" % r)
    sp = exp["step200"]["allocated_spread"]
    check(("furthest from the median: rank %d (allocated +%.1f MiB)"
           % (sp["furthest"], sp["furthest_delta"] / 2**20)) in out, "series: the outlier")
    doc = T.run_json(["series", new], 0, default={})
    check(doc.get("schema") == "snapdiff.series-ranks/1", "series JSON: schema")
    if doc.get("ranks"):
        check([x["rank"] for x in doc["ranks"]] == list(range(4)), "series JSON: ranks in order")
        check([x["allocated_bytes"] for x in doc["ranks"]] == exp["step200"]["allocated"],
              "series JSON: allocated per rank")
        check([x["reserved_bytes"] for x in doc["ranks"]] == exp["step200"]["reserved"],
              "series JSON: reserved per rank")
        check(doc["spread"]["furthest"] == sp["furthest"]
              and doc["spread"]["furthest_delta"] == sp["furthest_delta"]
              and doc["spread"]["allocated_median"] == sp["median"], "series JSON: spread")
    same = T.run_json(["series", fix("ranks_devices", "same")], 0, default={"spread": {}})
    check(same["spread"].get("furthest", 0) is None, "series: identical ranks, no outlier")
    out = run(["series", fix("ranks_devices", "same")]).stdout
    check("furthest from the median" not in out and "no outlier" in out, "series: no outlier text")
    out = run(["series", "--as-series", new]).stdout
    check(out.startswith("Series of 4 snapshots"), "series --as-series: a time series")
    leak = fix("series", "leak")
    check(run(["series", leak]).stdout.startswith("Series of"), "series: a real series stays one")
    out = run(["series", "--as-ranks", leak]).stdout
    check(out.startswith("Ranks of one job"), "series --as-ranks: ranks view")
    # a zip whose members are the ranks of one archive
    out = run(["series", fix("ranks", "new.zip")]).stdout
    check(out.startswith("Ranks of one job"), "series over a zip of ranks: ranks view")


def part_sites():
    """trace --json names a site as the diff does: a C++-only stack's labelled node with
    kind and symbol, not the raw frame."""
    f = fix("native", "forward.pickle")
    tr = T.run_json(["trace", f], 0, default={"devices": [{"groups": []}]})
    df = T.run_json([f, f], 0, default={"groups": []})
    diff_sites = {g["key"]: g["site"] for g in df["groups"]}
    native = [g for g in tr["devices"][0]["groups"] if g["site"] and g["site"]["kind"] == "native"]
    check(len(native) >= 1, "trace: a native site")
    for g in native:
        check(g["site"]["filename"] == "" and g["site"]["line"] == 0 and "symbol" in g["site"]
              and not g["site"]["name"].startswith("torch::"), "trace: labelled %r" % g["site"])
        check(diff_sites.get(g["key"]) == g["site"], "trace and diff name %s alike" % g["key"])


def readme_jq():
    """The README's `--json | jq` examples of the diff, as written there."""
    text = open(os.path.join(ROOT, "README.md")).read()
    block = text[text.index("### In scripts: `--json | jq`"):]
    block = block[:block.index("```", block.index("```sh") + 5)]
    out = []
    for m in re.finditer(r"\$ snapdiff (testdata/example/old\.pickle testdata/example/new\.pickle[^|]*)"
                         r"\|\s*jq (-c|-r) '((?:[^']|\n)*)'", block):
        out.append((m.group(1).split(), m.group(2), m.group(3)))
    return out


def part_jq():
    """The README's jq examples work when nothing grew (a file against itself): no site is
    named as grown, no pattern is claimed."""
    import shutil
    import subprocess
    if not shutil.which("jq"):
        clitest.skip("jq is not installed")
    examples = readme_jq()
    check(len(examples) >= 2, "README: the diff's jq examples found")
    new = os.path.join(ROOT, "testdata", "example", "new.pickle")
    for args, flag, expr in examples:
        same = [new if a.endswith(".pickle") else a for a in args]
        p = run(same)
        q = subprocess.run(["jq", flag, expr], input=p.stdout, capture_output=True, text=True)
        check(q.returncode == 0, "jq %s: runs on a no-growth pair: %s" % (expr, q.stderr))
        for line in q.stdout.splitlines():
            doc = json.loads(line)
            check(doc.get("site") is None and "pattern" not in doc,
                  "jq %s: names nothing as grown when nothing grew: %r" % (expr, doc))


def part_real():
    real = clitest.real_snapshots(ROOT)
    files = sorted(glob.glob(os.path.join(real, "*.pickle")) + glob.glob(os.path.join(real, "*.pkl")))
    one = []
    for f in files:
        per_dev, _ = truth_frag.load(f)
        if len(per_dev) == 1:
            one.append((f, next(iter(per_dev))))
    check(len(one) >= 2, "real: at least two one-device files")
    pairs = [(a, b) for i, a in enumerate(one) for b in one[i + 1:i + 3]]
    for (a, da), (b, db) in pairs:
        p = run([a, b, "-q"], None)
        if p.returncode != 0:
            check(False, "real: %s vs %s exits %d: %s" % (a, b, p.returncode, p.stderr[-200:]))
            continue
        check("only in OLD" not in p.stdout and "only in NEW" not in p.stdout,
              "real: %s (device %d) vs %s (device %d) never says 'only in'"
              % (os.path.basename(a), da, os.path.basename(b), db))
        check((" vs device " in p.stdout) == (da != db), "real: pairing line iff ordinals differ")


def main():
    global ROOT
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("part", choices=["oom", "gate", "ranks", "series", "sites", "jq", "real"])
    a = ap.parse_args()
    T.bin, ROOT = os.path.abspath(a.bin), os.path.abspath(a.root)
    globals()["part_" + a.part]()
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
