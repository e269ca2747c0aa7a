#!/bin/sh
# check_readme_example.sh SNAPDIFF_BIN [SOURCE_DIR]
#
# README.md shows excerpts of real runs on the bundled fixtures. Each is the first code
# block after a marker line; this fails when an excerpt no longer matches what snapdiff
# prints: every line of it but "  ..." (and the "$ snapdiff ..." line itself) must appear
# in the real output, in the same order.
#   "On the bundled pair"            snapdiff testdata/example/old.pickle testdata/example/new.pickle
#   "Two configurations of one model" snapdiff testdata/peak/fp32.pickle testdata/peak/bf16.pickle
#   "Megatron-LM's `report_memory`"  snapdiff curve testdata/curve/frameworks/megatron_srun.log
#   "On the bundled torchtitan log"  snapdiff curve testdata/curve/frameworks/torchtitan.log --capacity H100
set -u

bin=${1:?usage: check_readme_example.sh SNAPDIFF_BIN [SOURCE_DIR]}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# check_excerpt MARKER ARGS...: the block after MARKER against `snapdiff ARGS`.
check_excerpt() {
    marker=$1
    shift
    awk -v m="$marker" 'index($0, m) == 1 { want = 1; next }
         want && /^```/ { if (inblock) exit; inblock = 1; next }
         inblock && $0 != "  ..." && $0 !~ /^\$ snapdiff / { print }' \
        "$src/README.md" >"$tmp/excerpt"
    if [ "$(wc -l <"$tmp/excerpt")" -lt 10 ]; then
        echo "check_readme_example: no excerpt after '$marker' in README.md"
        return 1
    fi
    (cd "$src" && NO_COLOR=1 "$bin" "$@") >"$tmp/real" ||
        { echo "check_readme_example: snapdiff $* failed"; return 1; }
    # In order: each excerpt line must be found after the previous one.
    awk 'NR == FNR { real[++n] = $0; next }
         { for (i = at + 1; i <= n; i++) if (real[i] == $0) break
           if (i > n) { print "check_readme_example: README.md shows a line snapdiff does not print (here):"
                        print "    " $0; bad = 1; exit }
           at = i }
         END { exit bad }' "$tmp/real" "$tmp/excerpt" || {
        echo "--- snapdiff $* prints:"
        cat "$tmp/real"
        return 1
    }
    echo "check_readme_example: README's excerpt after '$marker' ($(wc -l <"$tmp/excerpt") lines) matches a real run"
}

status=0
check_excerpt "On the bundled pair" testdata/example/old.pickle testdata/example/new.pickle || status=1
check_excerpt "Two configurations of one model" testdata/peak/fp32.pickle testdata/peak/bf16.pickle || status=1
check_excerpt "Megatron-LM's \`report_memory\`" curve testdata/curve/frameworks/megatron_srun.log || status=1
check_excerpt "On the bundled torchtitan log" curve testdata/curve/frameworks/torchtitan.log --capacity H100 || status=1
exit $status
