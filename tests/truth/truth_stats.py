#!/usr/bin/env python3
"""Independent truth for `snapdiff stats`: the same figures computed by CPython.

    python3 truth_stats.py FILE            prints the stats JSON CPython computes

FILE may be a raw pickle, a gzip, a torch.save-style zip or a zip/dir member given as
ARCHIVE:MEMBER. The definitions mirror the man page (STATS); nothing here imports
snapdiff's code. Only plain data is loaded (a restricted Unpickler refuses globals).
"""
import gzip
import io
import json
import os
import pickle
import sys
import zipfile


class PlainUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused global {module}.{name}")


def read_bytes(spec):
    path, member = spec, None
    if not os.path.exists(spec) and ":" in spec:
        path, member = spec.rsplit(":", 1)
    if os.path.isdir(path):
        with open(os.path.join(path, member), "rb") as f:
            data = f.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
        if data[:2] == b"PK":
            z = zipfile.ZipFile(io.BytesIO(data))
            names = [n for n in z.namelist() if not n.endswith("/")]
            pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
            data = z.read(member if member else (pkl[0] if pkl else names[0]))
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def load(spec):
    return PlainUnpickler(io.BytesIO(read_bytes(spec))).load()


ACTIONS = ["alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
           "segment_map", "segment_unmap", "oom", "snapshot", "annotate"]


def requested(block):
    if "requested_size" in block:
        return block["requested_size"]
    hist = block.get("history") or []
    if hist and "real_size" in hist[0]:
        return hist[0]["real_size"]
    return block["size"]


def device_stats(dev, segments, trace):
    st = {"device": dev, "segments": len(segments),
          "segments_large": sum(1 for s in segments if s.get("segment_type") != "small"),
          "segments_small": sum(1 for s in segments if s.get("segment_type") == "small"),
          "segments_expandable": sum(1 for s in segments if s.get("is_expandable")),
          "blocks": sum(len(s.get("blocks", [])) for s in segments),
          "reserved_bytes": sum(s["total_size"] for s in segments)}
    blocks = [b for s in segments for b in s.get("blocks", [])]
    alloc = [b for b in blocks if b.get("state") == "active_allocated"]
    pend = [b for b in blocks if b.get("state") == "active_pending_free"]
    st["allocated_bytes"] = sum(b["size"] for b in alloc)
    st["pending_free_bytes"] = sum(b["size"] for b in pend)
    st["active_bytes"] = st["allocated_bytes"] + st["pending_free_bytes"]
    st["requested_bytes"] = sum(requested(b) for b in alloc + pend)
    st["inactive_bytes"] = sum(b["size"] for b in blocks if b.get("state") == "inactive")
    st["trace_entries"] = len(trace)
    acts = {}
    for e in trace:
        a = e.get("action")
        a = a if a in ACTIONS else "other"
        acts[a] = acts.get(a, 0) + 1
    st["trace_actions"] = acts
    times = [e["time_us"] for e in trace if "time_us" in e]
    st["time_span"] = {"first_us": min(times), "last_us": max(times)} if times else None
    return st


def stats(snap):
    if isinstance(snap, list):
        segments, traces = snap, []
    else:
        segments, traces = snap["segments"], snap.get("device_traces") or []
    devs = sorted({s.get("device", 0) for s in segments} |
                  {i for i, t in enumerate(traces) if t})
    out = []
    for d in devs:
        segs = sorted((s for s in segments if s.get("device", 0) == d), key=lambda s: s["address"])
        tr = traces[d] if d < len(traces) and d >= 0 else []
        out.append(device_stats(d, segs, tr))
    total = {}
    for k in device_stats(0, [], []):
        if k in ("device", "trace_actions", "time_span"):
            continue
        total[k] = sum(d[k] for d in out)
    acts = {}
    for d in out:
        for a, n in d["trace_actions"].items():
            acts[a] = acts.get(a, 0) + n
    total["trace_actions"] = acts
    spans = [d["time_span"] for d in out if d["time_span"]]
    total["time_span"] = ({"first_us": min(s["first_us"] for s in spans),
                           "last_us": max(s["last_us"] for s in spans)} if spans else None)
    host = None
    if isinstance(snap, dict) and ("host_segments" in snap or "host_traces" in snap):
        # pinned host memory: its own section, in no device's figures and not in the total
        host = device_stats(-1, sorted(snap.get("host_segments") or [], key=lambda s: s["address"]),
                            snap.get("host_traces") or [])
        del host["device"]
    return {"devices": out, "total": total, "host": host, "skip_actions": skip_actions(snap)}


# The figures each action's absence makes unreliable (the man page, STATS), in order.
# A block is released by its first free_requested or free_completed: "frees" are gone
# only when both are skipped.
UNRELIABLE = [
    ("the trace's peak", {"alloc", "frees"}),
    ("leak and lifetime figures from the trace", {"alloc", "frees"}),
    ("allocation counts and sites from the trace", {"alloc"}),
    ("reserved memory over the trace", {"segment_alloc", "segment_free", "segment_map",
                                        "segment_unmap"}),
    ("replay", {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
                "segment_map", "segment_unmap"}),
    ("the oom count (none seen is not none happened)", {"oom"}),
    ("phases split at snapshot and annotate entries", {"snapshot", "annotate"}),
]


def skip_actions(snap):
    """None when the snapshot does not say which actions the recording skipped."""
    if not isinstance(snap, dict):
        return None
    skip = snap.get("skip_actions")
    if skip is None and isinstance(snap.get("allocator_settings"), dict):
        skip = snap["allocator_settings"].get("skip_actions")
    if not isinstance(skip, (list, tuple)) or not all(isinstance(a, str) for a in skip):
        return None
    names = {a if a in ACTIONS else "other" for a in skip}
    acts = [a for a in ACTIONS + ["other"] if a in names]
    if {"free_requested", "free_completed"} <= names:
        names.add("frees")
    return {"actions": acts, "unreliable": [f for f, need in UNRELIABLE if need & names]}


if __name__ == "__main__":
    json.dump(stats(load(sys.argv[1])), sys.stdout, indent=1)
    print()
