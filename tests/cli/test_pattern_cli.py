#!/usr/bin/env python3
"""The pattern and hint of each growing group, text and JSON (issue 9).

    test_pattern_cli.py --bin SNAPDIFF --root REPO PAIR

PAIR names testdata/patterns/PAIR_old.pickle and PAIR_new.pickle, written by
testdata/make_pattern_fixtures.py, which also wrote expected.json: per pair each growing
group's delta (worked out from the data) and the pattern code it was built to show, and
the diff-level pattern. The test finds each growing group by its delta (not its key, so
that naming rules may change) and checks:
  JSON  every group has `pattern` and `hint`; a growing group's pattern is the expected
        code (or null), with a hint exactly when there is a code; groups that did not grow
        have none; totals.pattern/hint are the diff-level finding; the growing deltas
        agree with tests/truth/truth_diff.py (CPython's own reading of the pickles).
  text  under each growing group with a pattern, one line "[code] hint" (the JSON's hint)
        starting at the label column; none under the others; the diff-level finding as
        "[code] reserved ..., allocated ...: hint".
"""
import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_diff  # noqa: E402

T = clitest.Suite(no_color=True)
check, run = T.check, T.run


def truth_growing(old, new):
    """Growing group deltas per CPython (site keys), largest first."""
    t = truth_diff.compute(truth_diff.load(old), truth_diff.load(new))
    deltas = [g[2] - g[0] for g in t["groups"].values() if g[2] > g[0]]
    return sorted(deltas, reverse=True)


def check_json(pair, exp, doc, old, new):
    check(doc["schema"] == "snapdiff.diff/1", pair + ": schema")
    groups = doc["groups"]
    for g in groups:
        check("pattern" in g and "hint" in g, pair + ": group without pattern/hint: " + g["key"])
    growing = [g for g in groups if g["delta_bytes"] > 0]
    for g in groups:
        if g["delta_bytes"] <= 0:
            check(g.get("pattern") is None and g.get("hint") is None,
                  pair + ": a group that did not grow has a pattern: " + g["key"])
    want = exp["growing"]
    check(len(growing) == len(want), "%s: %d growing groups, wanted %d"
          % (pair, len(growing), len(want)))
    for w in want:
        hits = [g for g in growing if g["delta_bytes"] == w["delta_bytes"]]
        check(len(hits) == 1, "%s: no single growing group of %d bytes"
              % (pair, w["delta_bytes"]))
        for g in hits:
            check(g["pattern"] == w["pattern"], "%s: group %s: pattern %r, wanted %r"
                  % (pair, g["key"], g["pattern"], w["pattern"]))
            if w["pattern"] is None:
                check(g["hint"] is None, pair + ": a hint without a pattern")
            else:
                check(isinstance(g["hint"], str) and len(g["hint"]) > 20,
                      pair + ": no hint for " + w["pattern"])
    tot = doc["totals"]
    check(tot.get("pattern") == exp["pattern"], "%s: totals.pattern %r, wanted %r"
          % (pair, tot.get("pattern"), exp["pattern"]))
    check((tot.get("hint") is None) == (exp["pattern"] is None), pair + ": totals.hint")
    check(tot["allocated_delta"] == exp["allocated_delta"], pair + ": allocated delta")
    check(tot["reserved_delta"] == exp["reserved_delta"], pair + ": reserved delta")
    # The deltas the groups are found by are CPython's too.
    check(truth_growing(old, new) == sorted((w["delta_bytes"] for w in want), reverse=True),
          pair + ": the growing deltas differ from tests/truth/truth_diff.py")


HINT_LINE = re.compile(r"^( +)\[([a-z-]+)\] (.*)$")


def check_text(pair, doc, text):
    lines = text.split("\n")
    growing = [g for g in doc["groups"] if g["delta_bytes"] > 0]
    label_col = None
    for ln in lines:
        m = re.match(r"^ +delta +new +blocks +(site)$", ln)
        if m:
            label_col = m.start(1)
            break
    seen = []
    for i, ln in enumerate(lines):
        m = HINT_LINE.match(ln)
        if not m:
            continue
        seen.append((m.group(2), m.group(3)))
        check(label_col is not None and len(m.group(1)) == label_col,
              "%s: hint line not aligned with the label column: %r" % (pair, ln))
        check(i > 0 and re.match(r"^ +\+", lines[i - 1]) is not None,
              "%s: hint not under a growing row: %r" % (pair, lines[i - 1]))
    want = [(g["pattern"], g["hint"]) for g in growing if g["pattern"]]
    check(seen == want, "%s: text hints %r, wanted %r" % (pair, seen, want))
    code = doc["totals"]["pattern"]
    finding = [ln for ln in lines if code and ln.startswith("[%s] reserved " % code)]
    if code:
        check(len(finding) == 1 and finding[0].endswith(": " + doc["totals"]["hint"]),
              "%s: no diff-level line for %s" % (pair, code))
    else:
        check(not any(re.match(r"^\[[a-z-]+\] ", ln) for ln in lines),
              pair + ": a diff-level finding without one")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("pair")
    a = ap.parse_args()
    T.bin = a.bin
    d = os.path.join(a.root, "testdata", "patterns")
    with open(os.path.join(d, "expected.json")) as f:
        exp = json.load(f)[a.pair]
    old = os.path.join(d, a.pair + "_old.pickle")
    new = os.path.join(d, a.pair + "_new.pickle")
    doc = json.loads(run([old, new, "--json"]).stdout)
    check_json(a.pair, exp, doc, old, new)
    check_text(a.pair, doc, run([old, new]).stdout)
    return T.finish(a.pair)


if __name__ == "__main__":
    sys.exit(main())
