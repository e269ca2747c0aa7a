#!/usr/bin/env python3
"""`snapdiff report`: the HTML page, drawn by a real browser, against independent figures.

    test_report.py SNAPDIFF PART      PART: offline | cli | browser | real

  offline  the page is self-contained: no external script, style, image, frame, link or
           font, no fetch/XMLHttpRequest/import, a Content-Security-Policy that forbids
           loading anything, and no http(s):// URL but the SVG namespace name (the data of
           the page is JSON inside script elements, every '<' escaped)
  cli      -o is needed on a terminal; a redirect works; bad input leaves no file; the
           embedded JSON documents are the ones `--json` writes
  browser  headless Chromium renders the example (one file, two files, three files) and
           fixtures with oom events and traces; the page reports "drawn" and no script
           error (its own error box and Chromium's console log); the tables hold the groups
           CPython's pickle finds (tests/truth/truth_diff.py), the icicle's total is the live
           bytes (one file) or the folded growth (two files), the fragmentation part shows
           the verdicts of `snapdiff frag --json`
  real     every snapshot in ../shared/real-snapshots (SNAPDIFF_SHARED), in batches of
           browsers: the page renders, draws, and logs no script error

Chromium (Debian package `chromium`, tests/deps.sh) is needed for browser and real; where
it is missing or cannot start, those parts are skipped (exit 77) with the reason.
"""
import concurrent.futures
import html.parser
import json
import os
import pty
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_diff  # noqa: E402
import truth_stats  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(ROOT, "testdata", "example")
FRAG = os.path.join(ROOT, "testdata", "frag")
LEAK = os.path.join(ROOT, "testdata", "leak")
SVG_NS = "http://www.w3.org/2000/svg"
BROWSER_TIMEOUT = 180          # seconds per page: generous, the machine may be loaded
T = clitest.Suite(rc=None, text=False, timeout=600)
check, run = T.check, T.run


def report(snapdiff, files, out, extra=()):
    r = run(["report", *files, "-o", out, *extra])
    check(r.returncode == 0, "report %s: exit %d, %s" % (files, r.returncode, r.stderr.decode()))
    with open(out, encoding="utf-8") as f:
        return f.read()


def embedded(page, ident):
    m = re.search(r'<script type="application/json" id="%s">(.*?)</script>' % ident, page, re.S)
    return json.loads(m.group(1)) if m else None


# ---- the browser ------------------------------------------------------------------------

def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def render(browser, path, tmp):
    """The DOM after the page's scripts ran, and Chromium's console log (stderr)."""
    profile = tempfile.mkdtemp(dir=tmp)
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
           "--virtual-time-budget=5000", "--dump-dom", "file://" + os.path.abspath(path)]
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=BROWSER_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % BROWSER_TIMEOUT
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def browser_or_skip(tmp):
    browser = chromium()
    if not browser:
        clitest.skip("chromium is not installed (tests/deps.sh installs Debian's chromium): "
                     "the report was not rendered in a browser")
    probe = os.path.join(tmp, "probe.html")
    with open(probe, "w") as f:
        f.write("<!DOCTYPE html><p id=x>x</p><script>document.getElementById('x')"
                ".textContent='ran'</script>")
    dom, log = render(browser, probe, tmp)
    if not dom or "ran</p>" not in dom:
        clitest.skip("%s cannot render a page here (%s): the report was not rendered in "
                     "a browser" % (browser, (log or "").strip().splitlines()[-1:] or "no output"))
    return browser


class Dom(html.parser.HTMLParser):
    """Elements by id, rows by table, svgs by class, and texts we look for."""

    def __init__(self):
        super().__init__()
        self.ids = {}
        self.rows = {}          # table id -> [data-key of each row]
        self.row_attrs = {}     # data-key -> the row's attributes
        self.cells = {}         # (table id, row data-key, data-rank) -> data-allocated
        self.key_cells = {}     # (table id, row data-key) -> the text of its td.key
        self._row = None
        self.svgs = []          # attrs of each svg
        self.verdicts = []      # text of each span.verdict
        self.frag_devices = []
        self.oom_rows = []      # data-trace-index of each oom row
        self.status = None
        self.status_hidden = None
        self.errors_hidden = None
        self.error_text = ""
        self.order = []         # every id, in document order
        self.marks = []         # per chart svg: (its attrs, data-legend names, unlabelled marks)
        self.legends = {}       # legend id -> the names it explains
        self.median_labels = [] # (attrs, text, the svg's viewBox) of each median label
        self._table = None
        self._in = None
        self._svg = None
        self._legend = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids[a["id"]] = a
            self.order.append(a["id"])
        self.chart_tag(tag, a)
        if tag == "table":
            self._table = a.get("id")
            self.rows.setdefault(self._table, [])
        elif tag == "tr" and "data-trace-index" in a:
            self.oom_rows.append(int(a["data-trace-index"]))
        elif tag == "tr" and self._table and "data-key" in a:
            self.rows[self._table].append(a["data-key"])
            self.row_attrs[a["data-key"]] = a
            self._row = a["data-key"]
        elif tag == "td" and self._table and self._row and "key" in a.get("class", "").split():
            self.key_cells[(self._table, self._row)] = ""
            self._in = "keycell"
        elif tag == "td" and self._table and "data-rank" in a:
            self.cells[(self._table, self._row, a["data-rank"])] = a.get("data-allocated")
        elif tag == "svg":
            self.svgs.append(a)
        elif tag == "span" and "verdict" in a.get("class", "").split():
            self._in = "verdict"
        elif tag == "div" and a.get("class") == "frag-device":
            self.frag_devices.append(a.get("data-device"))
        if a.get("id") == "sd-status":
            self.status = a.get("data-status")
            self.status_hidden = "hidden" in a
        if a.get("id") == "sd-errors":
            self.errors_hidden = "hidden" in a
            self._in = "errors"

    def chart_tag(self, tag, a):
        """The marks of each chart (what it draws besides grid and axes) and its legend."""
        cls = a.get("class", "").split()
        if tag == "svg":
            self._svg = (a, set(), [])
            self.marks.append(self._svg)
        elif self._svg and tag in ("path", "line", "circle", "rect"):
            if "data-legend" in a:
                self._svg[1].add(a["data-legend"])
            elif tag != "rect" and not {"grid", "axis"} & set(cls):
                self._svg[2].append(tag + "." + ".".join(cls))
        elif self._svg and tag == "text" and "median-label" in cls:
            self.median_labels.append([a, "", self._svg[0].get("viewbox", "")])
            self._in = "median"
        elif tag == "p" and "legend" in cls and "id" in a:
            self._legend = a["id"]
            self.legends[self._legend] = set()
        elif tag == "span" and self._legend and "data-legend" in a:
            self.legends[self._legend].add(a["data-legend"])

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = None
        if tag in ("span", "pre", "text", "td"):
            self._in = None
        if tag == "svg":
            self._svg = None
        if tag == "p":
            self._legend = None

    def handle_data(self, data):
        if self._in == "verdict":
            self.verdicts.append(data)
        elif self._in == "errors":
            self.error_text += data
        elif self._in == "keycell":
            self.key_cells[(self._table, self._row)] += data
        elif self._in == "median":
            self.median_labels[-1][1] += data

    def svg(self, cls=None, ident=None):
        return [s for s in self.svgs
                if (cls is None or cls in s.get("class", "").split()) and
                (ident is None or s.get("id") == ident)]


def console_errors(log):
    return [l for l in log.splitlines()
            if "CONSOLE" in l and ("Uncaught" in l or "Error" in l or "error" in l)]


def drawn(browser, path, tmp, what):
    """Render; check the page drew and logged no error; return the parsed DOM or None."""
    dom_text, log = render(browser, path, tmp)
    if not check(dom_text, "%s: Chromium gave no DOM (%s)" % (what, log)):
        return None
    dom = Dom()
    dom.feed(dom_text)
    check(dom.status == "drawn", "%s: page status %r, not drawn; errors: %s" %
          (what, dom.status, dom.error_text.strip()))
    check(dom.errors_hidden, "%s: script errors shown: %s" % (what, dom.error_text.strip()))
    errs = console_errors(log)
    check(not errs, "%s: Chromium's console logged errors: %s" % (what, errs[:3]))
    check_charts(dom, what)
    return dom


# Issue 28: charts whose every mark is explained. The icicle (nodes that are their own
# labels), the segment maps and the histograms draw rects only; those are not charts of lines.
LINE_CHARTS = ("timeline", "reserved-timeline", "ranks-chart", "curve-chart", "curve-projection")


def check_charts(dom, what):
    """Every line, curve or marker a chart draws has a legend entry of the same name, and
    no label runs outside its chart (11px text: at most 7 px a character)."""
    for a, names, unlabelled in dom.marks:
        chart = a.get("class") in LINE_CHARTS or a.get("id") == "sd-series"
        if not chart and not names:
            continue
        name = a.get("class") or a.get("id")
        check(not unlabelled, "%s: %s draws marks with no legend entry: %s" % (what, name, unlabelled[:3]))
        legend = dom.legends.get(a.get("data-legend-id"))
        check(legend is not None and names <= legend,
              "%s: %s draws %s, its legend explains %s" % (what, name, sorted(names), legend and sorted(legend)))
    for a, text, viewbox in dom.median_labels:
        width = float(viewbox.split()[2]) if len(viewbox.split()) == 4 else 0
        x, n = float(a.get("x", 0)), len(text) * 7
        left, right = {"end": (x - n, x), "middle": (x - n / 2, x + n / 2)}.get(a.get("text-anchor"), (x, x + n))
        check(left >= 0 and right <= width, "%s: the label %r spans %.0f..%.0f of a chart %.0f wide" %
              (what, text, left, right, width))


# ---- parts --------------------------------------------------------------------------------

EXTERNAL = [
    (r"<script[^>]*\bsrc\s*=", "an external script"),
    (r"<link\b", "a link element"),
    (r"<(img|iframe|embed|object|audio|video|source)\b[^>]*\bsrc\s*=", "an external resource"),
    (r"\bhref\s*=\s*[\"']?(https?:|//)", "a remote link"),
    (r"url\(\s*[\"']?(https?:|//)", "a remote url() in the style"),
    (r"@import", "an @import"),
    (r"\bfetch\s*\(", "a fetch call"),
    (r"XMLHttpRequest|WebSocket|EventSource|sendBeacon", "a network API"),
    (r"\bimport\s*\(", "a dynamic import"),
]


def part_offline(snapdiff, tmp):
    pages = {
        "one": report(snapdiff, [os.path.join(EXAMPLE, "new.pickle")], os.path.join(tmp, "1.html")),
        "two": report(snapdiff, [os.path.join(EXAMPLE, "old.pickle"), os.path.join(EXAMPLE, "new.pickle")],
                      os.path.join(tmp, "2.html")),
        "three": report(snapdiff, [os.path.join(LEAK, "churn_old.pickle"), os.path.join(EXAMPLE, "old.pickle"),
                                   os.path.join(EXAMPLE, "new.pickle")], os.path.join(tmp, "3.html")),
        "oom": report(snapdiff, [os.path.join(FRAG, "oom.pickle")], os.path.join(tmp, "4.html")),
    }
    for name, page in pages.items():
        for pattern, what in EXTERNAL:
            m = re.search(pattern, page, re.I)
            check(not m, "%s: the page holds %s: %r" % (name, what, m and page[max(0, m.start() - 40):m.end() + 40]))
        urls = set(re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}[^\s\"'<>)]*", page))
        urls = {u for u in urls if not u.startswith("//")}      # comments are not URLs
        check(urls <= {SVG_NS}, "%s: URLs other than the SVG namespace: %s" % (name, sorted(urls)[:5]))
        check("default-src 'none'" in page, "%s: no Content-Security-Policy forbidding loads" % name)
        for ident in ("sd-stats", "sd-frag", "sd-report"):
            m = re.search(r'<script type="application/json" id="%s">(.*?)</script>' % ident, page, re.S)
            if check(m, "%s: no %s data" % (name, ident)):
                check("<" not in m.group(1), "%s: a raw '<' inside %s" % (name, ident))
        check(page.count("<script") == (5 if name == "two" else 4),
              "%s: %d script elements" % (name, page.count("<script")))
        # issue 28: no "Status: drawn" for the reader; the state is for tests, hidden
        check("Status:" not in page and re.search(r'<span id="sd-status"[^>]*\bhidden\b', page),
              "%s: the page shows its drawing status" % name)


def part_cli(snapdiff, tmp):
    new = os.path.join(EXAMPLE, "new.pickle")
    old = os.path.join(EXAMPLE, "old.pickle")
    # a terminal on stdout without -o: refused, one line, exit 2
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(snapdiff, [snapdiff, "report", new])
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    check(os.waitstatus_to_exitcode(status) == 2, "report on a terminal: exit %d" % os.waitstatus_to_exitcode(status))
    check(b"-o FILE" in out and b"<html" not in out, "report on a terminal: %r" % out[:200])
    # a redirect works and is the same page as -o
    r = run(["report", new])
    check(r.returncode == 0 and r.stdout.startswith(b"<!DOCTYPE html>"), "report > file: exit %d" % r.returncode)
    page = report(snapdiff, [new], os.path.join(tmp, "o.html"))
    check(r.stdout.decode() == page, "report > file differs from report -o file")
    # the embedded documents are those --json writes
    for ident, cmd in (("sd-stats", ["stats", "--json", new]), ("sd-frag", ["frag", "--json", new])):
        want = json.loads(run(cmd).stdout)
        check(embedded(page, ident) == want, "%s differs from snapdiff %s" % (ident, " ".join(cmd[:2])))
    page2 = report(snapdiff, [old, new], os.path.join(tmp, "d.html"))
    want = json.loads(run(["--json", old, new]).stdout)
    check(embedded(page2, "sd-diff") == want, "sd-diff differs from snapdiff --json OLD NEW")
    check(embedded(page2, "sd-stats") == json.loads(run(["stats", "--json", old, new]).stdout),
          "two files: sd-stats differs from snapdiff stats --json")
    rep = embedded(page2, "sd-report")
    check(rep["schema"] == "snapdiff.report/1" and rep["mode"] == "diff", "report document: %s" % rep.get("mode"))
    # the attribution options apply: --group-by file
    page3 = report(snapdiff, [old, new], os.path.join(tmp, "f.html"), ["--group-by", "file"])
    want = json.loads(run(["--json", "--group-by", "file", old, new]).stdout)
    check(embedded(page3, "sd-diff") == want, "--group-by file: sd-diff differs")
    # reserved over time (issue 20): recorded and under each config, the figures of
    # `snapdiff replay --json`; the peak of each line is that config's peak_reserved_bytes.
    # Without --alloc-conf the page's two what-ifs; with it (and --memory-fraction, issue
    # 28) the user's, as replay reads them
    default = ["--alloc-conf", "expandable_segments:True", "--alloc-conf", "max_split_size_mb:512"]
    given = ["--alloc-conf", "garbage_collection_threshold:0.6", "--memory-fraction", "0.5"]
    for name, args, replay_args in (("oom.pickle", [], default), ("oom_many.pickle", [], default),
                                    ("oom.pickle", given, given)):
        path = os.path.join(FRAG, name)
        rep = embedded(report(snapdiff, [path], os.path.join(tmp, "r.html"), args), "sd-report")
        want = json.loads(run(["replay", "--json", "-q", path, *replay_args]).stdout)
        name = " ".join([name, *args])
        rts = rep.get("reserved_timelines", [])
        check([r["device"] for r in rts] == [d["device"] for d in want["devices"]] and rts,
              "%s: reserved timelines per replayed device" % name)
        for rt, wd in zip(rts, want["devices"]):
            check(rt["entries"] == wd["entries"], "%s: entries" % name)
            check(rt["recorded_peak_reserved_bytes"] == wd["recorded"]["peak_reserved_bytes"]
                  == max(p[1] for p in rt["recorded"]),
                  "%s: recorded line peaks at replay's recorded peak" % name)
            check([c["alloc_conf"] for c in rt["configs"]] ==
                  [c["alloc_conf"] for c in wd["configs"]], "%s: configs" % name)
            for c, wc in zip(rt["configs"], wd["configs"]):
                check(c["peak_reserved_bytes"] == wc["peak_reserved_bytes"]
                      == max([p[1] for p in c["points"]], default=0),
                      "%s %s: the line's peak %r is peak_reserved_bytes %r"
                      % (name, c["alloc_conf"], max([p[1] for p in c["points"]], default=0),
                         wc["peak_reserved_bytes"]))
                check(c["ooms"] == len(wc["ooms"]), "%s %s: ooms" % (name, c["alloc_conf"]))
                check(all(a[0] < b[0] for a, b in zip(c["points"], c["points"][1:]))
                      and len(c["points"]) <= 256, "%s %s: bounded, ordered" % (name, c["alloc_conf"]))
    legacy = embedded(report(snapdiff, [os.path.join(FRAG, "legacy.pickle")],
                             os.path.join(tmp, "l.html")), "sd-report")
    check("reserved_timelines" not in legacy, "no trace: no reserved timelines")
    check("reserved_timelines" not in embedded(page2, "sd-report"),
          "two files: no reserved timelines")
    # a config that does not parse is the option's error, before any file is read
    r = run(["report", os.path.join(FRAG, "oom.pickle"), "--alloc-conf", "bogus:1", "-o",
             os.path.join(tmp, "bogus.html")])
    err = r.stderr.decode().strip().splitlines()
    check(r.returncode == 2 and len(err) == 1 and "--alloc-conf 'bogus:1'" in err[0] and
          "oom.pickle" not in err[0] and not os.path.exists(os.path.join(tmp, "bogus.html")),
          "report --alloc-conf bogus:1: exit %d, %r" % (r.returncode, err))
    check_rounding_not_growth(snapdiff, tmp)
    # bad input: one error line, exit 2, and no half-written page left behind
    bad = os.path.join(tmp, "bad.pickle")
    with open(bad, "wb") as f:
        f.write(b"\x80\x04\x95\x10\x00\x00")
    out = os.path.join(tmp, "bad.html")
    r = run(["report", bad, "-o", out])
    check(r.returncode == 2 and len(r.stderr.decode().strip().splitlines()) == 1,
          "bad input: exit %d, %r" % (r.returncode, r.stderr))
    check(not os.path.exists(out), "bad input: %s was written" % out)
    r = run(["report", new, "-o", os.path.join(tmp, "no", "such", "dir.html")])
    check(r.returncode == 2 and b"cannot write" in r.stderr, "unwritable -o: exit %d" % r.returncode)
    r = run(["report", new, "--top", "3", "-o", out])
    check(r.returncode == 2 and b"does not apply" in r.stderr, "report --top: exit %d" % r.returncode)


def check_rounding_not_growth(snapdiff, tmp):
    """Issue 28: allocator rounding is not drawn as growth. testdata/overclaim/rounding_*
    (make_overclaim_fixtures.py, pair_rounding) hold optimizer.py:77 with the same requested
    bytes in different blocks: read NEW -> OLD, its blocks grow by rounding only, and the
    diff does not call that growth; the icicle does not draw it, and says how much it left out."""
    oc = os.path.join(ROOT, "testdata", "overclaim")
    files = [os.path.join(oc, "rounding_new.pickle"), os.path.join(oc, "rounding_old.pickle")]
    tree = embedded(report(snapdiff, files, os.path.join(tmp, "rounding.html")), "sd-report")["tree"]
    doc = json.loads(run(["--json", *files]).stdout)
    rounding = [g for g in doc["groups"] if g["delta_bytes"] > 0 and g["delta_requested_bytes"] == 0]
    check([g["key"].endswith("optimizer.py:77 step") for g in rounding] == [True],
          "rounding: the diff's rounding-only groups %s" % [g["key"] for g in rounding])
    drawn_frames = {tree["frames"][i] for _, ids in tree["stacks"] for i in ids}
    check(not any("optimizer.py:77" in f for f in drawn_frames),
          "rounding: the icicle draws optimizer.py:77 as growth: %s" % sorted(drawn_frames))
    check(tree["rounding_stacks"] == 1 and tree["rounding_bytes"] == rounding[0]["delta_bytes"] > 0,
          "rounding: the icicle left out %s stacks, %s bytes; the diff's rounding %s" %
          (tree["rounding_stacks"], tree["rounding_bytes"], rounding and rounding[0]["delta_bytes"]))
    check(tree["total_bytes"] + tree["rounding_bytes"] == folded_total(snapdiff, files),
          "rounding: drawn %d + rounding %d is not the folded growth %d" %
          (tree["total_bytes"], tree["rounding_bytes"], folded_total(snapdiff, files)))


def key_of(k):
    """A group of tests/truth/truth_diff.py: a key, or (key, device) with per-device groups."""
    return k[0] if isinstance(k, tuple) else k


USER = truth_diff.Rules((), ())


def user_dir(paths):
    """The directory every user frame of the files shares, which the report's site labels
    drop (docs/counting.md, "Site labels"), found by CPython in the pickles."""
    names = set()

    def walk(o):
        if isinstance(o, dict):
            fn = o.get("filename")
            if isinstance(fn, str) and USER.is_user((fn, 0, o.get("name", ""))):
                names.add(fn)
            for v in o.values():
                walk(v)
        elif isinstance(o, (list, tuple)):
            for v in o:
                walk(v)
    for p in paths:
        walk(truth_diff.load(p))
    pre = os.path.commonprefix(sorted(names)) if names else ""
    return pre[:pre.rfind("/") + 1]


def live_truth(path, files=None):
    """Live bytes per site of one snapshot (CPython, tests/truth/truth_diff.py), summed over
    devices as the profile's keys are, by the label the report shows: the site key without
    the directory the user frames of `files` (default: this one) share."""
    snap = truth_diff.load(path)
    t = truth_diff.compute(snap, snap)
    pre = user_dir(files or [path])
    out = {}
    for k, g in t["groups"].items():
        if g[2] > 0:
            k = key_of(k)
            k = k[len(pre):] if pre and k.startswith(pre) else k
            out[k] = out.get(k, 0) + g[2]
    return out


def folded_total(snapdiff, files):
    r = run(["diff", "--format", "folded", *files])
    return sum(int(l.rsplit(" ", 1)[1]) for l in r.stdout.decode().splitlines() if l.strip())


def check_frag(snapdiff, dom, path, what):
    fj = json.loads(run(["frag", "--json", path]).stdout)
    want = [str(d["device"]) for d in fj["devices"]]
    check(dom.frag_devices == want, "%s: fragmentation devices %s, frag --json %s" % (what, dom.frag_devices, want))
    verdicts = [d["verdict"] for d in fj["devices"]]
    check(all(v in dom.verdicts for v in verdicts), "%s: verdicts %s not all shown (%s)" % (what, verdicts, dom.verdicts))
    n_free = sum(1 for d in fj["devices"] if d["free_blocks"] > 0)
    check(len(dom.svg("histogram")) == n_free, "%s: %d histograms for %d devices with free blocks" %
          (what, len(dom.svg("histogram")), n_free))
    segs = [min(16, d["segments"]) for d in fj["devices"] if d["segments"]]
    got = [int(s["data-rows"]) for s in dom.svg("segmap")]
    check(got == segs, "%s: segment map rows %s, want %s" % (what, got, segs))
    return fj


def fmt_bytes(n):
    """The CLI's binary units (render/format.c) for the figures the page quotes."""
    if n < 1024:
        return "%d B" % n
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024.0
        if n < 1024 or unit == "TiB":
            return "%.1f %s" % (n, unit)


def check_peak_phases_and_oom(snapdiff, browser, tmp):
    """Issue 26: the two-file page says what the CLI diff says (the line naming the phases
    of the two peaks, the peak of each phase by category), and the oom comes first with its
    arithmetic, as frag computes it."""
    cat = os.path.join(ROOT, "testdata", "category")
    old, new = os.path.join(cat, "adam.pickle"), os.path.join(cat, "adam_bigstep.pickle")
    p = os.path.join(tmp, "phases.html")
    report(snapdiff, [old, new], p)
    dom = drawn(browser, p, tmp, "two files by phase")
    if dom:
        cli = subprocess.run([snapdiff, old, new], capture_output=True, text=True).stdout
        line = next((l for l in cli.splitlines() if l.startswith("OLD peaks in the ")), None)
        got = dom.ids.get("sd-phase-line-0", {}).get("data-line")
        check(line and got == line, "two files by phase: the page's line %r, the CLI's %r" % (got, line))
        doc = json.loads(subprocess.run([snapdiff, old, new, "--json"], capture_output=True,
                                        text=True).stdout)
        want = []
        for ph in doc["peak"]["devices"][0]["phases"]:
            want.append(ph["phase"])
            want += [ph["phase"] + "/" + c["category"] for c in ph["categories"]]
        rows = dom.rows.get("sd-peak-phases-table-0", [])
        check(rows == want and "optimizer/temporaries" in rows,
              "two files by phase: the peak of each phase by category %s, the diff's %s" % (rows, want))
        # issue 28: "at the peak" as the CLI prints it, and its rows (the CLI's 20 changed)
        line = next((l for l in cli.splitlines() if l.startswith("at the peak")), None)
        got = dom.ids.get("sd-peak-line-0", {}).get("data-line")
        check(line and got == line, "two files: the page's peak line %r, the CLI's %r" % (got, line))
        want = [g["key"] for g in doc["peak"]["devices"][0]["groups"] if g["delta_bytes"]][:20]
        rows = dom.rows.get("sd-peak-table-0", [])
        check(rows == want and rows, "two files: at the peak, rows %s, the diff's %s" % (rows, want))
        # each row names its site as the CLI's "at the peak" table does (the label, not the key)
        at_peak = cli[cli.index("at the peak"):] if "at the peak" in cli else ""
        cli_rows = [l.rstrip() for l in at_peak.splitlines()[1:]]
        shown = [dom.key_cells.get(("sd-peak-table-0", k)) for k in rows]
        bad = [s for s in shown if not s or not any(l.endswith("  " + s) for l in cli_rows)]
        check(shown and not bad, "two files: at the peak, the page names %s, not as the CLI's rows %s"
              % (bad, cli_rows[:5]))
    path = os.path.join(ROOT, "testdata", "oom", "fragmentation.pickle")
    p = os.path.join(tmp, "oom.html")
    report(snapdiff, [path], p)
    dom = drawn(browser, p, tmp, "an oom")
    if dom:
        o = json.loads(subprocess.run([snapdiff, "frag", path, "--json"], capture_output=True,
                                      text=True).stdout)["devices"][0]["oom_events"][-1]
        total = o["device_free_bytes"] + o["wholly_free_bytes"] + o["stranded_free_bytes"]
        figs = [fmt_bytes(x) for x in (o["request_bytes"], o["device_free_bytes"],
                                       o["wholly_free_bytes"], o["stranded_free_bytes"], total)]
        want = ("out of memory on device 0: request %s <= device free %s + wholly free %s + "
                "stranded %s = %s: %s; without the stranded space %s would have had to be freed"
                % tuple(figs + [o["cause"], fmt_bytes(o["shortfall_bytes"])]))
        got = dom.ids.get("sd-oom-0-0", {}).get("data-line")
        check(got == want and "236.0 MiB" in (got or ""),
              "an oom: the headline %r, frag's figures %r" % (got, want))
        # the timeline's peak says its phase and step, as top --json has them
        pk = json.loads(subprocess.run([snapdiff, "top", path, "--json"], capture_output=True,
                                       text=True).stdout)["devices"][0]["peak"]
        got = dom.ids.get("sd-timeline-note-0", {}).get("data-peak-phase")
        check(got == "in the %s of step %d" % (pk["phase"], pk["step"]) == "in the optimizer of step 1",
              "the timeline's peak: %r" % got)
    # the ranks of one job: how many died first, each with its last oom's entry and request
    p = os.path.join(tmp, "ranks_oom.html")
    report(snapdiff, [os.path.join(ROOT, "testdata", "oom", "ranks")], p)
    dom = drawn(browser, p, tmp, "ranks that died")
    if dom:
        got = dom.ids.get("sd-ranks-oom", {}).get("data-line")
        check(got == "Out of memory: 2 of 4 ranks recorded an oom entry",
              "ranks: the oom headline %r (testdata/oom/ranks: ranks 1 and 3 died)" % got)
        # issue 28: the OOM and the outlier come first, before the figures and the chart
        o = dom.order
        at = [o.index(i) if i in o else -1 for i in ("sd-main", "sd-ranks-top", "sd-ranks-oom",
                                                    "sd-ranks-outlier", "sd-ranks-section")]
        check(at[0] + 1 == at[1] < at[2] < at[3] < at[4],
              "ranks: the OOM and the outlier are not at the top: %s" % o[o.index("sd-main"):][:8])


def check_host_section(snapdiff, browser, tmp):
    """Pinned host memory (torch 2.14's host_segments): drawn as its own section, with
    CPython's figures; a snapshot without it draws none."""
    host = os.path.join(ROOT, "testdata", "basic", "v2_14_host.pickle")
    p = os.path.join(tmp, "host.html")
    report(snapdiff, [host], p)
    dom = drawn(browser, p, tmp, "pinned host memory")
    if not dom:
        return
    want = truth_stats.stats(truth_stats.load(host))["host"]
    check(dom.rows.get("sd-host-table") == [host], "host: one row for the file",
          dom.rows.get("sd-host-table"))
    row = dom.row_attrs.get(host, {})
    got = (row.get("data-allocated"), row.get("data-reserved"))
    check(got == (str(want["allocated_bytes"]), str(want["reserved_bytes"])),
          "host: the row's figures %s, CPython %s" % (got, want))


def job_truth(folder):
    """CPython's steps-by-ranks table of a torchtitan folder (testdata/make_job_fixtures.py):
    {(row key, rank): allocated bytes}; a row key is the step, "oom N" for iteration_N_exit."""
    cells = {}
    for dirpath, _, files in os.walk(folder):
        m = re.search(r"iteration_(\d+)(_exit)?$", dirpath)
        for f in files:
            r = re.match(r"rank(\d+)_memory_snapshot\.pickle$", f)
            if not (m and r):
                continue
            key = ("oom " if m.group(2) else "") + m.group(1)
            st = truth_stats.stats(truth_stats.load(os.path.join(dirpath, f)))
            cells[(key, r.group(1))] = str(st["total"]["allocated_bytes"])
    return cells


def check_job_table(snapdiff, browser, tmp):
    """A job's folder: the page draws every rank by step, as `series` prints it, with
    CPython's allocated bytes in each cell, and a row per rank of its steps."""
    folder = os.path.join(ROOT, "testdata", "jobs", "torchtitan")
    p = os.path.join(tmp, "job.html")
    report(snapdiff, [folder], p)
    dom = drawn(browser, p, tmp, "job folder")
    if not dom:
        return
    want = job_truth(folder)
    got = {(row, rank): v for (t, row, rank), v in dom.cells.items() if t == "sd-job-table" and v}
    check(want and got == want, "job: steps by rank, cell by cell: %s, CPython %s" % (got, want))
    steps = sorted({int(k.split()[-1]) for k, _ in want})
    rows = dom.rows.get("sd-job-table", [])
    check([r for r in rows if not r.startswith("oom")] == [str(s) for s in steps],
          "job: one row per step in step order: %s" % rows)
    check(rows.index("oom 30") == rows.index("30") + 1 if "oom 30" in rows and "30" in rows else False,
          "job: the OOM dump after step 30 follows its step: %s" % rows)
    per_rank = {}
    for (key, rank) in want:
        if not key.startswith("oom"):
            per_rank[rank] = per_rank.get(rank, 0) + 1
    for rank, n in per_rank.items():
        check(dom.row_attrs.get(rank, {}).get("data-steps") == str(n),
              "job: rank %s has %d steps: %s" % (rank, n, dom.row_attrs.get(rank)))


def part_browser(snapdiff, tmp):
    browser = browser_or_skip(tmp)
    old, new = os.path.join(EXAMPLE, "old.pickle"), os.path.join(EXAMPLE, "new.pickle")
    check_host_section(snapdiff, browser, tmp)
    check_job_table(snapdiff, browser, tmp)

    # one file: live memory by site, the icicle, fragmentation
    p = os.path.join(tmp, "one.html")
    report(snapdiff, [new], p)
    dom = drawn(browser, p, tmp, "one file")
    if dom:
        truth = live_truth(new)
        rows = dom.rows.get("sd-sites-table", [])
        check(set(rows) == set(truth), "one file: site rows %s, CPython %s" % (sorted(rows), sorted(truth)))
        top = max(truth.values())
        check(rows and truth.get(rows[0]) == top, "one file: first row %r is not the largest site" % rows[:1])
        ic = dom.svg(ident="sd-icicle")
        check(ic and int(ic[0]["data-total"]) == sum(truth.values()),
              "one file: icicle total %s, live bytes %d" % (ic and ic[0].get("data-total"), sum(truth.values())))
        check_frag(snapdiff, dom, new, "one file")

    # two files: the growth table, sorted by growth, and the icicle of the growth
    p = os.path.join(tmp, "two.html")
    report(snapdiff, [old, new], p)
    dom = drawn(browser, p, tmp, "two files")
    if dom:
        t = truth_diff.compute(truth_diff.load(old), truth_diff.load(new))
        rows = dom.rows.get("sd-growth-table", [])
        keys = {key_of(k) for k in t["groups"]}
        check(set(rows) == keys, "two files: growth rows %s, CPython %s" % (sorted(rows), sorted(keys)))
        first = [key_of(k) for k in t["order"][:1]]
        check(rows[:1] == first, "two files: first row %s, CPython's largest growth %s" % (rows[:1], first))
        ic = dom.svg(ident="sd-icicle")
        want = folded_total(snapdiff, [old, new])
        check(ic and int(ic[0]["data-total"]) == want, "two files: icicle total %s, folded growth %d" %
              (ic and ic[0].get("data-total"), want))

    check_peak_phases_and_oom(snapdiff, browser, tmp)

    # three files: per-group lines, the growing one highlighted
    p = os.path.join(tmp, "three.html")
    files = [os.path.join(LEAK, "churn_old.pickle"), old, new]
    page = report(snapdiff, files, p)
    dom = drawn(browser, p, tmp, "three files")
    if dom:
        ser = dom.svg(ident="sd-series")
        groups = embedded(page, "sd-report")["series"]["groups"]
        check(ser and int(ser[0]["data-lines"]) == len(groups) > 0, "three files: %s lines for %d groups" %
              (ser and ser[0].get("data-lines"), len(groups)))
        per_file = [live_truth(f, files) for f in files]
        for g in groups:
            want = [pf.get(g["key"], 0) for pf in per_file]
            check(g["bytes"] == want, "three files: %s bytes %s, CPython %s" % (g["key"], g["bytes"], want))
            grows = want[-1] > want[0] and all(b >= a for a, b in zip(want, want[1:]))
            check(g["growing"] == grows, "three files: %s growing %s" % (g["key"], g["growing"]))
        check(set(dom.rows.get("sd-series-table", [])) == {g["key"] for g in groups}, "three files: series table rows")

    # oom events tied to their lines; a trace timeline with its peak
    p = os.path.join(tmp, "oom.html")
    path = os.path.join(FRAG, "oom.pickle")
    page = report(snapdiff, [path], p)
    dom = drawn(browser, p, tmp, "oom")
    if dom:
        fj = check_frag(snapdiff, dom, path, "oom")
        want = [o["trace_index"] for d in fj["devices"] for o in d["oom_events"]]
        check(want and dom.oom_rows == want, "oom: oom rows %s, frag --json %s" % (dom.oom_rows, want))
    stats = json.loads(run(["stats", "--json", path]).stdout)
    with_alloc = [d for d in stats["devices"] if d["trace_actions"].get("alloc")]
    if dom:
        tl = dom.svg("timeline")
        check(len(tl) == len(with_alloc), "oom: %d timelines, %d devices with alloc entries" % (len(tl), len(with_alloc)))
        rts = embedded(page, "sd-report").get("reserved_timelines", [])
        check(rts and len(dom.svg("reserved-timeline")) == len(rts),
              "oom: a reserved-over-time chart per replayed device")


def part_real(snapdiff, tmp):
    real = clitest.real_snapshots(ROOT)
    browser = browser_or_skip(tmp)
    snaps = sorted(os.path.join(real, f) for f in os.listdir(real) if not f.endswith((".md", ".json")))
    pages = []
    for i, s in enumerate(snaps):
        out = os.path.join(tmp, "real%d.html" % i)
        r = run(["report", s, "-o", out])
        if check(r.returncode == 0, "%s: report exit %d: %s" % (s, r.returncode, r.stderr.decode())):
            pages.append((out, os.path.basename(s)))
    # two real snapshots as a diff, three as a series
    if len(snaps) >= 3:
        for k, files in ((2, snaps[:2]), (3, snaps[:3])):
            out = os.path.join(tmp, "real-n%d.html" % k)
            r = run(["report", *files, "-o", out])
            if check(r.returncode == 0, "%d real snapshots: exit %d: %s" % (k, r.returncode, r.stderr.decode())):
                pages.append((out, "%d real snapshots" % k))
    # batches of browsers at once: each page is a separate process
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        doms = list(pool.map(lambda pw: drawn(browser, pw[0], tmp, pw[1]), pages))
    for (out, what), dom in zip(pages, doms):
        size = os.path.getsize(out)
        check(size < 8 << 20, "%s: the page is %d bytes" % (what, size))
    print("real snapshots: %d pages rendered" % len(pages))


def main():
    snapdiff, part = sys.argv[1], sys.argv[2]
    T.bin = snapdiff
    with tempfile.TemporaryDirectory() as tmp:
        {"offline": part_offline, "cli": part_cli, "browser": part_browser, "real": part_real}[part](snapdiff, tmp)
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
