"""test_plan_cli.py - `snapdiff plan` against CPython and against real recordings.

    python3 test_plan_cli.py SNAPDIFF SOURCE_DIR fixtures
    python3 test_plan_cli.py SNAPDIFF SOURCE_DIR real      (exit 77: ../shared absent)

fixtures: testdata/plan/ (testdata/make_plan_fixtures.py): the predicted peak allocated and
  the fitted counts equal tests/truth/truth_plan.py's; from three recordings the prediction
  at 2048 is the recording at 2048 to the byte (its peak by tests/truth/truth_peak.py); a
  one-file plan with no change is the recording (truth_peak.py, truth_replay.py); --max
  gives a size that fits and one more that does not; bad input is one line and exit 2.
real: the sweep in ../shared/real-snapshots (NiuHuangxiaozi, forward, context 100/150/200):
  each plan from two contexts at the third equals the third recording's peak allocated
  (truth_peak.py) and recorded peak reserved (truth_replay.py), both directions.
"""
import json
import os
import pickle
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "truth"))
import truth_peak  # noqa: E402
import truth_plan  # noqa: E402
import truth_replay  # noqa: E402

BAD = []


def check(what, ok, detail=""):
    if not ok:
        BAD.append(what)
        print("FAIL %s %s" % (what, detail))


def run(binary, *args):
    return subprocess.run([binary, "plan"] + list(args), capture_output=True, text=True)


def plan_json(binary, *args):
    p = run(binary, "--json", *args)
    if p.returncode not in (0,):
        raise AssertionError("snapdiff plan %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    doc = json.loads(p.stdout)
    assert doc["schema"] == "snapdiff.plan/1", doc["schema"]
    return doc


def real_peak(path):
    with open(path, "rb") as f:
        snap = pickle.load(f)
    return truth_peak.compute(snap)["devices"][0]["peak_bytes"], truth_replay.recorded(snap)[0]["peak"]


def sweep_case(binary, at, recs, what):
    """recs: [(size, path)]: snapdiff equals truth_plan.py."""
    args = [p for _, p in recs] + ["--size", ",".join("%g" % x for x, _ in recs), "--at", "%g" % at]
    doc = plan_json(binary, *args)
    want = truth_plan.plan(at, recs)["devices"][0]
    got = doc["devices"][0]
    check(what + ": peak allocated", got["predicted"]["peak_allocated_bytes"] == want["peak_allocated_bytes"],
          "%r != truth %r" % (got["predicted"]["peak_allocated_bytes"], want["peak_allocated_bytes"]))
    check(what + ": fitted", got["fitted"] == want["fitted"], "%r != %r" % (got["fitted"], want["fitted"]))
    check(what + ": base", got["base"] == want["base"])
    return doc


def fixtures(binary, src):
    d = os.path.join(src, "testdata", "plan")
    f = {s: os.path.join(d, "seq%d.pickle" % s) for s in (256, 512, 1024, 2048)}
    three = [(256, f[256]), (512, f[512]), (1024, f[1024])]
    doc = sweep_case(binary, 2048, three, "3 recordings at 2048")
    peak2048, _ = real_peak(f[2048])
    got = doc["devices"][0]["predicted"]["peak_allocated_bytes"]
    check("3 recordings: the recording at 2048 to the byte", got == peak2048, "%r != %r" % (got, peak2048))
    check("3 recordings: the quadratic site is fitted as one", doc["devices"][0]["fitted"]["quadratic"] == 2)
    two = sweep_case(binary, 2048, [(512, f[512]), (1024, f[1024])], "2 recordings at 2048")
    check("2 recordings: the power law misses the quadratic site (below the real peak)",
          two["devices"][0]["predicted"]["peak_allocated_bytes"] < peak2048)
    check("2 recordings: the workspace of 1024 only is unaligned, kept",
          two["devices"][0]["fitted"]["unaligned"] == 1)
    sweep_case(binary, 384, [(256, f[256]), (512, f[512])], "interpolation at 384")
    # --check: the error against the real recording
    doc = plan_json(binary, f[256], f[512], f[1024], "--size", "256,512,1024", "--at", "2048",
                    "--check", f[2048])
    c = doc["devices"][0]["check"]
    check("--check: the real peak", c and c["peak_allocated_bytes"] == peak2048)
    check("--check: error 0", c and c["allocated_error_pct"] == 0.0)
    # one recording, no change: the recording to the byte
    for s in (256, 2048):
        doc = plan_json(binary, f[s])
        dv = doc["devices"][0]
        peak, reserved = real_peak(f[s])
        check("no change %d: peak allocated" % s, dv["predicted"]["peak_allocated_bytes"] == peak)
        check("no change %d: recorded" % s, dv["recorded"]["peak_allocated_bytes"] == peak and
              dv["recorded"]["peak_reserved_bytes"] == reserved)
        check("no change %d: peak reserved" % s, dv["predicted"]["peak_reserved_bytes"] == reserved,
              "%r != %r" % (dv["predicted"]["peak_reserved_bytes"], reserved))
    dv = plan_json(binary, f[1024], "--batch-scale", "2")["devices"][0]
    check("batch x2 raises the peak", dv["predicted"]["peak_allocated_bytes"] > dv["recorded"]["peak_allocated_bytes"])
    dv = plan_json(binary, f[1024], "--batch-scale", "0.5")["devices"][0]
    check("batch x0.5 lowers the peak", dv["predicted"]["peak_allocated_bytes"] < dv["recorded"]["peak_allocated_bytes"])
    # --max: the answer fits, one more does not
    cap = str(64 << 20)
    doc = plan_json(binary, f[256], f[512], f[1024], "--size", "256,512,1024", "--max", "--capacity", cap)
    m = doc["devices"][0]["max_size"]
    check("--max: a size", isinstance(m, (int, float)) and m > 0, repr(m))
    if m:
        at = plan_json(binary, f[256], f[512], f[1024], "--size", "256,512,1024", "--at", "%d" % m,
                       "--capacity", cap)["devices"][0]
        above = plan_json(binary, f[256], f[512], f[1024], "--size", "256,512,1024", "--at",
                          "%d" % (m + 1), "--capacity", cap)["devices"][0]
        check("--max: fits at the answer", at["fits"] is True)
        check("--max: does not fit one above", above["fits"] is False)
    # text: the answer first
    p = run(binary, f[256], f[512], "--size", "256,512", "--at", "1024", "--capacity", "1GiB")
    first = p.stdout.splitlines()[0] if p.stdout else ""
    check("text: the answer first", p.returncode == 0 and first.startswith("device 0 at 1024: peak ")
          and "fits 1.0 GiB with" in first, first)
    # bad input: one line on stderr, exit 2
    for args, why in [((f[256], f[512], "--size", "256", "--at", "1024"), "sizes"),
                      ((f[256], f[512], "--size", "256,256", "--at", "1024"), "same"),
                      ((f[256], f[512], "--size", "256,512", "--at", "-5"), "positive"),
                      ((f[256], f[512], "--size", "256,512", "--max"), "capacity"),
                      ((f[256], os.path.join(src, "testdata", "peak", "fp32.pickle"), "--size", "256,512",
                        "--at", "1024"), "align"),
                      ((f[256], "--size", "256"), "at")]:
        p = run(binary, *args)
        # a usage error may add the hint "Try 'snapdiff --help'", as every command's does
        lines = [l for l in p.stderr.splitlines() if l.strip() and not l.startswith("Try ")]
        check("bad input (%s): exit 2" % why, p.returncode == 2, "exit %d %r" % (p.returncode, p.stderr))
        check("bad input (%s): one line" % why, len(lines) == 1 and not p.stdout, repr(p.stderr))


def real(binary, src):
    shared = os.environ.get("SNAPDIFF_SHARED") or os.path.join(src, "..", "shared")
    d = os.path.join(shared, "real-snapshots")
    stem = "NiuHuangxiaozi_assignment2-systems__fwd_ctx%d_fp32.pickle"
    files = {c: os.path.join(d, stem % c) for c in (100, 150, 200)}
    if not all(os.path.exists(p) for p in files.values()):
        print("SKIP: the real sweep is not in %s" % d)
        return 77
    # Extrapolation up and down is exact on this sweep; between 100 and 200 the power law
    # of a few small allocations lands within the allocator's rounding (1,280 bytes of
    # 598 MiB when this was written): within 0.01%.
    for at, pair, exact in [(200, (100, 150), True), (100, (150, 200), True), (150, (100, 200), False)]:
        recs = [(c, files[c]) for c in pair]
        doc = sweep_case(binary, at, recs, "real sweep at %d" % at)
        dv = doc["devices"][0]
        peak, reserved = real_peak(files[at])
        for what, got, want in [("allocated", dv["predicted"]["peak_allocated_bytes"], peak),
                                ("reserved", dv["predicted"]["peak_reserved_bytes"], reserved)]:
            ok = got == want if exact else abs(got - want) <= 1e-4 * want
            check("real sweep at %d: the recording's peak %s" % (at, what), ok, "%r != %r" % (got, want))
    return 0


def main():
    binary, src, what = sys.argv[1], sys.argv[2], sys.argv[3]
    rc = fixtures(binary, src) if what == "fixtures" else real(binary, src)
    if rc == 77:
        return 77
    total = "plan %s" % what
    if BAD:
        print("%s: %d failed" % (total, len(BAD)))
        return 1
    print("%s: all passed" % total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
