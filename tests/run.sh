#!/bin/bash
# The README's test command: dependencies, a -Werror build and the suite without the slow
# valgrind part. About a minute of build and a minute of tests on 2 cores (5 minutes at
# most); the full run (sanitizers, valgrind, fuzzing) is tests/full.sh.
#   bash tests/run.sh
# Environment: SNAPDIFF_SHARED, the folder holding real-snapshots/ (default ../shared
# beside the checkout; without it the real-snapshot tests are skipped, loudly).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
start=$SECONDS

# say WORDS: a step header; run CMD...: print the command, then run it.
say() { printf '\n== %s\n' "$*"; }
run() { printf '+ %s\n' "$*"; "$@"; }

say "dependencies"
run sh tests/deps.sh
say "build (-Werror) into build/"
run cmake -S . -B build -DSNAPDIFF_WERROR=ON
run cmake --build build -j "$jobs"
say "the suite, without valgrind and the label full (tests/full.sh runs those)"
run ctest --test-dir build --output-on-failure -j "$jobs" -LE "valgrind|full"
echo
echo "tests/run.sh: all passed in $((SECONDS - start)) s"
echo "tests/run.sh: the full run (ASan+UBSan, valgrind, fuzzing) is: bash tests/full.sh"
