#!/bin/sh
# valgrind.sh SNAPDIFF [WORKDIR] - the CLI under valgrind memcheck, on success and on every
# error path: no memory error and no definite or indirect leak anywhere.
#   1. every testdata/ fixture: stats, frag, dump (and diff of each old/new pair);
#   2. every real snapshot in ../shared/real-snapshots (skipped, with a message, when that
#      directory is absent): stats and frag, and dump for those under 512 KiB (dump writes
#      ~40 bytes per input byte, which takes minutes under valgrind; the ASan suite dumps
#      them all);
#   3. the hostile corpus through run_cases.py --valgrind: one in VALGRIND_SAMPLE (default
#      10) of the truncations and flips, every other case except the slow ones (gzip/zip
#      bombs, 10^7-element lists), which take minutes under valgrind and are covered by
#      the ASan run instead.
# Exit status 0 when all is clean, 1 otherwise. SNAPDIFF must not be an ASan build.
set -u

bin=${1:?usage: valgrind.sh SNAPDIFF [WORKDIR]}
work=${2:-${TMPDIR:-/tmp}/snapdiff-valgrind}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
real=$root/../shared/real-snapshots
python=${PYTHON3:-python3}

if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind.sh: SKIP: valgrind not installed"
    exit 0
fi
if grep -q __asan_init "$bin" 2>/dev/null; then
    echo "valgrind.sh: $bin is an ASan build; valgrind cannot check it" >&2
    exit 2
fi
mkdir -p "$work/logs"
failures=0
runs=0

# vg NAME EXPECTED_STATUSES ARGS... : run snapdiff under memcheck, output to /dev/null.
vg() {
    name=$1 ok=$2
    shift 2
    log=$work/logs/$name.log
    runs=$((runs + 1))
    valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --error-exitcode=99 --log-file="$log" "$bin" "$@" >/dev/null 2>"$log.stderr"
    st=$?
    case " $ok " in
        *" $st "*) ;;
        *)
            failures=$((failures + 1))
            if [ "$st" -eq 99 ]; then
                echo "FAIL $name: memcheck errors (log: $log)"
                grep -E 'Invalid|uninitialised|definitely|indirectly|ERROR SUMMARY' "$log" |
                    head -n 8 | sed 's/^/    /'
            else
                echo "FAIL $name: exit status $st, expected one of: $ok"
                head -n 3 "$log.stderr" | sed 's/^/    /'
            fi
            ;;
    esac
}

# 1. fixtures
for f in $(find "$root/testdata" -type f \( -name '*.pickle' -o -name '*.pkl' -o -name '*.gz' \
        -o -name '*.zip' -o -name '*.pt' \) | sort); do
    n=fixture-$(echo "${f#"$root"/testdata/}" | tr '/' '_')
    vg "$n-stats" "0" stats "$f"
    vg "$n-frag" "0 1" frag "$f"
    vg "$n-dump" "0" dump "$f"
    case $f in
        *old.pickle)
            new=${f%old.pickle}new.pickle
            [ -f "$new" ] && vg "$n-diff" "0 1" diff "$f" "$new" ;;
    esac
done

# 2. real snapshots
if [ -d "$real" ]; then
    for f in "$real"/*.pickle "$real"/*.pkl; do
        [ -f "$f" ] || continue
        n=real-$(basename "$f")
        vg "$n-stats" "0" stats "$f"
        vg "$n-frag" "0 1" frag "$f"
        [ "$(wc -c < "$f")" -lt 524288 ] && vg "$n-dump" "0" dump "$f"
    done
else
    echo "valgrind.sh: SKIP real snapshots: $real not found"
fi
echo "valgrind.sh: $runs fixture/real runs, $failures failed"

# 3. hostile corpus
"$python" "$here/hostile/run_cases.py" --bin "$bin" --dir "$work/hostile" --valgrind \
    --sample "${VALGRIND_SAMPLE:-10}" --skip-slow --timeout-scale 30 --jobs 2 ||
    failures=$((failures + 1))

[ "$failures" -eq 0 ] && echo "valgrind.sh: clean" && exit 0
echo "valgrind.sh: $failures failure(s)"
exit 1
