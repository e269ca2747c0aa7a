#!/usr/bin/env python3
"""Behaviour tests of `snapdiff OLD NEW` against tests/truth/truth_diff.py and hand-worked figures.

    test_diff_cli.py --bin SNAPDIFF --root REPO PART

PART is one of:
  fixtures  the scenarios of testdata/make_leak_fixtures.py: self-diff, address churn,
            the hidden leak (top group, per step, steps to capacity to the byte and step),
            the oom capacity estimate, several devices, the 1.13 layout, attribution cases,
            hide/show/focus/depth and every group-by key against the Python truth
  json      --json: the snapdiff.diff/1 schema, keys and types
  folded    --format folded sums: live bytes of one file, growth of two
  errors    bad patterns and inputs: one message, exit 2; --jobs
  real      every snapshot of ../shared/real-snapshots with itself and with its neighbour,
            site, leaf and stack keys, every group's bytes and blocks against the Python truth
            (exit 77 = skipped when the directory is absent)
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_diff  # noqa: E402

T = clitest.Suite()
check, run, run_json = T.check, T.run, T.run_json


_loaded = {}


def load(path):
    if path not in _loaded:
        _loaded[path] = truth_diff.load(path)
    return _loaded[path]


def compare_with_truth(old, new, extra=(), by="site", depth=0, hide=(), show=(), focus=()):
    """Every group's bytes and blocks, the order, and the totals, against truth_diff."""
    args = [old, new, "--group-by", by] + list(extra)
    if depth:
        args += ["--depth", str(depth)]
    for flag, pats in (("--hide", hide), ("--show", show), ("--focus", focus)):
        for p in pats:
            args += [flag, p]
    doc = run_json(args)
    if doc is None:
        return None
    want = truth_diff.compute(load(old), load(new), by, depth, hide, show, focus)
    tag = "%s %s [%s]" % (os.path.basename(old), os.path.basename(new), " ".join(args[2:]))
    got = {(g["key"], g["device"]): [g["old_bytes"], g["old_blocks"], g["new_bytes"], g["new_blocks"],
                      g["old_requested_bytes"], g["new_requested_bytes"]]
           for g in doc["groups"]}
    check(len(got) == len(doc["groups"]), tag + ": duplicate group keys")
    for k, v in want["groups"].items():
        check(got.get(k) == v, "%s: group %r: snapdiff %s, truth %s"
              % (tag, str(k)[:120], got.get(k), v))
    for k in got:
        check(k in want["groups"], "%s: group %r not in truth" % (tag, str(k)[:120]))
    check([(g["key"], g["device"]) for g in doc["groups"]] == want["order"],
          tag + ": group order differs")
    for g in doc["groups"]:
        ok = (g["delta_bytes"] == g["new_bytes"] - g["old_bytes"]
              and g["delta_blocks"] == g["new_blocks"] - g["old_blocks"]
              and g["delta_requested_bytes"] == g["new_requested_bytes"] - g["old_requested_bytes"])
        check(ok, tag + ": delta of %r is not new - old" % g["key"][:80])
    t = doc["totals"]
    for name in ("allocated", "reserved", "active", "requested", "pending_free"):
        check(t[name + "_delta"] == want["new"][name] - want["old"][name],
              "%s: %s_delta %s, truth %s" % (tag, name, t[name + "_delta"],
                                             want["new"][name] - want["old"][name]))
        check(doc["old"][name] == want["old"][name] and doc["new"][name] == want["new"][name],
              "%s: %s old/new differ from truth" % (tag, name))
    for name in ("blocks_kept", "blocks_new", "blocks_freed"):
        check(t[name] == want[name], "%s: %s %s, truth %s" % (tag, name, t[name], want[name]))
    if not focus:
        total = sum(g["delta_bytes"] for g in doc["groups"])
        check(total == t["allocated_delta"] == t["groups_delta"],
              tag + ": groups do not add up to the allocated delta")
    devs = {str(d["device"]): d for d in doc["devices"]}
    check(sorted(devs) == sorted(want["devices"]), tag + ": device list differs")
    for dev, w in want["devices"].items():
        d = devs.get(dev)
        if d is None:
            continue
        check(d["in_old"] == (w["old"] is not None) and d["in_new"] == (w["new"] is not None),
              tag + ": device %s presence" % dev)
        for side in ("old", "new"):
            if w[side] is not None:
                check(d[side]["allocated"] == w[side]["allocated"],
                      tag + ": device %s %s allocated" % (dev, side))
    return doc


# ---------------------------------------------------------------------------------------------

def part_fixtures():
    L = os.path.join(ROOT, "testdata", "leak")
    E = os.path.join(ROOT, "testdata", "example")
    exp = json.load(open(os.path.join(L, "expected.json")))
    c = exp["churn"]
    old, new = os.path.join(L, "churn_old.pickle"), os.path.join(L, "churn_new.pickle")

    # A file diffed with itself: every delta zero, exit 0, "no growth".
    for f in sorted(os.listdir(L)) + ["../example/new.pickle"]:
        if not f.endswith(".pickle"):
            continue
        p = os.path.join(L, f)
        doc = compare_with_truth(p, p)
        if doc:
            check(all(g["delta_bytes"] == 0 and g["delta_blocks"] == 0 for g in doc["groups"]),
                  f + " vs itself: a group changed")
            t = doc["totals"]
            check(all(t[k] == 0 for k in t if k.endswith("_delta")), f + " vs itself: totals")
            check(t["blocks_new"] == 0 and t["blocks_freed"] == 0, f + " vs itself: blocks")
        txt = run([p, p]).stdout
        check("No growth" in txt, f + " vs itself: text does not say no growth")

    # Address churn: the same live set elsewhere is not growth.
    mo, mn = os.path.join(L, "move_old.pickle"), os.path.join(L, "move_new.pickle")
    doc = compare_with_truth(mo, mn)
    if doc:
        check(all(g["delta_bytes"] == 0 for g in doc["groups"]), "move: a group grew")
        check(doc["totals"]["allocated_delta"] == 0, "move: allocated delta")
        check(doc["totals"]["blocks_kept"] == 0 and doc["totals"]["blocks_new"] == 12
              and doc["totals"]["blocks_freed"] == 12, "move: new/freed/kept")
    check("No growth" in run([mo, mn]).stdout, "move: text does not say no growth")

    # The leak hidden in churn: top group, per step and steps to capacity, exact.
    doc = compare_with_truth(old, new, ["--steps", "50", "--capacity", "1GiB"])
    if doc:
        top = doc["groups"][0]
        check(top["key"] == c["top_key"], "churn: top group is %r" % top["key"])
        check(top["delta_bytes"] == c["top_delta"] and top["delta_blocks"] == c["top_blocks_delta"],
              "churn: top delta")
        t = doc["totals"]
        check(t["allocated_delta"] == c["allocated_delta"], "churn: allocated delta")
        check(doc["old"]["allocated"] == c["allocated_old"], "churn: old allocated")
        check(t["pending_free_delta"] == c["pending_free_delta"], "churn: pending-free delta")
        check((t["blocks_kept"], t["blocks_new"], t["blocks_freed"])
              == (c["blocks_kept"], c["blocks_new"], c["blocks_freed"]), "churn: block counts")
        check(doc["per_step"] == c["per_step"], "churn: per_step %s" % doc["per_step"])
        check(abs(doc["per_step_exact"] - c["allocated_delta"] / 50) < 1e-6, "churn: exact")
        check(doc["steps_to_capacity"] == c["steps_to_capacity"],
              "churn: steps_to_capacity %s" % doc["steps_to_capacity"])
        check(doc["devices"][0]["capacity"] == c["capacity"]
              and doc["devices"][0]["capacity_source"] == "given", "churn: capacity")
        check(doc["groups"][0]["via"] is None, "churn: the leak has no via")
    txt = run([old, new, "--steps", "50", "--capacity", "1GiB"]).stdout
    first_row = [ln for ln in txt.splitlines() if "metrics.py:23 update" in ln]
    check(bool(first_row) and "+3.1 MiB" in first_row[0] and "150 (+50)" in first_row[0],
          "churn text: leak row")
    check("16,956 steps" in txt, "churn text: steps to capacity")
    check("groups add up to the allocated delta" in txt, "churn text: sum statement")
    check("model.py:52 forward via einops/_backends.py:288 einsum" in txt, "churn text: via")
    check("+53.8 KiB" in txt, "churn text: per step")  # 55,080 B = 53.79 KiB
    doc = run_json([old, new, "--steps", "50"])
    check(doc and doc["steps_to_capacity"] is None and doc["per_step"] == c["per_step"],
          "churn without capacity: no steps to capacity")
    doc = run_json([new, old, "--steps", "50", "--capacity", "1GiB"])
    check(doc and doc["per_step"] == -(c["allocated_delta"] // 50)
          and doc["steps_to_capacity"] is None, "churn reversed: negative per step, no steps")

    # Capacity estimated from an oom entry: device_free + reserved.
    oom = os.path.join(L, "churn_new_oom.pickle")
    doc = run_json([old, oom, "--steps", "50"])
    if doc:
        d0 = doc["devices"][0]
        check(d0["capacity"] == c["oom_capacity"] and d0["capacity_source"] == "oom-estimate",
              "oom: capacity estimate %s" % d0["capacity"])
        check(doc["steps_to_capacity"] == c["oom_steps_to_capacity"], "oom: steps")
    check("estimated capacity" in run([old, oom, "--steps", "50"]).stdout, "oom: text says estimate")

    # Several devices: per device, one-sided devices reported.
    do, dn = os.path.join(L, "multidev_old.pickle"), os.path.join(L, "multidev_new.pickle")
    doc = compare_with_truth(do, dn)
    if doc:
        pres = [(d["device"], d["in_old"], d["in_new"]) for d in doc["devices"]]
        check(pres == [(0, True, True), (1, True, False), (2, False, True)], "multidev: %s" % pres)
    txt = run([do, dn]).stdout
    check("device 1: only in OLD" in txt and "device 2: only in NEW" in txt, "multidev: text")

    # torch 1.13 list layout with history.
    compare_with_truth(os.path.join(L, "legacy_old.pickle"), os.path.join(L, "legacy_new.pickle"))

    # Attribution cases worked out by hand.
    empty, sites = os.path.join(L, "empty.pickle"), os.path.join(L, "sites.pickle")
    doc = compare_with_truth(empty, sites)
    txt = run([empty, sites, "--top", "100"]).stdout
    if doc:
        by_key = {g["key"]: g for g in doc["groups"]}
        for case in exp["sites"]:
            g = by_key.get(case["key"])
            check(g is not None and g["new_bytes"] == case["bytes"], "sites: %s" % case["key"])
            if g is None:
                continue
            if case["via"] is None:
                check(g["via"] is None, "sites: %s has a via" % case["key"])
            else:
                check(g["via"] is not None and ("via " + case["via"]) in txt,
                      "sites: via %s of %s" % (case["via"], case["key"]))
        check(by_key["<no stack>"]["site"] is None, "sites: no-stack site is null")

    # Every key kind, depth, hide/show/focus, against the truth.
    for by in ("site", "leaf", "stack", "file", "function"):
        compare_with_truth(old, new, by=by)
        compare_with_truth(empty, sites, by=by)
    compare_with_truth(old, new, depth=1)
    compare_with_truth(old, new, depth=3)
    doc = compare_with_truth(old, new, hide=[r"metrics\.py"])
    check(doc and doc["groups"][0]["key"].endswith("train.py:92 train_step"),
          "hide: the leak moves to its caller")
    doc = compare_with_truth(old, new, show=["einops/"])
    check(doc and any(g["key"].endswith("einops/_backends.py:288 einsum") for g in doc["groups"]),
          "show: einops counts as user code")
    doc = compare_with_truth(old, new, focus=["metrics"])
    check(doc and [g["key"] for g in doc["groups"]] == [c["top_key"]], "focus: only the leak")
    check("focus" in run([old, new, "--focus", "metrics"]).stdout, "focus: text says focus")

    # The README's example pair shows the leak first.
    doc = compare_with_truth(os.path.join(E, "old.pickle"), os.path.join(E, "new.pickle"))
    check(doc and doc["groups"][0]["key"] == exp["example_top_key"]
          and doc["groups"][0]["delta_bytes"] == exp["example_top_delta"], "example: top group")


def part_json():
    L = os.path.join(ROOT, "testdata", "leak")
    doc = run_json([os.path.join(L, "churn_old.pickle"), os.path.join(L, "churn_new.pickle"),
                    "--steps", "50"])
    if not doc:
        return
    check(doc["schema"] == "snapdiff.diff/1", "schema name")
    check(doc["group_by"] == "site" and doc["depth"] == 0, "group_by/depth")
    num = (int,)
    for side in ("old", "new"):
        s = doc[side]
        check(isinstance(s["source"], str), side + ".source")
        for k in ("allocated", "reserved", "active", "requested", "pending_free"):
            check(isinstance(s[k], num), "%s.%s" % (side, k))
        f = s["fragmentation"]
        check(all(isinstance(f[k], num) for k in ("gap", "total_free", "largest_free"))
              and isinstance(f["index"], (int, float)), side + ".fragmentation")
    for k in ("allocated_delta", "reserved_delta", "active_delta", "requested_delta",
              "pending_free_delta", "blocks_new", "blocks_freed", "blocks_kept", "groups_delta"):
        check(isinstance(doc["totals"][k], num), "totals." + k)
    for d in doc["devices"]:
        for k in ("device", "allocated_delta", "blocks_kept"):
            check(isinstance(d[k], num), "devices[]." + k)
        check(isinstance(d["in_old"], bool) and isinstance(d["old"], dict), "devices[] sides")
        check(set(("capacity", "capacity_source", "steps_to_capacity")) <= set(d), "device keys")
    check(isinstance(doc["per_step"], num) and isinstance(doc["per_step_exact"], float)
          and doc["steps"] == 50 and "steps_to_capacity" in doc, "per-step keys")
    for g in doc["groups"]:
        for k in ("old_bytes", "new_bytes", "delta_bytes", "old_blocks", "new_blocks",
                  "delta_blocks"):
            check(isinstance(g[k], num), "group." + k)
        check(isinstance(g["key"], str) and isinstance(g["stack"], list), "group key/stack")
        for fr in ([g["site"]] if g["site"] else []) + ([g["via"]] if g["via"] else []) + g["stack"]:
            check(isinstance(fr["filename"], str) and isinstance(fr["line"], int)
                  and isinstance(fr["name"], str) and isinstance(fr["kind"], str), "frame shape")
        if g["site"]:
            check(g["key"].startswith("%s:%d %s" % (g["site"]["filename"], g["site"]["line"],
                                                    g["site"]["name"])), "site matches key")
    deltas = [g["delta_bytes"] for g in doc["groups"]]
    cat = [0 if d > 0 else 1 if d < 0 else 2 for d in deltas]
    check(cat == sorted(cat), "groups: growth, shrinking, unchanged")


def parse_folded(text):
    out = {}
    for line in text.splitlines():
        stack, _, n = line.rpartition(" ")
        check(stack and n.isdigit(), "folded line shape: %r" % line[:100])
        check(stack not in out, "folded: duplicate line %r" % stack[:100])
        out[stack] = int(n)
    return out


def part_folded():
    L = os.path.join(ROOT, "testdata", "leak")
    pairs = [("churn_old", "churn_new"), ("legacy_old", "legacy_new"), ("move_old", "move_new"),
             ("multidev_old", "multidev_new"), ("empty", "sites")]
    for a, b in pairs:
        old, new = os.path.join(L, a + ".pickle"), os.path.join(L, b + ".pickle")
        one_old = parse_folded(run(["--format", "folded", old]).stdout)
        one_new = parse_folded(run(["--format", "folded", new]).stdout)
        for name, one in ((old, one_old), (new, one_new)):
            alloc = truth_diff.totals(load(name))[1]["allocated"]
            check(sum(one.values()) == alloc, "folded %s: sums to %d, allocated %d"
                  % (os.path.basename(name), sum(one.values()), alloc))
        growth = parse_folded(run(["--format", "folded", old, new]).stdout)
        want = {k: one_new.get(k, 0) - one_old.get(k, 0) for k in set(one_old) | set(one_new)}
        want = {k: v for k, v in want.items() if v > 0}
        check(growth == want, "folded growth %s -> %s differs from new - old" % (a, b))
    txt = run(["--format", "folded", os.path.join(L, "churn_new.pickle")]).stdout
    # Display paths, as the text report shows them (full paths stay in the JSON).
    check("update (metrics.py:23)" in txt, "folded: frame rendering")
    check("/home/alice/proj/" not in txt, "folded: user paths shortened")
    check(all(not ln.startswith("torch::unwind") for ln in txt.splitlines()), "folded: noise")


def part_errors():
    L = os.path.join(ROOT, "testdata", "leak")
    old, new = os.path.join(L, "churn_old.pickle"), os.path.join(L, "churn_new.pickle")
    p = run([old, new, "--hide", "("], rc=2)
    check("'('" in p.stderr and p.stdout == "", "bad regex: names the pattern, no output")
    p = run([old, os.path.join(L, "no-such.pickle")], rc=2)
    check(p.stderr.startswith("snapdiff: ") and p.stdout == "", "missing file: one message")
    # --jobs: the files load in parallel, the output does not depend on how many at once.
    ref = run([old, new, "--steps", "50"])
    for jobs in ("1", "2", "8"):
        p = run([old, new, "--steps", "50", "--jobs", jobs])
        check(p.stdout == ref.stdout and p.stderr == ref.stderr, "--jobs %s: same report" % jobs)
    both = run(["stats", old, new, "--jobs=1"]).stdout
    check(both == run(["stats", old, new, "--jobs", "2"]).stdout, "stats --jobs: same output")
    p = run([os.path.join(L, "no-such-1.pickle"), os.path.join(L, "no-such-2.pickle"),
             "--jobs", "2"], rc=2)
    lines = p.stderr.splitlines()
    check(len(lines) == 2 and "no-such-1" in lines[0] and "no-such-2" in lines[1],
          "--jobs: messages in the order of the files")
    for bad in ("0", "x", "-1", "1025"):
        p = run([old, new, "--jobs", bad], rc=2)
        check("--jobs" in p.stderr, "--jobs %s: refused" % bad)
    run(["dump", old, "--jobs", "2"], rc=2)   # dump reads one file


def part_real():
    real = clitest.real_snapshots(ROOT)
    files = sorted(os.path.join(real, f) for f in os.listdir(real)
                   if f.endswith((".pickle", ".pkl")))
    for i, f in enumerate(files):
        other = files[(i + 1) % len(files)]
        for by in ("site", "leaf", "stack"):
            doc = compare_with_truth(f, f, by=by)
            if doc:
                check(all(g["delta_bytes"] == 0 for g in doc["groups"]),
                      os.path.basename(f) + " vs itself: a group changed")
            compare_with_truth(f, other, by=by)
        print("ok %s" % os.path.basename(f))


def main():
    global ROOT
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("part", choices=("fixtures", "json", "folded", "errors", "real"))
    a = ap.parse_args()
    T.bin, ROOT = a.bin, os.path.abspath(a.root)
    globals()["part_" + a.part]()
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
