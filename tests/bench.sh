#!/bin/sh
# bench.sh - snapdiff against the floor (../shared/bench/opscan.c, a bare opcode walk) and
# CPython's pickle.load on the same files, in the same run. Not a ctest (timings depend on
# the machine). Issue 8 asks, on the ~170 MB input made by ../shared/bench/inflate.py
# (factor 100) from the largest real snapshot: `stats` within 3x of opscan, peak RSS at
# most the file's size, cost linear up to the ~700 MB one (factor 400), `snapdiff OLD NEW`
# at most 1.6x one `stats`; and the ratio to pickle.load for docs/performance.md. Issue 20:
# `replay` at most 3x `stats` on the same file, peak RSS at most 1.5x the file. Issue 22: `stats`
# within 2.5x of opscan on it and on fresh.pickle (~170 MB, inflate.py x32 --fresh-frames: a
# frames list of its own for every trace entry and block, as real snapshots bring with
# most entries), with peak RSS at most the file's size there too.
#
#   tests/bench.sh [SNAPDIFF [OLD NEW]]   (BENCH_RUNS=5: best of 5; BENCH_HUGE=0 skips
#                                          the 700 MB file, which takes a minute to make)
#   tests/bench.sh --ranks [SNAPDIFF]     only the reduce of issue 30 (below)
#   tests/bench.sh --paired [SNAPDIFF [BASELINE]]   paired runs (issue 39, below)
#
# --paired: the method for a shared, noisy machine (issue 39). Two commands A and B are run
# in turn, A B A B ... (BENCH_PAIRS pairs, default 11, after one unmeasured warm-up pair),
# so that both see the same load; each pair gives a ratio B/A, and the median of those
# ratios is the figure (printed with the median walls, CPU and peak RSS of each side, read
# from /usr/bin/time). The pairs: opscan against `stats` on big.pickle (shared frames) and
# on fresh.pickle (fresh frames), `stats OLD` against `snapdiff OLD NEW --steps 100`, and,
# given a BASELINE binary (another build, e.g. of the commit before a change), BASELINE
# against SNAPDIFF for `stats` and for the diff. Issue 39's targets: stats <= 2.2x opscan
# (shared frames) and <= 3.0x (fresh frames), a diff <= 1.3x one stats, peak RSS of stats
# <= 0.8x the file. The load average before and after is printed: quote it with the figures.
#
# --ranks: the reduce of a cluster job (docs/cluster.md) at 1,024, 2,048 and 4,096 ranks.
# Every real snapshot is summarized once; the summaries are linked, round robin, as
# step100_rankNNNN.pickle.sdsum into one folder per rank count under $BENCH_DIR/ranks.
# `check BASELINE DIR --max-growth 1GiB` (the baseline: the first real snapshot's summary,
# every rank held against it) and `series DIR --as-ranks` are timed (best of BENCH_RUNS,
# default 1 here) with their peak RSS. Issue 30 asks <= 20 s and <= 300 MB at 4,096 on 2
# cores, growing linearly: the ratios to 1,024 are printed (4.0 at 4,096 = linear).
#
# Without OLD/NEW it makes two ~180 MB snapshots under ${BENCH_DIR:-/tmp/bench}: big.pickle,
# a real snapshot inflated 100x by ../shared/bench/inflate.py, and big2.pickle, the same
# job later: a tenth of its live blocks freed, half of its free blocks taken by a leak
# site, more trace entries; and fresh.pickle (above).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")

if [ "${1:-}" = --ranks ]; then
    bin=${2:-$root/build/src/snapdiff}
    dir=${BENCH_DIR:-/tmp/bench}/ranks
    real=$root/../shared/real-snapshots
    mkdir -p "$dir/pool"
    for f in "$real"/*.pickle "$real"/*.pkl; do
        s=$dir/pool/$(basename "$f").sdsum
        [ -f "$s" ] || "$bin" summarize -q "$f" -o "$s"
    done
    for n in 1024 2048 4096; do
        [ -d "$dir/$n" ] && [ "$(ls "$dir/$n" | wc -l)" = "$n" ] && continue
        rm -rf "$dir/$n"
        mkdir -p "$dir/$n"
        python3 - "$dir/pool" "$dir/$n" "$n" <<'EOF'
import os, sys
pool, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
sums = sorted(os.listdir(pool))
for i in range(n):
    os.link(os.path.join(pool, sums[i % len(sums)]),
            os.path.join(out, "step100_rank%04d.pickle.sdsum" % i))
EOF
    done
    baseline=$(ls "$dir"/pool/*.sdsum | head -n 1)
    python3 - "$bin" "$dir" "$baseline" <<'EOF'
import os, subprocess, sys, time
bin_, dir_, baseline = sys.argv[1:4]
runs = int(os.environ.get("BENCH_RUNS", "1"))
MB = 1e6 / 2**20   # MiB in a MB

def measure(cmd):
    """Best wall time and the peak RSS (MiB) of that run, over `runs` runs."""
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t
        if p.returncode not in (0, 1):
            sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-500:]))
        rss = int(p.stderr.strip().splitlines()[-1]) / 1024
        if best is None or wall < best[0]:
            best = (wall, rss)
    return best

d1024 = os.path.join(dir_, "1024")
size = sum(os.path.getsize(os.path.join(d1024, f)) for f in os.listdir(d1024))
print("reduce over summaries of the real snapshots: %.1f MiB per 1,024 ranks; load average %.1f"
      % (size / 2**20, os.getloadavg()[0]))
print("%6s  %9s %9s %6s   %9s %9s %6s" % ("ranks", "check s", "RSS MiB", "x1024",
                                          "series s", "RSS MiB", "x1024"))
first = None
for n in (1024, 2048, 4096):
    d = os.path.join(dir_, str(n))
    c = measure([bin_, "check", baseline, d, "--max-growth", "1GiB", "-q"])
    s = measure([bin_, "series", d, "--as-ranks", "-q"])
    first = first or (c, s)
    print("%6d  %9.2f %9.0f %6.2f   %9.2f %9.0f %6.2f" % (
        n, c[0], c[1], c[0] / first[0][0], s[0], s[1], s[0] / first[1][0]))
ok = max(c[0], s[0]) <= 20 and max(c[1], s[1]) <= 300 * MB
print("4,096 ranks: check %.1f s, %.0f MiB; series %.1f s, %.0f MiB "
      "(target <= 20 s, <= 300 MB = %.0f MiB): %s"
      % (c[0], c[1], s[0], s[1], 300 * MB, "met" if ok else "NOT MET"))
EOF
    exit 0
fi
paired=
if [ "${1:-}" = --paired ]; then
    paired=1
    shift
    baseline=${2:-}
    set -- "${1:-}"
fi
bin=${1:-$root/build/src/snapdiff}
dir=${BENCH_DIR:-/tmp/bench}
old=${2:-$dir/big.pickle}
new=${3:-$dir/big2.pickle}
huge=$dir/huge.pickle
fresh=$dir/fresh.pickle
opscan=$dir/opscan
real=$root/../shared/real-snapshots/sidsoc12_spring2024-assignment2-systems__cs336_systems-mem_snapshot_ctx128_fp32_train.pickle

mkdir -p "$dir"
if [ ! -f "$old" ]; then
    echo "making $old (inflate.py x100)" >&2
    python3 "$root/../shared/bench/inflate.py" "$real" "$old" 100
fi
[ -z "$paired" ] || BENCH_HUGE=0     # the paired runs do not use it
if [ "${BENCH_HUGE:-1}" != 0 ] && [ ! -f "$huge" ]; then
    echo "making $huge (inflate.py x400)" >&2
    python3 "$root/../shared/bench/inflate.py" "$real" "$huge" 400
fi
[ "${BENCH_HUGE:-1}" != 0 ] || huge=
if [ ! -f "$fresh" ]; then
    echo "making $fresh (inflate.py x32 --fresh-frames)" >&2
    python3 "$root/../shared/bench/inflate.py" "$real" "$fresh" 32 --fresh-frames
fi
if [ ! -x "$opscan" ] || [ "$root/../shared/bench/opscan.c" -nt "$opscan" ]; then
    cc -O2 -o "$opscan" "$root/../shared/bench/opscan.c"
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

if [ -n "$paired" ]; then
    python3 - "$bin" "$old" "$new" "$opscan" "$fresh" "$baseline" <<'EOF'
import os, statistics, subprocess, sys, time
bin_, old, new, opscan, fresh, base = sys.argv[1:7]
pairs = int(os.environ.get("BENCH_PAIRS", "11"))
MiB = 2**20

def run(cmd):
    """One run: (wall s, cpu s, peak RSS MiB)."""
    t = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%U %S %M"] + cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    wall = time.perf_counter() - t
    if r.returncode not in (0, 1):
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr.decode()[-500:]))
    u, s_, rss = r.stderr.decode().strip().splitlines()[-1].split()
    return wall, float(u) + float(s_), int(rss) / 1024

def paired(a, b):
    """A and B in turn; the medians of each side and of the per-pair ratios B/A."""
    run(a), run(b)                               # warm-up: page cache, CPU frequency
    ra, rb = [], []
    for _ in range(pairs):
        ra.append(run(a))
        rb.append(run(b))
    med = lambda rows, k: statistics.median(r[k] for r in rows)
    ratio = lambda k: statistics.median(y[k] / max(x[k], 1e-3) for x, y in zip(ra, rb))
    return {"a": [med(ra, k) for k in range(3)], "b": [med(rb, k) for k in range(3)],
            "wall": ratio(0), "cpu": ratio(1), "rss": max(r[2] for r in rb)}

def show(name_a, name_b, m, target=None):
    ok = "" if target is None else "  (target <= %.1fx: %s)" % (
        target, "met" if m["wall"] <= target else "NOT MET")
    print("  A %-28s %7.3f s wall %7.3f s cpu %6.0f MiB" % ((name_a,) + tuple(m["a"])))
    print("  B %-28s %7.3f s wall %7.3f s cpu %6.0f MiB" % ((name_b,) + tuple(m["b"])))
    print("  B/A %26s %6.2fx wall, %5.2fx cpu (median of %d paired ratios)%s" % (
        "", m["wall"], m["cpu"], pairs, ok))
    sys.stdout.flush()

size_old, size_fresh = os.path.getsize(old) / MiB, os.path.getsize(fresh) / MiB
size_new = os.path.getsize(new) / MiB
before = os.getloadavg()
print("paired runs, %d pairs each: %s (%.0f MiB), %s (%.0f MiB), %s (%.0f MiB); %d cores; "
      "load average %.2f %.2f %.2f" % ((pairs, os.path.basename(old), size_old,
                                        os.path.basename(new), size_new, os.path.basename(fresh),
                                        size_fresh, os.cpu_count() or 0) + before))
s1 = paired([opscan, old], [bin_, "stats", old])
show("opscan OLD (the floor)", "stats OLD (shared frames)", s1, 2.2)
s2 = paired([opscan, fresh], [bin_, "stats", fresh])
show("opscan FRESH", "stats FRESH (fresh frames)", s2, 3.0)
s3 = paired([bin_, "stats", old], [bin_, old, new, "--steps", "100"])
show("stats OLD", "OLD NEW --steps 100 (diff)", s3, 1.3)
for name, size, m in (("stats OLD", size_old, s1), ("stats FRESH", size_fresh, s2)):
    print("peak RSS %-12s %5.0f MiB = %.2fx the file (target <= 0.8x: %s)" % (
        name, m["rss"], m["rss"] / size, "met" if m["rss"] / size <= 0.8 else "NOT MET"))
print("peak RSS diff         %5.0f MiB = %.2fx OLD + NEW" % (
    s3["rss"], s3["rss"] / (size_old + size_new)))
if base:
    print("BASELINE %s against %s:" % (base, bin_))
    show("BASELINE stats OLD", "stats OLD", paired([base, "stats", old], [bin_, "stats", old]))
    show("BASELINE stats FRESH", "stats FRESH",
         paired([base, "stats", fresh], [bin_, "stats", fresh]))
    show("BASELINE diff", "diff", paired([base, old, new, "--steps", "100"],
                                         [bin_, old, new, "--steps", "100"]))
print("load average %.2f %.2f %.2f before, %.2f %.2f %.2f after" % (before + os.getloadavg()))
EOF
    exit 0
fi

python3 - "$bin" "$old" "$new" "$opscan" "$huge" "$fresh" <<'EOF'
import os, subprocess, sys, time
bin_, old, new, opscan, huge, fresh = sys.argv[1:7]
runs = int(os.environ.get("BENCH_RUNS", "5"))

def measure(cmd):
    """Best wall time, with its CPU time (user+sys) and peak RSS, over `runs` runs."""
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(["/usr/bin/time", "-f", "%U %S %M"] + cmd, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.perf_counter() - t
        u, s_, rss = r.stderr.decode().strip().splitlines()[-1].split()
        row = (wall, float(u) + float(s_), int(rss) / 1024)
        best = row if best is None or row[0] < best[0] else best
    return best

LOAD = "import pickle,sys\nfor p in sys.argv[1:]:\n    pickle.load(open(p,'rb'))"
MiB = 2**20
load_before = os.getloadavg()
op_one = measure([opscan, old])
sd_stats = measure([bin_, "stats", old])
py_one = measure(["python3", "-c", LOAD, old])
sd_diff = measure([bin_, old, new, "--steps", "100"])
sd_replay = measure([bin_, "replay", old])
sd_top = measure([bin_, "top", old])
py_two = measure(["python3", "-c", LOAD, old, new])
op_fresh = measure([opscan, fresh])
sd_fresh = measure([bin_, "stats", fresh])
if huge:
    op_huge = measure([opscan, huge])
    sd_huge = measure([bin_, "stats", huge])
load_after = os.getloadavg()

def line(name, m):
    print("  %-34s %7.3f s wall  %7.3f s cpu  %7.0f MiB peak RSS" % (name, *m))

size_old = os.path.getsize(old) / MiB
size_fresh = os.path.getsize(fresh) / MiB
print("inputs: %s (%.0f MiB), %s (%.0f MiB), %s (%.0f MiB)%s; best of %d runs" % (
    os.path.basename(old), size_old, os.path.basename(new), os.path.getsize(new) / MiB,
    os.path.basename(fresh), size_fresh,
    ", %s (%.0f MiB)" % (os.path.basename(huge), os.path.getsize(huge) / MiB) if huge else "",
    runs))
print("machine: %d cores, load average %.2f %.2f %.2f before, %.2f %.2f %.2f after "
      "(wall times are only comparable on a quiet machine)" % ((os.cpu_count() or 0,) +
                                                            load_before + load_after))
line("opscan OLD (the floor)", op_one)
line("snapdiff stats OLD", sd_stats)
line("python3 pickle.load(OLD)", py_one)
line("snapdiff OLD NEW", sd_diff)
line("snapdiff replay OLD", sd_replay)
line("snapdiff top OLD (the peak replay)", sd_top)
line("python3 pickle.load(OLD), (NEW)", py_two)
line("opscan FRESH", op_fresh)
line("snapdiff stats FRESH", sd_fresh)
if huge:
    line("opscan HUGE", op_huge)
    line("snapdiff stats HUGE", sd_huge)

def verdict(ok):
    return "ok" if ok else "BELOW TARGET"

r_op = sd_stats[0] / op_one[0]
print("stats / opscan:        %5.2fx wall, %5.2fx cpu (target <= 2.5x)  %s" % (
    r_op, sd_stats[1] / max(op_one[1], 1e-3), verdict(r_op <= 2.5)))
r_fresh = sd_fresh[0] / op_fresh[0]
print("FRESH stats / opscan:  %5.2fx wall, %5.2fx cpu (target <= 2.5x)  %s" % (
    r_fresh, sd_fresh[1] / max(op_fresh[1], 1e-3), verdict(r_fresh <= 2.5)))
r_rss = sd_stats[2] / size_old
print("stats peak RSS / file: %5.2fx (%.0f of %.0f MiB; target <= 1x)  %s" % (
    r_rss, sd_stats[2], size_old, verdict(r_rss <= 1)))
r_diff = sd_diff[0] / sd_stats[0]
r_rss_fresh = sd_fresh[2] / size_fresh
print("FRESH peak RSS / file: %5.2fx (%.0f of %.0f MiB; target <= 1x)  %s" % (
    r_rss_fresh, sd_fresh[2], size_fresh, verdict(r_rss_fresh <= 1)))
print("diff / stats:          %5.2fx wall (target <= 1.6x)  %s" % (r_diff, verdict(r_diff <= 1.6)))
r_replay = sd_replay[0] / sd_stats[0]
print("replay / stats:        %5.2fx wall, %5.2fx cpu (target <= 3x)  %s" % (
    r_replay, sd_replay[1] / max(sd_stats[1], 1e-3), verdict(r_replay <= 3)))
print("replay peak RSS / file: %4.2fx (%.0f of %.0f MiB; target <= 1.5x)  %s" % (
    sd_replay[2] / size_old, sd_replay[2], size_old, verdict(sd_replay[2] / size_old <= 1.5)))
print("top / stats:           %5.2fx wall, %5.2fx cpu" % (
    sd_top[0] / sd_stats[0], sd_top[1] / max(sd_stats[1], 1e-3)))
print("pickle.load / stats:   %5.1fx wall, %5.1fx cpu; peak RSS %.0f%% of Python's (target > 30x)  %s" % (
    py_one[0] / sd_stats[0], py_one[1] / sd_stats[1], 100 * sd_stats[2] / py_one[2],
    verdict(py_one[0] / sd_stats[0] > 30)))
print("pickle.load x2 / diff: %5.1fx wall, %5.1fx cpu" % (py_two[0] / sd_diff[0], py_two[1] / sd_diff[1]))
if huge:
    grow = os.path.getsize(huge) / os.path.getsize(old)
    per_old, per_huge = sd_stats[1] / size_old, sd_huge[1] / (os.path.getsize(huge) / MiB)
    print("linearity %.0f -> %.0f MiB (x%.1f): stats cpu x%.2f, opscan x%.2f, cpu per MiB x%.2f "
          "(1.00 = linear), peak RSS / file %.2fx  %s" % (
        size_old, os.path.getsize(huge) / MiB, grow, sd_huge[1] / sd_stats[1],
        op_huge[1] / max(op_one[1], 1e-3), per_huge / per_old,
        sd_huge[2] / (os.path.getsize(huge) / MiB), verdict(per_huge / per_old <= 1.25)))
EOF
