#!/bin/sh
# bench_curve.sh SNAPDIFF_BIN [LINES] - time `snapdiff curve` on a long training log.
#
# Writes a log of LINES (default 1,000,000) text lines under /tmp (a 64 KiB/step leak under
# a 2 GiB sawtooth, reserved beside allocated), gzips a copy, writes the same as JSON Lines
# of memory_stats() keys, and runs `snapdiff curve` on each under /usr/bin/time -v:
# wall-clock time and peak RSS. A benchmark, not a test:
# it prints the figures and the verdict, and fails only when snapdiff does.
set -eu
bin=${1:?usage: bench_curve.sh SNAPDIFF_BIN [LINES]}
lines=${2:-1000000}
dir=$(mktemp -d /tmp/snapdiff-bench-curve.XXXXXX)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir/mem.log" "$lines" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
GiB, KiB = 1 << 30, 1 << 10
with open(path, "w") as f, open(path.replace(".log", ".jsonl"), "w") as j:
    for s in range(n):
        alloc = 20 * GiB + 2 * GiB * (s % 40) // 39 + 64 * KiB * s
        f.write("step=%d loss=2.0 alloc=%dB reserved=%dB\n" % (s, alloc, alloc + 3 * GiB))
        j.write('{"step": %d, "loss": 2.0, "allocated_bytes.all.current": %d, '
                '"reserved_bytes.all.current": %d, "num_alloc_retries": 0}\n'
                % (s, alloc, alloc + 3 * GiB))
PY
gzip -k "$dir/mem.log"
for f in "$dir/mem.log" "$dir/mem.log.gz" "$dir/mem.jsonl"; do
    echo "== $(basename "$f"): $(wc -c <"$f") bytes, $lines lines"
    /usr/bin/time -v "$bin" curve --json "$f" >"$dir/out.json" 2>"$dir/time.txt" || {
        cat "$dir/time.txt"; exit 1; }
    grep -E "Elapsed \(wall clock\)|Maximum resident set size" "$dir/time.txt"
    python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['series'][0]; \
print('verdict', s['verdict'], 'slope', round(s['lower_edge']['slope_bytes_per_step']), \
'B/step (truth 65536), merged', s['merged'])" "$dir/out.json"
done
