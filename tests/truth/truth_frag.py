#!/usr/bin/env python3
"""Independent computation of every `snapdiff frag` figure, straight from pickle.load.

This is the test oracle for src/analysis/frag.c: it shares no code with it, only the
definitions written down in docs/json-frag.md. It prints one JSON document shaped like
the "files" entries of `snapdiff frag --json` (figures, pools, streams, OOM events,
verdict per device and in total; not the advice texts).

Usage: truth_frag.py [--gap-threshold PCT] [--index-threshold X] FILE...
"""
import argparse
import json
import pickle
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
N_BUCKETS = 22                     # < 1 KiB, [1 KiB, 2 KiB) ... [512 MiB, 1 GiB), >= 1 GiB
ROOM_BYTES = 2 * MIB               # a largest free block below this is "no free room"
ROOM_PCT = 5                       # ... and so is free memory below 5% of reserved
MIN_STRANDED = 256 * MIB           # fragmented needs at least this much stranded free memory
MIN_STRANDED_PCT = 10              # ... and at least 10% of reserved
MIN_COST = 256 * MIB               # with a trace: fragmentation costs at least this at the peak
MIN_COST_PCT = 10                  # ... and 10% of the peak reserved (issue 26)
SMALL_PAGE = 2 * MIB               # expandable segment page, small pool
LARGE_PAGE = 20 * MIB              # expandable segment page, large pool
SMALL_REQUEST = 1 * MIB            # requests up to this go to the small pool
SPLIT_SEGMENT = 512 * MIB          # large segments at least this big count as "large splits"
OOM_SITES = 5                      # the largest sites live at an oom (SD_FRAG_OOM_SITES)
OOM_REPLAY_LIMIT = 64              # replay figures for the last 64 oom entries per device
OOM_LIVE_STEPS = 50000000          # live-at-oom replays: trace entries in all (frag.h)

ALLOCATED, PENDING, INACTIVE, OTHER = "allocated", "pending", "inactive", "other"
STATES = {"active_allocated": ALLOCATED, "active_pending_free": PENDING, "inactive": INACTIVE}


# ---- the model (the same semantics as src/model/snapshot.c) ----------------------------

class Seg:
    def __init__(self, raw):
        self.device = raw.get("device", 0)
        self.address = raw.get("address", 0)
        self.total_size = raw.get("total_size", 0)
        self.stream = raw.get("stream", 0)
        self.small = raw.get("segment_type") == "small"
        self.expandable = bool(raw.get("is_expandable", False))
        pid = raw.get("segment_pool_id", (0, 0))
        self.pool_id = (pid[0], pid[1]) if pid is not None else (0, 0)
        self.blocks = []
        self.raw_blocks = []    # the pickled block dicts, for their frames
        offset = 0
        for b in raw.get("blocks", []):
            self.raw_blocks.append(b)
            size = b.get("size", 0)
            addr = b["address"] if "address" in b else self.address + offset
            offset += size
            if "requested_size" in b:
                req = b["requested_size"]
            elif b.get("history"):
                req = b["history"][0].get("real_size", size)
            else:
                req = size
            self.blocks.append((addr, size, req, STATES.get(b.get("state"), OTHER)))

    @property
    def default_pool(self):
        return self.pool_id == (0, 0)


def load(path):
    with open(path, "rb") as f:
        top = pickle.load(f)
    if isinstance(top, list):
        raw_segs, traces, settings = top, [], None
    else:
        raw_segs = top.get("segments", [])
        traces = top.get("device_traces", []) or []
        settings = top.get("allocator_settings")
    segs = [Seg(r) for r in raw_segs]
    devices = sorted({s.device for s in segs} | {i for i, t in enumerate(traces) if t})
    per_dev = {}
    for d in devices:
        dsegs = sorted((s for s in segs if s.device == d), key=lambda s: s.address)
        trace = traces[d] if 0 <= d < len(traces) else []
        per_dev[d] = (dsegs, trace)
    return per_dev, settings


# ---- figures ---------------------------------------------------------------------------

def bucket_of(size):
    if size < KIB:
        return 0
    if size >= GIB:
        return N_BUCKETS - 1
    return size.bit_length() - 1 - 9          # [1 KiB, 2 KiB) -> 1 ... [512 MiB, 1 GiB) -> 20


def bucket_bounds(i):
    if i == 0:
        return 0, KIB
    if i == N_BUCKETS - 1:
        return GIB, None
    return 1 << (i + 9), 1 << (i + 10)


def releasable(seg):
    """Bytes torch.cuda.empty_cache() would hand back to the driver for this segment."""
    if not seg.default_pool:
        return 0                               # private pools live as long as their graph
    if not seg.expandable:
        return seg.total_size if all(b[3] == INACTIVE for b in seg.blocks) else 0
    return sum(released_part(seg, b) for b in seg.blocks)


def released_part(seg, block):
    """The bytes of one block that empty_cache() would release (0 for live blocks)."""
    addr, size, _req, state = block
    if state != INACTIVE or not seg.default_pool:
        return 0
    if not seg.expandable:
        return size if all(b[3] == INACTIVE for b in seg.blocks) else 0
    page = SMALL_PAGE if seg.small else LARGE_PAGE
    first = -(-(addr - seg.address) // page)              # first whole page inside
    last = (addr + size - seg.address) // page            # end of the last whole page
    return (last - first) * page if last > first else 0


def figures(segs):
    f = {"segments": len(segs), "blocks": 0, "free_blocks": 0, "reserved_bytes": 0,
         "allocated_bytes": 0, "internal_waste_bytes": 0, "external_free_bytes": 0,
         "pending_free_bytes": 0, "largest_free_bytes": 0, "free_below_1mib_bytes": 0,
         "empty_cache_releasable_bytes": 0, "stranded_free_bytes": 0,
         "largest_stranded_bytes": 0, "expandable_tail_bytes": 0}
    hist = [[0, 0] for _ in range(N_BUCKETS)]
    alloc_sizes, free_sizes = [], []
    for s in segs:
        f["reserved_bytes"] += s.total_size
        f["empty_cache_releasable_bytes"] += releasable(s)
        # the free tail of a live expandable segment (issue 36): its whole free pages
        if s.expandable and any(b[3] != INACTIVE for b in s.blocks):
            f["expandable_tail_bytes"] += releasable(s)
        for _addr, size, req, state in s.blocks:
            f["blocks"] += 1
            if state == ALLOCATED:
                f["allocated_bytes"] += size
                f["internal_waste_bytes"] += max(0, size - req)
                alloc_sizes.append(size)
            elif state == PENDING:
                f["pending_free_bytes"] += size
            elif state == INACTIVE:
                f["free_blocks"] += 1
                f["external_free_bytes"] += size
                f["largest_free_bytes"] = max(f["largest_free_bytes"], size)
                stranded = size - released_part(s, (_addr, size, req, state))
                f["stranded_free_bytes"] += stranded
                f["largest_stranded_bytes"] = max(f["largest_stranded_bytes"], stranded)
                if size < MIB:
                    f["free_below_1mib_bytes"] += size
                hist[bucket_of(size)][0] += 1
                hist[bucket_of(size)][1] += size
                free_sizes.append(size)
    f["gap_bytes"] = max(0, f["reserved_bytes"] - f["allocated_bytes"])
    f["gap_pct"] = 100.0 * f["gap_bytes"] / f["reserved_bytes"] if f["reserved_bytes"] else 0.0
    free = f["external_free_bytes"]
    f["fragmentation_index"] = 1.0 - f["largest_free_bytes"] / free if free else 0.0
    stranded = f["stranded_free_bytes"]
    f["stranded_index"] = 1.0 - f["largest_stranded_bytes"] / stranded if stranded else 0.0
    alloc_sizes.sort()
    median = alloc_sizes[(len(alloc_sizes) - 1) // 2] if alloc_sizes else 0
    f["median_allocated_bytes"] = median
    f["free_below_median_bytes"] = sum(x for x in free_sizes if x < median)
    f["free_histogram"] = []
    for i, (blocks, nbytes) in enumerate(hist):
        lo, hi = bucket_bounds(i)
        f["free_histogram"].append({"min_bytes": lo, "max_bytes": hi, "blocks": blocks,
                                    "bytes": nbytes})
    return f


def pool_groups(segs):
    """[(name, pool_id, segments)]: large, small, then private pools by id."""
    out = []
    large = [s for s in segs if s.default_pool and not s.small]
    small = [s for s in segs if s.default_pool and s.small]
    if large:
        out.append(("large", [0, 0], large))
    if small:
        out.append(("small", [0, 0], small))
    for pid in sorted({s.pool_id for s in segs if not s.default_pool}):
        out.append(("pool (%d,%d)" % pid, list(pid), [s for s in segs if s.pool_id == pid]))
    return out


def large_split_free(segs):
    """Free bytes inside big default large-pool segments that also hold live blocks."""
    total = 0
    for s in segs:
        if s.small or not s.default_pool or s.total_size < SPLIT_SEGMENT:
            continue
        states = [b[3] for b in s.blocks]
        if INACTIVE in states and any(st != INACTIVE for st in states):
            total += sum(b[1] for b in s.blocks if b[3] == INACTIVE)
    return total


# ---- OOM events: replay the trace backwards from the snapshot --------------------------

def round_request(size):
    return 512 if size < 512 else (size + 511) // 512 * 512


class Replay:
    """Allocator state going back in time: segments and live (busy) blocks by address."""

    def __init__(self, segs):
        self.segs = {}          # address -> [size, stream, small, default_pool]
        self.busy = {}          # address -> size
        self.site = {}          # address -> the diff's site key of the block's frames
        for s in segs:
            self.segs[s.address] = [s.total_size, s.stream, s.small, s.default_pool]
            for (addr, size, _req, state), raw in zip(s.blocks, s.raw_blocks):
                if state != INACTIVE:
                    self.busy[addr] = size
                    self.site[addr] = site_key(raw)
        self.failure = None

    def undo(self, i, e):
        """Undo trace entry i; returns a failure text or None."""
        act, addr, size = e.get("action"), e.get("addr", 0), e.get("size", 0)
        where = "trace entry %d (%s at 0x%x)" % (i, act, addr)
        if act == "alloc":
            if addr not in self.busy:
                return where + ": no live block there later"
            del self.busy[addr]
        elif act == "free_requested":
            if addr not in self.busy:
                return where + ": no live block there later"
        elif act == "free_completed":
            if addr in self.busy:
                return where + ": block is live later"
            self.busy[addr] = round_request(size)
            self.site[addr] = site_key(e)
        elif act == "segment_alloc":
            if addr not in self.segs:
                return where + ": no such segment later"
            del self.segs[addr]
        elif act == "segment_free":
            if addr in self.segs:
                return where + ": segment exists later"
            self.segs[addr] = [size, e.get("stream", 0), size <= SMALL_PAGE, True]
        elif act == "segment_map":
            return self.undo_map(addr, size, where)
        elif act == "segment_unmap":
            self.undo_unmap(addr, size, e.get("stream", 0))
        return None

    def undo_map(self, addr, size, where):
        seg = self.segs.get(addr)
        if seg is not None:                         # the range starts a segment
            if seg[0] < size:
                return where + ": segment smaller than the mapping"
            del self.segs[addr]
            if seg[0] > size:
                self.segs[addr + size] = [seg[0] - size] + seg[1:]
            return None
        for a, s in self.segs.items():              # the range ends a segment
            if a + s[0] == addr + size and a < addr:
                s[0] -= size
                return None
        return where + ": no segment holds the mapping"

    def undo_unmap(self, addr, size, stream):
        before = next((a for a, s in self.segs.items() if a + s[0] == addr), None)
        after = self.segs.get(addr + size)
        if before is not None:
            self.segs[before][0] += size
            if after is not None:
                self.segs[before][0] += after[0]
                del self.segs[addr + size]
        elif after is not None:
            del self.segs[addr + size]
            self.segs[addr] = [after[0] + size] + after[1:]
        else:
            self.segs[addr] = [size, stream, size <= SMALL_PAGE, True]

    def allocator_free(self):
        """(wholly free cached segments, free space stranded in segments with live
        blocks), over every segment of any pool and stream."""
        cached = stranded = 0
        for a, (size, _st, _sm, _d) in self.segs.items():
            end, pos, free, busy = a + size, a, 0, False
            for b_lo, b_size in sorted(self.busy.items()):
                b_hi = b_lo + b_size
                if b_hi <= pos or b_lo >= end:
                    continue
                busy = True
                if b_lo > pos:
                    free += b_lo - pos
                pos = b_hi
            free += max(end - pos, 0)
            if busy:
                stranded += free
            else:
                cached += free
        return cached, stranded

    def live(self):
        return [(size, self.site.get(a)) for a, size in self.busy.items()]

    def free_runs(self, stream, small):
        """Sizes of the free runs in matching segments (default pool, stream, size class)."""
        busy = sorted(self.busy.items())
        runs = []
        import bisect
        starts = [a for a, _ in busy]
        for a, (size, st, sm, dflt) in self.segs.items():
            if not dflt or st != stream or sm != small:
                continue
            end = a + size
            pos = a
            k = bisect.bisect_right(starts, a) - 1
            if k < 0:
                k = 0
            while k < len(busy) and busy[k][0] < end:
                b_lo, b_hi = busy[k][0], busy[k][0] + busy[k][1]
                if b_hi > pos:
                    if b_lo > pos:
                        runs.append(b_lo - pos)
                    pos = b_hi
                k += 1
            if end > pos:
                runs.append(end - pos)
        return runs


def snapshot_runs(segs, stream, small):
    return [b[1] for s in segs if s.default_pool and s.stream == stream and s.small == small
            for b in s.blocks if b[3] == INACTIVE]


def site_key(block):
    """The diff's site key of a block's (or trace entry's) frames; None without frames."""
    import truth_diff
    frames = truth_diff.frames_of(block)
    key = truth_diff.group_key(truth_diff.Rules((), ()), "site", 0, frames)
    return None if key == truth_diff.NO_STACK else key


def snapshot_allocator_free(segs):
    cached = stranded = 0
    for s in segs:
        free = sum(b[1] for b in s.blocks if b[3] == INACTIVE)
        if any(b[3] != INACTIVE for b in s.blocks):
            stranded += free
        else:
            cached += free
    return cached, stranded


def snapshot_live(segs):
    return [(b[1], site_key(raw)) for s in segs for b, raw in zip(s.blocks, s.raw_blocks)
            if b[3] != INACTIVE]


PROCESS_LIMIT_SLACK = 1 << 30


def segment_for(request):
    """The segment alloc_block asks cudaMalloc for: round_size (512 B), then
    get_allocation_size (2 MiB small, 20 MiB below 10 MiB, else 2 MiB multiples)."""
    size = max(512, -(-request // 512) * 512)
    if size <= 1 << 20:
        return 2 << 20
    if size < 10 << 20:
        return 20 << 20
    return -(-size // (2 << 20)) * (2 << 20)


def process_limit(request, device_free):
    """The device had room for the request's segment (and a GiB to spare): what refused
    it was the process's limit (set_per_process_memory_fraction), not cudaMalloc."""
    return device_free > segment_for(request) + PROCESS_LIMIT_SLACK


def oom_cause(request, device_free, largest, allocator_free):
    """capacity: all free (device + allocator) < request; fragmentation: enough in all,
    no piece; both: short in all, but the allocator's free covers at least half of what
    the device lacked. Under a process limit the device's free memory does not count."""
    if process_limit(request, device_free):
        device_free = 0
    if largest >= request:
        return "unclear"
    if device_free + allocator_free >= request:
        return "fragmentation"
    return "both" if 2 * allocator_free >= request - device_free else "capacity"


def site_bytes(live):
    """The bytes of the largest SITES sites live at an oom, largest first."""
    by = {}
    for size, key in live:
        if key is not None:
            by[key] = by.get(key, 0) + size
    return sorted(by.values(), reverse=True)[:OOM_SITES]


def oom_site(e):
    """The line that asked: the diff's site rule (tests/truth/truth_diff.py) over the entry's
    frames, and the frames without PyTorch's noise."""
    import truth_diff
    frames = truth_diff.frames_of(e)
    i = truth_diff.site_of(truth_diff.Rules((), ()), list(frames))[0]

    def as_json(f):
        return {"filename": f[0], "line": f[1], "name": f[2]}
    return (as_json(frames[i]) if i >= 0 else None,
            [as_json(f) for f in frames if not truth_diff.is_noise(f)])


def oom_events(segs, trace):
    idx = [i for i, e in enumerate(trace) if e.get("action") == "oom"]
    if not idx:
        return []
    replayed_from = set(idx[-OOM_REPLAY_LIMIT:])
    found = {}
    rep = Replay(segs)
    failure = None
    for i in range(len(trace) - 1, -1, -1):      # on to the first entry: the run's start?
        e = trace[i]
        if i < idx[0] and failure is not None:
            break
        if e.get("action") == "oom":
            request = e.get("size", 0)
            small = request <= SMALL_REQUEST
            stream = e.get("stream", 0)
            if failure is None and i in replayed_from:
                runs, src, note = rep.free_runs(stream, small), "replay", None
                (cached, stranded), live = rep.allocator_free(), rep.live()
            else:
                runs, src = snapshot_runs(segs, stream, small), "snapshot"
                note = failure if failure else "replay is limited to the last %d oom entries" \
                    % OOM_REPLAY_LIMIT
                (cached, stranded), live = snapshot_allocator_free(segs), snapshot_live(segs)
            largest, free = max(runs, default=0), sum(runs)
            dev_free = e.get("device_free", 0)
            found[i] = {"trace_index": i, "time_us": e.get("time_us"),
                        "request_bytes": request, "device_free_bytes": dev_free,
                        "stream": stream, "pool": "small" if small else "large",
                        "largest_free_bytes": largest, "free_bytes": free,
                        "source": src, "note": note,
                        "cause": oom_cause(request, dev_free, largest, cached + stranded),
                        "process_limit": process_limit(request, dev_free),
                        "allocator_free_bytes": cached + stranded,
                        "cached_free_bytes": cached, "stranded_free_bytes": stranded,
                        "all_free_bytes": dev_free + cached + stranded,
                        "live_bytes": sum(x[0] for x in live), "live_blocks": len(live),
                        "live_site_bytes": site_bytes(live)}
            found[i]["site"], found[i]["stack"] = oom_site(e)
        if failure is None:
            failure = rep.undo(i, e)
    at_start = failure is None and not rep.busy and not rep.segs
    for i in idx:
        found[i]["at_run_start"] = at_start and found[i]["source"] == "replay"
    return [found[i] for i in idx]


# ---- verdict ---------------------------------------------------------------------------

def peak_cost(path, per_dev):
    """{device: (peak reserved, peak live)} for the devices whose trace has an alloc: the
    recorded peak reserved (truth_replay.py) and the peak (truth_peak.py)."""
    import truth_peak
    import truth_replay
    with open(path, "rb") as fh:
        snap = pickle.load(fh)
    if isinstance(snap, list):
        return {}
    reserved = truth_replay.recorded(snap)
    out = {}
    for d in truth_peak.compute(snap)["devices"]:
        if d["peak_bytes"] is not None and d["device"] in reserved:
            out[d["device"]] = (reserved[d["device"]]["peak"], d["peak_bytes"])
    return out


def verdict(f, ooms, gap_pct, index, cost=None, replay_cost=None):
    """cost: (peak reserved, peak live) with a trace; replay_cost: what the trusted replay
    under expandable_segments:True saved (the tool's own figure, taken as given: the
    replay is checked by its own tests), or None."""
    if f["reserved_bytes"] == 0:
        return "compact"
    if any(o["cause"] == "fragmentation" for o in ooms):
        return "fragmented"
    # fragmentation is judged on the free memory stranded inside segments that hold live
    # blocks (not on wholly free cached segments), above a floor, and in small pieces
    stranded = f["stranded_free_bytes"]
    if cost is not None:
        # with a trace, by what it cost at the peak (the trusted replay's saving decides)
        c = replay_cost if replay_cost is not None else max(cost[0] - cost[1], 0)
        if c >= MIN_COST and c * 100 >= cost[0] * MIN_COST_PCT:
            return "fragmented"
    elif f["gap_pct"] >= gap_pct and stranded >= MIN_STRANDED \
            and stranded * 100 >= f["reserved_bytes"] * MIN_STRANDED_PCT \
            and f["stranded_index"] >= index:
        return "fragmented"
    no_room = f["largest_free_bytes"] < ROOM_BYTES \
        or f["external_free_bytes"] * 100 < f["reserved_bytes"] * ROOM_PCT
    if f["gap_pct"] < gap_pct and no_room:
        return "full"              # live tensors fill reserved; one snapshot shows no leak
    return "compact"


SEVERITY = {"compact": 0, "full": 1, "fragmented": 2}


def live_at_ooms(path, per_dev):
    """What was live after each of the last OOM_REPLAY_LIMIT oom entries by the one peak rule
    (tests/truth/truth_peak.py's replay: the blocks live before recording began count), by the
    diff's site key; blocks with no frames count in live_bytes but name no site. Older oom
    entries: None (not computed)."""
    import truth_diff
    import truth_peak
    with open(path, "rb") as f:
        snap = pickle.load(f)
    if isinstance(snap, list):
        snap = {"segments": snap}
    blocks = [b for b in truth_diff.blocks_of(snap) if b[4] == "active_allocated"]
    rules = truth_diff.Rules((), ())
    out = {}
    for d, (_segs, trace) in per_dev.items():
        idx = [i for i, e in enumerate(trace) if e.get("action") == "oom"]
        if not idx:
            continue
        mine = [b for b in blocks if b[0] == d]
        _rel, live_end, early = truth_peak.replay(trace)
        leftovers = [(b[2], b[5]) for b in mine if b[1] not in live_end]
        limit = max(1, min(OOM_REPLAY_LIMIT, OOM_LIVE_STEPS // max(1, len(trace))))
        for at in idx[-limit:]:
            _r, live, _e = truth_peak.replay(trace, at)
            items = list(leftovers)
            # allocated before recording: the free's frames are not its site (issue 26)
            items += [(trace[i].get("size", 0), truth_diff.Stack(()))
                      for i in early if i > at]
            items += [(size, truth_diff.frames_of(trace[i])) for size, i in live.values()]
            by = {}
            for size, st in items:
                k = truth_diff.group_key(rules, "site", 0, st)
                if k != truth_diff.NO_STACK:
                    by[k] = by.get(k, 0) + size
            out[(d, at)] = (sum(x[0] for x in items), len(items),
                            sorted(by.values(), reverse=True))
    return out


def analyse(path, gap_pct, index, replay_costs=None):
    """replay_costs: {device: bytes or None}, the tool's fragmentation_cost_replay_bytes."""
    per_dev, _settings = load(path)
    live_at = live_at_ooms(path, per_dev)
    costs = peak_cost(path, per_dev)
    devices, all_segs = [], []
    for d, (segs, trace) in per_dev.items():
        all_segs.extend(segs)
        f = figures(segs)
        f["device"] = d
        f["large_split_free_bytes"] = large_split_free(segs)
        f["pools"] = []
        for name, pid, psegs in pool_groups(segs):
            pf = figures(psegs)
            pf["pool"], pf["pool_id"] = name, pid
            f["pools"].append(pf)
        f["streams"] = []
        for st in sorted({s.stream for s in segs}):
            sf = figures([s for s in segs if s.stream == st])
            sf["stream"] = st
            f["streams"].append(sf)
        f["oom_events"] = oom_events(segs, trace)
        for o in f["oom_events"]:
            o["live_bytes"], o["live_blocks"], o["live_site_bytes"] = \
                live_at.get((d, o["trace_index"]), (None, None, None))
        cost = costs.get(d)
        f["peak_reserved_bytes"] = cost[0] if cost else None
        f["peak_live_bytes"] = cost[1] if cost else None
        f["fragmentation_cost_bytes"] = max(cost[0] - cost[1], 0) if cost else None
        f["verdict"] = verdict(f, f["oom_events"], gap_pct, index, cost,
                               (replay_costs or {}).get(d))
        devices.append(f)
    total = figures(all_segs)
    total["pools"] = []
    for name, pid, psegs in pool_groups(all_segs):
        pf = figures(psegs)
        pf["pool"], pf["pool_id"] = name, pid
        total["pools"].append(pf)
    total["verdict"] = max((d["verdict"] for d in devices), key=SEVERITY.get,
                           default="compact")
    return {"file": path, "devices": devices, "total": total}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gap-threshold", type=float, default=30.0)
    ap.add_argument("--index-threshold", type=float, default=0.5)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    out = {"files": [analyse(p, a.gap_threshold, a.index_threshold) for p in a.files]}
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
