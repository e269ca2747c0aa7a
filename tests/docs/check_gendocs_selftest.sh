#!/bin/sh
# check_gendocs_selftest.sh GENDOCS_BIN SOURCE_DIR
#
# The ctest docs_generated passes only when it can fail: on a copy of the man page and the
# completions, `snapdiff-gendocs --check` passes as committed, fails (exit 1, naming the
# file and `cmake --build build --target docs`) once a generated block is edited, rewrites
# the block to exactly the committed bytes (one command, deterministic), and refuses a
# file whose markers are gone (exit 2).
set -u
gen=${1:?usage: check_gendocs_selftest.sh GENDOCS_BIN SOURCE_DIR}
src=${2:?usage: check_gendocs_selftest.sh GENDOCS_BIN SOURCE_DIR}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "check_gendocs_selftest: FAIL: $*"; fail=1; }

mkdir "$tmp/man" "$tmp/completions"
cp "$src/man/snapdiff.1" "$tmp/man/"
cp "$src"/completions/snapdiff.bash "$src"/completions/_snapdiff "$src"/completions/snapdiff.fish \
    "$tmp/completions/"
"$gen" --check "$tmp" >/dev/null 2>&1 || bad "--check fails on the committed files"

for f in man/snapdiff.1 completions/snapdiff.bash completions/_snapdiff completions/snapdiff.fish; do
    cp "$tmp/$f" "$tmp/orig"
    # A line edited by hand inside the block: after the marker line (a comment that
    # starts with BEGIN GENERATED; prose that names it is no marker).
    awk 'done == 0 && prev ~ /^(\.\\"|#) *BEGIN GENERATED/ { print "edited by hand"; done = 1 } { print; prev = $0 }' \
        "$tmp/orig" >"$tmp/$f"
    cmp -s "$tmp/orig" "$tmp/$f" && bad "could not edit the generated block of $f"
    "$gen" --check "$tmp" >"$tmp/out" 2>&1
    rc=$?
    [ "$rc" = 1 ] || bad "--check exits $rc, not 1, after $f was edited"
    grep -q "$f differs.*cmake --build build --target docs" "$tmp/out" ||
        bad "--check does not name $f and the command that fixes it: $(cat "$tmp/out")"
    "$gen" "$tmp" >/dev/null 2>&1 || bad "writing failed for $f"
    cmp -s "$tmp/orig" "$tmp/$f" || bad "writing did not restore $f byte for byte"
    "$gen" "$tmp" >"$tmp/out2" 2>&1
    [ -s "$tmp/out2" ] && bad "a second run rewrote something: $(cat "$tmp/out2")"
done

grep -v 'GENERATED' "$src/completions/snapdiff.fish" >"$tmp/completions/snapdiff.fish"
"$gen" --check "$tmp" >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ] || bad "--check exits $rc, not 2, on a file without its markers"

[ "$fail" = 0 ] && echo "check_gendocs_selftest: an edited block fails --check, one run restores it exactly"
exit "$fail"
