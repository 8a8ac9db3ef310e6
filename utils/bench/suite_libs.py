"""bench.py --suite libs: librocrand1's and librocsparse0's whole host
libraries against cp; llvm-readelf, a second run (idempotence) and a load
with test/FatBinary's fake HIP runtime check each output.
"""

import filecmp
import os
import shutil
import subprocess
import sys

from common import LLVM, MiB, PIPELINE, log, mib, secs, sync, target
from machine import LoadMeter
from profiling import profile
from timing import rotate, run_once, time_passes

# Issue 26's bound for a whole library (librocsparse.so.0.1 is 1.25 GB).
RSS_LIMIT = 512 * MiB


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


def run_fake_hip(fh, lib, dump):
    """Loads lib with the fake HIP runtime built in fh (fake_hip), its
    registrations dumped into the empty directory dump; the run's result."""
    shutil.rmtree(dump, ignore_errors=True)
    os.makedirs(dump)
    env = dict(os.environ, FAKE_HIP_DUMP_DIR=dump,
               LD_PRELOAD=os.path.join(fh, "libfakehip.so"),
               LD_LIBRARY_PATH=os.path.join(fh, "stand-in"))
    return subprocess.run([os.path.join(fh, "run-fat"), lib], env=env,
                          capture_output=True, text=True)


def load_check(a, fh, lib, new, work):
    """Loads lib and new with the fake runtime (as
    test/FatBinary/rewrite-rocrand.test does): the same registrations, and
    every registered bundle is the output's bytes. Returns a sentence."""
    fatbin = [sys.executable, os.path.join(a.root, "test", "FatBinary",
                                           "Inputs", "fatbin.py")]
    events = []
    for which, path in (("in", lib), ("out", new)):
        dump = os.path.join(work, "dump-" + which)
        p = run_fake_hip(fh, path, dump)
        if p.returncode != 0 or "closed" not in p.stdout:
            if which == "in":
                # The stand-in runtime defines what librocrand needs, not
                # every library's symbols: nothing to compare against.
                return ("not checked: the fake HIP runtime cannot load the "
                        "input ({})".format((p.stdout + p.stderr).strip()
                                            .splitlines()[-1][-160:]))
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
        # The yardstick is cp of the tool's own output: the bytes it must
        # write (a rewritten library is about twice its input).
        ref = os.path.join(d, "ref-" + name)
        run_once([a.tool, "-passes=" + PIPELINE, lib, "-o", ref], ref)
        cmds = {"hotswap": [a.tool, "-passes=" + PIPELINE, lib, "-o", new],
                "cp": ["cp", ref, new]}
        log("library {} ({} MiB, {} reps)".format(name, mib(size), reps))
        if big:  # warm the page cache once, no warm-up of each command
            run_once(["cp", lib, new], new)
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
        phases = time_passes(a.tool, lib, d, extra=("--threads=1",))
        prof = ""
        if a.profile and not big:
            prof = profile(a.tool, ["-passes=" + PIPELINE, "--threads=1", lib,
                                    "-o", new], d)
        rows.append(dict(pkg=pkg, name=name, size=size, out=os.path.getsize(new),
                         med=med, rss=rss, reps=reps, load=load,
                         summary=summary, readelf=readelf, idem=idem,
                         second=second, loads=loads, prof=prof,
                         phases=phases))
        shutil.rmtree(d, ignore_errors=True)

    print()
    print("== libs: whole HIP host libraries, hotswap-opt -passes={} LIB -o "
          "OUT (all {} cores) against cp OUT OUT2 (its own output)".format(PIPELINE,
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
                         mib(RSS_LIMIT)))
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
        print("  -time-passes --threads=1:")
        print("\n".join("    " + l for l in r["phases"].splitlines()))
        if r["prof"]:
            print("  profile (--threads=1):")
            print("\n".join("  " + l for l in r["prof"].splitlines()))
    print()
    print("Targets:")
    for r in rows:
        m = r["med"]
        hc = m["hotswap"] / m["cp"]
        target("{}: hotswap/cp of its output = {:.2f} (<= 1.5)".format(
            r["name"], hc), hc <= 1.5)
        target("{}: peak RSS {} MiB, {:.2f} of the input (<= {} MiB)".format(
            r["name"], mib(r["rss"]["hotswap"]),
            r["rss"]["hotswap"] / r["size"], mib(RSS_LIMIT)),
            r["rss"]["hotswap"] <= RSS_LIMIT)
        target("{}: output idempotent, readelf silent, loads (where the "
               "input does)".format(
            r["name"]), r["idem"] and r["readelf"] == "silent" and
            not r["loads"].startswith("FAILED"))
