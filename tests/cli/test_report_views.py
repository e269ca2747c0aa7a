#!/usr/bin/env python3
"""`snapdiff report` over the ranks of one job (issue 19) and over training logs (issue 21).

    test_report_views.py SNAPDIFF PART      PART: ranks | curve

  ranks  a folder of rank files is drawn as ranks side by side (not as a time series): the
         embedded sd-ranks document is byte for byte what `series --json` writes over the
         same folder, and its figures are CPython's (testdata/ranks_devices/expected.json,
         written by make_ranks_devices.py); each rank's peak is tests/truth/truth_peak.py's
         replay of the same pickle; identical ranks have no outlier; --as-series and
         --as-ranks decide instead of the guess; the pages of one, two and N snapshots keep
         their own script. In Chromium (when it runs here): the page draws, the table holds
         a row per rank with the right allocated bytes and peak, and the outlier sentence
         names the rank furthest from the median (or says there is none). Real snapshots
         (../shared/real-snapshots, when present): four with a trace, read --as-ranks, give
         series' figures and CPython's peaks.
  curve  training logs are read by `report` as `snapdiff curve` reads them: the embedded
         sd-curve document is `curve --json` byte for byte; the plotted points are bounded
         (testdata/curve/truth.json's slopes are the fixtures' known slopes, checked within
         10% on the page's data); a log and a snapshot together are refused. In Chromium:
         one chart per series, the floor, the baseline, and with --capacity the capacity,
         threshold and projection lines.
"""
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import test_report as tr  # noqa: E402
import truth_diff  # noqa: E402
import truth_peak  # noqa: E402

ROOT = tr.ROOT
RANKS = os.path.join(ROOT, "testdata", "ranks_devices")
CURVE = os.path.join(ROOT, "testdata", "curve")
T = tr.T
check, run = T.check, T.run


def json_doc(page, ident):
    """An embedded document's text, '<' unescaped."""
    import re
    m = re.search(r'<script type="application/json" id="%s">(.*?)</script>' % ident, page, re.S)
    return m.group(1).replace("\\u003c", "<") if m else None


def browser_or_none(tmp):
    if not tr.chromium():
        print("note: chromium is not installed: the pages were not rendered in a browser")
        return None
    try:
        return tr.browser_or_skip(tmp)
    except SystemExit:
        print("note: chromium cannot run here: the pages were not rendered in a browser")
        return None


def rows_of(dom_text, table):
    """The data-* attributes of each row of a table of the rendered DOM."""
    import html.parser

    class P(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows, self.inside = [], False

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "table":
                self.inside = a.get("id") == table
            elif tag == "tr" and self.inside and "data-rank" in a:
                self.rows.append(a)
    p = P()
    p.feed(dom_text)
    return p.rows


def text_of(dom_text, ident):
    import re
    m = re.search(r'id="%s"[^>]*>([^<]*)<' % ident, dom_text)
    return m.group(1) if m else None


def part_ranks(snapdiff, tmp):
    truth = json.load(open(os.path.join(RANKS, "expected.json")))
    browser = browser_or_none(tmp)
    for case in ("step100", "same"):
        folder = os.path.join(RANKS, case)
        out = os.path.join(tmp, case + ".html")
        page = tr.report(snapdiff, [folder], out)
        rep = tr.embedded(page, "sd-report")
        check(rep and rep["mode"] == "ranks", "%s: report mode %r, not ranks" % (case, rep and rep.get("mode")))
        series = run(["series", "--json", folder])
        got = json_doc(page, "sd-ranks")
        check(got is not None and got == series.stdout.decode(),
              "%s: sd-ranks is not what series --json writes:\n%s\n---\n%s" % (case, got, series.stdout.decode()))
        doc = json.loads(got or "{}")
        want = truth[case]
        check([r["allocated_bytes"] for r in doc.get("ranks", [])] == want["allocated"],
              "%s: allocated per rank %s, CPython %s" % (case, [r["allocated_bytes"] for r in doc.get("ranks", [])], want["allocated"]))
        check([r["reserved_bytes"] for r in doc.get("ranks", [])] == want["reserved"],
              "%s: reserved per rank, CPython %s" % (case, want["reserved"]))
        sp, ws = doc.get("spread", {}), want["allocated_spread"]
        check((sp.get("allocated_min"), sp.get("allocated_median"), sp.get("allocated_max"),
               sp.get("furthest"), sp.get("furthest_delta")) ==
              (ws["min"], ws["median"], ws["max"], ws["furthest"], ws["furthest_delta"]),
              "%s: spread %s, CPython %s" % (case, sp, ws))
        if browser:
            dom = tr.drawn(browser, out, tmp, case)
            if dom is None:
                continue
            dom_text, _log = tr.render(browser, out, tmp)
            rows = rows_of(dom_text, "sd-ranks-table")
            check([int(r["data-allocated"]) for r in rows] == want["allocated"],
                  "%s: the page's rows %s, CPython %s" % (case, rows, want["allocated"]))
            sentence = text_of(dom_text, "sd-ranks-outlier") or ""
            if ws["furthest"] is None:
                check(sentence.startswith("No outlier"), "%s: outlier sentence %r" % (case, sentence))
            else:
                check(("rank %d," % ws["furthest"]) in sentence and
                      ("+%.1f MiB" % (ws["furthest_delta"] / 2**20)) in sentence,
                      "%s: outlier sentence %r, CPython rank %d %+d" % (case, sentence, ws["furthest"], ws["furthest_delta"]))

    # peaks: rank files with and without traces, against CPython's replay (truth_peak.py)
    folder = os.path.join(tmp, "job")
    os.mkdir(folder)
    srcs = [os.path.join(ROOT, "testdata", "frag", "compact.pickle"),
            os.path.join(ROOT, "testdata", "frag", "oom.pickle"),
            os.path.join(ROOT, "testdata", "leak", "churn_new.pickle"),
            os.path.join(ROOT, "testdata", "frag", "multidev.pickle")]
    for r, src in enumerate(srcs):
        shutil.copy(src, os.path.join(folder, "rank%d.pickle" % r))
    out = os.path.join(tmp, "job.html")
    page = tr.report(snapdiff, [folder], out)
    rep = tr.embedded(page, "sd-report") or {}
    peaks = rep.get("peaks", [])
    want_peaks = []
    for r, src in enumerate(srcs):
        t = truth_peak.compute(truth_diff.load(src))
        want = {d["device"]: d["peak_bytes"] for d in t["devices"]}
        got = {d["device"]: d["peak_bytes"] for d in (peaks[r] if r < len(peaks) else []) if d["peak_bytes"] is not None}
        check(got == {k: v for k, v in want.items() if v is not None},
              "rank %d (%s): peaks %s, CPython %s" % (r, os.path.basename(src), got, want))
        # the rank's peak: every device's peak added up, none unless each device has one
        have = [v for v in want.values() if v is not None]
        n_devices = len(peaks[r]) if r < len(peaks) else 0
        want_peaks.append(sum(have) if have and len(have) == n_devices else None)
    if browser:
        dom = tr.drawn(browser, out, tmp, "ranks with traces")
        if dom is not None:
            dom_text, _log = tr.render(browser, out, tmp)
            rows = rows_of(dom_text, "sd-ranks-table")
            got = [int(r["data-peak"]) if r.get("data-peak") else None for r in rows]
            check(got == want_peaks, "the page's peaks %s, CPython %s" % (got, want_peaks))

    # real snapshots read as ranks (--as-ranks over links named rankN): the four smallest
    # with a trace, so that CPython's replay stays quick; skipped where they are absent
    real = tr.clitest.real_snapshots(ROOT, skip_if_absent=False)
    if real:
        traced = []
        for f in sorted(os.listdir(real), key=lambda f: os.path.getsize(os.path.join(real, f))):
            path = os.path.join(real, f)
            if f.endswith((".md", ".json")) or os.path.getsize(path) > 64 << 20:
                continue
            try:
                t = truth_peak.compute(truth_diff.load(path))
            except Exception as e:  # noqa: BLE001 - a file CPython cannot read is no truth
                print("note: %s: no CPython truth (%s)" % (f, e))
                continue
            if t["devices"] and all(d["peak_bytes"] is not None for d in t["devices"]):
                traced.append((path, t))
            if len(traced) == 4:
                break
        folder = os.path.join(tmp, "real")
        os.mkdir(folder)
        for r, (path, _t) in enumerate(traced):
            os.symlink(path, os.path.join(folder, "rank%d.pickle" % r))
        if len(traced) >= 2:
            out = os.path.join(tmp, "real.html")
            page = tr.report(snapdiff, [folder], out, ["--as-ranks"])
            series = run(["series", "--json", "--as-ranks", folder]).stdout.decode()
            check(json_doc(page, "sd-ranks") == series, "real ranks: sd-ranks is not series --json")
            peaks = (tr.embedded(page, "sd-report") or {}).get("peaks", [])
            for r, (path, t) in enumerate(traced):
                got = {d["device"]: d["peak_bytes"] for d in (peaks[r] if r < len(peaks) else [])}
                want = {d["device"]: d["peak_bytes"] for d in t["devices"]}
                check(all(got.get(k) == v for k, v in want.items()),
                      "real rank %d (%s): peaks %s, CPython %s" % (r, os.path.basename(path), got, want))
            if browser:
                tr.drawn(browser, out, tmp, "real snapshots as ranks")
            print("real snapshots as ranks: %d files" % len(traced))

    # the members of one zip are ranks too, as series reads them
    import zipfile
    zpath = os.path.join(tmp, "job.zip")
    with zipfile.ZipFile(zpath, "w") as z:
        for r in range(4):
            z.write(os.path.join(RANKS, "step200", "rank%d.pickle" % r), "rank%d.pickle" % r)
    page = tr.report(snapdiff, [zpath], os.path.join(tmp, "zip.html"))
    rep = tr.embedded(page, "sd-report") or {}
    check(rep.get("mode") == "ranks", "a zip of rank files: mode %r" % rep.get("mode"))
    series = run(["series", "--json", zpath]).stdout.decode()
    check(json_doc(page, "sd-ranks") == series, "a zip of rank files: sd-ranks is not series --json")
    doc = json.loads(json_doc(page, "sd-ranks") or "{}")
    check([r["allocated_bytes"] for r in doc.get("ranks", [])] == truth["step200"]["allocated"],
          "a zip of rank files: allocated %s, CPython %s" % (doc.get("ranks"), truth["step200"]["allocated"]))

    # the guess and the options that override it
    step100 = os.path.join(RANKS, "step100")
    files = [os.path.join(step100, "rank%d.pickle" % r) for r in (2, 0, 3, 1)]
    rep = tr.embedded(tr.report(snapdiff, files, os.path.join(tmp, "g.html")), "sd-report") or {}
    check(rep.get("mode") == "ranks" and [os.path.basename(f) for f in rep.get("files", [])] ==
          ["rank%d.pickle" % r for r in range(4)], "four rank files in any order: %s" % rep.get("files"))
    rep = tr.embedded(tr.report(snapdiff, [step100], os.path.join(tmp, "s.html"), ["--as-series"]), "sd-report") or {}
    check(rep.get("mode") == "series", "--as-series: mode %r" % rep.get("mode"))
    rep = tr.embedded(tr.report(snapdiff, files[:2], os.path.join(tmp, "two.html")), "sd-report") or {}
    check(rep.get("mode") == "diff", "two rank files without --as-ranks: mode %r (the diff)" % rep.get("mode"))
    rep = tr.embedded(tr.report(snapdiff, files[:2], os.path.join(tmp, "tworanks.html"), ["--as-ranks"]), "sd-report") or {}
    check(rep.get("mode") == "ranks", "two rank files with --as-ranks: mode %r" % rep.get("mode"))
    example = [os.path.join(ROOT, "testdata", "example", f) for f in ("old.pickle", "new.pickle")]
    leak = os.path.join(ROOT, "testdata", "leak", "churn_old.pickle")
    for what, ins in (("one", example[1:]), ("two", example), ("three", [leak] + example)):
        page = tr.report(snapdiff, ins, os.path.join(tmp, what + ".html"))
        check("report_views.js" not in page and "report.js - draws" in page,
              "%s file(s): the page does not carry its own script report.js" % what)


def part_curve(snapdiff, tmp):
    truth = json.load(open(os.path.join(CURVE, "truth.json")))
    browser = browser_or_none(tmp)
    cases = [("leak_sawtooth.log", ["--capacity", "40GiB"]), ("sawtooth_flat.jsonl", []),
             ("ranks8.jsonl", []), ("nvsmi.csv", []), ("warmup_flat.csv", ["--capacity", "16GiB"])]
    for name, extra in cases:
        log = os.path.join(CURVE, name)
        out = os.path.join(tmp, name + ".html")
        page = tr.report(snapdiff, [log], out, extra)
        rep = tr.embedded(page, "sd-report") or {}
        check(rep.get("mode") == "curve", "%s: mode %r, not curve" % (name, rep.get("mode")))
        want = run(["curve", "--json", log, *extra]).stdout.decode()
        got = json_doc(page, "sd-curve")
        check(got == want, "%s: sd-curve is not what curve --json writes" % name)
        doc = json.loads(got or "{}")
        series = rep.get("series", [])
        check(len(series) == len(doc.get("series", [])), "%s: %d plotted series for %d" %
              (name, len(series), len(doc.get("series", []))))
        for i, (sr, pl) in enumerate(zip(doc.get("series", []), series)):
            pts = pl["points"]
            check(0 < len(pts) <= rep["limits"]["points"], "%s/%d: %d points" % (name, i, len(pts)))
            if not pts:
                continue
            # the points cover the samples: first and last x, the run's peak
            check(pts[0][0] == sr["first"]["x"] and pts[-1][0] <= sr["last"]["x"],
                  "%s/%d: points from %s to %s, samples %s to %s" % (name, i, pts[0][0], pts[-1][0],
                                                                     sr["first"]["x"], sr["last"]["x"]))
            check(abs(max(p[2] for p in pts) - sr["peak_bytes"]) <= 1, "%s/%d: highest point %s, peak %s" %
                  (name, i, max(p[2] for p in pts), sr["peak_bytes"]))
            edge = sr.get("lower_edge")
            if edge:
                fl = pl["floors"]
                check(len(fl) == edge["windows"] and abs(fl[-1][1] - edge["floor_last"]) <= 1 and
                      abs(fl[0][1] - sr["baseline"]["bytes"]) <= 1,
                      "%s/%d: floors %d (last %s, first %s), curve: %d windows, floor_last %s, baseline %s" %
                      (name, i, len(fl), fl and fl[-1][1], fl and fl[0][1], edge["windows"],
                       edge["floor_last"], sr["baseline"]["bytes"]))
        known = truth.get(name, {})
        if "slope" in known and doc.get("series"):
            # the fixture's known slope, on its leaking rank or GPU where it has one
            pick = [s for s in doc["series"] if ("leaking_rank" not in known or s.get("rank") == known["leaking_rank"])
                    and ("leaking_gpu" not in known or s.get("gpu") == known["leaking_gpu"])]
            e = (pick[0].get("lower_edge") if pick else None) or {}
            slope = e.get("slope_bytes_per_step", e.get("slope_bytes_per_second"))
            if known["slope"]:
                check(slope is not None and abs(slope - known["slope"]) <= 0.1 * known["slope"],
                      "%s: slope %s, known %s" % (name, slope, known["slope"]))
            else:
                check(pick and pick[0].get("verdict") == known["verdict"],
                      "%s: verdict %s, known %s" % (name, pick and pick[0].get("verdict"), known["verdict"]))
        if browser:
            dom = tr.drawn(browser, out, tmp, name)
            if dom is None:
                continue
            charts = [s for s in dom.svgs if s.get("class") == "curve-chart"]
            check(len(charts) == len(series), "%s: %d charts for %d series" % (name, len(charts), len(series)))
            dom_text, _log = tr.render(browser, out, tmp)
            if any(s.get("lower_edge") for s in doc.get("series", [])):
                check('class="floor"' in dom_text, "%s: no floor drawn" % name)
            if "--capacity" in extra:
                check('class="capacity"' in dom_text and 'class="threshold"' in dom_text,
                      "%s: no capacity or threshold line" % name)
                proj = [s for s in dom.svgs if s.get("class") == "curve-projection"]
                check(len(proj) == len(series), "%s: %d charts against the capacity for %d series" %
                      (name, len(proj), len(series)))
            grows = [s for s in doc.get("series", []) if s.get("steps_to_capacity")]
            check(('class="projection"' in dom_text) == bool(grows),
                  "%s: projection drawn %s, growing to a capacity %s" % (name, 'class="projection"' in dom_text, bool(grows)))
    # a log beside a snapshot: refused, no page left
    out = os.path.join(tmp, "mixed.html")
    r = run(["report", os.path.join(CURVE, "leak_sawtooth.log"),
             os.path.join(ROOT, "testdata", "example", "new.pickle"), "-o", out])
    check(r.returncode == 2 and not os.path.exists(out) and b"log" in r.stderr,
          "a log and a snapshot: exit %d, %s" % (r.returncode, r.stderr.decode()))
    # a log without any memory figure: curve's error, exit 2
    r = run(["report", os.path.join(CURVE, "no_memory.log"), "-o", os.path.join(tmp, "none.html")])
    check(r.returncode == 2 and r.stderr.count(b"\n") == 1, "no memory figure: exit %d, %s" %
          (r.returncode, r.stderr.decode()))


def main():
    snapdiff, part = sys.argv[1], sys.argv[2]
    T.bin = snapdiff
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        {"ranks": part_ranks, "curve": part_curve}[part](snapdiff, tmp)
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
