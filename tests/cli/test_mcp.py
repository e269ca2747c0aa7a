#!/usr/bin/env python3
"""snapdiff mcp (issue 29): raw JSON-RPC over the pipe.

Usage: test_mcp.py SNAPDIFF ROOT PART
  protocol  both eras (initialize/ping, server/discover and _meta), every error code, one
            bad request never ends the server, end of input ends it, stdout holds only
            protocol messages
  tools     tools/list and tools/call: structuredContent equals `snapdiff CMD --json` on the
            fixtures (diff, frag, top, trace, series, check, replay, curve), truncation,
            --max-memory, the resources
  roots     paths only under --root: absolute, `..`, links out and in, a directory holding
            a link out, -o under a root and never over a file without overwrite
  hostile   the hostile corpus (pickle, refuse, model, trunc groups) through frag: the
            CLI's error line as a tool error, bounded time, no code run
  real      diff and frag on every real snapshot (../shared/real-snapshots): equal to the CLI
"""
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402

T = clitest.Suite(rc=None)
check = T.check
TIMEOUT = 120          # seconds for one answer, on a loaded machine
LEGACY = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}}
ROOT_DIR = [None]     # the fixtures' folder, the servers' first root
TOOLS = {"top", "diff", "frag", "replay", "trace", "series", "curve", "check", "summarize", "plan",
         "report"}


class Server:
    """`snapdiff mcp ARGS` with a pipe each way; one request, one answer."""

    def __init__(self, args, cwd=None):
        # stderr (the server's log) into a file: a pipe nobody reads would fill and block it
        self.log = tempfile.TemporaryFile()
        self.p = subprocess.Popen([T.bin, "mcp"] + list(args), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.log, cwd=cwd)
        self.next_id = 0
        self.buf = b""

    def send_raw(self, line):
        self.p.stdin.write(line if isinstance(line, bytes) else line.encode())
        self.p.stdin.flush()

    def read(self, timeout=TIMEOUT):
        """The next line on stdout, parsed; None when none comes in time."""
        deadline = time.time() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            ready, _, _ = select.select([fd], [], [], max(0, deadline - time.time()))
            chunk = os.read(fd, 1 << 20) if ready else b""
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            check(False, "stdout holds only JSON-RPC messages", line[:200])
            return None

    def request(self, method, params=None, meta=False):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None or meta:
            msg["params"] = dict(params or {})
            if meta:
                msg["params"]["_meta"] = dict(META)
        self.send_raw(json.dumps(msg) + "\n")
        r = self.read()
        check(r is not None and r.get("id") == self.next_id and r.get("jsonrpc") == "2.0",
              "%s: an answer with id %d" % (method, self.next_id), str(r)[:300])
        return r or {}

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send_raw(json.dumps(msg) + "\n")

    def call(self, tool, args, meta=False):
        return self.request("tools/call", {"name": tool, "arguments": args}, meta)

    def close(self):
        """End of input ends the server, promptly and with status 0."""
        self.p.stdin.close()
        try:
            rc = self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = None
        rest = self.buf + self.p.stdout.read()
        self.p.stdout.close()
        self.log.close()
        check(rc == 0, "end of input ends the server with status 0", "rc %s" % rc)
        check(rest.strip() == b"", "nothing on stdout after the last answer", rest[:200])


def error_of(r, code, *words):
    e = r.get("error") or {}
    ok = e.get("code") == code and all(w in e.get("message", "") for w in words)
    check(ok, "error %d naming %s" % (code, words), json.dumps(r)[:400])
    return e


def cli_docs(args):
    """`snapdiff ARGS` stdout as its JSON documents (several for several snapshots)."""
    p = subprocess.run([T.bin] + args, capture_output=True, text=True)
    dec, out, at, docs = json.JSONDecoder(), p.stdout, 0, []
    while True:
        while at < len(out) and out[at].isspace():
            at += 1
        if at >= len(out):
            break
        d, at = dec.raw_decode(out, at)
        docs.append(d)
    return p.returncode, docs


def same_as_cli(srv, tool, files, args, cli_args, what, root=None):
    """tools/call's structuredContent against `snapdiff TOOL --json CLI_ARGS FILES` (the
    files relative to `root`, the server's first)."""
    r = srv.call(tool, dict(args, files=files, max_items=0)).get("result", {})
    if not check(r.get("isError") is False and "structuredContent" in r,
                 "%s: a result" % what, json.dumps(r)[:400]):
        return r
    rc, docs = cli_docs([tool, "--json"] + cli_args + ["--"] + [os.path.realpath(os.path.join(root or ROOT_DIR[0], f)) for f in files])
    sc = r["structuredContent"]
    got = sc["documents"] if sc.get("schema") == "snapdiff.mcp-documents/1" else [sc]
    check(got == docs, "%s: structuredContent equals the CLI's --json" % what)
    text = r["content"][1]["text"]
    check(json.loads(text) == sc, "%s: the JSON text block is the same document" % what)
    return r


# ---------- protocol ----------

def part_protocol(root):
    srv = Server(["--root", root])
    for v in LEGACY:
        r = srv.request("initialize", {"protocolVersion": v, "capabilities": {},
                                       "clientInfo": {"name": "t", "version": "1"}})
        res = r.get("result", {})
        check(res.get("protocolVersion") == v, "initialize %s: the same version back" % v, str(res)[:200])
        check("tools" in res.get("capabilities", {}) and "resources" in res.get("capabilities", {}),
              "initialize %s: tools and resources offered" % v)
        check(res.get("serverInfo", {}).get("name") == "snapdiff", "initialize: serverInfo")
    for v in ["2099-01-01", MODERN, "1.0"]:
        r = srv.request("initialize", {"protocolVersion": v, "capabilities": {}})
        check(r.get("result", {}).get("protocolVersion") == LEGACY[0],
              "initialize %s: the newest handshake version instead" % v, str(r)[:200])
    srv.notify("notifications/initialized")
    srv.notify("notifications/cancelled", {"requestId": 99})
    r = srv.request("ping")
    check(r.get("result") == {}, "ping: an empty result (and the notifications got none)", str(r))

    # the handshake era before 2025-06-18 has no structured results
    srv.request("initialize", {"protocolVersion": "2025-03-26", "capabilities": {}})
    tools = srv.request("tools/list").get("result", {}).get("tools", [])
    check(tools and all("outputSchema" not in t for t in tools), "2025-03-26: no outputSchema")
    r = srv.call("frag", {"files": ["frag/compact.pickle"]}).get("result", {})
    check("structuredContent" not in r and "snapdiff.frag/1" in r.get("content", [{}, {}])[1].get("text", ""),
          "2025-03-26: the document as text, no structuredContent", json.dumps(r)[:300])
    srv.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    tools = srv.request("tools/list").get("result", {}).get("tools", [])
    check(all("outputSchema" in t for t in tools), "2025-06-18: every tool has an outputSchema")

    # the stateless revision: server/discover, the version in every request's _meta
    r = srv.request("server/discover", {}, meta=True).get("result", {})
    check(r.get("supportedVersions") == [MODERN] + LEGACY, "server/discover: every version",
          str(r.get("supportedVersions")))
    check(r.get("resultType") == "complete" and r.get("serverInfo", {}).get("name") == "snapdiff"
          and "tools" in r.get("capabilities", {}), "server/discover: resultType, serverInfo, capabilities")
    r = srv.request("tools/list", {}, meta=True).get("result", {})
    check(r.get("resultType") == "complete" and {t["name"] for t in r.get("tools", [])} == TOOLS,
          "2026-07-28 tools/list: every tool, resultType complete")
    check(all("outputSchema" in t for t in r.get("tools", [])), "2026-07-28: outputSchema")
    r = srv.call("frag", {"files": ["frag/compact.pickle"]}, meta=True).get("result", {})
    check(r.get("resultType") == "complete" and
          r.get("structuredContent", {}).get("schema") == "snapdiff.frag/1", "2026-07-28 tools/call")
    bad = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2030-01-01"}}
    e = error_of(srv.request("tools/list", bad), -32004, "Unsupported protocol version")
    check(e.get("data", {}).get("supported") == [MODERN] + LEGACY and
          e.get("data", {}).get("requested") == "2030-01-01", "-32004: supported and requested")
    error_of(srv.request("ping", {}, meta=True), -32601, "ping")

    # every error code; none ends the server
    srv.send_raw("{not json\n")
    r = srv.read()
    error_of(r or {}, -32700, "Parse error")
    check((r or {}).get("id", 0) is None, "-32700: id null")
    srv.send_raw(json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]) + "\n")
    error_of(srv.read() or {}, -32600, "batch")
    srv.send_raw(json.dumps({"id": 5, "method": "ping"}) + "\n")
    error_of(srv.read() or {}, -32600, "jsonrpc")
    srv.send_raw(json.dumps({"jsonrpc": "2.0", "id": [1], "method": "ping"}) + "\n")
    error_of(srv.read() or {}, -32600, "id")
    srv.send_raw("\n   \n")             # blank lines: nothing to answer
    error_of(srv.request("no/such/method"), -32601, "no/such/method")
    error_of(srv.request("prompts/list"), -32601)
    error_of(srv.request("initialize", {"capabilities": {}}), -32602, "protocolVersion")
    error_of(srv.request("tools/call", {"arguments": {}}), -32602, "params.name")
    error_of(srv.call("nosuch", {}), -32602, "unknown tool", "nosuch")
    error_of(srv.call("diff", {}), -32602, "arguments.files")
    error_of(srv.call("diff", {"files": ["leak/churn_old.pickle"]}), -32602, "arguments.files")
    error_of(srv.call("frag", {"files": [3]}), -32602, "files[0]")
    # a NUL inside a string (that would cut a path short) is refused as it is read
    srv.send_raw(json.dumps({"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": {
        "name": "frag", "arguments": {"files": ["frag/compact.pickle\u0000x"]}}}) + "\n")
    error_of(srv.read() or {}, -32700, "\\u0000")
    error_of(srv.call("diff", {"files": ["a", "b"], "top": "many"}), -32602, "arguments.top")
    error_of(srv.call("diff", {"files": ["a", "b"], "bogus": 1}), -32602, "arguments.bogus")
    error_of(srv.call("diff", {"files": ["a", "b"], "svg": "x.svg"}), -32602, "arguments.svg")
    error_of(srv.call("frag", {"files": ["frag/compact.pickle"], "gap-threshold": 500}), -32602,
             "--gap-threshold", "500")
    error_of(srv.call("frag", {"files": ["frag/compact.pickle"], "max_items": -1}), -32602, "max_items")
    error_of(srv.request("tools/call", {"name": "frag", "arguments": [1]}), -32602, "arguments")
    error_of(srv.request("resources/read", {"uri": "snapdiff://docs/nope.md"}), -32002, "nope.md")
    error_of(srv.request("resources/read", {}), -32602, "uri")
    # a file the analysis cannot read: the CLI's one line, as a tool error
    r = srv.call("frag", {"files": ["frag/missing.pickle"]}).get("result", {})
    msg = r.get("content", [{}])[0].get("text", "")
    check(r.get("isError") is True and msg.startswith("snapdiff: ") and "missing.pickle" in msg,
          "an absent file: isError with the CLI's message", msg)
    hostile = os.path.join(root, "make_fixtures.py")     # no pickle at all
    r = srv.call("frag", {"files": [hostile]}).get("result", {})
    cli = subprocess.run([T.bin, "frag", hostile], capture_output=True, text=True)
    check(r.get("isError") is True and r["content"][0]["text"].strip() == cli.stderr.strip(),
          "not a snapshot: isError with exactly the CLI's message",
          "%r vs %r" % (r.get("content"), cli.stderr))
    srv.send_raw(b"\xff\xfe garbage\n")
    error_of(srv.read() or {}, -32700)
    r = srv.request("ping")
    check(r.get("result") == {}, "the server still answers after every bad request")
    # answered in order even when sent at once; then end of input
    srv.send_raw("".join(json.dumps({"jsonrpc": "2.0", "id": 1000 + i, "method": "ping"}) + "\n"
                         for i in range(5)))
    ids = [(srv.read() or {}).get("id") for _ in range(5)]
    check(ids == [1000 + i for i in range(5)], "requests answered in order", str(ids))
    srv.close()

    # a request cut off by the end of input is not waited for
    srv = Server(["--root", root])
    srv.send_raw('{"jsonrpc": "2.0", "id": 1, "method": "pi')
    t0 = time.time()
    srv.p.stdin.close()
    rc = srv.p.wait(timeout=30)
    out = srv.p.stdout.read()
    check(rc == 0 and time.time() - t0 < 20, "end of input mid-request ends the server", str(rc))
    check(all(json.loads(l).get("error", {}).get("code") == -32700 for l in out.splitlines()),
          "the cut request, if answered at all, is a parse error", out[:200])
    srv.p.stdout.close()
    srv.log.close()

    # the command line
    p = subprocess.run([T.bin, "mcp", "--root", os.path.join(root, "nope")], capture_output=True,
                       text=True, stdin=subprocess.DEVNULL)
    check(p.returncode == 2 and "--root" in p.stderr and p.stdout == "", "a bad --root: exit 2", p.stderr)
    p = subprocess.run([T.bin, "mcp", "x.pickle"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    check(p.returncode == 2 and "mcp takes no file" in p.stderr, "mcp FILE: exit 2", p.stderr)


# ---------- tools ----------

def part_tools(root):
    srv = Server(["--root", root])
    srv.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    tools = {t["name"]: t for t in srv.request("tools/list").get("result", {}).get("tools", [])}
    check(set(tools) == TOOLS, "tools/list: the eleven tools", str(sorted(tools)))
    help_text = subprocess.run([T.bin, "frag", "--help"], capture_output=True, text=True).stdout
    props = tools.get("frag", {}).get("inputSchema", {}).get("properties", {})
    for name in ["gap-threshold", "index-threshold", "max-memory"]:
        check(name in props and "--" + name in help_text, "frag's option %s: the CLI's name" % name)
    check(props.get("gap-threshold", {}).get("default") == 30 and
          props.get("index-threshold", {}).get("default") == 0.5, "frag: the CLI's defaults")
    check(tools.get("diff", {}).get("inputSchema", {}).get("properties", {}).get("top", {})
          .get("default") == 20, "diff --top: default 20")
    check("json" not in props and "svg" not in props and "output" not in props,
          "frag: no --json, --svg or -o (the server's choices)")
    check("output" in tools.get("summarize", {}).get("inputSchema", {}).get("required", []),
          "summarize: output required")

    leak = ["leak/churn_old.pickle", "leak/churn_new.pickle"]
    for old, new in [leak, ["leak/move_old.pickle", "leak/move_new.pickle"],
                     ["leak/multidev_old.pickle", "leak/multidev_new.pickle"]]:
        same_as_cli(srv, "diff", [old, new], {}, [], "diff %s %s" % (old, new))
    same_as_cli(srv, "diff", leak, {"group-by": "file", "steps": 100, "hide": ["torch/"]},
                ["--group-by=file", "--steps=100", "--hide=torch/"], "diff with options")
    for f in sorted(os.listdir(os.path.join(root, "frag"))):
        if f.endswith(".pickle"):
            same_as_cli(srv, "frag", ["frag/" + f], {}, [], "frag " + f)
    same_as_cli(srv, "frag", ["frag/compact.pickle"], {"gap-threshold": 10, "index-threshold": 0.2},
                ["--gap-threshold=10", "--index-threshold=0.2"], "frag with thresholds")
    same_as_cli(srv, "top", ["leak/churn_new.pickle"], {"top": 3}, ["--top=3"], "top")
    same_as_cli(srv, "top", leak, {}, [], "top of two files (two documents)")
    trace = sorted(f for f in os.listdir(os.path.join(root, "trace")) if f.endswith(".pickle"))
    same_as_cli(srv, "trace", ["trace/" + trace[0]], {}, [], "trace")
    same_as_cli(srv, "series", ["series/leak"], {}, [], "series of a folder")
    leak_dir = os.path.join(root, "series", "leak")
    steps = sorted(f for f in os.listdir(leak_dir) if f.endswith(".pickle"))[:5]
    same_as_cli(srv, "series", ["series/leak/" + f for f in steps], {"steps-between": 100},
                ["--steps-between=100"], "series of five files")
    same_as_cli(srv, "check", leak, {"max-growth": "1MiB"}, ["--max-growth=1MiB"], "check")
    r = srv.call("check", dict(files=leak, **{"max-growth": "1MiB"})).get("result", {})
    check(r.get("isError") is False and "exit status 1" in r["content"][0]["text"],
          "check: a broken limit is a result that says so", r.get("content", [{}])[0].get("text"))
    replay = sorted(f for f in os.listdir(os.path.join(root, "replay")) if f.endswith(".pickle"))
    same_as_cli(srv, "replay", ["replay/" + replay[0]], {"alloc-conf": ["expandable_segments:True"]},
                ["--alloc-conf=expandable_segments:True"], "replay")
    same_as_cli(srv, "curve", ["curve/leak_sawtooth.log"], {}, [], "curve")

    # bounded: arrays longer than max_items are cut and said so
    r = srv.call("diff", {"files": leak, "max_items": 2}).get("result", {})
    sc = r.get("structuredContent", {})
    cut = {c["path"]: c for c in sc.get("truncated_arrays", [])}
    _, full = cli_docs(["diff", "--json", "--"] + [os.path.join(root, f) for f in leak])
    check(sc.get("truncated") is True and len(sc.get("groups", [])) == 2 and
          cut.get("/groups", {}).get("total") == len(full[0]["groups"]) and
          cut["/groups"]["kept"] == 2, "max_items 2: groups cut, with truncated_arrays",
          json.dumps(sc.get("truncated_arrays"))[:300])
    check([g.get("key") for g in sc.get("groups", [])] == [g.get("key") for g in full[0]["groups"][:2]],
          "the kept groups are the CLI's first ones")
    check("truncated" in r["content"][0]["text"] and "max_items" in r["content"][0]["text"],
          "the summary says how to ask for more")
    r = srv.call("diff", {"files": leak}).get("result", {})
    check(r.get("structuredContent") == full[0] if len(full[0]["groups"]) <= 100 else True,
          "the default bound keeps a small result whole")

    # the memory limit: per call, never above the server's
    error_of(srv.call("diff", {"files": leak, "max-memory": "1TiB"}), -32602, "max-memory")
    big = os.path.join(root, "leak", "churn_new.pickle")
    size = os.path.getsize(big)
    if size > (1 << 20):
        r = srv.call("frag", {"files": [big], "max-memory": "1MiB"}).get("result", {})
        check(r.get("isError") is True and "--max-memory" in r["content"][0]["text"],
              "a call over its memory limit fails alone", r.get("content"))
    small = Server(["--root", root, "--max-memory", "1MiB"])
    r = small.call("frag", {"files": ["frag/compact.pickle"]}).get("result", {})
    text = r.get("content", [{}])[0].get("text", "")
    check(r.get("isError") is True and "memory budget" in text,
          "over the server's 1 MiB limit: the call fails, with the CLI's message", text)
    check(small.request("ping").get("result") == {}, "and the server goes on")
    small.close()

    # resources: the schema documents and the pattern catalogue
    res = srv.request("resources/list").get("result", {}).get("resources", [])
    uris = {x["uri"] for x in res}
    docs = os.path.join(clitest.ROOT, "docs")
    want = {"snapdiff://docs/" + f for f in os.listdir(docs)
            if (f.startswith("json-") and f.endswith(".md")) or f == "patterns.md"}
    check(uris == want, "resources/list: docs/json-*.md and patterns.md", str(sorted(uris ^ want)))
    for name in ["json-diff.md", "patterns.md"]:
        r = srv.request("resources/read", {"uri": "snapdiff://docs/" + name}).get("result", {})
        text = r.get("contents", [{}])[0].get("text")
        with open(os.path.join(docs, name), encoding="utf-8") as f:
            check(text == f.read(), "resources/read %s: the document" % name)
    srv.close()


# ---------- roots ----------

def part_roots(root):
    tmp = tempfile.mkdtemp(prefix="snapdiff-mcp-")
    try:
        inside, other, out = (os.path.join(tmp, d) for d in ("inside", "other", "outside"))
        for d in (inside, other, out):
            os.mkdir(d)
        src = os.path.join(root, "frag", "compact.pickle")
        shutil.copy(src, os.path.join(inside, "a.pickle"))
        shutil.copy(src, os.path.join(other, "b.pickle"))
        shutil.copy(src, os.path.join(out, "secret.pickle"))
        os.symlink(os.path.join(out, "secret.pickle"), os.path.join(inside, "link_out.pickle"))
        os.symlink("a.pickle", os.path.join(inside, "link_in.pickle"))
        os.symlink(os.path.join(out, "gone.pickle"), os.path.join(inside, "dangling.pickle"))
        os.mkdir(os.path.join(inside, "ranks"))
        shutil.copy(src, os.path.join(inside, "ranks", "rank0.pickle"))
        os.symlink(os.path.join(out, "secret.pickle"), os.path.join(inside, "ranks", "rank1.pickle"))
        os.symlink(out, os.path.join(inside, "dir_out"))
        srv = Server(["--root", inside, "--root", other], cwd=out)
        ok = lambda p: srv.call("frag", {"files": [p]}).get("result", {}).get("isError") is False
        check(ok("a.pickle"), "a relative path: under the first root")
        check(ok(os.path.join(inside, "a.pickle")), "an absolute path under a root")
        check(ok(os.path.join(other, "b.pickle")), "a file under the second root")
        check(ok("link_in.pickle"), "a link that stays inside a root")
        check(ok(os.path.join(inside, "..", "inside", "a.pickle")), "`..` that stays inside")
        for bad in [os.path.join(out, "secret.pickle"), "../outside/secret.pickle",
                    "link_out.pickle", "dir_out/secret.pickle", "/etc/passwd", "/",
                    os.path.join(inside, "..", "outside", "secret.pickle"), "ranks",
                    "dangling.pickle", "../outside/nothing.pickle"]:
            error_of(srv.call("frag", {"files": [bad]}), -32602, "files[0]")
        r = srv.call("diff", {"files": ["a.pickle", "link_out.pickle"]})
        error_of(r, -32602, "files[1]", "outside the roots")
        error_of(srv.call("check", {"files": ["a.pickle", "a.pickle"],
                                    "config": os.path.join(out, "limits.conf")}), -32602, "config")
        # writes: under a root, never over a file unless overwrite, never through a link
        r = srv.call("summarize", {"files": ["a.pickle"], "output": "a.sdsum"}).get("result", {})
        written = os.path.join(inside, "a.sdsum")
        check(r.get("isError") is False and os.path.getsize(written) > 0 and
              r.get("structuredContent", {}).get("output") == written, "summarize -o under the root",
              json.dumps(r)[:300])
        before = open(written, "rb").read()
        error_of(srv.call("summarize", {"files": ["a.pickle"], "output": "a.sdsum"}), -32602,
                 "output", "overwrite")
        r = srv.call("summarize", {"files": ["a.pickle"], "output": "a.sdsum", "overwrite": True})
        check(r.get("result", {}).get("isError") is False and open(written, "rb").read() == before,
              "overwrite: true replaces it")
        error_of(srv.call("summarize", {"files": ["a.pickle"], "output": os.path.join(out, "x.sdsum")}),
                 -32602, "output", "outside")
        error_of(srv.call("summarize", {"files": ["a.pickle"], "output": "dir_out/x.sdsum"}),
                 -32602, "output")
        error_of(srv.call("summarize", {"files": ["a.pickle"], "output": "link_in.pickle",
                                        "overwrite": True}), -32602, "output", "link")
        error_of(srv.call("summarize", {"files": ["a.pickle"], "output": "dangling.pickle",
                                        "overwrite": True}), -32602, "output", "link")
        error_of(srv.call("summarize", {"files": ["a.pickle"]}), -32602, "output")
        error_of(srv.call("frag", {"files": ["a.pickle"], "output": "x"}), -32602, "output")
        error_of(srv.call("frag", {"files": ["a.pickle"], "overwrite": True}), -32602, "overwrite")
        r = srv.call("report", {"files": ["a.pickle"], "output": "page.html"}).get("result", {})
        check(r.get("isError") is False and os.path.getsize(os.path.join(inside, "page.html")) > 0,
              "report -o under the root", json.dumps(r)[:300])
        check(sorted(os.listdir(out)) == ["secret.pickle"], "nothing written outside the roots",
              str(os.listdir(out)))
        srv.close()
        # the default root: the current directory
        srv = Server([], cwd=inside)
        check(ok("a.pickle"), "no --root: the current directory")
        error_of(srv.call("frag", {"files": [os.path.join(other, "b.pickle")]}), -32602, "outside")
        srv.close()
    finally:
        shutil.rmtree(tmp)


# ---------- hostile corpus ----------

def part_hostile(root):
    """The hostile corpus (tests/cli/hostile/make_cases.py) through the server: every case
    gives the CLI's answer (the same one line, as a tool error), in bounded time, no code
    runs, and the server survives all of them."""
    tmp = tempfile.mkdtemp(prefix="snapdiff-mcp-hostile-")
    try:
        make = os.path.join(clitest.HERE, "hostile", "make_cases.py")
        subprocess.run([sys.executable, make, tmp, "--group", "pickle", "--group", "refuse",
                        "--group", "model", "--group", "trunc", "--flips", "40"], check=True,
                       capture_output=True)
        with open(os.path.join(tmp, "cases.json")) as f:
            cases = [c for c in json.load(f) if c["spec"] != "-" and not c.get("stdin")
                     and not c.get("args") and ":" not in c["spec"]]
        # every case of pickle, refuse and model; one truncation in four (the hostile_trunc
        # test runs them all through the CLI, and the server hands them to the same code)
        trunc = [c for c in cases if c["group"] == "trunc"]
        cases = [c for c in cases if c["group"] != "trunc"] + trunc[::4]
        srv = Server(["--root", tmp])
        errors = 0
        for c in cases:
            path = os.path.join(tmp, c["spec"])
            if not os.path.isfile(path):
                continue
            t0 = time.time()
            r = srv.call("frag", {"files": [c["spec"]]}).get("result")
            cli = subprocess.run([T.bin, "frag", "--json", "--", os.path.realpath(path)],
                                 capture_output=True, text=True)
            if not check(r is not None, "hostile %s: an answer" % c["name"]):
                break
            check(time.time() - t0 < 60, "hostile %s: answered in bounded time" % c["name"])
            if cli.returncode == 2:
                errors += 1
                check(r.get("isError") is True and
                      r["content"][0]["text"].strip() == cli.stderr.strip(),
                      "hostile %s: the CLI's error line" % c["name"],
                      "%r vs %r" % (r.get("content", [{}])[0].get("text"), cli.stderr))
            else:
                check(r.get("isError") is False, "hostile %s: a result, as the CLI" % c["name"])
            if c.get("marker"):
                check(not os.path.exists(os.path.join(tmp, c["marker"])),
                      "hostile %s: no code ran" % c["name"])
        check(srv.request("ping").get("result") == {}, "the server survived the corpus")
        srv.close()
        print("hostile: %d cases, %d refused with the CLI's error line" % (len(cases), errors))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------- real snapshots ----------

def part_real(root):
    real = clitest.real_snapshots()
    snaps = sorted(os.path.join(real, f) for f in os.listdir(real) if f.endswith(".pickle"))
    srv = Server(["--root", real])
    for s in snaps:
        same_as_cli(srv, "frag", [s], {}, [], "frag " + os.path.basename(s), real)
    for old, new in zip(snaps, snaps[1:]):
        same_as_cli(srv, "diff", [old, new], {}, [], "diff %s %s" % (os.path.basename(old),
                                                                     os.path.basename(new)), real)
    srv.close()
    print("real: %d snapshots, %d pairs" % (len(snaps), max(len(snaps) - 1, 0)))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    T.bin = os.path.abspath(sys.argv[1])
    root = os.path.realpath(os.path.join(sys.argv[2], "testdata"))
    ROOT_DIR[0] = root
    {"protocol": part_protocol, "tools": part_tools, "roots": part_roots,
     "hostile": part_hostile, "real": part_real}[sys.argv[3]](root)
    sys.exit(T.finish(sys.argv[3]))


if __name__ == "__main__":
    main()
