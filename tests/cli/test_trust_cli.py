#!/usr/bin/env python3
"""The replay says why its fidelity is low (issue 36): `snapdiff replay` trust_reasons on
testdata/trust/ (make_trust_fixtures.py) and every real snapshot, against
tests/truth/truth_trust.py.

    test_trust_cli.py --bin SNAPDIFF --root SOURCE_DIR [fixtures|real]
"""
import argparse
import glob
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]
import clitest  # noqa: E402
import truth_trust  # noqa: E402

T = clitest.Suite(no_color=True)
check = T.check

EXPECTED = {"cold": [], "warm": ["placements-only"], "idle": ["nothing-checked"],
            "patched": ["non-upstream-keys"], "npu": ["npu-streams"]}


def one(path, expect=None):
    doc = T.run_json(["replay", path], default=None)
    if not doc:
        return None
    want = truth_trust.compute(path, doc)
    name = os.path.basename(path)
    for d in doc["devices"]:
        rs = d["fidelity"]["trust_reasons"]
        got = [r["code"] for r in rs]
        w = want[d["device"]]
        check(got == w["codes"], "%s device %d: trust_reasons" % (name, d["device"]),
              "%s != %s" % (got, w["codes"]))
        check(all(r["message"] for r in rs), name + ": every reason has its message")
        keys = [r.get("keys") for r in rs if r["code"] == "non-upstream-keys"]
        if keys:
            check(sorted(keys[0]) == w["keys"], name + ": the non-upstream keys",
                  "%s != %s" % (keys[0], w["keys"]))
        if expect is not None:
            check(w["codes"] == expect, name + ": truth gives the fixture's reason",
                  "%s != %s" % (w["codes"], expect))
    return doc


def fixtures(root):
    d = os.path.join(root, "testdata", "trust")
    for name, codes in EXPECTED.items():
        one(os.path.join(d, name + ".pickle"), codes)
    out = T.run(["replay", os.path.join(d, "warm.pickle")]).stdout
    check("trusted on placements only: 3 of 3 matched" in out, "warm: text", out)
    check("\ntrusted: " not in out, "warm: not plainly trusted", out)
    out = T.run(["replay", os.path.join(d, "idle.pickle")]).stdout
    check("trusted on the peak reserved only" in out, "idle: text", out)
    out = T.run(["replay", os.path.join(d, "patched.pickle")]).stdout
    check("fidelity may be low: the snapshot has keys upstream torch never writes" in out
          and "segment.owner" in out and "block.tensor_name" in out, "patched: text", out)
    out = T.run(["replay", os.path.join(d, "npu.pickle")]).stdout
    check("fidelity may be low: no segment or trace entry is on stream 0" in out,
          "npu: text", out)
    out = T.run(["replay", os.path.join(d, "cold.pickle")]).stdout
    check("fidelity may be low" not in out and "\ntrusted: " in out, "cold: no reason", out)


def real(root):
    snaps = clitest.real_snapshots(root)
    for p in sorted(glob.glob(os.path.join(snaps, "*.pickle"))):
        doc = T.run_json(["replay", p], rc=None, default=None)
        if doc and doc.get("devices"):
            one(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("part", nargs="?", default="fixtures")
    a = ap.parse_args()
    T.bin = a.bin
    (fixtures if a.part == "fixtures" else real)(a.root)
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
