#!/usr/bin/env python3
"""Behaviour tests of `snapdiff curve` (issue 21) against the truth the fixtures were made
with (testdata/curve/make_curve.py writes testdata/curve/truth.json).

    test_curve_cli.py --bin SNAPDIFF --root REPO PART

PART is one of:
  fixtures  each format: verdicts, slopes within 10% of the truth, steps left, the rank
            outlier, the nvidia-smi GPU, broken lines counted, no figure -> exit 2
  gate      --max-per-step, --max-growth-pct, --max-fraction/--horizon, --config files
            (and check --config accepting curve keys), --format github; exit codes
  frameworks  the logs of torchtitan, Megatron-LM, DeepSpeed, mmengine, Swin and nvidia-smi
            (testdata/curve/make_frameworks.py, written from their logging code): per-rank
            series, runs, measures, slopes and OOM figures against its truth; the issue's
            pasted lines; ANSI, NUL, CRLF, cut lines; --capacity GPU names; --format-list
  csv       quoted CSV fields with newlines, commas and quotes: one record each, as
            Python's csv module reads them; an unclosed quote is one bad record
  hostile   huge numbers, overflowing units, binary garbage, a 10 MB line without a
            newline, gzip, stdin, a file that does not open: exit 2 or a count, no crash
  config    a --config file's syntax errors (no '=', a line over 1023 bytes, a NUL byte)
            read alike through check and curve: exit 2, the same line, PATH:LINE from a
            Python reading of the syntax
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
    check("no_memory.log" in p.stderr and "--format-list" in p.stderr and
          '"step=N loss=N lr=N tokens/s=N" x100' in p.stderr and
          len(p.stderr.strip().splitlines()) == 1, "no figure: one line naming the file, the "
          "line shapes seen and where to look: %s" % p.stderr)

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
                    "max-fraction = 0.95\nhorizon = 100000\nsteps = 100\nmax-ooms = 0\n"
                    "max-growth-pct = 1000\nmax-group-growth = 1GiB\n")
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


FW = None


def fw(name):
    return os.path.join(FW, name)


def one_line(tmp, name, text):
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(text.encode() if isinstance(text, str) else text)
    return p


def frameworks():
    with open(fw("truth.json")) as f:
        truth = json.load(f)
    near = lambda a, b, rel=0.01: a is not None and abs(a - b) <= rel * abs(b) + 1  # noqa: E731

    # torchtitan: four ranks from [rankN]:, ANSI colours (24-bit too), the peak creeping on rank 2
    t = truth["torchtitan.log"]
    d = curve([fw("torchtitan.log"), "--capacity", "H100"])
    check(d["files"][0]["format"] == "torchtitan", "torchtitan detected: %s" % d["files"])
    by = {s["rank"]: s for s in d["series"]}
    check(sorted(by) == t["ranks"], "torchtitan ranks: %s" % sorted(by))
    check(all(s["measure"] == "max_reserved" and s["maximum"] and s["samples"] ==
              t["samples_per_rank"] for s in d["series"]), "torchtitan: max_reserved, a maximum")
    check(by[2]["verdict"] == "growing" and "peak creeps" in by[2]["why"],
          "rank 2's creep is a creep of the peak: %s" % by[2]["why"])
    within(slope_of(by[2]), t["slope"], 0.10, "torchtitan rank 2 slope")
    check(all(by[r]["verdict"] == "flat" for r in (0, 1, 3)), "other ranks flat")
    check([o["rank"] for o in d["ranks"]["outliers"]] == [2], "rank 2 the outlier")
    check(by[0]["capacity_bytes"] == round(81009 * MiB) and by[0]["capacity_gib"] == 79.11,
          "--capacity H100: 79.11 GiB: %s %s" % (by[0]["capacity_bytes"], by[0]["capacity_gib"]))
    oo, to = d["ooms"], t["oom"]
    check(oo["count"] == 1 and len(oo["kept"]) == 1, "one OOM: %s" % oo)
    if oo["kept"]:
        k = oo["kept"][0]
        check(k["line"] == to["line"] and k["rank"] == to["rank"] and k["gpu"] == to["gpu"] and
              k["kind"] == "CUDA", "OOM line, rank, GPU: %s" % k)
        for key in ("tried", "capacity", "free", "allocated", "reserved_unallocated"):
            check(near(k[key + "_bytes"], to[key]), "OOM %s: %s want %s" % (key, k[key + "_bytes"],
                                                                            to[key]))
    p = run([fw("torchtitan.log"), "--capacity", "H100"])
    check("Out of memory: 1" in p.stdout and "torchtitan.log:%d rank 3" % to["line"] in p.stdout,
          "text lists the OOM with its line and rank")
    check("capacity  79.11 GiB (84,944,093,184 bytes)" in p.stdout, "capacity in GiB and bytes")

    # Megatron-LM report_memory behind srun -l: ranks from [Rank N] over the task prefix
    t = truth["megatron_srun.log"]
    d = curve([fw("megatron_srun.log")])
    by = {s["rank"]: s for s in d["series"]}
    check(d["files"][0]["format"] == "megatron" and sorted(by) == t["ranks"],
          "megatron: ranks %s" % sorted(by))
    check(all(s["measure"] == "allocated" and s["gap"] is not None for s in d["series"]),
          "megatron: allocated, reserved beside it")
    within(slope_of(by[13]), t["slope_per_iteration"], 0.10, "megatron rank 13 slope")
    check(by[13]["verdict"] == "growing" and all(by[r]["verdict"] == "flat" for r in (0, 4, 8)),
          "rank 13 growing, the others flat")

    # a resume from an earlier checkpoint: two runs, each warm-up-then-flat, neither growing
    t = truth["megatron_resume.log"]
    d = curve([fw("megatron_resume.log")])
    runs = [(s["run"], s["first"]["x"], s["last"]["x"], s["verdict"]) for s in d["series"]]
    check(runs == [(i, r["first"], r["last"], "flat") for i, r in enumerate(t["runs"])],
          "two runs, both flat: %s" % runs)
    p = run([fw("megatron_resume.log")])
    check("rank 0, run 2" in p.stdout, "text names the run")

    # DeepSpeed see_memory_usage: no step, the sample index; the host line never read
    t = truth["deepspeed_memory.log"]
    d = curve([fw("deepspeed_memory.log")])
    s = d["series"][0]
    check(d["files"][0]["format"] == "deepspeed" and s["x"] == "sample" and
          s["samples"] == t["samples"], "deepspeed: %s samples by index" % s["samples"])
    check(any("no step" in w for w in d["warnings"]), "the sample axis said: %s" % d["warnings"])
    e = s["lower_edge"] or {}
    within(e.get("slope_bytes_per_sample"), t["slope_per_sample"], 0.10, "deepspeed slope")
    check(s["gap"] is not None, "CA beside MA: a gap")

    for name in ("deepspeed_timer.log", "mmengine.log", "dmon.log"):
        t = truth[name]
        d = curve([fw(name)])
        s = d["series"][0]
        check(s["verdict"] == t["verdict"] and d["files"][0]["format"] == t["format"],
              "%s: %s, %s" % (name, d["files"][0]["format"], s["verdict"]))
        check(s["samples"] == t["samples"], "%s samples %s" % (name, s["samples"]))
    d = curve([fw("mmengine.log")])
    s = d["series"][0]
    t = truth["mmengine.log"]
    check(s["measure"] == "max_allocated" and s["first"]["x"] == t["first_step"] and
          s["last"]["x"] == t["last_step"], "mmengine steps from Epoch(train) [E][i/n]")

    d = curve([fw("swin.log")])
    s, t = d["series"][0], truth["swin.log"]
    check(s["measure"] == "max_allocated" and s["verdict"] == "growing", "swin: a growing max")
    within(slope_of(s), t["slope"], 0.10, "swin slope")

    t = truth["nvsmi_table.log"]
    d = curve([fw("nvsmi_table.log")])
    by = {s["gpu"]: s for s in d["series"]}
    check(sorted(by) == t["gpus"] and all(s["measure"] == "device_used" and s["x"] == "second"
                                          for s in d["series"]), "nvidia-smi table: GPUs, seconds")
    within(slope_of(by[1]), t["slope_per_second"], 0.10, "nvidia-smi table GPU 1 slope")
    check(by[1]["capacity_bytes"] == t["capacity"] and by[0]["verdict"] == "flat",
          "table: memory total as the capacity, GPU 0 flat")

    t = truth["nvsmi_free.csv"]
    d = curve([fw("nvsmi_free.csv")])
    s = d["series"][0]
    check(s["measure"] == "device_used" and s["first"]["bytes"] == t["first_used"],
          "memory.free turned into used by the total: %s" % s["first"])
    within(slope_of(s), t["slope_per_second"], 0.10, "free-only slope")

    t = truth["trainer_state.json"]
    d = curve([fw("trainer_state.json")])
    s = d["series"][0]
    check(d["files"][0]["format"] == t["format"] and s["samples"] == t["samples"] and
          s["verdict"] == t["verdict"], "HF trainer_state.json: %s %s" % (d["files"], s["verdict"]))
    within(slope_of(s), t["slope"], 0.10, "trainer_state.json slope")

    t = truth["wandb-events.jsonl"]
    d = curve([fw("wandb-events.jsonl")])
    by = {s["gpu"]: s for s in d["series"]}
    check(d["files"][0]["format"] == "wandb" and sorted(by) == t["gpus"] and
          all(s["measure"] == "device_used" and s["x"] == "second" for s in d["series"]),
          "wandb: a series per GPU, device_used per second: %s" % d["files"])
    within(slope_of(by.get(1, {"lower_edge": None})), t["slope_per_second"], 0.10, "wandb slope")
    check(by.get(0, {}).get("verdict") == "flat", "wandb GPU 0 flat")
    with tempfile.TemporaryDirectory() as tmp:
        pct = os.path.join(tmp, "pct.jsonl")
        with open(fw("wandb-events.jsonl")) as src, open(pct, "w") as dst:
            for line in src:
                d = {k: v for k, v in json.loads(line).items() if not k.endswith("Bytes")}
                dst.write(json.dumps(d) + "\n")
        p = run([pct], rc=2)
        check("percentage" in p.stderr, "wandb percentages only: said: %s" % p.stderr)

    # the line as it comes
    t = truth["as_it_comes.log"]
    p = run([fw("as_it_comes.log"), "--json"])
    d = json.loads(p.stdout)
    s = d["series"][0]
    check(s["samples"] == t["samples"] and d["files"][0]["bad_lines"] == t["bad_lines"] and
          d["files"][0]["first_bad_line"] == t["first_bad_line"],
          "CRLF, ANSI, NUL, tabs, separators: %s %s" % (s["samples"], d["files"]))
    within(slope_of(s), t["slope"], 0.10, "as-it-comes slope (no host figure read)")
    check(s["first"]["bytes"] == 8 * GiB, "first figure 8 GiB, not a CPU one: %s" % s["first"])
    check("no newline" in p.stderr, "the cut last line named: %s" % p.stderr)
    k = d["ooms"]["kept"][0] if d["ooms"]["kept"] else {}
    for key in ("tried", "capacity", "free", "allocated", "reserved_unallocated"):
        check(near(k.get(key + "_bytes"), t["oom"][key], 0.02), "old-style OOM %s: %s" % (key, k))
    t = truth["cut.jsonl"]
    p = run([fw("cut.jsonl"), "--json"])
    d = json.loads(p.stdout)
    check(d["files"][0]["bad_lines"] == t["bad_lines"] and d["series"][0]["samples"] == t["samples"],
          "cut JSON lines are bad lines: %s" % d["files"])
    check(("%d lines" % t["bad_lines"]) in p.stderr and ("line %d" % t["first_bad_line"]) in
          p.stderr and "JSON" in p.stderr, "named in the warning: %s" % p.stderr)
    within(slope_of(d["series"][0]), t["slope"], 0.10, "cut.jsonl slope")

    with tempfile.TemporaryDirectory() as tmp:
        # the pasted lines, one each
        pasted = [
            ("[rank0]:[titan] 2026-05-01 12:00:00,123 - root - INFO - \x1b[31mstep: 10  \x1b[32m"
             "loss:  7.9123  \x1b[38;2;54;234;195mmemory: 35.21GiB(37.06%)  \x1b[34mtps: 3,090  "
             "tflops: 1,179.96\x1b[39m", "torchtitan", 0, 10, 35.21 * GiB, "max_reserved"),
            ("55: [Rank 55] (after 10 iterations) memory (MB) | allocated: 1234.56 | max "
             "allocated: 2345.6 | reserved: 3000.0 | max reserved: 3000.0", "megatron", 55, 10,
             1234.56 * MiB, "allocated"),
            ("  0: [Rank 0] (after 20 iterations) memory (MB) | allocated: 1234.56 | max "
             "allocated: 2345.6 | reserved: 3000.0 | max reserved: 3000.0", "megatron", 0, 20,
             1234.56 * MiB, "allocated"),
            ("[2026-05-01 12:00:00,123] [INFO] [utils.py:781:see_memory_usage] MA 6.08 GB         "
             "Max_MA 8.11 GB         CA 8.13 GB         Max_CA 8 GB", "deepspeed", None, 0,
             6.08 * GiB, "allocated"),
            ("[2026-05-01 12:00:00,123] [INFO] [timer.py:260:stop] epoch=0/micro_step=80/"
             "global_step=10, RunningAvgSamplesPerSec=31.2, CurrSamplesPerSec=30.9, "
             "MemAllocated=3.96GB, MaxMemAllocated=22.95GB", "deepspeed-timer", None, 10,
             3.96 * GiB, "allocated"),
            ("[default2]:2026/05/01 12:00:00 - mmengine - INFO - Iter(train) [  50/1000]  lr: "
             "1.0e-02  eta: 0:10:00  time: 0.5  data_time: 0.01  memory: 6814  loss: 2.3",
             "mmengine", 2, 50, 6814 * MiB, "max_allocated"),
            ("[default 3]:[2026-05-01 12:00:00 swin] (main.py 230): INFO Train: [1/300][100/1251]"
             "\teta 0:10:00 lr 0.000100\ttime 0.5 (0.6)\tloss 6.9 (6.9)\tmem 10584MB", "swin", 3,
             1351, 10584 * MiB, "max_allocated"),
            ("[RANK 07] step=5 alloc=1.5GiB reserved=2GiB", "text", 7, 5, 1.5 * GiB, "allocated"),
            ("step=6 rank=4 alloc=1.5GiB", "text", 4, 6, 1.5 * GiB, "allocated"),
        ]
        for k, (line, fmt, rank, x, want, measure) in enumerate(pasted):
            d = curve([one_line(tmp, "p%d.log" % k, line + "\n")])
            s = d["series"][0] if d["series"] else {"first": {}}
            check(d["files"] and d["files"][0]["format"] == fmt and s.get("rank") == rank and
                  s["first"].get("x") == x and near(s["first"].get("bytes"), want, 1e-9) and
                  s.get("measure") == measure,
                  "pasted %s line: %s %s" % (fmt, d["files"], s))
        # every preset's own example reads as that preset
        p = run(["--format-list"])
        names = [l for l in p.stdout.splitlines() if l and not l.startswith(" ")]
        check(names == ["text", "jsonl", "csv", "hf-trainer-state", "wandb", "nvidia-smi", "mmengine", "torchtitan",
                        "megatron", "deepspeed", "deepspeed-timer", "swin", "nvidia-smi-table",
                        "nvidia-smi-dmon"], "--format-list names: %s" % names)
        examples = dict(zip(names, [l.split("example  ", 1)[1] for l in p.stdout.splitlines()
                                    if l.startswith("  example  ")]))
        for name in ("mmengine", "torchtitan", "megatron", "deepspeed", "deepspeed-timer", "swin"):
            d = curve([one_line(tmp, name + ".log", examples.get(name, "") + "\n")])
            check(d["files"] and d["files"][0]["format"] == name and d["files"][0]["samples"] == 1,
                  "the %s example reads as %s: %s" % (name, name, d["files"]))
        # nothing reads: the three most frequent line shapes and the closest format
        near_miss = one_line(tmp, "near.log", "".join(
            "[Rank 0] (after %d iterations) memory (GB) | allocated: 1.5\n" % (10 * s)
            for s in range(30)) + "hello 1\nhello 2\nother line\n")
        p = run([near_miss], rc=2)
        check("closest format: megatron (its words in 30 lines)" in p.stderr and
              '"[Rank N] (after N iterations) memory" x30, "hello N" x2, "other line" x1' in
              p.stderr, "closest format and shapes: %s" % p.stderr)
        # HIP's OOM, behind torchrun's local rank; the same message again is one OOM
        hip = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 3.31 GiB. GPU 0 has "
               "a total capacity of 128.00 GiB of which 780.24 MiB is free. Of the allocated "
               "memory 57.70 GiB is allocated by PyTorch, and 75.82 MiB is reserved by PyTorch "
               "but unallocated.")
        hl = one_line(tmp, "hip.log", "".join("step=%d alloc=%dB\n" % (s, GiB) for s in range(20))
                      + "[default1]:" + hip + "\n[default1]:" + hip + "\n")
        d = curve([hl])
        k = d["ooms"]["kept"][0] if d["ooms"]["kept"] else {}
        check(d["ooms"]["count"] == 1 and k.get("kind") == "HIP" and k.get("rank") == 1 and
              k.get("line") == 21 and near(k.get("tried_bytes"), 3.31 * GiB) and
              near(k.get("capacity_bytes"), 128 * GiB) and near(k.get("free_bytes"), 780.24 * MiB)
              and near(k.get("allocated_bytes"), 57.70 * GiB) and
              near(k.get("reserved_unallocated_bytes"), 75.82 * MiB) and
              k.get("in_use_bytes") is None, "HIP OOM: %s" % d["ooms"])
        # --pattern: named groups, a unit group, rank prefixes still split; errors
        pl = one_line(tmp, "pat.log", "".join(
            "[rank%d]: it %d | gpu mem %.3f GB | res 30 GB\nnoise %d\n"
            % (r, s, 12 + (0.004 * s if r == 1 else 0), s) for s in range(0, 2000, 5)
            for r in range(2)))
        pat = r"it (?P<step>[0-9]+) \| gpu mem (?P<allocated>[0-9.]+) (?P<unit>[A-Z]+) \| " \
              r"res (?<reserved>[0-9.]+)"
        d = curve([pl, "--pattern", pat])
        by = {s["rank"]: s for s in d["series"]}
        check(d["files"] and d["files"][0]["format"] == "pattern" and sorted(by) == [0, 1] and
              by[0]["first"]["bytes"] == 12 * GiB and by[0]["reserved_last"] == 30 * GiB,
              "--pattern groups and unit: %s %s" % (d["files"], [s["first"] for s in d["series"]]))
        within(slope_of(by.get(1, {"lower_edge": None})), 0.004 * GiB, 0.10, "--pattern slope")
        for bad, why in ((r"it (?P<stepp>[0-9]+)", "unknown group name"),
                         (r"it (?P<step>[0-9]+)", "no memory group"),
                         (r"(?:x)(?P<allocated>[0-9]+)", "only (?P<name>"),
                         (r"zz (?P<allocated>[0-9]+)", "matches --pattern")):
            p = run([pl, "--pattern", bad], rc=2)
            check(why in p.stderr and len(p.stderr.strip().splitlines()) == 1,
                  "--pattern %s: %s" % (bad, p.stderr))
        # dmon without fb: no figure, and why
        dm = one_line(tmp, "dmon_u.log", "# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec\n"
                      "# Idx      W      C      C      %      %      %      %\n" +
                      "".join("    0     61     34     45     80     40      0      0\n"
                              for _ in range(20)))
        p = run([dm], rc=2)
        check("fb" in p.stderr and "-s m" in p.stderr, "dmon without fb: %s" % p.stderr)
        # host memory only: never GPU memory
        host = one_line(tmp, "host.log", "".join(
            "step=%d rss=%dG cpu_mem_allocated=3G host_reserved=4G CPU Virtual Memory:  used = "
            "12.3 GB\n" % (s, s) for s in range(50)))
        run([host], rc=2)
        # capacity by name, and a name not known
        d = curve([fx("leak_sawtooth.log"), "--capacity", "a100-80gb"])
        check(d["series"][0]["capacity_bytes"] == 81050 * MiB, "A100-80GB: %s"
              % d["series"][0]["capacity_bytes"])
        p = run([fx("leak_sawtooth.log"), "--capacity", "B9000"], rc=2)
        check("GPU" in p.stderr and "H100" in p.stderr, "unknown GPU name: %s" % p.stderr)


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
        # a step that goes back on a line without the series' figure starts no empty run
        p = run([write("back.log", good + b"step=5 reserved=2G\n" + b"".join(
            b"step=%d alloc=%dB\n" % (s, 8 * GiB) for s in range(400, 700)))], rc=0)
        d = curve([write("back2.log", b"step=10 alloc=1G\nstep=20 alloc=1G\nstep=5 reserved=2G\n")])
        check([s["samples"] for s in d["series"]] == [2], "no empty run: %s" % d["series"])
        gz = write("leak.log.gz", gzip.compress(open(fx("leak_sawtooth.log"), "rb").read()))
        d = curve([gz])
        check(d["series"] and d["series"][0]["verdict"] == "growing", "gzip read")
        run([write("bad.gz", gzip.compress(good)[:-40])], rc=2)
        p = run(["-", "--json"], stdin=open(fx("leak_sawtooth.log")).read())
        check(json.loads(p.stdout)["series"][0]["verdict"] == "growing", "stdin read")
        run([os.path.join(tmp, "absent.log")], rc=2)
        # seeded mutations of every fixture: flipped, cut, repeated and inserted bytes
        rng = random.Random(21)
        srcs = sorted(f for f in os.listdir(FIX) if not f.endswith((".py", ".json")) and
                      os.path.isfile(fx(f)))
        srcs += sorted(os.path.join("frameworks", f) for f in os.listdir(FW)
                       if not f.endswith(".json"))   # the frameworks' logs too
        for k in range(int(os.environ.get("CURVE_MUTATIONS", "120"))):
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


def csv_quoted():
    """A CSV record whose quoted field spans lines is one record (RFC 4180, as Python's csv
    module writes a note with newlines, commas and quotes): the samples and figures are
    those csv.reader reads; a quote that never closes is one bad record, named by its first
    line."""
    import csv
    import io
    rows = [["step", "note", "allocated_mib", "reserved_mib"]]
    for st in range(0, 200, 2):
        note = "plain"
        if st % 10 == 0:
            note = "line one\nline two, with a comma\nand a \"quote\""
        elif st % 7 == 0:
            note = "ends with a newline\n"
        rows.append([st, note, "%.4f" % (4096 + 0.5 * st), "%.4f" % (6144 + 0.5 * st)])
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    text = buf.getvalue()
    want = list(csv.reader(io.StringIO(text)))[1:]
    check(text.count("\n") > len(want) + 1, "the file has records over several lines")
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in (("notes.csv", text), ("notes_crlf.csv", text.replace("\n", "\r\n"))):
            path = os.path.join(tmp, name)
            with open(path, "w", newline="") as f:
                f.write(data)
            d = curve([path, "--log-format", "csv"])
            f0 = (d["files"] or [{}])[0]
            by = {s["measure"]: s for s in d["series"]}
            a = by.get("allocated", {})
            check(a.get("samples") == len(want) and f0.get("bad_lines") == 0,
                  "%s: %d records as csv.reader reads them: %s samples, %s bad"
                  % (name, len(want), a.get("samples"), f0.get("bad_lines")))
            check(a.get("first", {}).get("bytes") == round(float(want[0][2]) * MiB) and
                  a.get("last", {}).get("bytes") == round(float(want[-1][2]) * MiB),
                  "%s: first and last figures: %s %s" % (name, a.get("first"), a.get("last")))
            check((a.get("first") or {}).get("x") == int(want[0][0]) and
                  (a.get("last") or {}).get("x") == int(want[-1][0]),
                  "%s: first and last steps" % name)
        # a quote that never closes: that record is bad, named by its first line
        cut = text + '300,"never closed\n'
        path = os.path.join(tmp, "cut.csv")
        with open(path, "w", newline="") as f:
            f.write(cut)
        p = run([path, "--log-format", "csv", "--json"])
        d = json.loads(p.stdout or "{}")
        f0 = (d.get("files") or [{}])[0]
        first_line = text.count("\n") + 1
        check(f0.get("bad_lines") == 1 and f0.get("first_bad_line") == first_line,
              "unclosed quote: one bad record at line %d: %s" % (first_line, f0))
        check("never closes" in p.stderr, "unclosed quote named: %s" % p.stderr.strip())


def first_syntax_error(data):
    """The limits file's syntax, by hand (docs/json-check.md, "The limits file"): (line, words) of
    its first error, or None. A line is at most 1023 bytes and holds no NUL; `#` starts a
    comment; what is left is blank or `key = value`."""
    for i, line in enumerate(data.split(b"\n"), 1):
        if len(line) > 1023:
            return i, "longer than 1023 bytes"
        if b"\0" in line:
            return i, "NUL byte"
        line = line.split(b"#", 1)[0].strip(b" \t\r")
        if line and b"=" not in line:
            return i, "expected 'key = value', got '%s'" % line.decode()
    return None


def config():
    """A syntax error in a --config file reads the same through check and through curve
    (one parser of the syntax, base/limits_file.c, under both): exit 2 and one identical
    stderr line naming PATH:LINE and what was expected, the line found by
    first_syntax_error above."""
    ex = os.path.join(ROOT, "testdata", "example")
    cli = clitest.Suite(bin=T.bin, no_color=True, rc=None)
    commands = (["check", os.path.join(ex, "old.pickle"), os.path.join(ex, "new.pickle")],
                ["curve", fx("leak_sawtooth.log")])
    cases = [
        b"# limits\n\nmax-growth 1MiB\n",
        b"max-growth = 1GiB   # both\r\nmax-fraction = 0.9\r\nhorizon\r\n",
        b"max-growth = 1GiB\n" + b"max-per-step = " + b"1" * 1100 + b"\n",
        b"# " + b"x" * 1021 + b"\nmax-ooms 0\n",     # 1023 bytes pass, line 2 does not
        b"# " + b"x" * 1022 + b"\nmax-ooms = 0\n",   # 1024 bytes do not
        b"max-growth = 1GiB\nhorizon = 1\x002\n",
        b"max-growth = 1GiB\n\n\n   \t\n# a = b\nno equals sign, no comment # x = y",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "limits.conf")
        for data in cases:
            with open(path, "wb") as f:
                f.write(data)
            want = first_syntax_error(data)
            check(want is not None, "case %r: the oracle finds its error" % data[:40])
            if want is None:
                continue
            line, words = want
            got = []
            for cmd in commands:
                p = cli.run(cmd + ["--config", path])
                err = p.stderr.strip().split("\n")
                check(p.returncode == 2 and len(err) == 1,
                      "%s, case %r: exit %d, stderr %r" % (cmd[0], data[:40], p.returncode,
                                                           p.stderr[:300]))
                check(("%s:%d: " % (path, line)) in err[0] and words in err[0],
                      "%s, case %r: names line %d and %r: %r" % (cmd[0], data[:40], line,
                                                                 words, err[0]))
                got.append(err[0])
            check(got[0] == got[1], "case %r: check and curve say the same: %r" % (data[:40], got))
        # Valid syntax, then keys: each command its own (curve skips check's keys and back).
        with open(path, "wb") as f:
            f.write(b"# " + b"x" * 1020 + b"\r\n\t max-growth\t=\t1GiB \r\nhorizon = 5 # x\n")
        check(first_syntax_error(open(path, "rb").read()) is None, "a valid file")
        for cmd in commands:
            p = cli.run(cmd + ["--config", path])
            check(p.returncode in (0, 1), "%s reads the valid file: %d %s"
                  % (cmd[0], p.returncode, p.stderr.strip()[:300]))


def main():
    global ROOT, FIX, TRUTH, FW
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("part", choices=["fixtures", "gate", "hostile", "frameworks", "csv",
                                     "config"])
    a = ap.parse_args()
    T.bin, ROOT = a.bin, a.root
    FIX = os.path.join(ROOT, "testdata", "curve")
    FW = os.path.join(FIX, "frameworks")
    with open(os.path.join(FIX, "truth.json")) as f:
        TRUTH = json.load(f)
    {"fixtures": fixtures, "gate": gate, "hostile": hostile, "frameworks": frameworks,
     "csv": csv_quoted, "config": config}[a.part]()
    sys.exit(T.finish(a.part))


if __name__ == "__main__":
    main()
