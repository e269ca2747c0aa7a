#!/usr/bin/env python3
"""Training-log fixtures for `snapdiff curve`, each with a known truth.

Run from anywhere: python3 testdata/curve/make_curve.py. Writes the logs beside this
script, and truth.json: per fixture the slope (bytes per step, or per second) the log was
made with, and what else the tests compare against. Deterministic (seeded).
"""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
GiB, MiB, KiB = 1 << 30, 1 << 20, 1 << 10
truth = {}


def write(name, lines):
    with open(os.path.join(HERE, name), "w") as f:
        f.write("\n".join(lines) + "\n")


def sawtooth(step, period, swing):
    return swing * (step % period) / (period - 1)


# 1. a leak of 100 KiB/step under a 2 GiB sawtooth (text, two printing styles)
rng = random.Random(1)
lines = ["epoch 0 starting", "loading data from /data/train"]
for s in range(1000):
    alloc = 20 * GiB + sawtooth(s, 20, 2 * GiB) + 100 * KiB * s + rng.randint(0, 64) * KiB
    res = alloc + 3 * GiB
    if s % 2:
        lines.append("step: %d | loss 2.31 | mem_alloc %.4f MiB | mem_reserved %.4f MiB"
                     % (s, alloc / MiB, res / MiB))
    else:
        lines.append("step=%d alloc=%dB reserved=%dB lr=0.0003" % (s, alloc, res))
write("leak_sawtooth.log", lines)
truth["leak_sawtooth.log"] = {"slope": 100 * KiB, "verdict": "growing",
                              "peak_last": 22 * GiB + 100 * KiB * 999 + 64 * KiB}

# 2. a clean wide sawtooth, no trend (JSON Lines of torch.cuda.memory_stats() keys)
lines = []
for s in range(1000):
    alloc = 30 * GiB + sawtooth(s, 25, 4 * GiB)
    lines.append(json.dumps({"step": s, "allocated_bytes.all.current": int(alloc),
                             "reserved_bytes.all.current": int(36 * GiB),
                             "inactive_split_bytes.all.current": 12345,
                             "num_alloc_retries": s // 100, "num_ooms": 0, "time": 1000.0 + s}))
write("sawtooth_flat.jsonl", lines)
truth["sawtooth_flat.jsonl"] = {"slope": 0, "verdict": "flat"}

# 3. warm-up (150 steps climbing 6 GiB) then flat (CSV with units in the header)
rng = random.Random(3)
lines = ["global_step,loss,allocated_mib,reserved_mib"]
for s in range(0, 1200, 2):
    alloc = 4 * GiB + 6 * GiB * min(s, 150) / 150 + rng.randint(0, 512) * KiB
    lines.append("%d,%.3f,%.4f,%.4f" % (s, 3.0 - s / 1000, alloc / MiB, (alloc + GiB) / MiB))
write("warmup_flat.csv", lines)
truth["warmup_flat.csv"] = {"slope": 0, "verdict": "flat"}

# 4. eight ranks in one JSON Lines file, rank 5 leaking 2 MiB/step
rng = random.Random(4)
lines = []
for s in range(0, 600):
    for r in range(8):
        alloc = 12 * GiB + r * 0 + sawtooth(s, 10, 512 * MiB) + rng.randint(0, 256) * KiB
        if r == 5:
            alloc += 2 * MiB * s
        lines.append(json.dumps({"rank": r, "iteration": s, "memory_allocated": int(alloc),
                                 "memory_reserved": int(alloc + 2 * GiB)}))
write("ranks8.jsonl", lines)
truth["ranks8.jsonl"] = {"slope": 2 * MiB, "leaking_rank": 5, "verdict": "growing"}

# 5. nvidia-smi every 10 s for an hour, GPU 1 leaking 1 MiB/s
rng = random.Random(5)
lines = ["timestamp, index, memory.used [MiB], memory.total [MiB]"]
for k in range(360):
    t = 10 * k
    hh, mm, ss = 12 + t // 3600, (t // 60) % 60, t % 60
    for gpu in range(2):
        used = 40000 + rng.randint(0, 3) + (t if gpu == 1 else 0)   # MiB
        lines.append("2024/05/01 %02d:%02d:%02d.%03d, %d, %d MiB, 81920 MiB"
                     % (hh, mm, ss, rng.randint(0, 999) if False else 0, gpu, used))
write("nvsmi.csv", lines)
truth["nvsmi.csv"] = {"slope": MiB, "leaking_gpu": 1, "capacity": 81920 * MiB,
                      "peak_last": (40003 + 3590) * MiB}

# 6. the leak log with a few broken lines
lines = []
for s in range(400):
    alloc = 8 * GiB + 256 * KiB * s
    lines.append("step=%d alloc=%dB" % (s, alloc))
lines[10] = "step=10 alloc=99999999999999999999999G"
lines[57] = "step=57 alloc=1e400B"
lines[58] = "step=58 memory_allocated=1.5.5.5.5e99999TB"
write("broken_lines.log", lines)
truth["broken_lines.log"] = {"slope": 256 * KiB, "bad_lines": 3, "first_bad_line": 11}

# 7. no memory figure at all
write("no_memory.log", ["step=%d loss=%.3f lr=0.001 tokens/s=51234" % (s, 2.0 - s / 1000)
                        for s in range(100)])

with open(os.path.join(HERE, "truth.json"), "w") as f:
    json.dump(truth, f, indent=1, sort_keys=True)
    f.write("\n")
