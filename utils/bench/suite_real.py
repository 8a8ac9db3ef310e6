"""bench.py --suite real: real code objects: librocsparse0's largest gfx803,
gfx90a and gfx1030 objects and librocrand1's seven; stub forms and granule
bumps (-stats), -time-passes and a profile of the largest.
"""

import json
import os
import re
import subprocess

from common import MiB, PIPELINE, log, mib, ms, target
from inputs import exec_bytes, largest, target_of
from machine import LoadMeter
from profiling import callgrind, hw_counters, profile
from timing import measure, stats_json, time_passes


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

    # The scratch pair on every gfx6-9 object of librocsparse0, in one run:
    # how many kernels get a larger SGPR allocation, and whether LLVM MC
    # was started at all (the pair comes from the descriptor alone).
    gfx69 = [c for c in rs if re.search(r"-gfx[6-9][0-9a-f]{1,2}[._]",
                                        os.path.basename(c))]
    if gfx69 and not only:
        p = subprocess.run([a.tool, "-passes=" + PIPELINE, "-stats",
                            "--kernels-format=json", "-disable-output"] +
                           gfx69, capture_output=True, text=True)
        st = json.loads(p.stderr[p.stderr.index("{"):])
        kernels = st.get("synth-trampolines.kernels", 0)
        raised = st.get("patch-descriptors.granule-raised", 0)
        pct = 100.0 * raised / kernels if kernels else 0.0
        target("librocsparse0's {} gfx6-9 objects: granule raised for {} of "
               "{} kernels, {:.2f}% (<= 3%)".format(len(gfx69), raised,
                                                    kernels, pct),
               p.returncode == 0 and kernels > 0 and pct <= 3)
        target("librocsparse0's {} gfx6-9 objects: LLVM MC states started: "
               "{}, instructions decoded: {} (none)".format(
                   len(gfx69), st.get("target.mc", 0),
                   st.get("target.decoded", 0)),
               p.returncode == 0 and "target.mc" not in st)

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
