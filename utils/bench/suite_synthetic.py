"""bench.py --suite synthetic: generated objects (gen.py): 2 to 100 000
kernels, a 14 MB one, and objects without `.numbered_sgpr` (as ROCm 5.x
builds them), against cp and llvm-objcopy; -time-passes on each.
"""

import os

from common import MiB, log, mib, ms, target
from inputs import clang_object, synthetic
from machine import LoadMeter
from timing import measure, time_passes


HUGE_KERNELS = 14075


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
        # The size of rocBLAS's Tensile libraries: 14 075 kernels of ~27 KiB
        # (~370 MiB), without .numbered_sgpr, as real ROCm objects ship.
        ("huge-14k", lambda: synthetic(a.cache, "huge-14k", HUGE_KERNELS,
                                       body_words=6900,
                                       debug_bytes=4 * MiB,
                                       numbered=False), HUGE_KERNELS),
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

    if "huge-14k" in rows:
        r = rows["huge-14k"]
        m = r["med"]
        hc = m["hotswap"] / m["cp"]
        lim = 1.2 * r["size"] + 20 * MiB
        target("huge-14k ({} MiB, {} kernels, no .numbered_sgpr): hotswap/cp "
               "= {:.2f} (<= 3)".format(mib(r["size"]), r["n"], hc), hc <= 3)
        target("huge-14k: peak RSS {} MiB (<= 1.2 x file + 20 = {} MiB)"
               .format(mib(r["rss"]["hotswap"]), mib(lim)),
               r["rss"]["hotswap"] <= lim)

    # Per-pass time for the largest input, on one thread (the phases add
    # up to the wall time).
    big = max(rows, key=lambda k: rows[k]["size"])
    print()
    print("-time-passes --threads=1 on {}:".format(big))
    print(time_passes(a.tool, paths[big][0], work,
                      extra=("--threads=1",)).rstrip())
