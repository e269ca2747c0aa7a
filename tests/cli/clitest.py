"""The pieces every CLI test script (tests/cli/test_*.py) shares: count checks, run snapdiff,
find the shared real snapshots, skip, and report the totals.

    sys.dont_write_bytecode = True   # no __pycache__ in the source tree
    HERE = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [HERE, os.path.join(HERE, "..", "truth")]  # clitest, truth_*
    import clitest  # noqa: E402

    T = clitest.Suite()                  # at module level; T.bin = the binary, once known
    check, run = T.check, T.run          # the scripts call these names
    T.check(cond, what[, detail]) -> cond    counts one check; on failure records `what`
                                         (": detail" appended when given) and prints FAIL
    T.run(args, rc=, env=None, cwd=None, stdin=None, text=, timeout=)   (defaults: the suite's)
                                         runs [T.bin, *T.prefix, *args] with output captured
                                         (str, or bytes when text is false); checks the exit
                                         status unless rc is None
    T.run_json(args, rc=, default=None)  runs args + ["--json"] and parses stdout; a parse
                                         failure is a failed check, and returns `default`
    clitest.shared_dir(root=None)        $SNAPDIFF_SHARED, else ../shared beside the checkout
    clitest.real_snapshots(root=None, skip_if_absent=True)
                                         shared_dir()/real-snapshots; where it is not a
                                         folder, skip() saying so (or None, when told not to)
    clitest.skip(message)                prints "SKIP: message" and exits 77 (ctest's
                                         SKIP_RETURN_CODE in tests/*/*.cmake)
    sys.exit(T.finish())                 prints "N checks, M failed"; 1 on a failure or when
                                         no check ran at all, else 0

Suite(bin=None, prefix=(), no_color=None, rc=0, text=True, timeout=None): `prefix` goes
before every run's arguments (e.g. ["trace"]); no_color=True sets NO_COLOR=1 for every run,
False removes it from the environment, None leaves the environment as it is; rc, text and
timeout are the defaults of run() (a script whose runs mostly check nothing says rc=None
once). A run's `env` adds to the environment. check() may be called from several threads.
"""
import json
import os
import subprocess
import sys
import threading

SKIP = 77
_SUITE = object()   # "the suite's default" for run()'s rc, where None means "no check"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class Suite:
    def __init__(self, bin=None, prefix=(), no_color=None, rc=0, text=True, timeout=None):
        self.bin = bin
        self.prefix = list(prefix)
        self.no_color = no_color
        self.rc, self.text, self.timeout = rc, text, timeout
        self.checks = 0
        self.failures = []
        self._lock = threading.Lock()

    def check(self, cond, what, *detail):
        """One check: counted; when cond is false, `what` (and the detail) is recorded and
        printed. Returns cond."""
        if not cond and detail:
            what = "%s: %s" % (what, detail[0])
        with self._lock:
            self.checks += 1
            if not cond:
                self.failures.append(what)
        if not cond:
            print("FAIL: " + what, flush=True)
        return cond

    def env(self, extra=None):
        e = dict(os.environ)
        if self.no_color is True:
            e["NO_COLOR"] = "1"
        elif self.no_color is False:
            e.pop("NO_COLOR", None)
        e.update(extra or {})
        return e

    def run(self, args, rc=_SUITE, env=None, cwd=None, stdin=None, text=None, timeout=None):
        """snapdiff with prefix and args; the exit status is a check unless rc is None.
        rc, text and timeout default to the suite's."""
        rc = self.rc if rc is _SUITE else rc
        text = self.text if text is None else text
        timeout = self.timeout if timeout is None else timeout
        args = self.prefix + list(args)
        p = subprocess.run([self.bin] + args, input=stdin, capture_output=True, text=text,
                           env=self.env(env), cwd=cwd, timeout=timeout)
        if rc is not None:
            err = p.stderr if text else p.stderr.decode(errors="replace")
            self.check(p.returncode == rc, "snapdiff %s: exit %d, wanted %d; stderr: %s"
                       % (" ".join(args), p.returncode, rc, err.strip()[:300]))
        return p

    def run_json(self, args, rc=_SUITE, default=None, **kw):
        """The parsed stdout of args + --json; `default` where it does not parse."""
        p = self.run(list(args) + ["--json"], rc, **kw)
        try:
            return json.loads(p.stdout)
        except ValueError as e:
            self.check(False, "snapdiff %s: JSON does not parse: %s"
                       % (" ".join(self.prefix + list(args)), e))
            return default

    def finish(self, label=None):
        """Print the totals; the exit status: 1 on a failure or when no check ran."""
        print("%s%d checks, %d failed" % (label + ": " if label else "", self.checks,
                                          len(self.failures)))
        if self.checks == 0:
            print("FAIL: no check ran")
        return 1 if self.failures or self.checks == 0 else 0


def shared_dir(root=None):
    """$SNAPDIFF_SHARED (ctest sets it, tests/CMakeLists.txt), else ../shared beside root."""
    return os.environ.get("SNAPDIFF_SHARED") or os.path.join(root or ROOT, "..", "shared")


def real_snapshots(root=None, skip_if_absent=True):
    """The real-snapshots folder of the shared folder. Where it is absent: skip (exit 77),
    or return None when skip_if_absent is false."""
    d = os.path.join(shared_dir(root), "real-snapshots")
    if os.path.isdir(d):
        return d
    if skip_if_absent:
        skip("%s is absent: the real-snapshot checks did not run (set SNAPDIFF_SHARED to "
             "the folder that holds real-snapshots/)" % d)
    return None


def skip(message):
    """Exit 77, which ctest counts as skipped (SKIP_RETURN_CODE), saying why."""
    print("SKIP: " + message, flush=True)
    sys.exit(SKIP)
