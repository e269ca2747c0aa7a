#!/usr/bin/env python3
"""Write the fixtures of `snapdiff check` and the many-ranks reports (issue 11) with CPython.

    python3 testdata/make_rank_fixtures.py      # rewrites testdata/ranks/

A 4-rank data-parallel job, snapshotted at step 100 and at step 200. Each member is a
CPython-pickled snapshot shaped the way torch writes it (testdata/make_leak_fixtures.py's
Snap: protocol 4, shared frame dicts and stack lists). The archives are written by
Python's zipfile.

Every rank r holds one 64 MiB segment: weights 16 MiB (model.py:10), activations 8 MiB
(train.py:40), optimizer state (r + 1) MiB (optim.py:31), and two free blocks, 8 MiB and
(31 - r) MiB. At step 200 the activations sit at another address (churn, not growth), and
rank 2 alone leaks: a second 8 MiB segment holding a 6 MiB block allocated at
metrics.py:23 update (a site absent at step 100) and 2 MiB free. So, by construction:

  rank 2: allocated 27 MiB -> 33 MiB (+6 MiB, +22.22...% of 27 MiB), largest group growth
          +6 MiB at the new site metrics.py:23, reserved 64 -> 72 MiB, fragmentation index
          1 - 29/37 -> 1 - 29/39 (free blocks 8 + 29 MiB, then + 2 MiB); expected.json
          holds these figures, asserted against the data below
  other ranks: no growth, reserved 64 MiB, index 1 - (31 - r) / (39 - r).

Files (testdata/ranks/):
  old.zip            step100_rank{0..3}.pickle
  new.zip            rank{0..3}/step200.pickle   (other names: paired by rank number)
  new_missing.zip    rank 2's member left out     (a missing member must be reported)
  new_dir/           step200_rank{0..3}.pickle   (a directory of ranks)
  rank2_old.pickle, rank2_new.pickle   rank 2 alone, for the single-file limits
  limits.conf        a limits file (comments, blank lines) that rank 2 breaks
  expected.json      the figures above, for tests/cli/test_check_cli.py
"""
import json
import os
import pickle
import shutil
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
from make_leak_fixtures import Snap  # noqa: E402

OUT = os.path.join(HERE, "ranks")
MiB = 1 << 20
BASE = 0x7F3A_4000_0000
PROJ = "/home/alice/proj"
RANKS = 4
LEAKY = 2
A, I = "active_allocated", "inactive"


def user(rel, name, line):
    return (PROJ + "/" + rel, name, line)


WEIGHTS = [user("model.py", "build", 10), user("train.py", "main", 5)]
ACTS = [user("train.py", "train_step", 40), user("train.py", "main", 7)]
OPTIM = [user("optim.py", "init_state", 31), user("train.py", "main", 6)]
LEAK = [user("metrics.py", "update", 23), user("train.py", "train_step", 44),
        user("train.py", "main", 7)]


def blk(size, frames, state=A):
    return (size, state, frames if state == A else (), size if state == A else 0)


def rank_snap(r, step):
    s = Snap()
    opt = (r + 1) * MiB
    free_b = (31 - r) * MiB
    if step == 100:
        blocks = [blk(16 * MiB, WEIGHTS), blk(8 * MiB, ACTS), blk(opt, OPTIM),
                  blk(8 * MiB, (), I), blk(free_b, (), I)]
    else:   # the activations moved: freed + new, same site, same size
        blocks = [blk(16 * MiB, WEIGHTS), blk(8 * MiB, (), I), blk(opt, OPTIM),
                  blk(8 * MiB, ACTS), blk(free_b, (), I)]
    s.segment(BASE, blocks)
    if step == 200 and r == LEAKY:
        s.segment(BASE + 256 * MiB, [blk(6 * MiB, LEAK), blk(2 * MiB, (), I)])
    return s


def figures(s):
    alloc = res = free = largest = 0
    for seg in s.segments:
        res += seg["total_size"]
        for b in seg["blocks"]:
            if b["state"] == A:
                alloc += b["size"]
            elif b["state"] == I:
                free += b["size"]
                largest = max(largest, b["size"])
    return {"allocated": alloc, "reserved": res,
            "frag_index": 1 - largest / free if free else 0.0}


def write_zip(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, snap in members:
            info = zipfile.ZipInfo(name, date_time=(2024, 6, 1, 0, 0, 0))  # reproducible
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, pickle.dumps(snap.obj(), protocol=4))


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "new_dir"))
    old = [rank_snap(r, 100) for r in range(RANKS)]
    new = [rank_snap(r, 200) for r in range(RANKS)]
    write_zip(os.path.join(OUT, "old.zip"),
              [("step100_rank%d.pickle" % r, old[r]) for r in range(RANKS)])
    write_zip(os.path.join(OUT, "new.zip"),
              [("rank%d/step200.pickle" % r, new[r]) for r in range(RANKS)])
    write_zip(os.path.join(OUT, "new_missing.zip"),
              [("rank%d/step200.pickle" % r, new[r]) for r in range(RANKS) if r != LEAKY])
    for r in range(RANKS):
        new[r].write(os.path.join(OUT, "new_dir", "step200_rank%d.pickle" % r))
    old[LEAKY].write(os.path.join(OUT, "rank2_old.pickle"))
    new[LEAKY].write(os.path.join(OUT, "rank2_new.pickle"))

    # The figures, worked out by hand and checked against the data built above.
    o, n = figures(old[LEAKY]), figures(new[LEAKY])
    assert o["allocated"] == (16 + 8 + 3) * MiB and n["allocated"] == (16 + 8 + 3 + 6) * MiB
    assert o["reserved"] == 64 * MiB and n["reserved"] == 72 * MiB
    assert abs(o["frag_index"] - (1 - 29 / 37)) < 1e-12
    assert abs(n["frag_index"] - (1 - 29 / 39)) < 1e-12
    for r in range(RANKS):
        if r != LEAKY:
            assert figures(old[r])["allocated"] == figures(new[r])["allocated"]
    exp = {
        "ranks": RANKS, "leaky_rank": LEAKY,
        "leak_site": PROJ + "/metrics.py:23 update",
        "leak_file": "metrics.py", "leak_line": 23,
        "growth": 6 * MiB,
        "growth_pct": 100 * 6 / 27,
        "old_allocated": 27 * MiB,
        "new_reserved": 72 * MiB,
        "new_frag_index": 1 - 29 / 39,
        "allocated_new": [figures(s)["allocated"] for s in new],
        "reserved_new": [figures(s)["reserved"] for s in new],
    }
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(exp, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(OUT, "limits.conf"), "w") as f:
        f.write("# snapdiff check limits (testdata/make_rank_fixtures.py)\n"
                "\n"
                "max-growth = 4MiB        # rank 2 grows by 6 MiB\n"
                "max-reserved = 1GiB\n"
                "  max-frag-index=0.9\n")


if __name__ == "__main__":
    main()
