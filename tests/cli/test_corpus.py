#!/usr/bin/env python3
"""Corpus test: every snapshot, in every container snapdiff claims to read, gives the
figures CPython computes from the same bytes.

    python3 test_corpus.py SNAPDIFF [--quick]

--quick (tests/run.sh's corpus_stats_dump): a real snapshot is checked as written and as a
torch.save zip (and `dump` only up to 512 KiB), a fixture in every container; without it (corpus_stats_dump_full, label
full) every file in every container. Re-pickling the large real snapshots with six
protocols in CPython was most of the suite's time.

Inputs: every file in ../shared/real-snapshots (skipped with a message when absent) and
every fixture in testdata/. Each is read as written, then re-pickled with protocols 0-5,
gzipped, put in a zip beside other files (ARCHIVE.zip:member), and saved as a
torch.save-style zip (protocol 2, stored, 64-byte aligned, data descriptors, sizes only in
the central directory, ZIP64 end record). For each: `snapdiff stats --json` must equal
truth_stats.py's figures exactly, per device and in total; for the file as written,
`snapdiff dump` must equal json.dumps of the loaded object (tuples as lists).
"""
import concurrent.futures
import gzip
import io
import json
import os
import pickle
import struct
import sys
import tempfile
import zipfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_stats  # noqa: E402

T = clitest.Suite(rc=None, text=False, timeout=300)
check, run = T.check, T.run


def torch_save_zip(obj, stem):
    """Bytes of a zip laid out the way torch.save (miniz) writes one."""
    payload = [(f"{stem}/data.pkl", pickle.dumps(obj, protocol=2)),
               (f"{stem}/byteorder", b"little"),
               (f"{stem}/version", b"3\n"),
               (f"{stem}/.data/serialization_id", b"0123456789")]
    out, central = bytearray(), bytearray()
    for name, data in payload:
        nb = name.encode()
        offset = len(out)
        header_len = 30 + len(nb)
        pad = (-(offset + header_len + 4)) % 64
        extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        crc = zlib.crc32(data)
        # local header: bit 3 set, crc and sizes zero (they follow in a data descriptor)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0x08, 0, 0, 0x21, 0, 0, 0,
                           len(nb), len(extra)) + nb + extra
        out += data
        out += struct.pack("<IIII", 0x08074B50, crc, len(data), len(data))
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0x08, 0, 0, 0x21,
                               crc, len(data), len(data), len(nb), 0, 0, 0, 0, 0,
                               offset) + nb
    cd_offset = len(out)
    out += central
    z64_offset = len(out)
    n = len(payload)
    out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, len(central),
                       cd_offset)
    out += struct.pack("<IIQI", 0x07064B50, 0, z64_offset, 1)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(central), cd_offset, 0)
    return bytes(out)


QUICK_REAL = ("as written", "torch.save zip")
QUICK_DUMP_MAX = 512 << 10   # --quick: `dump` compared for real snapshots up to this size
                             # (a 4 MiB one dumps 126 MiB of JSON: 17 s of CPython)


def variants(path, obj, raw, tmp, wanted=lambda label: True):
    """(label, spec) pairs to check, written under tmp (only those wanted)."""
    base = os.path.basename(path)
    yield "as written", path
    for proto in range(0, 6):
        if not wanted(f"protocol {proto}"):
            continue
        p = os.path.join(tmp, f"{base}.p{proto}")
        with open(p, "wb") as f:
            pickle.dump(obj, f, protocol=proto)
        yield f"protocol {proto}", p
    if not wanted("gzip"):
        if wanted("torch.save zip"):
            t = os.path.join(tmp, base + ".pt")
            with open(t, "wb") as f:
                f.write(torch_save_zip(obj, "snapshot"))
            yield "torch.save zip", t
        return
    g = os.path.join(tmp, base + ".gz")
    with open(g, "wb") as f:
        f.write(gzip.compress(raw, 6))
    yield "gzip", g
    z = os.path.join(tmp, base + ".ranks.zip")
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("README.txt", "not a snapshot")
        zf.writestr("rank0/" + base, raw)
        zf.writestr("rank1/other.pickle", pickle.dumps([], protocol=4))
    yield "zip member", z + ":rank0/" + base
    t = os.path.join(tmp, base + ".pt")
    with open(t, "wb") as f:
        f.write(torch_save_zip(obj, "snapshot"))
    yield "torch.save zip", t


def strip(stats_json):
    keep = ("devices", "total", "host", "skip_actions")
    return {k: stats_json[k] for k in keep}


def check_stats(label, spec, want):
    r = run(["stats", "--json", spec])
    if r.returncode != 0:
        return f"{label}: exit {r.returncode}: {r.stderr.decode(errors='replace').strip()}"
    got = strip(json.loads(r.stdout))
    if got != want:
        for d_got, d_want in zip(got["devices"] + [got["total"]], want["devices"] + [want["total"]]):
            for k in d_want:
                if d_got.get(k) != d_want[k]:
                    return f"{label}: {k}: snapdiff {d_got.get(k)} python {d_want[k]}"
        for k in ("host", "skip_actions"):
            if got[k] != want[k]:
                return f"{label}: {k}: snapdiff {got[k]} python {want[k]}"
        return f"{label}: device lists differ"
    return None


def to_json_semantics(obj):
    return json.loads(json.dumps(obj))


def check_dump(path, obj):
    r = run(["dump", path])
    if r.returncode != 0:
        return f"dump: exit {r.returncode}: {r.stderr.decode(errors='replace').strip()}"
    if json.loads(r.stdout) != to_json_semantics(obj):
        return "dump: output differs from json.dumps of the loaded object"
    return None


def check_file(path, quick):
    """The variants of one file, one check each (from a worker thread): (name, checks,
    failed). quick: a real snapshot only as written and as a torch.save zip."""
    name = os.path.relpath(path, ROOT)
    with open(path, "rb") as f:
        raw = f.read()
    obj = truth_stats.PlainUnpickler(io.BytesIO(raw)).load()
    want = truth_stats.stats(obj)
    checked = failed = 0
    real = not os.path.abspath(path).startswith(os.path.join(ROOT, "testdata") + os.sep)
    wanted = (lambda label: label in QUICK_REAL) if quick and real else (lambda label: True)
    with tempfile.TemporaryDirectory() as tmp:
        for label, spec in variants(path, obj, raw, tmp, wanted):
            err = check_stats(label, spec, want)
            checked += 1
            failed += not check(err is None, "%s: %s" % (name, err))
    if not (quick and real and len(raw) > QUICK_DUMP_MAX):
        err = check_dump(path, obj)
        checked += 1
        failed += not check(err is None, "%s: %s" % (name, err))
    return name, checked, failed


def main():
    T.bin = os.path.abspath(sys.argv[1])
    quick = "--quick" in sys.argv
    files = []
    real = clitest.real_snapshots(ROOT, skip_if_absent=False)
    if real:
        files += sorted(os.path.join(real, f) for f in os.listdir(real)
                        if f.endswith((".pickle", ".pkl")))
    else:
        print("SKIP real snapshots: %s is absent (set SNAPDIFF_SHARED); fixtures only"
              % os.path.join(clitest.shared_dir(ROOT), "real-snapshots"))
    td = os.path.join(ROOT, "testdata")
    for dirpath, _, names in os.walk(td):
        files += sorted(os.path.join(dirpath, n) for n in names if n.endswith(".pickle"))
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for name, checked, failed in pool.map(lambda p: check_file(p, quick), files):
            if failed:
                print(f"FAIL {name} ({checked} checks, {failed} failed)")
            else:
                print(f"ok   {name} ({checked} checks)")
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
