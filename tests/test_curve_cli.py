#!/usr/bin/env python3
"""Behaviour tests of `snapdiff curve` (issue 21) against the truth the fixtures were made
with (testdata/curve/make_curve.py writes testdata/curve/truth.json).

    test_curve_cli.py --bin SNAPDIFF --root REPO PART

PART is one of:
  fixtures  each format: verdicts, slopes within 10% of the truth, steps left, the rank
            outlier, the nvidia-smi GPU, broken lines counted, no figure -> exit 2
  gate      --max-per-step, --max-growth-pct, --max-fraction/--horizon, --config files
            (and check --config accepting curve keys), --format github; exit codes
  hostile   huge numbers, overflowing units, binary garbage, a 10 MB line without a
            newline, gzip, stdin, a file that does not open: exit 2 or a count, no crash
"""
import argparse
import gzip
import json
import os
import random
import sys
import tempfile

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402

T = clitest.Suite(prefix=["curve"], no_color=True)
check, run = T.check, T.run
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
ROOT = FIX = TRUTH = None


def fx(name):
    return os.path.join(FIX, name)


def curve(args, rc=0):
    return T.run_json(args, rc=rc, default={"series": [], "ranks": {"outliers": []},
                                            "warnings": [], "files": [], "gate": None})


def slope_of(s):
    e = s["lower_edge"] or {}
    return e.get("slope_bytes_per_step", e.get("slope_bytes_per_second"))


def within(got, want, rel, tag):
    ok = got is not None and abs(got - want) <= rel * abs(want)
    check(ok, "%s: %s, want %s within %d%%" % (tag, got, want, round(rel * 100)))
    if got is not None:
        print("%s: measured %.1f, truth %.1f (%+.2f%%)" % (tag, got, want,
              100 * (got - want) / want if want else 0))


def fixtures():
    d = curve([fx("leak_sawtooth.log"), "--capacity", "80GiB"])
    s = d["series"][0]
    check(d["schema"] == "snapdiff.curve/1", "schema")
    check(s["verdict"] == "growing", "leak under a 2 GiB swing is growing: %s" % s["verdict"])
    within(slope_of(s), TRUTH["leak_sawtooth.log"]["slope"], 0.10, "leak slope")
    check(s["x"] == "step" and s["samples"] == 1000, "leak: x step, 1000 samples")
    check(s["baseline"]["x"] == 200, "leak: baseline at step 200: %s" % s["baseline"])
    lo, hi = s["lower_edge"]["low"], s["lower_edge"]["high"]
    check(lo <= slope_of(s) <= hi and lo > 0, "leak: interval around the slope, above 0")
    cap, peak = 80 * GiB, TRUTH["leak_sawtooth.log"]["peak_last"]
    truth_slope = TRUTH["leak_sawtooth.log"]["slope"]
    within(s["steps_to_capacity"], (cap - peak) / truth_slope, 0.10, "leak steps to capacity")
    within(s["steps_to_threshold"], (0.85 * cap - peak) / truth_slope, 0.10,
           "leak steps to 85%")
    check(s["threshold_fraction"] == 0.85, "threshold default 0.85")
    d = curve([fx("leak_sawtooth.log"), "--capacity", "80GiB", "--threshold", "0.5"])
    within(d["series"][0]["steps_to_threshold"], (0.5 * cap - peak) / truth_slope, 0.10,
           "leak steps to 50%")

    d = curve([fx("sawtooth_flat.jsonl")])
    s = d["series"][0]
    check(s["verdict"] == "flat", "clean 4 GiB sawtooth: flat, got %s" % s["verdict"])
    check(abs(slope_of(s)) < 1 * KiB, "clean sawtooth slope ~0: %s" % slope_of(s))
    check(s["num_alloc_retries"] == {"first": 0, "last": 9}, "retries first/last: %s"
          % s["num_alloc_retries"])
    check(s["gap"] is not None, "reserved beside allocated: a gap")

    d = curve([fx("warmup_flat.csv")])
    s = d["series"][0]
    check(s["verdict"] == "flat", "warm-up then flat: flat, got %s" % s["verdict"])
    check(abs(s["growth_pct_vs_baseline"]) < 1, "warm-up not counted as growth")
    d = curve([fx("warmup_flat.csv"), "--baseline-step", "0"])
    check(d["series"][0]["verdict"] != "flat", "baseline at 0 counts the warm-up: %s"
          % d["series"][0]["verdict"])

    d = curve([fx("ranks8.jsonl")])
    by = {s["rank"]: s for s in d["series"]}
    check(sorted(by) == list(range(8)), "eight ranks: %s" % sorted(by))
    check(by.get(5, {}).get("verdict") == "growing", "rank 5 growing")
    within(slope_of(by.get(5, {"lower_edge": None})), TRUTH["ranks8.jsonl"]["slope"], 0.10,
           "rank 5 slope")
    check(all(by[r]["verdict"] == "flat" for r in by if r != 5), "the other ranks flat")
    outl = d["ranks"]["outliers"]
    check([o["rank"] for o in outl] == [5], "one outlier, rank 5: %s" % outl)
    check(outl and "grows +2.0 MiB/step" in outl[0]["why"], "outlier why: %s" % outl)
    # identical ranks: one file per rank, the same content -> no outlier
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for r in range(4):
            p = os.path.join(tmp, "rank%d.log" % r)
            with open(fx("leak_sawtooth.log")) as src, open(p, "w") as dst:
                dst.write(src.read())
            paths.append(p)
        d = curve(paths)
        check([s["rank"] for s in d["series"]] == [0, 1, 2, 3], "ranks from file names")
        check(d["ranks"]["outliers"] == [], "identical ranks have no outlier")

    d = curve([fx("nvsmi.csv")])
    by = {s["gpu"]: s for s in d["series"]}
    check(sorted(by) == [0, 1], "nvidia-smi: GPUs 0 and 1")
    check(all(s["x"] == "second" and s["measure"] == "device_used" for s in d["series"]),
          "nvidia-smi: per second, device_used (memory.used)")
    check(by[1]["verdict"] == "growing" and by[0]["verdict"] == "flat",
          "GPU 1 growing, GPU 0 flat")
    within(slope_of(by[1]), TRUTH["nvsmi.csv"]["slope"], 0.10, "GPU 1 slope per second")
    t = TRUTH["nvsmi.csv"]
    check(by[1]["capacity_bytes"] == t["capacity"], "capacity from memory.total")
    within(by[1]["steps_to_capacity"], (t["capacity"] - t["peak_last"]) / t["slope"], 0.10,
           "GPU 1 seconds to capacity")

    p = run([fx("broken_lines.log"), "--json"])
    d = json.loads(p.stdout)
    bt = TRUTH["broken_lines.log"]
    check(d["files"][0]["bad_lines"] == bt["bad_lines"], "broken lines counted: %s"
          % d["files"][0])
    check(d["files"][0]["first_bad_line"] == bt["first_bad_line"], "first bad line")
    warn = [l for l in p.stderr.splitlines() if "warning" in l]
    check(len(warn) == 1 and "line 11" in warn[0] and "3 lines" in warn[0],
          "one warning line: %s" % p.stderr)
    within(slope_of(d["series"][0]), bt["slope"], 0.10, "broken-lines log slope")

    p = run([fx("no_memory.log")], rc=2)
    check("no_memory.log" in p.stderr and "looked for" in p.stderr and
          len(p.stderr.strip().splitlines()) == 1, "no figure: one line naming file and keys: %s"
          % p.stderr)

    p = run([fx("leak_sawtooth.log"), "--capacity", "80GiB"])
    for word in ("growing", "baseline", "slope", "+100.0 KiB/step", "capacity", "steps"):
        check(word in p.stdout, "text shows %r" % word)
    p = run([fx("ranks8.jsonl")])
    check("OUTLIER" in p.stdout and "rank 5" in p.stdout, "ranks as a table")


def gate():
    run([fx("leak_sawtooth.log"), "--max-per-step", "64KiB"], rc=1)
    run([fx("leak_sawtooth.log"), "--max-per-step", "128KiB"], rc=0)
    run([fx("sawtooth_flat.jsonl"), "--max-per-step", "64KiB"], rc=0)
    run([fx("ranks8.jsonl"), "--max-per-step", "1MiB"], rc=1)
    run([fx("ranks8.jsonl"), "--max-growth-pct", "5"], rc=1)
    run([fx("ranks8.jsonl"), "--max-growth-pct", "10"], rc=0)
    run([fx("leak_sawtooth.log"), "--capacity", "24GiB", "--max-fraction", "0.95"], rc=0)
    run([fx("leak_sawtooth.log"), "--capacity", "24GiB", "--max-fraction", "0.95",
         "--horizon", "100000"], rc=1)
    run([fx("leak_sawtooth.log"), "--capacity", "24GiB", "--max-fraction", "0.9"], rc=1)
    d = curve([fx("leak_sawtooth.log"), "--max-per-step", "64KiB"], rc=1)
    check(d["gate"] and d["gate"]["pass"] is False and d["gate"]["limits"][0]["name"]
          == "max-per-step", "gate in JSON: %s" % d.get("gate"))
    p = run([fx("leak_sawtooth.log"), "--max-per-step", "64KiB", "--format", "github"], rc=1)
    check(p.stdout.startswith("::error title=snapdiff curve::--max-per-step"),
          "github annotation: %s" % p.stdout[:200])
    with tempfile.TemporaryDirectory() as tmp:
        conf = os.path.join(tmp, "limits.conf")
        with open(conf, "w") as f:
            f.write("# both commands read this\nmax-growth = 1GiB\nmax-per-step = 64KiB\n"
                    "max-fraction = 0.95\nhorizon = 100000\nsteps = 100\n")
        run([fx("leak_sawtooth.log"), "--config", conf], rc=1)
        run([fx("leak_sawtooth.log"), "--config", conf, "--max-per-step", "1MiB"], rc=0)
        run([fx("leak_sawtooth.log"), "--config", conf, "--max-per-step", "1MiB",
             "--capacity", "24GiB"], rc=1)
        ex = os.path.join(ROOT, "testdata", "example")
        c = clitest.Suite(bin=T.bin, no_color=True, rc=None)
        r = c.run(["check", os.path.join(ex, "old.pickle"), os.path.join(ex, "new.pickle"),
                   "--config", conf])
        check(r.returncode in (0, 1) and "unknown limit" not in r.stderr,
              "check --config reads a file with curve keys: %d %s" % (r.returncode, r.stderr))
        with open(conf, "w") as f:
            f.write("max-per-step = lots\n")
        p = run([fx("leak_sawtooth.log"), "--config", conf], rc=2)
        check("limits.conf:1" in p.stderr, "bad config line named: %s" % p.stderr)
    run([fx("leak_sawtooth.log"), "--threshold", "1.5"], rc=2)
    run([fx("leak_sawtooth.log"), "--format", "junit"], rc=2)
    run([fx("leak_sawtooth.log"), "--log-format", "csv"], rc=2)
    run([fx("leak_sawtooth.log"), "--log-format", "text"], rc=0)


def hostile():
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, data):
            p = os.path.join(tmp, name)
            with open(p, "wb") as f:
                f.write(data)
            return p
        good = b"".join(b"step=%d alloc=%dB\n" % (s, 8 * GiB + 4096 * s) for s in range(300))
        p = run([write("huge.log", good + b"step=301 alloc=1e308B\nstep=302 alloc="
                       + b"9" * 5000 + b"\nstep=303 alloc=17179869184TiB\n")], rc=0)
        check("3 lines could not be read" in p.stderr, "huge numbers counted: %s" % p.stderr)
        rng = random.Random(7)
        garbage = bytes(rng.randrange(256) for _ in range(200000))
        run([write("garbage.bin", garbage)], rc=2)
        p = run([write("garbage_mixed.log", good + garbage + b"\n" + good)], rc=0)
        run([write("longline.log", b"step=1 alloc=" + b"7" * (10 << 20))], rc=2)
        p = run([write("longline2.log", good + b"x" * (10 << 20) + b"\n" + good)], rc=0)
        check("longer than 64 KiB" in p.stderr, "long line counted: %s" % p.stderr)
        run([write("empty.log", b"")], rc=2)
        run([write("deep.jsonl", b"[" * 100000 + b"\n" + b'{"step":1}' * 3)], rc=2)
        p = run([write("nested.jsonl", b"".join(
            b'{"step":%d,"x":{"y":[1,2,{"z":"%s"}]},"memory_allocated":%d}\n'
            % (s, b"a\\\"b", GiB + s * 4096) for s in range(300)))], rc=0)
        gz = write("leak.log.gz", gzip.compress(open(fx("leak_sawtooth.log"), "rb").read()))
        d = curve([gz])
        check(d["series"] and d["series"][0]["verdict"] == "growing", "gzip read")
        run([write("bad.gz", gzip.compress(good)[:-40])], rc=2)
        p = run(["-", "--json"], stdin=open(fx("leak_sawtooth.log")).read())
        check(json.loads(p.stdout)["series"][0]["verdict"] == "growing", "stdin read")
        run([os.path.join(tmp, "absent.log")], rc=2)
        # seeded mutations of every fixture: flipped, cut, repeated and inserted bytes
        rng = random.Random(21)
        srcs = sorted(f for f in os.listdir(FIX) if not f.endswith((".py", ".json")))
        for k in range(int(os.environ.get("CURVE_MUTATIONS", "60"))):
            data = bytearray(open(fx(srcs[k % len(srcs)]), "rb").read())
            for _ in range(rng.randint(1, 40)):
                op, at = rng.randrange(4), rng.randrange(len(data))
                if op == 0:
                    data[at] = rng.randrange(256)
                elif op == 1:
                    del data[at:at + rng.randint(1, 300)]
                elif op == 2:
                    data[at:at] = data[at:at + rng.randint(1, 300)] * rng.randint(1, 20)
                else:
                    data[at:at] = rng.choice([b"e999", b"\x00", b"{", b"\"", b"\n,,,\n",
                                              b"99999999999999999999", b"GiB", b"[" * 64])
            p = run([write("mut%d" % k, bytes(data))], rc=None)
            check(p.returncode in (0, 1, 2) and "Sanitizer" not in p.stderr and
                  "runtime error" not in p.stderr,
                  "mutation %d of %s: exit %d %s" % (k, srcs[k % len(srcs)], p.returncode,
                                                      p.stderr[-300:]))
        # many samples: merged, memory bounded, the slope still right
        big = write("big.log", b"".join(b"step=%d alloc=%dB\n" % (s, 4 * GiB + 1000 * s +
                                        (s % 50) * MiB) for s in range(100000)))
        d = curve([big])
        s = d["series"][0]
        check(s["merged"] > 1 and any("merged" in w for w in d["warnings"]),
              "100,000 samples merged, and said: %s" % d["warnings"])
        within(slope_of(s), 1000, 0.10, "merged series slope")


def main():
    global ROOT, FIX, TRUTH
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("part", choices=["fixtures", "gate", "hostile"])
    a = ap.parse_args()
    T.bin, ROOT = a.bin, a.root
    FIX = os.path.join(ROOT, "testdata", "curve")
    with open(os.path.join(FIX, "truth.json")) as f:
        TRUTH = json.load(f)
    {"fixtures": fixtures, "gate": gate, "hostile": hostile}[a.part]()
    sys.exit(T.finish(a.part))


if __name__ == "__main__":
    main()
