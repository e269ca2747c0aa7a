#!/bin/sh
# bench_diff.sh - how much faster `snapdiff OLD NEW` is than CPython's pickle.load of the
# same two files, measured in the same run. Not a ctest (timings depend on the machine).
#
#   tests/bench_diff.sh [SNAPDIFF [OLD NEW]]
#
# Without OLD/NEW it makes two ~180 MB snapshots under ${BENCH_DIR:-/tmp/bench}: big.pickle,
# a real snapshot inflated 100x by ../shared/bench/inflate.py, and big2.pickle, the same
# job later: a tenth of its live blocks freed, half of its free blocks taken by a leak
# site, more trace entries. The issue asks for a ratio of at least 10.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
bin=${1:-$root/build/src/snapdiff}
dir=${BENCH_DIR:-/tmp/bench}
old=${2:-$dir/big.pickle}
new=${3:-$dir/big2.pickle}
real=$root/../shared/real-snapshots/sidsoc12_spring2024-assignment2-systems__cs336_systems-mem_snapshot_ctx128_fp32_train.pickle

mkdir -p "$dir"
if [ ! -f "$old" ]; then
    echo "making $old (inflate.py x100)" >&2
    python3 "$root/../shared/bench/inflate.py" "$real" "$old" 100
fi
if [ ! -f "$new" ]; then
    echo "making $new (a later state of the same job)" >&2
    python3 - "$old" "$new" <<'EOF'
import pickle, random, sys
with open(sys.argv[1], "rb") as f:
    snap = pickle.load(f)
leak = [{"name": "update", "filename": "/home/u/proj/metrics.py", "line": 23},
        {"name": "train_step", "filename": "/home/u/proj/train.py", "line": 92}]
rnd = random.Random(3)
for seg in snap["segments"]:
    for i, b in enumerate(seg["blocks"]):
        b = dict(b)                  # blocks are not shared; frames lists stay shared
        seg["blocks"][i] = b
        if b["state"] == "inactive" and rnd.random() < 0.5:
            b.update(state="active_allocated", frames=leak, requested_size=b["size"])
        elif b["state"] == "active_allocated" and rnd.random() < 0.1:
            b["state"] = "inactive"
for t in snap["device_traces"]:
    t.extend(t[: len(t) // 10])
with open(sys.argv[2], "wb") as f:
    pickle.dump(snap, f, protocol=4)
EOF
fi

python3 - "$bin" "$old" "$new" <<'EOF'
import os, pickle, resource, subprocess, sys, time
bin_, old, new = sys.argv[1:4]

def cpu():
    """CPU seconds of this process and its finished children (a fairer measure than wall
    time on a shared machine)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

cpu_times = {}

def best(fn, n):
    times, cpus = [], []
    for _ in range(n):
        t, c = time.perf_counter(), cpu()
        fn()
        times.append(time.perf_counter() - t)
        cpus.append(cpu() - c)
    cpu_times[fn.__name__] = min(cpus)
    return min(times)

def run_diff():
    subprocess.run([bin_, old, new, "--steps", "100"], check=True, stdout=subprocess.DEVNULL)

def load_both():
    for p in (old, new):
        with open(p, "rb") as f:
            pickle.load(f)

mb = (os.path.getsize(old) + os.path.getsize(new)) / 2**20
t_diff = best(run_diff, 3)
t_load = best(load_both, 2)
print("inputs: %.0f MiB in two files" % mb)
print("snapdiff OLD NEW:              %.3f s (best of 3)" % t_diff)
print("CPython pickle.load of both:  %.3f s (best of 2)" % t_load)
print("ratio: %.1fx %s" % (t_load / t_diff, "(>= 10: ok)" if t_load / t_diff >= 10 else "(< 10!)"))
c_diff, c_load = cpu_times["run_diff"], cpu_times["load_both"]
print("CPU time: snapdiff %.3f s, pickle.load %.3f s, ratio %.1fx" % (c_diff, c_load, c_load / c_diff))
EOF
