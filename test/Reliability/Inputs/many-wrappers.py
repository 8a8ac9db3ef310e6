#!/usr/bin/env python3
"""x86-64 assembly of a HIP host library with N __hip_fatbin_wrapper
records, all pointing at one bundle (BUNDLE, included with .incbin).

Usage: many-wrappers.py N BUNDLE > OUT.s
       llvm-readelf -r LIB | many-wrappers.py --count-addends
         prints "N relocations, K distinct addend(s)" for the R_X86_64_64
         relocations llvm-readelf lists.
"""
import sys

if sys.argv[1] == "--count-addends":
    addends = []
    for line in sys.stdin:
        f = line.split()
        if len(f) >= 7 and f[2] == "R_X86_64_64":
            addends.append(f[-1])
    print("%d relocations, %d distinct addend%s" %
          (len(addends), len(set(addends)), "" if len(set(addends)) == 1 else "s"))
    sys.exit(0)

n, bundle = int(sys.argv[1]), sys.argv[2]
print('.section .hip_fatbin,"a",@progbits')
print(".p2align 12")
print(".globl __hip_fatbin")
print("__hip_fatbin:")
print('.incbin "%s"' % bundle)
print('.section .hipFatBinSegment,"aw",@progbits')
print(".p2align 3")
print(".rept %d" % n)
print(".long 0x48495046")  # 'HIPF'
print(".long 1")
print(".quad __hip_fatbin")
print(".quad 0")
print(".endr")
