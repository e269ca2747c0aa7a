#!/bin/sh
# check_deb.sh - the Debian packages (issue 30), as a user gets them.
#
#   check_deb.sh BUILD_DIR CC FIXTURE VERSION SOVERSION [lintian]
#
# Builds the three packages with `cpack -G DEB` from the build folder into
# BUILD_DIR/deb-test, checks their names, fields and contents (`dpkg-deb -c`: each file in
# its Debian place, nothing in the wrong package), installs all three into a temporary
# root with `dpkg -x`, runs the installed `snapdiff --version` and `snapdiff stats` on a
# fixture, and builds a tiny program against the installed libsnapdiff-dev with nothing
# but its snapdiff.pc (pkg-config's sysroot pointed at the root), which must load the
# installed libsnapdiff0.3 by its SONAME and print the same version.
# With "lintian" last: only lintian over the packages BUILD_DIR/deb-test holds (made by the
# plain run first), failing on any error (E:) and printing the warnings (docs/library.md
# lists them); skipped (exit 77) when lintian is not installed.
set -eu
build=$(cd "$1" && pwd) cc=$2 fixture=$3 version=$4 soversion=$5 mode=${6:-}
work=$build/deb-test
fail() { echo "check_deb: $*"; exit 1; }
arch=$(dpkg --print-architecture)
cli=$work/snapdiff_${version}_$arch.deb
lib=$work/libsnapdiff${soversion}_${version}_$arch.deb
dev=$work/libsnapdiff-dev_${version}_$arch.deb

if [ "$mode" = lintian ]; then
    command -v lintian >/dev/null || { echo "SKIP: lintian is not installed (tests/deps.sh installs it)"; exit 77; }
    for f in "$cli" "$lib" "$dev"; do [ -f "$f" ] || fail "no $f: the test deb_package makes it"; done
    out=$(lintian --tag-display-limit 0 "$cli" "$lib" "$dev" 2>&1 | grep -v 'running with root privileges') || true
    printf '%s\n' "$out"
    if printf '%s\n' "$out" | grep -q '^E: '; then fail "lintian reports errors"; fi
    echo "check_deb: lintian: no error, $(printf '%s\n' "$out" | grep -c '^W: ') warning(s)"
    exit 0
fi

rm -rf "$work"
mkdir -p "$work"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work" >"$work/cpack.log" 2>&1 ||
    fail "cpack -G DEB failed: $(tail -n 5 "$work/cpack.log")"
for f in "$cli" "$lib" "$dev"; do
    [ -f "$f" ] || fail "cpack made no $(basename "$f") (made: $(cd "$work" && ls ./*.deb | tr '\n' ' '))"
done

# Fields: names, the dependencies dpkg-shlibdeps computed, the library's own package.
field() { dpkg-deb -f "$1" "$2"; }
[ "$(field "$cli" Package)" = snapdiff ] || fail "the tool's package is $(field "$cli" Package)"
[ "$(field "$lib" Package)" = "libsnapdiff$soversion" ] || fail "the library's package is $(field "$lib" Package)"
[ "$(field "$dev" Package)" = libsnapdiff-dev ] || fail "the dev package is $(field "$dev" Package)"
for f in "$cli" "$lib" "$dev"; do
    [ "$(field "$f" Version)" = "$version" ] || fail "$(basename "$f"): version $(field "$f" Version)"
    [ "$(field "$f" Architecture)" = "$arch" ] || fail "$(basename "$f"): architecture $(field "$f" Architecture)"
done
for dep in 'libc6 (>=' 'libzip4' 'libjansson4' 'zlib1g'; do
    field "$cli" Depends | grep -qF "$dep" || fail "snapdiff does not depend on $dep: $(field "$cli" Depends)"
    field "$lib" Depends | grep -qF "$dep" || fail "libsnapdiff$soversion does not depend on $dep: $(field "$lib" Depends)"
done
field "$dev" Depends | grep -qF "libsnapdiff$soversion (= $version)" ||
    fail "libsnapdiff-dev does not depend on libsnapdiff$soversion (= $version): $(field "$dev" Depends)"
dpkg-deb --ctrl-tarfile "$lib" | tar -xO ./shlibs 2>/dev/null |
    grep -q "^libsnapdiff $soversion libsnapdiff$soversion" || fail "libsnapdiff$soversion has no shlibs entry"
dpkg-deb --ctrl-tarfile "$lib" | tar -xO ./triggers 2>/dev/null | grep -q 'activate-noawait ldconfig' ||
    fail "libsnapdiff$soversion has no ldconfig trigger"

# Contents: each file where Debian puts it, and in its own package only.
list() { dpkg-deb -c "$1" | awk '{print $6}' | sed 's|^\./|/|'; }
list "$cli" >"$work/cli.list"
list "$lib" >"$work/lib.list"
list "$dev" >"$work/dev.list"
has() { grep -qxE "$2" "$work/$1.list" || fail "$1 package lacks $2"; }
hasnt() { ! grep -qE "$2" "$work/$1.list" || fail "$1 package holds $2: $(grep -E "$2" "$work/$1.list" | head -n 1)"; }
has cli /usr/bin/snapdiff
has cli /usr/share/man/man1/snapdiff.1.gz
has cli /usr/share/bash-completion/completions/snapdiff
has cli /usr/share/zsh/vendor-completions/_snapdiff
has cli /usr/share/fish/vendor_completions.d/snapdiff.fish
has cli /usr/share/doc/snapdiff/copyright
hasnt cli 'libsnapdiff|/include/'
has lib "/usr/lib/(.*/)?libsnapdiff.so.$soversion"
has lib "/usr/lib/(.*/)?libsnapdiff.so.$version"
has lib "/usr/share/doc/libsnapdiff$soversion/copyright"
hasnt lib '/include/|\.a$|\.pc$|libsnapdiff\.so$|/bin/'
has dev /usr/include/snapdiff/snapdiff.h
has dev /usr/include/snapdiff/version.h
has dev "/usr/lib/(.*/)?libsnapdiff.a"
has dev "/usr/lib/(.*/)?libsnapdiff.so"
has dev "/usr/lib/(.*/)?pkgconfig/snapdiff.pc"
has dev /usr/share/doc/libsnapdiff-dev/copyright
hasnt dev "/bin/|libsnapdiff.so.$soversion"

# Installed into a temporary root: the tool runs, the library links by its .pc.
root=$work/root
for f in "$cli" "$lib" "$dev"; do dpkg -x "$f" "$root"; done
libdir=$(dirname "$(find "$root/usr/lib" -name "libsnapdiff.so.$soversion" | head -n 1)")
got=$(LD_LIBRARY_PATH=$libdir "$root/usr/bin/snapdiff" --version) || fail "the installed snapdiff does not run"
[ "$got" = "snapdiff $version" ] || fail "the installed snapdiff --version says '$got'"
"$root/usr/bin/snapdiff" stats --json "$fixture" >"$work/stats.json" ||
    fail "the installed snapdiff stats failed on $fixture"
zcat "$root/usr/share/man/man1/snapdiff.1.gz" | grep -q "^\.TH SNAPDIFF 1 .*\"snapdiff $version\"" ||
    fail "the installed man page does not carry version $version"

pc=$(find "$root/usr/lib" -name snapdiff.pc | head -n 1)
grep -qx 'prefix=/usr' "$pc" || fail "snapdiff.pc names $(head -n 1 "$pc"), not /usr"
cat >"$work/app.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <snapdiff/snapdiff.h>
int main(void)
{
    printf("%s\n", sd_version());
    return strcmp(sd_version(), SD_VERSION) == 0 ? 0 : 1;
}
C
flags=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs snapdiff) ||
    fail "pkg-config cannot read the installed snapdiff.pc"
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Werror -o "$work/app" "$work/app.c" $flags ||
    fail "a program does not build against the installed package with: $flags"
objdump -p "$work/app" | grep -q "NEEDED *libsnapdiff.so.$soversion" ||
    fail "the program does not load libsnapdiff.so.$soversion"
app=$(LD_LIBRARY_PATH=$libdir "$work/app") || fail "the program built against the package failed"
[ "$app" = "$version" ] || fail "the program says '$app', not $version"
LD_LIBRARY_PATH=$libdir ldd "$work/app" | grep -q "libsnapdiff.so.$soversion => $libdir/" ||
    fail "the program does not load the installed library: $(LD_LIBRARY_PATH=$libdir ldd "$work/app" | grep snapdiff)"

echo "check_deb: $(basename "$cli"), $(basename "$lib"), $(basename "$dev"): contents, dependencies ($(field "$cli" Depends)), the installed tool and a program built from the installed snapdiff.pc all right"
