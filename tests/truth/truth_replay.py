"""truth_replay.py - the recorded peak reserved of each device trace, from the pickle alone:
reserved at the trace's start (the snapshot's segments, less the segment_alloc/map bytes of
the trace, plus its segment_free/unmap bytes), then every segment event in order.

    python3 truth_replay.py FILE   -> JSON {device: {"peak": N, "end": N, "start": N}}
"""
import json, pickle, sys

ADD = ("segment_alloc", "segment_map")
SUB = ("segment_free", "segment_unmap")


def recorded(snap):
    out = {}
    if isinstance(snap, list):
        return out
    segs = snap.get("segments", [])
    for dev, trace in enumerate(snap.get("device_traces", [])):
        if not trace:
            continue
        end = sum(s["total_size"] for s in segs if s.get("device", 0) == dev)
        delta = sum(e["size"] for e in trace if e["action"] in ADD) - \
            sum(e["size"] for e in trace if e["action"] in SUB)
        res = start = end - delta
        peak = res
        for e in trace:
            if e["action"] in ADD:
                res += e["size"]
            elif e["action"] in SUB:
                res -= e["size"]
            peak = max(peak, res)
        out[dev] = {"peak": peak, "end": res, "start": start}
    return out


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as f:
        print(json.dumps(recorded(pickle.load(f))))
