#!/bin/bash
# The whole test suite, as CI runs it: dependencies, a -Werror build and every test, the
# same suite again under AddressSanitizer + UndefinedBehaviorSanitizer, and a short run of
# each fuzz target. Usage: bash tests/run.sh   (FUZZ_SECONDS=60 by default; 0 skips)
set -euo pipefail
cd "$(dirname "$0")/.."
sh tests/deps.sh
jobs=$(nproc)

echo "== build (-Werror) and test"
cmake -S . -B build -DSNAPDIFF_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== the same suite under ASan + UBSan"
cmake -S . -B build-asan -DSNAPDIFF_WERROR=ON -DSNAPDIFF_SANITIZE=ON \
      -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE valgrind

if [ "${FUZZ_SECONDS:-60}" != 0 ]; then
    echo "== fuzzing, ${FUZZ_SECONDS:-60} s per target"
    bash tests/fuzz/run.sh "${FUZZ_SECONDS:-60}"
fi
echo "tests/run.sh: all passed"
