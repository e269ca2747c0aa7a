#!/usr/bin/env python3
"""Behaviour tests of `snapdiff check` (issue 11): the CI gate and many ranks.

    test_check_cli.py --bin SNAPDIFF --root REPO PART

Fixtures: testdata/make_rank_fixtures.py (a 4-rank job, rank 2 leaks 6 MiB at a new site).
Every expected figure is computed here from the pickles with CPython (tests/truth/truth_stats.py
reads archives members, tests/truth/truth_diff.py groups by site), never copied from snapdiff.

PART is one of:
  limits   every limit passes at exactly its measure and fails one unit below, exit 0 / 1,
           the verdict lines, the JSON figures
  errors   exit 2: no limits, --max-per-step without --steps, bad values, bad inputs,
           --format junit without --output; diff --max-growth still gates
  config   --config: comments, blank lines, the command line wins, steps, bad lines
           named FILE:LINE
  github   --format github: ::error / ::warning lines, file=/line= only for a site whose
           file is in --repo-root
  junit    --format junit -o FILE, parsed with xml.etree: one test case per limit per rank
  ranks    the 4-rank archive: the gate fails and names rank 2 and its site; pairing by
           rank across other names, a directory, a directory of rank folders, a missing
           member, the spread, --jobs; offenders carry the diff's pattern and hint
  spread   diff of two rank archives (rank by rank, text and JSON, --max-growth per rank,
           a missing member), and the spread after stats and frag
"""
import argparse
import json
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET
import zipfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_diff  # noqa: E402
import truth_stats  # noqa: E402

T = clitest.Suite()
check, run, run_json = T.check, T.run, T.run_json


def frag_index(snap):
    """1 - largest free / total free over every segment (docs/json-frag.md)."""
    free = [b["size"] for s in snap["segments"] for b in s["blocks"] if b["state"] == "inactive"]
    return 1 - max(free) / sum(free) if free else 0.0


def truth(old_spec, new_spec):
    """The measures of every limit, from CPython."""
    old, new = truth_stats.load(old_spec), truth_stats.load(new_spec)
    t = truth_diff.compute(old, new, "site", 0, (), (), ())
    growth = t["new"]["allocated"] - t["old"]["allocated"]
    groups = t["groups"]   # (key, device): [old_bytes, old_blocks, new_bytes, new_blocks, ...]
    deltas = [v[2] - v[0] for v in groups.values()]
    return {
        "growth": growth,
        "pct": 100.0 * growth / t["old"]["allocated"],
        "group": max([d for d in deltas if d > 0] or [0]),
        "group_key": max(groups, key=lambda k: groups[k][2] - groups[k][0])[0],
        "new_site": max([v[2] for v in groups.values() if v[1] == 0] or [0]),
        "reserved": t["new"]["reserved"],
        "frag": frag_index(new),
    }


def limits_of(doc):
    return {x["name"]: x for x in doc["limits"]}


# ---------------------------------------------------------------------------------------------

def part_limits():
    old, new = os.path.join(R, "rank2_old.pickle"), os.path.join(R, "rank2_new.pickle")
    t = truth(old, new)
    exp = json.load(open(os.path.join(R, "expected.json")))
    check(t["growth"] == exp["growth"] and t["reserved"] == exp["new_reserved"],
          "fixture: the Python truth disagrees with the figures built into the fixture")
    steps = 100
    per_step = t["growth"] // steps
    cases = [  # (option, value that passes exactly, value that fails, measure)
        ("max-growth", str(t["growth"]), str(t["growth"] - 1), t["growth"]),
        ("max-group-growth", str(t["group"]), str(t["group"] - 1), t["group"]),
        ("max-per-step", str(per_step), str(per_step - 1), per_step),
        ("max-reserved", str(t["reserved"]), str(t["reserved"] - 1), t["reserved"]),
        ("fail-on-new-site", str(t["new_site"]), str(t["new_site"] - 1), t["new_site"]),
        ("max-growth-pct", "%.6f" % (t["pct"] + 1e-4), "%.6f" % (t["pct"] - 1e-4), t["pct"]),
        ("max-frag-index", "%.6f" % (t["frag"] + 1e-4), "%.6f" % (t["frag"] - 1e-4), t["frag"]),
    ]
    for name, ok, bad, measure in cases:
        extra = ["--steps", str(steps)] if name == "max-per-step" else []
        for value, rc in ((ok, 0), (bad, 1)):
            doc = run_json(["check", old, new, "--" + name, value] + extra, rc)
            if not doc:
                continue
            tag = "--%s %s" % (name, value)
            check(doc["schema"] == "snapdiff.check/1", tag + ": schema")
            check(doc["pass"] is (rc == 0), tag + ": pass")
            lim = limits_of(doc).get(name)
            check(lim is not None and lim["pass"] is (rc == 0), tag + ": the limit's verdict")
            if lim and isinstance(measure, int):
                check(lim["measured"] == measure and lim["limit"] == int(value),
                      tag + ": measured %s, truth %s" % (lim["measured"], measure))
            elif lim:
                check(abs(lim["measured"] - measure) < 1e-9, tag + ": measured %s, truth %s"
                      % (lim["measured"], measure))
            if rc == 1 and name in ("max-growth", "max-group-growth", "fail-on-new-site",
                                    "max-per-step", "max-reserved", "max-growth-pct"):
                keys = [o["key"] for o in doc["offenders"]]
                check(keys[:1] == [t["group_key"]], tag + ": offenders %s" % keys)
            txt = run(["check", old, new, "--" + name, value] + extra, rc).stdout
            line = [ln for ln in txt.splitlines() if re.match(r"^(PASS|FAIL)\s+%s\s" % name, ln)]
            check(len(line) == 1 and line[0].startswith("PASS" if rc == 0 else "FAIL"),
                  tag + ": verdict line in %r" % txt[:300])
            check(("check passed" if rc == 0 else "check FAILED") in txt, tag + ": last line")
    # All at once: exit 1, every row, and the failures only those that fail.
    args = ["check", old, new, "--max-growth", "1GiB", "--max-group-growth", "1MiB",
            "--max-reserved", "1GiB", "--max-frag-index", "1", "--max-growth-pct", "50",
            "--fail-on-new-site", "0", "--steps", "10", "--max-per-step", "1GiB"]
    doc = run_json(args, 1)
    if doc:
        got = {k: v["pass"] for k, v in limits_of(doc).items()}
        check(got == {"max-growth": True, "max-group-growth": False, "max-reserved": True,
                      "max-frag-index": True, "max-growth-pct": True, "fail-on-new-site": False,
                      "max-per-step": True}, "all limits: verdicts %s" % got)
        check([x["name"] for x in doc["limits"]] == ["max-growth", "max-growth-pct",
              "max-group-growth", "max-per-step", "max-reserved", "max-frag-index",
              "fail-on-new-site"], "all limits: table order")
    # Shrinking passes a zero growth limit; the same file passes everything.
    run(["check", new, old, "--max-growth", "0", "--max-group-growth", "0"], 0)
    run(["check", new, new, "--max-growth", "0", "--fail-on-new-site", "0"], 0)
    # An empty OLD: no percentage, the growth alone decides.
    empty = os.path.join(ROOT, "testdata", "leak", "empty.pickle")
    doc = run_json(["check", empty, new, "--max-growth-pct", "10"], 1)
    if doc:
        check(limits_of(doc)["max-growth-pct"]["measured"] is None, "empty OLD: measured null")
    run(["check", empty, empty, "--max-growth-pct", "10"], 0)


def part_errors():
    old, new = os.path.join(R, "rank2_old.pickle"), os.path.join(R, "rank2_new.pickle")
    p = run(["check", old, new], 2)
    check("no limits" in p.stderr and p.stdout == "", "no limits: message, nothing on stdout")
    p = run(["check", old, new, "--max-per-step", "1MiB"], 2)
    check("--steps" in p.stderr, "per step without steps: says --steps")
    for opt, bad in (("--max-growth", "lots"), ("--max-growth-pct", "-1"),
                     ("--max-frag-index", "1.5"), ("--fail-on-new-site", "x"),
                     ("--max-reserved", ""), ("--max-group-growth", "-5MiB")):
        p = run(["check", old, new, opt, bad], 2)
        check(opt in p.stderr and len(p.stderr.strip().splitlines()) <= 2,
              "%s %r: one message naming the option: %r" % (opt, bad, p.stderr))
    p = run(["check", old, "--max-growth", "1MiB"], 2)
    check("two inputs" in p.stderr, "one input: usage error")
    p = run(["check", old, os.path.join(R, "nope.pickle"), "--max-growth", "1MiB"], 2)
    check("nope.pickle" in p.stderr, "missing file: named")
    p = run(["check", old, os.path.join(R, "limits.conf"), "--max-growth", "1MiB"], 2)
    check("limits.conf" in p.stderr, "not a snapshot: named")
    p = run(["check", old, new, "--max-growth", "1MiB", "--format", "junit"], 2)
    check("--output" in p.stderr, "junit without --output")
    run(["check", old, new, "--max-growth", "1MiB", "--format", "folded"], 2)
    run(["stats", old, "--format", "github"], 2)
    run(["stats", old, "--max-growth-pct", "3"], 2)
    # diff --max-growth shares the gate and still works.
    run([old, new, "--max-growth", "6MiB"], 0)
    p = run([old, new, "--max-growth", "5MiB"], 1)
    check("check failed" in p.stderr, "diff --max-growth: message")
    run(["check", old, new, "--max-growth", "1MiB", "-q"], 1)


def part_config():
    old, new = os.path.join(R, "rank2_old.pickle"), os.path.join(R, "rank2_new.pickle")
    conf = os.path.join(R, "limits.conf")
    doc = run_json(["check", old, new, "--config", conf], 1)
    if doc:
        lim = limits_of(doc)
        check(sorted(lim) == ["max-frag-index", "max-growth", "max-reserved"], "config: keys")
        check(lim["max-growth"]["limit"] == 4 << 20 and not lim["max-growth"]["pass"],
              "config: max-growth = 4MiB fails")
        check(abs(lim["max-frag-index"]["limit"] - 0.9) < 1e-12, "config: index")
    # The command line wins.
    doc = run_json(["check", old, new, "--config", conf, "--max-growth", "1GiB"], 0)
    if doc:
        check(limits_of(doc)["max-growth"]["limit"] == 1 << 30, "config: command line wins")
    with tempfile.TemporaryDirectory() as tmp:
        def conf_with(text):
            path = os.path.join(tmp, "c.conf")
            with open(path, "w") as f:
                f.write(text)
            return path
        good = conf_with("# c\n\nsteps = 100\nmax-per-step=64KiB # 6 MiB / 100 = 62,914 B\n"
                         "max-growth-pct = 30\r\n")
        doc = run_json(["check", old, new, "--config", good], 0)
        if doc:
            check(limits_of(doc)["max-per-step"]["measured"] == (6 << 20) // 100,
                  "config: steps from the file")
        run(["check", old, new, "--config", good, "--steps", "10"], 1)   # 629,145 B a step
        for text, line, word in (("max-growth = 1MiB\nmax-grwoth = 2MiB\n", 2, "unknown limit"),
                                 ("\n\nmax-growth 1MiB\n", 3, "key = value"),
                                 ("max-growth = 1MiB\nmax-growth = 2MiB\n", 2, "twice"),
                                 ("max-frag-index = 2\n", 1, "from 0 to 1"),
                                 ("max-growth = 1MiB\nsteps = 0\n", 2, "steps"),
                                 ("max-growth = lots\n", 1, "size")):
            path = conf_with(text)
            p = run(["check", old, new, "--config", path], 2)
            check(("%s:%d:" % (path, line)) in p.stderr and word in p.stderr,
                  "config %r: message %r" % (text, p.stderr))
        p = run(["check", old, new, "--config", os.path.join(tmp, "absent.conf")], 2)
        check("absent.conf" in p.stderr, "config: missing file named")
        empty = conf_with("# nothing\n")
        p = run(["check", old, new, "--config", empty], 2)
        check("no limits" in p.stderr, "config with no limits: usage error")


GH = re.compile(r"^::(error|warning)( file=[^,:]+,line=\d+,| )title=[^:]*::.+$")


def part_github():
    old, new = os.path.join(R, "old.zip"), os.path.join(R, "new.zip")
    exp = json.load(open(os.path.join(R, "expected.json")))
    with tempfile.TemporaryDirectory() as repo:
        p = run(["check", old, new, "--max-growth", "4MiB", "--format", "github",
                 "--repo-root", repo], 1)
        lines = p.stdout.splitlines()
        check(lines and all(GH.match(ln) for ln in lines), "github: line format %r" % lines)
        check(not any("file=" in ln for ln in lines), "github: no file= for a file not in the repo")
        check(any("rank 2" in ln and "max-growth" in ln for ln in lines), "github: names rank 2")
        check(not any("rank 0" in ln for ln in lines), "github: passing ranks are quiet")
        open(os.path.join(repo, exp["leak_file"]), "w").close()
        p = run(["check", old, new, "--max-growth", "4MiB", "--format", "github",
                 "--repo-root", repo], 1)
        want = "file=%s,line=%d," % (exp["leak_file"], exp["leak_line"])
        check(any(want in ln for ln in p.stdout.splitlines()), "github: file= and line= %r"
              % p.stdout)
        # relative to the current directory by default
        p = run(["check", old, new, "--max-growth", "4MiB", "-f", "github"], 1, cwd=repo)
        check(want in p.stdout, "github: the current directory is the default root")
        # near a limit: a warning; all passing: exit 0, no error lines
        lo, ln_ = os.path.join(R, "rank2_old.pickle"), os.path.join(R, "rank2_new.pickle")
        p = run(["check", lo, ln_, "--max-growth", "6.5MiB", "-f", "github"], 0)
        check(p.stdout.startswith("::warning ") and "::error" not in p.stdout,
              "github: near the limit is a warning: %r" % p.stdout)


def part_junit():
    old, new = os.path.join(R, "old.zip"), os.path.join(R, "new.zip")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.xml")
        p = run(["check", old, new, "--max-growth", "4MiB", "--max-reserved", "1GiB",
                 "--format", "junit", "-o", out], 1)
        check(p.stdout == "", "junit: nothing on stdout")
        root = ET.parse(out).getroot()
        check(root.tag == "testsuites" and root.get("tests") == "8"
              and root.get("failures") == "1", "junit: totals %s" % root.attrib)
        suites = {s.get("name"): s for s in root.findall("testsuite")}
        check(sorted(suites) == ["snapdiff.check.rank%d" % r for r in range(4)],
              "junit: a suite per rank %s" % sorted(suites))
        for name, s in suites.items():
            cases = {c.get("name"): c for c in s.findall("testcase")}
            check(sorted(cases) == ["max-growth", "max-reserved"], name + ": a case per limit")
            failed = [n for n, c in cases.items() if c.find("failure") is not None]
            want = ["max-growth"] if name.endswith("rank2") else []
            check(failed == want, "%s: failures %s" % (name, failed))
            if failed:
                f = cases["max-growth"].find("failure")
                check("6.0 MiB" in f.get("message") and "metrics.py:23 update" in f.text,
                      "junit: failure message and site")
        # two files, all passing: one suite, exit 0
        lo, ln_ = os.path.join(R, "rank2_old.pickle"), os.path.join(R, "rank2_new.pickle")
        run(["check", lo, ln_, "--max-growth", "1GiB", "-f", "junit", "--output", out], 0)
        root = ET.parse(out).getroot()
        check(len(root.findall("testsuite")) == 1 and root.get("failures") == "0",
              "junit: one file pair")
        run(["check", lo, ln_, "--max-growth", "1GiB", "-f", "junit", "-o",
             os.path.join(tmp, "no", "such", "dir.xml")], 2)


def rank_folders(old, new, limit, leaky):
    """NEW unpacked as a CI artifact often is, one folder per rank (rank0/step200.pickle,
    ...): the same gate, the same rank named."""
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(new) as z:
            z.extractall(tmp)
        check(all(os.path.isdir(os.path.join(tmp, "rank%d" % r)) for r in range(4)),
              "rank folders: new.zip holds rank0/ ... rank3/")
        a = run_json(["check", old, new, "--max-growth", str(limit)], 1)
        b = run_json(["check", old, tmp, "--max-growth", str(limit)], 1)
        if a and b:
            check([(m["rank"], m["pass"], m["limits"]) for m in a["members"]] ==
                  [(m["rank"], m["pass"], m["limits"]) for m in b["members"]],
                  "rank folders: per-rank verdicts as with the archive")
        p = run(["check", old, tmp, "--max-growth", str(limit)], 1)
        check("rank %d" % leaky in p.stdout.strip().splitlines()[-1],
              "rank folders: the last line names rank %d" % leaky)


def offender_hints():
    """Offenders carry the diff's pattern and hint (text and JSON)."""
    pat = os.path.join(ROOT, "testdata", "patterns")
    old, new = os.path.join(pat, "optimizer_state_old.pickle"), os.path.join(pat, "optimizer_state_new.pickle")
    diff = json.loads(run(["diff", old, new, "--json"]).stdout)
    by_key = {(g["key"], g["device"]): g for g in diff["groups"]}
    doc = run_json(["check", old, new, "--max-growth", "0"], 1)
    text = run(["check", old, new, "--max-growth", "0", "--no-color"], 1).stdout
    if not doc:
        return
    check(len(doc["offenders"]) > 0, "hints: there are offenders")
    for o in doc["offenders"]:
        g = [v for (k, _), v in by_key.items() if k == o["key"]]
        check(g and o["pattern"] == g[0]["pattern"] and o["hint"] == g[0]["hint"],
              "hints: offender %s carries the diff's pattern %r" % (o["key"], g and g[0]["pattern"]))
        if o["pattern"]:
            check("[%s] %s" % (o["pattern"], o["hint"]) in text,
                  "hints: the text shows [%s] under %s" % (o["pattern"], o["key"]))


def part_ranks():
    offender_hints()
    old, new = os.path.join(R, "old.zip"), os.path.join(R, "new.zip")
    exp = json.load(open(os.path.join(R, "expected.json")))
    leaky = exp["leaky_rank"]
    # The truth of each rank, from the zip members with CPython.
    with zipfile.ZipFile(old) as z:
        old_names = sorted(z.namelist())
    with zipfile.ZipFile(new) as z:
        new_names = sorted(z.namelist())
    growth = {}
    for r in range(exp["ranks"]):
        o = [n for n in old_names if n.endswith("rank%d.pickle" % r)][0]
        n = [m for m in new_names if m.startswith("rank%d/" % r)][0]
        growth[r] = truth(old + ":" + o, new + ":" + n)
    check([r for r in growth if growth[r]["growth"] > 0] == [leaky], "truth: one rank leaks")
    limit = growth[leaky]["growth"] - 1
    rank_folders(old, new, limit, leaky)
    p = run(["check", old, new, "--max-growth", str(limit)], 1)
    last = p.stdout.strip().splitlines()[-1]
    # The site by its label: the key with the directory its user frames share dropped
    # (tests/cli/test_site_labels.py checks the label's rule against CPython).
    m = re.search(r" at (.+)\)$", last)
    key = growth[leaky]["group_key"]
    check("rank %d" % leaky in last and m is not None and key.endswith("/" + m.group(1))
          and "1 of 4 ranks" in last, "ranks: the last line names the rank and site: %r" % last)
    check("rank %d" % leaky in p.stderr or p.stderr == "", "ranks: stderr")
    doc = run_json(["check", old, new, "--max-growth", str(limit)], 1)
    if doc:
        check(doc["pass"] is False and [m["rank"] for m in doc["members"]] == [0, 1, 2, 3],
              "ranks: members by rank")
        for m in doc["members"]:
            r = m["rank"]
            check(m["pass"] is (r != leaky), "rank %d: pass %s" % (r, m["pass"]))
            check(m["old_member"] == "step100_rank%d.pickle" % r
                  and m["member"] == "rank%d/step200.pickle" % r, "rank %d: paired by rank" % r)
            check(limits_of(m)["max-growth"]["measured"] == growth[r]["growth"],
                  "rank %d: growth" % r)
        check(doc["failed_members"] == ["rank%d/step200.pickle" % leaky], "ranks: failed_members")
        check([o["key"] for o in doc["offenders"]] == [growth[leaky]["group_key"]]
              and doc["offenders"][0]["member"] == "rank%d/step200.pickle" % leaky,
              "ranks: offenders name the member and site")
        top = limits_of(doc)["max-growth"]
        check(top["pass"] is False and top["measured"] == growth[leaky]["growth"],
              "ranks: the top-level limit is the worst rank's")
        # spread of NEW, from CPython
        snaps = [truth_stats.load(new + ":" + n) for n in new_names]
        alloc = sorted(sum(b["size"] for s in x["segments"] for b in s["blocks"]
                           if b["state"] == "active_allocated") for x in snaps)
        res = sorted(sum(s["total_size"] for s in x["segments"]) for x in snaps)
        sp = doc.get("spread") or {}
        check((sp.get("allocated_min"), sp.get("allocated_median"), sp.get("allocated_max"))
              == (alloc[0], alloc[1], alloc[3]), "spread: allocated %s" % sp)
        check((sp.get("reserved_min"), sp.get("reserved_median"), sp.get("reserved_max"))
              == (res[0], res[1], res[3]), "spread: reserved %s" % sp)
        check(sp.get("furthest") == "rank %d" % leaky, "spread: furthest %s" % sp.get("furthest"))
    # the fixture's own figures agree with CPython's reading of the archive
    for r, n in enumerate(sorted(new_names)):
        snap = truth_stats.load(new + ":" + n)
        a = sum(b["size"] for s in snap["segments"] for b in s["blocks"]
                if b["state"] == "active_allocated")
        check(a == exp["allocated_new"][r], "fixture: rank %d allocated" % r)
    # A directory of ranks pairs with the archive; --jobs does not change the result.
    d = os.path.join(R, "new_dir")
    docs = [run_json(["check", old, d, "--max-growth", str(limit), "--jobs", j], 1)
            for j in ("1", "4")]
    if docs[0] and docs[1]:
        check(docs[0] == docs[1], "ranks: --jobs 1 and 4 agree")
        check([m["pass"] for m in docs[0]["members"]] == [r != leaky for r in range(4)],
              "ranks: directory paired by rank")
    run(["check", old, new, "--max-growth", str(limit + 1)], 0)
    # A missing member is reported and fails the check, never skipped.
    miss = os.path.join(R, "new_missing.zip")
    p = run(["check", old, miss, "--max-growth", "1GiB"], 1)
    check("rank %d" % leaky in p.stdout and "missing from NEW" in p.stdout,
          "missing: reported %r" % p.stdout[-300:])
    doc = run_json(["check", old, miss, "--max-growth", "1GiB"], 1)
    if doc:
        m = [x for x in doc["members"] if x["rank"] == leaky]
        check(len(m) == 1 and m[0]["missing"] == "new" and m[0]["pass"] is False,
              "missing: JSON member")
    p = run(["check", miss, old, "--max-growth", "1GiB"], 1)
    check("not in OLD" in p.stdout, "missing in OLD: reported")
    # One OLD file as the baseline of every rank.
    one = os.path.join(R, "rank2_old.pickle")
    doc = run_json(["check", one, new, "--max-growth", "1GiB"], 0)
    if doc:
        check(len(doc["members"]) == 4, "one baseline: every rank checked")
    # Several OLD members against one NEW snapshot: ambiguous, one error line.
    p = run(["check", old, one, "--max-growth", "1GiB"], 2)
    check("MEMBER" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          "many OLD, one NEW: %r" % p.stderr)
    # A member picked out of an archive is a single file.
    doc = run_json(["check", old + ":step100_rank2.pickle", new + ":rank2/step200.pickle",
                    "--max-growth", str(limit)], 1)
    if doc:
        check("members" not in doc, "one member each: no members list")


def part_spread():
    old, new = os.path.join(R, "old.zip"), os.path.join(R, "new.zip")
    exp = json.load(open(os.path.join(R, "expected.json")))
    leaky = exp["leaky_rank"]
    with zipfile.ZipFile(new) as z:
        new_names = sorted(z.namelist())
    with zipfile.ZipFile(old) as z:
        old_names = sorted(z.namelist())
    growth = [truth(old + ":" + o, new + ":" + n)["growth"] for o, n in zip(old_names, new_names)]
    p = run([old, new, "--no-color"], 0)
    for r in range(4):
        check(("=== rank %d (rank%d/step200.pickle)" % (r, r)) in p.stdout, "diff ranks: rank %d" % r)
    rows = re.findall(r"^\s+(\S+(?: \S+)?)\s+rank (\d)$", p.stdout, re.M)
    check(len(rows) == 4 and rows[leaky][0] == "+6.0 MiB" and rows[leaky][1] == str(leaky),
          "diff ranks: growth per rank %s" % rows)
    doc = run_json([old, new], 0)
    if doc:
        check(doc["schema"] == "snapdiff.diff-ranks/1" and len(doc["members"]) == 4,
              "diff ranks JSON: schema and members")
        got = [m["diff"]["totals"]["allocated_delta"] for m in doc["members"]]
        check(got == growth, "diff ranks JSON: growth %s, truth %s" % (got, growth))
        check(doc["members"][leaky]["diff"]["groups"][0]["key"] == exp["leak_site"],
              "diff ranks JSON: rank 2's top site")
    p = run([old, new, "--max-growth", "4MiB"], 1)
    check("rank %d" % leaky in p.stderr, "diff ranks --max-growth: names rank 2: %r" % p.stderr)
    run([old, new, "--max-growth", "6MiB"], 0)
    p = run([old, os.path.join(R, "new_missing.zip"), "--no-color"], 0)
    check("missing from NEW" in p.stdout and "rank %d" % leaky in p.stderr,
          "diff ranks: a missing member is reported")
    run([old, new, "--format", "folded"], 2)
    # stats and frag: the spread after the members, from CPython's figures.
    snaps = [truth_stats.load(new + ":" + n) for n in new_names]
    alloc = [sum(b["size"] for s in x["segments"] for b in s["blocks"]
                 if b["state"] == "active_allocated") for x in snaps]
    med = sorted(alloc)[1]
    far = max(range(4), key=lambda i: (abs(alloc[i] - med), -i))
    for cmd in ("stats", "frag"):
        for src in (new, os.path.join(R, "new_dir")):
            out = run([cmd, src, "--no-color"], 0).stdout
            check("Across 4 ranks" in out and ("furthest from the median: rank %d" % far) in out,
                  "%s %s: spread %r" % (cmd, src, out[-400:]))
            m = re.search(r"^  allocated\s+([\d.]+) MiB\s+([\d.]+) MiB\s+([\d.]+) MiB$", out, re.M)
            want = tuple("%.1f" % (v / 2**20) for v in (min(alloc), med, max(alloc)))
            check(m is not None and m.groups() == want, "%s: allocated spread %s, truth %s"
                  % (cmd, m and m.groups(), want))


def main():
    global ROOT, R
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("part", choices=["limits", "errors", "config", "github", "junit", "ranks",
                                     "spread"])
    a = ap.parse_args()
    T.bin, ROOT = os.path.abspath(a.bin), os.path.abspath(a.root)
    R = os.path.join(ROOT, "testdata", "ranks")
    globals()["part_" + a.part]()
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
