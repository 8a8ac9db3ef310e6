"""Compiles a kernel (lds2.cl with an inline-assembly clobber of one VGPR
and one SGPR) for several targets and register counts, and compares the
occupancy print<sites> gives before the allocation grows with the one
clang prints ("; Occupancy: N" in -S); then, for a few, the occupancy after
it grows with clang's for a kernel of the grown count. Prints how many
agree and each that does not. Usage: OUT (a directory holding
many-vgprs.s) LDS2 (lds2.cl); clang and hotswap-opt from PATH."""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
out, source = sys.argv[1], sys.argv[2]
# lds2.cl with a clobber of one VGPR and one SGPR before its store.
KERNEL = open(source).read().replace(
    "  out[g] =", '  __asm__ volatile("; clobber" ::: "%s", "%s");\n  out[g] =')
assert "clobber" in KERNEL
RULE = ("match=^ds_(read2|load_2addr)_b32;where=before;insert=many-vgprs.s;"
        "grow-vgprs=%d")


def build(target, vgpr, sgpr):
    """The object and clang's occupancy for a kernel clobbering vVGPR and
    sSGPR."""
    src = os.path.join(out, "k.cl")
    with open(src, "w") as f:
        f.write(KERNEL % ("v%d" % vgpr, "s%d" % sgpr))
    base = os.path.join(out, "%s-v%d-s%d" % (target, vgpr, sgpr))
    args = ["clang", "-target", "amdgcn-amd-amdhsa", "-mcpu=" + target, "-O2",
            "-nogpulib", "-w", src]
    subprocess.run(args + ["-S", "-o", base + ".s"], check=True)
    subprocess.run(args + ["-o", base + ".co"], check=True)
    clang = re.search(r"; Occupancy: (\d+)", open(base + ".s").read())
    return base + ".co", int(clang.group(1))


def ours(obj, grow):
    p = subprocess.run(["hotswap-opt", "-passes=print<sites;%s>" % (RULE % grow),
                        obj], cwd=out, stdout=subprocess.PIPE, text=True,
                       check=True)
    m = re.search(r"occupancy (\d+)(?: -> (\d+))? waves", p.stdout)
    if not m:
        return None, None, p.stdout
    before = int(m.group(1))
    return before, int(m.group(2) or before), p.stdout


cases = [(t, v, s) for t in ("gfx900", "gfx90a", "gfx1010", "gfx1030",
                             "gfx1100", "gfx1201")
         for v, s in ((40, 20), (95, 85), (170, 99), (255, 20))]
agree = 0
for t, v, s in cases:
    obj, clang = build(t, v, s)
    before, _, text = ours(obj, 40)
    if before == clang:
        agree += 1
    else:
        print("before: %s v%d s%d: clang %d, print<sites> %s" % (
            t, v, s, clang, before))
print("before: %d of %d kernels agree with clang" % (agree, len(cases)))

# After: the small kernel's allocation grows to what many-vgprs.s takes;
# clang's figure for a kernel of that many VGPRs.
agree = 0
after_cases = ("gfx900", "gfx90a", "gfx1030", "gfx1100")
for t in after_cases:
    obj, _ = build(t, 4, 20)
    _, after, text = ours(obj, 40)
    grown = re.search(r"grows from \d+ to (\d+) VGPRs", text)
    if not grown:
        print("after: %s: no growth in %r" % (t, text))
        continue
    _, clang = build(t, int(grown.group(1)) - 1, 20)
    if after == clang:
        agree += 1
    else:
        print("after: %s: clang %d, print<sites> %s" % (t, clang, after))
print("after: %d of %d kernels agree with clang" % (agree, len(after_cases)))
