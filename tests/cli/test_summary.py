#!/usr/bin/env python3
"""Baseline summaries (issue 11): `snapdiff summarize`, and a summary taken wherever a
snapshot is.

    test_summary.py --bin SNAPDIFF --root REPO PART

PART is one of:
  fixtures  every pickle of testdata/: summarize it, then diff, check and series with the
            summary in place of the snapshot give the same output as with the snapshot
            (text and JSON; the summary's name aside), as OLD against every partner of
            its folder and as NEW; `dump` of the summary equals an independent decoder's
            view of its bytes (tests/truth/msgpack_truth.py), and the digest's per-device totals
            equal CPython's (tests/truth/truth_stats.py); stats, frag, trace and report refuse a
            summary (exit 2, one line); the 4-rank archive summarized into a directory
            gates exactly as the archive
  hostile   a newer format version, truncations, flipped bytes, absurd counts, wrong
            types: one error line naming the file and a byte offset, exit 2, never a crash
  real      every file of ../shared/real-snapshots (exit 77 = skipped when absent): the JSON
            diff and check with the summary as OLD against the next file of the corpus, and
            the dump; prints each summary's size beside its snapshot's
  real_full the same, plus every comparison of `fixtures` against the next file and
            against itself, under several group-by keys (in tests/full.sh)
"""
import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import msgpack_truth  # noqa: E402
import truth_stats  # noqa: E402

T = clitest.Suite(rc=None, text=False)
check, run = T.check, T.run
FULL = False


def summarize(snapshot, out):
    p = run(["summarize", snapshot, "-o", out], 0)
    return p.returncode == 0


def without_peak(out):
    """The output less the diff's comparison at the peak (issue 19): a summary keeps only
    the trace entries the end-state diff reads, so a diff with a summary has no peaks."""
    try:
        doc = json.loads(out)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("schema") == "snapdiff.diff/1":
        doc.pop("peak", None)
        doc.get("totals", {}).pop("reserved_with_peak", None)
        # Two runs or one run twice is judged on the traces too (both cover a step), which a
        # summary does not keep: the verdict may differ, and says so.
        doc.pop("compared_as", None)
        doc.pop("compared_as_why", None)
        # Without peaks the fragmentation pattern cannot see that the peak moved reserved.
        doc.get("totals", {}).pop("pattern", None)
        doc.get("totals", {}).pop("hint", None)
        doc["warnings"] = [w for w in doc.get("warnings", []) if w.get("code") != "peak_one_side"]
        return json.dumps(doc, indent=2).encode()
    keep, skip = [], False
    for ln in out.decode(errors="replace").split("\n"):
        if ln.startswith("at the peak"):
            skip = True
            if keep and keep[-1] == "":
                keep.pop()
            continue
        if skip:
            skip = not (ln.startswith("(the groups add up to the peak")
                        or ln.startswith("(focus: the groups hold") and "peak" in ln)
            continue
        if (ln.startswith("  peak ") or ln.startswith("compared as ") or "grew with NEW's" in ln or "recorded a trace" in ln
                or ln.startswith("OLD peaks in the ")   # the peaks' phases (issue 26)
                or ln.startswith("the peaks are in ")   # the steps compared (issue 36)
                or ln.startswith("[fragmentation]")):
            continue
        keep.append(ln)
    return "\n".join(keep).encode()


def same_output(args_snap, args_sum, snap, summ, what):
    """The command's stdout and exit status with the snapshot, and with the summary (its
    path written back to the snapshot's, since outputs name their inputs)."""
    a = run(args_snap)
    b = run(args_sum)
    a.stdout = without_peak(a.stdout)
    out_b = without_peak(b.stdout.replace(summ.encode(), snap.encode()))
    check(a.returncode == b.returncode, "%s: exit %d with the snapshot, %d with the summary"
          " (stderr: %s)" % (what, a.returncode, b.returncode, b.stderr.decode()[:200]))
    if a.stdout != out_b:
        la, lb = a.stdout.decode().splitlines(), out_b.decode().splitlines()
        diff = next((i for i in range(min(len(la), len(lb))) if la[i] != lb[i]), min(len(la), len(lb)))
        check(False, "%s: output differs at line %d:\n  snapshot: %s\n  summary:  %s"
              % (what, diff + 1, la[diff] if diff < len(la) else "<end>",
                 lb[diff] if diff < len(lb) else "<end>"))
    else:
        # The same output proves nothing when it is no result: both runs refused or crashed
        # alike (exit 2 with an empty stdout compares equal), or wrote nothing.
        check(a.returncode in (0, 1) and a.stdout.strip() != b"",
              "%s: the same output with the snapshot and the summary, but no result (exit %d,"
              " %d bytes; stderr: %s)" % (what, a.returncode, len(a.stdout),
                                          b.stderr.decode(errors="replace")[:200]))


def compare_all(snap, summ, partners, keys=("site",), light=False):
    """diff, check and series with summ in place of snap, against each partner; `light`:
    the JSON diff as OLD and the JSON check only."""
    for other in partners:
        for key in keys:
            g = ["-g", key]
            same_output(["diff", snap, other, "--json"] + g, ["diff", summ, other, "--json"] + g,
                        snap, summ, "diff %s(summary) %s -g %s --json" % (snap, other, key))
            if light:
                continue
            same_output(["diff", snap, other] + g + ["--no-color", "--steps", "10"],
                        ["diff", summ, other] + g + ["--no-color", "--steps", "10"],
                        snap, summ, "diff %s(summary) %s -g %s (text)" % (snap, other, key))
            same_output(["diff", other, snap, "--json"] + g, ["diff", other, summ, "--json"] + g,
                        snap, summ, "diff %s %s(summary, as NEW) -g %s --json" % (other, snap, key))
        limits = ["--max-growth", "0", "--max-group-growth", "1MiB", "--fail-on-new-site",
                  "1KiB", "--max-frag-index", "0.9", "--max-reserved", "1GiB"]
        same_output(["check", snap, other, "--json"] + limits,
                    ["check", summ, other, "--json"] + limits, snap, summ,
                    "check %s(summary) %s --json" % (snap, other))
        if light:
            continue
        same_output(["check", snap, other, "--no-color"] + limits,
                    ["check", summ, other, "--no-color"] + limits, snap, summ,
                    "check %s(summary) %s (text)" % (snap, other))
        same_output(["series", snap, other, snap, "--json"],
                    ["series", summ, other, summ, "--json"], snap, summ,
                    "series %s(summary) %s --json" % (snap, other))


def check_dump(snap, summ):
    """`dump` shows what the bytes hold; the digest's totals are CPython's."""
    with open(summ, "rb") as f:
        raw = f.read()
    try:
        env = msgpack_truth.decode(raw)
    except ValueError as e:
        check(False, "%s: the independent decoder refuses it: %s" % (summ, e))
        return
    check(isinstance(env, list) and len(env) == 3 and env[0] == "snapdiff.summary" and env[1] == 1,
          "%s: envelope is [\"snapdiff.summary\", 1, {...}]" % summ)
    p = run(["dump", summ], 0)
    try:
        shown = json.loads(p.stdout)
    except ValueError as e:
        check(False, "%s: dump is not JSON: %s" % (summ, e))
        return
    want = dict(format="snapdiff.summary", version=1)
    want.update(env[2])
    check(json.loads(json.dumps(want)) == shown, "%s: dump shows what the bytes hold" % summ)
    check_host_skip(snap, summ, env[2])
    truth = truth_stats.stats(truth_stats.load(snap))
    got = {d["device"]: d for d in env[2]["digest"]["devices"]}
    for d in truth["devices"]:
        g = got.get(d["device"])
        check(g is not None, "%s: digest has device %s" % (summ, d["device"]))
        if g is None:
            continue
        for k in ("allocated_bytes", "reserved_bytes", "active_bytes", "requested_bytes",
                  "inactive_bytes", "pending_free_bytes", "segments", "blocks", "trace_entries"):
            check(g[k] == d[k], "%s device %s: digest %s %s, CPython %s" % (summ, d["device"], k, g[k], d[k]))
    groups = env[2]["digest"]["groups"]
    check(sorted(groups) == sorted(["site", "leaf", "stack", "file", "function", "annotation",
                                    "compile-context"]), "%s: groups under every key" % summ)
    for key, rows in groups.items():
        by_dev = {}
        for r in rows:
            by_dev[r[1]] = by_dev.get(r[1], 0) + r[2]
        for d in truth["devices"]:
            check(by_dev.get(d["device"], 0) == d["allocated_bytes"],
                  "%s: groups by %s on device %s sum to %s, allocated is %s"
                  % (summ, key, d["device"], by_dev.get(d["device"], 0), d["allocated_bytes"]))


ACTIONS = ["alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
           "segment_map", "segment_unmap", "oom", "snapshot", "annotate"]   # 10: other


def check_host_skip(snap, summ, body):
    """The pinned host memory (its segments and blocks) and skip_actions as CPython reads
    them from the snapshot; nil when the snapshot has neither."""
    raw = truth_stats.load(snap)
    hs = raw.get("host_segments") if isinstance(raw, dict) else None
    if hs is None and not (isinstance(raw, dict) and "host_traces" in raw):
        check(body.get("host") is None, "%s: host nil without host keys" % summ)
    else:
        segs = sorted(hs or [], key=lambda s: s["address"])
        got = body.get("host") or {}
        check([(s[0], s[1]) for s in got.get("segments", [])] ==
              [(s["address"], s["total_size"]) for s in segs], "%s: host segments" % summ)
        blocks = [(b["address"], b["size"], b["requested_size"]) for s in segs for b in s["blocks"]]
        check([tuple(b[:3]) for b in got.get("blocks", [])] == blocks, "%s: host blocks" % summ)
    skip = truth_stats.skip_actions(raw) if isinstance(raw, dict) else None
    got = body.get("skip_actions")
    if skip is None:
        check(got is None, "%s: skip_actions nil when not recorded" % summ)
    else:
        names = [ACTIONS[a] if a < len(ACTIONS) else "other" for a in got or []]
        check(got is not None and names == skip["actions"], "%s: skip_actions %s, CPython %s"
              % (summ, names, skip["actions"]))


def refusals(summ):
    for cmd in (["stats"], ["frag"], ["trace"], ["report", "-o", os.devnull]):
        p = run(cmd + [summ], 2)
        err = p.stderr.decode()
        check("is a snapdiff summary" in err and err.count("\n") <= 2,
              "%s %s: one line saying it is a summary: %r" % (cmd[0], summ, err))


def fixture_sets(root):
    """Folder -> its pickles (each folder's files are each other's partners)."""
    sets = {}
    base = os.path.join(root, "testdata")
    for dirpath, _, files in os.walk(base):
        pk = sorted(os.path.join(dirpath, f) for f in files if f.endswith(".pickle"))
        if pk:
            sets[dirpath] = pk
    return sets


def part_fixtures(root, tmp):
    n = 0
    for folder, files in sorted(fixture_sets(root).items()):
        for i, snap in enumerate(files):
            summ = os.path.join(tmp, "%d.sdsum" % n)
            n += 1
            if not summarize(snap, summ):
                continue
            # Every fixture against its neighbour in the folder; the folders whose stacks
            # carry context or C++-only frames also under the keys that read them.
            partners = [files[(i + 1) % len(files)]]
            rich = os.path.basename(folder) in ("native", "patterns", "trace")
            compare_all(snap, summ, partners, light=i % 3 != 0,
                        keys=("site", "stack", "annotation") if rich else ("site",))
            check_dump(snap, summ)
        refusals(summ)
    # The 4-rank archive: one summary per rank into a directory, gated as the archive.
    ranks = os.path.join(root, "testdata", "ranks")
    base = os.path.join(tmp, "base")
    os.mkdir(base)
    run(["summarize", os.path.join(ranks, "old.zip"), "-o", base], 0)
    names = sorted(os.listdir(base))
    check(len(names) == 4 and all(x.endswith(".sdsum") for x in names),
          "ranks: four summaries in the directory: %s" % names)
    conf = ["--config", os.path.join(ranks, "limits.conf")]
    for fmt in (["--json"], ["--no-color"]):
        a = run(["check", os.path.join(ranks, "old.zip"), os.path.join(ranks, "new.zip")] + conf + fmt)
        b = run(["check", base, os.path.join(ranks, "new.zip")] + conf + fmt)
        check(a.returncode == 1 and b.returncode == 1, "ranks: the gate fails (exit %d, %d)"
              % (a.returncode, b.returncode))
        ja, jb = a.stdout.decode(), b.stdout.decode()
        check("rank 2" in jb and "metrics.py:23" in jb, "ranks: the summary gate names rank 2 and its site")
        if fmt == ["--json"]:
            da, db = json.loads(ja), json.loads(jb)
            strip = lambda d: [(m.get("member"), m["pass"], m["limits"]) for m in d.get("members", [])]
            check(strip(da) == strip(db) and da["pass"] == db["pass"],
                  "ranks: per-rank verdicts and measures equal with the summaries")
    # Without -o on a terminal, and a multi-rank input without a directory: refused.
    p = run(["summarize", os.path.join(ranks, "old.zip"), "-o", os.path.join(tmp, "x.sdsum")], 2)
    check(b"-o DIR" in p.stderr, "summarize of 4 ranks into a file: asks for a directory")


def part_hostile(root, tmp):
    snap = os.path.join(root, "testdata", "basic", "v2_6_full.pickle")
    summ = os.path.join(tmp, "good.sdsum")
    if not summarize(snap, summ):
        return
    with open(summ, "rb") as f:
        good = f.read()
    env = msgpack_truth.decode(good)
    cases = {}
    newer = list(env)
    newer[1] = 2
    cases["newer"] = msgpack_truth.encode(newer)
    body = dict(env[2])
    body["strings"] = "not a list"
    cases["strings_type"] = msgpack_truth.encode([env[0], 1, body])
    body = dict(env[2])
    body["stacks"] = [[10 ** 6]]
    cases["frame_range"] = msgpack_truth.encode([env[0], 1, body])
    body = dict(env[2])
    del body["devices"]
    cases["no_devices"] = msgpack_truth.encode([env[0], 1, body])
    body = dict(env[2])
    body["host"] = 5
    cases["host_type"] = msgpack_truth.encode([env[0], 1, body])
    body = dict(env[2])
    body["host"] = {"segments": []}
    cases["host_no_blocks"] = msgpack_truth.encode([env[0], 1, body])
    body = dict(env[2])
    body["skip_actions"] = [1, 99]
    cases["skip_range"] = msgpack_truth.encode([env[0], 1, body])
    # A declared count of 2^32 - 1 strings in a few bytes: refused before any allocation.
    cases["huge_count"] = b"\x93" + msgpack_truth.encode(env[0]) + b"\x01\x81" + \
        msgpack_truth.encode("strings") + b"\xdd\xff\xff\xff\xff"
    cases["deep"] = b"\x93" + msgpack_truth.encode(env[0]) + b"\x01\x81" + \
        msgpack_truth.encode("x") + b"\x91" * 100000 + b"\xc0"
    rnd = random.Random(11)
    for k in range(40):
        cut = rnd.randrange(18, len(good))
        cases["cut%d" % k] = good[:cut]
    for k in range(80):
        b = bytearray(good)
        for _ in range(rnd.randrange(1, 4)):
            b[rnd.randrange(18, len(b))] = rnd.randrange(256)
        cases["flip%d" % k] = bytes(b)
    offset_re = re.compile(r"offset \d+|byte \d+")
    for name, data in cases.items():
        path = os.path.join(tmp, name + ".sdsum")
        with open(path, "wb") as f:
            f.write(data)
        for cmd in (["diff", path, snap, "--json"], ["dump", path]):
            p = run(cmd)
            err = p.stderr.decode()
            if name.startswith("flip") and p.returncode == 0:
                continue     # a flipped byte in a number is still a valid summary
            check(p.returncode == 2, "%s %s: exit %d (wanted 2); stderr %r"
                  % (cmd[0], name, p.returncode, err[:300]))
            lines = [x for x in err.splitlines() if "error" in x or x.startswith("snapdiff:")]
            check(len(lines) >= 1 and path in err, "%s %s: an error line naming the file: %r"
                  % (cmd[0], name, err[:300]))
            if name != "newer":
                check(bool(offset_re.search(err)) or "ends inside" in err,
                      "%s %s: the message gives a byte offset: %r" % (cmd[0], name, err[:300]))
    p = run(["diff", os.path.join(tmp, "newer.sdsum"), snap], 2)
    check(b"version 2 is newer" in p.stderr, "newer: says the version is newer: %r" % p.stderr[:200])


def part_real(root, tmp):
    real = clitest.real_snapshots(root)
    files = sorted(os.path.join(real, f) for f in os.listdir(real) if f.endswith((".pickle", ".pkl")))
    sizes = []
    for i, snap in enumerate(files):
        summ = os.path.join(tmp, "r%d.sdsum" % i)
        if not summarize(snap, summ):
            continue
        sizes.append((os.path.basename(snap), os.path.getsize(snap), os.path.getsize(summ)))
        other = files[(i + 1) % len(files)]
        if FULL:
            compare_all(snap, summ, [other])
            compare_all(snap, summ, [snap, other], keys=("stack", "function"), light=True)
            same_output(["diff", snap, other, "--json", "-d", "2"],
                        ["diff", summ, other, "--json", "-d", "2"],
                        snap, summ, "diff %s(summary) %s -d 2 --json" % (snap, other))
        else:
            compare_all(snap, summ, [other], light=True)
        check_dump(snap, summ)
    print("%-90s %10s %10s %6s" % ("snapshot", "bytes", "summary", "%"))
    for name, a, b in sizes:
        print("%-90s %10d %10d %5.1f%%" % (name, a, b, 100.0 * b / a))
    if sizes:
        print("total: %d snapshots, %.1f MiB; summaries %.1f MiB (%.1f%%)"
              % (len(sizes), sum(a for _, a, _ in sizes) / 2**20, sum(b for _, _, b in sizes) / 2**20,
                 100.0 * sum(b for _, _, b in sizes) / sum(a for _, a, _ in sizes)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("part", choices=("fixtures", "hostile", "real", "real_full"))
    a = ap.parse_args()
    T.bin = a.bin
    global FULL
    FULL = a.part == "real_full"
    part = "real" if FULL else a.part
    tmp = tempfile.mkdtemp(prefix="snapdiff-summary-")
    try:
        {"fixtures": part_fixtures, "hostile": part_hostile, "real": part_real}[part](a.root, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
