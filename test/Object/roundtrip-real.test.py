"""Builds two-kernels.cl for many targets and checks empty-pipeline round trips."""
import os
import subprocess
import sys

out, clang, lld, tool = sys.argv[1:5]
src = os.path.join(os.path.dirname(__file__), "..", "Inputs", "two-kernels.cl")
targets = ["gfx803", "gfx900", "gfx906", "gfx90a", "gfx942", "gfx950", "gfx1030",
           "gfx1100", "gfx1102", "gfx1151", "gfx1201", "gfx1250", "gfx1251"]
failed = 0
for t in targets:
    for extra in ([], ["-g"]):
        tag = t + ("-g" if extra else "")
        o = os.path.join(out, tag + ".o")
        so = os.path.join(out, tag + ".so")
        res = os.path.join(out, tag + ".out")
        subprocess.check_call([clang, "--target=amdgcn-amd-amdhsa", "-mcpu=" + t,
                               "-nogpulib", "-O2", "-c", src, "-o", o] + extra)
        subprocess.check_call([lld, "-shared", o, "-o", so])
        for inp in (o, so):
            subprocess.check_call([tool, "-passes=", inp, "-o", res])
            if open(inp, "rb").read() != open(res, "rb").read():
                print("FAIL: round trip of %s is not byte-identical" % inp)
                failed += 1
print("round trips checked:", len(targets) * 4)
sys.exit(1 if failed else 0)
