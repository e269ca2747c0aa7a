#!/usr/bin/env python3
"""torch 2.14's newer snapshot keys through the CLI, against CPython's figures.

    test_torch214_cli.py SNAPDIFF

testdata/basic/v2_14_host.pickle and v2_14_skip.pickle (testdata/make_fixtures.py, v2_14):
  * pinned host memory (host_segments, host_traces) is its own section in stats, top and
    the report, with tests/truth/truth_stats.py's figures, and no device figure or total moves
    (the devices equal those of the same snapshot without the host keys, computed by
    CPython);
  * the annotate entry is counted as annotate, never as an alloc or a free;
  * skip_actions: stats and trace --json say which actions were skipped and which figures
    that makes unreliable (the table in truth_stats.py); text prints it as a warning;
    a snapshot that does not record skip_actions says null, never [].
"""
import copy
import json
import os
import re
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_stats  # noqa: E402

T = clitest.Suite()
check, run, run_json = T.check, T.run, T.run_json
BASIC = os.path.join(clitest.ROOT, "testdata", "basic")
HOST = os.path.join(BASIC, "v2_14_host.pickle")
SKIP = os.path.join(BASIC, "v2_14_skip.pickle")
OLD = os.path.join(BASIC, "v2_6_full.pickle")


def host_truth(snap):
    return truth_stats.stats(snap)["host"]


def part_stats():
    snap = truth_stats.load(HOST)
    want = truth_stats.stats(snap)
    doc = run_json(["stats", HOST])
    if not doc:
        return
    check(want["host"] is not None, "truth: the fixture has a host section")
    check(doc.get("host") == want["host"], "stats --json host", (doc.get("host"), want["host"]))
    # without the host keys CPython gets the same devices and total: host is in neither
    bare = copy.deepcopy(snap)
    del bare["host_segments"], bare["host_traces"]
    want_bare = truth_stats.stats(bare)
    check(doc["devices"] == want_bare["devices"], "stats --json: devices as without host memory")
    check(doc["total"] == want_bare["total"], "stats --json: total as without host memory",
          (doc["total"]["reserved_bytes"], want_bare["total"]["reserved_bytes"]))
    check(doc["host"]["reserved_bytes"] not in (0, doc["total"]["reserved_bytes"]),
          "fixture: host reserved differs from the device total (else the check proves nothing)")
    # the annotate entry: its own action, not an alloc
    acts = doc["devices"][0]["trace_actions"]
    n_alloc = sum(1 for e in snap["device_traces"][0] if e["action"] == "alloc")
    check(acts.get("annotate") == 1 and acts.get("alloc") == n_alloc,
          "stats --json: annotate counted apart from alloc", acts)
    # text: the section's figures in binary units
    out = run(["stats", HOST]).stdout
    m = re.search(r"pinned host memory.*\n  reserved +(\S+ \S+)  in (\d+) segments?.*\n"
                  r"  allocated +(\S+ \S+)", out)
    check(m is not None, "stats text: a pinned host memory section", out[-600:])
    if m:
        check(m.group(2) == str(want["host"]["segments"]), "stats text: host segments", m.group(2))
        check(m.group(1) == "%.1f MiB" % (want["host"]["reserved_bytes"] / (1 << 20)),
              "stats text: host reserved", m.group(1))
        check(m.group(3) == "%.1f MiB" % (want["host"]["allocated_bytes"] / (1 << 20)),
              "stats text: host allocated", m.group(3))
    # a snapshot without host keys: host null, no section
    old = run_json(["stats", OLD])
    check(old and old.get("host") is None, "stats --json: host null without host keys")
    check("pinned host" not in run(["stats", OLD]).stdout, "stats text: no host section without it")


def part_top():
    snap = truth_stats.load(HOST)
    want = host_truth(snap)
    n_blocks = sum(1 for s in snap["host_segments"] for b in s["blocks"]
                   if b["state"] == "active_allocated")
    doc = run_json(["top", HOST])
    if doc:
        h = doc.get("host") or {}
        check(h.get("allocated_bytes") == want["allocated_bytes"], "top --json host allocated", h)
        check(h.get("reserved_bytes") == want["reserved_bytes"], "top --json host reserved", h)
        check(h.get("blocks") == n_blocks and h.get("segments") == want["segments"],
              "top --json host blocks and segments", h)
        # the devices' live memory is the device blocks' alone
        for d, wd in zip(doc["devices"], truth_stats.stats(snap)["devices"]):
            check(d["allocated_bytes"] == wd["allocated_bytes"],
                  "top --json device %s allocated: no host bytes" % d["device"])
    out = run(["top", HOST]).stdout
    check("pinned host memory: %.1f MiB allocated in %d blocks" %
          (want["allocated_bytes"] / (1 << 20), n_blocks) in out, "top text: the host line",
          out[-400:])
    old = run_json(["top", OLD])
    check(old and old.get("host") is None, "top --json: host null without host keys")


def part_annotate():
    """trace: the annotate entry opens a phase named by its user_metadata, and counts as
    no alloc or free."""
    snap = truth_stats.load(HOST)
    tr = snap["device_traces"][0]
    ann = [e for e in tr if e["action"] == "annotate"]
    doc = run_json(["trace", HOST])
    if not doc:
        return
    d0 = doc["devices"][0]
    ph = [p for p in d0["phases"] if p["kind"] == "annotate"]
    check([p["name"] for p in ph] == [e["user_metadata"] for e in ann],
          "trace --json: annotate phases named by user_metadata", ph)
    check(ph and ph[0]["first_entry"] == tr.index(ann[0]), "trace --json: the phase starts at the entry")
    check(d0["alloc_count"] == sum(1 for e in tr if e["action"] == "alloc") and
          d0["actions"].get("annotate") == len(ann), "trace --json: annotate is no alloc", d0["actions"])
    out = run(["trace", HOST]).stdout
    check("annotate " + ann[0]["user_metadata"] in out, "trace text: the annotation shown")


def part_skip():
    for path in (HOST, SKIP, OLD):
        want = truth_stats.skip_actions(truth_stats.load(path))
        for cmd in ("stats", "trace"):
            doc = run_json([cmd, path])
            if doc:
                check(doc.get("skip_actions", "absent") == want, "%s --json skip_actions of %s"
                      % (cmd, os.path.basename(path)), (doc.get("skip_actions", "absent"), want))
    want = truth_stats.skip_actions(truth_stats.load(SKIP))
    check(want["actions"] == ["free_requested", "free_completed"] and
          "leak and lifetime figures from the trace" in want["unreliable"],
          "truth: free_* skipped makes the leak figures unreliable", want)
    check(truth_stats.skip_actions(truth_stats.load(OLD)) is None,
          "truth: a snapshot without skip_actions says nothing")
    # other lists, written here: one free skipped is not the frees gone; unknown names
    import pickle
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for skip in (["free_requested"], ["alloc", "mystery_action"], ["oom", "annotate"]):
            snap = truth_stats.load(SKIP)
            snap["allocator_settings"]["skip_actions"] = skip
            path = os.path.join(tmp, "skip.pickle")
            with open(path, "wb") as f:
                pickle.dump(snap, f, protocol=4)
            want = truth_stats.skip_actions(snap)
            doc = run_json(["stats", path])
            check(doc and doc.get("skip_actions") == want, "stats --json skip_actions %s" % skip,
                  (doc or {}).get("skip_actions"), want)
            if skip == ["free_requested"]:
                check("leak and lifetime figures from the trace" not in want["unreliable"],
                      "truth: free_completed still releases blocks", want)
    want = truth_stats.skip_actions(truth_stats.load(SKIP))
    p = run(["trace", SKIP])
    line = "warning: the recording skipped free_requested, free_completed (skip_actions): " \
           "unreliable: " + ", ".join(want["unreliable"])
    check(line in p.stdout, "trace text: the skip warning", p.stdout[:400])
    check(line.replace("warning: ", "") in p.stderr, "the load warning on stderr", p.stderr)
    p = run(["stats", HOST])
    check("skip_actions" not in p.stdout + p.stderr,
          "nothing skipped (skip_actions []): no warning", p.stderr)


def part_report(tmp):
    out = os.path.join(tmp, "host.html")
    run(["report", HOST, "-o", out])
    page = open(out, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="sd-stats">(.*?)</script>', page, re.S)
    check(m is not None, "report: the stats document is embedded")
    if m:
        got = json.loads(m.group(1).replace("<\\/", "</"))
        check(got.get("host") == host_truth(truth_stats.load(HOST)), "report: embedded host figures")
    check("drawHost" in page and "Pinned host memory" in page, "report: the host section's script")


def main():
    T.bin = os.path.abspath(sys.argv[1])
    import tempfile
    part_stats()
    part_top()
    part_skip()
    part_annotate()
    with tempfile.TemporaryDirectory() as tmp:
        part_report(tmp)
    sys.exit(T.finish("torch214_cli"))


if __name__ == "__main__":
    main()
