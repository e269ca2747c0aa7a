#!/usr/bin/env python3
"""Independent CPython derivation of the replay's trust reasons (docs/json-replay.md,
"trust_reasons"; issue 36) from a snapshot pickle.

    truth_trust.py FILE [REPLAY_JSON]

Prints JSON {device: {"codes": [...], "keys": [...]}}. The snapshot-side reasons come from
the pickle alone: "non-upstream-keys" (keys that upstream torch/csrc/cuda/memory_snapshot.cpp
never writes, listed here from that file: older torch's block "history", newer torch's
"pool_id" and host_* included), "npu-streams" (no segment, and no trace entry but oom and
snapshot ones, on stream 0, and no entry with time_us, as torch_npu's memory_snapshot.cpp
writes). The warm-start reasons need the replay's verdict: with REPLAY_JSON (snapdiff
replay --json), a trusted device whose trace has no segment_alloc or segment_map and whose
fidelity checked no segment decision is "placements-only" when the trace has an alloc,
else "nothing-checked"; not-trusted codes are taken from its untrusted_why as given.
Test data only: never run it on untrusted files.
"""
import json
import pickle
import sys

UPSTREAM = {
    "snapshot": {"segments", "device_traces", "allocator_settings", "external_annotations",
                 "host_segments", "host_traces", "skip_actions"},
    "segment": {"device", "address", "total_size", "allocated_size", "active_size",
                "requested_size", "stream", "segment_type", "segment_pool_id",
                "is_expandable", "frames", "blocks"},
    "block": {"address", "size", "requested_size", "state", "frames", "history",
              "forward_frames", "user_metadata", "compile_context"},
    "trace": {"action", "addr", "size", "stream", "device_free", "time_us", "frames",
              "forward_frames", "user_metadata", "compile_context", "pool_id"},
}
FAIL_CODES = ["not-run", "placements-below-99pct", "segment-decisions-differ", "peak-differs"]


def foreign_keys(snap):
    out = set()
    if isinstance(snap, list):
        snap = {"segments": snap}
    else:
        out |= {"snapshot." + k for k in snap if k not in UPSTREAM["snapshot"]}
    for seg in snap.get("segments", []):
        out |= {"segment." + k for k in seg if k not in UPSTREAM["segment"]}
        for b in seg.get("blocks", []):
            out |= {"block." + k for k in b if k not in UPSTREAM["block"]}
    for t in snap.get("device_traces") or []:
        for e in t:
            out |= {"trace." + k for k in e if k not in UPSTREAM["trace"]}
    return out


def npu_device(snap, dev):
    segs = [s for s in snap.get("segments", []) if s.get("device", 0) == dev]
    traces = snap.get("device_traces") or []
    trace = traces[dev] if dev < len(traces) else []
    if not segs and not trace:
        return False
    if any(s.get("stream", 0) == 0 for s in segs):
        return False
    for e in trace:
        if "time_us" in e:
            return False
        if e.get("stream", 0) == 0 and e["action"] not in ("oom", "snapshot"):
            return False
    return True


def compute(path, replay=None):
    with open(path, "rb") as f:
        snap = pickle.load(f)
    keys = foreign_keys(snap)
    devs = sorted({d["device"] for d in replay["devices"]}) if replay else [0]
    out = {}
    for dev in devs:
        codes = []
        traces = [] if isinstance(snap, list) else (snap.get("device_traces") or [])
        trace = traces[dev] if dev < len(traces) else []
        if replay:
            d = next(x for x in replay["devices"] if x["device"] == dev)
            fid = d["fidelity"]
            if not fid["trusted"]:
                codes += [c for c in FAIL_CODES if c in [r["code"] for r in fid["trust_reasons"]]]
            elif not any(e["action"] in ("segment_alloc", "segment_map") for e in trace) \
                    and fid["segment_decisions_checked"] == 0:
                allocs = sum(e["action"] == "alloc" for e in trace)
                codes.append("placements-only" if allocs else "nothing-checked")
        if keys:
            codes.append("non-upstream-keys")
        if not isinstance(snap, list) and npu_device(snap, dev):
            codes.append("npu-streams")
        out[dev] = {"codes": codes, "keys": sorted(keys)}
    return out


def main():
    replay = None
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as f:
            replay = json.load(f)
    json.dump(compute(sys.argv[1], replay), sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    sys.exit(main())
