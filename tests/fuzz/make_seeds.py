#!/usr/bin/env python3
"""Write the seed corpora of the fuzz targets.

    make_seeds.py OUTDIR

OUTDIR/pickle: raw pickles (for fuzz_pickle); OUTDIR/load: the same plus gzip, zip and
torch.save wrappings (for fuzz_load). Sources: the project's testdata/ fixtures, small
snapshot-shaped pickles made here with CPython (every protocol, legacy and 2.1+ layouts,
shared and cyclic objects, every plain-data opcode), and, where real-snapshots/ exists in
$SNAPDIFF_SHARED (default ../shared beside the checkout), the real snapshots up to MAX_REAL
bytes (larger ones slow every mutation down; their first bytes are added as truncated seeds
instead).
"""
import gzip
import hashlib
import json
import io
import os
import pickle
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "cli", "hostile"))
import make_cases as mc  # noqa: E402  (snapshot builders and the zip writer)

MAX_REAL = 64 * 1024
MAX_FIXTURE = 256 * 1024


def plain_data_samples():
    """Pickles that use every plain-data opcode the reader accepts."""
    s = mc.small_snapshot()
    cyc = []
    cyc.append(cyc)
    shared = [1, 2]
    odd = {"ints": [0, 1, 255, 256, 65535, 65536, -1, 2**31 - 1, -2**31, 2**63 - 1, -2**63,
                    2**64, -2**100, 2**1000], "floats": [0.0, -1.5, float("inf"), 1e300],
           "bools": [True, False, None], "bytes": b"\x00\xff", "ba": bytearray(b"ab"),
           "sets": {1, 2}, "fs": frozenset([3]), "tuples": [(), (1,), (1, 2), (1, 2, 3),
                                                           (1, 2, 3, 4)],
           "str": ["", "\u00e9", "\U0001F600", "\ud800", "x" * 300], "shared": [shared, shared],
           "cycle": cyc}
    out = []
    for proto in range(0, 6):
        out.append(("snapshot_p%d" % proto, pickle.dumps(s, protocol=proto)))
        out.append(("odd_p%d" % proto, pickle.dumps(odd, protocol=proto)))
    out.append(("legacy_p4", pickle.dumps(mc.legacy_snapshot(
        [{"size": 4096, "state": "active_allocated",
          "history": [{"addr": 1, "real_size": 100,
                       "frames": [mc.frame("f", "/a.py", 1)]}]},
         {"size": 4096, "state": "inactive"}]), protocol=4)))
    out.append(("legacy_p2", pickle.dumps(mc.legacy_snapshot(
        [{"size": 512, "state": "active_pending_free"}]), protocol=2)))
    out.append(("trailing", pickle.dumps(s, protocol=4) + b"\x00\x00"))
    # Regressions: inputs that once crashed a target (kept as seeds, so every run replays
    # them first).
    out.append(("regress_segments_without_blocks", pickle.dumps(
        {"segments": [{"device": 0, "address": 1 << 40, "total_size": 0, "frames": []}],
         "device_traces": []}, protocol=4)))
    out.append(("regress_no_frames_at_all", pickle.dumps(
        {"segments": [], "device_traces": [], "allocator_settings": {}}, protocol=4)))
    out.append(("text_ops", b"(lp0\nI1\naI01\naL123L\naF1.5\naS'ab\\x41'\naVa\\u00e9\nag0\na"
                            b"(dp1\nVk\np2\nN0Ns(t1(I2\ntp3\n2."))
    return out


def wrapped(name, data):
    """The same bytes as gzip, a zip of ranks and a torch.save zip."""
    out = [(name + ".gz", gzip.compress(data, mtime=0))]
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("rank0.pickle", data)
        z.writestr("rank1.pickle", data)
    out.append((name + ".ranks.zip", bio.getvalue()))
    out.append((name + ".pt", mc.torch_save_zip(data)))
    return out


def files_under(top, exts, limit):
    if not os.path.isdir(top):
        return []
    out = []
    for dirpath, _, names in os.walk(top):
        for n in sorted(names):
            if n.endswith(exts):
                p = os.path.join(dirpath, n)
                with open(p, "rb") as f:
                    data = f.read(limit + 1)
                out.append((n, data))
    return out


def mcp_sessions():
    """fuzz_mcp's seeds: JSON-RPC sessions, one message a line, on its scratch root."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}}}
    calls = [("diff", {"files": ["s0.pickle", "s0.pickle"], "top": 3, "max_items": 2}),
             ("frag", {"files": ["s1.pickle"], "gap-threshold": 10}),
             ("top", {"files": ["s0.pickle", "s1.pickle"]}),
             ("trace", {"files": ["s1.pickle"], "since": "#2"}),
             ("check", {"files": ["s0.pickle", "s1.pickle"], "max-growth": "1MiB"}),
             ("replay", {"files": ["s1.pickle"], "alloc-conf": ["expandable_segments:True"]}),
             ("summarize", {"files": ["s0.pickle"], "output": "x.sdsum", "overwrite": True}),
             ("frag", {"files": ["../etc/passwd"]}),
             ("frag", {"files": ["nothere.pickle"]})]
    out = []
    for i, (tool, args) in enumerate(calls):
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": tool, "arguments": args}}
        modern = dict(call, params=dict(call["params"], _meta=meta))
        out.append(("mcp-%d-%s" % (i, tool), (json.dumps(init) + "\n" + json.dumps(call) + "\n").encode()))
        out.append(("mcp-%d-%s-modern" % (i, tool), (json.dumps(modern) + "\n").encode()))
    for method in ["tools/list", "resources/list", "server/discover", "ping"]:
        out.append(("mcp-" + method.replace("/", "-"), (json.dumps(init) + "\n" + json.dumps(
            {"jsonrpc": "2.0", "id": "a", "method": method, "params": {"_meta": meta}}) + "\n").encode()))
    out.append(("mcp-read", json.dumps({"jsonrpc": "2.0", "id": 3, "method": "resources/read",
                                        "params": {"uri": "snapdiff://docs/json-frag.md"}}).encode()))
    out.append(("mcp-garbage", b'{"jsonrpc":"2.0","id":1,"method":\n[1,2]\n\xff\n'))
    return out


def write(outdir, sub, items):
    d = os.path.join(outdir, sub)
    os.makedirs(d, exist_ok=True)
    seen = set()
    for name, data in items:
        h = hashlib.sha1(data).hexdigest()[:12]
        if h in seen:
            continue
        seen.add(h)
        with open(os.path.join(d, "%s-%s" % (h, name.replace("/", "_")[:60])), "wb") as f:
            f.write(data)
    return len(seen)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    outdir = sys.argv[1]
    raw = plain_data_samples()
    fixtures = files_under(os.path.join(ROOT, "testdata"), (".pickle", ".pkl"), MAX_FIXTURE)
    raw += [(n, d) for n, d in fixtures if len(d) <= MAX_FIXTURE]
    real_dir = os.path.join(os.environ.get("SNAPDIFF_SHARED") or os.path.join(ROOT, "..", "shared"),
                            "real-snapshots")
    real = files_under(real_dir, (".pickle", ".pkl"), MAX_REAL)
    if not real:
        print("make_seeds: %s not found: no real snapshots in the seeds" % real_dir)
    for n, d in real:
        raw.append((n if len(d) <= MAX_REAL else n + ".head", d[:MAX_REAL]))
    load = list(raw)
    for n, d in raw[:12]:
        load += wrapped(n, d)
    load += [(n, d) for n, d in files_under(os.path.join(ROOT, "testdata"),
                                            (".gz", ".zip", ".pt"), MAX_FIXTURE)]
    a = write(outdir, "pickle", raw)
    b = write(outdir, "load", load)
    write(outdir, "mcp", mcp_sessions())
    print("make_seeds: %d pickle seeds, %d load seeds in %s" % (a, b, outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
