#!/usr/bin/env python3
"""The levers at each peak and oom (issue 36, docs/levers.md): `snapdiff top --json`'s
peak.model_levers and `snapdiff frag --json`'s oom_events[].model_levers against
tests/truth/truth_levers.py, on testdata/levers/ (also against the figures worked by hand
in testdata/make_levers_fixtures.py), the other oom fixtures and the real corpus; each oom
lever's `enough` against what would have had to be freed; the text prints the arithmetic.

A/B (steps): `snapdiff OLD NEW --json`'s peak.devices[].steps_compared (the steps of the
two peaks, and the steady step's peaks by category when they differ) against the truth's
per-step peaks.

    test_levers_cli.py --bin SNAPDIFF --root SOURCE_DIR fixtures|oom|real|steps
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_diff  # noqa: E402
import truth_levers  # noqa: E402

T = clitest.Suite()
check, run, run_json = T.check, T.run, T.run_json
ROOT = None
MiB = 1 << 20
FIELDS = ("lever", "category", "bytes", "of_bytes", "less_bytes", "calls", "bytes_8_ranks")


def fixture(name):
    return os.path.join(ROOT, "testdata", "levers", name + ".pickle")


def model(levers):
    """The levers but the allocator settings', as the truth names them."""
    out = []
    for x in levers:
        if x["lever"] == "allocator-setting":
            continue
        y = {k: x[k] for k in FIELDS}
        y["site"] = None
        if x["lever"] in ("activation-checkpointing", "optimizer-foreach-off") and x["sites"]:
            s = x["sites"][0]["site"]
            y["site"] = "%s:%d" % (s["filename"], s["line"])
        out.append(y)
    return out


def truth_model(levers):
    return [{k: x[k] for k in FIELDS + ("site",)} for x in levers]


def check_enough(tag, o):
    need = o["levers_need_bytes"]
    want = o["shortfall_bytes"] or o["request_bytes"]
    check(need == want, tag + ": judged against the shortfall (or the request)", need, want)
    for x in o["model_levers"]:
        if x["lever"] == "allocator-setting":
            w = [y for y in o["whatif"] if y["alloc_conf"] == x["alloc_conf"]]
            check(len(w) == 1 and x["enough"] == w[0]["enough_for_next_step"],
                  tag + ": an allocator setting is enough as its replay says", x, w)
            continue
        check(x["enough"] == (x["bytes"] >= need), tag + ": enough = bytes >= need", x, need)
        if x["lever"].startswith("shard-"):
            n = x["ranks_needed"]
            if x["of_bytes"] > need:
                ok = n >= 2 and x["of_bytes"] - x["of_bytes"] // n >= need and \
                    (n == 2 or x["of_bytes"] - x["of_bytes"] // (n - 1) < need)
                check(ok, tag + ": the fewest ranks that close it", x, need)
            else:
                check(n is None, tag + ": no rank count closes it", x)


def compare_with_truth(path):
    """Both views against the truth; the documents, or None when the file is not read."""
    want = truth_levers.compute(truth_diff.load(path))
    T.prefix = ["top"]
    top = run_json([path], rc=None)
    T.prefix = ["frag"]
    frag = run_json([path], rc=None)
    if not top or not frag:
        return None
    tag = os.path.basename(path)
    peaks = {d["device"]: d.get("peak") for d in top["devices"]}
    ooms = {d["device"]: d.get("oom_events") or [] for d in frag["devices"]}
    for d in want["devices"]:
        p = peaks.get(d["device"])
        if d["peak"] is None:
            check(not p or not p.get("model_levers"), tag + ": no peak, no levers", p)
        else:
            check(p is not None and p["entry"] == d["peak"]["entry"], tag + ": the peak entry")
            got = model(p["model_levers"]) if p else None
            check(got == truth_model(d["peak"]["levers"]),
                  tag + ": the peak's levers (device %d)" % d["device"], got,
                  truth_model(d["peak"]["levers"]))
            check(all(x["enough"] is None for x in (p or {}).get("model_levers", [])),
                  tag + ": a peak has no shortfall: enough is null")
        events = {o["trace_index"]: o for o in ooms.get(d["device"], [])}
        for w in d["ooms"]:
            o = events.get(w["entry"])
            if not o or o.get("model_levers") is None:
                continue        # not computed (older than the last ooms)
            got = model(o["model_levers"])
            check(got == truth_model(w["levers"]),
                  tag + ": the oom's levers (entry %d)" % w["entry"], got,
                  truth_model(w["levers"]))
            check_enough(tag, o)
    return top, frag


def part_fixtures():
    top, frag = compare_with_truth(fixture("gpt"))
    lv = {x["lever"]: x for x in top["devices"][0]["peak"]["model_levers"]}
    hand = {"activation-checkpointing": 20, "halve-micro-batch": 45, "chunked-loss": 48,
            "zero-grad-set-to-none": 24, "shard-optimizer-state": 24,
            "shard-gradients": 36, "shard-parameters": 48}
    check({k: v["bytes"] // MiB for k, v in lv.items()} == hand, "gpt: the hand figures",
          {k: v["bytes"] / MiB for k, v in lv.items()})
    ck = lv.get("activation-checkpointing", {})
    check(ck.get("calls") == 3 and ck.get("of_bytes") == 30 * MiB and
          ck.get("less_bytes") == 10 * MiB, "gpt: 3 calls, 30 - 10 MiB", ck)
    check(ck.get("sites") and ck["sites"][0]["label"].endswith("model.py:120 forward"),
          "gpt: the module called at model.py:120", ck.get("sites"))
    check(lv["chunked-loss"]["sites"][0]["label"].endswith("train.py:61 train_step"),
          "gpt: the loss line", lv["chunked-loss"]["sites"])
    check(lv["shard-parameters"]["bytes_8_ranks"] == 84 * MiB, "gpt: ZeRO-3 at N=8")
    order = [x["lever"] for x in top["devices"][0]["peak"]["model_levers"]]
    check(order[0] == "chunked-loss" and order.index("activation-checkpointing") <
          order.index("shard-optimizer-state"),
          "gpt: code changes first (the culprit), sharding after", order)
    T.prefix = ["top"]
    text = run([fixture("gpt")]).stdout
    check("levers at the peak" in text and
          "30.0 MiB saved activations - 10.0 MiB (the largest call, recomputed)" in text and
          "(activations 66.0 MiB + forward and backward temporaries 24.0 MiB) / 2" in text,
          "gpt: the text prints the arithmetic", text)

    top, frag = compare_with_truth(fixture("adam_oom"))
    o = frag["devices"][0]["oom_events"][0]
    check(o["levers_need_bytes"] == 14 * MiB, "adam_oom: 16 MiB asked, 2 MiB free: 14 MiB",
          o["levers_need_bytes"])
    first = o["model_levers"][0]
    check(first["lever"] == "optimizer-foreach-off" and first["bytes"] == 96 * MiB and
          first["less_bytes"] == 16 * MiB and first["enough"] is True and
          first["category"] == "temporaries",
          "adam_oom: fused=True first, 96 MiB of _multi_tensor_adam temporaries", first)
    check(first["sites"] and first["sites"][0]["label"].endswith(
        "torch/optim/adam.py:590 _multi_tensor_adam"), "adam_oom: named by its frame",
        first["sites"])
    z1 = [x for x in o["model_levers"] if x["lever"] == "shard-optimizer-state"]
    check(z1 and z1[0]["bytes"] == 112 * MiB and z1[0]["ranks_needed"] == 2,
          "adam_oom: ZeRO-1 112 MiB, enough from N=2", z1)
    check(not any(x["lever"] in ("halve-micro-batch", "zero-grad-set-to-none")
                  for x in o["model_levers"]),
          "adam_oom: nothing of the batch is live in the optimizer step")
    T.prefix = ["frag"]
    text = run([fixture("adam_oom")]).stdout
    check("levers at the oom, what each frees then (14.0 MiB would have had to be freed)"
          in text and "-- enough alone" in text, "adam_oom: the text", text)


def steps_with_truth(old, new):
    """`snapdiff OLD NEW --json`'s steps_compared against the truth's per-step peaks."""
    T.prefix = []
    doc = run_json([old, new], rc=None)
    if not doc or not doc.get("peak"):
        return None
    wo = truth_levers.compute(truth_diff.load(old))["devices"]
    wn = truth_levers.compute(truth_diff.load(new))["devices"]
    tag = "%s vs %s" % (os.path.basename(old), os.path.basename(new))
    for dv in doc["peak"]["devices"]:
        so = dv["steps_compared"]
        o = [d for d in wo if d["device"] == dv["device_old"]][0]
        n = [d for d in wn if d["device"] == dv["device_new"]][0]
        check(so["old_step"] == (o["peak_step"] or None) and
              so["new_step"] == (n["peak_step"] or None), tag + ": the peaks' steps", so)
        differ = bool(o["peak_step"] and n["peak_step"] and o["peak_step"] != n["peak_step"])
        lo = max([x["step"] for x in o["steps"] if x["complete"]] + [0])
        ln = max([x["step"] for x in n["steps"] if x["complete"]] + [0])
        steady = min(lo, ln) if differ else 0
        xo = [x for x in o["steps"] if x["step"] == steady]
        xn = [x for x in n["steps"] if x["step"] == steady]
        if not (xo and xn):
            steady = 0
        check(so["steady_step"] == (steady or None), tag + ": the steady step", so, steady)
        if steady:
            st = so["steady"]
            check(st["old_bytes"] == xo[0]["bytes"] and st["new_bytes"] == xn[0]["bytes"] and
                  st["old_entry"] == xo[0]["entry"] and st["new_entry"] == xn[0]["entry"],
                  tag + ": the steady step's peaks", st, xo, xn)
            got = {c["category"]: c["delta_bytes"] for c in st["categories"]}
            cats = set(xo[0]["categories"]) | set(xn[0]["categories"])
            want = {c: xn[0]["categories"].get(c, 0) - xo[0]["categories"].get(c, 0)
                    for c in cats}
            check(got == want, tag + ": the steady step by category", got, want)
    return doc


def part_steps():
    cat = os.path.join(ROOT, "testdata", "category")
    doc = steps_with_truth(os.path.join(cat, "adam.pickle"),
                           os.path.join(cat, "adam_bigstep.pickle"))
    so = doc["peak"]["devices"][0]["steps_compared"]
    # by hand (make_category_fixtures.py): OLD's peak 35 MiB in step 2's backward, NEW's
    # 40 MiB in step 1's optimizer; NEW's step 2 reaches 40 MiB again.
    check(so["old_step"] == 2 and so["new_step"] == 1 and so["same_step"] is False and
          so["steady_step"] == 2 and so["steady"]["old_bytes"] == 35 * MiB and
          so["steady"]["new_bytes"] == 40 * MiB, "adam vs adam_bigstep: step 2 of both", so)
    T.prefix = []
    text = run([os.path.join(cat, "adam.pickle"), os.path.join(cat, "adam_bigstep.pickle")],
               rc=None).stdout
    check("the peaks are in different steps: OLD's in step 2, NEW's in step 1; at step 2 "
          "(the last complete step of both): OLD 35.0 MiB, NEW 40.0 MiB" in text,
          "adam vs adam_bigstep: the text says which steps", text)
    same = steps_with_truth(os.path.join(cat, "adam.pickle"), os.path.join(cat, "adam.pickle"))
    check(same["peak"]["devices"][0]["steps_compared"]["same_step"] is True,
          "a file against itself: the same step")
    real = clitest.real_snapshots(ROOT, skip_if_absent=False)
    if real:
        pairs = [("NiuHuangxiaozi_assignment2-systems__fwd_bwd_ctx100_fp32.pickle",
                  "NiuHuangxiaozi_assignment2-systems__fwd_bwd_ctx150_fp32.pickle"),
                 ("sidsoc12_spring2024-assignment2-systems__cs336_systems-mem_snapshot_"
                  "ctx128_fp32_train.pickle",
                  "NiuHuangxiaozi_assignment2-systems__fwd_bwd_ctx100_fp32.pickle"),
                 ("JasperSolt_EoR_NN__snapshot.pickle",
                  "sidsoc12_spring2024-assignment2-systems__cs336_systems-mem_snapshot_"
                  "ctx128_fp32_train.pickle")]
        for a, b in pairs:
            if os.path.exists(os.path.join(real, a)) and os.path.exists(os.path.join(real, b)):
                steps_with_truth(os.path.join(real, a), os.path.join(real, b))


def part_oom():
    n = 0
    for f in sorted(os.listdir(os.path.join(ROOT, "testdata", "oom"))):
        if f.endswith(".pickle"):
            n += compare_with_truth(os.path.join(ROOT, "testdata", "oom", f)) is not None
    check(n > 0, "oom fixtures read")


def part_real():
    real = clitest.real_snapshots(ROOT)
    files = sorted(os.path.join(real, f) for f in os.listdir(real)
                   if f.endswith((".pickle", ".pkl")))
    n = 0
    for path in files:
        n += compare_with_truth(path) is not None
    print("%d real snapshots: levers checked" % n)
    check(n > 0, "real: no snapshot read")


def main():
    global ROOT
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("part", choices=["fixtures", "oom", "real", "steps"])
    a = ap.parse_args()
    T.bin, ROOT = a.bin, a.root
    {"fixtures": part_fixtures, "oom": part_oom, "real": part_real,
     "steps": part_steps}[a.part]()
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
