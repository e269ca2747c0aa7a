#!/bin/sh
# check_layers.sh - the layers of libsnapdiff call only downwards.
#
# Order: base, pickle, source, model, analysis, render, cli. A file in src/LAYER may
# include "OTHER/x.h" only when OTHER comes no later than LAYER. Above the model nothing
# sees the pickle reader's value tree (pickle/*.h): the model is the only reader of it.
# Usage: check_layers.sh SRC_DIR
set -eu
src=${1:?usage: check_layers.sh SRC_DIR}
rank() {
    case $1 in
    base) echo 0 ;; pickle) echo 1 ;; source) echo 2 ;; model) echo 3 ;;
    analysis) echo 4 ;; render) echo 5 ;; cli) echo 6 ;; *) echo -1 ;;
    esac
}
bad=0
files=0
for dir in "$src"/*/; do
    layer=$(basename "$dir")
    mine=$(rank "$layer")
    if [ "$mine" -lt 0 ]; then
        echo "check_layers: $dir is not a known layer (add it to tests/check_layers.sh)"
        bad=1
        continue
    fi
    for f in "$dir"*.c "$dir"*.h; do
        [ -f "$f" ] || continue
        files=$((files + 1))
        # "layer/file.h" includes only; <...> and same-folder "file.h" are not layer edges
        # the CLI is a client of the public API: "snapdiff/x.h" and its own headers only
        if [ "$layer" = cli ]; then
            for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z]*\)\/[^"]*".*/\1/p' "$f"); do
                if [ "$inc" != snapdiff ]; then
                    echo "check_layers: $f (cli) includes $inc/: the CLI uses public headers only"
                    bad=1
                fi
            done
            if grep -n '\bsdp_\|\bSDP_' "$f" >/dev/null; then
                echo "check_layers: $f (cli) names a private sdp_ function: $(grep -o '\bsdp_[a-z0-9_]*\|\bSDP_[A-Z0-9_]*' "$f" | head -n 1)"
                bad=1
            fi
            continue
        fi
        for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z]*\)\/[^"]*".*/\1/p' "$f"); do
            [ "$inc" = snapdiff ] && continue
            theirs=$(rank "$inc")
            if [ "$theirs" -lt 0 ] || [ "$theirs" -gt "$mine" ]; then
                echo "check_layers: $f ($layer) includes $inc/: only earlier layers may be called"
                bad=1
            elif [ "$inc" = pickle ] && [ "$mine" -gt 3 ]; then
                echo "check_layers: $f ($layer) includes pickle/: only the model reads the value tree"
                bad=1
            fi
        done
    done
done
if [ "$files" -lt 20 ]; then
    echo "check_layers: only $files files under $src: is this the source tree?"
    exit 1
fi
[ "$bad" = 0 ] && echo "check_layers: $files files, every include goes downwards"
exit "$bad"
