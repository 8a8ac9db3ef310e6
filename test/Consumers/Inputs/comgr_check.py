"""Builds two-kernels.cl for each target, rewrites it with hotswap-opt and has
COMGR (through comgr-read) read input and output; comgr_compare.py judges.

Usage: comgr_check.py OUTDIR CLANG LLD HOTSWAP-OPT COMGR-READ PASSES COV TARGET...
Each TARGET is an -mcpu value; every one is built with and without -g.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import comgr_compare  # noqa: E402

out, clang, lld, tool, reader, passes, cov = sys.argv[1:8]
targets = sys.argv[8:]
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs",
                   "two-kernels.cl")


def read(path, *extra):
    dump = path + ".comgr.txt"
    with open(dump, "w") as f:
        subprocess.check_call([reader, *extra, path], stdout=f)
    return comgr_compare.Dump(dump)


failed = 0
for target in targets:
    for extra in ([], ["-g"]):
        tag = target.replace(":", "_") + ("-g" if extra else "")
        obj, so, res = (os.path.join(out, tag + s) for s in (".o", ".so", ".out.so"))
        subprocess.check_call([clang, "--target=amdgcn-amd-amdhsa", "-mcpu=" + target,
                               "-nogpulib", "-O2", "-mcode-object-version=" + cov,
                               "-c", src, "-o", obj] + extra)
        subprocess.check_call([lld, "-shared", obj, "-o", so])
        subprocess.check_call([tool, "-passes=" + passes, so, "-o", res])
        failures, summary = comgr_compare.compare(read(so), read(res, "-d", "256"))
        label = target + (" -g" if extra else "")
        for f in failures:
            print("FAIL %s: %s" % (label, f))
        failed += bool(failures)
        if not failures:
            print("ok %s: %s" % (label, summary))
print("%d of %d objects read differently" % (failed, 2 * len(targets)))
sys.exit(1 if failed else 0)
