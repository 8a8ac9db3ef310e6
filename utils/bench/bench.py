#!/usr/bin/env python3
"""Benchmarks hotswap-opt against cp and llvm-objcopy in the same run.

Run through utils/bench/run.sh. Inputs are generated once into the cache
directory and reused. Each input is measured with its commands alternating
(hotswap-opt, cp, llvm-objcopy, hotswap-opt, ...) so that machine noise hits
all of them alike; medians are reported. Peak RSS comes from wait4() on each
child. Suites (--suite, comma-separated, or "all"):

  synthetic  generated objects (gen.py): 2 to 100 000 kernels, a 14 MB one,
             and objects without `.numbered_sgpr` (as ROCm 5.x builds them)
  real       real code objects: librocsparse0's largest gfx803, gfx90a and
             gfx1030 objects and librocrand1's seven; stub forms and granule
             bumps (-stats), -time-passes and a perf profile of the largest
  many       librocsparse0's 777 code objects as inputs of one command,
             --threads=1 and --threads=N against cp -r; outputs compared
             between thread counts
  capi       hotswap-capi-threads (capi-threads.cpp): librocsparse0's three
             largest gfx803 objects through the C API, on one thread and on
             two at once
  libs       librocrand1's and librocsparse0's whole host libraries against
             cp; llvm-readelf, a second run (idempotence) and a load with
             test/FatBinary's fake HIP runtime check each output

The real inputs come from Debian packages (apt-get download, as
utils/real-world.py does) into --corpus (default CACHE/corpus): a package's
directory is CORPUS/PKG, or any CORPUS/*/ holding root/PKG (a
`utils/real-world.py --keep --work DIR` directory, e.g. /work/corpus/rs);
its code objects are extracted once into DIR/co.

Every suite prints how busy the machine was while it ran: CPU time of all
processes (/proc/stat) against this benchmark's own. This is a benchmark, not
a test: it always exits 0 unless it cannot run at all.
"""

import argparse
import filecmp
import glob
import hashlib
import importlib.util
import json
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import time

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

def synthetic(cache, name, n, body_words=0, debug_bytes=0, sgprs=0,
              numbered=True):
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
    if sgprs:
        args += ["--sgprs", str(sgprs)]
    if not numbered:
        args.append("--no-numbered-sgpr")
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
    med, rss = rotate(cmds, out, reps)
    if os.path.exists(out):
        os.unlink(out)
    return med, rss, nsyms


def time_passes(tool, inp, work, extra=()):
    out = os.path.join(work, "tp.co")
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


# ------------------------------------------------------------- machine ---

def cpu_jiffies():
    """(busy, steal) jiffies of all CPUs since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    return user + nice + system + irq + softirq, steal


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


class LoadMeter:
    """How busy the machine was between start and report(): cores busy on
    average, how much of that was this benchmark (its children's CPU time,
    as wait4() reports it) and how much other processes."""

    def __init__(self):
        self.t = time.monotonic()
        self.busy, self.steal = cpu_jiffies()
        ct = os.times()
        self.ours = ct.children_user + ct.children_system + ct.user + ct.system
        self.avg = loadavg()

    def report(self):
        dt = max(time.monotonic() - self.t, 1e-9)
        hz = os.sysconf("SC_CLK_TCK")
        busy, steal = cpu_jiffies()
        ct = os.times()
        ours = ct.children_user + ct.children_system + ct.user + ct.system
        b = (busy - self.busy) / hz / dt
        o = (ours - self.ours) / dt
        st = (steal - self.steal) / hz / dt
        return ("{:.0f} s; all processes kept {:.2f} of {} cores busy on "
                "average, this benchmark {:.2f}, others {:.2f}{}; loadavg "
                "{} at the start, {} at the end".format(
                    dt, b, os.cpu_count(), o, max(b - o, 0.0),
                    ", steal {:.2f}".format(st) if st >= 0.01 else "",
                    self.avg, loadavg()))


def exec_bytes(path):
    """Bytes of the executable sections of an ELF64 file."""
    with open(path, "rb") as f:
        ehdr = f.read(64)
        shoff, = struct.unpack_from("<Q", ehdr, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", ehdr, 0x3A)
        f.seek(shoff)
        tab = f.read(shentsize * shnum)
    total = 0
    for i in range(shnum):
        (_, typ, flags, _, _, size) = struct.unpack_from(
            "<IIQQQQ", tab, i * shentsize)
        if flags & 0x4 and typ != 8:  # SHF_EXECINSTR, not NOBITS
            total += size
    return total


# ------------------------------------------------------------- profile ---

def perf_works():
    """perf can sample (cpu-clock: a software event, also in VMs without a
    PMU)."""
    if not shutil.which("perf"):
        return False
    p = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o",
                        os.devnull, "true"], capture_output=True, text=True)
    return p.returncode == 0


def hw_counters():
    """Whether perf has hardware counters (`perf stat -e instructions`)."""
    if not shutil.which("perf"):
        return False
    p = subprocess.run(["perf", "stat", "-e", "instructions", "true"],
                       capture_output=True, text=True)
    return p.returncode == 0 and "not supported" not in p.stderr


def callgrind(tool, args, work, top=15):
    """Instructions by function (self), one run under callgrind."""
    if not shutil.which("valgrind"):
        return "(valgrind is not available)"
    cg = os.path.join(work, "callgrind.out")
    subprocess.run(["valgrind", "--tool=callgrind",
                    "--callgrind-out-file=" + cg, tool] + args,
                   capture_output=True, check=True)
    rep = subprocess.run(["callgrind_annotate", "--inclusive=no", cg],
                         capture_output=True, text=True).stdout
    os.unlink(cg)
    lines = []
    for l in rep.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*([\d.]+)%\)\s+(.*)", l)
        if not m:
            continue
        name = m.group(3)
        if "PROGRAM TOTALS" in name:
            lines.append("  {} instructions in all".format(m.group(1)))
            continue
        name = re.sub(r"^\?\?\?:|^\S+/[^:]*:", "", name)
        name = re.sub(r" \[/.*\]$", "", name)
        lines.append("  {:>6}%  {}".format(m.group(2), name[:110]))
        if len(lines) > top:
            break
    return "\n".join(lines)


def profile(tool, args, work, runs=5):
    """Where hotswap-opt's time goes (`tool args`, `runs` runs under perf
    record with DWARF call graphs, so that inclusive times are right without
    frame pointers): the top functions by self time and the project's own
    functions (and the MC disassembler) by inclusive time."""
    cmd = " ".join("'{}'".format(x) for x in [tool] + args)
    lines = []
    if perf_works():
        data = os.path.join(work, "perf.data")
        subprocess.run(["perf", "record", "-q", "-F", "500", "--call-graph",
                        "dwarf,16384", "-o", data, "--", "sh", "-c",
                        "for i in $(seq {}); do {} 2>/dev/null; done".format(
                            runs, cmd)], capture_output=True, check=True)
        comm = ["--comm", os.path.basename(tool)]
        self_ = subprocess.run(
            ["perf", "report", "-i", data, "--stdio", "--no-children",
             "--sort", "symbol", "-g", "none", "--percent-limit", "1"] + comm,
            capture_output=True, text=True).stdout
        incl = subprocess.run(
            ["perf", "report", "-i", data, "--stdio", "--children", "--sort",
             "symbol", "-g", "none"] + comm,
            capture_output=True, text=True).stdout
        m = re.search(r"# Samples: (\S+)", self_)
        lines.append("perf record --call-graph dwarf, {} runs, {} samples; "
                     "self time (>= 1%):".format(runs, m.group(1) if m else "?"))
        for l in self_.splitlines():
            if re.match(r"\s+\d+\.\d+%", l):
                l = re.sub(r"(\s+-)+\s*$", "", l.strip())
                lines.append("  " + re.sub(r"\s+", " ", l)[:120])
        lines.append("inclusive time (>= 2%) of the project's functions, the "
                     "MC disassembler, memset/memmove, page faults and file "
                     "writes:")
        keep = re.compile(r"hotswap::|Disassembler|memset|memmove|"
                          r"exc_page_fault|copy_file_range|pwrite|^main$")
        for l in incl.splitlines():
            mm = re.match(r"\s+(\d+\.\d+)%\s+(\d+\.\d+)%\s+\[.\]\s+(.*)",
                          l)
            if not mm or float(mm.group(1)) < 2:
                continue
            name = mm.group(3).strip()
            if keep.search(name):
                lines.append("  {:>6}%  {}".format(mm.group(1), name[:110]))
        os.unlink(data)
    else:
        lines.append("(perf cannot sample here)")
    return "\n".join(lines)


# -------------------------------------------------------------- corpus ---

def real_world_module(root):
    spec = importlib.util.spec_from_file_location(
        "real_world", os.path.join(root, "utils", "real-world.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def package_dir(corpus, pkg):
    """CORPUS/PKG, or a CORPUS/*/ directory that holds root/PKG."""
    own = os.path.join(corpus, pkg)
    for d in [own] + sorted(glob.glob(os.path.join(corpus, "*"))):
        if os.path.isdir(os.path.join(d, "root", pkg)):
            return d
    return own


def corpus_package(root, corpus, pkg):
    """Downloads and extracts pkg if needed; returns (host libraries with
    offload bundles, device code objects), each a sorted list of paths."""
    rw = real_world_module(root)
    work = package_dir(corpus, pkg)
    log("package {}: {}".format(pkg, work))
    pkg_root = rw.fetch(pkg, work)
    hosts = []
    for h in sorted(rw.host_objects(pkg_root)):
        if any(True for _ in rw.bundles(h)):
            hosts.append(h)
    co = os.path.join(work, "co")
    if not glob.glob(os.path.join(co, "*.co")):
        log("extracting the code objects of {} into {}".format(pkg, co))
        tmp = co + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        seen = set()
        for h in hosts:
            with open(h, "rb") as fh:
                for ident, off, size in rw.bundles(h):
                    fh.seek(off)
                    blob = fh.read(size)
                    digest = hashlib.sha256(blob).hexdigest()[:16]
                    if digest in seen:
                        continue
                    seen.add(digest)
                    target = ident.split("--", 1)[-1]
                    name = "%s-%s.co" % (digest,
                                         re.sub(r"[^\w.+-]", "_", target))
                    with open(os.path.join(tmp, name), "wb") as out:
                        out.write(blob)
        if os.path.isdir(co):
            os.rmdir(co)  # empty
        os.rename(tmp, co)
    cos = sorted(glob.glob(os.path.join(co, "*.co")))
    return hosts, cos


def largest(cos, pattern):
    m = [c for c in cos if re.search(pattern, os.path.basename(c))]
    return max(m, key=os.path.getsize) if m else None


def target_of(co):
    return os.path.basename(co).split("-", 1)[1][:-3]


# ---------------------------------------------------------------- report ---

def ms(s):
    return "{:.1f}".format(s * 1e3) if s < 10 else "{:.0f}".format(s * 1e3)


def secs(s):
    return "{:.2f}".format(s)


def mib(b):
    return "{:.1f}".format(b / MiB)


TARGETS = []


def target(text, ok, why=""):
    """Prints and records one target's verdict."""
    TARGETS.append((text, ok))
    print("  {}: {}{}".format(text, "met" if ok else "MISSED",
                              " ({})".format(why) if why else ""))


def sync():
    """Flushes dirty pages (untimed) so that the previous command's
    write-back does not land in the next one's time."""
    os.sync()


# ----------------------------------------------------------- synthetic ---

def suite_synthetic(a, work):
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
        # Without .numbered_sgpr, bodies naming s0..s39 and a metadata
        # .sgpr_count (46) that fills the allocation (until issue 25 every
        # kernel with a long-form stub, beyond s_branch's 128 KiB, was
        # scanned for its SGPRs). nosgpr-40: 40 kernels of 32 KiB.
        ("nosgpr-40", lambda: synthetic(a.cache, "nosgpr-40", 40,
                                        body_words=8192, sgprs=40,
                                        numbered=False), 40),
        ("nosgpr-640", lambda: synthetic(a.cache, "nosgpr-640", 640,
                                         body_words=5120,
                                         debug_bytes=1 * MiB, sgprs=40,
                                         numbered=False), 640),
    ]
    only = set(filter(None, a.only.split(",")))
    paths = {}
    for name, make, n in inputs:
        if not only or name in only:
            paths[name] = (make(), n)
    if not paths:
        return

    meter = LoadMeter()
    rows = {}
    for name, (path, n) in paths.items():
        size = os.path.getsize(path)
        reps = a.reps
        log("measuring {} ({} kernels, {} MiB, {} reps)".format(
            name, n, mib(size), reps))
        med, rss, nsyms = measure(a.tool, path, work, reps,
                                  a.baseline or None)
        rows[name] = dict(n=n, size=size, med=med, rss=rss, nsyms=nsyms)
    load = meter.report()

    print()
    print("== synthetic: generated code objects (gen.py, gfx90a)")
    print("Medians of {} alternating runs; wall time of the whole process "
          "(spawn to exit); CPU = user+sys; peak RSS from wait4().".format(a.reps))
    print("objcopy = llvm-objcopy --add-symbol NAME=0xADDR,function,global "
          "per kernel (response file).")
    print("Machine: " + load)
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
    if "big-640" in rows:
        r = rows["big-640"]
        m = r["med"]
        hc = m["hotswap"] / m["cp"]
        ho = m["hotswap"] / m["objcopy"]
        lim = 2 * r["size"] + 20 * MiB
        target("big-640 ({} MiB): hotswap/cp = {:.2f} (<= 3)".format(
            mib(r["size"]), hc), hc <= 3)
        target("big-640: hotswap/objcopy = {:.3f} (<= 0.333)".format(ho),
               ho <= 1 / 3)
        target("big-640: peak RSS {} MiB (<= 2 x file + 20 = {} MiB)".format(
            mib(r["rss"]["hotswap"]), mib(lim)), r["rss"]["hotswap"] <= lim)
    if "tiny-2" in rows:
        t = rows["tiny-2"]["med"]["hotswap"]
        target("tiny-2: {} ms (<= 10 ms)".format(ms(t)), t <= 0.010)
    if "clang-two-kernels" in rows:
        m = rows["clang-two-kernels"]["med"]
        hc = m["hotswap"] / m["cp"]
        target("clang-two-kernels (clang-22, 2 kernels): hotswap/cp = {:.2f} "
               "(<= 2), whole process".format(hc), hc <= 2)
    if "k100000" in rows:
        r = rows["k100000"]
        t = r["med"]["hotswap"]
        target("k100000: {} ms (<= 2000 ms)".format(ms(t)), t <= 2.0)
        if "k1000" in rows:
            g = (t / 1e5) / (rows["k1000"]["med"]["hotswap"] / 1e3)
            target("k100000: time/kernel x{:.2f} of the 1000 case (<= 1.5)"
                   .format(g), g <= 1.5)
    for k in ("nosgpr-640",):
        if k in rows:
            r = rows[k]
            m = r["med"]
            hc = m["hotswap"] / m["cp"]
            lim = 2 * r["size"] + 20 * MiB
            target("{} ({} MiB, no .numbered_sgpr): hotswap/cp = {:.2f} "
                   "(<= 3)".format(k, mib(r["size"]), hc), hc <= 3)
            target("{}: peak RSS {} MiB (<= 2 x file + 20 = {} MiB)".format(
                k, mib(r["rss"]["hotswap"]), mib(lim)),
                r["rss"]["hotswap"] <= lim)

    # Per-pass time for the largest input.
    big = max(rows, key=lambda k: rows[k]["size"])
    print()
    print("-time-passes on {}:".format(big))
    print(time_passes(a.tool, paths[big][0], work).rstrip())


# ---------------------------------------------------------------- real ---

def suite_real(a, work, corpus):
    _, rs = corpus["librocsparse0"]
    _, rw = corpus["librocrand1"]
    inputs = []
    for tgt, pat in (("gfx803", r"-gfx803\.co$"), ("gfx90a", r"-gfx90a"),
                     ("gfx1030", r"-gfx1030\.co$")):
        co = largest(rs, pat)
        if co:
            inputs.append(("rs-" + target_of(co), co))
    for co in rw:
        inputs.append(("rw-" + target_of(co), co))
    only = set(filter(None, a.only.split(",")))
    if only:
        inputs = [(n, p) for n, p in inputs if n in only]
    if not inputs:
        return
    nthreads = os.cpu_count()
    extra = {"hs-t1": [a.tool, "-passes=" + PIPELINE, "--threads=1"]}

    meter = LoadMeter()
    rows = {}
    for name, path in inputs:
        size = os.path.getsize(path)
        stats, _ = stats_json(a.tool, path, work)
        n = stats.get("synth-trampolines.kernels", 0)
        log("measuring {} ({} kernels, {} MiB, {} reps)".format(
            name, n, mib(size), a.reps))
        med, rss, _ = measure(a.tool, path, work, a.reps, extra=extra)
        rows[name] = dict(path=path, n=n, size=size, med=med, rss=rss,
                          stats=stats, code=exec_bytes(path))
    load = meter.report()

    print()
    print("== real: device code objects of Debian's librocsparse0 (rs-, the "
          "largest of three targets) and librocrand1 (rw-, all)")
    print("Medians of {} alternating runs (hotswap-opt on all {} cores, "
          "hotswap-opt --threads=1, cp, llvm-objcopy); whole process; peak "
          "RSS from wait4().".format(a.reps, nthreads))
    print("Machine: " + load)
    print()
    hdr = ("input", "kernels", "MiB", "code MiB", "hs ms", "hs-t1 ms",
           "cp ms", "objcopy ms", "hs/cp", "t1/cp", "hs/objcopy", "CPU ms",
           "RSS MiB")
    fmt = ("{:<24} {:>7} {:>5} {:>8} {:>7} {:>8} {:>6} {:>10} {:>6} {:>6} "
           "{:>10} {:>7} {:>7}")
    print(fmt.format(*hdr))
    for name, r in rows.items():
        m, rs_ = r["med"], r["rss"]
        print(fmt.format(name, r["n"], mib(r["size"]), mib(r["code"]),
                         ms(m["hotswap"]), ms(m["hs-t1"]), ms(m["cp"]),
                         ms(m["objcopy"]),
                         "{:.2f}".format(m["hotswap"] / m["cp"]),
                         "{:.2f}".format(m["hs-t1"] / m["cp"]),
                         "{:.3f}".format(m["hotswap"] / m["objcopy"]),
                         ms(m["hotswap-cpu"]), mib(rs_["hotswap"])))
    print()
    print("Stubs (from -stats): short / long (SGPR pair) / VCC; granules "
          "raised; executable bytes")
    for name, r in rows.items():
        st = r["stats"]
        stubs = st.get("synth-trampolines.stubs", 0)
        short = st.get("synth-trampolines.short", 0)
        vcc = st.get("synth-trampolines.vcc", 0)
        print("  {:<24} {:>4} short {:>4} long {:>3} vcc {:>4} granule+  "
              "{}".format(name, short, stubs - short - vcc, vcc,
                          st.get("patch-descriptors.granule-raised", 0),
                          "{} KiB of code".format(r["code"] // 1024)))

    print()
    print("Targets (issue 25: gfx8-9 objects <= 2.5x cp, the largest gfx803 "
          "one <= 1/4 of objcopy too; others <= 3x cp):")
    big = max((k for k in rows if k.startswith("rs-")),
              key=lambda k: rows[k]["size"], default=None)
    gfx803 = max((k for k in rows if k.startswith("rs-gfx803")),
                 key=lambda k: rows[k]["size"], default=None)
    if gfx803:
        m = rows[gfx803]["med"]
        ho = m["hotswap"] / m["objcopy"]
        target("{} (largest librocsparse0 gfx803 object, {} MiB): "
               "hotswap/objcopy = {:.3f} (<= 0.25)".format(
                   gfx803, mib(rows[gfx803]["size"]), ho), ho <= 0.25)
    for name, r in rows.items():
        m = r["med"]
        hc = m["hotswap"] / m["cp"]
        lim = 2 * r["size"] + 20 * MiB
        gfx89 = re.search(r"-gfx(8|9)", name) is not None
        limit = 2.5 if gfx89 else 3
        target("{}: hotswap/cp = {:.2f} (<= {})".format(name, hc, limit),
               hc <= limit)
        target("{}: peak RSS {} MiB (<= 2 x file + 20 = {} MiB)".format(
            name, mib(r["rss"]["hotswap"]), mib(lim)),
            r["rss"]["hotswap"] <= lim)

    if big:
        path = rows[big]["path"]
        print()
        print("-time-passes on {} (all cores):".format(big))
        print(time_passes(a.tool, path, work).rstrip())
        print()
        print("-time-passes on {} (--threads=1):".format(big))
        print(time_passes(a.tool, path, work, ["--threads=1"]).rstrip())
        print()
        print("-stats on {}:".format(big))
        p = subprocess.run([a.tool, "-passes=" + PIPELINE, "-stats", path,
                            "-disable-output"], capture_output=True, text=True)
        print("\n".join(l for l in p.stderr.splitlines()
                        if re.match(r"\s+\d+ ", l)))
        if a.profile:
            out = os.path.join(work, "prof.co")
            print()
            print("Profile of {} (--threads=1):".format(big))
            print(profile(a.tool, ["-passes=" + PIPELINE, "--threads=1", path,
                                   "-o", out], work))
            small = min((k for k in rows), key=lambda k: (
                re.search(r"-gfx(8|9)", k) is None, rows[k]["size"]))
            print()
            print("Instructions (callgrind, --threads=1) on {}, a smaller "
                  "gfx8-9 object; perf hardware counters here: {}"
                  .format(small, "yes" if hw_counters() else
                          "not supported (perf stat -e instructions)"))
            print(callgrind(a.tool, ["-passes=" + PIPELINE, "--threads=1",
                                     rows[small]["path"], "-o", out], work))
            if os.path.exists(out):
                os.unlink(out)


# ---------------------------------------------------------------- many ---

def suite_many(a, work, corpus):
    _, cos = corpus["librocsparse0"]
    n = a.threads
    d = os.path.join(work, "many")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    out = os.path.join(d, "out")
    keep = {"hs-t1": os.path.join(d, "t1"),
            "hs-t{}".format(n): os.path.join(d, "t{}".format(n))}
    total = sum(os.path.getsize(c) for c in cos)
    base = [a.tool, "-passes=" + PIPELINE, "--output-dir=" + out]
    cmds = {
        "hs-t1": base[:2] + ["--threads=1"] + base[2:] + cos,
        "hs-t{}".format(n): base[:2] + ["--threads={}".format(n)] + base[2:]
        + cos,
        "cp-r": ["cp", "-r"] + cos + [out + "/"],
    }

    def before(k):
        shutil.rmtree(out, ignore_errors=True)
        if k == "cp-r":
            os.makedirs(out)
        sync()

    def after(k, rep):
        if k in keep and not os.path.exists(keep[k]):
            os.rename(out, keep[k])

    log("many inputs: {} code objects, {} MiB, {} reps".format(
        len(cos), mib(total), a.big_reps))
    # Warm the page cache with the inputs (cp -r reads them all).
    before("cp-r")
    run_once(cmds["cp-r"], os.path.join(d, "none"))
    meter = LoadMeter()
    med, rss = rotate(cmds, os.path.join(d, "none"), a.big_reps,
                      warmup=False, before=before, after=after)
    load = meter.report()
    shutil.rmtree(out, ignore_errors=True)

    # Every thread count writes the same bytes (untimed: one more count).
    extra_n = 2 * n + 1
    keep["hs-t{}".format(extra_n)] = os.path.join(d, "t{}".format(extra_n))
    p = subprocess.run(base[:2] + ["--threads={}".format(extra_n),
                                   "--output-dir=" + keep["hs-t{}".format(
                                       extra_n)]] + cos,
                       capture_output=True, text=True)
    summary = p.stderr.strip().splitlines()[-1:] if p.stderr else []
    ref = keep["hs-t1"]
    names = [os.path.basename(c) for c in cos]
    diffs = {}
    for k, dd in keep.items():
        if k == "hs-t1":
            continue
        bad = [f for f in names
               if not os.path.exists(os.path.join(dd, f)) or
               not filecmp.cmp(os.path.join(ref, f), os.path.join(dd, f),
                               shallow=False)]
        diffs[k] = bad
    changed = sum(1 for f in names if not filecmp.cmp(
        os.path.join(ref, f), os.path.join(os.path.dirname(cos[0]), f),
        shallow=False))

    print()
    print("== many: librocsparse0's {} code objects ({} MiB) as the inputs of "
          "one command, --output-dir".format(len(cos), mib(total)))
    print("Medians of {} alternating runs, each into an empty directory after "
          "sync (untimed); page cache warm.".format(a.big_reps))
    print("Machine: " + load)
    print()
    fmt = "{:<10} {:>9} {:>9} {:>9} {:>9}  {}"
    print(fmt.format("command", "wall s", "CPU s", "RSS MiB", "x cp -r",
                     "argv"))
    for k in cmds:
        print(fmt.format(k, secs(med[k]), secs(med[k + "-cpu"]),
                         mib(rss[k]), "{:.2f}".format(med[k] / med["cp-r"]),
                         " ".join(cmds[k][:4]) + " ..."))
    tn = "hs-t{}".format(n)
    print()
    print("speed-up of --threads={} over --threads=1: {:.2f}x".format(
        n, med["hs-t1"] / med[tn]))
    if summary:
        print("summary line (--threads={}): {}".format(extra_n, summary[0]))
    print("outputs that differ from the input: {} of {}".format(changed,
                                                                  len(names)))
    for k, bad in diffs.items():
        print("outputs of {} vs --threads=1: {}".format(
            k.replace("hs-t", "--threads="),
            "all {} identical".format(len(names)) if not bad else
            "{} DIFFER: {}".format(len(bad), " ".join(bad[:10]))))
    print()
    print("Targets:")
    r = med[tn] / med["cp-r"]
    target("many: --threads={} / cp -r = {:.2f} (<= 3)".format(n, r), r <= 3)
    target("many: identical bytes for --threads=1, {}, {}".format(n, extra_n),
           not any(diffs.values()))
    if not a.keep_outputs:
        shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------- capi ---

def suite_capi(a, work, corpus):
    _, cos = corpus["librocsparse0"]
    exe = os.path.join(os.path.dirname(os.path.dirname(a.tool)), "utils",
                       "bench", "hotswap-capi-threads")
    print()
    print("== capi: hotswap-capi-threads (C API), librocsparse0's three "
          "largest gfx803 objects")
    if not os.path.exists(exe):
        print("({} is not built)".format(exe))
        return
    three = sorted((c for c in cos if c.endswith("-gfx803.co")),
                   key=os.path.getsize, reverse=True)[:3]
    meter = LoadMeter()
    p = subprocess.run([exe, "-reps={}".format(a.capi_reps), "-threads=2"]
                       + three, capture_output=True, text=True)
    load = meter.report()
    print("Machine: " + load)
    print(p.stdout.rstrip())
    if p.returncode != 0:
        print("FAILED: " + p.stderr.strip())
        target("capi: every output identical to the serial run's", False)
        return
    m = re.search(r"speed-up ([\d.]+)x", p.stdout)
    print()
    print("Targets:")
    if m:
        target("capi: two threads {}x faster than one (>= 1.8 on two idle "
               "cores)".format(m.group(1)), float(m.group(1)) >= 1.8)


# ---------------------------------------------------------------- libs ---

def fake_hip(a, work):
    """test/FatBinary's fake HIP runtime, stand-in libamdhip64.so.5 and
    dlopen driver, built once; None when they cannot be built."""
    d = os.path.join(a.cache, "fake-hip")
    if not os.path.exists(os.path.join(d, "run-fat")):
        p = subprocess.run(
            [sys.executable, os.path.join(a.root, "test", "FatBinary",
                                          "Inputs", "fatbin.py"),
             "--llvm-bin", LLVM, "--cache", os.path.join(a.cache,
                                                         "fake-hip-cache"),
             "build", "hip-stand-ins", d], capture_output=True, text=True)
        if p.returncode != 0:
            log("cannot build the fake HIP runtime: " + p.stderr.strip())
            return None
    return d


def load_check(a, fh, lib, new, work):
    """Loads lib and new with the fake runtime (as
    test/FatBinary/rewrite-rocrand.test does): the same registrations, and
    every registered bundle is the output's bytes. Returns a sentence."""
    fatbin = [sys.executable, os.path.join(a.root, "test", "FatBinary",
                                           "Inputs", "fatbin.py")]
    events = []
    for which, path in (("in", lib), ("out", new)):
        dump = os.path.join(work, "dump-" + which)
        shutil.rmtree(dump, ignore_errors=True)
        os.makedirs(dump)
        env = dict(os.environ, FAKE_HIP_DUMP_DIR=dump,
                   LD_PRELOAD=os.path.join(fh, "libfakehip.so"),
                   LD_LIBRARY_PATH=os.path.join(fh, "stand-in"))
        p = subprocess.run([os.path.join(fh, "run-fat"), path], env=env,
                           capture_output=True, text=True)
        if p.returncode != 0 or "closed" not in p.stdout:
            return "FAILED to load {}: {}{}".format(path, p.stdout, p.stderr)
        with open(os.path.join(dump, "events.txt")) as f:
            events.append(f.read())
    dump_out = os.path.join(work, "dump-out")
    p = subprocess.run(fatbin + ["check-capture", dump_out, new],
                       capture_output=True, text=True)
    last = (p.stdout.strip().splitlines() or ["?"])[-1]
    regs = events[1].count("register-function")
    shutil.rmtree(os.path.join(work, "dump-in"), ignore_errors=True)
    shutil.rmtree(dump_out, ignore_errors=True)
    if events[0] != events[1]:
        return "FAILED: the output registers other kernels than the input"
    if p.returncode != 0:
        return "FAILED: check-capture: " + p.stdout.strip()
    return ("loads with the fake HIP runtime: {} kernels registered, as from "
            "the input; check-capture: {}".format(regs, last))


def suite_libs(a, work, corpus):
    libs = []
    for pkg in ("librocrand1", "librocsparse0"):
        hosts, _ = corpus[pkg]
        libs += [(pkg, h) for h in hosts]
    only = set(filter(None, a.only.split(",")))
    if only:
        libs = [(p, h) for p, h in libs if p in only]
    d = os.path.join(work, "libs")
    fh = fake_hip(a, work)
    rows = []
    for pkg, lib in libs:
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "new"))
        os.makedirs(os.path.join(d, "again"))
        name = os.path.basename(lib)
        new = os.path.join(d, "new", name)
        again = os.path.join(d, "again", name)
        size = os.path.getsize(lib)
        big = size > 256 * MiB
        reps = a.big_reps if big else a.reps
        cmds = {"hotswap": [a.tool, "-passes=" + PIPELINE, lib, "-o", new],
                "cp": ["cp", lib, new]}
        log("library {} ({} MiB, {} reps)".format(name, mib(size), reps))
        if big:  # warm the page cache once, no warm-up of each command
            run_once(cmds["cp"], new)
        meter = LoadMeter()
        med, rss = rotate(cmds, new, reps, warmup=not big,
                          before=lambda k: sync())
        load = meter.report()
        # The checks: one more run (its summary line), llvm-readelf, a second
        # run on the output, a load with the fake runtime.
        p = subprocess.run(cmds["hotswap"], capture_output=True, text=True)
        summary = (p.stderr.strip().splitlines() or [""])[-1]
        r = subprocess.run([LLVM + "/llvm-readelf", "--all", new],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
        readelf = ("silent" if r.returncode == 0 and not r.stderr.strip()
                   else "WARNINGS: " + r.stderr.strip()[:500])
        p2 = subprocess.run([a.tool, "-passes=" + PIPELINE, new, "-o", again],
                            capture_output=True, text=True)
        idem = (p2.returncode == 0 and
                filecmp.cmp(new, again, shallow=False))
        second = (p2.stderr.strip().splitlines() or [""])[-1]
        loads = load_check(a, fh, lib, new, d) if fh else "(no fake runtime)"
        prof = ""
        if a.profile and not big:
            prof = profile(a.tool, ["-passes=" + PIPELINE, "--threads=1", lib,
                                    "-o", new], d)
        rows.append(dict(pkg=pkg, name=name, size=size, out=os.path.getsize(new),
                         med=med, rss=rss, reps=reps, load=load,
                         summary=summary, readelf=readelf, idem=idem,
                         second=second, loads=loads, prof=prof))
        shutil.rmtree(d, ignore_errors=True)

    print()
    print("== libs: whole HIP host libraries, hotswap-opt -passes={} LIB -o "
          "OUT (all {} cores) against cp LIB OUT".format(PIPELINE,
                                                         os.cpu_count()))
    fmt = "{:<24} {:>8} {:>8} {:>5} {:>9} {:>9} {:>6} {:>8} {:>8} {:>9}"
    print(fmt.format("library", "MiB", "out MiB", "reps", "hotswap s", "cp s",
                     "hs/cp", "CPU s", "RSS MiB", "limit MiB"))
    for r in rows:
        m = r["med"]
        print(fmt.format(r["name"], mib(r["size"]), mib(r["out"]), r["reps"],
                         secs(m["hotswap"]), secs(m["cp"]),
                         "{:.2f}".format(m["hotswap"] / m["cp"]),
                         secs(m["hotswap-cpu"]), mib(r["rss"]["hotswap"]),
                         mib(r["size"] + 512 * MiB)))
    for r in rows:
        print()
        print("{}: medians of {} alternating runs, each after sync "
              "(untimed)".format(r["name"], r["reps"]))
        print("  machine: " + r["load"])
        print("  " + r["summary"])
        print("  llvm-readelf --all on the output: " + r["readelf"])
        print("  second run on the output: {} ({})".format(
            "byte-identical" if r["idem"] else "DIFFERENT BYTES", r["second"]))
        print("  " + r["loads"])
        if r["prof"]:
            print("  profile (--threads=1):")
            print("\n".join("  " + l for l in r["prof"].splitlines()))
    print()
    print("Targets:")
    for r in rows:
        m = r["med"]
        hc = m["hotswap"] / m["cp"]
        target("{}: hotswap/cp = {:.2f} (<= 3)".format(r["name"], hc), hc <= 3)
        target("{}: peak RSS {} MiB (<= input + 512 = {} MiB)".format(
            r["name"], mib(r["rss"]["hotswap"]), mib(r["size"] + 512 * MiB)),
            r["rss"]["hotswap"] <= r["size"] + 512 * MiB)
        target("{}: output idempotent, readelf silent, loads".format(
            r["name"]), r["idem"] and r["readelf"] == "silent" and
            not r["loads"].startswith("FAILED"))


# ---------------------------------------------------------------- main ---

SUITES = ("synthetic", "real", "many", "capi", "libs")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--suite", default="synthetic,real",
                    help="comma-separated: {} or all".format(", ".join(SUITES)))
    ap.add_argument("--corpus", default="",
                    help="where the Debian packages and their code objects "
                    "are (default CACHE/corpus; e.g. /work/corpus)")
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--big-reps", type=int, default=3,
                    help="repetitions of the 1.3 GB inputs (many, libs)")
    ap.add_argument("--capi-reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="N of --threads=N in the many suite")
    ap.add_argument("--no-profile", dest="profile", action="store_false",
                    help="skip the perf/callgrind profile (real suite)")
    ap.add_argument("--keep-outputs", action="store_true",
                    help="keep the many suite's output directories")
    ap.add_argument("--baseline", default="",
                    help="another hotswap-opt binary to time alongside")
    ap.add_argument("--only", default="",
                    help="comma-separated input names to measure (synthetic:"
                    " tiny-2, k1000, ...; real: rs-gfx803, rw-gfx1030, ...; "
                    "libs: librocrand1, librocsparse0)")
    a = ap.parse_args()
    suites = (list(SUITES) if a.suite == "all" else
              [s for s in a.suite.split(",") if s])
    for s in suites:
        if s not in SUITES:
            ap.error("unknown suite '{}'".format(s))
    a.cache = os.path.abspath(a.cache)
    os.makedirs(a.cache, exist_ok=True)
    work = os.path.join(a.cache, "work")
    os.makedirs(work, exist_ok=True)
    build_runone(a.cache)
    print("suites: {}; loadavg at the start: {}".format(",".join(suites),
                                                       loadavg()))
    sys.stdout.flush()

    corpus = {}
    if set(suites) & {"real", "many", "capi", "libs"}:
        cdir = os.path.abspath(a.corpus or os.path.join(a.cache, "corpus"))
        for pkg in ("librocsparse0", "librocrand1"):
            corpus[pkg] = corpus_package(a.root, cdir, pkg)

    for s in suites:
        if s == "synthetic":
            suite_synthetic(a, work)
        elif s == "real":
            suite_real(a, work, corpus)
        elif s == "many":
            suite_many(a, work, corpus)
        elif s == "capi":
            suite_capi(a, work, corpus)
        elif s == "libs":
            suite_libs(a, work, corpus)
        sys.stdout.flush()

    if TARGETS:
        print()
        print("All targets: {} met, {} missed".format(
            sum(1 for _, ok in TARGETS if ok),
            sum(1 for _, ok in TARGETS if not ok)))
        for text, ok in TARGETS:
            if not ok:
                print("  MISSED: " + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
