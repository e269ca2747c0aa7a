#!/usr/bin/env python3
"""Write the fixtures of the job folders (issue 27) with CPython.

    python3 testdata/make_job_fixtures.py      # rewrites testdata/jobs/

The snapshot folders four frameworks write, each file a small CPython-pickled snapshot
shaped as torch writes it (make_leak_fixtures.py's Snap), named as the framework names it:

  torchtitan/memory_snapshot/iteration_{10,20,30}/rank{0,1}_memory_snapshot.pickle and
    iteration_30_exit/rank1_memory_snapshot.pickle
      torchtitan tools/profiling.py, maybe_enable_memory_snapshot: MemoryProfiler.step
      writes iteration_{step}/rank{rank}_memory_snapshot.pickle every profile_freq steps,
      and iteration_{step_num - 1}_exit/ when called at a torch.OutOfMemoryError.
  megatron_lm/oom_rank-{0,1}_snapshot.pickle
      Megatron-LM pretrain_gpt.py, model_provider: with --record-memory-history the OOM
      observer dumps oom_rank-{rank}_{args.memory_snapshot_path}.
  megatron_bridge/snapshot_{0,1}.pickle, snapshot_oom_rank-1.pickle
      Megatron-Bridge memory_snapshot_path (training utils): the rank before the
      extension of memory_snapshot_path (default snapshot.pickle); an OOM observer's dump
      tagged _oom_rank-{rank}.
  verl/step{1,2,3}/torch_memory_rank{0,1}_pid{4100+rank}.pickle
      verl's torch_memory profiler (global_profiler.save_path): a folder per step, a file
      per rank named torch_memory_rank{rank}_pid{pid}.pickle (docs: "Organizing Collection
      Results").
  custom/run7-s{100,200}-r{0,1}.pkl     a layout no preset knows, for --name-pattern

(A truncated rank file, as a job killed while dumping leaves, is cut from these by
tests/cli/test_job_cli.py at run time: every committed fixture reads.)

Every rank holds a 32 MiB segment with 16 MiB of weights (model.py:10); rank 1 also leaks
2 MiB per step (metrics.py:23) in a segment of its own, so its allocated grows by 2 MiB a
step; rank 0 stays flat. An OOM dump holds rank 1's last step plus a 20 MiB block at
train.py:40 the allocator had just handed out. tests/cli/test_job_cli.py reads every figure
back from these pickles with CPython.
"""
import os
import pickle
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
from make_leak_fixtures import Snap  # noqa: E402

OUT = os.path.join(HERE, "jobs")
MiB = 1 << 20
BASE = 0x7F3A_4000_0000
PROJ = "/home/alice/proj"
A, I = "active_allocated", "inactive"

WEIGHTS = [(PROJ + "/model.py", "build", 10), (PROJ + "/train.py", "main", 5)]
LEAK = [(PROJ + "/metrics.py", "update", 23), (PROJ + "/train.py", "main", 7)]
ACTS = [(PROJ + "/train.py", "train_step", 40), (PROJ + "/train.py", "main", 7)]


def blk(size, frames, state=A):
    return (size, state, frames if state == A else (), size if state == A else 0)


def snap(rank, k, oom=False):
    """rank's snapshot after k profiled steps (k = 1, 2, 3...)."""
    s = Snap()
    s.segment(BASE, [blk(16 * MiB, WEIGHTS), blk(16 * MiB, (), I)])
    if rank == 1:
        s.segment(BASE + 256 * MiB, [blk(2 * MiB * k, LEAK), blk(2 * MiB, (), I)])
    if oom:
        s.segment(BASE + 512 * MiB, [blk(20 * MiB, ACTS)])
    return s


def write(path, s):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    s.write(path)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    t = os.path.join(OUT, "torchtitan", "memory_snapshot")
    for k, step in enumerate((10, 20, 30), 1):
        for r in (0, 1):
            write(os.path.join(t, "iteration_%d" % step, "rank%d_memory_snapshot.pickle" % r),
                  snap(r, k))
    write(os.path.join(t, "iteration_30_exit", "rank1_memory_snapshot.pickle"),
          snap(1, 3, oom=True))
    for r in (0, 1):
        write(os.path.join(OUT, "megatron_lm", "oom_rank-%d_snapshot.pickle" % r),
              snap(r, 1, oom=True))
        write(os.path.join(OUT, "megatron_bridge", "snapshot_%d.pickle" % r), snap(r, 1))
        for step in (1, 2, 3):
            write(os.path.join(OUT, "verl", "step%d" % step,
                               "torch_memory_rank%d_pid%d.pickle" % (r, 4100 + r)),
                  snap(r, step))
        for k, step in enumerate((100, 200), 1):
            write(os.path.join(OUT, "custom", "run7-s%d-r%d.pkl" % (step, r)), snap(r, k))
    write(os.path.join(OUT, "megatron_bridge", "snapshot_oom_rank-1.pickle"),
          snap(1, 1, oom=True))


if __name__ == "__main__":
    main()
