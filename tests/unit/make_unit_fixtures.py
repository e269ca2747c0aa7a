#!/usr/bin/env python3
"""Fixtures for the Check unit tests, pickled by CPython at build time so that the
expectations are Python's own while the tests themselves run no interpreter.

    python3 make_unit_fixtures.py OUTDIR

Writes OUTDIR/<name>.pickle for each entry of FIXTURES, then OUTDIR/stamp (the output
CMake tracks). Protocol 4 throughout, as torch.cuda.memory._dump_snapshot writes.
"""
import os
import pickle
import sys

FRAMES = [{"filename": "/src/train.py", "name": "step", "line": 88}]


def legacy_list():
    """torch 1.13 list layout: no block addresses, requested size only in the history."""
    seg = {"device": 0, "address": 4096, "total_size": 3072, "segment_type": "large",
           "blocks": [
               {"size": 1024, "state": "active_allocated",
                "history": [{"addr": 4096, "real_size": 1000, "frames": list(FRAMES)}]},
               {"size": 512, "state": "inactive"},
               {"size": 1536, "state": "active_allocated",
                "history": [{"addr": 5632, "real_size": 1500, "frames": list(FRAMES)}]}]}
    return [seg]


def dict_devices():
    """Two devices listed out of order, traces on device 1, allocator settings."""
    def seg(device, addr):
        return {"device": device, "address": addr, "total_size": 2048,
                "segment_type": "small", "is_expandable": False, "segment_pool_id": (0, 0),
                "blocks": [{"address": addr, "size": 2048, "requested_size": 2000,
                            "state": "active_pending_free", "frames": []}]}
    trace = [{"action": "alloc", "addr": 1, "size": 8, "stream": 0, "time_us": 10},
             {"action": "oom", "size": 99, "device_free": 7, "stream": 0, "time_us": 30}]
    return {"segments": [seg(1, 8192), seg(0, 4096)], "device_traces": [[], trace],
            "allocator_settings": {"max_split_size": -1, "expandable_segments": True}}


def bad_tiling():
    """Blocks that do not tile their segment (a warning, not an error)."""
    return {"segments": [{"device": 0, "address": 4096, "total_size": 4096,
                          "blocks": [{"size": 1024, "state": "inactive"}]}],
            "device_traces": []}


def negative_size():
    return {"segments": [{"device": 0, "address": 4096, "total_size": -5, "blocks": []}]}


def not_a_snapshot():
    return {"a": 1}


FIXTURES = {
    "legacy_list": legacy_list,
    "dict_devices": dict_devices,
    "bad_tiling": bad_tiling,
    "negative_size": negative_size,
    "not_a_snapshot": not_a_snapshot,
}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_unit_fixtures.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in FIXTURES.items():
        with open(os.path.join(out, name + ".pickle"), "wb") as f:
            f.write(pickle.dumps(make(), 4))
    with open(os.path.join(out, "stamp"), "w") as f:
        f.write("\n".join(sorted(FIXTURES)) + "\n")


if __name__ == "__main__":
    main()
