#!/usr/bin/env python3
"""Write the fixtures of "code that moved is not growth" (issue 36) with CPython's pickle.

    python3 testdata/make_moved_fixtures.py      # rewrites testdata/moved/

One program, snapshot-shaped as torch writes it (torch.cuda.memory._snapshot(): segments
with their blocks and each block's frames, innermost first), three times:

  lines_old.pickle   the program as it was.
  lines_new.pickle   the same live blocks, after an edit near the top of model.py: every
                     frame of model.py sits one line lower (forward 44 -> 45, 47 -> 48,
                     52 -> 53, the callers too); train.py and metrics.py did not change.
                     Its live memory is OLD's: every site is a moved site with delta 0.
  lines_grow.pickle  lines_new plus a real growth: model.py:48 forward (was 47) holds one
                     more 512 MiB block, and a site that OLD never had (train.py:77
                     train_step, 2 x 64 MiB).

The figures each diff must give are recomputed by tests/truth/truth_moved.py, which pairs
the sites on its own; this script only checks its hand arithmetic (below) against the data.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_leak_fixtures as L  # noqa: E402

MiB, GiB = L.MiB, L.GiB
MODULE_CALL = L.MODULE_CALL


def model_frame(name, line, shift):
    return L.user("model.py", name, line + shift)


def stacks(shift):
    """The program's stacks; model.py's lines moved by `shift`."""
    train = [L.user("train.py", "train_step", 86)] + L.MAIN
    fwd_call = [model_frame("forward", 30, shift)] + MODULE_CALL + train
    linear = [L.torch_("nn/modules/linear.py", "forward", 116)] + MODULE_CALL
    return {
        # two sites of one function with one stack shape: paired in line order
        "q": L.cpp_stack("mm", linear + [model_frame("forward", 44, shift)] + MODULE_CALL
                         + train),
        "k": L.cpp_stack("mm", linear + [model_frame("forward", 47, shift)] + MODULE_CALL
                         + train),
        "attn": L.cpp_stack("bmm", [model_frame("attend", 52, shift)] + fwd_call),
        "params": L.cpp_stack("empty", [L.torch_("nn/modules/linear.py", "__init__", 98),
                                        model_frame("__init__", 18, shift),
                                        L.user("train.py", "main", 111)] + L.MAIN[1:]),
        "leak": L.S_LEAK,            # metrics.py: not moved
        "grad": L.cpp_stack("add", [L.user("train.py", "train_step", 77)] + L.MAIN),
    }


# Site (OLD line -> NEW line)   OLD            lines_new      lines_grow
# model.py forward 44 -> 45     2 x 1 GiB      same           same
# model.py forward 47 -> 48     1 x 1 GiB      same           + 1 x 512 MiB
# model.py attend 52 -> 53      3 x 256 MiB    same           same
# model.py __init__ 18 -> 19    4 x 64 MiB     same           same
# metrics.py update 23          5 x 2 MiB      same           same
# train.py train_step 77        -              -              2 x 64 MiB (a new site)
# OLD live = 3 GiB + 768 MiB + 256 MiB + 10 MiB = 4,305,453,056 bytes
# lines_grow - OLD = 512 MiB + 128 MiB = 671,088,640 bytes
OLD_LIVE = 3 * GiB + 768 * MiB + 256 * MiB + 10 * MiB
GROW_DELTA = 512 * MiB + 128 * MiB


def program(shift, grow):
    st = stacks(shift)
    s = L.Snap()
    addr = L.BASE
    big = [L.blk(1 * GiB, st["q"]), L.blk(1 * GiB, st["q"]), L.blk(1 * GiB, st["k"])]
    if grow:
        big.append(L.blk(512 * MiB, st["k"]))
    addr += s.segment(addr, L.fill(big, 4 * GiB))
    addr += s.segment(addr, L.fill([L.blk(256 * MiB, st["attn"])] * 3, 800 * MiB))
    extra = [L.blk(64 * MiB, st["grad"])] * 2 if grow else []
    addr += s.segment(addr, L.fill([L.blk(64 * MiB, st["params"])] * 4 + extra, 400 * MiB))
    s.segment(addr, L.fill([L.blk(2 * MiB, st["leak"])] * 5, 20 * MiB))
    return s


def main():
    out = os.path.join(HERE, "moved")
    os.makedirs(out, exist_ok=True)
    old, new, grow = program(0, False), program(1, False), program(1, True)
    assert L.allocated(old) == OLD_LIVE == L.allocated(new), L.allocated(old)
    assert L.allocated(grow) - L.allocated(old) == GROW_DELTA
    old.write(os.path.join(out, "lines_old.pickle"))
    new.write(os.path.join(out, "lines_new.pickle"))
    grow.write(os.path.join(out, "lines_grow.pickle"))


if __name__ == "__main__":
    main()
