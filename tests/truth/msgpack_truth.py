"""A small MessagePack decoder and encoder, written from the spec for the tests.

It is independent of snapdiff's reader (src/model/msgpack.c) and of msgpack-c, which writes
the summaries: tests decode a summary here and compare with what `snapdiff dump` shows, and
encode altered summaries (a newer version, a hostile count) to feed back to snapdiff.
"""
import struct


class Ext:
    def __init__(self, code, data):
        self.code, self.data = code, data


def decode(data):
    """The one value in `data` (bytes); ValueError if anything is left over or missing."""
    value, pos = _decode(data, 0)
    if pos != len(data):
        raise ValueError("%d bytes after the value" % (len(data) - pos))
    return value


def _take(data, pos, n):
    if pos + n > len(data):
        raise ValueError("truncated at %d" % pos)
    return data[pos:pos + n], pos + n


def _decode(data, pos):
    b, pos = _take(data, pos, 1)
    op = b[0]
    if op <= 0x7F:
        return op, pos
    if op >= 0xE0:
        return op - 256, pos
    if 0x80 <= op <= 0x8F:
        return _map(data, pos, op & 0x0F)
    if 0x90 <= op <= 0x9F:
        return _array(data, pos, op & 0x0F)
    if 0xA0 <= op <= 0xBF:
        raw, pos = _take(data, pos, op & 0x1F)
        return raw.decode("utf-8", "surrogateescape"), pos
    if op == 0xC0:
        return None, pos
    if op in (0xC2, 0xC3):
        return op == 0xC3, pos
    fixed = {0xCA: ">f", 0xCB: ">d", 0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q",
             0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q"}
    if op in fixed:
        fmt = fixed[op]
        raw, pos = _take(data, pos, struct.calcsize(fmt))
        return struct.unpack(fmt, raw)[0], pos
    sized = {0xC4: (">B", "bin"), 0xC5: (">H", "bin"), 0xC6: (">I", "bin"),
             0xD9: (">B", "str"), 0xDA: (">H", "str"), 0xDB: (">I", "str"),
             0xDC: (">H", "array"), 0xDD: (">I", "array"),
             0xDE: (">H", "map"), 0xDF: (">I", "map"),
             0xC7: (">B", "ext"), 0xC8: (">H", "ext"), 0xC9: (">I", "ext")}
    if op in sized:
        fmt, kind = sized[op]
        raw, pos = _take(data, pos, struct.calcsize(fmt))
        n = struct.unpack(fmt, raw)[0]
        if kind == "array":
            return _array(data, pos, n)
        if kind == "map":
            return _map(data, pos, n)
        if kind == "ext":
            code, pos = _take(data, pos, 1)
            raw, pos = _take(data, pos, n)
            return Ext(code[0], raw), pos
        raw, pos = _take(data, pos, n)
        return (raw if kind == "bin" else raw.decode("utf-8", "surrogateescape")), pos
    if 0xD4 <= op <= 0xD8:
        code, pos = _take(data, pos, 1)
        raw, pos = _take(data, pos, 1 << (op - 0xD4))
        return Ext(code[0], raw), pos
    raise ValueError("byte 0x%02x at %d is not msgpack" % (op, pos - 1))


def _array(data, pos, n):
    out = []
    for _ in range(n):
        v, pos = _decode(data, pos)
        out.append(v)
    return out, pos


def _map(data, pos, n):
    out = {}
    for _ in range(n):
        k, pos = _decode(data, pos)
        v, pos = _decode(data, pos)
        out[k] = v
    return out, pos


def encode(v):
    """Bytes of v: None, bool, int, float, str, bytes, list/tuple, dict."""
    if v is None:
        return b"\xc0"
    if v is True or v is False:
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        if 0 <= v <= 0x7F:
            return bytes([v])
        if -32 <= v < 0:
            return bytes([v + 256])
        if v >= 0:
            return b"\xcf" + struct.pack(">Q", v)
        return b"\xd3" + struct.pack(">q", v)
    if isinstance(v, float):
        return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        raw = v.encode("utf-8", "surrogateescape")
        if len(raw) <= 31:
            return bytes([0xA0 | len(raw)]) + raw
        return b"\xdb" + struct.pack(">I", len(raw)) + raw
    if isinstance(v, bytes):
        return b"\xc6" + struct.pack(">I", len(v)) + v
    if isinstance(v, (list, tuple)):
        head = bytes([0x90 | len(v)]) if len(v) <= 15 else b"\xdd" + struct.pack(">I", len(v))
        return head + b"".join(encode(x) for x in v)
    if isinstance(v, dict):
        head = bytes([0x80 | len(v)]) if len(v) <= 15 else b"\xdf" + struct.pack(">I", len(v))
        return head + b"".join(encode(k) + encode(x) for k, x in v.items())
    raise TypeError(type(v))
