#!/bin/sh
# Every public header compiles on its own: a translation unit that includes only
# "snapdiff/X.h" (twice, which also checks its include guard) builds as strict C11 with
# nothing but the installed include directory. A header that leans on another's includes
# would break a user who includes it first.
# Usage: check_headers.sh CC INCLUDE_DIR [EXTRA_CFLAGS...]
set -eu
cc=$1
inc=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=""
for h in "$inc"/snapdiff/*.h; do
    name=$(basename "$h")
    printf '#include "snapdiff/%s"\n#include "snapdiff/%s"\n' "$name" "$name" >"$tmp/tu.c"
    if ! "$cc" -std=c11 -pedantic -Wall -Wextra -Werror -Wstrict-prototypes \
            -Wmissing-prototypes "$@" -I "$inc" -fsyntax-only "$tmp/tu.c" 2>"$tmp/err"; then
        echo "check_headers: snapdiff/$name does not compile alone:"
        head -n 12 "$tmp/err" | sed 's/^/    /'
        failed="$failed $name"
    fi
    n=$((n + 1))
done
if [ "$n" -lt 5 ]; then
    echo "check_headers: only $n headers in $inc/snapdiff: is this the include directory?"
    exit 1
fi
if [ -n "$failed" ]; then
    echo "check_headers: headers that need another include first:$failed"
    exit 1
fi
echo "check_headers: $n public headers, each compiles alone"
