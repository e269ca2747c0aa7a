#!/usr/bin/env python3
"""`snapdiff OLD NEW`: one run twice, or two runs (docs/json-diff.md, "compared_as").

    test_compared_as.py --bin SNAPDIFF --root REPO

testdata/peak/ (testdata/make_peak_fixtures.py): fp32 -> bf16 and fp32 -> fp32_long are two
runs of one script, each trace a whole step, peaks moving by 10 and 36 MiB while allocated
at the end stays: both_cover_a_step, the "at the peak" table leads. testdata/example is one
job twice (a leak, no trace): one run, its report as before (`--at end` prints the same
bytes). `--at` forces either view; the JSON's last two keys say which and why.
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402

T = clitest.Suite(no_color=True)
check = T.check
ROOT = None
LINE = "compared as two runs, not one run twice"


def path(*p):
    return os.path.join(ROOT, "testdata", *p)


def order(out):
    """Where the peak table and the growth table start (-1: absent)."""
    peak = out.find("\nat the peak")
    growth = min([i for i in (out.find("\nGrowth by site"), out.find("\nNo growth"))
                  if i >= 0] or [-1])
    return peak, growth


def two_runs(old, new, why):
    name = "%s -> %s" % (os.path.basename(old), os.path.basename(new))
    out = T.run([old, new]).stdout
    peak, growth = order(out)
    check(peak >= 0 and growth > peak, name + ": the peak table leads", out[:2000])
    check(out.count(LINE) == 1, name + ": says once that it compares two runs")
    check("each trace covers a step" in out, name + ": says why")
    out = T.run([old, new, "--at", "end"]).stdout
    peak, growth = order(out)
    check(peak > growth >= 0, name + " --at end: the growth table leads")
    check(LINE not in out, name + " --at end: no two-runs line")
    doc = T.run_json([old, new])
    keys = list(doc)
    check(keys[-2:] == ["compared_as", "compared_as_why"], name + ": the last two keys", keys)
    check(keys[:-2] == ["schema", "group_by", "depth", "old", "new", "totals", "host", "warnings",
                        "devices", "groups", "steps", "per_step", "per_step_exact",
                        "steps_to_capacity", "peak"], name + ": the other keys keep their order")
    check(doc["compared_as"] == "two-runs" and doc["compared_as_why"] == why,
          name + ": compared_as", doc["compared_as"], doc["compared_as_why"])
    doc = T.run_json([old, new, "--at", "end"])
    check(doc["compared_as"] == "one-run" and doc["compared_as_why"] == [],
          name + " --at end: one-run, []")


def one_run():
    old, new = path("example", "old.pickle"), path("example", "new.pickle")
    plain = T.run([old, new]).stdout
    check(LINE not in plain, "example: one run")
    check(T.run([old, new, "--at", "end"]).stdout == plain, "example: --at end is the default")
    doc = T.run_json([old, new])
    check(doc["compared_as"] == "one-run" and doc["compared_as_why"] == [],
          "example: compared_as one-run", doc["compared_as"], doc["compared_as_why"])
    forced = T.run([old, new, "--at", "peak"]).stdout
    check(LINE + ": --at peak (no peaks to compare" in forced,
          "example --at peak: two runs, forced, and no peaks to lead with")
    check(forced.replace(forced[forced.find(LINE):forced.find("\n", forced.find(LINE)) + 1],
                         "") == plain, "example --at peak: otherwise the same bytes")
    doc = T.run_json([old, new, "--at", "peak"])
    check(doc["compared_as"] == "two-runs" and doc["compared_as_why"] == ["forced"],
          "example --at peak: JSON forced")
    p = T.run([old, new, "--at", "middle"], rc=2)
    check("end or peak" in p.stderr, "--at middle: a usage error naming the values", p.stderr)


def ranks_of_one_job():
    """Rank 0 against rank 1 of one job (testdata/ranks_devices/clock/, device 0 against
    device 1): rank 1 dumped its snapshot 1 ms before rank 0. Ranks run side by side, so
    that order says nothing: one statement, "ranks of one job", never "swapped" or "two
    runs ... NEW was recorded before OLD" (issue 28)."""
    old, new = path("ranks_devices", "clock", "rank0.pickle"), path("ranks_devices", "clock",
                                                                     "rank1.pickle")
    p = T.run([old, new])
    check("compared as ranks of one job" in p.stdout, "ranks: the header says ranks", p.stdout)
    check(LINE not in p.stdout and "recorded before" not in p.stdout,
          "ranks: not called two runs", p.stdout)
    check("swapped" not in p.stderr, "ranks: no swapped warning", p.stderr)
    doc = T.run_json([old, new])
    check(doc["compared_as"] == "one-run" and doc["compared_as_why"] == [],
          "ranks: JSON compared_as one-run", doc["compared_as"], doc["compared_as_why"])
    check(all(w["code"] != "swapped" for w in doc["warnings"]), "ranks: JSON warnings",
          doc["warnings"])


def keys_in(o, acc):
    if isinstance(o, dict):
        if isinstance(o.get("key"), str):
            acc.add(o["key"])
        for v in o.values():
            keys_in(v, acc)
    elif isinstance(o, list):
        for v in o:
            keys_in(v, acc)
    return acc


def trace_keys_are_diff_keys():
    """trace groups a backward stack (forward_frames) under the key the diff and top give
    it: testdata/native/forward.pickle's `model.py:41 forward [backward]`."""
    f = path("native", "forward.pickle")
    T.prefix = ["trace"]
    tr = keys_in(T.run_json([f]), set())
    T.prefix = ["top"]
    top = T.run_json([f])
    T.prefix = []
    tk = {g["key"] for dv in top["devices"]
          for g in dv["groups"] + ((dv["peak"] or {}).get("groups") or [])}
    check("/home/alice/proj/model.py:41 forward [backward]" in tr and tr <= tk,
          "trace's keys are top's keys", sorted(tr), sorted(tk))


def main():
    global ROOT
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    a = ap.parse_args()
    T.bin, ROOT = a.bin, a.root
    two_runs(path("peak", "fp32.pickle"), path("peak", "bf16.pickle"), ["both_cover_a_step"])
    two_runs(path("peak", "fp32.pickle"), path("peak", "fp32_long.pickle"), ["both_cover_a_step"])
    one_run()
    ranks_of_one_job()
    trace_keys_are_diff_keys()
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
