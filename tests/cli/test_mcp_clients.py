#!/usr/bin/env python3
"""snapdiff mcp (issue 29) driven by the official clients, pinned in tests/mcp/package.json:
the TypeScript SDK (@modelcontextprotocol/sdk: Client + StdioClientTransport,
tests/mcp/client.mjs) and the MCP Inspector's CLI mode (@modelcontextprotocol/inspector
--cli). Both list the tools and call diff and frag, on the fixtures and on the real
snapshots (when ../shared is there); every structuredContent must equal the CLI's --json.

Usage: test_mcp_clients.py SNAPDIFF SOURCE_DIR WORK_DIR
The packages are installed by npm into WORK_DIR (kept between runs while the pins hold).
Skipped, saying so, only when npm is missing or cannot reach its registry.
"""
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402

T = clitest.Suite(rc=None)
check = T.check


def pinned(src):
    with open(os.path.join(src, "tests", "mcp", "package.json")) as f:
        return json.load(f)["dependencies"]


def installed(work, deps):
    for name, version in deps.items():
        p = os.path.join(work, "node_modules", name, "package.json")
        try:
            with open(p) as f:
                if json.load(f).get("version") != version:
                    return False
        except (OSError, ValueError):
            return False
    return True


def install(src, work):
    """npm install of the pinned packages into work; skip when the registry is out of reach."""
    npm = shutil.which("npm")
    if not npm or not shutil.which("node"):
        clitest.skip("npm or node is not installed (tests/deps.sh installs them): the official "
                     "MCP clients did not run")
    os.makedirs(work, exist_ok=True)
    for f in ("package.json", "client.mjs"):
        shutil.copy(os.path.join(src, "tests", "mcp", f), os.path.join(work, f))
    deps = pinned(src)
    if installed(work, deps):
        return
    p = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
                       cwd=work, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        ping = subprocess.run([npm, "ping"], cwd=work, capture_output=True, text=True, timeout=120)
        if ping.returncode != 0:
            clitest.skip("npm cannot reach its registry (npm ping: %s): the official MCP "
                         "clients did not run" % (ping.stderr.strip().splitlines() or ["?"])[-1])
        check(False, "npm install of %s" % deps, p.stderr[-500:])
        sys.exit(T.finish("clients"))
    check(installed(work, deps), "the pinned versions are installed", str(deps))


def cli_doc(args):
    p = subprocess.run([T.bin] + args, capture_output=True, text=True)
    return json.loads(p.stdout)


def sdk(work, root, calls, what):
    """client.mjs on `calls` [(tool, [files])]: each structuredContent against the CLI."""
    specs = ["%s:%s" % (tool, ",".join(files)) for tool, files in calls]
    p = subprocess.run(["node", "client.mjs", T.bin, root] + specs, cwd=work,
                       capture_output=True, text=True, timeout=900)
    if not check(p.returncode == 0, "%s: the SDK client ran" % what, p.stderr[-800:]):
        return
    out = json.loads(p.stdout)
    check(out["version"]["name"] == "snapdiff" and {"diff", "frag"} <= set(out["tools"]),
          "%s: the SDK connected and listed the tools" % what, str(out["tools"]))
    for c in out["calls"]:
        files = [os.path.join(root, f) for f in c["files"]]
        want = cli_doc([c["name"], "--json", "--"] + files)
        check(c["isError"] is False and c["structuredContent"] == want,
              "%s: SDK %s %s equals the CLI's --json" % (what, c["name"], " ".join(c["files"])))
    return len(out["calls"])


def inspector(work, root, args):
    cmd = [os.path.join(work, "node_modules", ".bin", "mcp-inspector"), "--cli", T.bin, "mcp",
           "--root", root] + args
    p = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, "inspector %s: ran" % " ".join(args), p.stderr[-800:])
    try:
        return json.loads(p.stdout)
    except ValueError:
        check(False, "inspector %s: JSON on stdout" % " ".join(args), p.stdout[:300])
        return {}


def inspect_call(work, root, tool, files, what):
    r = inspector(work, root, ["--method", "tools/call", "--tool-name", tool, "--tool-arg",
                               "files=" + json.dumps(files), "--tool-arg", "max_items=0"])
    want = cli_doc([tool, "--json", "--"] + [os.path.join(root, f) for f in files])
    check(r.get("isError") is False and r.get("structuredContent") == want,
          "inspector: %s %s equals the CLI's --json" % (tool, what))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    T.bin = os.path.abspath(sys.argv[1])
    src, work = os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    fixtures = os.path.join(src, "testdata")
    install(src, work)

    pairs = [["leak/churn_old.pickle", "leak/churn_new.pickle"],
             ["leak/multidev_old.pickle", "leak/multidev_new.pickle"]]
    frags = ["frag/oom.pickle", "frag/fragmented.pickle"]
    sdk(work, fixtures, [("diff", p) for p in pairs] + [("frag", [f]) for f in frags], "fixtures")
    tools = inspector(work, fixtures, ["--method", "tools/list"]).get("tools", [])
    check({"diff", "frag", "top", "check"} <= {t["name"] for t in tools},
          "inspector: tools/list names the tools")
    check(all("outputSchema" in t for t in tools), "inspector: every tool has an outputSchema")
    inspect_call(work, fixtures, "diff", pairs[0], "on fixtures")
    inspect_call(work, fixtures, "frag", frags[0:1], "on a fixture")

    real = clitest.real_snapshots(skip_if_absent=False)
    real = real and os.path.realpath(real)
    if real is None:
        print("SKIP (part): %s/real-snapshots is absent: the clients were not run on real "
              "snapshots" % clitest.shared_dir())
    else:
        snaps = sorted(f for f in os.listdir(real) if f.endswith(".pickle"))
        calls = [("diff", [a, b]) for a, b in zip(snaps, snaps[1:])] + [("frag", [s]) for s in snaps]
        n = sdk(work, real, calls, "real snapshots")
        print("real: the SDK made %s calls on %d snapshots" % (n, len(snaps)))
        inspect_call(work, real, "diff", snaps[:2], "on real snapshots")
        inspect_call(work, real, "frag", snaps[-1:], "on a real snapshot")
    sys.exit(T.finish("clients"))


if __name__ == "__main__":
    main()
