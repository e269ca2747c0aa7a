#!/bin/sh
# Install what snapdiff needs to build and test, and only what is missing (Debian 12, root).
#   sh tests/deps.sh            the build and the suite
#   sh tests/deps.sh --slurm    also Debian's Slurm and munge, for the single-node Slurm
#                               test of contrib/slurm (tests/cli/test_slurm.sh, in the full run)
set -eu
extra=""
case ${1:-} in
    --slurm) extra="slurm-wlm munge" ;;
    "") ;;
    *) echo "usage: sh tests/deps.sh [--slurm]" >&2; exit 2 ;;
esac
need=""
for pkg in build-essential cmake pkg-config zlib1g-dev libzip-dev libmsgpack-dev \
           libjansson-dev check python3 clang libclang-rt-14-dev valgrind jq groff-base \
           bash-completion zsh fish golang-go chromium lintian python3-yaml strace $extra; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
        need="$need $pkg"
done
# Node.js and npm for the official MCP clients (tests/cli/test_mcp_clients.py installs its
# pinned packages with npm); a Node.js installed otherwise is kept.
command -v npm >/dev/null 2>&1 || need="$need nodejs npm"
if [ -n "$need" ]; then
    echo "tests/deps.sh: installing:$need"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $need >/dev/null
fi
