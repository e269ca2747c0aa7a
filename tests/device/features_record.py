#!/usr/bin/env python3
"""Record what a torch build writes for the allocator features a plain training loop
does not use, so the replay and the reader can be checked on them: a side stream with
record_stream (frees that complete later), torch.cuda.empty_cache() mid-run, a CUDA graph
(a private pool), pinned host memory, record_function annotations, skip_actions. Each
feature is tried on its own and a missing one is written down, not fatal.

Usage: features_record.py OUTDIR   (OUTDIR gets features.tar.xz: NAME.pickle + NAME.json)
"""
import inspect
import json
import os
import subprocess
import sys
import tarfile
import traceback

MB = 1 << 20


def record(torch, **extra):
    sig = inspect.signature(torch.cuda.memory._record_memory_history).parameters
    kw = {k: v for k, v in extra.items() if k in sig}
    torch.cuda.memory._record_memory_history(max_entries=1_000_000, stacks="python", **kw)
    return sorted(kw)


def streams(torch):
    """Blocks used on a side stream and freed on the main one (record_stream): torch
    records free_requested, then free_completed when the event says the side stream is
    done (c10 CUDACachingAllocator insert_events / process_events)."""
    side = torch.cuda.Stream()
    keep = []
    for i in range(40):
        a = torch.empty((i % 7 + 1) * 3 * MB, dtype=torch.uint8, device="cuda")
        with torch.cuda.stream(side):
            b = torch.empty((i % 5 + 1) * 5 * MB, dtype=torch.uint8, device="cuda")
            torch.cuda._sleep(200000)
            b.fill_(1)
            a.record_stream(side)
        del a
        if i % 3 == 0:
            keep.append(b)
        del b
        if i == 20:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
    torch.cuda.synchronize()
    return keep


def graph(torch):
    """A CUDA graph: its allocations come from a private pool."""
    x = torch.randn(1024, 1024, device="cuda")
    w = torch.randn(1024, 1024, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            y = (x @ w).relu()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = (x @ w).relu() + 1
    g.replay()
    torch.cuda.synchronize()
    z = torch.empty(30 * MB, dtype=torch.uint8, device="cuda")
    return g, y, z


def pinned(torch):
    hs = [torch.empty((i + 1) * MB, dtype=torch.uint8, pin_memory=True) for i in range(6)]
    d = [h.to("cuda", non_blocking=True) for h in hs]
    torch.cuda.synchronize()
    del hs[::2]
    return hs, d


def annotated(torch):
    from torch.profiler import record_function
    out = []
    for step in range(3):
        with record_function("## forward ##"):
            a = torch.empty(8 * MB, dtype=torch.uint8, device="cuda")
        with record_function("## optimizer ##"):
            out.append(torch.empty(2 * MB, dtype=torch.uint8, device="cuda"))
        del a
    return out


CASES = {
    "streams": (streams, {}),
    "streams_es": (streams, {}),
    "graph": (graph, {}),
    "pinned": (pinned, {"record_pinned_host_memory": True}),   # not every torch has it
    "annotated": (annotated, {"global_record_annotations": True}),
    "skip": (annotated, {"skip_actions": ["free_requested", "free_completed"]}),
}


def child(case, stem):
    import torch
    fn, extra = CASES[case]
    fig = {"case": case, "torch": torch.__version__,
           "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
           "record_params": sorted(inspect.signature(
               torch.cuda.memory._record_memory_history).parameters)}
    fig["recorded_with"] = record(torch, **extra)
    try:
        keep = fn(torch)
    except Exception:
        fig["error"] = traceback.format_exc()[-2000:]
        keep = None
    torch.cuda.synchronize()
    fig["memory_stats"] = dict(torch.cuda.memory_stats())
    try:
        fig["host_memory_stats"] = {k: v for k, v in torch.cuda.host_memory_stats().items()
                                    if isinstance(v, (int, float))}
    except Exception as e:
        fig["host_memory_stats"] = repr(e)
    snap = torch.cuda.memory._snapshot()
    fig["snapshot_keys"] = sorted(snap)
    fig["trace_actions"] = sorted({e["action"] for t in snap.get("device_traces", [])
                                   for e in t})
    torch.cuda.memory._dump_snapshot(stem + ".pickle")
    del keep
    with open(stem + ".json", "w") as f:
        json.dump(fig, f, indent=1, sort_keys=True, default=repr)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        return
    out, work = sys.argv[1], "/tmp/features"
    os.makedirs(work, exist_ok=True)
    procs = []
    for case in CASES:
        env = dict(os.environ)
        if case.endswith("_es"):
            env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
        stem = os.path.join(work, case)
        log = open(stem + ".log", "w")
        procs.append((case, subprocess.Popen([sys.executable, os.path.abspath(__file__),
                                              "--child", case, stem], env=env,
                                             stdout=log, stderr=subprocess.STDOUT)))
    for case, p in procs:
        try:
            rc = p.wait(timeout=150)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = "timeout"
        print(case, "rc", rc, flush=True)
    with tarfile.open(os.path.join(out, "features.tar.xz"), "w:xz", preset=6) as t:
        for f in sorted(os.listdir(work)):
            t.add(os.path.join(work, f), arcname=f)


if __name__ == "__main__":
    main()
