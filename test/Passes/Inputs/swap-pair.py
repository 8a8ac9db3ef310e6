"""Runs swap-kernels on one pair of objects for the swap-kernels tests.

Usage: swap-pair.py DIR TAG MCPU

DIR holds TAG-orig.o and TAG-fixed.o (clang -c of swap-orig.cl and
swap-fixed.cl for MCPU). Links both; wraps the original with long stubs
(synth-trampolines<form=long>,patch-descriptors,stub-syms); swaps vadd and
kern2 into the wrapped and into the bare original, with verify; prints
print<kernels>' line for vadd's wave size and live-in SGPRs, swapcheck.py's
report for each, and whether a second run is byte-identical. Tools come from
PATH (lit puts LLVM 22 and hotswap-opt first).
"""
import filecmp
import os
import subprocess
import sys

d, tag, mcpu = sys.argv[1:4]
here = os.path.dirname(os.path.abspath(__file__))


def p(name):
    return os.path.join(d, "%s-%s" % (tag, name))


def run(*argv, **kw):
    r = subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, **kw)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(argv), r.stdout))
    return r.stdout


for x in ("orig", "fixed"):
    run("ld.lld", "-shared", p(x + ".o"), "-o", p(x + ".co"))
run("hotswap-opt", "-passes=synth-trampolines<form=long>,patch-descriptors,stub-syms",
    p("orig.co"), "-o", p("long.co"))
swap = "-passes=swap-kernels<with=%s>,verify" % p("fixed.co")
for src, out in (("long.co", "long.out"), ("orig.co", "orig.out")):
    run("hotswap-opt", swap, p(src), "-o", p(out))
    kernels = run("hotswap-opt", "-passes=print<kernels>", "-disable-output", p(out))
    lines = kernels.splitlines()
    i = lines.index("kernel 'vadd'")
    props = [l for l in lines[i:] if "properties:" in l][0]
    sgprs = [l for l in lines[i:] if "sgprs:" in l][0]
    print("%s: %s %s" % (out, props.split()[2].rstrip(","), sgprs.strip()))
    print(run(sys.executable, os.path.join(here, "swapcheck.py"), "--objdump=llvm-objdump",
              "--readelf=llvm-readelf", "--mcpu=" + mcpu, p(src), p("fixed.co"), p(out),
              "vadd", "kern2"), end="")
    run("hotswap-opt", swap, p(out), "-o", p(out + ".again"))
    print("again: %s" % ("identical" if filecmp.cmp(p(out), p(out + ".again"), shallow=False)
                         else "DIFFERENT"))
