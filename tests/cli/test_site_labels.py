#!/usr/bin/env python3
"""One site, one label in every view (issue 28).

    test_site_labels.py --bin SNAPDIFF --root REPO

testdata/oom/labels_{old,new}.pickle (testdata/make_oom_fixtures.py): a torchtitan checkout
under /pscratch/sd/g/gb555/torchtitan/torchtitan/ calling torch and einops installed in
.../ccl-bench-venv/lib/python3.11/site-packages/, and a buffer made by DivBackward0 on the
autograd engine's thread. The labels are worked out here with CPython from the pickle, by
the rule of attrib.h: a path after its last site-packages/ (or dist-packages/); a user path
without the directory every user frame of the file shares; a C++ autograd node as
"autograd NAME". Then top, frag, trace, series, check, diff (text and JSON each), folded stacks and the HTML
report must each show exactly those labels, and the JSON must keep the whole path in
`site.filename`.
"""
import argparse
import json
import os
import pickle
import re
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402

T = clitest.Suite(no_color=True)
check = T.check
ROOT = None


def path(name):
    return os.path.join(ROOT, "testdata", "oom", name + ".pickle")


# ---- truth: the labels, from the pickle ------------------------------------------------

LIB = ("site-packages/", "dist-packages/")


def is_user(fn):
    return (fn.endswith(".py") and not fn.startswith("<") and "/torch/" not in fn
            and not any(x[:-1] in fn for x in LIB) and "/lib/python3" not in fn)


def frames_of(snap):
    out = []
    for seg in snap["segments"]:
        for b in seg["blocks"]:
            out += b.get("frames", [])
    for tr in snap["device_traces"]:
        for e in tr:
            out += e.get("frames", [])
    return out


def user_prefix(snap):
    users = sorted({f["filename"] for f in frames_of(snap) if is_user(f["filename"])})
    p = os.path.commonprefix(users) if users else ""
    return p[:p.rfind("/") + 1] if "/" in p else ""


def label(snap, filename, line, name):
    m = re.match(r"torch::autograd::(?:\w+::)*(\w*Backward\d*)::apply\(", name)
    if m:
        return "autograd " + m.group(1)
    for lib in LIB:
        if lib in filename:
            return "%s:%d %s" % (filename[filename.rfind(lib) + len(lib):], line, name)
    pre = user_prefix(snap)
    if pre and filename.startswith(pre):
        filename = filename[len(pre):]
    return "%s:%d %s" % (filename, line, name)


def truth():
    """{what: label} for the sites of labels_new.pickle, and the whole paths."""
    with open(path("labels_new"), "rb") as f:
        snap = pickle.load(f)
    frames = {}
    for f in frames_of(snap):
        frames[(f["filename"], f["line"], f["name"])] = f
    site = {k: v for k, v in frames.items() if k[0].endswith("model/model.py")}
    weights = [k for k in site if k[1] == 340][0]
    einsum = [k for k in site if k[1] == 352][0]
    via = [k for k in frames if k[0].endswith("einops/_backends.py")][0]
    div = [k for k in frames if "DivBackward0::apply" in k[2]][0]
    return {"weights": label(snap, *weights), "einsum": label(snap, *einsum),
            "via": label(snap, *via), "div": label(snap, *div)}, {
            "weights": weights[0], "einsum": einsum[0]}


# ---- the views ---------------------------------------------------------------------------

def rows_with(text, labels):
    """The labels that appear at the end of some line of text (a table's last column)."""
    lines = text.splitlines()
    return {k for k, v in labels.items() if any(ln.rstrip().endswith(v) for ln in lines)}


def columns_with(text, labels):
    """The labels that are some line's whole last column (after two spaces): a whole path
    that merely ends with a label does not count."""
    lines = [ln.rstrip() for ln in text.splitlines()]
    return {k for k, v in labels.items() if any(ln.endswith("  " + v) for ln in lines)}


def main():
    global ROOT
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    a = ap.parse_args()
    T.bin, ROOT = a.bin, a.root
    want, whole = truth()
    check(want["weights"] == "models/llama3/model/model.py:340 forward"
          and want["via"] == "einops/_backends.py:288 einsum"
          and want["div"] == "autograd DivBackward0", "truth: the fixture's labels", want)
    old, new = path("labels_old"), path("labels_new")
    sites = {k: want[k] for k in ("weights", "einsum", "div")}

    top = T.run(["top", new]).stdout
    check(rows_with(top, sites) == set(sites), "top: every site by its label", top)
    check("reached by an alloc at %s\n" % want["div"] in top, "top: the peak's site", top)
    check("/pscratch" not in top and "torch::autograd" not in top, "top: no whole path, no C++")
    doc = T.run_json(["top", new])
    groups = doc["devices"][0]["groups"]
    check(sorted(g["label"] for g in groups) == sorted(sites.values()),
          "top JSON: label", [g["label"] for g in groups])
    byl = {g["label"]: g for g in groups}
    check(byl.get(want["weights"], {}).get("site", {}).get("filename") == whole["weights"],
          "top JSON: site.filename keeps the whole path")
    check(doc["devices"][0]["peak"]["label"] == want["div"], "top JSON: the peak's label")

    frag = T.run(["frag", new]).stdout
    live = frag[frag.find("live at the oom"):]
    check(rows_with(live, sites) == set(sites), "frag: the sites live at the oom", live)
    check("at %s" % want["weights"] in frag, "frag: the levers and the oom line")
    check("/pscratch" not in frag and "torch::autograd" not in frag, "frag: no whole path")
    doc = T.run_json(["frag", new])
    oom = doc["devices"][0]["oom_events"][0]
    check(oom["label"] == want["weights"] and oom["site"]["filename"] == whole["weights"],
          "frag JSON: the oom's label, the whole path in site", oom.get("label"))
    check(sorted(x["label"] for x in oom["live_sites"]) == sorted(sites.values()),
          "frag JSON: live_sites labels", [x["label"] for x in oom["live_sites"]])

    trace = T.run(["trace", new]).stdout
    check(rows_with(trace, sites) == set(sites), "trace: every group by its label", trace)
    check("reached by an alloc at %s\n" % want["div"] in trace, "trace: the peak's site", trace)
    check("/pscratch" not in trace and "??:0" not in trace, "trace: no venv path, no ??:0")
    doc = T.run_json(["trace", new])
    check(sorted(g["label"] for g in doc["devices"][0]["groups"]) == sorted(sites.values()),
          "trace JSON: label")

    # replay: where a what-if stops, the request's site by its label, in the text and JSON
    rp = T.run(["replay", new, "--capacity", "1GiB"]).stdout
    check("at %s): the job would stop there" % want["weights"] in rp, "replay: the OOM's site", rp)
    check("/pscratch" not in rp, "replay: no whole path")
    doc = T.run_json(["replay", new, "--capacity", "1GiB"])
    cfg = doc["devices"][0]["configs"][0]
    check(cfg["ooms"] and all(o["label"] == want["weights"] for o in cfg["ooms"]) and
          all(o["label"] == want["weights"] for o in cfg["recorded_ooms"]),
          "replay JSON: ooms and recorded_ooms label", cfg["ooms"][:2])

    # series and check: the group column by the label, as top has it (no via).
    series = T.run(["series", old, new, new]).stdout
    check(columns_with(series, sites) == set(sites), "series: every group by its label", series)
    check("/pscratch" not in series and "torch::autograd" not in series,
          "series: no whole path, no C++")
    doc = T.run_json(["series", old, new, new])
    check(sorted(g["label"] for g in doc["groups"]) == sorted(sites.values()),
          "series JSON: label", [g.get("label") for g in doc["groups"]])
    grew = {k: sites[k] for k in ("einsum", "div")}
    res = T.run(["check", old, new, "--max-growth", "1"], rc=1)
    check(columns_with(res.stdout, grew) == set(grew),
          "check: the groups behind the failure by their label", res.stdout)
    check("/pscratch" not in res.stdout and "torch::autograd" not in res.stdout,
          "check: no whole path, no C++")
    res = T.run(["check", old, new, "--max-growth", "1", "--json"], rc=1)
    offenders = json.loads(res.stdout)["offenders"]
    check(offenders and {o["label"] for o in offenders} <= set(grew.values()) and
          {o["label"] for o in offenders} & set(grew.values()),
          "check JSON: the offenders' label", [o.get("label") for o in offenders])

    # diff: the rows name the site and its via; JSON's label is the row as the text has it.
    row = "%s via %s" % (want["einsum"], want["via"])
    diff = T.run([old, new]).stdout
    check(diff.count("  " + row + "\n") >= 2 and "  " + want["div"] + "\n" in diff,
          "diff: the growth and peak tables", diff)
    check("/pscratch" not in diff and "torch::autograd" not in diff, "diff: no whole path")
    doc = T.run_json([old, new])
    byl = {g["label"]: g for g in doc["groups"]}
    check(set(byl) >= {row, want["div"]}
          and any(k.startswith(want["weights"] + " via torch/nn/modules/linear.py:") for k in byl),
          "diff JSON: labels", sorted(byl))
    g = byl.get(row, {})
    check((g.get("site") or {}).get("filename") == whole["einsum"]
          and (g.get("via") or {}).get("filename", "").endswith("einops/_backends.py"),
          "diff JSON: site.filename and via whole", g.get("site"), g.get("via"))
    pk = doc["peak"]["devices"][0]["groups"]
    pl = {x["label"]: x for x in pk}
    check(set(pl) >= {row, want["div"]}, "diff JSON peak: labels as the text", sorted(pl))
    check((pl.get(row, {}).get("via") or {}).get("line") == 288,
          "diff JSON peak: via as the text shows it (not null)", pl.get(row))

    # folded: NAME (PATH:LINE), PATH as the label has it; the node by its name.
    folded = T.run(["--format", "folded", old, new]).stdout
    check("forward (models/llama3/model/model.py:352)" in folded
          and "einsum (einops/_backends.py:288)" in folded
          and re.search(r"(^|;)%s(;| \d)" % want["div"], folded, re.M),
          "folded: the labels' paths", folded)
    check("/pscratch" not in folded, "folded: no whole path")

    # the HTML report: the one-file page's site table, the two-file page's groups.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.html")
        T.run(["report", new, "-o", out])
        page = open(out, encoding="utf-8").read()
        m = re.search(r'<script type="application/json" id="sd-report">(.*?)</script>',
                      page, re.S)
        rep = json.loads(m.group(1)) if m else {}
        keys = [r["key"] for r in rep.get("sites", {}).get("rows", [])]
        check(sorted(keys) == sorted(sites.values()), "report: site table by label", keys)
        T.run(["report", old, new, "-o", out])
        page = open(out, encoding="utf-8").read()
        m = re.search(r'<script type="application/json" id="sd-diff">(.*?)</script>', page,
                      re.S)
        d = json.loads(m.group(1)) if m else {}
        check(row in {g.get("label") for g in d.get("groups", [])},
              "report: two files, the diff's labels")
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
