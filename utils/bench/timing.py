"""Timing commands: runone.c runs each one (wall time, peak RSS, CPU time),
rotate() alternates them, measure() times hotswap-opt against cp and
llvm-objcopy; -time-passes and -stats of one run.
"""

import json
import os
import statistics
import subprocess

from common import HERE, LLVM, MiB, PIPELINE, sh, sync


RUNONE = None


def build_runone(cache):
    global RUNONE
    exe = os.path.join(cache, "runone")
    src = os.path.join(HERE, "runone.c")
    if (not os.path.exists(exe) or
            os.path.getmtime(exe) < os.path.getmtime(src)):
        sh([LLVM + "/clang", "-O2", src, "-o", exe])
    RUNONE = exe


def run_once(argv, out, env=None):
    """Runs argv through runone; returns (wall s, peak RSS bytes, CPU s)."""
    p = subprocess.run([RUNONE, out] + argv, capture_output=True, text=True,
                       env=env)
    if p.returncode != 0:
        raise SystemExit("command failed: {}\n{}".format(" ".join(argv),
                                                          p.stderr))
    secs, rss, cpu = p.stdout.split()
    return float(secs), int(rss), float(cpu)


def objcopy_args(tool, inp, out, work):
    """llvm-objcopy doing the closest equivalent work: one absolute global
    function symbol per kernel, at the address hotswap-opt gives the stub
    (llvm-objcopy cannot refer to a section the input does not have), passed
    through a response file."""
    ref = os.path.join(work, "ref.co")
    sh([tool, "-passes=" + PIPELINE, inp, "-o", ref])
    syms = subprocess.run([LLVM + "/llvm-nm", "--defined-only", ref],
                          check=True, capture_output=True, text=True).stdout
    opts = []
    for line in syms.splitlines():
        addr, _, name = line.split(None, 2)
        if name.endswith(".stub"):
            opts.append("--add-symbol={}=0x{},function,global".format(
                name, addr.lstrip("0") or "0"))
    os.unlink(ref)
    rsp = os.path.join(work, "objcopy.rsp")
    with open(rsp, "w") as f:
        f.write("\n".join(opts) + "\n")
    return [LLVM + "/llvm-objcopy", "@" + rsp, inp, out], len(opts)


def rotate(cmds, out, reps, warmup=True, before=None, after=None):
    """Runs the commands (name -> argv) alternating, reps times; returns
    (median wall, median CPU, peak RSS) per name. before(name) runs untimed
    before each timed command (clean-up, sync), after(name, rep) after it."""
    if warmup:  # page cache, dynamic loader caches
        for k, argv in cmds.items():
            if before:
                before(k)
            run_once(argv, out)
    t = {k: [] for k in cmds}
    cpu = {k: [] for k in cmds}
    rss = {k: 0 for k in cmds}
    for rep in range(reps):
        for k, argv in cmds.items():
            if before:
                before(k)
            s, m, c = run_once(argv, out)
            t[k].append(s)
            cpu[k].append(c)
            rss[k] = max(rss[k], m)
            if after:
                after(k, rep)
    med = {k: statistics.median(v) for k, v in t.items()}
    for k, v in cpu.items():
        med[k + "-cpu"] = statistics.median(v)
    return med, rss


def measure(tool, inp, work, reps, baseline=None, extra=None):
    out = os.path.join(work, "out.co")
    oc, nsyms = objcopy_args(tool, inp, out, work)
    cmds = {
        "hotswap": [tool, "-passes=" + PIPELINE, inp, "-o", out],
        "cp": ["cp", inp, out],
        "objcopy": oc,
    }
    if baseline:
        cmds["baseline"] = [baseline, "-passes=" + PIPELINE, inp, "-o", out]
    for k, argv in (extra or {}).items():
        cmds[k] = argv + [inp, "-o", out]
    # A large output's write-back would land in the next command's time.
    big = os.path.getsize(inp) > 64 * MiB
    med, rss = rotate(cmds, out, reps, before=(lambda k: sync()) if big
                      else None)
    if os.path.exists(out):
        os.unlink(out)
    return med, rss, nsyms


def time_passes(tool, inp, work, extra=()):
    out = os.path.join(work, "tp.co")
    # After the timed runs of a library, gigabytes of their outputs wait to
    # be written back: made to wait for room, this run took 10 s instead of
    # 2.7 s (8 s of it system time).
    sync()
    p = subprocess.run([tool, "-passes=" + PIPELINE, "-time-passes"] +
                       list(extra) + [inp, "-o", out], capture_output=True,
                       text=True)
    if os.path.exists(out):
        os.unlink(out)
    return p.stdout + p.stderr


def stats_json(tool, inp, work, extra=()):
    """One run with -stats; returns (counters, stderr lines that are not the
    JSON)."""
    out = os.path.join(work, "stats.co")
    p = subprocess.run([tool, "-passes=" + PIPELINE, "-stats",
                        "--kernels-format=json"] + list(extra) +
                       [inp, "-o", out], capture_output=True, text=True)
    if os.path.exists(out):
        os.unlink(out)
    if p.returncode != 0:
        raise SystemExit("hotswap-opt failed on {}:\n{}".format(inp, p.stderr))
    err = p.stderr
    js = err[err.find("{"):] if "{" in err else "{}"
    try:
        stats = json.loads(js)
    except ValueError:
        stats = {}
    rest = err[:err.find("{")] if "{" in err else err
    return stats, rest.strip().splitlines()
