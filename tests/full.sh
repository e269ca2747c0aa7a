#!/bin/bash
# The full run, as .ci/run does after tests/run.sh:
#   bash tests/full.sh [asan] [valgrind] [plain] [fuzz]      (no argument: all four)
#   asan      the suite (ctest -LE valgrind) built with ASan + UBSan (-O1) in build-asan/
#   valgrind  the CLI under memcheck (tests/valgrind.sh, on build/): a quick subset with a
#             progress line per step; VALGRIND_FULL=1 runs all of it
#   plain     the tests of label plain on build/: the Debian packages (cpack -G DEB, their
#             contents, lintian), which a sanitizer build cannot make, and the whole corpus
#             in every container (CPython's re-pickling is its cost, not the reader's)
#   fuzz      each libFuzzer target for FUZZ_SECONDS (default 60) in build-fuzz/
# Prints each part's time and a summary; exit 1 when any part fails (the others still run).
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
parts=${*:-asan valgrind plain fuzz}
summary=""
status=0

say() { printf '\n== %s\n' "$*"; }
run() { printf '+ %s\n' "$*"; "$@"; }
quiet() { printf '+ %s >/dev/null\n' "$*"; "$@" >/dev/null; }

for p in $parts; do
    case $p in asan|valgrind|plain|fuzz) ;;
    *) echo "usage: full.sh [asan] [valgrind] [plain] [fuzz]" >&2; exit 2 ;; esac
done

say "dependencies"
run sh tests/deps.sh --slurm || exit 1   # --slurm: the single-node Slurm test (label full)

part_asan() {
    # -O1: ASan's advice for usable speed (3x faster than -O0 on the slowest hostile case)
    quiet cmake -S . -B build-asan -DSNAPDIFF_WERROR=ON -DSNAPDIFF_SANITIZE=ON \
        -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-O1 &&
    run cmake --build build-asan -j "$jobs" &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        run ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE "valgrind|plain"
}

part_valgrind() {
    # valgrind cannot run an ASan binary: it checks the plain -Werror build.
    quiet cmake -S . -B build -DSNAPDIFF_WERROR=ON &&
    run cmake --build build -j "$jobs" --target snapdiff &&
    run sh tests/valgrind.sh build/src/snapdiff build/valgrind
}

part_plain() {
    quiet cmake -S . -B build -DSNAPDIFF_WERROR=ON &&
    run cmake --build build -j "$jobs" &&
    run ctest --test-dir build --output-on-failure -j "$jobs" -L plain
}

part_fuzz() {
    run bash tests/fuzz/run.sh "${FUZZ_SECONDS:-60}"
}

for p in $parts; do
    say "$p"
    t=$SECONDS
    if "part_$p"; then r=passed; else r=FAILED; status=1; fi
    line="$p: $r in $((SECONDS - t)) s"
    echo "tests/full.sh: $line"
    summary="$summary  $line"$'\n'
done
printf '\ntests/full.sh summary:\n%s' "$summary"
exit $status
