#!/usr/bin/env python3
"""CLI behaviour of the foundation: usage, errors, inputs, stats text and JSON, dump.

    python3 test_cli.py SNAPDIFF

Expected figures come from tests/truth/truth_stats.py (CPython) on the same files; the one
golden text (tests/cli/golden/stats_v2_6_full.txt) was read line by line against the fixture
script's numbers when it was made (see tests/cli/golden/README).
"""
import gzip
import json
import os
import pickle
import shutil
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_stats  # noqa: E402

BASIC = os.path.join(ROOT, "testdata", "basic")
FULL = os.path.join(BASIC, "v2_6_full.pickle")
LEGACY = os.path.join(BASIC, "legacy_1_13.pickle")

# Runs check nothing by themselves (rc=None), give bytes, never see NO_COLOR.
T = clitest.Suite(no_color=False, rc=None, text=False, timeout=60)
check, run = T.check, T.run


def one_error_line(name, r, *words):
    lines = r.stderr.decode(errors="replace").strip().splitlines()
    check(r.returncode == 2, name + " exit 2", f"exit {r.returncode}")
    check(len(lines) == 1 or (len(lines) == 2 and lines[1].startswith("Try")),
          name + " one line", repr(lines))
    text = lines[0] if lines else ""
    check(text.startswith("snapdiff: "), name + " prefix", text)
    for w in words:
        check(w in text, name + f" mentions {w!r}", text)
    check(r.stdout == b"", name + " no stdout", r.stdout[:80])


def stats_json(spec, *extra):
    r = run(["stats", "--json", *extra, spec])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_usage():
    r = run(["--help"])
    out = r.stdout.decode()
    check(r.returncode == 0, "help exit 0")
    for word in ("diff", "stats", "frag", "dump", "--json", "--max-memory", "Exit status"):
        check(word in out, f"help mentions {word}")
    r = run(["--version"])
    check(r.returncode == 0 and r.stdout.startswith(b"snapdiff "), "version", r.stdout)
    one_error_line("no args", run([]), "no snapshot")
    one_error_line("unknown option", run(["stats", "--bogus", FULL]), "--bogus")
    one_error_line("option for another command", run(["stats", "--top", "3", FULL]), "--top", "stats")
    one_error_line("missing value", run(["stats", FULL, "--max-memory"]), "--max-memory")
    one_error_line("bad size", run(["stats", "--max-memory", "lots", FULL]), "lots")
    # One snapshot has nothing to diff against: `snapdiff FILE` runs `top` (issue 19).
    r = run([FULL])
    out = r.stdout.decode() if isinstance(r.stdout, bytes) else r.stdout
    check(r.returncode == 0 and out.startswith(FULL) and "live at the end, by site:" in out,
          "snapdiff FILE runs top")


def test_command_help():
    """Each command has its own help; `snapdiff help [CMD]` is the help, never a file."""
    glob = run(["--help"]).stdout
    r = run(["help"])
    check(r.returncode == 0, "help word exit 0", r.stderr)
    check(r.stdout == glob, "help word = --help", r.stdout[:200])
    want = {"diff": ["--group-by", "--top", "--max-growth", "--json", "--format"],
            "stats": ["--json", "--jobs", "--max-memory"],
            "frag": ["--map", "--svg", "--gap-threshold", "--json"],
            "dump": ["--max-memory", "--quiet"]}
    not_for = {"diff": ["--map", "--svg"], "stats": ["--top", "--map", "--group-by"],
               "frag": ["--top", "--group-by"], "dump": ["--json", "--top", "--map"]}
    for cmd, opts in want.items():
        r = run([cmd, "--help"])
        out = r.stdout.decode()
        check(r.returncode == 0, f"{cmd} --help exit 0", r.stderr)
        check(r.stdout != glob, f"{cmd} --help is its own", out[:200])
        check(out.startswith(f"Usage: snapdiff {cmd} "), f"{cmd} --help usage", out[:80])
        for o in opts:
            check(o in out, f"{cmd} --help lists {o}", out)
        for o in not_for[cmd]:
            check(o not in out, f"{cmd} --help leaves out {o}", out)
        check("\nExample:\n  snapdiff " in out, f"{cmd} --help example", out)
        check(run([cmd, "-h"]).stdout == r.stdout, f"{cmd} -h = --help")
        check(run(["help", cmd]).stdout == r.stdout, f"help {cmd} = {cmd} --help")
        check(run(["--help", cmd]).stdout == r.stdout, f"--help {cmd} = {cmd} --help")
    # --help wins over what would be a usage error, and over files.
    check(run(["stats", "--top", "3", "--help"]).returncode == 0, "stats --top --help")
    check(run([FULL, FULL, "--help"]).stdout == glob, "diff help with files")
    one_error_line("help of no command", run(["help", "bogus"]), "bogus")


def test_not_a_pickle(tmp):
    """Inputs that are not pickles say what they look like, not which opcode they broke."""
    kinds = {
        "CMakeLists.txt": (b"cmake_minimum_required(VERSION 3.16)\nproject(x C)\n", "text"),
        "notes.txt": (b"g101 is where the memo would be\n", "text"),
        "run.log": (b"Epoch 1/10 loss=0.31\n", "text"),
        "plot.png": (b"\x89PNG\r\n\x1a\n" + bytes(32), "a PNG image"),
        "cfg.json": (b'{"segments": []}\n', "JSON"),
        "page.html": (b"<!DOCTYPE html>\n<html></html>\n", "HTML"),
        "tool": (b"\x7fELF\x02\x01\x01" + bytes(57), "an ELF binary"),
        "train.py": (b"#!/usr/bin/env python3\nimport torch\n", "a script"),
    }
    for name, (data, what) in kinds.items():
        p = os.path.join(tmp, name)
        open(p, "wb").write(data)
        for cmd in ("stats", "dump", "frag"):
            one_error_line(f"{name} {cmd}", run([cmd, p]), p + ": offset 0: ",
                           "not a pickle: looks like " + what)
    for proto in (0, 1):     # older pickles are still pickles
        p = os.path.join(tmp, f"p{proto}.pickle")
        open(p, "wb").write(pickle.dumps(pickle.loads(open(FULL, "rb").read()), proto))
        r = run(["stats", "--json", p])
        check(r.returncode == 0, f"protocol {proto} accepted", r.stderr)


def test_artifact_dir(tmp):
    """A CI artifact directory: a README and a log beside the snapshots are skipped."""
    d = os.path.join(tmp, "artifacts")
    os.mkdir(d)
    shutil.copy(FULL, os.path.join(d, "rank0.pickle"))
    shutil.copy(LEGACY, os.path.join(d, "rank1.pickle"))
    open(os.path.join(d, "README.md"), "w").write("# run 42\nsnapshots of the job\n")
    open(os.path.join(d, "train.log"), "w").write("step 1 loss 2.3\nstep 2 loss 2.1\n")
    r = run(["stats", "--json", d])
    check(r.returncode == 0, "artifact dir exit 0", r.stderr)
    if r.returncode == 0:
        srcs = [f["source"] for f in json.loads(r.stdout)["files"]]
        check(srcs == [d + "/rank0.pickle", d + "/rank1.pickle"], "artifact dir: the snapshots",
              srcs)
    err = r.stderr.decode()
    check(err == "snapdiff: note: %s: skipped 2 files that are not "
          "snapshots: README.md (text), train.log (text)\n" % d, "artifact dir note", err)
    check(run(["stats", "-q", d]).stderr == b"", "artifact dir -q")
    r = run(["frag", d])
    check(r.returncode == 0 and b"skipped 2 files" in r.stderr, "artifact dir frag", r.stderr)
    z = os.path.join(tmp, "artifacts.zip")
    with zipfile.ZipFile(z, "w") as zf:
        for name in ("rank0.pickle", "README.md", "train.log"):
            zf.write(os.path.join(d, name), name)
    r = run(["stats", z])
    check(r.returncode == 0 and b"skipped 2 files" in r.stderr, "artifact zip", r.stderr)
    one_error_line("artifact README named", run(["stats", os.path.join(d, "README.md")]),
                   "not a pickle: looks like text")
    one_error_line("artifact DIR:README", run(["stats", d + ":README.md"]), "README.md",
                   "looks like text")
    only = os.path.join(tmp, "only_docs")
    os.mkdir(only)
    open(os.path.join(only, "README.md"), "w").write("nothing here\n")
    one_error_line("dir of no snapshot", run(["stats", only]), "no snapshot", "README.md (text)")
    one = os.path.join(tmp, "one")
    os.mkdir(one)
    shutil.copy(FULL, os.path.join(one, "a.pickle"))
    open(os.path.join(one, "README.md"), "w").write("the run\n")
    r = run(["diff", one, one])
    check(r.returncode == 0, "diff of two one-snapshot dirs", r.stderr)
    # A rank that died before it wrote leaves an empty file: the others load, and the
    # note names it (issue 22: it used to abort the whole run).
    open(os.path.join(d, "rank2.pickle"), "wb").close()
    r = run(["stats", "--json", d])
    check(r.returncode == 0, "empty rank file: exit 0", r.stderr)
    err = r.stderr.decode()
    check(err == "snapdiff: note: %s: skipped 3 files that are not snapshots: README.md "
          "(text), rank2.pickle (empty), train.log (text)\n" % d, "empty rank file named", err)
    with zipfile.ZipFile(z, "a") as zf:
        zf.writestr("rank2.pickle", b"")
    r = run(["stats", z])
    check(r.returncode == 0 and b"rank2.pickle (empty)" in r.stderr, "empty zip member", r.stderr)
    # A summary among the ranks: the commands that need the snapshot itself read the
    # rest and name it; diff still takes it as a member; named, it is still refused.
    sums = os.path.join(tmp, "with_summary")
    os.mkdir(sums)
    shutil.copy(FULL, os.path.join(sums, "rank0.pickle"))
    shutil.copy(FULL, os.path.join(sums, "rank1.pickle"))
    r = run(["summarize", FULL, "-o", os.path.join(sums, "rank0.sdsum")])
    check(r.returncode == 0, "summarize into the ranks", r.stderr)
    for cmd in ("stats", "frag"):
        r = run([cmd, sums])
        check(r.returncode == 0 and r.stderr.decode() == "snapdiff: note: %s: skipped 1 file "
              "that is not a snapshot: rank0.sdsum (a snapdiff summary)\n" % sums,
              "summary among ranks: %s" % cmd, r.stderr)
    os.remove(os.path.join(sums, "rank1.pickle"))
    r = run(["trace", sums])
    check(r.returncode == 0 and b"rank0.sdsum (a snapdiff summary)" in r.stderr,
          "summary among ranks: trace reads the one snapshot", r.stderr)
    r = run(["diff", sums, sums])
    check(r.returncode == 0 and b"skipped" not in r.stderr, "summary among ranks: diff takes it",
          r.stderr)
    one_error_line("summary named in a dir", run(["stats", sums + ":rank0.sdsum"]),
                   "is a snapdiff summary")


def test_manners():
    """Typos get the nearest name; a command after the files says the command comes first;
    a command's help keeps only its own words (issue 22)."""
    one_error_line("typo option", run(["--josn", FULL, FULL]),
                   "unknown option '--josn'; did you mean '--json'?")
    one_error_line("far option", run(["--zzzzzz", FULL, FULL]), "unknown option '--zzzzzz'")
    r = run(["--zzzzzz", FULL, FULL])
    check(b"did you mean" not in r.stderr, "no suggestion for a far option", r.stderr)
    one_error_line("typo command", run(["stast", FULL]),
                   "unknown command 'stast'; did you mean 'stats'?")
    one_error_line("command after file", run([FULL, "stats"]),
                   "'stats' is a command: the command comes first")
    r = run(["help", "diff"])
    out = r.stdout.decode()
    check(r.returncode == 0 and "check: text, json, github or junit" not in out
          and "series, trace:" not in out and "JUnit" not in out, "help diff: diff's only", out)
    r = run(["help", "check"])
    check(b"--format FMT           text, json, github or junit" in r.stdout,
          "help check: its formats", r.stdout)


def many_blocks_snapshot(n_a, n_b):
    """n_a blocks allocated at a.py:1 and n_b at b.py:2 (1 MiB each), in one segment each;
    max_split_size 128 MiB."""
    def frames(fn, line):
        return [{"filename": "/home/u/proj/" + fn, "line": line, "name": "f"},
                {"filename": "/home/u/proj/train.py", "line": 9, "name": "<module>"}]
    segs = []
    base = 0x7F0000000000
    for k, (count, st) in enumerate(((n_a, frames("a.py", 1)), (n_b, frames("b.py", 2)))):
        addr = base + k * (1 << 40)
        blocks = [{"address": addr + i * (1 << 20), "size": 1 << 20, "requested_size": 1 << 20,
                   "state": "active_allocated", "frames": st} for i in range(count)]
        segs.append({"device": 0, "address": addr, "total_size": count << 20,
                     "allocated_size": count << 20, "active_size": count << 20,
                     "requested_size": count << 20, "stream": 0, "segment_type": "large",
                     "segment_pool_id": (0, 0), "is_expandable": False, "frames": st,
                     "blocks": blocks})
    return {"segments": segs, "device_traces": [[]],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:128",
                                   "max_split_size": 128 << 20,
                                   "garbage_collection_threshold": 0.0,
                                   "expandable_segments": False}}


def test_number_formats(tmp):
    """One number formatter: thousands separators on counts, binary units for sizes in
    text, exact bytes in JSON; every table has its header."""
    old = os.path.join(tmp, "many_old.pickle")
    new = os.path.join(tmp, "many_new.pickle")
    open(old, "wb").write(pickle.dumps(many_blocks_snapshot(800, 1200), 4))
    open(new, "wb").write(pickle.dumps(many_blocks_snapshot(5061, 10), 4))
    out = run(["stats", new]).stdout.decode()
    check("  blocks              5,071\n" in out, "stats: blocks 5,071", out)
    check("max_split_size=128.0 MiB" in out, "stats: max_split_size in MiB", out)
    check("5071" not in out, "stats: no bare count", out)
    j = stats_json(new)
    check(j["total"]["blocks"] == 5071, "stats JSON: exact", j["total"])
    r = run([old, new])
    out = r.stdout.decode()
    check("5,061 (+4,261)" in out, "diff: block counts", out)
    check("10 (-1,190)" in out, "diff: shrinking counts", out)
    check("live blocks: 810 kept, 4,261 new, 1,190 freed" in out, "diff: live blocks", out)
    lines = out.splitlines()
    for title in ("Growth by site", "Shrinking"):
        at = [i for i, ln in enumerate(lines) if ln.startswith(title)]
        check(len(at) == 1, f"diff: {title} table", out)
        if at:
            check(lines[at[0] + 1].split() ==
                  ["delta", "new", "blocks", "site"], f"diff: {title} header", lines[at[0] + 1])
    j = json.loads(run([old, new, "--json"]).stdout)
    g = [x for x in j["groups"] if x["key"].startswith("/home/u/proj/a.py")]
    check(len(g) == 1 and g[0]["new_blocks"] == 5061 and g[0]["delta_bytes"] == 4261 << 20,
          "diff JSON: full paths, exact counts", g)
    out = run([old, new, "--format", "folded"]).stdout.decode()
    check(out == "<module> (train.py:9);f (a.py:1) %d\n" % (4261 << 20), "folded: display paths",
          out)


def test_stats_figures():
    for name in sorted(os.listdir(BASIC)):
        path = os.path.join(BASIC, name)
        got = stats_json(path)
        want = truth_stats.stats(truth_stats.load(path))
        check(got["schema"] == "snapdiff.stats/1", f"stats {name} schema")
        check(got["devices"] == want["devices"] and got["total"] == want["total"],
              f"stats {name} figures", json.dumps(got["total"]))
    got = stats_json(LEGACY)
    check(got["layout"] == "list", "legacy layout named")
    got = stats_json(FULL)
    check(got["allocator_settings"]["max_split_size"] == 512 << 20, "settings kept")


def test_stats_text_golden():
    r = run(["stats", FULL])
    want = open(os.path.join(HERE, "golden", "stats_v2_6_full.txt")).read()
    got = r.stdout.decode().replace(FULL, "FILE")
    check(got == want, "stats text golden", "\n" + got)
    check(b"\x1b[" not in r.stdout, "no colour when piped")
    r = run(["stats", "--color", FULL])
    check(b"\x1b[1m" in r.stdout, "--color forces colour")
    r = run(["stats", "--color", "--no-color", FULL])
    check(b"\x1b[" not in r.stdout, "--no-color wins when last")


def test_inputs(tmp):
    raw = open(FULL, "rb").read()
    want = stats_json(FULL)["total"]
    r = run(["stats", "--json", "-"], stdin=raw)
    check(r.returncode == 0 and json.loads(r.stdout)["total"] == want, "stdin", r.stderr)
    gz = os.path.join(tmp, "x.pickle.gz")
    open(gz, "wb").write(gzip.compress(raw))
    r = run(["stats", "--json", "-"], stdin=gzip.compress(raw))
    check(r.returncode == 0 and json.loads(r.stdout)["total"] == want, "gzip on stdin", r.stderr)
    check(stats_json(gz)["total"] == want, "gzip file")
    z = os.path.join(tmp, "ranks.zip")
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("rank0.pickle", raw)
        zf.writestr("rank1.pickle.gz", gzip.compress(open(LEGACY, "rb").read()))
    doc = stats_json(z)
    check(len(doc.get("files", [])) == 2, "zip of ranks: one document with a list", doc.keys())
    check(doc["files"][1]["source"] == z + ":rank1.pickle.gz", "zip members named",
          doc["files"][1]["source"])
    check(stats_json(z + ":rank0.pickle")["total"] == want, "zip member pick")
    d = os.path.join(tmp, "dir")
    os.mkdir(d)
    shutil.copy(FULL, os.path.join(d, "a.pickle"))
    shutil.copy(LEGACY, os.path.join(d, "b.pickle"))
    doc = stats_json(d)
    check([f["source"] for f in doc["files"]] == [d + "/a.pickle", d + "/b.pickle"], "directory",
          doc)
    one_error_line("missing member", run(["stats", z + ":nope.pickle"]), "nope.pickle")
    one_error_line("missing file", run(["stats", os.path.join(tmp, "absent.pickle")]), "absent.pickle")
    one_error_line("diff of a multi-member zip", run([z, FULL]), "MEMBER")


def test_refusals(tmp):
    marker = os.path.join(tmp, "MARKER")

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    for proto in (0, 2, 4):
        p = os.path.join(tmp, f"evil{proto}.pickle")
        open(p, "wb").write(pickle.dumps({"segments": [Evil()]}, protocol=proto))
        for cmd in ("stats", "dump"):
            r = run([cmd, p])
            one_error_line(f"os.system p{proto} {cmd}", r, "refused", "offset", p)
    check(not os.path.exists(marker), "nothing ran")
    p = os.path.join(tmp, "notsnap.pickle")
    open(p, "wb").write(pickle.dumps({"a": 1}, 4))
    one_error_line("not a snapshot", run(["stats", p]), "not a memory snapshot")
    r = run(["dump", p])
    check(r.returncode == 0 and json.loads(r.stdout) == {"a": 1}, "dump of any plain pickle")
    t = os.path.join(tmp, "trunc.pickle")
    open(t, "wb").write(open(FULL, "rb").read()[:700])
    one_error_line("truncated", run(["stats", t]), "offset", "truncated")
    e = os.path.join(tmp, "empty.pickle")
    open(e, "wb").close()
    one_error_line("empty file", run(["stats", e]), "empty")


def test_trailing_and_warnings(tmp):
    p = os.path.join(tmp, "padded.pickle")
    open(p, "wb").write(open(FULL, "rb").read() + b"\0\0\0")
    r = run(["stats", "--json", p])
    check(r.returncode == 0, "trailing bytes: exit 0", r.stderr)
    check(b"after the pickle's STOP" in r.stderr, "trailing bytes: a note", r.stderr)
    r = run(["stats", "-q", "--json", p])
    check(r.stderr == b"", "-q silences it", r.stderr)


def test_dump():
    r = run(["dump", FULL])
    obj = truth_stats.load(FULL)
    check(json.loads(r.stdout) == json.loads(json.dumps(obj)), "dump equals json.dumps")
    r = run(["dump", FULL, "--json"])
    one_error_line("dump --json", r, "--json")


def test_gate():
    ex = os.path.join(ROOT, "testdata", "example")
    old, new = os.path.join(ex, "old.pickle"), os.path.join(ex, "new.pickle")
    # The bundled pair grew by 201.0 MiB (allocated 555.0 -> 756.0 MiB, see truth_stats).
    grew = (truth_stats.stats(truth_stats.load(new))["total"]["allocated_bytes"] -
            truth_stats.stats(truth_stats.load(old))["total"]["allocated_bytes"])
    check(grew == 201 << 20, "gate fixture grew", grew)
    r = run([old, new, "--max-growth", "200MiB"])
    check(r.returncode == 1, "gate fails: exit 1", r.returncode)
    check(b"train.py:88" in r.stdout, "gate fails: report still written")
    check(r.stderr.decode().strip().startswith("snapdiff: check failed"),
          "gate fails: one line why", r.stderr)
    r = run([old, new, "--max-growth", "201MiB"])
    check(r.returncode == 0, "gate passes at exactly the growth", r.stderr)
    r = run([old, old, "--max-growth", "0"])
    check(r.returncode == 0, "gate 0: no growth passes", r.stderr)
    r = run([old, new, "--max-growth", "0", "--json"])
    check(r.returncode == 1 and json.loads(r.stdout)["schema"] == "snapdiff.diff/1",
          "gate with --json")
    one_error_line("gate on stats", run(["stats", "--max-growth", "1GiB", old]), "--max-growth")


def main():
    T.bin = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        test_usage()
        test_command_help()
        test_not_a_pickle(tmp)
        test_artifact_dir(tmp)
        test_manners()
        test_number_formats(tmp)
        test_stats_figures()
        test_stats_text_golden()
        test_inputs(tmp)
        test_refusals(tmp)
        test_trailing_and_warnings(tmp)
        test_dump()
        test_gate()
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
