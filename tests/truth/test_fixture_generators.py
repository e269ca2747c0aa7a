#!/usr/bin/env python3
"""Every fixture generator reproduces its fixtures byte for byte (issue 28).

    python3 test_fixture_generators.py SOURCE_DIR

Copies testdata/ and tests/ (the generators import the truth scripts from tests/truth/) into a
temporary folder, runs each testdata/make_*.py there, and compares every file under the
copied testdata/ with the committed one: a generator that fails, writes a different byte,
or leaves a file behind that is not committed fails the test. Exit 0 pass, 1 fail.
"""
import filecmp
import glob
import os
import shutil
import subprocess
import sys
import tempfile


def tree(root):
    out = set()
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for n in names:
            out.add(os.path.relpath(os.path.join(dirpath, n), root))
    return out


def main():
    src = os.path.abspath(sys.argv[1])
    bad = 0
    scripts = sorted(glob.glob(os.path.join(src, "testdata", "make_*.py")))
    if not scripts:
        print("FAIL: no testdata/make_*.py under %s" % src)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        for d in ("testdata", "tests"):
            shutil.copytree(os.path.join(src, d), os.path.join(tmp, d),
                            ignore=shutil.ignore_patterns("__pycache__"))
        td = os.path.join(tmp, "testdata")
        for s in scripts:
            name = os.path.basename(s)
            p = subprocess.run([sys.executable, "-B", os.path.join(td, name)], cwd=tmp,
                               capture_output=True, text=True, timeout=600,
                               env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
            if p.returncode != 0:
                print("FAIL %s: exit %d: %s" % (name, p.returncode, p.stderr.strip()[-400:]))
                bad += 1
            else:
                print("ran  %s" % name)
        want, got = tree(os.path.join(src, "testdata")), tree(td)
        for rel in sorted(got - want):
            print("FAIL testdata/%s: written by a generator, not committed" % rel)
            bad += 1
        for rel in sorted(want & got):
            if not filecmp.cmp(os.path.join(src, "testdata", rel), os.path.join(td, rel),
                               shallow=False):
                print("FAIL testdata/%s: its generator writes different bytes" % rel)
                bad += 1
        print("%d files compared, %d problems" % (len(want & got), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
