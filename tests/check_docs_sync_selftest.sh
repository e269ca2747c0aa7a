#!/bin/sh
# check_docs_sync_selftest.sh SNAPDIFF_BIN [SOURCE_DIR]
#
# Proves that tests/check_docs_sync.sh catches drift, so that its passing means something:
# against a fake `snapdiff --help` with one option and one command added and one option
# removed, it must fail and name each of them (missing from every document, or stale);
# the fake prints that global help for `snapdiff stats --help` too, which must be named.
set -u

bin=${1:?usage: check_docs_sync_selftest.sh SNAPDIFF_BIN [SOURCE_DIR]}
src=${2:-$(cd "$(dirname "$0")/.." && pwd)}
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
    "missing: --frobnicate: not in README.md" \
    "missing: -z (short for --frobnicate): not in completions/snapdiff.bash" \
    "missing: command watch: no entry in the COMMANDS section of man/snapdiff.1" \
    "missing: command watch: not in README.md" \
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
echo "selftest: check_docs_sync.sh reports an added option and command, a removed option" \
    "and a command without its own help"
