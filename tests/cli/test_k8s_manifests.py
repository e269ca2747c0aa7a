#!/usr/bin/env python3
"""contrib/k8s (issue 30): the Indexed Job of the map and the Job of the reduce.

    test_k8s_manifests.py --bin SNAPDIFF --root REPO

No cluster here, so the manifests are checked as far as a machine without one can:
  - each file is YAML (python3-yaml, from tests/deps.sh) holding one batch/v1 Job with
    the fields Kubernetes requires (a container with a name, an image and a command,
    restartPolicy Never or OnFailure), every volume mount naming a volume of the pod;
  - the map is an Indexed Job whose `--shard auto/N` equals its `completions`, and whose
    -o is the folder the reduce reads;
  - the map's own command, run once per index with JOB_COMPLETION_INDEX set as Kubernetes
    sets it (its /data/job7 moved to a temporary folder, over 150 copies of a fixture),
    summarizes every snapshot exactly once;
  - the reduce's own script, run on those summaries, exits with the status of `snapdiff
    check` over the snapshots and writes the same report, and a JUnit file.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest  # noqa: E402

T = clitest.Suite(rc=None)
check, run = T.check, T.run
DATA = "/data/job7"
SCHED_VARS = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN",
              "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX",
              "RANK", "WORLD_SIZE")


def load(path):
    import yaml
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    check(len(docs) == 1, "%s: one YAML document" % path, str(len(docs)))
    return docs[0] if docs else {}


def check_job(name, job):
    check(job.get("apiVersion") == "batch/v1" and job.get("kind") == "Job",
          "%s: a batch/v1 Job" % name, "%s %s" % (job.get("apiVersion"), job.get("kind")))
    check(bool(job.get("metadata", {}).get("name")), "%s: metadata.name" % name)
    pod = job.get("spec", {}).get("template", {}).get("spec", {})
    check(pod.get("restartPolicy") in ("Never", "OnFailure"),
          "%s: restartPolicy Never or OnFailure (a Job's pods must not restart Always)" % name)
    containers = pod.get("containers") or []
    check(len(containers) == 1, "%s: one container" % name)
    volumes = {v.get("name") for v in pod.get("volumes") or []}
    for c in containers:
        check(bool(c.get("name")) and bool(c.get("image")) and isinstance(c.get("command"), list),
              "%s: the container has a name, an image and a command" % name)
        for m in c.get("volumeMounts") or []:
            check(m.get("name") in volumes, "%s: mount %s names a volume of the pod" % (name, m.get("name")))
    return containers[0] if containers else {}


def moved(arg, tmp):
    return arg.replace(DATA, tmp)


def make_inputs(root, tmp, n):
    src = os.path.join(root, "testdata", "example", "new.pickle")
    os.makedirs(os.path.join(tmp, "snapshots"))
    paths = []
    for i in range(n):
        p = os.path.join(tmp, "snapshots", "step100_rank%04d.pickle" % i)
        shutil.copyfile(src, p)
        paths.append(p)
    with open(os.path.join(tmp, "inputs.txt"), "w") as f:
        f.write("\n".join(reversed(paths)) + "\n")
    return paths


def part_map(root, tmp, job, cmd):
    spec = job.get("spec", {})
    check(spec.get("completionMode") == "Indexed", "map: an Indexed Job")
    completions = spec.get("completions")
    check(isinstance(completions, int) and completions > 0, "map: completions a positive number")
    check(0 < spec.get("parallelism", 0) <= (completions or 0), "map: parallelism within completions")
    shard = cmd[cmd.index("--shard") + 1] if "--shard" in cmd else ""
    check(shard == "auto/%s" % completions, "map: --shard auto/N with N the Job's completions",
          "%s vs %s" % (shard, completions))
    check(cmd[:2] == ["snapdiff", "summarize"], "map: runs snapdiff summarize", str(cmd[:2]))
    out = cmd[cmd.index("-o") + 1] if "-o" in cmd else ""
    inputs = make_inputs(root, tmp, 150)
    seen = {}
    # Only Kubernetes' variable: a CI job inside Slurm or torchrun must not pick the share.
    base_env = {k: v for k, v in os.environ.items() if k not in SCHED_VARS}
    for index in range(completions or 0):
        args = [moved(a, tmp) for a in cmd[2:]]
        task_out = os.path.join(tmp, "tasks", str(index))
        args[args.index("-o") + 1] = task_out
        p = subprocess.run([T.bin, "summarize", *args],
                           env=dict(base_env, JOB_COMPLETION_INDEX=str(index)),
                           capture_output=True, text=True, timeout=120)
        if not check(p.returncode == 0, "map: pod %d exits 0" % index, p.stderr.strip()):
            continue
        check("Kubernetes Indexed Job: JOB_COMPLETION_INDEX=%d" % index in p.stderr,
              "map: pod %d says its share comes from JOB_COMPLETION_INDEX" % index, p.stderr.strip())
        for f in os.listdir(task_out) if os.path.isdir(task_out) else []:
            seen[f] = seen.get(f, 0) + 1
    want = sorted(os.path.basename(p) + ".sdsum" for p in inputs)
    check(sorted(seen) == want, "map: the %s pods summarize every snapshot" % completions,
          "missing %s" % sorted(set(want) - set(seen))[:5])
    check(all(v == 1 for v in seen.values()), "map: each snapshot exactly once",
          str([k for k, v in seen.items() if v != 1][:5]))
    # The reduce's folder: every pod's summaries together, where the map's -o says.
    summaries = moved(out, tmp)
    os.makedirs(summaries, exist_ok=True)
    for index in range(completions or 0):
        d = os.path.join(tmp, "tasks", str(index))
        for f in os.listdir(d) if os.path.isdir(d) else []:
            shutil.move(os.path.join(d, f), os.path.join(summaries, f))
    return out


def part_reduce(root, tmp, cmd, map_out):
    check(cmd[:2] == ["sh", "-c"] and len(cmd) == 3, "reduce: a sh -c script", str(cmd[:2]))
    script = cmd[2] if len(cmd) == 3 else ""
    check(map_out and map_out in script, "reduce: reads the map's -o folder %s" % map_out)
    shutil.copyfile(os.path.join(root, "testdata", "example", "old.pickle"), os.path.join(tmp, "baseline"))
    with open(os.path.join(tmp, "memory-limits.conf"), "w") as f:
        f.write("max-growth = 1MiB\n")
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    os.symlink(os.path.abspath(T.bin), os.path.join(bindir, "snapdiff"))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    p = subprocess.run(["sh", "-c", moved(script, tmp)], env=env, capture_output=True, text=True,
                       timeout=300)
    single = run(["check", os.path.join(tmp, "baseline"), os.path.join(tmp, "snapshots"),
                  "--config", os.path.join(tmp, "memory-limits.conf")])
    check(p.returncode == single.returncode == 1,
          "reduce: exits with the gate's status over the snapshots (1 here)",
          "%d vs %d: %s" % (p.returncode, single.returncode, p.stderr.strip()[:300]))
    try:
        with open(os.path.join(tmp, "check.txt")) as f:
            report = f.read()
    except OSError:
        report = ""
    check(report.replace(".pickle.sdsum", ".pickle") == single.stdout,
          "reduce: the report equals check over the snapshots")
    try:
        with open(os.path.join(tmp, "memory-report.xml")) as f:
            junit = f.read()
    except OSError:
        junit = ""
    check(len(re.findall(r"<testcase", junit)) >= 150, "reduce: a JUnit test case per rank")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    a = ap.parse_args()
    T.bin = os.path.abspath(a.bin)
    root = os.path.abspath(a.root)
    try:
        import yaml  # noqa: F401
    except ImportError:
        clitest.skip("python3-yaml is not installed (sh tests/deps.sh installs it)")
    k8s = os.path.join(root, "contrib", "k8s")
    map_job = load(os.path.join(k8s, "map-job.yaml"))
    reduce_job = load(os.path.join(k8s, "reduce-job.yaml"))
    map_cmd = check_job("map-job.yaml", map_job).get("command") or []
    reduce_cmd = check_job("reduce-job.yaml", reduce_job).get("command") or []
    tmp = tempfile.mkdtemp(prefix="snapdiff-k8s-")
    try:
        out = part_map(root, tmp, map_job, map_cmd)
        part_reduce(root, tmp, reduce_cmd, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
