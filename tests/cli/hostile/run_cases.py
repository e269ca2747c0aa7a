#!/usr/bin/env python3
"""Run snapdiff over the hostile corpus and check that nothing in a file can hurt it.

    run_cases.py --bin SNAPDIFF --dir WORKDIR [--group G ...] [--case REGEX]
                 [--valgrind] [--sample N] [--skip-slow] [--jobs N]

Generates the corpus with make_cases.py into WORKDIR (unless --no-make), then runs
`snapdiff stats CASE` and `snapdiff dump CASE` on every case and checks, per run:
  * the wall time stays under the case's bound (default 10 s) and the process is not
    killed by a signal;
  * memory stays bounded: RLIMIT_AS 2 GiB when the binary is not built with ASan (which
    reserves terabytes of address space; 4 GiB under valgrind), and peak RSS (wait4)
    under --rss-mb except under valgrind;
  * stdout stays under the case's byte bound (dump of DAGs and cycles);
  * no sanitizer report, and with --valgrind no memcheck error or definite/indirect leak;
  * the exit status and stderr match the case: "error" = exit 2 and exactly one line
    "snapdiff: NAME...", with ": offset N: " or the member where the case needs it;
    "warn" = exit 0 with a warning line (or a clean error); "ok" = exit 0; "any" = 0 or a
    clean error;
  * a marker file that a code-execution attempt would create does not exist.
Exit status 0 when every run passes, 1 otherwise (each failure is described).
"""
import argparse
import concurrent.futures
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SANITIZER_RE = re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|"
                          r"runtime error:|MemorySanitizer|==\d+==ERROR")
OFFSET_RE = re.compile(r": offset (\d+|0x[0-9a-fA-F]+): ")
KEEP = 1 << 20          # bytes of stdout/stderr kept for checks and reports


def binary_has_asan(path):
    with open(path, "rb") as f:
        data = f.read()
    return b"__asan_init" in data


class Run:
    """One finished process: exit status, captured output, time, peak RSS."""
    def __init__(self):
        self.rc = None
        self.stdout = b""
        self.stderr = b""
        self.stdout_len = 0
        self.timed_out = False
        self.seconds = 0.0
        self.maxrss_kib = 0


def run_bounded(argv, cwd, stdin_path, timeout, env):
    r = Run()
    stdin = open(stdin_path or os.devnull, "rb")
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(argv, cwd=cwd, stdin=stdin, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env, start_new_session=True)
    finally:
        stdin.close()
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ, "out")
    sel.register(p.stderr, selectors.EVENT_READ, "err")
    out, err = bytearray(), bytearray()
    open_streams = 2
    deadline = t0 + timeout
    while open_streams:
        left = deadline - time.monotonic()
        if left <= 0 and not r.timed_out:
            r.timed_out = True
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for key, _ in sel.select(timeout=max(left, 0.05) if not r.timed_out else 1.0):
            chunk = os.read(key.fileobj.fileno(), 1 << 16)
            if not chunk:
                sel.unregister(key.fileobj)
                open_streams -= 1
                continue
            if key.data == "out":
                r.stdout_len += len(chunk)
                if len(out) < KEEP:
                    out += chunk[: KEEP - len(out)]
            elif len(err) < KEEP:
                err += chunk[: KEEP - len(err)]
    sel.close()
    p.stdout.close()
    p.stderr.close()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)   # keep Popen from waiting again
    r.rc = p.returncode
    r.seconds = time.monotonic() - t0
    r.maxrss_kib = ru.ru_maxrss
    r.stdout, r.stderr = bytes(out), bytes(err)
    return r


def check_error_line(case, lines, use_msg_re):
    """exit-2 contract: exactly one line, prefixed, naming the input (and offset/member)."""
    if len(lines) != 1:
        return ["expected exactly one stderr line, got %d" % len(lines)]
    line = lines[0]
    problems = []
    if not line.startswith("snapdiff: "):
        problems.append("stderr line lacks the 'snapdiff: ' prefix")
    names = case["names"]
    if names and (names + ":") not in line and (names + "/") not in line:
        problems.append("stderr line does not name %r (as '%s: ...')" % (names, names))
    if case["need"] == "offset" and not OFFSET_RE.search(line):
        problems.append("stderr line has no ': offset N: '")
    if case["need"] == "member":
        m = case["member"]
        if (names + ":" + m) not in line and (names + "/" + m) not in line:
            problems.append("stderr line does not name member %r" % m)
    if use_msg_re and case["msg_re"] and not re.search(case["msg_re"], line, re.I):
        problems.append("stderr line does not match /%s/" % case["msg_re"])
    return problems


def check_expectation(case, cmd, r, lines, max_lines):
    exp = case["dump"] if cmd == "dump" else case["expect"]
    prefixed = all(l.startswith("snapdiff: ") for l in lines)
    if exp == "error":
        if r.rc != 2:
            return ["expected exit 2, got %s" % r.rc]
        return check_error_line(case, lines, True)
    if r.rc == 2 and exp in ("warn", "any"):
        return check_error_line(case, lines, False)   # msg_re is for the warning
    if r.rc != 0:
        return ["expected exit 0%s, got %s" % (" or 2" if exp != "ok" else "", r.rc)]
    problems = []
    if not prefixed:
        problems.append("a stderr line lacks the 'snapdiff: ' prefix")
    if len(lines) > max_lines:
        problems.append("%d stderr lines (more than %d): warnings must be bounded"
                        % (len(lines), max_lines))
    if exp == "warn":
        pat = case["msg_re"] or ""
        if not any("warning" in l and re.search(pat, l, re.I) for l in lines):
            problems.append("exit 0 without a warning line matching /%s/" % pat)
    return problems


def run_case(case, cmd, opts, env, workdir):
    argv = [opts.bin, cmd] + case["args"] + [case["spec"]]
    timeout = case["timeout"] * opts.timeout_scale
    vglog = None
    if opts.valgrind:
        vglog = os.path.join(workdir, "valgrind", "%s.%s.log" % (case["name"], cmd))
        os.makedirs(os.path.dirname(vglog), exist_ok=True)
        argv = ["valgrind", "--tool=memcheck", "--leak-check=full",
                "--errors-for-leak-kinds=definite,indirect", "--error-exitcode=99",
                "--log-file=" + vglog] + argv
    if not opts.asan:
        # valgrind runs fine under a limit, but needs room for its own bookkeeping
        limit = opts.as_mb * (2 if opts.valgrind else 1)
        argv = ["sh", "-c", 'ulimit -v %d && exec "$@"' % (limit * 1024), "sh"] + argv
    stdin = case["stdin"]
    if stdin and not os.path.isabs(stdin):
        stdin = os.path.join(workdir, stdin)
    if case["marker"] and os.path.exists(case["marker"]):
        os.unlink(case["marker"])
    r = run_bounded(argv, workdir, stdin, timeout, env)
    text = r.stderr.decode("utf-8", "replace")
    lines = text.splitlines()
    problems = []
    if r.timed_out:
        problems.append("did not finish within %.0f s" % timeout)
    elif r.rc is not None and r.rc < 0:
        problems.append("killed by signal %d" % -r.rc)
    if SANITIZER_RE.search(text):
        problems.append("sanitizer report")
    if opts.valgrind:
        vg = open(vglog, errors="replace").read() if os.path.exists(vglog) else ""
        if r.rc == 99 or re.search(r"ERROR SUMMARY: [1-9]", vg):
            problems.append("valgrind: %s" % " | ".join(
                l for l in vg.splitlines() if "ERROR SUMMARY" in l or "lost:" in l
                or "Invalid" in l or "uninitialised" in l)[:600])
    else:
        bound = opts.rss_mb
        if case.get("max_rss_mb") and not opts.asan:
            bound = min(bound, case["max_rss_mb"])   # a --max-memory case: the budget holds
        if r.maxrss_kib > bound * 1024:
            problems.append("peak RSS %d MiB over the %d MiB bound" % (r.maxrss_kib // 1024,
                                                                       bound))
    if r.stdout_len > case["max_stdout"]:
        problems.append("stdout of %d bytes over the %d-byte bound" % (r.stdout_len,
                                                                      case["max_stdout"]))
    if case["marker"] and os.path.exists(case["marker"]):
        problems.append("MARKER FILE CREATED: code from the file ran")
        os.unlink(case["marker"])
    if not r.timed_out and not (r.rc is not None and r.rc < 0) and r.rc != 99:
        problems += check_expectation(case, cmd, r, lines, opts.max_stderr_lines)
    return {"case": case["name"], "group": case["group"], "command": cmd,
            "argv": " ".join(repr(a) if not re.fullmatch(r"[\w./:+-]*", a) else a
                             for a in argv[-(len(case["args"]) + 3):]),
            "rc": r.rc, "seconds": round(r.seconds, 3), "maxrss_mib": r.maxrss_kib // 1024,
            "stdout_bytes": r.stdout_len, "stderr_head": lines[:4], "problems": problems,
            "note": case["note"]}


def select_cases(cases, opts):
    out = []
    counters = {}
    for c in cases:
        if opts.group and c["group"] not in opts.group:
            continue
        if opts.case and not re.search(opts.case, c["name"]):
            continue
        if opts.skip_slow and c["slow"]:
            continue
        if opts.sample > 1 and (opts.sample_every or c["group"] in ("trunc", "flip")):
            k = counters.get(c["group"], 0)
            counters[c["group"]] = k + 1
            if k % opts.sample:
                continue
        out.append(c)
    return out


def main():
    ap = argparse.ArgumentParser(description="Run snapdiff over the hostile corpus.")
    ap.add_argument("--bin", required=True, help="the snapdiff executable")
    ap.add_argument("--dir", required=True, help="work directory for the generated corpus")
    ap.add_argument("--group", action="append", default=[])
    ap.add_argument("--case", help="only cases whose name matches this regex")
    ap.add_argument("--no-make", action="store_true", help="reuse WORKDIR/cases.json")
    ap.add_argument("--valgrind", action="store_true", help="run under valgrind memcheck")
    ap.add_argument("--sample", type=int, default=1,
                    help="keep one in N truncation/flip cases")
    ap.add_argument("--sample-every", action="store_true",
                    help="apply --sample to every group (valgrind's quick subset)")
    ap.add_argument("--skip-slow", action="store_true")
    ap.add_argument("--timeout-scale", type=float, default=1.0)
    ap.add_argument("--as-mb", type=int, default=2048, help="RLIMIT_AS when not ASan")
    ap.add_argument("--rss-mb", type=int, default=2048, help="peak RSS bound")
    ap.add_argument("--max-stderr-lines", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--results", help="write every run's record here (JSON)")
    opts = ap.parse_args()
    opts.bin = os.path.abspath(opts.bin)
    workdir = os.path.abspath(opts.dir)
    if not os.access(opts.bin, os.X_OK):
        print("run_cases: %s is not an executable" % opts.bin, file=sys.stderr)
        return 2
    if not opts.no_make:
        cmd = [sys.executable, os.path.join(HERE, "make_cases.py"), workdir]
        for g in opts.group:
            cmd += ["--group", g]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(workdir, "cases.json")) as f:
        cases = select_cases(json.load(f), opts)
    opts.asan = binary_has_asan(opts.bin)
    env = dict(os.environ, LC_ALL="C", NO_COLOR="1")
    # Keep the caller's sanitizer options, but always bound memory (ASan has no RLIMIT_AS)
    # and let huge mallocs fail as they would in a normal build (later options win).
    env["ASAN_OPTIONS"] = ":".join(filter(None, [
        "detect_leaks=1", os.environ.get("ASAN_OPTIONS", ""), "allocator_may_return_null=1",
        "hard_rss_limit_mb=%d" % (opts.rss_mb + 1024)]))
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    jobs = [(c, cmd) for c in cases for cmd in c["commands"]]
    results = []
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futs = [pool.submit(run_case, c, cmd, opts, env, workdir) for c, cmd in jobs]
        for fut in futs:
            res = fut.result()
            results.append(res)
            if res["problems"]:
                print("FAIL %s [%s] %s: rc=%s %.2fs %d MiB\n  %s\n  what: %s\n  stderr: %s"
                      % (res["case"], res["group"], res["argv"], res["rc"], res["seconds"],
                         res["maxrss_mib"], "\n  ".join(res["problems"]), res["note"],
                         "\n          ".join(res["stderr_head"]) or "(empty)"))
                sys.stdout.flush()
    failed = [r for r in results if r["problems"]]
    slowest = max(results, key=lambda r: r["seconds"], default=None)
    biggest = max(results, key=lambda r: r["maxrss_mib"], default=None)
    print("hostile: %d cases, %d runs, %d failed, %.1f s%s%s%s" % (
        len(cases), len(results), len(failed), time.monotonic() - t0,
        " (asan)" if opts.asan else "", " (valgrind)" if opts.valgrind else "",
        "; slowest %s %s %.2fs; largest RSS %s %s %d MiB" % (
            slowest["case"], slowest["command"], slowest["seconds"], biggest["case"],
            biggest["command"], biggest["maxrss_mib"]) if results else ""))
    if opts.results:
        with open(opts.results, "w") as f:
            json.dump(results, f, indent=1)
    if not cases:
        print("run_cases: no case selected", file=sys.stderr)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
