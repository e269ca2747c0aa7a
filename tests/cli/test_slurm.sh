#!/bin/bash
# test_slurm.sh - contrib/slurm on a real single-node Slurm (issue 30).
#
#   test_slurm.sh SNAPDIFF SOURCE_DIR
#
# Starts munged, slurmctld and slurmd as root with a minimal slurm.conf of its own
# (proctrack/linuxproc, task/none, free ports, every file in a temporary folder, and a
# MaxArraySize of 17 so that the 1001 of a real cluster is handled the same way: several
# snapshots per task), makes 300 rank files from the real snapshots (copies in the
# temporary folder), submits contrib/slurm/submit.sh (the map array, %8 at once, and the
# reduce with --dependency=afterok), and checks that:
#   - every rank was summarized by exactly one task, each task saying it is Slurm's;
#   - the reduce's status, report and JSON equal single-machine `snapdiff check` over the
#     snapshots (the names' .sdsum aside), its JUnit has a test per rank, and the reduce's
#     series form (reduce.sbatch --series, sbatch --wait) equals one machine's `series`;
#   - the daemons are stopped and the folder removed afterwards.
# Skips (exit 77) when not root, when Slurm or munge is not installed (sh tests/deps.sh
# --slurm installs them), when the real snapshots are absent, or when the daemons do not
# start here (a container without what slurmd needs), saying why. About a minute.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
shared=${SNAPDIFF_SHARED:-$src/../shared}
real=$shared/real-snapshots
start=$SECONDS
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; failed=1; }
failed=0

[ "$(id -u)" = 0 ] || skip "the single-node Slurm test starts slurmctld and slurmd as root; run it as root"
for p in munged slurmctld slurmd sbatch scontrol squeue sinfo; do
    command -v "$p" >/dev/null || skip "$p is not installed: sh tests/deps.sh --slurm installs Slurm and munge"
done
[ -d "$real" ] || skip "no real snapshots in $real (set SNAPDIFF_SHARED)"

tmp=$(mktemp -d /tmp/snapdiff-slurm.XXXXXX)
chmod 700 "$tmp"
# Stop what this test started, by the ids it recorded, then remove the folder.
cleanup() {
    if [ -f "$tmp/slurm.conf" ]; then
        SLURM_CONF=$tmp/slurm.conf scancel --quiet --user=root 2>/dev/null || true
    fi
    for pidfile in "$tmp/slurmd.pid" "$tmp/slurmctld.pid" "$tmp/munged.pid"; do
        [ -s "$pidfile" ] || continue
        pid=$(cat "$pidfile")
        kill "$pid" 2>/dev/null || continue
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/munge" "$tmp/ranks" "$tmp/out"
chmod 700 "$tmp/munge"

# munge: a key of our own, its socket in the folder (the system's munged is not touched).
head -c 1024 /dev/urandom >"$tmp/munge/key"
chmod 400 "$tmp/munge/key"
munged --force --key-file="$tmp/munge/key" --socket="$tmp/munge/socket" \
    --pid-file="$tmp/munged.pid" --log-file="$tmp/munge/log" --seed-file="$tmp/munge/seed" \
    >"$tmp/munged.out" 2>&1 || skip "munged does not start here: $(tail -n 2 "$tmp/munged.out" "$tmp/munge/log" 2>/dev/null | tr '\n' ' ')"

# Two free ports.
read -r port1 port2 < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
# 8 CPUs whatever the machine has (config_overrides): the map tasks are short, and
# running 8 at once keeps the test's wall time to the scheduler's own latency.
node="NodeName=$host CPUs=8 RealMemory=1000"
cat >"$tmp/slurm.conf" <<CONF
ClusterName=snapdifftest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port1
SlurmdPort=$port2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MaxArraySize=17
SlurmdParameters=config_overrides
MinJobAge=600
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 ||
    skip "slurmctld does not start here: $(tail -n 3 "$tmp/slurmctld.log" 2>/dev/null | tr '\n' ' ')"
slurmd -f "$SLURM_CONF" -N "$host" >"$tmp/slurmd.out" 2>&1 ||
    skip "slurmd does not start here: $(tail -n 3 "$tmp/slurmd.log" 2>/dev/null | tr '\n' ' ')"
up=""
for _ in $(seq 60); do
    up=$(sinfo -h -o %T 2>/dev/null | head -n 1)
    case $up in idle*|mixed*|allocated*) break ;; esac
    sleep 0.5
done
case $up in
    idle*|mixed*|allocated*) ;;
    *) skip "the Slurm node did not come up ($up): $(tail -n 3 "$tmp/slurmd.log" 2>/dev/null | tr '\n' ' ')" ;;
esac
echo "test_slurm: Slurm $(sinfo -V | awk '{print $2}') up on $host in $((SECONDS - start)) s"

# 300 ranks from the real snapshots under 600 KB (copies, in the temporary folder), and a
# baseline the rank snapshots are checked against.
mapfile -t pool < <(find "$real" -maxdepth 1 -type f \( -name '*.pickle' -o -name '*.pkl' \) -size -600k | sort)
[ "${#pool[@]}" -ge 4 ] || skip "fewer than 4 real snapshots under 600 KB in $real"
for i in $(seq 0 299); do
    cp "${pool[$((i % ${#pool[@]}))]}" "$tmp/ranks/$(printf 'step100_rank%04d.pickle' "$i")"
done
baseline=${pool[0]}
limits=(--max-growth 1MiB)

export SNAPDIFF=$bin
ids=$(sh "$src/contrib/slurm/submit.sh" -k 8 -b "$baseline" "$tmp/ranks" "$tmp/out" "${limits[@]}") ||
    { fail "submit.sh failed: $ids"; exit 1; }
echo "$ids" | sed -n '1,2p'
read -r map reduce < <(echo "$ids" | tail -n 1)
state=""
for _ in $(seq 200); do
    state=$(scontrol show job "$reduce" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n 1)
    case $state in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) break ;; esac
    sleep 0.5
done
echo "test_slurm: reduce job $reduce $state after $((SECONDS - start)) s"
case $state in
    COMPLETED|FAILED) ;;
    *) fail "the reduce job did not finish: $state"
       tail -n 5 "$tmp"/out/logs/* "$tmp/slurmctld.log" 2>/dev/null
       exit 1 ;;
esac

# The map: every rank once, each task told by Slurm which share it is.
tasks=$(ls "$tmp"/out/logs/map-*.out | wc -l)
[ "$tasks" = 17 ] || fail "$tasks map tasks ran, not 17 (MaxArraySize 17, 300 snapshots)"
notes=$(cat "$tmp"/out/logs/map-*.out | grep -c 'note: shard [0-9]*/17 (Slurm: SLURM_ARRAY_TASK_ID=')
[ "$notes" = 17 ] || fail "$notes of 17 map tasks said they took their share from Slurm"
written=$(cat "$tmp"/out/logs/map-*.out | grep -o 'wrote [^:]*\.sdsum' | sort)
[ "$(echo "$written" | wc -l)" = 300 ] || fail "$(echo "$written" | wc -l) summaries written, not 300"
[ -z "$(echo "$written" | uniq -d)" ] || fail "ranks summarized twice: $(echo "$written" | uniq -d | head -n 3)"
[ "$(ls "$tmp/out/summaries" | wc -l)" = 300 ] || fail "$(ls "$tmp/out/summaries" | wc -l) files in summaries/, not 300"

# The reduce equals one machine's check over the snapshots.
single_status=0
"$bin" check "$baseline" "$tmp/ranks" "${limits[@]}" >"$tmp/single.txt" 2>/dev/null || single_status=$?
"$bin" check "$baseline" "$tmp/ranks" "${limits[@]}" --json >"$tmp/single.json" 2>/dev/null
reduce_status=$(cat "$tmp/out/check.status" 2>/dev/null)
[ "$reduce_status" = "$single_status" ] || fail "the reduce's status is '$reduce_status', one machine's $single_status"
[ "$single_status" = 1 ] || fail "one machine's check gives $single_status: the test wants some ranks to fail"
if ! diff <(sed 's/\.pickle\.sdsum/.pickle/g' "$tmp/out/check.txt") "$tmp/single.txt" >"$tmp/diff.txt"; then
    fail "the reduce's report differs from one machine's: $(head -n 6 "$tmp/diff.txt")"
fi
cmp -s <(sed 's/\.pickle\.sdsum/.pickle/g' "$tmp/out/check.json") "$tmp/single.json" ||
    fail "the reduce's JSON differs from one machine's"
junit=$(grep -c '<testcase' "$tmp/out/memory-report.xml" 2>/dev/null || echo 0)
[ "$junit" -ge 300 ] || fail "the JUnit report has $junit test cases, fewer than the 300 ranks"
[ "$state" = FAILED ] || fail "the reduce job is $state: a failed gate should fail the job"

# The reduce's other form (submit.sh without -b): series across the ranks, equal to one
# machine's series over the snapshots (paths and the names' .sdsum aside).
t=$SECONDS
sbatch --wait --quiet --output="$tmp/out/logs/series-%j.out" "$src/contrib/slurm/reduce.sbatch" \
    "$tmp/out" --series --as-ranks || fail "the series reduce job failed: $(cat "$tmp"/out/logs/series-*.out)"
"$bin" series "$tmp/ranks" --as-ranks >"$tmp/single_series.txt" 2>/dev/null
[ "$(grep -c ' rank [0-9]' "$tmp/out/series.txt" 2>/dev/null)" -ge 300 ] ||
    fail "the series reduce wrote no line per rank: $(head -c 300 "$tmp/out/series.txt" 2>/dev/null)"
if ! diff <(sed "s|$tmp/out/summaries/|$tmp/ranks/|; s/\.pickle\.sdsum/.pickle/g" "$tmp/out/series.txt") \
        "$tmp/single_series.txt" >"$tmp/diff_series.txt"; then
    fail "the series reduce differs from one machine's: $(head -n 6 "$tmp/diff_series.txt")"
fi
echo "test_slurm: series reduce job equal to one machine's series ($((SECONDS - t)) s)"
echo "test_slurm: $(tail -n 1 "$tmp/single.txt")"
echo "test_slurm: 300 ranks on 17 tasks, the reduce equal to one machine's check; $((SECONDS - start)) s in all"
exit $failed
