#!/bin/sh
# check_readme_example.sh SNAPDIFF_BIN [SOURCE_DIR]
#
# README.md shows an excerpt of `snapdiff testdata/example/old.pickle
# testdata/example/new.pickle` (the block after the line "On the bundled pair"), copied
# from a real run. This fails when the excerpt no longer matches what snapdiff prints:
# every line of it but "  ..." must appear in the real output, in the same order.
set -u

bin=${1:?usage: check_readme_example.sh SNAPDIFF_BIN [SOURCE_DIR]}
src=${2:-$(cd "$(dirname "$0")/.." && pwd)}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

awk '/^On the bundled pair/ { want = 1; next }
     want && /^```/ { if (inblock) exit; inblock = 1; next }
     inblock && $0 != "  ..." { print }' "$src/README.md" >"$tmp/excerpt"
if [ "$(wc -l <"$tmp/excerpt")" -lt 10 ]; then
    echo "check_readme_example: no excerpt after 'On the bundled pair' in README.md"
    exit 1
fi
(cd "$src" && NO_COLOR=1 "$bin" testdata/example/old.pickle testdata/example/new.pickle) \
    >"$tmp/real" || { echo "check_readme_example: snapdiff failed"; exit 1; }

# In order: each excerpt line must be found after the previous one.
awk 'NR == FNR { real[++n] = $0; next }
     { for (i = at + 1; i <= n; i++) if (real[i] == $0) break
       if (i > n) { print "check_readme_example: README.md shows a line snapdiff does not print (here):"
                    print "    " $0; bad = 1; exit }
       at = i }
     END { exit bad }' "$tmp/real" "$tmp/excerpt" || {
    echo "--- snapdiff prints:"
    cat "$tmp/real"
    exit 1
}
echo "check_readme_example: README's excerpt ($(wc -l <"$tmp/excerpt") lines) matches a real run"
