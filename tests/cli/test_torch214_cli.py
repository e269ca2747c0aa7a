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
    a snapshot that does not record skip_actions says null, never [];
  * pool_id per trace entry: trace's per-pool figures as CPython counts them, null when no
    entry records one; a malformed pool_id is one error line, exit 2;
  * diff and series show the host section (old/new/delta; per snapshot), never in a
    device figure or total.
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


def pools_truth(trace):
    """Per pool_id, over a device's whole trace: entries, allocs, their bytes, segment
    bytes (segment_alloc, segment_map), and the blocks allocated in it still live at its
    end (released by the first free_requested or free_completed). None when no entry
    records a pool_id."""
    pools, live, without = {}, {}, 0
    for e in trace:
        pid = e.get("pool_id")
        if e["action"] == "alloc":
            live[e["addr"]] = (e["size"], pid)
        elif e["action"] in ("free_requested", "free_completed"):
            live.pop(e["addr"], None)
        if pid is None:
            without += 1
            continue
        p = pools.setdefault(tuple(pid), {"pool_id": list(pid), "private": tuple(pid) != (0, 0),
                                          "entries": 0, "alloc_count": 0, "alloc_bytes": 0,
                                          "segment_bytes": 0, "alive_count": 0,
                                          "alive_bytes": 0})
        p["entries"] += 1
        if e["action"] == "alloc":
            p["alloc_count"] += 1
            p["alloc_bytes"] += e["size"]
        elif e["action"] in ("segment_alloc", "segment_map"):
            p["segment_bytes"] += e["size"]
    for size, pid in live.values():
        if pid is not None:
            pools[tuple(pid)]["alive_count"] += 1
            pools[tuple(pid)]["alive_bytes"] += size
    return (list(pools.values()) or None), without


def part_pools(tmp):
    """pool_id per trace entry: trace --json's per-pool figures against CPython's; absent
    means unknown (null), never the default pool; a malformed one is one error, exit 2."""
    snap = truth_stats.load(HOST)
    doc = run_json(["trace", HOST])
    if doc:
        for d in doc["devices"]:
            want, without = pools_truth(snap["device_traces"][d["device"]])
            check(d.get("pools") == want, "trace --json pools, device %d" % d["device"],
                  (d.get("pools"), want))
            check(d.get("entries_without_pool_id") == without,
                  "trace --json entries_without_pool_id, device %d" % d["device"])
        check(any(p["private"] and p["alive_bytes"] for d in doc["devices"]
                  for p in d["pools"] or []), "fixture: a private pool holds live bytes")
    old = run_json(["trace", OLD])
    check(old and all(d["pools"] is None for d in old["devices"]),
          "trace --json: pools null without pool_id")
    out = run(["trace", HOST]).stdout
    check("(1, 7) private" in out and "1 entry records no pool_id" in out,
          "trace text: the private pool's row", out[:1500])
    p = run(["replay", HOST])
    check("does not add up" not in p.stderr, "replay: the pools add up", p.stderr)
    import pickle
    # replay: device 1's MemPool (0, 3) makes a segment and gives it back, so no segment
    # of the snapshot names the pool: only the entries' pool_id keeps the 4 KiB alloc out
    # of the default pool's cached block, where the allocator did not put it.
    bare = truth_stats.load(HOST)
    for dev in bare["device_traces"]:
        for e in dev:
            e.pop("pool_id", None)
    bare_path = os.path.join(tmp, "nopool.pickle")
    with open(bare_path, "wb") as f:
        pickle.dump(bare, f, protocol=4)
    fid = lambda path: (run_json(["replay", path]) or {"devices": [{}, {}]})["devices"][1].get("fidelity", {})
    with_pool, without = fid(HOST), fid(bare_path)
    check(with_pool.get("placements_matched") == with_pool.get("placements_checked") == 2 and
          without.get("placements_matched") == 1,
          "replay: the MemPool alloc placed by its pool_id (2 of 2), inferred without it (1 of 2)",
          (with_pool, without))
    for bad, what in (((1,), "should be a pair of integers"), ((1, "x"), "should be an integer"),
                      (7, "should be a pair of integers")):
        s = truth_stats.load(HOST)
        s["device_traces"][0][2]["pool_id"] = bad
        path = os.path.join(tmp, "badpool.pickle")
        with open(path, "wb") as f:
            pickle.dump(s, f, protocol=4)
        r = run(["stats", path], rc=2)
        lines = r.stderr.strip().splitlines()
        check(len(lines) == 1 and path in lines[0] and "offset" in lines[0] and
              "'pool_id' " + what in lines[0], "malformed pool_id %r: one clear error" % (bad,),
              r.stderr)
    many_pools(tmp)


def many_pools(tmp):
    """A hostile trace that names 70,000 pools in turn: looked up by hash (the load stays
    fast), warned about past SD_SNAPSHOT_MAX_POOLS, and the text's pool table is cut."""
    import pickle
    import time
    n, pools = 200000, 70000
    trace = [{"action": "alloc", "addr": 0x7F0000000000 + i * 512, "size": 512, "stream": 0,
              "time_us": i, "frames": [], "pool_id": (i % pools + 1, 0)} for i in range(n)]
    path = os.path.join(tmp, "manypools.pickle")
    with open(path, "wb") as f:
        pickle.dump({"segments": [], "device_traces": [trace]}, f, protocol=4)
    t0 = time.monotonic()
    p = run(["trace", path])
    took = time.monotonic() - t0
    # a scan of the pools per entry costs entries x pools; the hash lookup, under a second unloaded
    check(took < 30, "70,000 pools: trace in %.1f s" % took)
    check("more than 65535 pool ids" in p.stderr, "70,000 pools: one warning", p.stderr[:300])
    rows = [ln for ln in p.stdout.splitlines() if ln.strip().endswith(("private", "default"))
            or " private " in ln]
    check(len(rows) <= 20 and "(65,515 more pools; --json lists them all)" in p.stdout,
          "70,000 pools: the text shows 20 rows and says how many more", len(rows))
    doc = run_json(["trace", path])
    check(doc and len(doc["devices"][0]["pools"]) == 65535,
          "70,000 pools: the JSON lists the 65,535 it kept")


def grown_host(tmp):
    """HOST with one more pinned host segment, live (a second run that pinned more)."""
    import pickle
    snap = truth_stats.load(HOST)
    seg = copy.deepcopy(snap["host_segments"][2])
    seg["address"] += 64 << 20
    seg["blocks"][0]["address"] = seg["address"]
    snap["host_segments"].append(seg)
    path = os.path.join(tmp, "host_grown.pickle")
    with open(path, "wb") as f:
        pickle.dump(snap, f, protocol=4)
    return path, snap


def host_side(h):
    """CPython's host figures as the diff's sides name them; None (unknown, not zero) when
    the file recorded no host memory."""
    keys = ("allocated", "reserved", "active", "requested", "pending_free")
    return {k: h[k + "_bytes"] for k in keys} if h else None


def part_diff_series(tmp):
    """diff and series: the host section old/new/delta, in no device figure or total."""
    grown, gsnap = grown_host(tmp)
    cases = ((OLD, HOST, truth_stats.load(OLD), truth_stats.load(HOST)),
             (HOST, grown, truth_stats.load(HOST), gsnap),
             (OLD, OLD, truth_stats.load(OLD), truth_stats.load(OLD)))
    for old, new, so, sn in cases:
        what = "diff %s %s" % (os.path.basename(old), os.path.basename(new))
        doc = run_json(["diff", old, new])
        if not doc:
            continue
        ho, hn = host_truth(so), host_truth(sn)
        if ho is None and hn is None:
            check(doc.get("host", "absent") is None, what + " --json: host null without host keys")
            check("pinned host" not in run(["diff", old, new, "--no-color"]).stdout,
                  what + " text: no host rows")
            continue
        h = doc.get("host") or {}
        want_o, want_n = host_side(ho), host_side(hn)
        check(h.get("in_old") == (ho is not None) and h.get("in_new") == (hn is not None),
              what + " --json: host in_old, in_new", h)
        check(h.get("old") == want_o and h.get("new") == want_n, what + " --json: host sides",
              (h.get("old"), h.get("new"), want_o, want_n))
        keys = ("allocated", "reserved", "active", "requested", "pending_free")
        check(all(h.get(k + "_delta") == (want_n[k] - want_o[k] if want_o and want_n else None)
                  for k in keys), what + " --json: host deltas (null when a side did not record it)", h)
        # the device totals are the devices' alone
        wt_o, wt_n = truth_stats.stats(so)["total"], truth_stats.stats(sn)["total"]
        check(doc["old"]["reserved"] == wt_o["reserved_bytes"] and
              doc["new"]["reserved"] == wt_n["reserved_bytes"] and
              doc["totals"]["allocated_delta"] == wt_n["allocated_bytes"] - wt_o["allocated_bytes"],
              what + " --json: totals without host memory")
        out = run(["diff", old, new, "--no-color"]).stdout
        fig = r"(-|\S+ \S+)"
        m = re.search(r"  pinned host memory.*\n  allocated +%s +%s +%s\n"
                      r"  reserved +%s +%s +%s" % ((fig,) * 6), out)
        check(m is not None, what + " text: the host rows", out[:900])
        if m:
            mib = lambda v: "-" if v is None else "%.1f MiB" % (v / (1 << 20)) if v else "0 B"
            al = lambda side: side and side["allocated"]
            rs = lambda side: side and side["reserved"]
            check(m.group(1) == mib(al(want_o)) and m.group(2) == mib(al(want_n)) and
                  m.group(4) == mib(rs(want_o)) and m.group(5) == mib(rs(want_n)),
                  what + " text: host figures, '-' for a side that did not record it", m.groups())
            check((m.group(3) == "-") == (want_o is None or want_n is None),
                  what + " text: no host change when a side did not record it", m.groups())
    # series: each snapshot's host figures (null where it has none); totals without them
    files = [OLD, HOST, grown]
    snaps = [truth_stats.load(OLD), truth_stats.load(HOST), gsnap]
    doc = run_json(["series"] + files)
    if doc:
        for s, snap in zip(doc["snapshots"], snaps):
            h = host_truth(snap)
            want = None if h is None else {"allocated": h["allocated_bytes"],
                                           "reserved": h["reserved_bytes"]}
            check(s.get("host", "absent") == want, "series --json host of %s" % s["source"],
                  (s.get("host"), want))
            check(s["reserved"] == truth_stats.stats(snap)["total"]["reserved_bytes"],
                  "series --json reserved of %s: devices only" % s["source"])
    out = run(["series"] + files + ["--no-color"]).stdout
    hl, gh = host_truth(snaps[1]), host_truth(gsnap)
    line = "pinned host memory (host_segments: in neither figure above): allocated %.1f MiB -> " \
           "%.1f MiB, reserved %.1f MiB -> %.1f MiB (in 2 of 3 snapshots)" % (
               hl["allocated_bytes"] / (1 << 20), gh["allocated_bytes"] / (1 << 20),
               hl["reserved_bytes"] / (1 << 20), gh["reserved_bytes"] / (1 << 20))
    check(line in out, "series text: the host line", out[:800])
    old = run_json(["series", OLD, OLD, OLD])
    check(old and all(s["host"] is None for s in old["snapshots"]), "series --json: host null")


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
        part_pools(tmp)
        part_diff_series(tmp)
    sys.exit(T.finish("torch214_cli"))


if __name__ == "__main__":
    main()
