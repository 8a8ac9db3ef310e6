#!/usr/bin/env python3
"""Benchmarks hotswap-opt against cp and llvm-objcopy in the same run.

Run through utils/bench/run.sh. Inputs are generated once into the cache
directory and reused. Each input is measured with the three commands
alternating (hotswap-opt, cp, llvm-objcopy, hotswap-opt, ...) so that machine
noise hits all of them alike; medians are reported. Peak RSS comes from
wait4() on each child. This is a benchmark, not a test: it always exits 0
unless it cannot run at all.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LLVM = "/usr/lib/llvm-22/bin"
MCPU = "gfx90a"
PIPELINE = "trampoline,stub-syms"
MiB = 1024 * 1024


def sh(cmd, **kw):
    subprocess.run(cmd, check=True, **kw)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- inputs ---

def synthetic(cache, name, n, body_words=0, debug_bytes=0):
    """Generates, assembles and links a synthetic object (cached)."""
    so = os.path.join(cache, name + ".so")
    if os.path.exists(so):
        return so
    log("generating {} ({} kernels)".format(name, n))
    s = os.path.join(cache, name + ".s")
    o = os.path.join(cache, name + ".o")
    args = [sys.executable, os.path.join(HERE, "gen.py"), str(n), s,
            "--mcpu", MCPU]
    if body_words:
        args += ["--body-words", str(body_words)]
    if debug_bytes:
        args += ["--debug-bytes", str(debug_bytes)]
    sh(args)
    sh([LLVM + "/llvm-mc", "-triple=amdgcn-amd-amdhsa", "-mcpu=" + MCPU,
        "-filetype=obj", s, "-o", o])
    sh([LLVM + "/ld.lld", "-shared", o, "-o", so + ".tmp"])
    os.rename(so + ".tmp", so)
    os.unlink(s)
    os.unlink(o)
    check_layout(so, n)
    return so


def clang_object(cache, root):
    so = os.path.join(cache, "clang-two-kernels.so")
    if os.path.exists(so):
        return so
    log("compiling test/Inputs/two-kernels.cl with clang-22")
    o = os.path.join(cache, "clang-two-kernels.o")
    sh([LLVM + "/clang", "--target=amdgcn-amd-amdhsa", "-mcpu=" + MCPU,
        "-nogpulib", "-O2", "-c",
        os.path.join(root, "test", "Inputs", "two-kernels.cl"), "-o", o])
    sh([LLVM + "/ld.lld", "-shared", o, "-o", so])
    os.unlink(o)
    return so


def check_layout(so, n):
    """The generated object must look like a real one: every kernel has a
    .kd in .symtab and .dynsym, and there is an NT_AMDGPU_METADATA note."""
    def kd_count(dynamic):
        args = [LLVM + "/llvm-nm", "--defined-only"]
        if dynamic:
            args.append("-D")
        out = subprocess.run(args + [so], check=True, capture_output=True,
                             text=True).stdout
        return sum(1 for l in out.splitlines() if l.endswith(".kd"))
    notes = subprocess.run([LLVM + "/llvm-readelf", "--notes", so],
                           check=True, capture_output=True, text=True).stdout
    if kd_count(False) != n or kd_count(True) != n:
        raise SystemExit("{}: expected {} .kd symbols in .symtab and .dynsym"
                         .format(so, n))
    if "NT_AMDGPU_METADATA" not in notes:
        raise SystemExit("{}: no NT_AMDGPU_METADATA note".format(so))


# ---------------------------------------------------------------- timing ---

RUNONE = None


def build_runone(cache):
    global RUNONE
    exe = os.path.join(cache, "runone")
    src = os.path.join(HERE, "runone.c")
    if (not os.path.exists(exe) or
            os.path.getmtime(exe) < os.path.getmtime(src)):
        sh([LLVM + "/clang", "-O2", src, "-o", exe])
    RUNONE = exe


def run_once(argv, out):
    """Runs argv through runone; returns (wall s, peak RSS bytes, CPU s)."""
    p = subprocess.run([RUNONE, out] + argv, capture_output=True, text=True)
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


def measure(tool, inp, work, reps, baseline=None):
    out = os.path.join(work, "out.co")
    oc, nsyms = objcopy_args(tool, inp, out, work)
    cmds = {
        "hotswap": [tool, "-passes=" + PIPELINE, inp, "-o", out],
        "cp": ["cp", inp, out],
        "objcopy": oc,
    }
    if baseline:
        cmds["baseline"] = [baseline, "-passes=" + PIPELINE, inp, "-o", out]
    # One warm-up of each (page cache, dynamic loader caches).
    for argv in cmds.values():
        run_once(argv, out)
    t = {k: [] for k in cmds}
    cpu = {k: [] for k in cmds}
    rss = {k: 0 for k in cmds}
    for _ in range(reps):
        for k, argv in cmds.items():
            s, m, c = run_once(argv, out)
            t[k].append(s)
            cpu[k].append(c)
            rss[k] = max(rss[k], m)
    if os.path.exists(out):
        os.unlink(out)
    med = {k: statistics.median(v) for k, v in t.items()}
    for k, v in cpu.items():
        med[k + "-cpu"] = statistics.median(v)
    return med, rss, nsyms


def time_passes(tool, inp, work):
    out = os.path.join(work, "tp.co")
    p = subprocess.run([tool, "-passes=" + PIPELINE, "-time-passes", inp,
                        "-o", out], capture_output=True, text=True)
    if os.path.exists(out):
        os.unlink(out)
    return p.stdout + p.stderr


# ---------------------------------------------------------------- report ---

def ms(s):
    return "{:.1f}".format(s * 1e3) if s < 10 else "{:.0f}".format(s * 1e3)


def mib(b):
    return "{:.1f}".format(b / MiB)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--baseline", default="",
                    help="another hotswap-opt binary to time alongside")
    ap.add_argument("--only", default="",
                    help="comma-separated input names to measure")
    a = ap.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    work = os.path.join(a.cache, "work")
    os.makedirs(work, exist_ok=True)
    build_runone(a.cache)

    # name -> (path, kernels)
    inputs = [
        ("tiny-2", lambda: synthetic(a.cache, "tiny-2", 2), 2),
        ("clang-two-kernels", lambda: clang_object(a.cache, a.root), 2),
        ("k10", lambda: synthetic(a.cache, "k10", 10), 10),
        ("k1000", lambda: synthetic(a.cache, "k1000", 1000), 1000),
        ("k10000", lambda: synthetic(a.cache, "k10000", 10000), 10000),
        ("k100000", lambda: synthetic(a.cache, "k100000", 100000), 100000),
        # ~14 MB: 640 kernels of ~20 KiB code each plus 1 MiB of debug info.
        ("big-640", lambda: synthetic(a.cache, "big-640", 640,
                                      body_words=5120,
                                      debug_bytes=1 * MiB), 640),
    ]
    only = set(filter(None, a.only.split(",")))
    paths = {}
    for name, make, n in inputs:
        if not only or name in only:
            paths[name] = (make(), n)

    rows = {}
    for name, (path, n) in paths.items():
        size = os.path.getsize(path)
        reps = a.reps
        log("measuring {} ({} kernels, {} MiB, {} reps)".format(
            name, n, mib(size), reps))
        med, rss, nsyms = measure(a.tool, path, work, reps,
                                  a.baseline or None)
        rows[name] = dict(n=n, size=size, med=med, rss=rss, nsyms=nsyms)

    print()
    print("Medians of {} alternating runs; wall time of the whole process "
          "(spawn to exit); CPU = user+sys; peak RSS from wait4().".format(a.reps))
    print("objcopy = llvm-objcopy --add-symbol NAME=0xADDR,function,global "
          "per kernel (response file).")
    print()
    hdr = ("input", "kernels", "MiB", "hotswap ms", "cp ms", "objcopy ms",
           "hs/cp", "hs/objcopy", "hs CPU ms", "hs RSS MiB", "objcopy RSS")
    fmt = "{:<18} {:>7} {:>6} {:>10} {:>7} {:>10} {:>6} {:>10} {:>9} {:>10} {:>11}"
    print(fmt.format(*hdr))
    for name, r in rows.items():
        m, rs = r["med"], r["rss"]
        print(fmt.format(name, r["n"], mib(r["size"]), ms(m["hotswap"]),
                         ms(m["cp"]), ms(m["objcopy"]),
                         "{:.2f}".format(m["hotswap"] / m["cp"]),
                         "{:.3f}".format(m["hotswap"] / m["objcopy"]),
                         ms(m["hotswap-cpu"]), mib(rs["hotswap"]),
                         mib(rs["objcopy"])))

    if a.baseline:
        print()
        print("Baseline {} (same alternating runs):".format(a.baseline))
        for name, r in rows.items():
            m, rs = r["med"], r["rss"]
            print("  {:<18} wall {:>8} -> {:>8} ms (x{:.2f})  CPU {:>8} -> "
                  "{:>8} ms (x{:.2f})  RSS {} -> {} MiB".format(
                      name, ms(m["baseline"]), ms(m["hotswap"]),
                      m["baseline"] / m["hotswap"], ms(m["baseline-cpu"]),
                      ms(m["hotswap-cpu"]),
                      m["baseline-cpu"] / m["hotswap-cpu"],
                      mib(rs["baseline"]), mib(rs["hotswap"])))

    # Scaling.
    scale = [k for k in ("k10", "k1000", "k10000", "k100000") if k in rows]
    if "k1000" in rows and len(scale) > 1:
        print()
        print("Scaling (hotswap-opt): time per kernel, and marginal time per "
              "kernel above the 10-kernel object")
        base = rows["k1000"]["med"]["hotswap"] / 1000
        t10 = rows["k10"]["med"]["hotswap"] if "k10" in rows else 0.0
        base_m = (rows["k1000"]["med"]["hotswap"] - t10) / (1000 - 10)
        for k in scale:
            r = rows[k]
            per = r["med"]["hotswap"] / r["n"]
            line = "  {:<8} {:>7} kernels  {:>9} ms  {:>7.2f} us/kernel".format(
                k, r["n"], ms(r["med"]["hotswap"]), per * 1e6)
            if r["n"] > 10 and "k10" in rows:
                marg = (r["med"]["hotswap"] - t10) / (r["n"] - 10)
                line += "  marginal {:>6.2f} us/kernel".format(marg * 1e6)
            if r["n"] > 1000:
                g = per / base
                line += "  x{:.2f} vs 1000".format(g)
                if g > 1.5 or (r["n"] > 10 and "k10" in rows and
                               marg / base_m > 1.5):
                    line += "  NON-LINEAR"
            print(line)

    # Targets.
    print()
    print("Targets:")

    def verdict(ok):
        return "met" if ok else "MISSED"
    if "big-640" in rows:
        r = rows["big-640"]
        m = r["med"]
        hc = m["hotswap"] / m["cp"]
        ho = m["hotswap"] / m["objcopy"]
        lim = 2 * r["size"] + 20 * MiB
        print("  big-640 ({} MiB): hotswap/cp = {:.2f} (<= 3): {}".format(
            mib(r["size"]), hc, verdict(hc <= 3)))
        print("  big-640: hotswap/objcopy = {:.3f} (<= 0.333): {}".format(
            ho, verdict(ho <= 1 / 3)))
        print("  big-640: peak RSS {} MiB (<= 2 x file + 20 = {} MiB): {}"
              .format(mib(r["rss"]["hotswap"]), mib(lim),
                      verdict(r["rss"]["hotswap"] <= lim)))
    if "tiny-2" in rows:
        t = rows["tiny-2"]["med"]["hotswap"]
        print("  tiny-2: {} ms (<= 10 ms): {}".format(ms(t),
                                                      verdict(t <= 0.010)))
    if "k100000" in rows:
        r = rows["k100000"]
        t = r["med"]["hotswap"]
        print("  k100000: {} ms (<= 2000 ms): {}".format(ms(t),
                                                         verdict(t <= 2.0)))
        if "k1000" in rows:
            g = (t / 1e5) / (rows["k1000"]["med"]["hotswap"] / 1e3)
            print("  k100000: time/kernel x{:.2f} of the 1000 case (<= 1.5): "
                  "{}".format(g, verdict(g <= 1.5)))

    # Per-pass time for the largest input.
    if rows:
        big = max(rows, key=lambda k: rows[k]["size"])
        print()
        print("-time-passes on {}:".format(big))
        print(time_passes(a.tool, paths[big][0], work).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
