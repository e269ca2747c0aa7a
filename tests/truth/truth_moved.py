#!/usr/bin/env python3
"""Independent CPython computation of the moved sites of `snapdiff OLD NEW` (issue 36).

    truth_moved.py OLD NEW [--group-by site|leaf|stack]

Prints JSON: every group after pairing, {"key", "device", "old_bytes", "old_blocks",
"new_bytes", "new_blocks", "old_req", "new_req", "moved_from": null | {"filename", "line"}},
plus "moved_groups" and "live_identical", as docs/json-diff.md ("moved_from") defines them.

The pairing is truth_diff.pair_moved, written from that definition and sharing no code with
src/analysis/diff_moved.c: a group's shape is its key computed on the same frames with every
line set to 0, and the (filename, name) of its representative stack's frames (native noise
aside), where the C code strips the digits from the key text. Test data only: never run it
on untrusted files.
"""
import argparse
import json
import sys

import truth_diff as T


def compute(old_path, new_path, by="site"):
    old, new = T.load(old_path), T.load(new_path)
    r = T.compute(old, new, by)
    out = []
    for (key, dev), g in sorted(r["groups"].items()):
        m = r["moved"].get((key, dev))
        out.append({"key": key, "device": dev, "old_bytes": g[0], "old_blocks": g[1],
                    "new_bytes": g[2], "new_blocks": g[3], "old_req": g[4], "new_req": g[5],
                    "moved_from": {"filename": m[1][0], "line": m[1][1]} if m else None})
    devs = set(r["devices"])
    same_devices = all(((r["devices"][d]["old"] or {}).get("allocated", 0)
                        == (r["devices"][d]["new"] or {}).get("allocated", 0)) for d in devs)
    identical = same_devices and all(
        g["old_bytes"] == g["new_bytes"] and g["old_blocks"] == g["new_blocks"]
        and g["old_req"] == g["new_req"] for g in out)
    return {"groups": out, "moved_groups": len(r["moved"]), "live_identical": identical}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--group-by", default="site")
    a = ap.parse_args()
    json.dump(compute(a.old, a.new, a.group_by), sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    sys.exit(main())
