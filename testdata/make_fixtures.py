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


def v2_14(skip=()):
    """torch 2.14 (snapshot-format.md section 2.4): the 2.6 dict plus per-entry pool_id, an
    annotate entry, pinned host memory (host_segments/host_traces, recorded with
    record_pinned_host_memory=True) and skip_actions among the allocator settings.

    Follows torch/csrc/cuda/memory_snapshot.cpp, _memory_snapshot_pickled(): segments as
    segmentInfoToDict makes them, trace entries as its device_traces loop does. The
    stored torch source this was read from predates the host keys: host segments here are
    segmentInfoToDict's shape without `device` (the CachingHostAllocator is not per
    device; one block per segment, its size rounded up to a power of two as
    at::CachingHostAllocator rounds it), host_traces one list of entries shaped like a
    device's."""
    snap = v2_6_full()
    t0 = 1_698_326_576_864_190
    for dev in snap["device_traces"]:
        for e in dev:
            e["pool_id"] = (0, 0)
    snap["device_traces"][0].insert(1, {
        "action": "annotate", "addr": 0, "size": 0, "stream": 0, "time_us": t0 + 20,
        "compile_context": "", "user_metadata": '{"step": 3}', "pool_id": (0, 0)})
    # Per-entry pool_id (PR #177717): _memory_snapshot_pickled() writes each TraceEntry's
    # mempool as a tuple, the pool the allocator served the request from
    # (CUDACachingAllocator.cpp, DeviceCachingAllocator::record_trace is handed the
    # block's pool owner id). A CUDA graph's private pool: the segment at BASE + 32 MiB,
    # segment_pool_id (1, 7), made and used while capturing; a MemPool's (0, 3) on device
    # 1. The oom entry names no pool: an absent key is unknown, never (0, 0).
    G = (1, 7)
    GS = 0x55D0C0DE1230

    def ent(action, addr, size, t, pool, stream=0, frames=None):
        e = {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": t,
             "compile_context": "", "user_metadata": ""}
        if frames is not None:
            e["frames"] = frames
        e["pool_id"] = pool
        return e

    tr0 = snap["device_traces"][0]
    tr0[3:3] = [
        ent("segment_alloc", BASE + 32 * MiB, 2 * MiB, t0 + 60, G, GS),
        ent("alloc", BASE + 32 * MiB, 3 * MiB // 2 - 3, t0 + 61, G, GS, STACK_A),
        ent("free_requested", BASE + 32 * MiB, 3 * MiB // 2 - 3, t0 + 62, G, GS),
        ent("alloc", BASE + 32 * MiB, 2 * MiB, t0 + 63, G, GS, STACK_A),
    ]
    del [e for e in tr0 if e["action"] == "oom"][0]["pool_id"]
    M = BASE + (1 << 34) + 2 * MiB   # the MemPool's segment, made and given back
    snap["device_traces"][1] += [
        ent("segment_alloc", M, 2 * MiB, t0 + 8, (0, 3)),
        ent("alloc", M, 4096, t0 + 9, (0, 3), frames=STACK_B),
        ent("free_requested", M, 4096, t0 + 10, (0, 3)),
        ent("segment_free", M, 2 * MiB, t0 + 11, (0, 3)),
    ]
    HOST = 0x7F2200000000

    def host_seg(addr, size, state, req, frames):
        blk = {"address": addr, "size": size, "requested_size": req, "state": state,
               "frames": frames}
        active = state != "inactive"
        return {"address": addr, "total_size": size,
                "allocated_size": size if state == "active_allocated" else 0,
                "active_size": size if active else 0, "requested_size": req if active else 0,
                "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
                "is_expandable": False, "frames": frames, "blocks": [blk]}

    snap["host_segments"] = [
        host_seg(HOST + 16 * MiB, 4 * MiB, "inactive", 0, EMPTY),
        host_seg(HOST, 16 * MiB, "active_allocated", 10 * MiB + 7, STACK_B),
        host_seg(HOST + 32 * MiB, 2 * MiB, "active_allocated", 2 * MiB, STACK_A),
    ]
    snap["host_traces"] = [
        {"action": "segment_alloc", "addr": HOST, "size": 16 * MiB, "stream": 0,
         "time_us": t0 + 1, "frames": STACK_B},
        {"action": "alloc", "addr": HOST, "size": 10 * MiB + 7, "stream": 0,
         "time_us": t0 + 2, "frames": STACK_B},
        {"action": "alloc", "addr": HOST + 16 * MiB, "size": 3 * MiB, "stream": 0,
         "time_us": t0 + 3, "frames": STACK_A},
        {"action": "free_completed", "addr": HOST + 16 * MiB, "size": 3 * MiB, "stream": 0,
         "time_us": t0 + 4, "frames": STACK_A},
    ]
    snap["allocator_settings"]["skip_actions"] = list(skip)
    return snap


def write(name, obj, protocol=4):
    with open(os.path.join(OUT, name), "wb") as f:
        pickle.dump(obj, f, protocol=protocol)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    write("legacy_1_13.pickle", legacy_1_13())
    write("v2_0_history.pickle", v2_0_history())
    write("v2_6_full.pickle", v2_6_full())
    write("v2_6_full_protocol2.pickle", v2_6_full(), protocol=2)
    write("v2_14_host.pickle", v2_14())
    write("v2_14_skip.pickle", v2_14(skip=("free_requested", "free_completed")))
    print("wrote", sorted(os.listdir(OUT)))
