#!/bin/sh
# valgrind.sh SNAPDIFF [WORKDIR] - the CLI under valgrind memcheck, on success and on every
# error path: no memory error and no definite or indirect leak anywhere.
#
# By default a subset that takes about 3 minutes on 2 cores; VALGRIND_FULL=1 runs it all
# (about 10-20 minutes). Every step prints a progress line, so it is never silent for long.
#   1. every testdata/ fixture: stats, frag, dump (and diff of each old/new pair);
#   2. the real snapshots in $SNAPDIFF_SHARED/real-snapshots (default ../shared beside the
#      checkout; skipped, with a message, when absent): stats and frag, and dump for those
#      under 512 KiB (dump writes ~40 bytes per input byte, minutes under valgrind; the
#      ASan suite dumps them all). The subset takes the snapshots under 64 KiB.
#   3. the hostile corpus through run_cases.py --valgrind, one group at a time: one in
#      VALGRIND_SAMPLE of the truncations and flips (default 10; the subset keeps one in
#      25 of every group), never the slow cases (gzip/zip bombs, 10^7-element lists),
#      which take minutes under valgrind and are covered by the ASan run instead.
# VALGRIND_JOBS (default 2) runs go at once. Exit 0 when all is clean, 1 otherwise.
# SNAPDIFF must not be an ASan build.
set -u

bin=${1:?usage: valgrind.sh SNAPDIFF [WORKDIR]}
work=${2:-${TMPDIR:-/tmp}/snapdiff-valgrind}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
real=${SNAPDIFF_SHARED:-$root/../shared}/real-snapshots
python=${PYTHON3:-python3}
jobs=${VALGRIND_JOBS:-2}
full=${VALGRIND_FULL:-0}

if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind.sh: SKIP: valgrind not installed"
    exit 0
fi
if grep -q __asan_init "$bin" 2>/dev/null; then
    echo "valgrind.sh: $bin is an ASan build; valgrind cannot check it" >&2
    exit 2
fi
if [ "$full" = 1 ]; then
    echo "valgrind.sh: VALGRIND_FULL=1: everything"
    real_max=999999999999 sample=${VALGRIND_SAMPLE:-10} every=""
else
    echo "valgrind.sh: the quick subset (VALGRIND_FULL=1 for everything)"
    real_max=65536 sample=${VALGRIND_SAMPLE:-25} every=--sample-every
fi
rm -rf "$work/logs" "$work/failed"
mkdir -p "$work/logs" "$work/failed"
started=$(date +%s)
runs=0
running=0

# vg NAME EXPECTED_STATUSES ARGS... : snapdiff under memcheck, output to /dev/null; a
# failure leaves its description in $work/failed/NAME (runs go on in the background).
vg() {
    name=$1 ok=$2
    shift 2
    log=$work/logs/$name.log
    valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --error-exitcode=99 --log-file="$log" "$bin" "$@" <"${VG_STDIN:-/dev/stdin}" \
        >/dev/null 2>"$log.stderr"
    st=$?
    case " $ok " in
        *" $st "*) return 0 ;;
    esac
    if [ "$st" -eq 99 ]; then
        { echo "FAIL $name: memcheck errors (log: $log)"
          grep -E 'Invalid|uninitialised|definitely|indirectly|ERROR SUMMARY' "$log" |
              head -n 8 | sed 's/^/    /'; } >"$work/failed/$name"
    else
        { echo "FAIL $name: exit status $st, expected one of: $ok"
          head -n 3 "$log.stderr" | sed 's/^/    /'; } >"$work/failed/$name"
    fi
    cat "$work/failed/$name"
}

# spawn ARGS... : vg in the background, at most $jobs at once.
spawn() {
    runs=$((runs + 1))
    vg "$@" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait
        running=0
    fi
}

elapsed() { echo "$(( $(date +%s) - started )) s"; }

# 1. fixtures
fixtures=$(find "$root/testdata" -type f \( -name '*.pickle' -o -name '*.pkl' -o -name '*.gz' \
    -o -name '*.zip' -o -name '*.pt' \) | sort)
total=$(echo "$fixtures" | wc -l)
i=0
for f in $fixtures; do
    i=$((i + 1))
    rel=${f#"$root"/testdata/}
    echo "valgrind.sh: fixture $i/$total $rel ($(elapsed))"
    n=fixture-$(echo "$rel" | tr '/' '_')
    spawn "$n-stats" "0" stats "$f"
    spawn "$n-frag" "0 1" frag "$f"
    # dump takes one snapshot: an archive of several ranks is refused (exit 2, "pick one")
    case $f in
        *.zip) spawn "$n-dump" "0 2" dump "$f" ;;
        *) spawn "$n-dump" "0" dump "$f" ;;
    esac
    case $f in
        *old.pickle)
            new=${f%old.pickle}new.pickle
            [ -f "$new" ] && spawn "$n-diff" "0 1" diff "$f" "$new" ;;
    esac
done
wait
running=0

# 1b. snapdiff mcp: a session of every kind of message, tool calls and errors included
# (tests/mcp/session.jsonl, paths relative to testdata/)
echo "valgrind.sh: mcp session ($(elapsed))"
VG_STDIN=$root/tests/mcp/session.jsonl vg mcp-session "0" mcp --root "$root/testdata"

# 2. real snapshots
if [ -d "$real" ]; then
    i=0
    for f in "$real"/*.pickle "$real"/*.pkl; do
        [ -f "$f" ] || continue
        size=$(wc -c <"$f")
        [ "$size" -le "$real_max" ] || continue
        i=$((i + 1))
        echo "valgrind.sh: real snapshot $i $(basename "$f") ($size bytes, $(elapsed))"
        n=real-$(basename "$f")
        spawn "$n-stats" "0" stats "$f"
        spawn "$n-frag" "0 1" frag "$f"
        [ "$size" -lt 524288 ] && spawn "$n-dump" "0" dump "$f"
    done
    wait
    running=0
else
    echo "valgrind.sh: SKIP real snapshots: $real not found (set SNAPDIFF_SHARED)"
fi
# The map of a cluster job (issue 30): summarize --shard over a list, a share of several
# inputs into a folder, and its refusals (an archive among the inputs, a NUL in a list).
echo "valgrind.sh: summarize --shard ($(elapsed))"
printf '%s\n' "$root/testdata/example/old.pickle" "$root/testdata/example/new.pickle" \
    "$root/testdata/ranks/rank2_new.pickle" >"$work/shard-list.txt"
printf 'x\n\0' >"$work/shard-nul.txt"
spawn shard-list "0" summarize --shard 1/2 "@$work/shard-list.txt" -o "$work/shard-out"
export JOB_COMPLETION_INDEX=2   # a Kubernetes Indexed Job's pod
spawn shard-auto "0" summarize --shard auto/3 "@$work/shard-list.txt" -o "$work/shard-k8s"
unset JOB_COMPLETION_INDEX
spawn shard-zip "2" summarize --shard 0/1 "$root/testdata/ranks/old.zip" -o "$work/shard-zip"
spawn shard-nul "2" summarize "@$work/shard-nul.txt" -o "$work/shard-nul"
wait
running=0
failures=$(ls "$work/failed" | wc -l)
echo "valgrind.sh: $runs fixture/real runs, $failures failed ($(elapsed))"

# 3. hostile corpus, a group at a time so that progress shows
for group in pickle refuse limits source zip model trunc flip; do
    echo "valgrind.sh: hostile group $group, one case in $sample${every:+ of every group} ($(elapsed))"
    # shellcheck disable=SC2086
    "$python" "$here/cli/hostile/run_cases.py" --bin "$bin" --dir "$work/hostile/$group" \
        --group "$group" --valgrind --sample "$sample" $every --skip-slow \
        --timeout-scale 30 --jobs "$jobs" || failures=$((failures + 1))
done

if [ "$failures" -eq 0 ]; then
    echo "valgrind.sh: clean ($(elapsed))"
    exit 0
fi
echo "valgrind.sh: $failures failure(s) ($(elapsed))"
exit 1
