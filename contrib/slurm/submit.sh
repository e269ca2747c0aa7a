#!/bin/sh
# Submit the map (a job array of `snapdiff summarize --shard auto`) and the reduce
# (`snapdiff check` or `series` over the summaries, once every map task succeeded).
#
#   contrib/slurm/submit.sh [-k K] [-b BASELINE] INPUTS OUT [OPTIONS...]
#
#   INPUTS    a file of snapshot paths, one a line, or a directory of snapshots (listed
#             once, here, into OUT/inputs.txt)
#   OUT       the job's folder: OUT/summaries/ (one NAME.sdsum per snapshot), OUT/logs/,
#             and the reduce's files (reduce.sbatch)
#   -b FILE   the baseline (a snapshot, a summary, or a directory or archive of ranks) that
#             `check` holds every rank against; without it, the reduce is `series`
#   -k K      map tasks running at once (the array's %K; default 64)
#   OPTIONS   passed to check (limits: --max-growth 256MiB, --config FILE, ...) or series
#
# Tasks: one per snapshot up to the cluster's MaxArraySize (default 1001, read from
# `scontrol show config`); beyond, each task takes several snapshots (4,096 ranks on
# 1,001 tasks: 4 or 5 each). Other sbatch options come from the environment
# (SBATCH_PARTITION, SBATCH_ACCOUNT, SBATCH_TIMELIMIT, ...). SNAPDIFF names the binary
# the jobs run (default: snapdiff on PATH); it is passed on with the environment.
# Prints the two job ids.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
at_once=64 baseline=""
while getopts k:b: o; do
    case $o in
        k) at_once=$OPTARG ;;
        b) baseline=$OPTARG ;;
        *) echo "usage: submit.sh [-k K] [-b BASELINE] INPUTS OUT [OPTIONS...]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "usage: submit.sh [-k K] [-b BASELINE] INPUTS OUT [OPTIONS...]" >&2; exit 2; }
inputs=$1 out=$2
shift 2
mkdir -p "$out/summaries" "$out/logs"
out=$(cd "$out" && pwd)
list=$out/inputs.txt
if [ -d "$inputs" ]; then
    find "$(cd "$inputs" && pwd)" -maxdepth 1 -type f ! -name '.*' | sort >"$list"
elif [ "$(cd "$(dirname "$inputs")" && pwd)/$(basename "$inputs")" != "$list" ]; then
    cp "$inputs" "$list"
fi
n=$(grep -cv '^\(#.*\)\?$' "$list" || true)
[ "$n" -gt 0 ] || { echo "submit.sh: no snapshot in $inputs" >&2; exit 2; }

max=$(scontrol show config | awk -F= '/^MaxArraySize/ {gsub(/ /, "", $2); print $2}')
max=${max:-1001}
tasks=$((n < max ? n : max))

map=$(sbatch --parsable --array="0-$((tasks - 1))%$at_once" \
      --output="$out/logs/map-%A_%a.out" "$here/map.sbatch" "$list" "$out/summaries")
map=${map%%;*}
if [ -n "$baseline" ]; then
    reduce_args="$baseline"
else
    reduce_args=--series
fi
reduce=$(sbatch --parsable --dependency="afterok:$map" --kill-on-invalid-dep=yes \
         --output="$out/logs/reduce-%j.out" "$here/reduce.sbatch" "$out" "$reduce_args" "$@")
reduce=${reduce%%;*}
echo "submit.sh: map job $map: $n snapshots on $tasks tasks (MaxArraySize $max, $at_once at once)"
echo "submit.sh: reduce job $reduce: after every map task succeeded; results in $out"
echo "$map $reduce"
