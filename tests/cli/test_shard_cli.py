#!/usr/bin/env python3
"""`snapdiff summarize --shard` (issue 30): the map of a cluster job.

    test_shard_cli.py --bin SNAPDIFF --root REPO

Over copies of a fixture named like the ranks of a job (in a temporary folder), for each
scheduler's variables (--shard I/N; Slurm job arrays from 0, from 1 and with a step;
Kubernetes' JOB_COMPLETION_INDEX with auto/N; torchrun's RANK/WORLD_SIZE) and several
task counts (fewer, as many and more tasks than inputs): every task is run with the
inputs in its own shuffled order, into a folder of its own, and every input must be
summarized by exactly one task, into DIR/NAME.sdsum, with the note naming the scheduler.
The shares are checked against the rule the docs state (floor(I*n/N) .. floor((I+1)*n/N)),
computed here. Then: a summary written by a share is byte-for-byte the one-input
summary; @FILE lists (comments, blank lines, CRLF); a rerun leaves fresh summaries alone,
redoes one whose input is newer, and --force redoes all; no hidden temporary is left;
the reduce (`check OLD DIR-of-summaries`) gives the verdict and figures of `check OLD
DIR-of-snapshots`, opening O(N) files for N summaries (strace: the folder is listed once);
and every bad value is one error line, exit 2, nothing written.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402

T = clitest.Suite(rc=None)
check, run = T.check, T.run
# The variables a scheduler sets, removed from every run so that the test's own
# environment (a CI job inside Slurm or torchrun) cannot pick the share.
SCHED_VARS = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN",
              "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX",
              "RANK", "WORLD_SIZE")
for v in SCHED_VARS:
    os.environ.pop(v, None)


def expected_share(n, index, count):
    return range(n * index // count, n * (index + 1) // count)


def schedulers(count):
    """(name, [(task index, extra args, env)]) for each scheduler's variables."""
    yield "explicit", [(i, ["--shard", "%d/%d" % (i, count)], {}) for i in range(count)]
    yield "slurm 0-based", [(i, ["--shard", "auto"],
                             {"SLURM_ARRAY_TASK_ID": str(i), "SLURM_ARRAY_TASK_MIN": "0",
                              "SLURM_ARRAY_TASK_MAX": str(count - 1),
                              "SLURM_ARRAY_TASK_COUNT": str(count)}) for i in range(count)]
    yield "slurm 1-based", [(i, ["--shard", "auto"],
                             {"SLURM_ARRAY_TASK_ID": str(i + 1), "SLURM_ARRAY_TASK_MIN": "1",
                              "SLURM_ARRAY_TASK_COUNT": str(count)}) for i in range(count)]
    yield "slurm step 3", [(i, ["--shard", "auto"],
                            {"SLURM_ARRAY_TASK_ID": str(5 + 3 * i), "SLURM_ARRAY_TASK_MIN": "5",
                             "SLURM_ARRAY_TASK_STEP": "3",
                             "SLURM_ARRAY_TASK_MAX": str(5 + 3 * (count - 1)),
                             "SLURM_ARRAY_TASK_COUNT": str(count)}) for i in range(count)]
    yield "kubernetes", [(i, ["--shard", "auto/%d" % count], {"JOB_COMPLETION_INDEX": str(i)})
                         for i in range(count)]
    yield "torchrun", [(i, ["--shard", "auto"], {"RANK": str(i), "WORLD_SIZE": str(count)})
                       for i in range(count)]


NOTE_WORD = {"explicit": "--shard", "slurm 0-based": "Slurm", "slurm 1-based": "Slurm",
             "slurm step 3": "Slurm", "kubernetes": "Kubernetes", "torchrun": "torchrun"}


def make_inputs(root, tmp, n):
    """n copies of a fixture named like ranks, in two folders (the sort is on the whole
    path), returned in a shuffled order."""
    src = os.path.join(root, "testdata", "example", "new.pickle")
    paths = []
    for i in range(n):
        d = os.path.join(tmp, "in", "a" if i % 3 else "b")
        os.makedirs(d, exist_ok=True)
        p = os.path.join(d, "job7_rank%04d.pickle" % i)
        shutil.copyfile(src, p)
        paths.append(p)
    random.Random(30).shuffle(paths)
    return paths


def summary_name(p):
    return os.path.basename(p) + ".sdsum"


def part_coverage(root, tmp):
    n = 23
    inputs = make_inputs(root, tmp, n)
    ordered = sorted(inputs)
    rng = random.Random(7)
    with open(os.path.join(tmp, "all.txt"), "w") as f:
        f.write("\n".join(inputs) + "\n")
    for count in (1, 4, 7, 23, 30):
        for name, tasks in schedulers(count):
            seen = {}
            for index, args, env in tasks:
                out = os.path.join(tmp, "out", "%s-%d-%d" % (name.replace(" ", "_"), count, index))
                mine = list(inputs)
                rng.shuffle(mine)
                # half of the tasks read a list file, the others the arguments
                given = ["@" + os.path.join(tmp, "all.txt")] if index % 2 else mine
                p = run(["summarize", *args, *given, "-o", out], env=env)
                what = "%s, %d tasks, task %d" % (name, count, index)
                if not check(p.returncode == 0, what + ": exit 0", p.stderr.strip()):
                    continue
                notes = [ln for ln in p.stderr.splitlines() if "note: shard" in ln]
                check(len(notes) == 1 and ("shard %d/%d" % (index, count)) in notes[0] and
                      NOTE_WORD[name] in notes[0], what + ": one note naming the share and "
                      "its source", p.stderr.strip())
                got = sorted(os.listdir(out)) if os.path.isdir(out) else []
                want = sorted(summary_name(ordered[k]) for k in expected_share(n, index, count))
                check(got == want, what + ": the documented share", "%s != %s" % (got, want))
                for g in got:
                    seen[g] = seen.get(g, 0) + 1
            every = sorted(summary_name(p) for p in inputs)
            check(sorted(seen) == every, "%s, %d tasks: every input summarized" % (name, count),
                  "missing %s" % sorted(set(every) - set(seen)))
            check(all(v == 1 for v in seen.values()),
                  "%s, %d tasks: each input exactly once" % (name, count),
                  str({k: v for k, v in seen.items() if v != 1}))


def part_same_summary(root, tmp):
    src = os.path.join(root, "testdata", "example", "new.pickle")
    one = os.path.join(tmp, "one.sdsum")
    run(["summarize", src, "-o", one, "-q"], rc=0)
    out = os.path.join(tmp, "same")
    run(["summarize", "--shard", "0/1", src, "-o", out, "-q"], rc=0)
    with open(one, "rb") as a, open(os.path.join(out, "new.pickle.sdsum"), "rb") as b:
        check(a.read() == b.read(), "a share's summary is the one-input summary, byte for byte")


def part_lists(root, tmp):
    src = os.path.join(root, "testdata", "example")
    lst = os.path.join(tmp, "list.txt")
    with open(lst, "w", newline="") as f:
        f.write("# the ranks\r\n\r\n%s/old.pickle\r\n\n%s/new.pickle\n" % (src, src))
    out = os.path.join(tmp, "lists")
    run(["summarize", "@" + lst, "-o", out, "-q"], rc=0)
    check(sorted(os.listdir(out)) == ["new.pickle.sdsum", "old.pickle.sdsum"],
          "@FILE: comments and blank lines left out, CRLF read", str(os.listdir(out)))


def mtime_ns(p):
    return os.stat(p).st_mtime_ns


def part_rerun(root, tmp):
    inputs = sorted(make_inputs(root, os.path.join(tmp, "rerun"), 4))
    out = os.path.join(tmp, "rerun", "out")
    run(["summarize", *inputs, "-o", out, "-q"], rc=0)
    sums = [os.path.join(out, summary_name(p)) for p in inputs]
    before = [mtime_ns(s) for s in sums]
    time.sleep(0.05)
    p = run(["summarize", *inputs, "-o", out], rc=0)
    check([mtime_ns(s) for s in sums] == before, "a rerun leaves fresh summaries alone")
    check("4 of 4 summaries newer than their input" in p.stderr, "a rerun says what it left",
          p.stderr.strip())
    future = time.time() + 5
    os.utime(inputs[2], (future, future))
    run(["summarize", *inputs, "-o", out, "-q"], rc=0)
    after = [mtime_ns(s) for s in sums]
    check(after[2] != before[2] and after[:2] + after[3:] == before[:2] + before[3:],
          "only the summary older than its input is redone")
    time.sleep(0.05)
    run(["summarize", "--force", *inputs, "-o", out, "-q"], rc=0)
    check(all(mtime_ns(s) != a for s, a in zip(sums, after)), "--force redoes every summary")
    check(not [f for f in os.listdir(out) if f.startswith(".")], "no hidden temporary left",
          str(os.listdir(out)))


def without_sdsum(text):
    return text.replace(".pickle.sdsum", ".pickle")


def part_reduce(root, tmp):
    ranks = os.path.join(root, "testdata", "ranks")
    new_dir = os.path.join(ranks, "new_dir")
    files = [os.path.join(new_dir, f) for f in sorted(os.listdir(new_dir))]
    out = os.path.join(tmp, "reduce")
    for i in range(3):
        run(["summarize", "--shard", "%d/3" % i, *files, "-o", out, "-q"], rc=0)
    limits = ["--max-growth", "4MiB", "--fail-on-new-site", "1MiB"]
    old = os.path.join(ranks, "old.zip")
    for fmt in ([], ["--json"]):
        a = run(["check", old, new_dir, *limits, *fmt])
        b = run(["check", old, out, *limits, *fmt])
        check(a.returncode == b.returncode and a.returncode == 1,
              "reduce %s: the verdict of check over the snapshots" % (fmt or "text"),
              "%d vs %d" % (a.returncode, b.returncode))
        check(without_sdsum(b.stdout) == a.stdout,
              "reduce %s: the report of check over the snapshots" % (fmt or "text"))


def count_opens(cmd, log):
    """The files `cmd` opened (strace, every thread), or None when strace cannot trace here."""
    p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat,open", "-o", log, *cmd],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1) or not os.path.exists(log):
        return None
    with open(log) as f:
        return sum(1 for line in f if "open" in line)


def part_reduce_lists_once(root, tmp):
    """The reduce reads a folder of N summaries with O(N) file opens: the folder is listed
    (and each file's first bytes sniffed) once, not once per member, as it was when every
    loading thread reopened the input (2 million stat calls for 1,024 summaries)."""
    if not shutil.which("strace"):
        print("SKIP part reduce_lists_once: strace is not installed (tests/deps.sh installs it)")
        return
    one = os.path.join(tmp, "one.sdsum")
    run(["summarize", "-q", os.path.join(root, "testdata", "example", "new.pickle"), "-o", one], rc=0)
    opens = {}
    for n in (100, 400):
        d = os.path.join(tmp, "r%d" % n)
        os.makedirs(d)
        for i in range(n):
            os.link(one, os.path.join(d, "step100_rank%04d.pickle.sdsum" % i))
        opens[n] = count_opens([T.bin, "check", one, d, "--max-growth", "1GiB", "-q"], os.path.join(tmp, "strace%d" % n))
        if opens[n] is None:
            print("SKIP part reduce_lists_once: strace cannot trace here")
            return
    print("reduce_lists_once: opens for 100 summaries %d, for 400 %d" % (opens[100], opens[400]))
    check(opens[400] <= 4 * 400, "check over 400 summaries opens at most 4 files per summary",
          "%d opens" % opens[400])
    check(opens[400] - opens[100] <= 4 * 300, "the opens grow linearly with the summaries",
          "100: %d, 400: %d" % (opens[100], opens[400]))


def part_refusals(root, tmp):
    src = os.path.join(root, "testdata", "example", "new.pickle")
    other = os.path.join(tmp, "other")
    os.makedirs(other)
    shutil.copyfile(src, os.path.join(other, "new.pickle"))
    empty = os.path.join(tmp, "empty.txt")
    open(empty, "w").close()
    long_line = os.path.join(tmp, "long.txt")
    with open(long_line, "w") as f:
        f.write(src + "\n" + "x" * 5000 + "\n")
    binary = os.path.join(tmp, "binary.txt")
    with open(binary, "wb") as f:
        f.write(src.encode() + b"\n\x00\x01\x02")
    out = os.path.join(tmp, "bad")
    cases = [
        (["--shard", "0/1", "@" + long_line], {}, r"long.txt: offset \d+: a path longer than 4096 bytes"),
        (["--shard", "0/1", "@" + binary], {}, r"binary.txt: offset %d: a NUL byte" % (len(src) + 1)),
        (["--shard", "3/3", src], {}, r"--shard: '3/3' is not"),
        (["--shard", "1/0", src], {}, r"--shard: '1/0' is not"),
        (["--shard", "x", src], {}, r"--shard: 'x' is not"),
        (["--shard", "-1/2", src], {}, r"--shard: '-1/2' is not"),
        (["--shard", "auto/0", src], {}, r"--shard: 'auto/0' is not"),
        (["--shard", "auto", src], {}, r"no task index in the environment"),
        (["--shard", "auto", src], {"SLURM_ARRAY_TASK_ID": "abc", "SLURM_ARRAY_TASK_COUNT": "2"},
         r"SLURM_ARRAY_TASK_ID='abc' is not a number"),
        (["--shard", "auto", src], {"SLURM_ARRAY_TASK_ID": "1"}, r"SLURM_ARRAY_TASK_COUNT"),
        (["--shard", "auto", src], {"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1",
                                    "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MAX": "9"},
         r"not on a range"),
        (["--shard", "auto", src], {"JOB_COMPLETION_INDEX": "2"}, r"gives no count: use --shard auto/N"),
        (["--shard", "auto/4", src], {"JOB_COMPLETION_INDEX": "4"}, r"task 4 is not below the count 4"),
        (["--shard", "auto/8", src], {"RANK": "1", "WORLD_SIZE": "4"}, r"the scheduler says 4 tasks"),
        (["--shard", "auto", src], {"RANK": "1"}, r"WORLD_SIZE is not a positive number"),
        (["--shard", "0/2", src, os.path.join(other, "new.pickle")], {}, r"two inputs would both write"),
        (["--shard", "0/1", "@" + empty], {}, r"no input"),
        (["--shard", "0/1", "@" + os.path.join(tmp, "nonexistent.txt")], {},
         r"cannot read the list of inputs"),
        (["--shard", "0/1", os.path.join(root, "testdata", "ranks", "old.zip")], {},
         r"old.zip: .*holds 4 snapshots"),
        (["--shard", "0/1", os.path.join(tmp, "nonexistent.pickle")], {}, r"nonexistent.pickle"),
    ]
    for args, env, pattern in cases:
        p = run(["summarize", *args, "-o", out], env=env)
        lines = [ln for ln in p.stderr.splitlines()
                 if not ln.startswith("Try ") and not ln.startswith("snapdiff: note: ")]
        what = "summarize %s %s" % (" ".join(a.replace(tmp, "TMP").replace(root, "ROOT") for a in args), env)
        check(p.returncode == 2, what + ": exit 2", "%d %s" % (p.returncode, p.stderr.strip()))
        check(len(lines) == 1 and re.search(pattern, lines[0]) is not None,
              what + ": one line saying why", p.stderr.strip())
        check(not os.path.isdir(out) or not os.listdir(out), what + ": nothing written")
    p = run(["summarize", "--shard", "0/1", src, "-o", empty])
    check(p.returncode == 2 and "not a directory" in p.stderr and os.path.getsize(empty) == 0,
          "-o FILE for several inputs: exit 2, a directory asked for, the file untouched",
          p.stderr.strip())
    p = run(["summarize", "--shard", "0/1", src], env={})
    check(p.returncode == 2 and "give -o DIR" in p.stderr, "--shard without -o: exit 2, -o DIR asked for",
          p.stderr.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    a = ap.parse_args()
    T.bin = a.bin
    a.root = os.path.abspath(a.root)
    tmp = tempfile.mkdtemp(prefix="snapdiff-shard-")
    try:
        for part in (part_coverage, part_same_summary, part_lists, part_rerun, part_reduce,
                     part_reduce_lists_once, part_refusals):
            d = os.path.join(tmp, part.__name__)
            os.makedirs(d)
            part(a.root, d)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
