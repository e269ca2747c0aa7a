#!/bin/sh
# run.sh SECONDS [TARGET...] - build the libFuzzer targets if needed and run each one for
# SECONDS (default 60), one after the other. Fails (exit 1) on any finding: a crash, a
# sanitizer report, a leak, a timeout or an out-of-memory, each of which libFuzzer saves
# as an artifact under $OUT/artifacts. CI runs it with ~60 s per target.
#
# Environment: CC (default clang), FUZZ_BUILD (default build-fuzz/ in this checkout: a
# build folder outside the tree would be shared by every checkout, and cmake refuses one
# configured from another source tree), FUZZ_OUT (default
# $FUZZ_BUILD/fuzz-out: seeds, the growing corpus, artifacts, logs), FUZZ_ARGS (extra
# libFuzzer flags, e.g. "-jobs=1 -workers=1").
set -eu

secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-"fuzz_pickle fuzz_load fuzz_summary fuzz_curve fuzz_mcp"}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
out=${FUZZ_OUT:-$build/fuzz-out}
python=${PYTHON3:-python3}

case $secs in
    ''|*[!0-9]*) echo "usage: run.sh SECONDS [TARGET...]" >&2; exit 2 ;;
esac

# Configured every time (cheap when nothing changed), from this checkout's sources: cmake
# stops with an error when $build was configured from another tree.
echo "run.sh: building $targets in $build"
CC=${CC:-clang} cmake -S "$root" -B "$build" -DSNAPDIFF_FUZZ=ON -DSNAPDIFF_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# shellcheck disable=SC2086
cmake --build "$build" -j "$(nproc)" --target snapdiff $targets >/dev/null

mkdir -p "$out/artifacts" "$out/logs"
rm -rf "$out/seeds"
"$python" "$here/make_seeds.py" "$out/seeds"
# The summary reader's seeds: summaries of the fixtures, written by this build's CLI.
mkdir -p "$out/seeds/summary"
find "$root/testdata" -name '*.pickle' -size -64k | sort | while read -r f; do
    name=$(printf '%s' "${f#"$root"/testdata/}" | tr '/' '_')
    "$build/src/snapdiff" summarize "$f" -o "$out/seeds/summary/$name.sdsum" 2>/dev/null || true
done

# The log reader's seeds: the curve fixtures (logs, CSV, JSON Lines), the first 64 KiB.
mkdir -p "$out/seeds/curve"
for f in "$root"/testdata/curve/*.log "$root"/testdata/curve/*.csv "$root"/testdata/curve/*.jsonl; do
    [ -f "$f" ] && head -c 65536 "$f" >"$out/seeds/curve/$(basename "$f")"
done

# The MCP server's seeds: sessions of JSON-RPC lines (make_seeds.py, on the root fuzz_mcp.c
# makes: s0.pickle, s1.pickle).
dict_of() {
    case $1 in fuzz_curve) echo curve.dict ;; fuzz_mcp) echo mcp.dict ;; *) echo pickle.dict ;; esac
}

status=0
for t in $targets; do
    case $t in
        fuzz_pickle) seeds=$out/seeds/pickle ;;
        fuzz_summary) seeds=$out/seeds/summary ;;
        fuzz_curve) seeds=$out/seeds/curve ;;
        fuzz_mcp) seeds=$out/seeds/mcp ;;
        *) seeds=$out/seeds/load ;;
    esac
    corpus=$out/corpus/$t
    mkdir -p "$corpus"
    log=$out/logs/$t.log
    before=$(ls "$out/artifacts" | wc -l)
    echo "run.sh: $t for ${secs}s (log: $log)"
    # -timeout: one input may take 10 s at most; -rss_limit_mb: the whole process 2 GiB;
    # -max_len: large seeds are kept, but mutations stay small enough to be fast.
    # shellcheck disable=SC2086
    if ! "$build/tests/fuzz/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
            -max_len=65536 -dict="$here/$(dict_of "$t")" -print_final_stats=1 \
            -artifact_prefix="$out/artifacts/$t-" ${FUZZ_ARGS:-} "$corpus" "$seeds" \
            >"$log" 2>&1; then
        echo "run.sh: $t FAILED; the last lines of its log:" >&2
        grep -v -E '^#[0-9]+.*(NEW|REDUCE|pulse)' "$log" | tail -n 40 >&2
        status=1
    fi
    after=$(ls "$out/artifacts" | wc -l)
    if [ "$after" -ne "$before" ]; then
        echo "run.sh: $t left new artifacts in $out/artifacts:" >&2
        ls -t "$out/artifacts" | head -n $((after - before)) >&2
        status=1
    fi
    grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log" || true
done
exit $status
