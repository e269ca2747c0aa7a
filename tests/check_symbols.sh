#!/bin/sh
# Every global symbol libsnapdiff defines carries the project prefix: sd_ for the public
# API, sdp_ for what the core's files share. Anything else would leak into users' links.
# Usage: check_symbols.sh LIBSNAPDIFF.a
set -eu
lib=$1
bad=$(nm -g --defined-only "$lib" | awk 'NF == 3 {print $3}' | grep -v '^sdp\?_' || true)
count=$(nm -g --defined-only "$lib" | awk 'NF == 3' | wc -l)
if [ "$count" -lt 20 ]; then
    echo "check_symbols: only $count symbols found in $lib: is this the library?"
    exit 1
fi
if [ -n "$bad" ]; then
    echo "check_symbols: global symbols without the sd_/sdp_ prefix:"
    echo "$bad"
    exit 1
fi
echo "check_symbols: $count global symbols, all prefixed"
