#!/bin/sh
# cmake --install gives a user everything libsnapdiff promises: install the build into a
# prefix inside the build tree, then build the example program of docs/library.md (the
# first C block under its install heading) against what was installed with nothing but
# `pkg-config --cflags --libs snapdiff` (so the .pc file and the headers are complete),
# run it on a fixture and compare its figures with the installed tool's.
# The static library is linked the same way (`pkg-config --static`: Requires.private,
# Libs.private). Finally a DESTDIR install of the devel component alone checks the
# components and that snapdiff.pc names the real prefix, not the staging area.
#
# Usage: check_install.sh CMAKE PKG_CONFIG CC PYTHON3 BUILD_DIR DOC FIXTURE [CFLAGS...]
# (CFLAGS: what the build itself was compiled with that a user would need too, e.g. the
# sanitizer flags of an ASan build.)
set -eu
cmake=$1 pkgconfig=$2 cc=$3 python3=$4 build=$5 readme=$6 fixture=$7
shift 7
work=$build/install-test
rm -rf "$work"
mkdir -p "$work"
prefix=$(cd "$work" && pwd)/prefix
fail() { echo "check_install: $*"; exit 1; }

# The example: the first ```c block after the install heading of docs/library.md.
app=$work/app.c
awk '/^#+ Install/ {sec = 1} sec && /^```c$/ {code = 1; next}
     code && /^```$/ {exit} code {print}' "$readme" >"$app"
grep -q 'int main' "$app" || fail "no \`\`\`c example under an 'Install' heading in $readme"

"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" ||
    fail "cmake --install failed: $(cat "$work/install.log")"

libdir=$(dirname "$(find "$prefix" -name snapdiff.pc | head -n 1)")
[ -n "$libdir" ] || fail "no snapdiff.pc installed"
libdir=$(dirname "$libdir")
for f in bin/snapdiff share/man/man1/snapdiff.1 share/bash-completion/completions/snapdiff \
         share/zsh/site-functions/_snapdiff share/fish/vendor_completions.d/snapdiff.fish \
         include/snapdiff/snapdiff.h; do
    [ -f "$prefix/$f" ] || fail "not installed: $f"
done
for f in libsnapdiff.a libsnapdiff.so; do
    [ -e "$libdir/$f" ] || fail "not installed: $libdir/$f"
done
soname=$(objdump -p "$libdir/libsnapdiff.so" | awk '$1 == "SONAME" {print $2}')
[ -f "$libdir/$soname" ] || fail "the SONAME $soname is not installed beside the library"
soname_abi=${soname#libsnapdiff.so.}

export PKG_CONFIG_PATH="$libdir/pkgconfig"
grep -qx "prefix=$prefix" "$libdir/pkgconfig/snapdiff.pc" ||
    fail "snapdiff.pc does not name the install prefix: $(head -n 1 "$libdir/pkgconfig/snapdiff.pc")"

# Shared: the way docs/library.md says.
# shellcheck disable=SC2046
"$cc" "$@" -std=c11 -pedantic -Wall -Wextra -Werror -o "$work/app" "$app" \
    $("$pkgconfig" --cflags --libs snapdiff) || fail "cannot build against the shared library"
objdump -p "$work/app" | grep -q "NEEDED *$soname" || fail "app does not load $soname"
LD_LIBRARY_PATH=$libdir "$work/app" "$fixture" >"$work/app.out" ||
    fail "the app linked to the shared library failed"

# Static: libsnapdiff.a by path, every other flag from pkg-config --static. The whole
# archive, so that every dependency of every member must be named, not only the ones
# this small program happens to pull in.
static_libs=$("$pkgconfig" --static --libs snapdiff | sed 's/-lsnapdiff\b//')
# shellcheck disable=SC2086
"$cc" "$@" -std=c11 -pedantic -Wall -Wextra -Werror -o "$work/app_static" "$app" \
    $("$pkgconfig" --cflags snapdiff) \
    -Wl,--whole-archive "$libdir/libsnapdiff.a" -Wl,--no-whole-archive $static_libs ||
    fail "cannot build against the static library with pkg-config --static"
"$work/app_static" "$fixture" >"$work/app_static.out" ||
    fail "the app linked to the static library failed"
cmp -s "$work/app.out" "$work/app_static.out" ||
    fail "static and shared disagree: $(cat "$work/app.out") / $(cat "$work/app_static.out")"

# The example uses the stable API alone, so it binds to the stable version node only
# (docs/architecture.md, "Tiers").
nodes=$(objdump -T "$work/app" | awk '/ sd_/' | grep -o 'LIBSNAPDIFF_[A-Z_]*[0-9.]*' | sort -u)
[ "$nodes" = "LIBSNAPDIFF_$soname_abi" ] ||
    fail "the stable example binds to the nodes '$nodes', not LIBSNAPDIFF_$soname_abi alone"

# A C++ program: every installed header inside extern "C" (with both opt-in tiers, so
# that each header declares all it has), one version at compile and at run time, linked
# through pkg-config (issue 22); sd_format_bytes is of the render tier, so the program
# binds to that tier's node too.
cxx=$(command -v g++ || command -v c++ || true)
[ -n "$cxx" ] || fail "no C++ compiler (g++): tests/deps.sh installs it"
{
    echo "#define SNAPDIFF_RENDER_API"
    echo "#define SNAPDIFF_EXPERIMENTAL"
    for h in "$prefix"/include/snapdiff/*.h; do echo "#include <snapdiff/$(basename "$h")>"; done
    cat <<'CXX'
#include <cstdio>
#include <cstring>
int main()
{
    sd_error err;
    sd_error_clear(&err);
    char buf[32];
    sd_format_bytes(1536, buf, sizeof buf);
    std::printf("%s %s %d\n", sd_version(), buf, SD_VERSION_NUMBER);
    return std::strcmp(sd_version(), SD_VERSION) == 0 ? 0 : 1;
}
CXX
} >"$work/app.cpp"
"$cxx" "$@" -std=c++11 -Wall -Wextra -Werror -o "$work/app_cxx" "$work/app.cpp" \
    $("$pkgconfig" --cflags --libs snapdiff) || fail "a C++ program does not build against it"
objdump -T "$work/app_cxx" | grep -q "LIBSNAPDIFF_RENDER_$soname_abi.*sd_format_bytes" ||
    fail "the C++ program does not bind sd_format_bytes to LIBSNAPDIFF_RENDER_$soname_abi"
LD_LIBRARY_PATH=$libdir "$work/app_cxx" >"$work/app_cxx.out" ||
    fail "the C++ program failed: $(cat "$work/app_cxx.out")"
pcver=$("$pkgconfig" --modversion snapdiff)
[ "$(cat "$work/app_cxx.out")" = "$pcver 1.5 KiB $(echo "$pcver" | awk -F. '{print $1 * 10000 + $2 * 100 + $3}')" ] ||
    fail "C++ program says '$(cat "$work/app_cxx.out")', snapdiff.pc says $pcver"
[ "$("$prefix/bin/snapdiff" --version)" = "snapdiff $pcver" ] ||
    fail "snapdiff --version says '$("$prefix/bin/snapdiff" --version)', snapdiff.pc $pcver"
thver=$(awk '$1 == ".TH" {gsub(/"/, ""); print; exit}' "$prefix"/share/man/man1/snapdiff.1 2>/dev/null || true)
case "$thver" in
    *"snapdiff $pcver"*) ;;
    *) fail "the man page's title line ($thver) does not carry version $pcver" ;;
esac

# The figures are the installed tool's.
"$prefix/bin/snapdiff" stats --json "$fixture" >"$work/stats.json"
expect=$("$python3" -c '
import json, sys
t = json.load(open(sys.argv[1]))["total"]
print("%d bytes reserved, %d allocated in %d blocks"
      % (t["reserved_bytes"], t["allocated_bytes"], t["blocks"]))' "$work/stats.json")
got=$(cat "$work/app.out")
[ "$got" = "$expect" ] || fail "the app printed '$got', snapdiff stats says '$expect'"

# A packager's staged install of the devel component: headers, libraries and the .pc
# only, and the .pc names the final prefix.
DESTDIR=$work/stage "$cmake" --install "$build" --prefix /opt/snapdiff --component devel \
    >"$work/stage.log" || fail "DESTDIR install failed: $(cat "$work/stage.log")"
[ ! -e "$work/stage/opt/snapdiff/bin/snapdiff" ] || fail "the devel component holds the binary"
[ -f "$work/stage/opt/snapdiff/include/snapdiff/snapshot.h" ] || fail "devel lacks the headers"
pc=$(find "$work/stage" -name snapdiff.pc)
[ -n "$pc" ] && grep -qx 'prefix=/opt/snapdiff' "$pc" ||
    fail "staged snapdiff.pc does not name /opt/snapdiff"

echo "check_install: installed into $prefix; app (shared and static): $(cat "$work/app.out")"
