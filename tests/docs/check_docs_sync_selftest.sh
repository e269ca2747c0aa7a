#!/bin/sh
# check_docs_sync_selftest.sh SNAPDIFF_BIN [SOURCE_DIR]
#
# Proves that tests/docs/check_docs_sync.sh catches drift, so that its passing means something:
# against a fake `snapdiff --help` with one option and one command added and one option
# removed, it must fail and name each of them (missing from every document, or stale);
# the fake prints that global help for `snapdiff stats --help` too, which must be named;
# and a README.md of 601 lines beside docs that agree must be named too.
set -u

bin=${1:?usage: check_docs_sync_selftest.sh SNAPDIFF_BIN [SOURCE_DIR]}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

"$bin" --help >"$tmp/help" || { echo "selftest: '$bin --help' failed" >&2; exit 2; }
grep -q -- '--steps N' "$tmp/help" || { echo "selftest: --help has no '--steps N' line" >&2; exit 2; }
# Add "-z, --frobnicate N" after the first option line and a "watch" command after the
# first command line; drop --steps.
awk '
    /^Commands:/ { print; getline; print; print "  watch  DIR       watch a directory"; next }
    /^Options:/  { print; getline; print; print "  -z, --frobnicate N         frobnicate [frag]"; next }
    /--steps N/  { next }
    { print }' "$tmp/help" >"$tmp/help.fake"
cat >"$tmp/fake" <<EOF
#!/bin/sh
cat "$tmp/help.fake"
EOF
chmod +x "$tmp/fake"

sh "$here/check_docs_sync.sh" "$tmp/fake" "$src" >"$tmp/out" 2>&1
status=$?
fail=0
if [ "$status" -ne 1 ]; then
    echo "selftest: check_docs_sync.sh exited $status on drifted docs, expected 1"
    fail=1
fi
for want in \
    "missing: --frobnicate: no entry in the OPTIONS section of man/snapdiff.1" \
    "missing: --frobnicate: not in completions/snapdiff.bash" \
    "missing: --frobnicate: not in completions/_snapdiff" \
    "missing: --frobnicate: no 'complete ... -l frobnicate' in completions/snapdiff.fish" \
    "missing: --frobnicate: not in the Options table of docs/reference.md" \
    "missing: -z (short for --frobnicate): not in completions/snapdiff.bash" \
    "missing: command watch: no entry in the COMMANDS section of man/snapdiff.1" \
    "missing: command watch: not in the Commands table of docs/reference.md" \
    "stale: --steps: in man/snapdiff.1, unknown to snapdiff --help" \
    "stale: --steps: in completions/snapdiff.bash, unknown to snapdiff --help" \
    "stale: --steps: in completions/_snapdiff, unknown to snapdiff --help" \
    "stale: --steps: in completions/snapdiff.fish, unknown to snapdiff --help" \
    "'snapdiff stats --help' prints the global help, not that of stats" \
    "'snapdiff stats --help' does not start with 'Usage: snapdiff stats'"; do
    grep -qxF -- "$want" "$tmp/out" || { echo "selftest: not reported: $want"; fail=1; }
done
if [ "$fail" -ne 0 ]; then
    echo "--- check_docs_sync.sh said:"
    cat "$tmp/out"
    exit 1
fi

# A README grown past 600 lines must be named; the real help and docs otherwise agree.
mkdir -p "$tmp/src/docs"
cp -R "$src/man" "$src/completions" "$tmp/src/"
cp "$src/docs/reference.md" "$tmp/src/docs/"
awk 'BEGIN { for (i = 1; i <= 601; i++) print "line " i }' >"$tmp/src/README.md"
sh "$here/check_docs_sync.sh" "$bin" "$tmp/src" >"$tmp/out2" 2>&1
status=$?
want="README.md has 601 lines, more than 600: move reference text to docs/"
if [ "$status" -ne 1 ] || ! grep -qxF -- "$want" "$tmp/out2"; then
    echo "selftest: a 601-line README.md not reported (exit $status); check_docs_sync.sh said:"
    cat "$tmp/out2"
    exit 1
fi
echo "selftest: check_docs_sync.sh reports an added option and command, a removed option," \
    "a command without its own help and a README over 600 lines"
