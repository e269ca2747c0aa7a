#!/bin/sh
# Every public header compiles on its own: a translation unit that includes only
# "snapdiff/X.h" (twice, which also checks its include guard) builds as strict C11, and as
# C++11 (every header inside extern "C"), with nothing but the installed include directory.
# A header that leans on another's includes would break a user who includes it first.
#
# Each header is compiled in the four ways a user may include it (docs/architecture.md,
# "Tiers"): alone, with -DSNAPDIFF_RENDER_API, with -DSNAPDIFF_EXPERIMENTAL, with both. A
# header of one opt-in tier only (pickle.h, render_report.h, ...) must stop without its
# macro, with the #error that names the macro, and compile with it; every other header
# compiles every way. The umbrella snapdiff.h is one of them.
# Usage: check_headers.sh CC INCLUDE_DIR [EXTRA_CFLAGS...]   (C++: $CXX, else g++ or c++)
set -eu
cc=$1
inc=$2
shift 2
cxx=${CXX:-$(command -v g++ || command -v c++ || true)}
[ -n "$cxx" ] || { echo "check_headers: no C++ compiler (g++): tests/deps.sh installs it"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
optin=0
failed=""

# compile LANG NAME [FLAGS...]: the header twice in one translation unit.
compile() {
    lang=$1 name=$2
    shift 2
    printf '#include "snapdiff/%s"\n#include "snapdiff/%s"\n' "$name" "$name" >"$tmp/tu.$lang"
    if [ "$lang" = c ]; then
        "$cc" -std=c11 -pedantic -Wall -Wextra -Werror -Wstrict-prototypes \
            -Wmissing-prototypes "$@" -I "$inc" -fsyntax-only "$tmp/tu.c" 2>"$tmp/err"
    else
        "$cxx" -std=c++11 -pedantic -Wall -Wextra -Werror "$@" -I "$inc" -fsyntax-only \
            "$tmp/tu.cpp" 2>"$tmp/err"
    fi
}

for h in "$inc"/snapdiff/*.h; do
    name=$(basename "$h")
    n=$((n + 1))
    # The macro a header of one tier only demands (its #error), or none.
    need=$(sed -n 's/^#ifndef \(SNAPDIFF_RENDER_API\|SNAPDIFF_EXPERIMENTAL\)$/\1/p' "$h" |
           head -n 1)
    # C: alone, with each macro, with both; C++: alone and with both.
    for run in "c:" "c:-DSNAPDIFF_RENDER_API" "c:-DSNAPDIFF_EXPERIMENTAL" \
               "c:-DSNAPDIFF_RENDER_API -DSNAPDIFF_EXPERIMENTAL" "cpp:" \
               "cpp:-DSNAPDIFF_RENDER_API -DSNAPDIFF_EXPERIMENTAL"; do
        lang=${run%%:*}
        flags=${run#*:}
        # shellcheck disable=SC2086
        if compile "$lang" "$name" $flags "$@"; then
            if [ -n "$need" ] && ! printf '%s\n' "$flags" | grep -q -- "-D$need"; then
                echo "check_headers: snapdiff/$name ($lang) compiles without $need," \
                     "which its #error demands"
                failed="$failed $name"
            fi
            continue
        fi
        if [ -n "$need" ] && ! printf '%s\n' "$flags" | grep -q -- "-D$need"; then
            if grep -q "define $need before including it" "$tmp/err"; then
                continue    # the #error a user without the macro gets
            fi
        fi
        echo "check_headers: snapdiff/$name does not compile alone ($lang${flags:+, $flags}):"
        head -n 12 "$tmp/err" | sed 's/^/    /'
        failed="$failed $name"
    done
    [ -z "$need" ] || optin=$((optin + 1))
done
if [ "$n" -lt 5 ]; then
    echo "check_headers: only $n headers in $inc/snapdiff: is this the include directory?"
    exit 1
fi
if [ -n "$failed" ]; then
    echo "check_headers: headers that need another include first, or a tier's macro:" \
         "$(printf '%s\n' $failed | sort -u | tr '\n' ' ')"
    exit 1
fi
echo "check_headers: $n public headers ($optin of one opt-in tier only), each compiles alone" \
     "in C and C++, with and without SNAPDIFF_RENDER_API and SNAPDIFF_EXPERIMENTAL"
