#!/bin/sh
# What libsnapdiff shows to the programs that link it.
#
#   check_symbols.sh LIBSNAPDIFF.a
#     Every global symbol the static library defines carries the project prefix: sd_ for
#     the public API, sdp_ for what the core's files share. Anything else would clash with
#     users' symbols in their links.
#
#   check_symbols.sh --shared LIBSNAPDIFF.so INCLUDE_DIR CC [-IDIR...] [KNOWN_UNDEFINED...]
#     The shared library exports the public API and nothing else (src/libsnapdiff.map), tier
#     by tier (docs/architecture.md, "Tiers"). The public headers are preprocessed by CC
#     without any macro, then with -DSNAPDIFF_RENDER_API, then with -DSNAPDIFF_EXPERIMENTAL
#     (a header of one opt-in tier only, guarded by #error, only with its macro), and the
#     sd_ functions declared by each header's own lines make its stable, render and
#     experimental sets. Then: every stable function is exported in the node
#     LIBSNAPDIFF_<ABI>, every render one in LIBSNAPDIFF_RENDER_<ABI>, every experimental
#     one in LIBSNAPDIFF_EXPERIMENTAL_<ABI>, and nothing else is exported (a private
#     function is sdp_ and stays local); no function is in two tiers; every sd_ function a
#     header's comments name exists; the stable node holds at most 250 functions; the
#     SONAME is versioned (libsnapdiff.so.N). -IDIR: where generated headers are
#     (version.h). Failures name the header.
#     KNOWN_UNDEFINED: names a header still declares although nothing defines them (a
#     known bug being fixed), tolerated with a note until the declaration goes.
#
#   check_symbols.sh --client OBJECT...
#     The objects of a client of the library (the snapdiff tool, src/cli/) call the public
#     API only: no symbol they use is an sdp_ internal, although they link the static
#     archive where those are visible.
set -eu

client_mode() {
    [ $# -ge 1 ] || { echo "check_symbols: --client needs the objects"; exit 2; }
    used=$(nm -u "$@" | awk 'NF == 2 {print $2}' | sort -u)
    count=$(printf '%s\n' "$used" | grep -c '^sd_' || true)
    if [ "$count" -lt 10 ]; then
        echo "check_symbols: the client objects call only $count sd_ functions: are these its objects?"
        exit 1
    fi
    bad=$(printf '%s\n' "$used" | grep '^sdp_\|^SDP_' || true)
    if [ -n "$bad" ]; then
        echo "check_symbols: the client calls private sdp_ functions (make them public sd_, or"
        echo "keep the work in the library):"
        echo "$bad" | sed 's/^/    /'
        exit 1
    fi
    echo "check_symbols: the client ($# objects) calls $count sd_ functions and no sdp_ one"
}

static_mode() {
    lib=$1
    # __odr_asan.NAME: AddressSanitizer's marker for a global NAME (checked as NAME)
    bad=$(nm -g --defined-only "$lib" | awk 'NF == 3 {print $3}' | sed 's/^__odr_asan\.//' |
          grep -v '^sdp\?_' || true)
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
}

# The most functions the stable node may hold (issue 39): past it, a function goes to an
# opt-in tier or becomes private.
STABLE_MAX=250

# "name header" for each sd_ function declared by the lines of each public header itself
# (not by those it includes), all headers but those of one opt-in tier (their #error
# guard) included in one translation unit compiled with the flags given; the names of
# the guarded headers that the flags unlock are included too.
declared_by() {
    : >"$tmp/tu.c"
    for path in "$inc"/snapdiff/*.h; do
        need=$(sed -n 's/^#ifndef \(SNAPDIFF_RENDER_API\|SNAPDIFF_EXPERIMENTAL\)$/\1/p' "$path")
        if [ -n "$need" ]; then
            case " $* " in *" -D$need "*) ;; *) continue ;; esac
        fi
        printf '#include "snapdiff/%s"\n' "$(basename "$path")" >>"$tmp/tu.c"
    done
    "$cc" -E -x c "$tmp/tu.c" -I "$inc" $incs "$@" >"$tmp/pp" 2>"$tmp/err" || {
        echo "check_symbols: the public headers do not preprocess together ($*):"
        head -n 5 "$tmp/err" | sed 's/^/    /'
        return 1
    }
    awk -v dir="$inc/snapdiff/" '
        /^# [0-9]+ "/ {
            f = $3; gsub(/"/, "", f)
            h = index(f, dir) == 1 ? substr(f, length(dir) + 1) : ""
            next
        }
        h != "" {
            s = $0
            while (match(s, /sd_[a-z0-9_]*[ \t]*\(/)) {
                name = substr(s, RSTART, RLENGTH); sub(/[ \t]*\($/, "", name)
                print name, h
                s = substr(s, RSTART + RLENGTH)
            }
        }' "$tmp/pp" | sort -u
}

shared_mode() {
    lib=$1
    inc=${2%/}
    cc=$3
    shift 3
    incs=""
    while [ $# -gt 0 ]; do
        case "$1" in -I*) incs="$incs $1"; shift ;; *) break ;; esac
    done
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    status=0
    soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
    case "$soname" in
        libsnapdiff.so.[0-9]*) ;;
        *) echo "check_symbols: SONAME is '$soname', not libsnapdiff.so.N"; status=1 ;;
    esac
    abi=${soname#libsnapdiff.so.}
    node_stable=LIBSNAPDIFF_$abi
    node_render=LIBSNAPDIFF_RENDER_$abi
    node_experimental=LIBSNAPDIFF_EXPERIMENTAL_$abi

    # Defined dynamic symbols with their node ("name node"), less the nodes themselves
    # (type A).
    nm -D --defined-only "$lib" | awk 'NF == 3 && $2 != "A" {print $3}' |
        sed 's/@@*/ /' | sort -u >"$tmp/exported_nodes"
    cut -d' ' -f1 "$tmp/exported_nodes" | sort -u >"$tmp/exported"
    count=$(wc -l <"$tmp/exported")
    if [ "$count" -lt 20 ]; then
        echo "check_symbols: only $count symbols exported by $lib: is this the library?"
        exit 1
    fi
    bad=$(grep -v '^sd_' "$tmp/exported" || true)
    if [ -n "$bad" ]; then
        echo "check_symbols: $lib exports symbols outside the public sd_ API:"
        echo "$bad" | sed 's/^/    /'
        status=1
    fi
    for tier in stable render experimental; do
        eval "node=\$node_$tier"
        awk -v n="$node" '$1 ~ /^sd_/ && $2 == n {print $1}' "$tmp/exported_nodes" |
            sort -u >"$tmp/node_$tier"
        : >"$tmp/decl_$tier"
    done
    unversioned=$(awk '$1 ~ /^sd_/ && NF == 1 {print $1}' "$tmp/exported_nodes")
    if [ -n "$unversioned" ]; then
        echo "check_symbols: exported without a version node (src/libsnapdiff.map):"
        echo "$unversioned" | sed 's/^/    /'
        status=1
    fi
    other=$(awk -v a="$node_stable" -v b="$node_render" -v c="$node_experimental" \
            '$1 ~ /^sd_/ && NF == 2 && $2 != a && $2 != b && $2 != c' "$tmp/exported_nodes")
    if [ -n "$other" ]; then
        echo "check_symbols: exported in a node of no tier (want $node_stable," \
             "$node_render or $node_experimental):"
        echo "$other" | sed 's/^/    /'
        status=1
    fi

    # Per header: what it declares alone, and what each macro adds to it.
    nh=$(ls "$inc"/snapdiff/*.h | wc -l)
    if [ "$nh" -lt 5 ]; then
        echo "check_symbols: only $nh headers in $inc/snapdiff: is this the include directory?"
        exit 1
    fi
    declared_by >"$tmp/decl_stable" || exit 1
    declared_by -DSNAPDIFF_RENDER_API >"$tmp/with_render" || exit 1
    declared_by -DSNAPDIFF_EXPERIMENTAL >"$tmp/with_experimental" || exit 1
    comm -23 "$tmp/with_render" "$tmp/decl_stable" >"$tmp/decl_render"
    comm -23 "$tmp/with_experimental" "$tmp/decl_stable" >"$tmp/decl_experimental"

    # Known bugs: declared, not defined.
    for name in "$@"; do
        if grep -q "^$name " "$tmp/decl_stable" "$tmp/decl_render" "$tmp/decl_experimental" &&
                ! grep -qx "$name" "$tmp/exported"; then
            echo "check_symbols: note: $name is declared but undefined (known; to be removed)"
            for tier in stable render experimental; do
                grep -v "^$name " "$tmp/decl_$tier" >"$tmp/d2" || true
                mv "$tmp/d2" "$tmp/decl_$tier"
            done
        else
            echo "check_symbols: note: $name is no longer a known problem; drop it from the test"
        fi
    done

    # No function in two tiers.
    for tier in stable render experimental; do
        cut -d' ' -f1 "$tmp/decl_$tier" | sort -u >"$tmp/names_$tier"
    done
    both=$( (comm -12 "$tmp/names_stable" "$tmp/names_render"
             comm -12 "$tmp/names_stable" "$tmp/names_experimental"
             comm -12 "$tmp/names_render" "$tmp/names_experimental") | sort -u)
    if [ -n "$both" ]; then
        echo "check_symbols: declared in two tiers (a function has one):"
        for name in $both; do
            echo "    $name: $(grep -h "^$name " "$tmp/decl_stable" "$tmp/decl_render" \
                "$tmp/decl_experimental" | cut -d' ' -f2 | sort -u | tr '\n' ' ')"
        done
        status=1
    fi

    # Each tier's declarations against its node, both ways.
    for tier in stable render experimental; do
        eval "node=\$node_$tier"
        case $tier in
            stable) how="without any opt-in macro" ;;
            render) how="under SNAPDIFF_RENDER_API" ;;
            *) how="under SNAPDIFF_EXPERIMENTAL" ;;
        esac
        missing=$(sort -u "$tmp/decl_$tier" | while read -r name h; do
            grep -qx "$name" "$tmp/node_$tier" && continue
            where=$(awk -v n="$name" '$1 == n {print $2}' "$tmp/exported_nodes")
            echo "$name ($h): ${where:-not exported (undefined, or hidden by the map)}"
        done)
        if [ -n "$missing" ]; then
            echo "check_symbols: declared $how but not exported in $node" \
                 "(src/libsnapdiff.map lists each opt-in node's names):"
            echo "$missing" | sed 's/^/    /'
            status=1
        fi
        extra=$(comm -23 "$tmp/node_$tier" "$tmp/names_$tier")
        if [ -n "$extra" ]; then
            echo "check_symbols: exported in $node but not declared $how by any header" \
                 "(private names take sdp_):"
            echo "$extra" | sed 's/^/    /'
            status=1
        fi
    done

    # Every function a comment names ("sd_name(") exists.
    grep -ho '\bsd_[a-z0-9_]*[[:space:]]*(' "$inc"/snapdiff/*.h | tr -d '( \t' | sort -u |
        comm -23 - "$tmp/exported" >"$tmp/named"
    for name in "$@"; do grep -vx "$name" "$tmp/named" >"$tmp/n2" || true; mv "$tmp/n2" "$tmp/named"; done
    if [ -s "$tmp/named" ]; then
        echo "check_symbols: named in $inc/snapdiff but not exported:"
        sed 's/^/    /' "$tmp/named"
        status=1
    fi

    n_stable=$(wc -l <"$tmp/node_stable")
    n_render=$(wc -l <"$tmp/node_render")
    n_experimental=$(wc -l <"$tmp/node_experimental")
    if [ "$n_stable" -gt "$STABLE_MAX" ]; then
        echo "check_symbols: $node_stable holds $n_stable functions, more than $STABLE_MAX:" \
             "move some to an opt-in tier or make them private (docs/architecture.md, \"Tiers\")"
        status=1
    fi
    [ "$status" = 0 ] || exit 1
    echo "check_symbols: $lib ($soname) exports $count sd_ functions, exactly the public API:"
    echo "    $node_stable: $n_stable (stable, at most $STABLE_MAX)"
    echo "    $node_render: $n_render (SNAPDIFF_RENDER_API)"
    echo "    $node_experimental: $n_experimental (SNAPDIFF_EXPERIMENTAL)"
}

if [ "${1:-}" = --client ]; then
    shift
    client_mode "$@"
elif [ "${1:-}" = --shared ]; then
    [ $# -ge 4 ] || { echo "usage: check_symbols.sh --shared LIB.so INCLUDE_DIR CC [-IDIR...] [NAME...]"; exit 2; }
    shift
    shared_mode "$@"
else
    [ $# = 1 ] || { echo "usage: check_symbols.sh LIB.a | --shared LIB.so INCLUDE_DIR CC | --client OBJ..."; exit 2; }
    static_mode "$1"
fi
