#!/usr/bin/env python3
"""An offload bundle of many entries, for the tests that hotswap-opt's time
stays linear in the number of entries a bundle declares.

Usage: many-entries.py MODE N CO OUT [--zlib-ccob]

  others   N 16-byte OpenMP entries 'openmp-x86_64-pc-linux-gnu-I' (which
           hotswap-opt copies as they are), then one AMDGPU entry
           'hipv4-amdgcn-amd-amdhsa--gfx90a' holding CO
  amdgpu   N AMDGPU entries 'hipv4-amdgcn-amd-amdhsa--gfx90a-I', each a copy
           of CO

Payloads are 16-byte aligned. --zlib-ccob writes the bundle as a zlib CCOB
v3 (hash right), as bundle.py compress does.
"""
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "Bundle", "Inputs"))
import bundle  # noqa: E402  (test/Bundle/Inputs/bundle.py)


def main():
    mode, n, co, out = (sys.argv[1], int(sys.argv[2]), sys.argv[3],
                        sys.argv[4])
    payload = open(co, "rb").read()
    hip = b"hipv4-amdgcn-amd-amdhsa--gfx90a"
    if mode == "others":
        entries = [(b"openmp-x86_64-pc-linux-gnu-%d" % i, b"\x5a" * 16)
                   for i in range(n)] + [(hip, payload)]
    elif mode == "amdgpu":
        entries = [(hip + b"-%d" % i, payload) for i in range(n)]
    else:
        sys.exit("many-entries.py: unknown mode " + mode)
    data = bundle.build(entries, 16)
    if "--zlib-ccob" in sys.argv[5:]:
        stream = zlib.compress(data, 1)
        data = (bundle.CCOB + struct.pack("<HHQQQ", 3, 0, 32 + len(stream),
                                          len(data), bundle.md5low(data))
                + stream)
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
