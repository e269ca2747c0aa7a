#!/usr/bin/env python3
"""Independent CPython computation of `snapdiff OLD NEW` (the figures, not the layout).

    truth_diff.py OLD NEW [--group-by site|leaf|stack|file|function|annotation|compile-context]
                  [--depth N]
                  [--hide RE]... [--show RE]... [--focus RE]...

Loads both files with pickle.load (test data only: never run it on untrusted files) and
prints JSON: totals per side, blocks new/freed/kept, per-device totals, and every group
with [old_bytes, old_blocks, new_bytes, new_blocks], plus the group order snapdiff must
use. It shares no code with the C implementation; it follows the written definitions in
docs/json-diff.md. OLD may be "-" for an empty baseline.
"""
import argparse
import json
import pickle
import re
import sys

NO_STACK = "<no stack>"

# PyTorch's own noise filter (torch/cuda/_memory_viz.py), used for the `stack` key.
NOISE_NAMES = ("unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp", "_start",
               "__libc_start_main", "PyEval_", "PyObject_", "PyFunction_")
NOISE_FILES = ("core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c",
               "Objects/call.c", "Objects/methodobject.c", "pycore_ceval.h", "ceval.c",
               "cpython/abstract.h")


# ---- the model (what snapshot.c builds) ---------------------------------------------------

def load(path):
    if path == "-":
        return {"segments": [], "device_traces": []}
    with open(path, "rb") as f:
        snap = pickle.load(f)
    if isinstance(snap, list):
        snap = {"segments": snap, "device_traces": []}
    return snap


class Stack(tuple):
    """A block's frames (filename, line, name), innermost first; .fwd holds its
    forward_frames (newer torch, blocks allocated during backward) the same way."""
    fwd = ()
    meta = ""
    cctx = ""


def frame_tuples(fr):
    return tuple((f.get("filename") or "", f.get("line", 0), f.get("name") or "") for f in fr)


def frames_of(block):
    if "frames" in block:
        fr = block["frames"]
    elif block.get("history"):
        fr = block["history"][0].get("frames", [])
    else:
        fr = []
    st = Stack(frame_tuples(fr))
    if isinstance(block.get("forward_frames"), (list, tuple)) and block["forward_frames"]:
        st.fwd = frame_tuples(block["forward_frames"])
    if isinstance(block.get("user_metadata"), str):
        st.meta = block["user_metadata"]
    if isinstance(block.get("compile_context"), str):
        st.cctx = block["compile_context"]
    return st


def requested_of(block):
    if "requested_size" in block:
        return block["requested_size"]
    if block.get("history"):
        return block["history"][0].get("real_size", block["size"])
    return block["size"]


def blocks_of(snap):
    """Yield (device, address, size, requested, state, frames) for every block."""
    for seg in snap["segments"]:
        dev = seg.get("device", 0)
        addr = seg["address"]
        for b in seg["blocks"]:
            a = b.get("address", addr)
            yield dev, a, b["size"], requested_of(b), b["state"], frames_of(b)
            addr += b["size"]


def devices_of(snap):
    devs = {seg.get("device", 0) for seg in snap["segments"]}
    for i, t in enumerate(snap.get("device_traces") or []):
        if t:
            devs.add(i)
    return sorted(devs)


def totals(snap):
    """Per-device and overall totals, as the stats module defines them."""
    per = {d: dict(allocated=0, reserved=0, active=0, requested=0, pending_free=0,
                   allocated_blocks=0) for d in devices_of(snap)}
    for seg in snap["segments"]:
        per[seg.get("device", 0)]["reserved"] += seg["total_size"]
    for dev, _a, size, req, state, _fr in blocks_of(snap):
        t = per[dev]
        if state == "active_allocated":
            t["allocated"] += size
            t["allocated_blocks"] += 1
            t["requested"] += req
        elif state == "active_pending_free":
            t["pending_free"] += size
            t["requested"] += req
    for t in per.values():
        t["active"] = t["allocated"] + t["pending_free"]
    overall = {k: sum(t[k] for t in per.values()) for k in
               ("allocated", "reserved", "active", "requested", "pending_free",
                "allocated_blocks")}
    return per, overall


# ---- frame classification ----------------------------------------------------------------

def is_third_party(fn):
    return "site-packages" in fn or "dist-packages" in fn


def is_torch(fn):
    return "/torch/" in fn or "\\torch\\" in fn


def is_stdlib(fn):
    if "/lib/python3" in fn or "/lib64/python3" in fn or "/lib/pypy" in fn:
        return True
    if "\\Lib\\" in fn:
        return True
    # Windows installs also write ...\Python310\lib\... in lower case.
    return re.search(r"\\python[^\\]*\\lib\\", fn, re.IGNORECASE) is not None


def frame_text(f):
    return "%s:%d %s" % (f[0], f[1], f[2])


class Rules:
    def __init__(self, hide, show):
        self.hide = [re.compile(p) for p in hide]
        self.show = [re.compile(p) for p in show]

    def is_user(self, f):
        fn = f[0]
        text = frame_text(f)
        if any(r.search(text) for r in self.hide):
            return False
        if any(r.search(text) for r in self.show):
            return True
        if fn in ("", "??") or fn.startswith("<") or not fn.endswith(".py"):
            return False
        if is_third_party(fn) or is_torch(fn) or is_stdlib(fn):
            return False
        return True


# Native frames that never name memory (docs/json-diff.md "Stacks with no Python frame").
NATIVE_NOISE_NAMES = (
    "CachingAllocator", "c10::cuda::CUDAAllocator", "c10::Allocator::", "at::detail::empty",
        "at::detail::_empty", "at::native::empty_",
    "c10::StorageImpl", "c10::intrusive_ptr<c10::StorageImpl",
    "c10::make_intrusive<c10::StorageImpl",
    "torch::unwind::", "torch::CapturedTraceback", "gather_with_cpp",
    "c10::Dispatcher", "c10::impl::BoxedKernelWrapper", "wrap_kernel_functor",
    "c10::impl::call_functor_with_args", "c10::impl::make_boxed_from_unboxed_functor",
    "c10::BoxedKernel", "c10::KernelFunction", "c10::OperatorHandle",
    "c10::TypedOperatorHandle", "c10::impl::boxed_", "namespace)::wrapper_",
    "torch::autograd::Engine::", "torch::autograd::Node::operator()",
    "torch::autograd::call_function", "torch::autograd::python::PythonEngine",
    "THPVariable_", "THPFunction_", "pybind11::", "torch::PythonArgParser",
    "cfunction_call", "_PyObject_", "_PyEval_", "_PyFunction_", "method_vectorcall",
        "PyRun_", "Py_RunMain", "Py_BytesMain", "pyrun_file", "run_mod", "run_eval_code_obj",
    "start_thread", "__clone", "execute_native_thread_routine", "__libc_start",
    "std::thread::", "std::_Function_handler")
NATIVE_NOISE_FILES = ("CUDACachingAllocator.cpp", "pthread_create.c", "clone.S", "clone3.S",
                      "libc-start.c", "libc_start_call_main.h")


def is_native_noise(f):
    return (is_noise(f) or any(n in f[2] for n in NATIVE_NOISE_NAMES)
            or any(n in f[0] for n in NATIVE_NOISE_FILES))


def native_label(f):
    """The readable name of an autograd node or ATen op frame, else None."""
    name = f[2]
    if name.startswith("torch::autograd::"):
        i = name.find("::apply")
        if i >= 0 and name[i + 7:i + 8] in ("(", ""):
            cls = name[:i].rsplit("::", 1)[-1]
            if cls == "AccumulateGrad":
                return "autograd AccumulateGrad (parameter gradients)", "<autograd>"
            if "Backward" in cls:
                return "autograd " + cls, "<autograd>"
        return None
    if name.startswith("at::_ops::") and "::" in name[10:]:
        return "aten::" + name[10:].split("::")[0], "<aten>"
    return None


def site_of(rules, frames):
    """(index, native label or None, is_user) of the site; index -1 for an empty stack."""
    for i, f in enumerate(frames):
        if rules.is_user(f):
            return i, None, True
    for i, f in enumerate(frames):
        if f[0].endswith(".py") and not is_torch(f[0]):
            return i, None, False
    for i, f in enumerate(frames):
        if f[0].endswith(".py"):
            return i, None, False
    # No Python frame: the innermost autograd node, else the outermost ATen op.
    for i, f in enumerate(frames):
        lab = native_label(f)
        if lab and lab[1] == "<autograd>":
            return i, lab, False
    for i in range(len(frames) - 1, -1, -1):
        lab = native_label(frames[i])
        if lab and lab[1] == "<aten>":
            return i, lab, False
    return leaf_index(frames), None, False


def leaf_index(frames):
    for i, f in enumerate(frames):
        if not is_native_noise(f):
            return i
    return 0 if frames else -1


def callers(rules, frames, site, depth):
    out = []
    for f in frames[site + 1:]:
        if len(out) == depth:
            break
        if rules.is_user(f):
            out.append(f)
    return out


def is_noise(f):
    return any(n in f[2] for n in NOISE_NAMES) or any(n in f[0] for n in NOISE_FILES)


def group_key(rules, by, depth, frames):
    fwd = getattr(frames, "fwd", ())
    if by == "annotation":
        return getattr(frames, "meta", "") or "<no annotation>"
    if by == "compile-context":
        return getattr(frames, "cctx", "") or "<no compile context>"
    if not frames and not fwd:
        return NO_STACK
    if by == "leaf" and frames:
        return frame_text(frames[leaf_index(frames)])
    if by == "stack" and frames:
        kept = [frame_text(f) for f in frames if not is_native_noise(f)]
        return ";".join(kept) if kept else NO_STACK
    s, native, is_user = site_of(rules, frames) if frames else (-1, None, False)
    mark = ""
    if not is_user and fwd:
        fs, _n, fuser = site_of(rules, fwd)
        if fuser:
            frames, s, native, mark = fwd, fs, None, " [backward]"
    if s < 0:
        return NO_STACK
    if native:
        return native[1] if by == "file" else native[0]
    f = frames[s]
    if by == "file":
        return f[0]
    if by == "function":
        return "%s %s%s" % (f[0], f[2], mark)
    key = frame_text(f) + mark
    for c in callers(rules, frames, s, depth):
        key += " <- " + frame_text(c)
    return key


# ---- the diff -------------------------------------------------------------------------------

def live(snap):
    return [b for b in blocks_of(snap) if b[4] == "active_allocated"]


def kept_count(old_live, new_live):
    from collections import Counter
    co = Counter((d, a, s, fr) for d, a, s, _r, _st, fr in old_live)
    cn = Counter((d, a, s, fr) for d, a, s, _r, _st, fr in new_live)
    return sum(min(n, co[k]) for k, n in cn.items())


def order(groups):
    """Growth (largest first), then shrinking (most negative first), then unchanged. A group
    whose requested bytes did not change is unchanged (allocator rounding moved it)."""
    def delta(k):
        g = groups[k]
        return g[2] - g[0] if g[5] != g[4] else 0
    grow = sorted((k for k in groups if delta(k) > 0), key=lambda k: (-delta(k), k))
    shrink = sorted((k for k in groups if delta(k) < 0), key=lambda k: (delta(k), k))
    zero = sorted((k for k in groups if delta(k) == 0), key=lambda k: (-groups[k][2], k))
    return grow + shrink + zero


def paired(old, new):
    """NEW as the diff sees it: when each file uses one device (segments or trace entries)
    and their ordinals differ (rank r on device r), NEW's device takes OLD's ordinal
    (issue 19); otherwise NEW itself."""
    if old is None:
        return new
    do, dn = devices_of(old), devices_of(new)
    if len(do) != 1 or len(dn) != 1 or do == dn:
        return new
    o, n = do[0], dn[0]
    out = dict(new)
    out["segments"] = [dict(seg, device=o) if seg.get("device", 0) == n else seg
                       for seg in new["segments"]]
    traces = list(new.get("device_traces") or [])
    if traces:
        moved = traces[n] if n < len(traces) else []
        traces = [[] if i == n else t for i, t in enumerate(traces)]
        traces += [[] for _ in range(o + 1 - len(traces))]
        traces[o] = moved
        out["device_traces"] = traces
    return out


def compute(old, new, group_by="site", depth=0, hide=(), show=(), focus=()):
    """The figures for two loaded snapshots (load() results)."""
    new = paired(old, new)
    rules = Rules(hide, show)
    focus_re = [re.compile(p) for p in focus]
    old_live, new_live = live(old), live(new)

    # groups[(key, device)] = [old bytes, old blocks, new bytes, new blocks, old requested,
    # new requested]: a site is one group per device, never summed over devices
    groups = {}
    stacks = {}   # (key, device) -> per side {frames: bytes}, for the moved pairing
    for side, blocks in ((0, old_live), (2, new_live)):
        for dev, _a, size, req, _st, frames in blocks:
            if focus_re and not any(r.search(frame_text(f)) for f in frames for r in focus_re):
                continue
            key = group_key(rules, group_by, depth, frames)
            g = groups.setdefault((key, dev), [0] * 6)
            g[side] += size
            g[side + 1] += 1
            g[4 + side // 2] += req
            st = stacks.setdefault((key, dev), ({}, {}))[side // 2]
            st[frames] = st.get(frames, 0) + size
    moved = pair_moved(rules, group_by, depth, groups, stacks) if old is not None else {}

    per_old, tot_old = totals(old)
    per_new, tot_new = totals(new)
    kept = kept_count(old_live, new_live)
    return {
        "old": tot_old,
        "new": tot_new,
        "blocks_kept": kept,
        "blocks_new": len(new_live) - kept,
        "blocks_freed": len(old_live) - kept,
        "devices": {str(d): {"old": per_old.get(d), "new": per_new.get(d)}
                    for d in sorted(set(per_old) | set(per_new))},
        "groups": groups,
        "order": order(groups),
        "moved": moved,
    }


# ---- code that moved (docs/json-diff.md "moved_from", issue 36) -------------------------------

def _shape(rules, by, depth, frames):
    """The key on the same frames with every line 0, and the files and functions."""
    zero = Stack((f[0], 0, f[2]) for f in frames)
    zero.fwd = tuple((f[0], 0, f[2]) for f in getattr(frames, "fwd", ()))
    return (group_key(rules, by, depth, zero),
            tuple((f[0], f[2]) for f in frames if not is_native_noise(f)))


def _site_frame(rules, frames):
    s, _n, is_user = site_of(rules, frames) if frames else (-1, None, False)
    fwd = getattr(frames, "fwd", ())
    if not is_user and fwd:
        fs, _fn, fuser = site_of(rules, fwd)
        if fuser:
            return fwd[fs]
    return frames[s] if s >= 0 else None


def pair_moved(rules, by, depth, groups, stacks):
    """Pair the groups only OLD has with those only NEW has whose keys differ in lines only
    and whose representative stacks (most bytes) have one shape, per device, in line order,
    when there are as many of each. Merges each pair into NEW's key in `groups` (OLD's
    removed) and returns {(new key, device): (old key, OLD's site frame)}."""
    if by not in ("site", "leaf", "stack"):
        return {}
    classes = {}
    for (key, dev), g in groups.items():
        if key == NO_STACK or (g[1] and g[3]):
            continue
        side = 0 if g[1] else 1
        rep = max(stacks[(key, dev)][side].items(), key=lambda kv: kv[1])[0]
        f = _site_frame(rules, rep)
        if f is None:
            continue
        c = classes.setdefault((dev, _shape(rules, by, depth, rep)), ([], []))
        c[side].append((f[1], key, f))
    moved = {}
    for (dev, _s), (olds, news) in classes.items():
        if not olds or len(olds) != len(news):
            continue
        for o, n in zip(sorted(olds), sorted(news)):
            og, ng = groups.pop((o[1], dev)), groups[(n[1], dev)]
            ng[0], ng[1], ng[4] = og[0], og[1], og[4]
            moved[(n[1], dev)] = (o[1], o[2])
    return moved


# ---- warnings (src/analysis/diff_warn.c) -----------------------------------------------------

FEW_SHARED_PCT = 50.0
NO_STACK_PCT = 50.0


def _settings_differ(a, b):
    if not isinstance(a, dict) or not isinstance(b, dict):
        return None
    if a.get("PYTORCH_CUDA_ALLOC_CONF") != b.get("PYTORCH_CUDA_ALLOC_CONF"):
        return "PYTORCH_CUDA_ALLOC_CONF"
    for k in ("expandable_segments", "max_split_size", "garbage_collection_threshold"):
        if k in a and k in b and a[k] != b[k]:
            return k
    return None


def _overflowed(snap):
    st = snap.get("allocator_settings")
    return isinstance(st, dict) and any(bool(st.get(k)) for k in
                                        ("trace_alloc_overflowed", "trace_overflowed"))


def _newest_time(snap):
    times = [e["time_us"] for t in (snap.get("device_traces") or []) for e in t or []
             if isinstance(e.get("time_us"), int)]
    return max(times) if times else None


def warnings(old, new, group_by="site"):
    """The diff's warnings, in the order snapdiff gives them: [{"code", ...}]."""
    new = paired(old, new)
    out = []
    rules = Rules((), ())
    sides = (live(old), live(new))
    if group_by != "stack":
        sites = [{}, {}]
        for w, blocks in enumerate(sides):
            for _d, _a, size, _r, _st, frames in blocks:
                key = group_key(rules, group_by, 0, frames)
                if key != NO_STACK:
                    sites[w][key] = sites[w].get(key, 0) + size
        old_s, new_s = ({k for k, v in s.items() if v} for s in sites)
        if old_s and new_s:
            shared = old_s & new_s
            every = sum(sites[0].values()) + sum(sites[1].values())
            inside = sum(sites[0][k] + sites[1][k] for k in shared)
            pct = 100.0 * inside / every if every else 0.0
            if not shared:
                out.append({"code": "no_shared_site", "sites": len(old_s | new_s)})
            elif pct < FEW_SHARED_PCT:
                out.append({"code": "few_shared_sites", "shared_sites": len(shared),
                            "sites": len(old_s | new_s), "shared_pct": pct})
    tot = (totals(old)[0], totals(new)[0])
    for d in sorted(set(tot[0]) | set(tot[1])):
        if (d in tot[0]) == (d in tot[1]):
            continue
        w = 0 if d in tot[0] else 1
        t = tot[w][d]
        if t["reserved"] or t["allocated"]:
            out.append({"code": "devices_differ", "device": d, "side": ("old", "new")[w],
                        "allocated_bytes": t["allocated"]})
    which = _settings_differ(old.get("allocator_settings"), new.get("allocator_settings"))
    if which:
        out.append({"code": "settings_differ", "setting": which})
    for w, snap in enumerate((old, new)):
        if _overflowed(snap):
            out.append({"code": "trace_overflowed", "side": ("old", "new")[w]})
    for w, blocks in enumerate(sides):
        live_bytes = sum(b[2] for b in blocks)
        none = sum(b[2] for b in blocks if group_key(rules, group_by, 0, b[5]) == NO_STACK)
        if none and 100.0 * none / live_bytes > NO_STACK_PCT:
            out.append({"code": "mostly_no_stack", "side": ("old", "new")[w],
                        "no_stack_bytes": none, "allocated_bytes": live_bytes})
    t_old, t_new = _newest_time(old), _newest_time(new)
    if t_old is not None and t_new is not None and t_new < t_old:
        out.append({"code": "swapped", "old_newest_time_us": t_old, "new_newest_time_us": t_new})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--group-by", default="site")
    ap.add_argument("--depth", type=int, default=0)
    ap.add_argument("--hide", action="append", default=[])
    ap.add_argument("--show", action="append", default=[])
    ap.add_argument("--focus", action="append", default=[])
    a = ap.parse_args()
    out = compute(load(a.old), load(a.new), a.group_by, a.depth, a.hide, a.show, a.focus)
    out["groups"] = {"%s @device %d" % k: v for k, v in out["groups"].items()}
    out["order"] = ["%s @device %d" % k for k in out["order"]]
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
