#!/usr/bin/env python3
"""CLI tests of naming memory that has no user frame (issue 9), on testdata/native/.

    test_naming_cli.py --bin SNAPDIFF --root REPO

Expected keys and bytes come from testdata/native/expected.json (worked out by hand in
testdata/make_native_fixtures.py) and, for every group-by key, from tests/truth/truth_diff.py,
an independent CPython implementation of the same site rule.
"""
import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_diff  # noqa: E402

T = clitest.Suite(no_color=True)
check, run = T.check, T.run


def run_json(args):
    return T.run_json(args, default={"groups": []})


def path(name):
    return os.path.join(ROOT, "testdata", "native", name + ".pickle")


def table_rows(text):
    """The label column of the Growth table's rows."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("Growth by")), None)
    rows = []
    if start is None:
        return rows
    for l in lines[start + 2:]:
        if not l.startswith("  ") or not l.strip():
            break
        m = re.match(r"\s*\S+ \S+\s+\S+ \S+\s+\S+ \(\S+\)\s+(.*)$", l)
        if m:
            rows.append(m.group(1))
    return rows


def against_truth(old, new, by, depth=0):
    doc = run_json([path(old), path(new), "--group-by", by, "--depth", str(depth), "--top", "100"])
    want = truth_diff.compute(truth_diff.load(path(old)), truth_diff.load(path(new)), by, depth)
    # truth: one group per (key, device), [old, old blocks, new, new blocks, requested x2]
    got = {(g["key"], g["device"]): [g["old_bytes"], g["old_blocks"], g["new_bytes"],
                                     g["new_blocks"], g["old_requested_bytes"],
                                     g["new_requested_bytes"]]
           for g in doc["groups"]}
    check(got == want["groups"], "%s %s -g %s: groups %s, truth %s"
          % (old, new, by, sorted(got), sorted(want["groups"])))
    check([(g["key"], g["device"]) for g in doc["groups"]] == want["order"],
          "%s %s -g %s: order" % (old, new, by))
    return doc


def part_site():
    exp = json.load(open(os.path.join(ROOT, "testdata", "native", "expected.json")))
    doc = against_truth("infer", "train", "site")
    by_key = {g["key"]: g for g in doc["groups"]}
    for key, delta in exp["train"].items():
        g = by_key.get(key)
        check(g is not None and g["delta_bytes"] == delta, "train: %s grew %s" % (key, delta))
    check(doc["groups"][0]["key"] == exp["train_top_key"], "train: top group")
    check(not any("CUDACachingAllocator" in k or "unwind" in k for k in by_key),
          "no group is named after the allocator or the unwinder")
    # JSON site of a native group: no file, the readable label, the raw symbol kept.
    acc = by_key["autograd AccumulateGrad (parameter gradients)"]
    site = acc["site"]
    check(site["filename"] == "" and site["line"] == 0 and site["kind"] == "native",
          "native site has no file: %s" % site)
    check(site["name"] == "autograd AccumulateGrad (parameter gradients)", "native site name")
    check(site["symbol"].startswith("torch::autograd::AccumulateGrad::apply("), "site symbol")
    check("backward" not in site, "a native site is not marked backward")
    check(any(f["name"] == site["symbol"] for f in acc["stack"]), "raw frame kept in stack")
    check(any("CUDACachingAllocator" in f["name"] for f in acc["stack"]),
          "the JSON stack keeps the raw allocator frames")
    check(by_key["aten::bmm"]["site"]["symbol"].startswith("at::_ops::bmm::call("),
          "aten::bmm: the outermost op, call not redispatch")
    # Text: readable labels, the culprit first.
    txt = run([path("infer"), path("train")]).stdout
    rows = table_rows(txt)
    check(rows[:1] == ["autograd AccumulateGrad (parameter gradients)"], "text top row: %s" % rows)
    for label in ("autograd BmmBackward0", "autograd IndexBackward0", "aten::bmm"):
        check(label in rows, "text row %s" % label)
    check("DeviceCachingAllocator" not in txt, "text never names the allocator")


def part_groupings():
    for by in ("leaf", "stack", "file", "function", "annotation", "compile-context"):
        against_truth("infer", "train", by)
        against_truth("empty", "forward", by)
    # --group-by annotation / compile-context: the recorded strings (by hand: blocks 0 and 1
    # carry user_metadata "step 7", block 2 compile_context "0/0"; 2 MiB, 2 MiB, 4 MiB).
    ann = {g["key"]: g["new_bytes"] for g in
           run_json([path("empty"), path("forward"), "-g", "annotation"])["groups"]}
    check(ann == {"step 7": 4 << 20, "<no annotation>": 4 << 20}, "-g annotation: %s" % ann)
    cc = {g["key"]: g["new_bytes"] for g in
          run_json([path("empty"), path("forward"), "-g", "compile-context"])["groups"]}
    check(cc == {"0/0": 4 << 20, "<no compile context>": 4 << 20}, "-g compile-context: %s" % cc)
    rows = table_rows(run([path("empty"), path("forward"), "-g", "annotation"]).stdout)
    check(sorted(rows) == ["<no annotation>", "step 7"], "-g annotation rows: %s" % rows)
    against_truth("infer", "train", "site", depth=2)
    # -g leaf: the innermost frame that is not noise, never the unwinder.
    doc = run_json([path("infer"), path("train"), "-g", "leaf"])
    check(not any("unwind" in g["key"] or "CachingAllocator" in g["key"] for g in doc["groups"]),
          "-g leaf: no unwinder or allocator group")
    # -g stack: different stacks never print as identical rows.
    rows = table_rows(run([path("infer"), path("train"), "-g", "stack", "--top", "100"]).stdout)
    check(len(rows) == len(set(rows)), "-g stack rows are distinct: %s" % rows)
    check("autograd IndexBackward0" in rows and "autograd IndexBackward0 (stack 2)" in rows,
          "-g stack: the two IndexBackward0 stacks: %s" % rows)
    # top -g stack: the same rule (attrib.h, sd_group_label_distinct) in its tables.
    top = run(["top", path("train"), "-g", "stack"]).stdout
    check("  autograd IndexBackward0\n" in top and "  autograd IndexBackward0 (stack 2)\n" in top,
          "top -g stack: the two IndexBackward0 stacks apart: %s" % top)
    # -g file: native code groups by what it is.
    keys = [g["key"] for g in run_json([path("infer"), path("train"), "-g", "file"])["groups"]]
    check("<autograd>" in keys and "<aten>" in keys, "-g file: %s" % keys)
    # -g function: no line and no via (the group merges the function's lines).
    rows = table_rows(run([path("infer"), path("train"), "-g", "function"]).stdout)
    check("train.py train_step" in rows, "-g function row without a line: %s" % rows)
    check(not any(" via " in r for r in rows), "-g function rows have no via: %s" % rows)


def part_forward():
    exp = json.load(open(os.path.join(ROOT, "testdata", "native", "expected.json")))
    doc = against_truth("empty", "forward", "site")
    by_key = {g["key"]: g for g in doc["groups"]}
    for key, b in exp["forward"].items():
        check(key in by_key and by_key[key]["new_bytes"] == b, "forward: %s" % key)
    g = by_key.get("/home/alice/proj/model.py:41 forward [backward]")
    check(g is not None, "forward: the backward group")
    if g:
        check(g["site"] == {"filename": "/home/alice/proj/model.py", "line": 41,
                            "name": "forward", "kind": "user", "backward": True},
              "backward site JSON: %s" % g["site"])
        check(g["via"] is None, "the _device.py shim is no via")
        check(any(f["name"] == "forward" for f in g.get("forward_stack", [])),
              "forward_stack in JSON")
        check(g.get("user_metadata") == "step 7", "user_metadata in JSON")
    acc = by_key.get("autograd AccumulateGrad (parameter gradients)")
    check(acc is not None and "forward_stack" not in acc and acc.get("compile_context") == "0/0",
          "AccumulateGrad: no forward stack, compile_context kept")
    rows = table_rows(run([path("empty"), path("forward")]).stdout)
    check("model.py:41 forward [backward]" in rows, "text backward row: %s" % rows)
    folded = run([path("empty"), path("forward"), "--format", "folded"]).stdout
    check(any(l.startswith("<module> (train.py:72);") and ";forward (model.py:41);" in l
              and ";[backward];" in l for l in folded.splitlines()),
          "folded: forward stack, then [backward]: %s" % folded[:400])


def part_folded():
    folded = run([path("infer"), path("train"), "--format", "folded"]).stdout
    lines = folded.splitlines()
    check(any(l.startswith("autograd AccumulateGrad (parameter gradients);") for l in lines),
          "folded: the AccumulateGrad line starts at the node")
    check(not any("CUDACachingAllocator" in l or "unwind" in l or "wrap_kernel_functor" in l
                  for l in lines), "folded: no native noise")
    check(not any("aten::bmm;aten::bmm" in l for l in lines), "folded: call+redispatch is one op")
    total = sum(int(l.rsplit(" ", 1)[1]) for l in lines)
    check(total == sum(json.load(open(os.path.join(ROOT, "testdata", "native",
                                                   "expected.json")))["train"].values()),
          "folded: growth adds up (%d)" % total)


def part_via_and_jupyter():
    txt = run([path("jupyter_old"), path("jupyter_new")]).stdout
    exp = json.load(open(os.path.join(ROOT, "testdata", "native", "expected.json")))
    rows = table_rows(txt)
    check(rows == [exp["jupyter_display"]], "jupyter cell keeps its kernel dir: %s" % rows)
    check("_device.py" not in txt, "no via torch/utils/_device.py")


def main():
    global ROOT
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    a = ap.parse_args()
    T.bin, ROOT = a.bin, os.path.abspath(a.root)
    for part in (part_site, part_groupings, part_forward, part_folded, part_via_and_jupyter):
        part()
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
