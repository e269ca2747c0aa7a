#!/usr/bin/env python3
"""Write the basic layout fixtures in testdata/basic/ with CPython's pickle.

    python3 testdata/make_fixtures.py

One small snapshot per layout PyTorch has written (format reference sections 2.1-2.4),
built the way torch builds them: key strings are one object each (so they pickle as memo
references), each unique frame dict and stack list is one shared object (2.1+), the empty
stack is one shared list. Deterministic: the same bytes on every run.
"""
import os
import pickle

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "basic")
BASE = 0x7F3A40000000
MiB = 1 << 20


def frame(filename, name, line):
    return {"filename": filename, "name": name, "line": line}


TRAIN = frame("/home/user/project/train.py", "train_step", 88)
MODEL = frame("/home/user/project/model.py", "forward", 42)
LINEAR = frame("/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py", "forward", 116)
CPP = frame("??", "at::native::empty_cuda(c10::ArrayRef<long>)", 0)
STACK_A = [CPP, LINEAR, MODEL, TRAIN]       # innermost first
STACK_B = [CPP, TRAIN]
EMPTY = []


def legacy_1_13():
    """torch <= 1.13: a bare list of segments; blocks carry history, no address."""
    def hist(addr, real, frames):
        return [{"addr": addr, "real_size": real, "frames": [dict(f) for f in frames]}]
    seg = {"device": 0, "address": BASE, "total_size": 20 * MiB, "allocated_size": 6 * MiB,
           "active_size": 6 * MiB, "stream": 0, "segment_type": "large",
           "blocks": [
               {"size": 4 * MiB, "state": "active_allocated",
                "history": hist(BASE, 4 * MiB - 512, STACK_A)},
               {"size": 2 * MiB, "state": "active_allocated",
                "history": hist(BASE + 4 * MiB, 2 * MiB, STACK_B)},
               {"size": 14 * MiB, "state": "inactive"}]}
    small = {"device": 0, "address": BASE + 64 * MiB, "total_size": 2 * MiB,
             "allocated_size": 512, "active_size": 512, "stream": 0, "segment_type": "small",
             "blocks": [{"size": 512, "state": "active_allocated",
                         "history": hist(BASE + 64 * MiB, 400, STACK_B)},
                        {"size": 2 * MiB - 512, "state": "inactive"}]}
    return [seg, small]


def v2_0_history():
    """torch 2.0: the dict form with device_traces; blocks still carry history."""
    snap = {"segments": legacy_1_13(), "device_traces": [[
        {"action": "segment_alloc", "addr": BASE, "size": 20 * MiB, "stream": 0},
        {"action": "alloc", "addr": BASE, "size": 4 * MiB - 512, "stream": 0},
        {"action": "snapshot", "addr": 0, "size": 6 * MiB + 512, "stream": 0}]]}
    for seg in snap["segments"]:
        for b in seg["blocks"]:
            b["requested_size"] = b["history"][0]["real_size"] if "history" in b else 0
    return snap


def v2_6_full():
    """torch 2.1-2.10: frames on blocks and segments, pool ids, expandable flag, time_us,
    allocator settings, annotations, two devices, a pending-free block and an oom."""
    def seg(dev, addr, blocks, kind="large", pool=(0, 0), stream=0):
        total = sum(b["size"] for b in blocks)
        a = addr
        for b in blocks:
            b["address"] = a
            a += b["size"]
        act = [b for b in blocks if b["state"] != "inactive"]
        return {"device": dev, "address": addr, "total_size": total,
                "allocated_size": sum(b["size"] for b in blocks if b["state"] == "active_allocated"),
                "active_size": sum(b["size"] for b in act),
                "requested_size": sum(b["requested_size"] for b in act),
                "stream": stream, "segment_type": kind, "segment_pool_id": pool,
                "is_expandable": False, "frames": STACK_B, "blocks": blocks}

    def blk(size, state, req=None, frames=EMPTY):
        return {"size": size, "requested_size": size if req is None else req, "state": state,
                "frames": frames}

    segs = [
        seg(0, BASE, [blk(8 * MiB, "active_allocated", 8 * MiB - 100, STACK_A),
                      blk(4 * MiB, "active_pending_free", frames=STACK_B),
                      blk(8 * MiB, "inactive", 0)]),
        seg(0, BASE + 32 * MiB, [blk(2 * MiB, "active_allocated", frames=STACK_A)],
            pool=(1, 7), stream=0x55D0C0DE1230),
        seg(1, BASE + (1 << 34), [blk(1024, "active_allocated", 1000, STACK_B),
                                  blk(2 * MiB - 1024, "inactive", 0)], kind="small"),
    ]
    t0 = 1_698_326_576_864_190
    traces = [[{"action": "alloc", "addr": BASE, "size": 8 * MiB - 100, "stream": 0,
                "time_us": t0, "compile_context": "", "user_metadata": "", "frames": STACK_A},
               {"action": "free_requested", "addr": BASE + 8 * MiB, "size": 4 * MiB,
                "stream": 0, "time_us": t0 + 50, "compile_context": "", "user_metadata": ""},
               {"action": "oom", "size": 3 << 30, "device_free": 1234567, "stream": 0,
                "time_us": t0 + 90, "compile_context": "", "user_metadata": ""}],
              [{"action": "alloc", "addr": BASE + (1 << 34), "size": 1000, "stream": 0,
                "time_us": t0 + 7, "compile_context": "", "user_metadata": "",
                "frames": STACK_B}]]
    return {"segments": segs, "device_traces": traces,
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:512",
                                   "max_split_size": 512 * MiB,
                                   "garbage_collection_threshold": 0.0,
                                   "expandable_segments": False,
                                   "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)}},
            "external_annotations": [{"name": "step", "stage": "START", "device": 0,
                                      "time_us": t0}]}


def write(name, obj, protocol=4):
    with open(os.path.join(OUT, name), "wb") as f:
        pickle.dump(obj, f, protocol=protocol)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    write("legacy_1_13.pickle", legacy_1_13())
    write("v2_0_history.pickle", v2_0_history())
    write("v2_6_full.pickle", v2_6_full())
    write("v2_6_full_protocol2.pickle", v2_6_full(), protocol=2)
    print("wrote", sorted(os.listdir(OUT)))
