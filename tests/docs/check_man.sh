#!/bin/bash
# check_man.sh SNAPDIFF_BIN [SOURCE_DIR [BUILT_MAN]]
#
# 1. man/snapdiff.1 renders with groff without a single warning (skipped, with a message,
#    when groff is not installed).
# 2. Every example of the man page marked with a `.\" check: exit N` comment line runs,
#    from the source tree, with exit status N. The example is the .EX ... .EE block after
#    the marker, run by bash with pipefail, with `snapdiff` on PATH being SNAPDIFF_BIN.
#    An example expected to succeed must write something; one expected to fail with
#    status 2 must write exactly one line on stderr, "snapdiff: ...". Examples that need
#    jq are skipped, with a message, when jq is not installed.
# 3. With BUILT_MAN (the page the build writes and installs): it is man/snapdiff.1 with
#    the .TH line's @PROJECT_VERSION@ filled in, and that version is `snapdiff --version`'s
#    (one version: docs/architecture.md); the tree's page keeps the placeholder.
set -u

bin=${1:?usage: check_man.sh SNAPDIFF_BIN [SOURCE_DIR [BUILT_MAN]]}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
built=${3:-}
man=$src/man/snapdiff.1
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
[ -x "$bin" ] || { echo "check_man: $bin is not executable" >&2; exit 2; }
[ -f "$man" ] || { echo "check_man: no $man" >&2; exit 1; }

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

# ---- 1. rendering -----------------------------------------------------------------------
if command -v groff >/dev/null 2>&1; then
    if ! groff -man -Tutf8 -ww -z "$man" 2>"$tmp/groff.err" || [ -s "$tmp/groff.err" ]; then
        echo "check_man: groff warns about man/snapdiff.1:"
        cat "$tmp/groff.err"
        fail=1
    else
        echo "check_man: man/snapdiff.1 renders without warnings"
    fi
else
    echo "check_man: SKIP rendering: groff is not installed"
fi

# ---- 2. the examples --------------------------------------------------------------------
# One file per marked example: its first line is the expected status, the rest the
# command, unescaped from roff (\- to -, \e to \, \(aq to ', \(dq to ", \& dropped).
awk -v dir="$tmp" '
    /^\.\\" check: exit [0-9]+$/ { want = $NF; armed = 1; next }
    armed && /^\.EX/ { n++; file = sprintf("%s/ex%02d", dir, n); print want > file; inex = 1; next }
    inex && /^\.EE/ { close(file); inex = 0; armed = 0; next }
    inex {
        line = $0
        gsub(/\\-/, "-", line); gsub(/\\\(aq/, "\047", line); gsub(/\\\(dq/, "\"", line)
        gsub(/\\&/, "", line); gsub(/\\e/, "\\", line)
        print line > file
    }' "$man"

mkdir "$tmp/bin"
ln -s "$bin" "$tmp/bin/snapdiff"
have_jq=0
command -v jq >/dev/null 2>&1 && have_jq=1
ran=0 skipped=0
for ex in "$tmp"/ex*; do
    [ -e "$ex" ] || break
    want=$(head -n 1 "$ex")
    cmd=$(tail -n +2 "$ex")
    shown=$(printf '%s' "$cmd" | tr '\n' ' ')
    if [ "$have_jq" = 0 ] && printf '%s' "$cmd" | grep -qE '(^|[|[:space:]])jq([[:space:]]|$)'; then
        echo "check_man: SKIP (jq is not installed): $shown"
        skipped=$((skipped + 1))
        continue
    fi
    (cd "$src" && PATH=$tmp/bin:$PATH NO_COLOR=1 timeout 60 bash -o pipefail -c "$cmd") \
        >"$tmp/out" 2>"$tmp/err"
    got=$?
    ran=$((ran + 1))
    problem=''
    if [ "$got" != "$want" ]; then
        problem="exit status $got, expected $want"
    elif [ "$want" = 0 ] && [ ! -s "$tmp/out" ]; then
        problem="no output"
    elif [ "$want" = 2 ] && { [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -q '^snapdiff: ' "$tmp/err"; }; then
        problem="stderr is not one 'snapdiff: ...' line"
    fi
    if [ -n "$problem" ]; then
        echo "check_man: FAIL ($problem): $shown"
        sed 's/^/    stderr: /' "$tmp/err" | head -n 5
        fail=1
    else
        echo "check_man: ok (exit $got): $shown"
    fi
done

# ---- 3. the built page's version ----------------------------------------------------------
if [ -n "$built" ]; then
    version=$("$bin" --version | sed -n 's/^snapdiff //p')
    th='^\.TH SNAPDIFF 1 [^ ]* "snapdiff @PROJECT_VERSION@" '
    if ! grep -q "$th" "$man"; then
        echo "check_man: man/snapdiff.1's .TH line does not carry \"snapdiff @PROJECT_VERSION@\"" \
             "(the build fills it in): $(grep '^\.TH' "$man")"
        fail=1
    elif [ ! -f "$built" ]; then
        echo "check_man: the build wrote no $built"
        fail=1
    elif ! sed "s/@PROJECT_VERSION@/$version/" "$man" | cmp -s - "$built"; then
        echo "check_man: $built is not man/snapdiff.1 with version $version filled in" \
             "(snapdiff --version): $(grep '^\.TH' "$built")"
        fail=1
    else
        echo "check_man: the built page carries version $version, as snapdiff --version"
    fi
fi

if [ $((ran + skipped)) -lt 5 ]; then
    echo "check_man: only $((ran + skipped)) marked examples found in man/snapdiff.1; the markers are gone?"
    fail=1
fi
[ "$fail" = 0 ] && echo "check_man: $ran examples ran as documented, $skipped skipped"
exit "$fail"
