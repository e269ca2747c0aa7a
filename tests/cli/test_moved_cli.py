#!/usr/bin/env python3
"""Code that moved is not growth (issue 36): `snapdiff OLD NEW` pairs the sites whose lines
moved, against tests/truth/truth_moved.py on testdata/moved/ (make_moved_fixtures.py).

    test_moved_cli.py --bin SNAPDIFF --root SOURCE_DIR
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]
import clitest  # noqa: E402
import truth_moved  # noqa: E402

T = clitest.Suite(no_color=True)
check = T.check


def groups_of(doc):
    out = []
    for g in doc["groups"]:
        out.append({"key": g["key"], "device": g["device"], "old_bytes": g["old_bytes"],
                    "old_blocks": g["old_blocks"], "new_bytes": g["new_bytes"],
                    "new_blocks": g["new_blocks"], "old_req": g["old_requested_bytes"],
                    "new_req": g["new_requested_bytes"], "moved_from": g.get("moved_from")})
    return sorted(out, key=lambda r: (r["key"], r["device"]))


def pair(d, old, new, by="site"):
    o, n = os.path.join(d, old), os.path.join(d, new)
    want = truth_moved.compute(o, n, by)
    doc = T.run_json([o, n, "-g", by], default={"groups": [], "totals": {}})
    what = "%s -> %s -g %s" % (old, new, by)
    got = groups_of(doc)
    check(got == want["groups"], what + ": groups as the truth pairs them",
          "%s != %s" % (got, want["groups"]))
    t = doc.get("totals", {})
    check(t.get("moved_groups") == want["moved_groups"], what + ": moved_groups",
          "%s != %s" % (t.get("moved_groups"), want["moved_groups"]))
    check(t.get("live_identical") == want["live_identical"], what + ": live_identical",
          "%s != %s" % (t.get("live_identical"), want["live_identical"]))
    return doc, want


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    a = ap.parse_args()
    T.bin = a.bin
    d = os.path.join(a.root, "testdata", "moved")

    # Only lines moved: every site paired, nothing grew, the memory is identical.
    doc, want = pair(d, "lines_old.pickle", "lines_new.pickle")
    check(want["moved_groups"] == 4 and want["live_identical"], "truth: 4 moved, identical")
    check(all(g["delta_bytes"] == 0 for g in doc["groups"]), "no group has a delta")
    codes = [w["code"] for w in doc.get("warnings", [])]
    check("no_shared_site" not in codes and "few_shared_sites" not in codes,
          "moved sites count as shared", codes)
    check(doc.get("compared_as") == "one-run", "one run twice, not two runs",
          doc.get("compared_as"))
    out = T.run([os.path.join(d, "lines_old.pickle"), os.path.join(d, "lines_new.pickle")]).stdout
    check("live memory identical" in out, "text: live memory identical", out)
    check("No growth" in out and "Shrinking" not in out, "text: no growth, no shrinking", out)
    check("model.py:45 forward via" in out and "(moved 44 -> 45)" in out, "text: names a moved site", out)

    # Lines moved and one site really grew: its delta is the growth, the new site is new.
    doc, want = pair(d, "lines_old.pickle", "lines_grow.pickle")
    check(not want["live_identical"], "truth: grow is not identical")
    rows = {g["key"].rsplit("/", 1)[-1]: g for g in doc["groups"]}
    k = rows.get("model.py:48 forward", {})
    check(k.get("delta_bytes") == 512 << 20 and k.get("moved_from", {}).get("line") == 47,
          "model.py:48 grew by 512 MiB, moved from 47", k)
    out = T.run([os.path.join(d, "lines_old.pickle"), os.path.join(d, "lines_grow.pickle")]).stdout
    check("(moved 47 -> 48)" in out, "text: growth row says moved", out)
    check("live memory identical" not in out, "text: grow is not identical", out)
    check("-3.0 GiB" not in out and "Shrinking" not in out, "text: no false shrinkage", out)

    # The other line-holding keys, and the reverse direction.
    pair(d, "lines_old.pickle", "lines_grow.pickle", "stack")
    pair(d, "lines_old.pickle", "lines_grow.pickle", "leaf")
    pair(d, "lines_grow.pickle", "lines_old.pickle")
    # The same file twice: identical, nothing moved.
    doc, want = pair(d, "lines_old.pickle", "lines_old.pickle")
    check(want["live_identical"] and want["moved_groups"] == 0, "truth: same file identical")
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
