"""Optional, not run by lit (it needs objects from the network): has COMGR read
real ROCm-built code objects before and after trampoline,stub-syms,verify and
judges them with comgr_compare.py.

  utils/real-world.sh               # fetches librocrand1, extracts build/real-world/co/*.co
  python3 test/Consumers/Inputs/comgr_real_world.py build/real-world/co/*.co

Usage: comgr_real_world.py [--tool HOTSWAP-OPT] [--work DIR] CO...
"""
import argparse
import os
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import comgr_compare  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", default=os.path.join(here, "..", "..", "..", "build", "bin",
                                                   "hotswap-opt"))
    ap.add_argument("--work", default=os.path.join(here, "..", "..", "..", "build",
                                                   "comgr-real-world"))
    ap.add_argument("objects", nargs="+")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    reader = os.path.join(args.work, "comgr-read")
    subprocess.check_call(["/usr/lib/llvm-22/bin/clang++", "-std=c++17", "-O1",
                           os.path.join(here, "comgr-read.cpp"), "-o", reader,
                           "-lamd_comgr"])
    failed = 0
    t0 = time.time()
    for co in args.objects:
        base = os.path.join(args.work, os.path.basename(co))
        label = os.path.basename(co)
        subprocess.check_call([args.tool, "-passes=trampoline,stub-syms,verify", co,
                               "-o", base + ".out"])
        dumps = []
        for path, extra in ((co, []), (base + ".out", ["-d", "256"])):
            dump = base + (".out" if extra else ".in") + ".txt"
            with open(dump, "w") as f:
                subprocess.check_call([reader, *extra, path], stdout=f,
                                      stderr=subprocess.DEVNULL)
            dumps.append(comgr_compare.Dump(dump))
        failures, summary = comgr_compare.compare(*dumps)
        for f in failures[:20]:
            print("FAIL %s: %s" % (label, f))
        failed += bool(failures)
        if not failures:
            print("ok %s: %s" % (label, summary))
    print("%d passed, %d failed (%.1f s)" % (len(args.objects) - failed, failed,
                                             time.time() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
