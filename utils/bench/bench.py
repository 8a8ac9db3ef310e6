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
  shapes     objects shaped as real libraries (gen_shapes.py): Tensile-like
             (1.8M local symbols, a 50 MB note at full size) and 100 000
             small kernels, and HIP host libraries shaped as librocsparse0's
             (gen_host.py: 798 code objects in 114 bundles at full size), at
             1/16, 1/4 and 1 of --shapes-scale; rewrite, verify,
             print<kernels>, restore, swap-kernels to disk against cp
  libs       librocrand1's and librocsparse0's whole host libraries against
             cp; llvm-readelf, a second run (idempotence) and a load with
             test/FatBinary's fake HIP runtime check each output

The real inputs come from Debian packages (apt-get download, as
utils/real-world.py does) into --corpus (default CACHE/corpus): a package's
directory is CORPUS/PKG, or any CORPUS/*/ holding root/PKG (a
`utils/real-world.py --keep --work DIR` directory, e.g. /work/corpus/rs);
its code objects are extracted once into DIR/co.

This file parses the options and runs the suites; each suite is a
module of its own (suite_*.py), and what they share is in timing.py
(running and alternating commands), inputs.py (generated and downloaded
inputs), profiling.py, machine.py (how busy the machine is) and common.py
(constants, report formatting, targets).

Every suite prints how busy the machine was while it ran: CPU time of all
processes (/proc/stat) against this benchmark's own. This is a benchmark, not
a test: it always exits 0 unless it cannot run at all.
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
from common import TARGETS  # noqa: E402  (the modules next to this script)
from inputs import corpus_package
from machine import loadavg
from suite_capi import suite_capi
from suite_libs import suite_libs
from suite_many import suite_many
from suite_real import suite_real
from suite_shapes import suite_shapes
from suite_synthetic import suite_synthetic
from timing import build_runone


SUITES = ("synthetic", "real", "many", "capi", "libs", "shapes")


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
    ap.add_argument("--shapes-scale", type=float, default=1 / 16,
                    help="shapes suite: the largest objects' share of the "
                    "full counts (1: 14 075 Tensile kernels, 100 000 small "
                    "ones, a host library of 798 code objects; default "
                    "1/16)")
    ap.add_argument("--keep-outputs", action="store_true",
                    help="keep the many suite's output directories")
    ap.add_argument("--baseline", default="",
                    help="another hotswap-opt binary to time alongside")
    ap.add_argument("--only", default="",
                    help="comma-separated input names to measure (synthetic:"
                    " tiny-2, k1000, ...; real: rs-gfx803, rw-gfx1030, ...; "
                    "libs: librocrand1, librocsparse0; shapes: tensile, "
                    "small, host or one size, e.g. host-49)")
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
        elif s == "shapes":
            suite_shapes(a, work)
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
