#!/bin/sh
# check_layers.sh - the layers of libsnapdiff call only downwards.
#
# Order: base, pickle, source, logs, model, alloc, analysis, render, cli. A file in
# src/LAYER may include "OTHER/x.h" only when OTHER comes no later than LAYER. Above the
# model nothing sees the pickle reader's value tree (pickle/*.h): the model is the only
# reader of it. logs (training logs) and model (snapshots) are two inputs side by side:
# logs uses base only, and the model does not use logs. alloc, the allocator model, sits
# below the analyses that run it (replay, frag, plan).
# Renderers (src/render) call no analysis entry point (see the end).
# Usage: check_layers.sh SRC_DIR
set -eu
src=${1:?usage: check_layers.sh SRC_DIR}
rank() {
    case $1 in
    base) echo 0 ;; pickle) echo 1 ;; source) echo 2 ;; logs) echo 3 ;; model) echo 4 ;;
    alloc) echo 5 ;; analysis) echo 6 ;; render) echo 7 ;; cli) echo 8 ;; *) echo -1 ;;
    esac
}
bad=0
files=0

# Each public header belongs to the layer that defines its functions: a file may include
# "snapdiff/X.h" only when X's layer is not above its own. A header whose functions live
# in several layers is an error (split it); one that declares only types and constants
# belongs to none and may be included anywhere.
inc_dir=$(cd "$src/.." && pwd)/include
defs=$(mktemp)
trap 'rm -f "$defs"' EXIT
# "LAYER NAME" for every sd_ function defined in src/ (a definition starts in column 0).
for dir in "$src"/*/; do
    layer=$(basename "$dir")
    for f in "$dir"*.c; do
        [ -f "$f" ] || continue
        grep -v ';[[:space:]]*$' "$f" | grep -o '^[a-z][^=;]*[ *]sd_[a-z0-9_]*(\|^sd_[a-z0-9_]*(' |
            sed 's/.*\(sd_[a-z0-9_]*\)($/\1/' | sed "s/^/$layer /"
    done
done | sort -u >"$defs"
ranks=$(mktemp)
trap 'rm -f "$defs" "$ranks"' EXIT
# "HEADER RANK" once per header: the layers defining the functions it declares.
(cd "$inc_dir/snapdiff" && grep -Ho '\bsd_[a-z0-9_]*[[:space:]]*(' *.h) | tr -d '( \t' |
    awk -F: -v defs="$defs" '
    BEGIN { while ((getline line < defs) > 0) { split(line, a, " "); layer[a[2]] = layer[a[2]] " " a[1] } }
    { hs[$1] = 1; if ($2 in layer) { n = split(layer[$2], l, " "); for (k = 1; k <= n; k++) seen[$1 SUBSEP l[k]] = 1 } }
    END {
        nl = split("base pickle source logs model alloc analysis render", order, " ")
        for (h in hs) {
            found = ""; r = -1; cnt = 0
            for (k = 1; k <= nl; k++) if ((h SUBSEP order[k]) in seen) { found = found " " order[k]; r = k - 1; cnt++ }
            if (cnt > 1) { print "check_layers: snapdiff/" h " declares functions of several layers (" substr(found, 2) "): split it" > "/dev/stderr"; r = 99 }
            print h, r
        }
    }' >"$ranks"
for h in "$inc_dir"/snapdiff/*.h; do
    grep -q "^$(basename "$h") " "$ranks" || echo "$(basename "$h") -1" >>"$ranks"
done
grep -q ' 99$' "$ranks" && bad=1
# Every "snapdiff/X.h" include (and a public header's "X.h" include) against X's layer.
{
    for dir in "$src"/*/; do
        r=$(rank "$(basename "$dir")")
        for f in "$dir"*.c "$dir"*.h; do
            [ -f "$f" ] || continue
            sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"snapdiff\/\([a-z_]*\.h\)".*/\1/p' "$f" |
                sed "s|^|$f $r |"
        done
    done
    for f in "$inc_dir"/snapdiff/*.h; do
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(snapdiff\/\)\{0,1\}\([a-z_]*\.h\)".*/\2/p' "$f" |
            sed "s|^|$f H:$(basename "$f") |"
    done
} | awk -v ranks="$ranks" '
    BEGIN { while ((getline line < ranks) > 0) { split(line, a, " "); hr[a[1]] = a[2] } }
    { mine = $2; if (mine ~ /^H:/) mine = hr[substr(mine, 3)]; if (mine == "" || mine < 0 || mine == 99) next
      theirs = ($3 in hr) ? hr[$3] : -1
      if (theirs != 99 && theirs > mine) { print "check_layers: " $1 " includes snapdiff/" $3 ", whose functions are defined in a later layer"; bad = 1 } }
    END { exit bad }' || bad=1

for dir in "$src"/*/; do
    layer=$(basename "$dir")
    mine=$(rank "$layer")
    if [ "$mine" -lt 0 ]; then
        echo "check_layers: $dir is not a known layer (add it to tests/lib/check_layers.sh)"
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
            elif [ "$inc" = pickle ] && [ "$layer" != model ] && [ "$layer" != pickle ]; then
                echo "check_layers: $f ($layer) includes pickle/: only the model reads the value tree"
                bad=1
            elif [ "$layer" = logs ] && [ "$inc" != base ] && [ "$inc" != logs ]; then
                echo "check_layers: $f (logs) includes $inc/: the log reader uses base only"
                bad=1
            elif [ "$layer" = model ] && [ "$inc" = logs ]; then
                echo "check_layers: $f (model) includes logs/: snapshots and logs are separate inputs"
                bad=1
            fi
        done
    done
done
# Renderers only format: no file in src/render runs an analysis. An analysis entry point is
# a constructor defined in src/analysis (sd_*_create), a private function of the analysis
# (sdp_*, but for the _free ones), or one of `runners`, which compute a
# figure over a whole snapshot; the caller computes them before and passes the result (the
# report: report_data.h). `allowed` lists FILE:FUNCTION exceptions still to be moved.
runners='sd_peak_live_series sd_rank_spread_of sd_rank_spread_of_totals sd_groups_oom_of_snapshot
    sd_attrib_site sd_stats_total'
# stats_*.c format sd_stats_total, which only adds the devices' counters up.
allowed='stats_json.c:sd_stats_total stats_text.c:sd_stats_total'
# The analysis's private functions (sdp_, defined in src/analysis) compute too: the stack
# merge, the folded stacks. The folded and pprof outputs draw stacks merged before
# (profile.h, sd_stacks_create), the report's icicle too (report_data.h,
# sd_report_data_stacks).
private=$(for f in "$src"/analysis/*.c; do
    grep -v ';[[:space:]]*$' "$f" | grep -v '^static' | grep -o '^[a-z][^=;]*[ *]sdp_[a-z0-9_]*(' |
        sed 's/.*\(sdp_[a-z0-9_]*\)($/\1/' | grep -v '_free$' || true
done | sort -u)
entries=$( (awk '$1 == "analysis" && $2 ~ /_create$/ { print $2 }' "$defs"; printf '%s\n' $runners $private) | sort -u)
for f in "$src"/render/*.c; do
    [ -f "$f" ] || continue
    for fn in $entries; do
        grep -q "\b$fn(" "$f" || continue
        case " $allowed " in *" $(basename "$f"):$fn "*) continue ;; esac
        echo "check_layers: $f (render) calls $fn, an analysis entry point: renderers only format; compute it before rendering and pass the result"
        bad=1
    done
done

if [ "$files" -lt 20 ]; then
    echo "check_layers: only $files files under $src: is this the source tree?"
    exit 1
fi
[ "$bad" = 0 ] && echo "check_layers: $files files, every include goes downwards"
exit "$bad"
