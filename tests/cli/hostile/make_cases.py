#!/usr/bin/env python3
"""Generate the hostile-input corpus for snapdiff into a directory.

    make_cases.py OUTDIR [--group G ...] [--quick]

Writes one file (or directory, FIFO, ...) per case under OUTDIR and OUTDIR/cases.json, the
manifest that run_cases.py reads. Nothing binary is committed: every case is made here,
at test time, by CPython's pickle/zlib/struct from a few lines of code, so each one says
what it is.

Each manifest entry:
  name     unique id                      group   pickle|refuse|limits|source|zip|model|trunc|flip
  spec     what is passed to snapdiff (relative to OUTDIR; may be "x.zip:member", "-")
  stdin    file (relative to OUTDIR) fed on standard input, or null (then /dev/null)
  args     extra snapdiff arguments (e.g. ["--max-memory", "64MiB"])
  expect   for `stats`:
           "error"   exit 2 and exactly one stderr line "snapdiff: NAME: ...", naming `names`
           "warn"    exit 0 with a warning line matching msg_re, or exit 2 as for "error"
                     (documented as recoverable)
           "ok"      exit 0 (notes and warnings allowed)
           "any"     exit 0 or 2; if 2, as for "error" (random mutations)
  dump     the same for `dump` (which writes the raw pickle as JSON, with no model: a valid
           pickle that is not a snapshot is fine there, and model warnings do not apply)
  need     "offset"  the error line carries ": offset N: "
           "member"  the error line names the archive member ("spec:member" or "dir/member")
           null      the error line names the spec
  member   the member name for need="member"
  msg_re   regex the error/warning line must match (case-insensitive), or null
  marker   a path that must NOT exist after the run (code execution check), or null
  timeout  wall-time bound per command in seconds      slow  skip under valgrind sampling
  max_rss_mb  peak-RSS bound for cases run with a small --max-memory (not under ASan)
  max_stdout  bound on stdout bytes (dump of DAGs and cycles must be bounded)
  note     what the case is
"""
import argparse
import gzip
import io
import json
import os
import pickle
import random
import stat
import struct
import sys
import zipfile
import zlib

# ----------------------------------------------------------------------------------------
# pickle opcode helpers (bytes), for the cases CPython's pickler cannot write

PROTO4 = b"\x80\x04"


def binint(v):
    return b"J" + struct.pack("<i", v)


def short_str(s):
    b = s.encode() if isinstance(s, str) else s
    assert len(b) < 256
    return b"\x8c" + bytes([len(b)]) + b


def binunicode(b):
    return b"X" + struct.pack("<I", len(b)) + b


def long1(v):
    n = (v.bit_length() + 8) // 8 if v else 0
    return b"\x8a" + bytes([n]) + (v.to_bytes(n, "little", signed=True) if n else b"")


# ----------------------------------------------------------------------------------------
# snapshot-shaped data with torch's object sharing (key strings shared by the interpreter's
# literal interning; frame dicts and stack lists shared explicitly)

def frame(name, filename, line):
    return {"name": name, "filename": filename, "line": line}


def small_snapshot():
    """A 2.1+ style snapshot: one segment, two blocks, two trace entries, settings."""
    f1 = frame("forward", "/src/model.py", 42)
    f2 = frame("<module>", "/src/train.py", 7)
    stack = [f1, f2]
    empty = []
    base = 0x7F3A40000000
    seg = {
        "device": 0, "address": base, "total_size": 2097152, "allocated_size": 1048576,
        "active_size": 1048576, "requested_size": 1000000, "stream": 0,
        "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
        "frames": stack,
        "blocks": [
            {"address": base, "size": 1048576, "requested_size": 1000000,
             "state": "active_allocated", "frames": stack},
            {"address": base + 1048576, "size": 1048576, "requested_size": 0,
             "state": "inactive", "frames": empty},
        ],
    }
    traces = [[
        {"action": "segment_alloc", "addr": base, "size": 2097152, "stream": 0,
         "time_us": 1698326576864190, "frames": stack},
        {"action": "alloc", "addr": base, "size": 1000000, "stream": 0,
         "time_us": 1698326576864200, "frames": stack},
    ]]
    return {"segments": [seg], "device_traces": traces,
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                   "garbage_collection_threshold": 0.0,
                                   "expandable_segments": False}}


def snapshot_with(**top):
    s = small_snapshot()
    s.update(top)
    return s


def legacy_snapshot(blocks, total_size=None, address=0x7F0000000000):
    """torch 1.13 bare-list form: no block addresses (prefix sums), optional history."""
    if total_size is None:
        total_size = sum(b.get("size", 0) for b in blocks if isinstance(b.get("size"), int))
    return [{"device": 0, "address": address, "total_size": total_size,
             "allocated_size": 0, "active_size": 0, "stream": 0, "segment_type": "large",
             "blocks": blocks}]


def dumps(obj, proto=4):
    return pickle.dumps(obj, protocol=proto)


def body(obj):
    """The opcodes that build obj, to splice into a hand-made pickle: protocol 2 (no
    FRAME), without PROTO and STOP. Its BINPUT indices start at 0, so the surrounding
    bytes must not memoize anything before it."""
    b = pickle.dumps(obj, protocol=2)
    assert b[:2] == b"\x80\x02" and b[-1:] == b"."
    return b[2:-1]


# ----------------------------------------------------------------------------------------
# zlib helpers: zeros compressed cheaply, and crc32 of many zeros without touching them

def _gf2_times(mat, vec):
    s = 0
    i = 0
    while vec:
        if vec & 1:
            s ^= mat[i]
        vec >>= 1
        i += 1
    return s


def _gf2_square(mat):
    return [_gf2_times(mat, mat[n]) for n in range(32)]


def crc32_combine(crc1, crc2, len2):
    """zlib's crc32_combine: crc of A+B from crc(A), crc(B), len(B)."""
    if len2 <= 0:
        return crc1
    odd = [0xEDB88320] + [1 << (n - 1) for n in range(1, 32)]
    even = _gf2_square(odd)
    odd = _gf2_square(even)
    while True:
        even = _gf2_square(odd)
        if len2 & 1:
            crc1 = _gf2_times(even, crc1)
        len2 >>= 1
        if not len2:
            break
        odd = _gf2_square(even)
        if len2 & 1:
            crc1 = _gf2_times(odd, crc1)
        len2 >>= 1
        if not len2:
            break
    return crc1 ^ crc2


def crc32_zeros(n, chunk=1 << 20):
    """crc32 of n zero bytes (n a multiple of chunk), by doubling."""
    assert n % chunk == 0
    c1 = zlib.crc32(bytes(chunk))
    crc, have = 0, 0
    block_crc, block_len = c1, chunk
    k = n // chunk
    while k:
        if k & 1:
            crc = crc32_combine(crc, block_crc, block_len) if have else block_crc
            have += block_len
        block_crc = crc32_combine(block_crc, block_crc, block_len)
        block_len *= 2
        k >>= 1
    return crc


def deflate_zeros(total, chunk=1 << 20):
    """Raw deflate of `total` zero bytes, built from one repeated full-flush block so that
    10 GiB takes milliseconds to make (the output is ~1/1000 of the data: deflate's limit)."""
    assert total % chunk == 0 and total >= 3 * chunk
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    z = bytes(chunk)
    first = c.compress(z) + c.flush(zlib.Z_FULL_FLUSH)
    second = c.compress(z) + c.flush(zlib.Z_FULL_FLUSH)
    third = c.compress(z) + c.flush(zlib.Z_FULL_FLUSH)
    assert second == third, "full-flush blocks are not periodic"
    tail = c.flush(zlib.Z_FINISH)
    return first + second * (total // chunk - 1) + tail


def gzip_wrap(raw_deflate, crc, size):
    hdr = b"\x1f\x8b\x08\x00" + b"\x00\x00\x00\x00" + b"\x00\x03"
    return hdr + raw_deflate + struct.pack("<II", crc & 0xFFFFFFFF, size & 0xFFFFFFFF)


def raw_deflate(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


# ----------------------------------------------------------------------------------------
# a zip writer that lets a case lie in any field

class ZEntry:
    def __init__(self, name, data, method=0, comp=None, flags=0, crc=None, usize=None,
                 csize=None, offset=None, local_name=None, extra=b"", cextra=b""):
        self.name = name.encode() if isinstance(name, str) else name
        self.data = data                         # uncompressed bytes (for crc/usize)
        self.method = method
        self.comp = comp if comp is not None else (raw_deflate(data) if method == 8 else data)
        self.flags = flags
        self.crc = zlib.crc32(data) if crc is None else crc
        self.usize = len(data) if usize is None else usize
        self.csize = len(self.comp) if csize is None else csize
        self.offset = offset                     # central directory's local-header offset
        self.local_name = self.name if local_name is None else local_name
        self.extra = extra
        self.cextra = cextra


def zip_build(entries, shared_local=False, zip64_eocd=False):
    """Local headers + data, central directory, EOCD. With shared_local, only the first
    entry's local header/data is written and every central entry points at it."""
    out = bytearray()
    offsets = []
    for i, e in enumerate(entries):
        if shared_local and i > 0:
            offsets.append(offsets[0])
            continue
        offsets.append(len(out))
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, e.flags, e.method, 0, 0x21,
                           e.crc & 0xFFFFFFFF, e.csize & 0xFFFFFFFF, e.usize & 0xFFFFFFFF,
                           len(e.local_name), len(e.extra))
        out += e.local_name + e.extra + e.comp
    cd_start = len(out)
    for e, off in zip(entries, offsets):
        off = e.offset if e.offset is not None else off
        out += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, 20, e.flags, e.method,
                           0, 0x21, e.crc & 0xFFFFFFFF, e.csize & 0xFFFFFFFF,
                           e.usize & 0xFFFFFFFF, len(e.name), len(e.cextra), 0, 0, 0,
                           0o100644 << 16, off & 0xFFFFFFFF)
        out += e.name + e.cextra
    cd_size = len(out) - cd_start
    n = len(entries)
    if zip64_eocd:
        z64 = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, cd_size, cd_start)
        out += struct.pack("<IIQI", 0x07064B50, 0, z64, 1)
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                           0xFFFFFFFF, 0)
    else:
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, cd_size, cd_start, 0)
    return bytes(out)


def torch_save_zip(pickle_bytes, prefix="x", with_data=True):
    """What torch.save writes (stored members under one folder), via zipfile."""
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", zipfile.ZIP_STORED) as z:
        if with_data:
            z.writestr(prefix + "/data.pkl", pickle_bytes)
        z.writestr(prefix + "/byteorder", "little")
        z.writestr(prefix + "/version", "3\n")
    return bio.getvalue()


# ----------------------------------------------------------------------------------------
# the corpus

class Corpus:
    def __init__(self, outdir, groups):
        self.outdir = outdir
        self.groups = groups
        self.cases = []
        self.names = set()

    def want(self, group):
        return not self.groups or group in self.groups

    def add(self, name, group, spec, expect, need=None, member=None, msg_re=None, args=(),
            marker=None, timeout=10, max_stdout=64 << 20, slow=False, stdin=None, note="",
            commands=("stats", "dump"), names=None, dump=None, max_rss_mb=None):
        assert name not in self.names, name
        if dump is None:
            dump = "any" if group == "model" else expect
        if need is None and group == "model":
            need = "offset"     # model errors name where the bad value sits
        assert expect in ("error", "warn", "ok", "any") and dump in ("error", "ok", "any")
        self.names.add(name)
        self.cases.append({"name": name, "group": group, "spec": spec, "expect": expect,
                           "dump": dump, "max_rss_mb": max_rss_mb,
                           "need": need, "member": member, "msg_re": msg_re,
                           "args": list(args), "marker": marker, "timeout": timeout,
                           "max_stdout": max_stdout, "slow": slow, "stdin": stdin,
                           "commands": list(commands), "note": note,
                           "names": names if names is not None else spec})

    def write(self, rel, data):
        path = os.path.join(self.outdir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return rel

    def file(self, name, group, data, expect="error", ext=".pickle", **kw):
        """A case whose input is one file holding `data`. expand=True: a DAG of shared
        objects that `dump` may write out (JSON has no sharing) up to a bound that grows
        with the input, as cmd_dump.c's budget does, before it refuses."""
        if kw.pop("expand", False):
            kw["max_stdout"] = (256 << 20) + 300 * len(data)
        rel = self.write(os.path.join(group, name + ext), data)
        self.add(name, group, rel, expect, **kw)


# -- pickle reader ------------------------------------------------------------------------

def gen_pickle(c):
    g = "pickle"
    E = dict(expect="error", need="offset")
    c.file("memo_get_unset", g, PROTO4 + b"}\x94h\x05.", note="BINGET 5, never PUT", **E)
    c.file("memo_get_unset_long", g, PROTO4 + b"j\xff\xff\xff\xff.",
           note="LONG_BINGET 2^32-1 on an empty memo", **E)
    c.file("memo_get_unset_text", g, b"(lp0\ng99\n.", note="protocol-0 GET of unset 99", **E)
    c.file("memo_get_before_put", g, PROTO4 + b"]h\x00\x94.",
           note="BINGET 0 before MEMOIZE 0", **E)
    c.file("mark_unmatched", g, PROTO4 + b"(}.", expect="error", need="offset",
           msg_re="snapshot", dump="ok",
           note="MARK never closed below the result (CPython accepts it: {})")
    c.file("mark_unmatched_top", g, PROTO4 + b"}(.",
           note="STOP right after a MARK (CPython: unexpected MARK found)", **E)
    c.file("mark_unmatched_empty", g, PROTO4 + b"(.", note="MARK then STOP", **E)
    c.file("stop_empty", g, PROTO4 + b".", note="STOP with an empty stack", **E)
    c.file("stop_only", g, b".", note="a lone STOP", **E)
    c.file("setitems_on_list", g, PROTO4 + b"](K\x01K\x02u.", note="SETITEMS on a list", **E)
    c.file("setitem_on_list", g, PROTO4 + b"]K\x01K\x02s.", note="SETITEM on a list", **E)
    c.file("appends_on_dict", g, PROTO4 + b"}(K\x01e.", note="APPENDS on a dict", **E)
    c.file("append_on_tuple", g, PROTO4 + b")K\x01a.", note="APPEND on a tuple", **E)
    c.file("append_on_int", g, PROTO4 + b"K\x01K\x02a.", note="APPEND on an int", **E)
    c.file("append_empty_stack", g, PROTO4 + b"a.", note="APPEND with nothing", **E)
    c.file("setitems_odd", g, PROTO4 + b"}(K\x01u.", note="SETITEMS with 1 item", **E)
    c.file("dict_odd", g, b"(K\x01d.", note="DICT with an odd count", **E)
    c.file("tuple2_underflow", g, PROTO4 + b"K\x01\x86.", note="TUPLE2 with one value", **E)
    c.file("tuple3_across_mark", g, PROTO4 + b"K\x01K\x02(K\x03\x87.",
           note="TUPLE3 reaching below a MARK", **E)
    c.file("pop_empty", g, PROTO4 + b"0.", note="POP on an empty stack", **E)
    c.file("pop_mark_unmatched", g, PROTO4 + b"}1.", note="POP_MARK without MARK", **E)
    c.file("dup_empty", g, PROTO4 + b"2.", note="DUP on an empty stack", **E)
    c.file("memoize_empty", g, PROTO4 + b"\x94.", note="MEMOIZE with an empty stack", **E)
    c.file("binput_after_mark", g, PROTO4 + b"}(q\x00.", note="BINPUT of a MARK", **E)
    c.file("no_stop", g, PROTO4 + b"}", note="input ends without STOP", **E)
    c.file("unknown_opcode_ff", g, PROTO4 + b"}\xff.", note="opcode 0xff", **E)
    c.file("unknown_opcode_00", g, b"\x00", note="opcode 0x00", **E)
    c.file("unknown_opcode_99", g, PROTO4 + b"\x99.", note="opcode 0x99", **E)
    c.file("protocol_6", g, b"\x80\x06}\x94.", note="PROTO 6", **E)
    c.file("protocol_255", g, b"\x80\xff}.", note="PROTO 255", **E)
    c.file("proto_truncated", g, b"\x80", note="PROTO without its byte", **E)
    frame_len = struct.pack("<Q", 1000)
    c.file("frame_overrun", g, PROTO4 + b"\x95" + frame_len + b"}\x94.",
           note="FRAME claiming 1000 bytes, 3 remain", **E)
    c.file("frame_2e64", g, PROTO4 + b"\x95" + b"\xff" * 8 + b"}.",
           note="FRAME claiming 2^64-1 bytes", **E)
    c.file("frame_truncated", g, PROTO4 + b"\x95\x01\x00", note="FRAME with 2 of 8 length bytes",
           **E)
    big = struct.pack("<Q", 1 << 60)
    c.file("binunicode8_2e60", g, PROTO4 + b"\x8d" + big + b"abc.",
           note="BINUNICODE8 claiming 2^60 bytes", **E)
    c.file("binunicode8_2e64m1", g, PROTO4 + b"\x8d" + b"\xff" * 8 + b"abc.",
           note="BINUNICODE8 claiming 2^64-1 bytes (pos+len overflows)", **E)
    c.file("binbytes8_2e60", g, PROTO4 + b"\x8e" + big + b"abc.",
           note="BINBYTES8 claiming 2^60 bytes", **E)
    c.file("bytearray8_2e60", g, b"\x80\x05\x96" + big + b"abc.",
           note="BYTEARRAY8 claiming 2^60 bytes", **E)
    c.file("binunicode_4g", g, PROTO4 + b"X\xff\xff\xff\xffabc.",
           note="BINUNICODE claiming 4 GiB", **E)
    c.file("binstring_negative", g, b"T\xff\xff\xff\xffabc.", note="BINSTRING length -1", **E)
    c.file("long4_2e31", g, b"\x80\x02\x8b\xff\xff\xff\x7f\x01\x02.",
           note="LONG4 claiming 2^31-1 bytes", **E)
    c.file("long4_negative", g, b"\x80\x02\x8b\xff\xff\xff\xff\x01\x02.",
           note="LONG4 with a negative length", **E)
    c.file("long1_overrun", g, b"\x80\x02\x8a\xff\x01.", note="LONG1 claiming 255 bytes", **E)
    c.file("short_binunicode_overrun", g, PROTO4 + b"\x8c\x10abc", note="SHORT_BINUNICODE 16/3",
           **E)
    c.file("utf8_ff", g, PROTO4 + short_str(b"ab\xffcd") + b".", note="0xff in UTF-8", **E)
    c.file("utf8_overlong", g, PROTO4 + short_str(b"\xc0\xaf") + b".", note="overlong '/'", **E)
    c.file("utf8_cut", g, PROTO4 + short_str(b"ab\xe2\x82") + b".",
           note="multi-byte sequence cut by the string's end", **E)
    c.file("utf8_above_10ffff", g, PROTO4 + short_str(b"\xf4\x90\x80\x80") + b".",
           note="code point above U+10FFFF", **E)
    c.file("utf8_lone_continuation", g, PROTO4 + binunicode(b"\x80abc") + b".",
           note="continuation byte first", **E)
    c.file("utf8_in_key", g, PROTO4 + b"}(" + short_str(b"seg\xffments") + b"]u.",
           note="invalid UTF-8 in a snapshot key", **E)
    c.file("text_put_2e31", g, b"(lp2147483648\n.", note="protocol-0 PUT 2^31", **E)
    c.file("text_put_overflow", g, b"(lp99999999999999999999999999\n.",
           note="protocol-0 PUT index overflowing 64 bits", **E)
    c.file("text_get_negative", g, b"(lp0\ng-1\n.", note="protocol-0 GET -1", **E)
    c.file("text_int_junk", g, b"I12ab\n.", note="INT with junk", **E)
    c.file("text_int_empty", g, b"I\n.", note="INT with no digits", **E)
    c.file("text_float_junk", g, b"F1.2.3\n.", note="FLOAT with junk", **E)
    c.file("text_no_newline", g, b"I12345", note="INT without a newline", **E)
    c.file("text_string_unquoted", g, b"Sabc\n.", note="STRING not quoted", **E)
    c.file("text_string_bad_escape", g, b"S'a\\x4'\n.", note="STRING with a cut \\x escape", **E)
    c.file("text_unicode_bad_escape", g, b"Vab\\u12\n.", note="UNICODE with a cut \\u escape",
           **E)
    c.file("text_unicode_surrogate_esc", g, b"V\\U00110000\n.", note="UNICODE above U+10FFFF",
           **E)
    # Valid pickles that are not snapshots, and odd-but-legal encodings.
    S = dict(expect="error", msg_re="snapshot", need="offset", dump="ok")
    SL = dict(S, msg_re="snapshot|segment")  # list roots take the legacy path
    c.file("not_snapshot_dict_of_ints", g, dumps({"a": 1, "b": 2}),
           note="valid pickle, a dict of ints: snapshot-shape message", **S)
    c.file("not_snapshot_list_of_ints", g, dumps([1, 2, 3]), note="list of ints", **SL)
    c.file("not_snapshot_str", g, dumps("segments"), note="a str", **S)
    c.file("not_snapshot_none", g, dumps(None), note="None", **S)
    c.file("not_snapshot_tuple", g, dumps(({"segments": []},)), note="a tuple", **S)
    c.file("not_snapshot_bytes", g, dumps(b"\x00" * 10), note="bytes", **S)
    c.file("not_snapshot_set", g, dumps({1, 2, 3}), note="a set (EMPTY_SET/ADDITEMS)", **SL)
    c.file("segments_not_list", g, dumps({"segments": 5, "device_traces": []}),
           note="segments is an int", **S)
    c.file("segments_items_not_dicts", g, dumps({"segments": [1, "x", None],
                                                 "device_traces": []}),
           note="segments holds non-dicts", **SL)
    c.file("big_ints_everywhere", g, dumps({"x": [2**64, -2**64, 2**1000, -1]}),
           note="LONG1 bigints, not a snapshot", **S)
    c.file("trailing_after_stop", g, dumps(small_snapshot()) + b"\x00\x00junk",
           expect="ok", note="bytes after STOP (viz padding): recoverable, a note")
    c.file("two_pickles", g, dumps(small_snapshot()) + dumps(small_snapshot()),
           expect="ok", note="two pickles back to back: the first is read")
    c.file("proto0_snapshot", g, dumps(small_snapshot(), 0), expect="ok",
           note="protocol 0 text pickle of a snapshot (accepted)")
    c.file("proto1_snapshot", g, dumps(small_snapshot(), 1), expect="ok",
           note="protocol 1 (accepted)")
    c.file("proto5_snapshot", g, dumps(small_snapshot(), 5), expect="ok",
           note="protocol 5 (accepted)")


# -- refused opcodes: nothing runs --------------------------------------------------------

class _Evil:
    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


class _Obj:
    """Pickled with protocol 2+: NEWOBJ + BUILD (copyreg.__newobj__)."""
    def __init__(self):
        self.x = 1


class _ObjEx:
    def __getnewargs_ex__(self):
        return ((), {"k": 1})


def gen_refuse(c):
    g = "refuse"
    E = dict(expect="error", need="offset")
    mdir = os.path.join(c.outdir, g, "markers")
    os.makedirs(mdir, exist_ok=True)

    def evil(name, proto, wrap=None, note=""):
        marker = os.path.join(mdir, name + ".MARKER")
        obj = _Evil("touch " + marker)
        if wrap:
            obj = wrap(obj)
        c.file(name, g, pickle.dumps(obj, protocol=proto), marker=marker, note=note, **E)

    evil("os_system_p0", 0, note="GLOBAL posix.system + REDUCE, protocol 0")
    evil("os_system_p2", 2, note="GLOBAL + REDUCE, protocol 2")
    evil("os_system_p4", 4, note="STACK_GLOBAL + REDUCE, protocol 4")
    evil("os_system_p5", 5, note="protocol 5")
    evil("os_system_in_snapshot", 4,
         wrap=lambda o: snapshot_with(allocator_settings={"PYTORCH_CUDA_ALLOC_CONF": o}),
         note="os.system REDUCE deep inside a valid-looking snapshot")
    evil("os_system_as_frame", 2,
         wrap=lambda o: {"segments": [{"device": 0, "address": 0, "total_size": 0,
                                       "blocks": [], "frames": [o]}], "device_traces": []},
         note="REDUCE where a frame dict should be")
    # Hand-made: the other object-building opcodes.
    mk = os.path.join(mdir, "inst.MARKER")
    c.file("inst_os_system", g, b"(S'touch " + mk.encode() + b"'\nios\nsystem\n.", marker=mk,
           note="INST os.system", **E)
    mk = os.path.join(mdir, "obj.MARKER")
    c.file("obj_os_system", g, b"(cos\nsystem\nS'touch " + mk.encode() + b"'\no.", marker=mk,
           note="OBJ os.system", **E)
    c.file("global_builtins_eval", g, b"cbuiltins\neval\n(S'1'\ntR.", note="GLOBAL eval", **E)
    c.file("stack_global", g, PROTO4 + short_str("builtins") + short_str("len") + b"\x93.",
           note="STACK_GLOBAL alone", **E)
    c.file("stack_global_memo", g, PROTO4 + short_str("os") + b"\x94" + short_str("system")
           + b"\x94\x93\x94h\x02.", note="STACK_GLOBAL then memoized", **E)
    c.file("build", g, PROTO4 + b"}}b.", note="BUILD on a dict", **E)
    c.file("reduce_on_plain", g, PROTO4 + b"})R.", note="REDUCE on a dict and a tuple", **E)
    c.file("newobj", g, pickle.dumps(_Obj(), 2), note="NEWOBJ (+GLOBAL, BUILD)", **E)
    c.file("newobj_raw", g, PROTO4 + b"})\x81.", note="NEWOBJ on plain values", **E)
    c.file("newobj_ex", g, pickle.dumps(_ObjEx(), 4), note="NEWOBJ_EX", **E)
    c.file("newobj_ex_raw", g, PROTO4 + b"})}\x92.", note="NEWOBJ_EX on plain values", **E)
    c.file("ext1", g, b"\x80\x02\x82\x01.", note="EXT1", **E)
    c.file("ext2", g, b"\x80\x02\x83\x01\x00.", note="EXT2", **E)
    c.file("ext4", g, b"\x80\x02\x84\x01\x00\x00\x00.", note="EXT4", **E)
    c.file("persid", g, b"Pfoo\n.", note="PERSID", **E)
    c.file("binpersid", g, b"\x80\x02K\x01Q.", note="BINPERSID", **E)
    c.file("persid_in_snapshot", g, PROTO4 + b"}(" + short_str("segments") + b"]("
           + short_str("storage") + b"Qe" + short_str("device_traces") + b"]u.",
           note="BINPERSID inside a snapshot's segments", **E)
    c.file("next_buffer", g, b"\x80\x05\x97.", note="NEXT_BUFFER", **E)
    c.file("readonly_buffer", g, b"\x80\x05\x97\x98.", note="NEXT_BUFFER + READONLY_BUFFER",
           **E)
    c.file("readonly_buffer_alone", g, b"\x80\x05C\x01a\x98.", note="READONLY_BUFFER", **E)


# -- limits: depth, width, memo, memory -----------------------------------------------------

def gen_limits(c):
    g = "limits"
    N = 10**6
    deep_lists = PROTO4 + b"]" * N + b"a" * (N - 1) + b"."
    c.file("deep_lists_1e6", g, deep_lists, expect="error",
           note="EMPTY_LIST x 1e6 then APPEND x 1e6-1: nesting 10^6 deep", timeout=20)
    c.file("deep_marks_1e6", g, PROTO4 + b"(" * N + b"}.", expect="error", dump="ok",
           note="10^6 MARKs never closed", timeout=20)
    c.file("deep_tuples_1e6", g, PROTO4 + b"(" * N + b"t" * N + b".", expect="error",
           note="MARK x 1e6 then TUPLE x 1e6: tuples nested 10^6 deep", timeout=20)
    c.file("deep_dicts_1e6", g, PROTO4 + (b"}" + short_str("k")) * N + b"}" + b"s" * N + b".",
           expect="error", note="dicts nested 10^6 deep via SETITEM", timeout=20)
    # Deep nesting where the model does not look: stats can succeed; dump must not recurse.
    inner = b"]" * N + b"a" * (N - 1)
    snap = PROTO4 + b"}(" + short_str("segments") + b"]" + short_str("device_traces") + b"]" \
        + short_str("allocator_settings") + b"}" + short_str("deep") + inner + b"su."
    c.file("deep_in_settings_1e6", g, snap, expect="any",
           note="valid empty snapshot whose allocator_settings holds a 10^6-deep list",
           timeout=20)
    # Width: 10^7 tiny items from 10 MB (DUP), raw and as a snapshot that repeats one segment.
    W = 10**7
    c.file("wide_dup_1e7", g, PROTO4 + b"](N" + b"2" * (W - 1) + b"e.", expect="error",
           msg_re="snapshot|segment", dump="any", note="a list of 10^7 Nones made by DUP",
           timeout=30, slow=True)
    c.add("wide_dup_1e7_budget", g, os.path.join(g, "wide_dup_1e7.pickle"), "error",
          args=["--max-memory", "64MiB"], msg_re="memory|budget|limit", max_rss_mb=200,
          note="the same under --max-memory 64MiB: a memory error, not the OOM killer",
          timeout=30, slow=True)
    seg = body(small_snapshot()["segments"][0])
    wide_segs = PROTO4 + b"}(" + short_str("segments") + b"](" + seg + b"2" * (W - 1) \
        + b"e" + short_str("device_traces") + b"]u."
    c.file("wide_segments_1e7", g, wide_segs, expect="any", timeout=120, slow=True,
           args=["--max-memory", "1GiB"], expand=True,
           note="10^7 references to one segment dict (10 MB file) under --max-memory 1GiB")
    # Memo: huge indices and a dense memo of 10^6 entries.
    E = dict(expect="error", need="offset")
    c.file("memo_put_2e31", g, PROTO4 + b"}r\x00\x00\x00\x80.", note="LONG_BINPUT 2^31", **E)
    c.file("memo_put_2e32m1", g, PROTO4 + b"}r\xff\xff\xff\xff.",
           note="LONG_BINPUT 2^32-1", **E)
    many_puts = PROTO4 + b"](" + b"N\x94" * N + b"e" + b"j" + struct.pack("<I", N - 1) + b"."
    c.file("memo_1e6_entries", g, many_puts, expect="error", msg_re="snapshot", dump="ok",
           note="10^6 memo entries, last one fetched: valid, just not a snapshot", timeout=20)
    # Billion laughs: a DAG of shared lists, 10 levels of 10 -> 10^10 leaves from 300 bytes.
    laughs = bytearray(PROTO4 + b"](" + b"N" * 10 + b"e\x940")  # memo 0 = [None]*10
    for lvl in range(1, 10):  # memo lvl = [memo lvl-1] * 10; each popped once memoized
        laughs += b"](" + (b"h" + bytes([lvl - 1])) * 10 + b"e\x940"
    dag = bytes(laughs) + b"h\x09"
    c.file("laughs_raw", g, dag + b".", expect="error", msg_re="snapshot|segment", dump="any",
           expand=True, note="10^10-leaf DAG as the root: not a snapshot; dump must stop")
    c.file("laughs_in_settings", g,
           PROTO4 + b"}(" + short_str("segments") + b"]" + short_str("device_traces") + b"]"
           + short_str("allocator_settings") + b"}" + short_str("x") + dag[2:] + b"s"
           + short_str("external_annotations") + b"h\x09u.",
           expect="any", expand=True,
           note="the 10^10-leaf DAG in allocator_settings and annotations: dump must end "
                "with an error or bounded output")
    # Stacks: 10^6 trace entries sharing one 1000-frame stack (interning must not be
    # 10^9 frame comparisons) and 1000 segments x 1000 blocks from 4 KB.
    fr = frame("f", "/x.py", 1)
    stk = [dict(fr, line=i) for i in range(1000)]
    ent = {"action": "alloc", "addr": 1, "size": 512, "stream": 0, "frames": stk}
    c.file("trace_shared_stack_1e6", g, _repeat_last_list_item(ent, N), expect="any",
           timeout=30, slow=True, args=["--max-memory", "2GiB"],
           expand=True, note="10^6 trace entries, all one dict with a 1000-frame stack")
    c.file("model_laughs_1e6_blocks", g, _segments_laughs(1000, 1000), expect="any",
           timeout=30, slow=True, args=["--max-memory", "1GiB"],
           expand=True, note="1000 references to a segment with 1000 references to one block")
    c.file("model_laughs_1e9_blocks", g, _segments_laughs(31623, 31623), expect="error",
           timeout=30, slow=True, args=["--max-memory", "1GiB"], msg_re="memory|budget|limit",
           expand=True, note="10^9 blocks from 130 KB: the budget must stop it")
    c.file("many_devices_1e6", g, _many_devices(N), expect="any", timeout=30, slow=True,
           args=["--max-memory", "1GiB"],
           note="device_traces with 10^6 non-empty lists: 10^6 devices")


def _repeat_last_list_item(ent, n):
    """{"segments": [], "device_traces": [[ent, ent, ... n times]]} with DUP."""
    one = body(ent)
    return (PROTO4 + b"}(" + short_str("segments") + b"]" + short_str("device_traces")
            + b"]](" + one + b"2" * (n - 1) + b"eau.")


def _segments_laughs(n_seg, n_blk):
    blk = body({"size": 512, "state": "active_allocated"})
    hdr = PROTO4 + b"}(" + short_str("segments") + b"]("
    seg = (b"}(" + short_str("device") + b"K\x00" + short_str("address") + long1(1 << 40)
           + short_str("total_size") + binint(512 * n_blk) + short_str("blocks")
           + b"](" + blk + b"2" * (n_blk - 1) + b"eu")
    return hdr + seg + b"2" * (n_seg - 1) + b"e" + short_str("device_traces") + b"]u."


def _many_devices(n):
    ent = body({"action": "alloc", "addr": 1, "size": 512, "stream": 0})
    return (PROTO4 + b"}(" + short_str("segments") + b"]" + short_str("device_traces")
            + b"](]" + ent + b"a" + b"2" * (n - 1) + b"eu.")


# -- sources: files, dirs, FIFOs, compressed, not-pickles -----------------------------------

PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00"
       b"\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05"
       b"\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")


def gen_source(c):
    g = "source"
    E = dict(expect="error")
    c.file("empty_file", g, b"", note="an empty file", **E)
    c.file("png", g, PNG, ext=".png", note="a PNG image", msg_re="not a pickle: looks like a PNG image", **E)
    c.file("png_named_pickle", g, PNG, note="a PNG named .pickle", msg_re="not a pickle: looks like a PNG", **E)
    c.file("json", g, json.dumps({"segments": [], "device_traces": []}).encode(), ext=".json",
           note="a JSON snapshot-lookalike", msg_re="not a pickle: looks like JSON", **E)
    c.file("text", g, b"hello world\nthis is not a pickle\n", ext=".txt", note="plain text", msg_re="not a pickle: looks like text", **E)
    c.file("html", g, b"<!DOCTYPE html><html><script>var x = 1;</script></html>\n",
           ext=".html", note="an HTML page", msg_re="not a pickle: looks like HTML", **E)
    c.file("utf16_text", g, "\ufeffsegments".encode("utf-16"), ext=".txt", note="UTF-16", msg_re="not a pickle: looks like UTF-16 text", **E)
    c.file("pdf", g, b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n", ext=".pdf",
           note="a PDF header", msg_re="not a pickle: looks like a PDF", **E)
    c.file("bzip2_magic", g, b"BZh91AY&SY" + b"\x00" * 30, note="bzip2 data", msg_re="looks like bzip2", **E)
    c.file("xz_magic", g, b"\xfd7zXZ\x00" + b"\x00" * 30, note="xz data", msg_re="looks like xz", **E)
    c.file("zstd_magic", g, b"\x28\xb5\x2f\xfd" + b"\x00" * 30, note="zstd data", msg_re="looks like zstd", **E)
    c.file("elf_header", g, b"\x7fELF\x02\x01\x01" + b"\x00" * 57, note="an ELF header", msg_re="not a pickle: looks like an ELF", **E)
    c.file("all_zero_4k", g, bytes(4096), note="4 KiB of zeros", **E)
    # What a source tree or a CI artifact directory holds beside the snapshots: each says
    # what it looks like, not which opcode it would have refused.
    c.file("cmakelists", g, b"cmake_minimum_required(VERSION 3.16)\nproject(x C)\n",
           ext=".txt", note="a CMakeLists.txt (once: refused opcode GLOBAL)",
           msg_re="not a pickle: looks like text", need="offset", **E)
    c.file("text_memo_lookalike", g, b"g101 is a memo index, not a pickle\n", ext=".txt",
           note="text starting like a protocol-0 GET", msg_re="looks like text", **E)
    c.file("log_file", g, b"Epoch 1/10 loss=0.312\nEpoch 2/10 loss=0.287\n", ext=".log",
           note="a training log", msg_re="not a pickle: looks like text", **E)
    c.file("json_list", g, b"  [1, 2, 3]\n", ext=".json", note="a JSON list",
           msg_re="looks like JSON", **E)
    c.file("svg_file", g, b"<svg xmlns='http://www.w3.org/2000/svg'></svg>\n", ext=".svg",
           note="an SVG image", msg_re="looks like an SVG image", **E)
    c.file("jpeg", g, b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(32), ext=".jpg",
           note="a JPEG image", msg_re="looks like a JPEG image", **E)
    c.file("npy", g, b"\x93NUMPY\x01\x00v\x00{'descr': '<f4'}" + bytes(32), ext=".npy",
           note="a NumPy array", msg_re="looks like a NumPy array", **E)
    # A CI artifact directory: a snapshot beside a README, a log and a plot; the others
    # are skipped with a note, and one of them named explicitly is still an error.
    mixed = os.path.join(c.outdir, g, "dir_artifacts")
    os.makedirs(mixed, exist_ok=True)
    for name, data in (("rank0.pickle", dumps(small_snapshot())),
                       ("README.md", b"# Run 42\nSnapshots of the training job.\n"),
                       ("train.log", b"step 1 loss 2.31\nstep 2 loss 2.12\n"),
                       ("loss.png", PNG)):
        with open(os.path.join(mixed, name), "wb") as f:
            f.write(data)
    c.add("dir_artifacts", g, os.path.join(g, "dir_artifacts"), "ok",
          note="a snapshot, a README, a log and a PNG in one directory: the others skipped")
    c.add("dir_artifacts_readme", g, os.path.join(g, "dir_artifacts", "README.md"), "error",
          need="offset", msg_re="not a pickle: looks like text",
          note="the README of an artifact directory, named explicitly")
    # Directories, FIFOs, devices.
    d = os.path.join(c.outdir, g, "dir_not_snapshots")
    os.makedirs(os.path.join(d, "sub"), exist_ok=True)
    with open(os.path.join(d, "notes.txt"), "w") as f:
        f.write("not a snapshot\n")
    c.add("dir_not_snapshot", g, os.path.join(g, "dir_not_snapshots"), "error",
          note="a directory holding one text file and an empty subdirectory")
    c.add("dir_member_not_snapshot", g, os.path.join(g, "dir_not_snapshots") + ":notes.txt",
          "error", need="member", member="notes.txt",
          names=os.path.join(g, "dir_not_snapshots"), note="DIR:member naming the text file")
    os.makedirs(os.path.join(c.outdir, g, "dir_empty"), exist_ok=True)
    c.add("dir_empty", g, os.path.join(g, "dir_empty"), "error", note="an empty directory")
    fifo = os.path.join(c.outdir, g, "a_fifo.pickle")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    c.add("fifo", g, os.path.join(g, "a_fifo.pickle"), "error",
          note="a FIFO nobody writes to: must not block")
    d = os.path.join(c.outdir, g, "dir_specials")
    os.makedirs(d, exist_ok=True)
    for name, target in (("zero.pickle", "/dev/zero"), ("loop.pickle", "loop.pickle")):
        p = os.path.join(d, name)
        if not os.path.lexists(p):
            os.symlink(target, p)
    if not os.path.exists(os.path.join(d, "fifo.pickle")):
        os.mkfifo(os.path.join(d, "fifo.pickle"))
    c.add("dir_specials", g, os.path.join(g, "dir_specials"), "error",
          note="a directory of a FIFO, a symlink to /dev/zero and a symlink loop")
    c.add("dev_zero", g, "/dev/zero", "error", note="an endless device")
    c.add("dev_null", g, "/dev/null", "error", note="an empty device")
    c.add("missing_file", g, os.path.join(g, "does-not-exist.pickle"), "error",
          note="a file that does not exist")
    nl = "name\nwith\x1b[31mcontrol.pickle"
    c.file("control_chars_in_name", g, b"junk", ext="", note="a file name with a newline and "
           "an escape sequence: still exactly one stderr line", **E)
    os.replace(os.path.join(c.outdir, g, "control_chars_in_name"),
               os.path.join(c.outdir, g, nl))
    c.cases[-1]["spec"] = os.path.join(g, nl)
    c.cases[-1]["names"] = None      # printed escaped, in whatever way: just one line
    c.cases[-1]["msg_re"] = "source/name"
    # Standard input.
    c.add("stdin_not_pickle", g, "-", "error", stdin=os.path.join(g, "png.png"),
          names="<stdin>", note="a PNG on standard input")
    c.add("stdin_empty", g, "-", "error", stdin=None, names="<stdin>", note="empty stdin")
    c.add("stdin_dev_zero", g, "-", "error", stdin="/dev/zero", names="<stdin>",
          args=["--max-memory", "256MiB"], timeout=30, max_rss_mb=450,
          note="endless zeros on stdin (opcode 0x00): must stop, not read forever")
    # gzip.
    snap = dumps(small_snapshot())
    gz = gzip.compress(snap, mtime=0)
    c.file("gzip_truncated", g, gz[: len(gz) // 2], ext=".pickle.gz", note="gzip cut in half",
           **E)
    bad = bytearray(gz)
    bad[-8] ^= 0xFF
    c.file("gzip_bad_crc", g, bytes(bad), ext=".pickle.gz", note="gzip with a wrong CRC", **E)
    bad = bytearray(gz)
    bad[-4] ^= 0x01
    c.file("gzip_bad_isize", g, bytes(bad), ext=".pickle.gz", note="gzip with a wrong ISIZE",
           **E)
    c.file("gzip_header_only", g, gz[:10], ext=".pickle.gz", note="a gzip header alone", **E)
    c.file("gzip_junk_deflate", g, gz[:10] + b"\xff" * 64, ext=".pickle.gz",
           note="gzip header then invalid deflate", **E)
    c.file("gzip_not_pickle", g, gzip.compress(PNG, mtime=0), ext=".gz",
           note="a gzipped PNG", **E)
    c.file("gzip_in_gzip", g, gzip.compress(gz, mtime=0), ext=".gz", expect="any",
           note="a gzipped gzip")
    c.file("gzip_flags_fextra_overrun", g, b"\x1f\x8b\x08\x04\x00\x00\x00\x00\x00\x03\xff\xff",
           ext=".gz", note="gzip FEXTRA claiming 65535 bytes", **E)
    c.file("gzip_two_members", g, gzip.compress(snap[:40], mtime=0)
           + gzip.compress(snap[40:], mtime=0), ext=".gz", expect="any",
           note="a pickle split over two gzip members")
    c.file("gzip_trailing_junk", g, gz + b"junk", ext=".gz", expect="any",
           note="gzip followed by junk")
    GiB = 1 << 30
    total = 10 * GiB
    bomb = gzip_wrap(deflate_zeros(total), crc32_zeros(total), total)
    c.file("gzip_bomb_10g", g, bomb, ext=".pickle.gz", timeout=30, slow=True,
           note="10 GiB of zeros in a 10 MB gzip: the cap must hit while inflating", **E)
    c.add("gzip_bomb_10g_budget", g, os.path.join(g, "gzip_bomb_10g.pickle.gz"), "error",
          timeout=30, args=["--max-memory", "64MiB"], slow=True, max_rss_mb=200,
          note="the gzip bomb under --max-memory 64MiB")
    c.add("stdin_gzip_bomb", g, "-", "error", stdin=os.path.join(g, "gzip_bomb_10g.pickle.gz"),
          names="<stdin>", timeout=30, slow=True, note="the gzip bomb on standard input")


# -- zip archives ---------------------------------------------------------------------------

def gen_zip(c):
    g = "zip"
    snap = dumps(small_snapshot(), 2)
    E = dict(expect="error")

    def zfile(name, data, member=None, **kw):
        """A zip case; with member, the spec selects it and the error must name it. `data`
        may be the name of an earlier case whose archive is reused."""
        if isinstance(data, str):
            rel = os.path.join(g, data + ".zip")
        else:
            rel = c.write(os.path.join(g, name + ".zip"), data)
        if member is None:
            c.add(name, g, rel, kw.pop("expect", "error"), **kw)
        else:
            c.add(name, g, rel + ":" + member, kw.pop("expect", "error"), need="member",
                  member=member, names=rel, **kw)

    zfile("pt_no_data_pkl", torch_save_zip(snap, with_data=False),
          note="a torch.save zip whose data.pkl is missing")
    zfile("pt_data_pkl_not_pickle", torch_save_zip(PNG), member="x/data.pkl",
          note="a torch.save zip whose data.pkl is a PNG")
    zfile("pt_ok", torch_save_zip(snap), expect="ok", note="a torch.save zip (control)")
    zfile("empty_zip", zip_build([]), note="a zip with no members")
    # Bombs.
    GiB = 1 << 30
    size = 4 * GiB - (1 << 20)
    kern = deflate_zeros(size)
    zfile("zip_bomb_4g", zip_build([ZEntry("bomb.pickle", b"", method=8, comp=kern,
                                           crc=crc32_zeros(size), usize=size)]),
          member="bomb.pickle", timeout=30, slow=True,
          note="one member inflating to 4 GiB of zeros from 4 MB")
    kern1 = deflate_zeros(GiB)
    crc1 = crc32_zeros(GiB)
    overl = [ZEntry("m%03d.pickle" % i, b"", method=8, comp=kern1, crc=crc1, usize=GiB,
                    local_name=b"m000.pickle") for i in range(64)]
    zfile("zip_bomb_overlap", zip_build(overl, shared_local=True), timeout=30, slow=True,
          note="64 members sharing one 1 GiB deflate stream (overlapping members)")
    zfile("zip_bomb_overlap_member", "zip_bomb_overlap", member="m007.pickle",
          timeout=30, slow=True, note="one member of the overlapping bomb")
    # Overlap and absurd headers.
    a = ZEntry("a.pickle", snap)
    b = ZEntry("b.pickle", snap)
    data = zip_build([a, b])
    b_off = data.index(b"PK\x03\x04", 4)
    ov = ZEntry("b.pickle", snap, offset=0)
    zfile("overlap_same_offset", zip_build([a, ov]), member="b.pickle",
          note="two members pointing at the same local header")
    part = ZEntry("b.pickle", snap, offset=40)
    zfile("overlap_inside_data", zip_build([a, part]), member="b.pickle",
          note="a member starting inside another's data")
    del b_off
    zfile("offset_beyond_eof", zip_build([ZEntry("a.pickle", snap, offset=1 << 31)]),
          member="a.pickle", note="local header offset 2 GiB in a small file")
    zfile("csize_beyond_eof", zip_build([ZEntry("a.pickle", snap, csize=0xFFFFFFF0,
                                                usize=0xFFFFFFF0)]), member="a.pickle",
          note="stored member claiming 4 GiB")
    zfile("usize_absurd_deflate", zip_build([ZEntry("a.pickle", snap, method=8,
                                                    usize=0xFFFFFFFE)]), member="a.pickle",
          note="deflate member declaring 4 GiB uncompressed, holding 1 KB")
    zfile("usize_mismatch_stored", zip_build([ZEntry("a.pickle", snap, usize=len(snap) + 100)]),
          member="a.pickle", note="stored member whose sizes disagree")
    z64 = struct.pack("<HHQQ", 1, 16, 1 << 60, 1 << 60)
    zfile("zip64_absurd", zip_build([ZEntry("a.pickle", snap, usize=0xFFFFFFFF,
                                            csize=0xFFFFFFFF, cextra=z64, extra=z64)]),
          member="a.pickle", note="ZIP64 extra declaring 2^60-byte sizes")
    zfile("bad_crc", zip_build([ZEntry("a.pickle", snap, crc=0x12345678)]), member="a.pickle",
          note="a stored member with a wrong CRC")
    zfile("local_name_mismatch", zip_build([ZEntry("a.pickle", snap, local_name=b"zz.pickle")]),
          member="a.pickle", expect="any", note="local and central names differ")
    zfile("encrypted", zip_build([ZEntry("secret.pickle", snap, flags=1)]),
          member="secret.pickle", note="an encrypted (traditional PKWARE) member")
    zfile("encrypted_whole", "encrypted",
          note="an archive whose only member is encrypted")
    zfile("strong_encryption", zip_build([ZEntry("secret.pickle", snap, flags=0x41)]),
          member="secret.pickle", note="strong-encryption flag")
    junk = bytes(range(256)) * 4
    aes = struct.pack("<HHH2sBH", 0x9901, 7, 2, b"AE", 3, 8)
    zfile("method_aes", zip_build([ZEntry("a.pickle", snap, method=99, comp=junk, flags=1,
                                          extra=aes, cextra=aes)]),
          member="a.pickle", note="a WinZip AES-256 encrypted member (method 99)")
    for mname, mid in (("bzip2", 12), ("lzma", 14), ("zstd", 93), ("m77", 77),
                       ("deflate64", 9), ("implode", 6)):
        zfile("method_" + mname, zip_build([ZEntry("a.pickle", snap, method=mid, comp=junk)]),
              member="a.pickle", note="compression method %d" % mid)
    zfile("deflate_junk", zip_build([ZEntry("a.pickle", snap, method=8, comp=b"\xff" * 64)]),
          member="a.pickle", note="invalid deflate data")
    # Many members and odd names.
    many = [ZEntry("m%05d" % i, b"x") for i in range(100000)]
    zfile("members_1e5", zip_build(many, zip64_eocd=True), timeout=30, slow=True,
          note="10^5 members (zip64 end record)")
    zfile("members_1e5_pick", "members_1e5", timeout=30, slow=True,
          note="one member of the 10^5 (refusing the whole archive is fine)")
    c.cases[-1]["spec"] += ":m54321"
    zfile("member_name_control", zip_build([ZEntry("a\nb\x1b[2J.pickle", b"junk")]),
          note="a member name with a newline and an escape: one stderr line")
    zfile("member_traversal", zip_build([ZEntry("../../etc/passwd", b"junk")]),
          member="../../etc/passwd", note="a path-traversal member name (nothing is written)")
    zfile("member_dir_only", zip_build([ZEntry("d/", b"")]), note="only a directory entry")
    zfile("zip_in_zip", zip_build([ZEntry("inner.zip", torch_save_zip(snap))]),
          member="inner.zip", expect="any", note="a zip inside a zip")
    zfile("eocd_cut", torch_save_zip(snap)[:-10], note="a zip missing its end record")
    zfile("eocd_comment_overrun", torch_save_zip(snap)[:-2] + b"\xff\xff",
          expect="any", note="EOCD comment length 65535 with no comment")
    cd = zip_build([ZEntry("a.pickle", snap)])
    cd_bad = cd[:-22] + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, 0xFFFF, 0xFFFFFF, 0)
    zfile("cd_offset_absurd", cd_bad, note="EOCD pointing the central directory past EOF")
    cd_cnt = cd[:-22] + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFE, 0xFFFE,
                                    len(cd) - 22 - cd.index(b"PK\x01\x02"),
                                    cd.index(b"PK\x01\x02"), 0)
    zfile("cd_count_absurd", cd_cnt, note="EOCD claiming 65534 entries, 1 present")


# -- the model: numbers that lie ----------------------------------------------------------

def gen_model(c):
    g = "model"
    W = dict(expect="warn", msg_re="segment", need="offset")

    def seg21(blocks, total=None, address=0x7F0000000000, **extra):
        if total is None:
            total = sum(b["size"] for b in blocks)
        s = {"device": 0, "address": address, "total_size": total, "stream": 0,
             "segment_type": "large", "blocks": blocks}
        s.update(extra)
        return {"segments": [s], "device_traces": []}

    A = 0x7F0000000000
    blk = lambda addr, size, **kw: dict({"address": addr, "size": size, "requested_size": size,
                                         "state": "active_allocated", "frames": []}, **kw)
    c.file("block_outside_segment", g, dumps(seg21([blk(A, 4096), blk(A + (1 << 30), 4096)],
                                                   total=8192)),
           note="second block's address far outside its segment", **W)
    c.file("block_before_segment", g, dumps(seg21([blk(A - 4096, 4096)], total=4096)),
           note="block address below the segment start", **W)
    c.file("blocks_not_tiling_short", g, dumps(seg21([blk(A, 4096)], total=8192)),
           note="blocks sum to 4096, total_size says 8192", **W)
    c.file("blocks_not_tiling_long", g, dumps(seg21([blk(A, 4096), blk(A + 4096, 8192)],
                                                    total=8192)),
           note="blocks sum past total_size", **W)
    c.file("blocks_gap", g, dumps(seg21([blk(A, 4096), blk(A + 8192, 4096)], total=12288)),
           note="a hole between two blocks (addresses do not tile)", **W)
    c.file("blocks_overlap", g, dumps(seg21([blk(A, 8192), blk(A + 4096, 4096)], total=12288)),
           note="two blocks overlapping", **W)
    c.file("block_negative_size", g, dumps(seg21([blk(A, -4096)], total=4096)),
           note="block size -4096", **W)
    c.file("segment_negative_total", g, dumps(seg21([blk(A, 4096)], total=-4096)),
           note="segment total_size -4096", **W)
    c.file("segment_negative_address", g, dumps(seg21([blk(-4096, 4096)], total=4096,
                                                      address=-4096)),
           note="negative addresses", **W)
    c.file("sizes_overflow_u64", g, dumps(seg21([blk(A, 2**63), blk(A + 2**63, 2**63)],
                                                total=2**64 - 1)),
           note="block sizes summing past 2^64", **W)
    c.file("address_wraps", g, dumps(seg21([blk(2**64 - 4096, 1 << 20)], total=1 << 20,
                                           address=2**64 - 4096)),
           note="segment address + size wrapping 2^64", **W)
    c.file("size_bigint", g, dumps(seg21([blk(A, 2**100)], total=2**100)),
           note="a 101-bit block size", **W)
    c.file("size_str", g, dumps(seg21([blk(A, "4096")], total=4096)), note="size is a str",
           **W)
    c.file("size_float", g, dumps(seg21([blk(A, 4096.0)], total=4096)), note="size is a float",
           **W)
    c.file("size_missing", g, dumps(seg21([{"address": A, "state": "inactive"}], total=4096)),
           note="a block without size", **W)
    c.file("requested_gt_size", g, dumps(seg21([blk(A, 4096, requested_size=1 << 40)],
                                               total=4096)),
           expect="any", note="requested_size larger than size")
    c.file("state_unknown", g, dumps(seg21([blk(A, 4096, state="active_awaiting_free")],
                                           total=4096)),
           expect="any", note="an unknown block state")
    c.file("state_not_str", g, dumps(seg21([blk(A, 4096, state=7)], total=4096)),
           expect="any", note="state is an int")
    # Legacy (1.13) form: history.
    c.file("history_without_frames", g, dumps(legacy_snapshot(
        [{"size": 4096, "state": "active_allocated", "history": [{"addr": 1, "real_size": 10}]}])),
           expect="any", note="a history entry without frames")
    c.file("history_empty", g, dumps(legacy_snapshot(
        [{"size": 4096, "state": "active_allocated", "history": []}])), expect="any",
           note="an empty history list")
    c.file("history_not_list", g, dumps(legacy_snapshot(
        [{"size": 4096, "state": "active_allocated", "history": 5}])), expect="any",
           note="history is an int")
    c.file("history_frames_junk", g, dumps(legacy_snapshot(
        [{"size": 4096, "state": "active_allocated",
          "history": [{"real_size": 10, "frames": [1, None, {"line": "x"}]}]}])),
           expect="any", note="history frames that are not frame dicts")
    c.file("legacy_negative", g, dumps(legacy_snapshot(
        [{"size": -1, "state": "active_allocated"}, {"size": 4096, "state": "inactive"}])),
           note="legacy blocks with a negative size", **W)
    # Frames with wrong types.
    bad_frames = [{"filename": 5, "name": None, "line": "12"}, {"line": 2**100},
                  {"filename": "a" * 100000, "name": "\u00e9\ud800", "line": -1}, "x", []]
    c.file("frames_wrong_types", g, dumps(seg21([blk(A, 4096, frames=bad_frames)], total=4096)),
           expect="any", note="frames of the wrong types")
    c.file("frames_not_list", g, dumps(seg21([blk(A, 4096, frames={"a": 1})], total=4096)),
           expect="any", note="frames is a dict")
    # Devices.
    for name, dev in (("device_huge", 2**62), ("device_negative", -1), ("device_bigint", 2**80),
                      ("device_str", "cuda:0")):
        s = seg21([blk(A, 4096)], total=4096)
        s["segments"][0]["device"] = dev
        c.file(name, g, dumps(s), expect="any", note="segment device = %r" % (dev,))
    c.file("device_traces_not_list", g, dumps({"segments": [], "device_traces": 5}),
           expect="any", note="device_traces is an int")
    c.file("trace_entries_junk", g, dumps({"segments": [], "device_traces": [[1, None, {},
        {"action": 5}, {"action": "alloc", "addr": -1, "size": 2**70, "time_us": "x"}]]}),
           expect="any", note="trace entries of the wrong types")
    c.file("settings_junk", g, dumps(snapshot_with(allocator_settings={
        "max_split_size": 2**70, "garbage_collection_threshold": float("nan"),
        "expandable_segments": "yes", "PYTORCH_CUDA_ALLOC_CONF": 5})),
           expect="any", note="allocator_settings of the wrong types")
    c.file("settings_not_dict", g, dumps(snapshot_with(allocator_settings=[1, 2])),
           expect="any", note="allocator_settings is a list")
    # Cycles through the memo (CPython writes these for self-containing lists).
    cyc = []
    cyc.append(cyc)
    # A stack's frames list is given back once interned (intern.c): a snapshot never uses
    # the same list as anything else, and one that does is refused, never misread.
    fr = [frame("f", "/a.py", 3), frame("g", "/b.py", 4)]
    ent = {"action": "alloc", "addr": A, "size": 512, "stream": 0, "time_us": 5, "frames": fr}
    for what, top in [("trace", {"device_traces": [[ent], fr], "segments": []}),
                      ("annotations", {"device_traces": [[ent]], "segments": [],
                                       "external_annotations": fr}),
                      ("settings", {"device_traces": [[ent]], "segments": [],
                                    "allocator_settings": {"x": fr}}),
                      ("blocks", {"device_traces": [[ent]],
                                  "segments": [dict(seg21([])["segments"][0], blocks=fr)]}),
                      ("segments", {"device_traces": [[ent]], "segments": fr})]:
        c.file("frames_list_reused_as_" + what, g, dumps(top), expect="error",
               msg_re="a stack's frames, is read again as another kind of list",
               note="a trace entry's frames list used again as " + what)
        # The same after an entry of the same keys: the list is then decoded on the fast
        # path (pickle.c, fast_list), and must be refused all the same.
        first = dict(ent, frames=list(fr))
        top = dict(top, device_traces=[[first] + top["device_traces"][0]] + top["device_traces"][1:])
        c.file("frames_list_fast_reused_as_" + what, g, dumps(top), expect="error",
               msg_re="a stack's frames, is read again as another kind of list",
               note="a second trace entry's inline frames list used again as " + what)
    c.file("cycle_root", g, dumps(cyc), expect="error", msg_re="snapshot|segment",
           note="a list containing itself as the root: dump must terminate")
    cyc_dict = {}
    cyc_dict["segments"] = [cyc_dict]
    cyc_dict["device_traces"] = []
    c.file("cycle_segments", g, dumps(cyc_dict), expect="any",
           note="segments list holding the top-level dict itself")
    fr = []
    fr.append(fr)
    c.file("cycle_frames", g, dumps(seg21([blk(A, 4096, frames=fr)], total=4096)),
           expect="any", note="a frames list containing itself")
    c.file("cycle_in_settings", g, dumps(snapshot_with(allocator_settings={"x": cyc})),
           expect="any", note="a cycle in allocator_settings: dump must terminate")
    blocks = []
    seg = {"device": 0, "address": A, "total_size": 4096, "blocks": blocks}
    blocks.append(seg)
    c.file("cycle_block_is_segment", g, dumps({"segments": [seg], "device_traces": []}),
           expect="any", note="a segment whose blocks list holds the segment itself")
    dt = []
    dt.append(dt)
    c.file("cycle_device_traces", g, dumps({"segments": [], "device_traces": dt}),
           expect="any", note="device_traces containing itself")
    # Regressions from fuzzing (each crashed a clang -fsanitize=undefined build).
    c.file("regress_segments_without_blocks", g, dumps(
        {"segments": [{"device": 0, "address": A, "total_size": 0, "frames": []}],
         "device_traces": []}), expect="any",
           note="fuzz: segments but no block anywhere made &blocks[0] from NULL (model.c)")
    c.file("regress_no_frames_at_all", g, dumps(seg21([blk(A, 4096)], total=4096)),
           expect="any", note="fuzz: no frame anywhere left the frame table NULL and "
                              "sd_snapshot_stack(0) returned NULL + 0 (snapshot.c)")
    h = []
    h.append({"real_size": 5, "frames": h})
    c.file("cycle_history", g, dumps(legacy_snapshot(
        [{"size": 4096, "state": "active_allocated", "history": h}])), expect="any",
           note="history whose frames list is the history list")


# -- truncation at every offset, and single-byte flips -------------------------------------

def gen_trunc(c):
    g = "trunc"
    base = dumps(small_snapshot())
    c.write(os.path.join(g, "fixture.pickle"), base)
    for i in range(len(base)):
        c.file("trunc_%04d" % i, g, base[:i], expect="error", need="offset" if i else None,
               note="the fixture (%d bytes) cut at byte %d" % (len(base), i))
    p2 = dumps(small_snapshot(), 2)
    for i in range(0, len(p2), 3):
        c.file("trunc_p2_%04d" % i, g, p2[:i], expect="error",
               note="the protocol-2 fixture cut at byte %d" % i)
    gz = gzip.compress(base, mtime=0)
    for i in range(0, len(gz), 4):
        c.file("trunc_gz_%04d" % i, g, gz[:i], ext=".pickle.gz", expect="error",
               note="the gzipped fixture cut at byte %d" % i)
    zp = torch_save_zip(p2)
    for i in range(0, len(zp), 16):
        c.file("trunc_zip_%04d" % i, g, zp[:i], ext=".pt", expect="error",
               note="the torch.save zip cut at byte %d" % i)


def gen_flip(c, count):
    g = "flip"
    rng = random.Random(20240517)
    base = dumps(small_snapshot())
    variants = [("p4", base, ".pickle"), ("p2", dumps(small_snapshot(), 2), ".pickle"),
                ("gz", gzip.compress(base, mtime=0), ".pickle.gz"),
                ("pt", torch_save_zip(dumps(small_snapshot(), 2)), ".pt")]
    for tag, data, ext in variants:
        n = count if tag == "p4" else count // 3
        for k in range(n):
            b = bytearray(data)
            pos = rng.randrange(len(b))
            b[pos] ^= rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 0xFF, rng.randrange(1, 256)])
            if k % 4 == 3:  # sometimes two more flips
                for _ in range(2):
                    q = rng.randrange(len(b))
                    b[q] = rng.randrange(256)
            c.file("flip_%s_%03d" % (tag, k), g, bytes(b), ext=ext, expect="any",
                   need="offset" if tag in ("p4", "p2") else None,
                   note="%s fixture with byte %d flipped" % (tag, pos))

# -- the replay: traces that do not add up ------------------------------------------------

def gen_replay(c):
    """`snapdiff replay` on traces that contradict themselves: one warning per kind with a
    count, the replay goes on; sizes and counts that could blow up the model stay bounded."""
    g = "replay"
    A = 0x7F0000000000
    MiB = 1 << 20

    def snap(trace, segs=(), settings=None, traces=None):
        out = {"segments": [dict({"device": 0, "stream": 0, "segment_type": "large",
                                  "blocks": [{"address": a, "size": n, "requested_size": 0,
                                              "state": "inactive", "frames": []}]},
                                 address=a, total_size=n) for a, n in segs],
               "device_traces": traces if traces is not None else [trace]}
        if settings:
            out["allocator_settings"] = settings
        return dumps(out)

    def e(action, addr, size, stream=0):
        return {"action": action, "addr": addr, "size": size, "stream": stream}

    R = dict(expect="warn", dump="any", commands=("replay",))
    c.file("replay_unknown_free", g, snap([e("free_requested", A, 4096),
                                           e("free_completed", A, 4096),
                                           e("free_completed", A + 8192, 4096)]),
           msg_re="unknown-free", note="frees of blocks no segment holds", **R)
    c.file("replay_overlap", g, snap([e("segment_alloc", A, 20 * MiB),
                                      e("alloc", A, 8 * MiB), e("alloc", A + 4096, 8 * MiB)]),
           msg_re="overlapping-alloc", note="an alloc inside a live block", **R)
    c.file("replay_other_device_segment", g,
           snap(None, traces=[[e("segment_free", A + (1 << 40), 20 * MiB)],
                              [e("segment_alloc", A + (1 << 40), 20 * MiB)]]),
           msg_re="unknown-segment|bad-start", note="device 0 frees device 1's segment", **R)
    c.file("replay_ring_wrapped", g,
           snap([e("free_completed", A, 512), e("alloc", A, 512)], segs=[(A, 2 * MiB)],
                settings={"trace_alloc_overflowed": True}),
           msg_re="ring-buffer-wrapped", note="trace_alloc_overflowed: entries were lost", **R)
    c.file("replay_huge_sizes", g,
           snap([e("segment_alloc", A, 2**62), e("alloc", A, 2**63 - 1),
                 e("alloc", 0, 2**63 - 5), e("oom", 0, 2**63 - 1),
                 e("segment_free", A, 2**62), e("free_completed", 0, 2**63 - 1)]),
           expect="any", dump="any", commands=("replay",), note="sizes at the edge of 64 bits")
    many = [e("segment_alloc", A + k * 32 * MiB, 20 * MiB) for k in range(3000)]
    many += [e("alloc", A + (1 << 45) + k * 512, 512) for k in range(30000)]
    c.file("replay_many_stray_allocs", g, snap(many), msg_re="overlapping-alloc",
           note="30000 allocs outside 3000 segments: bounded time", timeout=20, **R)


GROUPS = {"pickle": gen_pickle, "refuse": gen_refuse, "limits": gen_limits,
          "source": gen_source, "zip": gen_zip, "model": gen_model, "trunc": gen_trunc,
          "flip": None, "replay": gen_replay}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("outdir")
    ap.add_argument("--group", action="append", choices=sorted(GROUPS), default=[])
    ap.add_argument("--flips", type=int, default=300, help="flipped copies of the fixture")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    c = Corpus(args.outdir, set(args.group))
    for name, fn in GROUPS.items():
        if not c.want(name):
            continue
        if name == "flip":
            gen_flip(c, args.flips)
        else:
            fn(c)
    with open(os.path.join(args.outdir, "cases.json"), "w") as f:
        json.dump(c.cases, f, indent=1)
    print("%d cases in %s" % (len(c.cases), args.outdir))


if __name__ == "__main__":
    sys.exit(main())
