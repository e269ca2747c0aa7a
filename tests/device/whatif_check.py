#!/usr/bin/env python3
"""whatif_check.py - `snapdiff replay` against what torch's caching allocator did on a GPU.

Reads what tests/device/whatif_record.py wrote (a folder, or a .tar.xz of it: the one in
testdata/torch/ was recorded on an NVIDIA H200 with torch 2.11) and checks, against the
figures torch itself reported (torch.cuda.memory_stats() of each run):

1. Each recording replayed under the settings it ran with (and, for a capped run, the
   same --capacity and --memory-fraction) is trusted, places 100% of requests where the
   allocator did, and reproduces torch's reserved_bytes.all.peak, num_alloc_retries and
   num_ooms exactly (for a run that OOMed: the figures where it stopped).
2. The what-ifs: the default setting's uncapped trace replayed under every other setting
   and limit says what the run under that setting did: OOM or not (always), and its
   peak reserved and retries. These are exact when the two runs made the same requests in
   the same order; when they did not (autocast's weight cache frees in hash-map order,
   which follows addresses, so a setting can reorder some frees), the peak is checked to
   within 1% and the difference printed.

    python3 whatif_check.py SNAPDIFF DIR_OR_TAR_XZ...     exit 0 all hold, 1 a check failed

Runs on a device whose memory was taken (whatif_record.py --device-limit: no fraction, the
job meets cudaMalloc's limit) are what-ifs under the capacity the default run met: reserved
at its oom entry plus the entry's device_free, as snapdiff takes it from an oom entry.

It also reads what tests/device/features_record.py wrote (side streams with record_stream
and empty_cache, expandable segments, a CUDA graph's private pool, pinned host memory,
annotations): each replayed as in 1; a trace recorded with skip_actions that drop the
frees must be judged not trusted.
"""
import json
import os
import pickle
import subprocess
import sys
import tarfile
import tempfile

TOLERANCE = 0.01     # of the peak, where the request orders differ


def device_capacity(pickle_path):
    """What cudaMalloc allowed the allocator, as the run that hit it recorded it: reserved
    at its oom entry (segments made less those released, from the trace's start) plus the
    entry's device_free. None when the run did not OOM."""
    with open(pickle_path, "rb") as f:
        trace = pickle.load(f)["device_traces"][0]
    reserved = 0
    for e in trace:
        if e["action"] in ("segment_alloc", "segment_map"):
            reserved += e["size"]
        elif e["action"] in ("segment_free", "segment_unmap"):
            reserved -= e["size"]
        elif e["action"] == "oom":
            return reserved + e["device_free"]
    return None


def replay(binary, pickle_path, confs, fig, capacity=None):
    args = [binary, "replay", "--json", "-q", pickle_path]
    if fig.get("fraction"):
        args += ["--capacity", str(fig["mem_get_info"][1]),
                 "--memory-fraction", repr(fig["fraction"])]
    elif capacity:
        args += ["--capacity", str(capacity)]
    for c in confs:
        args += ["--alloc-conf", c]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("FAIL: %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return json.loads(p.stdout)["devices"][0]


def requests(path, cache={}):
    """The request sequence up to the first OOM: (action, size) of every alloc and
    free_requested."""
    if path not in cache:
        with open(path, "rb") as f:
            trace = pickle.load(f)["device_traces"][0]
        seq = []
        for e in trace:
            if e["action"] == "oom":      # the job stopped here: what follows is clean-up
                break
            if e["action"] in ("alloc", "free_requested"):
                seq.append((e["action"], e["size"]))
        cache[path] = seq
    return cache[path]


def torch_figures(fig):
    st = fig["memory_stats"]
    return {"peak": st["reserved_bytes.all.peak"], "retries": st["num_alloc_retries"],
            "oom": st["num_ooms"] > 0}


def replay_figures(cfg):
    stop = cfg["first_oom"]
    return {"peak": stop["peak_reserved_bytes"] if stop else cfg["peak_reserved_bytes"],
            "retries": stop["alloc_retries"] if stop else cfg["alloc_retries"],
            "oom": stop is not None}


def main():
    binary = sys.argv[1]
    status = 0
    for where in sys.argv[2:]:
        status |= check_recordings(binary, where)
    return status


def check_recordings(binary, where):
    shown, tmp = where, None
    if where.endswith(".tar.xz"):
        tmp = tempfile.TemporaryDirectory()
        with tarfile.open(where) as t:
            t.extractall(tmp.name, filter="data") if hasattr(tarfile, "data_filter") \
                else t.extractall(tmp.name)
        where = tmp.name
    runs = {}
    for name in sorted(os.listdir(where)):
        if name.endswith(".json") and os.path.exists(os.path.join(where, name[:-5] + ".pickle")):
            with open(os.path.join(where, name)) as f:
                runs[name[:-5]] = json.load(f)
    if not runs:
        raise SystemExit("FAIL: no recordings in %s" % where)
    bad = checked = 0

    def check(what, ok, detail):
        nonlocal bad, checked
        checked += 1
        if not ok:
            bad += 1
        print("%s %-58s %s" % ("ok  " if ok else "FAIL", what, detail))

    print("%s:" % shown)
    print("1. each recording under its own settings (torch's figures = the replay's)")
    for stem, fig in runs.items():
        d = replay(binary, os.path.join(where, stem + ".pickle"), [], fig)
        fi = d["fidelity"]
        t, r = torch_figures(fig), replay_figures(d["configs"][0])
        if "skip_actions" in fig.get("recorded_with", []):
            # frees not recorded: the replay cannot follow the run and must say so
            check(stem + " (skip_actions: no frees)", not fi["trusted"],
                  "not trusted: %s" % fi["untrusted_why"])
            # torch wrote nothing that says so: trace must find the missing frees itself
            tr = subprocess.run([binary, "trace", "--json", "-q",
                                 os.path.join(where, stem + ".pickle")], capture_output=True,
                                text=True)
            codes = [w["code"] for w in json.loads(tr.stdout)["devices"][0]["warnings"]]
            check(stem + " (trace)", "frees-missing" in codes, "trace warnings %s" % codes)
            continue
        # one figure, one definition: stranded at the end is frag's stranded_free_bytes
        fr = subprocess.run([binary, "frag", "--json", "-q", os.path.join(where, stem + ".pickle")],
                            capture_output=True, text=True)
        stranded = json.loads(fr.stdout)["devices"][0]["stranded_free_bytes"]
        check(stem + " stranded", d["configs"][0]["stranded_bytes"] == stranded,
              "replay %d B, frag %d B" % (d["configs"][0]["stranded_bytes"], stranded))
        check(stem, fi["trusted"] and fi["placements_matched"] == fi["placements_checked"]
              and fi["segment_decisions_matched"] == fi["segment_decisions_checked"] and t == r,
              "placements %d/%d, peak %d MiB (torch %d), retries %d (%d), OOM %s (%s)"
              % (fi["placements_matched"], fi["placements_checked"], r["peak"] >> 20,
                 t["peak"] >> 20, r["retries"], t["retries"], r["oom"], t["oom"]))

    print("2. what-ifs from the default setting's uncapped trace")
    for stem, fig in runs.items():
        if stem.count(".") < 2:       # features_record.py's cases: no what-if
            continue
        workload, tag, _ = stem.split(".", 2)
        source = "%s.free.default" % workload
        if stem == source or source not in runs:
            continue
        conf = fig["alloc_conf"]
        src_pickle = os.path.join(where, source + ".pickle")
        # a device limit (no fraction): the capacity the default run met, from its oom
        capacity = None
        if fig.get("device_target"):
            capacity = device_capacity(os.path.join(where, "%s.%s.default.pickle" % (workload, tag)))
        d = replay(binary, src_pickle, [conf] if conf else [], fig, capacity)
        t, r = torch_figures(fig), replay_figures(d["configs"][-1])
        got, want = requests(os.path.join(where, stem + ".pickle")), requests(src_pickle)
        same = got == want[:len(got)]
        close = abs(r["peak"] - t["peak"]) <= TOLERANCE * t["peak"]
        ok = r["oom"] == t["oom"] and (r == t if same else close)
        check("%s as %s" % (source, stem), ok,
              "OOM %s (torch %s), peak %d MiB (torch %d)%s"
              % (r["oom"], t["oom"], r["peak"] >> 20, t["peak"] >> 20,
                 ", retries %d (%d)" % (r["retries"], t["retries"]) if same else
                 "; the run's requests came in another order (%+d MiB)"
                 % ((r["peak"] - t["peak"]) >> 20 if r["peak"] >= t["peak"]
                    else -((t["peak"] - r["peak"]) >> 20))))
    print("%d of %d checks hold" % (checked - bad, checked))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
