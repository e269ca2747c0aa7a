#!/usr/bin/env python3
"""`--format pprof` against independent truth.

    test_pprof.py SNAPDIFF PART      PART: fixtures | go | real

  fixtures  the profile decoded here (gzip + a small protobuf reader, no pprof code) holds,
            per stack (noise frames dropped, innermost first), exactly the live bytes and
            blocks CPython's pickle finds (one file), or new minus old of the stacks that
            grew (two files); refused on a terminal; -o writes the file
  go        `go tool pprof -raw` reads the profiles and finds the same samples and totals;
            `-top` runs (skipped, exit 77, where Go's pprof is not installed)
  real      every snapshot in ../shared/real-snapshots (SNAPDIFF_SHARED): live profile vs
            CPython; and for pairs of them, the site that grew most by the profile's own
            frames (tests/truth/truth_diff.py's rule) is the JSON report's top group
"""
import gzip
import json
import os
import pty
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
import clitest  # noqa: E402
import truth_diff  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(ROOT, "testdata", "example")
LEAK = os.path.join(ROOT, "testdata", "leak")
T = clitest.Suite(rc=None, text=False, timeout=600)
check, run = T.check, T.run


# ---- protobuf, just enough for profile.proto ------------------------------------------------

def varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, i


def fields(buf):
    """Yield (field number, wire type, value) of one message; LEN values as bytes."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 2:
            n, i = varint(buf, i)
            v = buf[i:i + n]
            i += n
        else:
            raise ValueError("wire type %d not used by profile.proto" % wire)
        yield field, wire, v


def packed(v, wire):
    if wire == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def decode(data):
    """{"types": [(type, unit)], "samples": {frames: [values]}, "comment"}; frames are
    (filename, line, name) innermost first."""
    raw = gzip.decompress(data)
    strings, types, samples, locs, funcs, comments = [], [], [], {}, {}, []
    default = 0
    for f, w, v in fields(raw):
        if f == 6:
            strings.append(v.decode("utf-8", "surrogateescape"))
        elif f == 1:
            d = dict((ff, vv) for ff, _w, vv in fields(v))
            types.append((d.get(1, 0), d.get(2, 0)))
        elif f == 2:
            ids, vals = [], []
            for ff, ww, vv in fields(v):
                if ff == 1:
                    ids += packed(vv, ww)
                elif ff == 2:
                    vals += [signed(x) for x in packed(vv, ww)]
            samples.append((ids, vals))
        elif f == 4:
            loc_id, lines = 0, []
            for ff, _w, vv in fields(v):
                if ff == 1:
                    loc_id = vv
                elif ff == 4:
                    d = dict((a, b) for a, _x, b in fields(vv))
                    lines.append((d.get(1, 0), signed(d.get(2, 0))))
            locs[loc_id] = lines
        elif f == 5:
            d = dict((ff, vv) for ff, _w, vv in fields(v))
            funcs[d.get(1, 0)] = (d.get(2, 0), d.get(4, 0))
        elif f == 13:
            comments.append(v)
        elif f == 14:
            default = v
    out = {"types": [(strings[t], strings[u]) for t, u in types],
           "default": strings[default], "comment": [strings[c] for c in comments],
           "samples": {}}
    for ids, vals in samples:
        frames = []
        for lid in ids:
            check(len(locs[lid]) == 1, "pprof: one line per location")
            fid, line = locs[lid][0]
            name, filename = funcs[fid]
            frames.append((strings[filename], line, strings[name]))
        key = tuple(frames)
        check(key not in out["samples"], "pprof: one sample per stack %r" % (key[:2],))
        out["samples"][key] = vals
    return out


# ---- truth ----------------------------------------------------------------------------------

def stacks(snap):
    """{frames without native noise: [bytes, blocks]} of the live blocks."""
    out = {}
    for _d, _a, size, _r, _st, frames in truth_diff.live(snap):
        # autograd nodes and ATen ops by their labels, as every view names them
        key = tuple((f[0], f[1], (truth_diff.native_label(f) or (f[2],))[0])
                    for f in frames if not truth_diff.is_native_noise(f))
        if not key:
            key = (("", 0, truth_diff.NO_STACK),)
        v = out.setdefault(key, [0, 0])
        v[0] += size
        v[1] += 1
    return out


def growth(old, new):
    a, b = stacks(old), stacks(new)
    out = {}
    for k, (nb, nn) in b.items():
        ob, on = a.get(k, (0, 0))
        if nb - ob > 0:
            out[k] = [nb - ob, nn - on]
    return out


def profile(snapdiff, files, tmp):
    path = os.path.join(tmp, "p.pb.gz")
    r = run(["diff", "--format", "pprof", "-o", path] + files)
    check(r.returncode == 0, "pprof %s: exit %d %s" % (files, r.returncode, r.stderr[-300:]))
    with open(path, "rb") as f:
        return path, f.read()


def compare(got, want, what):
    check(set(got) == set(want), "%s: %d stacks, CPython %d (missing %r, extra %r)" % (
        what, len(got), len(want), list(set(want) - set(got))[:1], list(set(got) - set(want))[:1]))
    for k in set(got) & set(want):
        check(got[k] == want[k], "%s: stack %r: %r, CPython %r" % (what, k[:1], got[k], want[k]))


def part_fixtures(snapdiff):
    pairs = [(os.path.join(EXAMPLE, "old.pickle"), os.path.join(EXAMPLE, "new.pickle"))]
    for name in ("churn", "move", "multidev", "legacy"):
        pairs.append((os.path.join(LEAK, name + "_old.pickle"),
                      os.path.join(LEAK, name + "_new.pickle")))
    # autograd nodes and ATen ops on the engine's thread, named by their labels (issue 28)
    td = os.path.dirname(LEAK)
    pairs.append((os.path.join(td, "native", "infer.pickle"),
                  os.path.join(td, "native", "train.pickle")))
    pairs.append((os.path.join(td, "oom", "labels_old.pickle"),
                  os.path.join(td, "oom", "labels_new.pickle")))
    with tempfile.TemporaryDirectory() as tmp:
        for old, new in pairs:
            so, sn = truth_diff.load(old), truth_diff.load(new)
            _p, data = profile(snapdiff, [new], tmp)
            d = decode(data)
            check(d["types"] == [("space", "bytes"), ("objects", "count")],
                  "pprof: sample types %r" % d["types"])
            check(d["default"] == "space", "pprof: default sample type %r" % d["default"])
            check(any("live" in c for c in d["comment"]), "pprof: one file says live memory")
            compare(d["samples"], stacks(sn), "live profile of " + new)
            _p, data = profile(snapdiff, [old, new], tmp)
            d = decode(data)
            check(any("growth" in c for c in d["comment"]), "pprof: two files say growth")
            compare(d["samples"], growth(so, sn), "growth profile %s -> %s" % (old, new))
        # Binary output is refused on a terminal, and allowed through a redirect.
        new = pairs[0][1]
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(snapdiff, [snapdiff, "--format", "pprof", new])
        out = b""
        try:
            while True:
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                out += chunk
        except OSError:
            pass
        _pid, status = os.waitpid(pid, 0)
        check(os.WEXITSTATUS(status) == 2, "pprof on a terminal: exit %d" % os.WEXITSTATUS(status))
        check(b"-o FILE" in out and b"\x1f\x8b" not in out, "pprof on a terminal: refused %r"
              % out[:200])
        r = run(["--format", "pprof", new])
        check(r.returncode == 0 and r.stdout[:2] == b"\x1f\x8b", "pprof to a pipe: gzip")
        r = run(["--format", "pprof", "-o", os.path.join(tmp, "no", "such"), new])
        check(r.returncode == 2 and b"cannot write" in r.stderr, "pprof -o bad dir: exit 2")


def go_raw(path):
    """Samples of `go tool pprof -raw`: {location ids: values}, and locations."""
    r = subprocess.run(["go", "tool", "pprof", "-raw", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600,
                       env=dict(os.environ, PPROF_TMPDIR=os.path.dirname(path)))
    check(r.returncode == 0, "go tool pprof -raw: exit %d %s" % (r.returncode, r.stderr[-300:]))
    samples, section = [], None
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section == "Samples:" and ":" in line and not line.startswith("space"):
            vals, ids = line.split(":", 1)
            samples.append(([int(x) for x in vals.split()], ids.split()))
    return samples


def part_go(snapdiff):
    if not shutil.which("go"):
        clitest.skip("go is not installed (Debian golang-go; tests/deps.sh installs it)")
    with tempfile.TemporaryDirectory() as tmp:
        for files in ([os.path.join(EXAMPLE, "new.pickle")],
                      [os.path.join(EXAMPLE, "old.pickle"), os.path.join(EXAMPLE, "new.pickle")],
                      [os.path.join(LEAK, "multidev_old.pickle"),
                       os.path.join(LEAK, "multidev_new.pickle")]):
            path, data = profile(snapdiff, files, tmp)
            mine = decode(data)["samples"]
            theirs = go_raw(path)
            check(len(theirs) == len(mine), "go pprof: %d samples, decoded %d" % (
                len(theirs), len(mine)))
            check(sorted(v for v, _ids in theirs) == sorted(mine.values()),
                  "go pprof: sample values differ from the decoded ones for %s" % files)
            top = subprocess.run(["go", "tool", "pprof", "-top", "-sample_index=space", path],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600,
                                 env=dict(os.environ, PPROF_TMPDIR=tmp))
            check(top.returncode == 0 and b"Type: space" in top.stdout,
                  "go tool pprof -top: %s" % top.stderr[-200:])


def as_symbol(f):
    """A frame the profile names by its label ("autograd X", "aten::x") as a C++ symbol
    that truth_diff.native_label reads back to that label."""
    fn, line, name = f
    if name == "autograd AccumulateGrad (parameter gradients)":
        return fn, line, "torch::autograd::AccumulateGrad::apply()"
    if name.startswith("autograd "):
        return fn, line, "torch::autograd::generated::%s::apply()" % name[9:]
    if name.startswith("aten::"):
        return fn, line, "at::_ops::%s::call()" % name[6:]
    return f


def sites(samples):
    """{site key: bytes} by tests/truth/truth_diff.py's rule over the profile's frames."""
    rules = truth_diff.Rules((), ())
    by_site = {}
    for frames, vals in samples.items():
        if frames == (("", 0, truth_diff.NO_STACK),):
            key = truth_diff.NO_STACK
        else:
            key = truth_diff.group_key(rules, "site", 0, [as_symbol(f) for f in frames])
        by_site[key] = by_site.get(key, 0) + vals[0]
    return by_site


def top_site(samples):
    """The site that grew most, by the profile's own frames."""
    return max(sites(samples).items(), key=lambda kv: (kv[1], kv[0]))


def part_real(snapdiff):
    real = clitest.real_snapshots(ROOT)
    files = sorted(os.path.join(real, f) for f in os.listdir(real)
                   if f.endswith((".pickle", ".pkl")))
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            _p, data = profile(snapdiff, [path], tmp)
            compare(decode(data)["samples"], stacks(truth_diff.load(path)), "live " + path)
        # Pairs: each file against the next. Where exactly one group grew most, the profile
        # names the same site as the JSON report.
        n_top = 0
        for old, new in zip(files, files[1:]):
            _p, data = profile(snapdiff, [old, new], tmp)
            samples = decode(data)["samples"]
            r = run(["diff", "--json", old, new])
            check(r.returncode == 0, "diff --json %s %s: exit %d" % (old, new, r.returncode))
            # groups are per (key, device); the profile's stacks are not split by device
            per_key = {}
            for g in json.loads(r.stdout)["groups"]:
                per_key[g["key"]] = per_key.get(g["key"], 0) + g["delta_bytes"]
            grew = sorted(({"key": k, "delta_bytes": v} for k, v in per_key.items() if v > 0),
                          key=lambda g: (-g["delta_bytes"], g["key"]))
            if not grew:
                check(not samples, "%s -> %s: nothing grew, yet the profile has samples" % (
                    old, new))
                continue
            key, _v = top_site(samples)
            by_site = sites(samples)
            for g in grew:   # the growing stacks hold at least the group's net growth
                check(by_site.get(g["key"], 0) >= g["delta_bytes"], "%s -> %s: %r grew %d, "
                      "its stacks in the profile %d" % (os.path.basename(old),
                      os.path.basename(new), g["key"], g["delta_bytes"], by_site.get(g["key"], 0)))
            # Where no group both grew and shrank inside, the two rank sites alike.
            if all(by_site.get(g["key"], 0) == g["delta_bytes"] for g in grew) and \
                    sum(by_site.values()) == sum(g["delta_bytes"] for g in grew) and \
                    (len(grew) == 1 or grew[1]["delta_bytes"] < grew[0]["delta_bytes"]):
                check(key == grew[0]["key"], "%s -> %s: profile's top site %r, JSON's %r" % (
                    os.path.basename(old), os.path.basename(new), key, grew[0]["key"]))
                n_top += 1
        print("real: %d live profiles, %d growth profiles, %d top sites compared" % (
            len(files), len(files) - 1, n_top))


def main():
    snapdiff, part = os.path.abspath(sys.argv[1]), sys.argv[2]
    T.bin = snapdiff
    {"fixtures": part_fixtures, "go": part_go, "real": part_real}[part](snapdiff)
    sys.exit(T.finish())


if __name__ == "__main__":
    main()
