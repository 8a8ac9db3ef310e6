#!/usr/bin/env python3
"""x86-64 assembly of a HIP host library with N + 1 __hip_fatbin_wrapper
records, each pointing at a bundle of its own: the first at a copy of
FIRST, the N others each at a copy of OTHER (all included with .incbin,
16-byte aligned).

Usage: many-bundles.py N FIRST OTHER > OUT.s
"""
import sys

n, first, other = int(sys.argv[1]), sys.argv[2], sys.argv[3]
out = ['.section .hip_fatbin,"a",@progbits\n.p2align 12\n',
       '.Lfirst:\n.incbin "%s"\n' % first]
for i in range(n):
    out.append('.p2align 4\n.Lb%d:\n.incbin "%s"\n' % (i, other))
out.append('.section .hipFatBinSegment,"aw",@progbits\n.p2align 3\n')
wrapper = ".long 0x48495046\n.long 1\n.quad %s\n.quad 0\n"  # 'HIPF', version
out.append(wrapper % ".Lfirst")
for i in range(n):
    out.append(wrapper % (".Lb%d" % i))
sys.stdout.write("".join(out))
