#!/usr/bin/env python3
"""Record PyTorch's caching allocator on a real GPU under several PYTORCH_CUDA_ALLOC_CONF
settings, so that `snapdiff replay`'s what-ifs can be checked against what torch did.

Runs where torch and a CUDA device are (not in CI). For each workload it runs one process
per setting (the allocator reads PYTORCH_CUDA_ALLOC_CONF once, at start), records the
allocator history from before the first allocation (_record_memory_history, python
stacks), dumps the snapshot with the trace, and writes torch's own figures
(torch.cuda.memory_stats(), total memory, per-step allocated/reserved) beside it.

Phase 1 runs every setting uncapped. Phase 2 caps the process with
torch.cuda.set_per_process_memory_fraction at two limits taken from phase 1's default run
(just above its peak allocated, and half-way to its peak reserved), where fragmentation
decides whether the job survives: the replay of the default run's trace under the same
limit must say which settings OOM, as torch did.

Phase 3 (--device-limit) runs the settings one at a time on a device whose memory is
taken by a CuPy allocation until half-way between the default run's peak allocated and
peak reserved is left: the job meets cudaMalloc's limit, with no fraction set.

Usage: whatif_record.py OUTDIR [--dry] [--device-limit | --device-limit-only]
       (tests/device/whatif_check.py reads what it wrote)
--dry exercises the orchestration without torch (files of the right names, no figures).
"""
import json
import os
import random
import subprocess
import sys
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor

UNCAPPED = ["", "expandable_segments:True", "max_split_size_mb:64",
            "roundup_power2_divisions:4"]
CAPPED = ["", "expandable_segments:True", "max_split_size_mb:64",
          "garbage_collection_threshold:0.6"]
WORKLOADS = ["synth", "model"]
DEADLINE_S = 400        # no new run starts after this; the tree is packed at once
PER_RUN_S = 150

MB = 1 << 20


# ---------------------------------------------------------------- the workloads (child)

def synth(torch, rng, on_step):
    """Variable-length batches without kernels: parameters, per-layer activations whose
    size follows the sequence length, a matmul-like temporary per layer, small bias-like
    tensors, a backward that frees in reverse while allocating gradients, optimizer state
    from step 1. torch.empty runs no kernel, so the request sequence is the same under
    every setting."""
    dev = "cuda"
    u8 = torch.uint8
    params = [torch.empty(rng.randint(1, 48) * MB + rng.randint(0, 4095) * 512, dtype=u8, device=dev)
              for _ in range(48)]
    grads, state = None, None
    for step in range(14):
        seq = rng.choice([384, 640, 1024, 1536, 2048])
        acts = []
        for _layer in range(24):
            acts.append(torch.empty(seq * 6 * 1024, dtype=u8, device=dev))
            tmp = torch.empty(seq * 16 * 1024 + rng.randint(0, 63) * 512, dtype=u8, device=dev)
            acts.append(torch.empty(rng.randint(1, 200) * 4096, dtype=u8, device=dev))
            del tmp
        window = []
        while acts:
            a = acts.pop()
            window.append(torch.empty(a.numel() + rng.randint(0, 511) * 512, dtype=u8, device=dev))
            del a
            if len(window) > 3:
                window.pop(0)
        del window
        if grads is None:
            grads = [torch.empty_like(p) for p in params]
        if state is None and step >= 1:
            state = [torch.empty_like(p) for p in params] + [torch.empty_like(p) for p in params]
        on_step(step)
    return params, grads, state


def model(torch, rng, on_step):
    """A small pre-norm transformer (nn.TransformerEncoder, 6 layers, d=1024) trained with
    AdamW(foreach) under bf16 autocast on batches of varying sequence length."""
    nn = torch.nn
    torch.manual_seed(0)
    d, vocab = 1024, 32000
    layer = nn.TransformerEncoderLayer(d, 16, 4096, dropout=0.0, batch_first=True, norm_first=True)
    m = nn.ModuleDict(dict(emb=nn.Embedding(vocab, d),
                           layers=nn.TransformerEncoder(layer, num_layers=6, enable_nested_tensor=False),
                           head=nn.Linear(d, vocab, bias=False))).cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, foreach=True)
    for step in range(10):
        seq = rng.choice([256, 512, 768, 1024, 1536])
        x = torch.randint(0, vocab, (8, seq), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = m["layers"](m["emb"](x))
            logits = m["head"](h)
        loss = nn.functional.cross_entropy(logits.float().view(-1, vocab), x.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss.item()
        del x, h, logits, loss
        on_step(step)
    return m, opt


def ballast(torch, fig, target):
    """Take the device's memory, outside torch's allocator (a plain cudaMalloc through
    CuPy, which keeps no pool for cupy.cuda.Memory), until `target` bytes are left free:
    the job then meets the device's own limit, as a job on a full GPU does."""
    import cupy
    torch.cuda.init()
    torch.empty(0, device="cuda")            # the context, before measuring
    free = torch.cuda.mem_get_info()[0]
    fig["free_before_ballast"] = free
    fig["ballast"] = free - target
    return cupy.cuda.Memory(free - target)


def child(workload, fraction, stem):
    import torch
    fig = {"workload": workload, "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
           "fraction": fraction, "torch": torch.__version__, "steps": [], "oom": None}
    held = None
    if fraction and fraction > 1:            # a device limit: `fraction` bytes left free
        held = ballast(torch, fig, int(fraction))
        fig["device_target"], fig["fraction"], fraction = int(fraction), None, None
    torch.cuda.memory._record_memory_history(max_entries=2_000_000, stacks="python")
    if fraction:
        torch.cuda.set_per_process_memory_fraction(fraction)
    fig["total_memory"] = torch.cuda.get_device_properties(0).total_memory
    fig["device_name"] = torch.cuda.get_device_name(0)
    fig["mem_get_info"] = list(torch.cuda.mem_get_info())   # set_fraction's total

    def on_step(step):
        fig["steps"].append({"step": step, "allocated": torch.cuda.memory_allocated(),
                             "reserved": torch.cuda.memory_reserved()})

    rng = random.Random(1234)
    keep = None
    try:
        keep = (synth if workload == "synth" else model)(torch, rng, on_step)
    except torch.OutOfMemoryError as e:
        fig["oom"] = {"step": len(fig["steps"]), "message": str(e).splitlines()[0][:300]}
    torch.cuda.synchronize()
    fig["memory_stats"] = dict(torch.cuda.memory_stats())
    torch.cuda.memory._dump_snapshot(stem + ".pickle")
    del keep
    fig["mem_get_info_end"] = list(torch.cuda.mem_get_info())
    del held
    with open(stem + ".json", "w") as f:
        json.dump(fig, f, indent=1, sort_keys=True)


# ---------------------------------------------------------------- orchestration (parent)

def name(workload, conf, fraction_tag):
    tag = conf.replace(":", "-").replace(",", "+") or "default"
    return f"{workload}.{fraction_tag}.{tag}"


def run_one(work, workload, conf, fraction, tag, dry, t0):
    stem = os.path.join(work, name(workload, conf, tag))
    if time.time() - t0 > DEADLINE_S:
        return stem, "skipped (deadline)"
    env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF=conf, PYTHONUNBUFFERED="1")
    if not conf:
        env.pop("PYTORCH_CUDA_ALLOC_CONF")
    if dry:
        with open(stem + ".json", "w") as f:
            json.dump({"workload": workload, "alloc_conf": conf, "fraction": fraction,
                       "memory_stats": {"reserved_bytes.all.peak": 3 << 30,
                                        "allocated_bytes.all.peak": 2 << 30},
                       "total_memory": 150 << 30, "oom": None}, f)
        open(stem + ".pickle", "wb").close()
        return stem, "ok (dry)"
    t = time.time()
    try:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", workload,
                            repr(fraction or 0.0), stem], env=env, capture_output=True,
                           text=True, timeout=PER_RUN_S)
        with open(stem + ".log", "w") as f:
            f.write(p.stdout + p.stderr)
        return stem, f"rc {p.returncode} in {time.time() - t:.1f} s"
    except subprocess.TimeoutExpired:
        return stem, "timed out"


def phase(work, jobs, dry, t0, workers=6):
    with ThreadPoolExecutor(max_workers=workers) as ex:
        for stem, what in ex.map(lambda j: run_one(work, *j, dry, t0), jobs):
            print(f"{time.time() - t0:6.1f} s  {os.path.basename(stem)}: {what}", flush=True)


def caps_from(work, workload):
    try:
        with open(os.path.join(work, name(workload, "", "free") + ".json")) as f:
            fig = json.load(f)
    except OSError:
        return []
    st, total = fig["memory_stats"], fig["total_memory"]
    a, r = st["allocated_bytes.all.peak"], st["reserved_bytes.all.peak"]
    caps = [a + 64 * MB, (a + r) // 2 + 2 * MB]
    return [(c / total, f"cap{i}") for i, c in enumerate(caps)]


def device_limits_from(work, workload):
    """Bytes to leave free on the device: half-way between the default run's peak
    allocated and peak reserved (given as a 'fraction' above 1)."""
    try:
        with open(os.path.join(work, name(workload, "", "free") + ".json")) as f:
            st = json.load(f)["memory_stats"]
    except OSError:
        return []
    return [(float((st["allocated_bytes.all.peak"] + st["reserved_bytes.all.peak"]) // 2),
             "dev1")]


def pack(work, out):
    """Into at most seven .tar.xz of < 15 MiB: the figures and logs first, then the
    pickles, default uncapped runs first (the what-ifs are replayed from them)."""
    files = sorted(os.listdir(work))
    meta = [f for f in files if not f.endswith(".pickle")]
    pickles = sorted((f for f in files if f.endswith(".pickle")),
                     key=lambda f: (".free.default" not in f, ".free." not in f, f))
    part, n = [], 0
    groups = [meta]
    for f in pickles:
        if n + os.path.getsize(os.path.join(work, f)) // 3 > 14 * MB and part:
            groups.append(part)
            part, n = [], 0
        part.append(f)
        n += os.path.getsize(os.path.join(work, f)) // 3
    if part:
        groups.append(part)
    def one(i):
        path = os.path.join(out, f"whatif{i}.tar.xz")
        with tarfile.open(path, "w:xz", preset=1) as t:
            for f in groups[i]:
                t.add(os.path.join(work, f), arcname=f)
        return f"{path}: {len(groups[i])} files, {os.path.getsize(path) / MB:.1f} MiB"
    with ThreadPoolExecutor(max_workers=7) as ex:
        for line in ex.map(one, range(min(len(groups), 7))):
            print(line, flush=True)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], float(sys.argv[3]) or None, sys.argv[4])
        return
    out = sys.argv[1]
    dry = "--dry" in sys.argv
    work = "/tmp/whatif"
    os.makedirs(work, exist_ok=True)
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    if not dry:
        subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version",
                        "--format=csv"], check=False)
    phase(work, [(w, c, None, "free") for w in WORKLOADS for c in UNCAPPED], dry, t0)
    only_device = "--device-limit-only" in sys.argv
    jobs = [(w, c, f, tag) for w in WORKLOADS for f, tag in caps_from(work, w) for c in CAPPED]
    if not only_device:
        phase(work, jobs, dry, t0)
    if "--device-limit" in sys.argv or only_device:
        # one at a time: the device's free memory is the limit, and it is shared
        jobs = [(w, c, f, tag) for w in WORKLOADS for f, tag in device_limits_from(work, w)
                for c in CAPPED]
        phase(work, jobs, dry, t0, workers=1)
    pack(work, out)


if __name__ == "__main__":
    main()
