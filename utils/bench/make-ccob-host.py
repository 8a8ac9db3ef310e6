#!/usr/bin/env python3
"""A HIP host library with a compressed bundle, made from one with a plain
bundle (Debian's are all plain): its one bundle's entries bundled again by
clang-offload-bundler -compress (CCOB v3, zstd at the bundler's level; the
host entry's old four-part triple renamed to the five parts LLVM 22 wants),
written over the plain one at the same address, zeros after it (punched as
holes: `fallocate -d`). The wrapper still points at it; HIP sizes a CCOB by
its header. What the issue 46 figures for compressed bundles were measured
on (README, "A library rewritten again").

usage: make-ccob-host.py LIB OUT [--bundler PATH]
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "test", "FatBinary", "Inputs"))
import fatbin  # noqa: E402  (the tests' reader of wrappers and bundles)

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("out")
    ap.add_argument("--bundler", default="/usr/lib/llvm-22/bin/clang-offload-bundler")
    a = ap.parse_args()
    elf = fatbin.Elf(a.lib)
    ws = fatbin.wrappers(elf)
    offsets = {w.get("offset") for w in ws}
    if len(offsets) != 1 or None in offsets:
        sys.exit("make-ccob-host.py: %s: wants one bundle, has %d" % (a.lib, len(offsets)))
    off = offsets.pop()
    data = bytearray(elf.data)
    if data[off:off + len(MAGIC)] != MAGIC:
        sys.exit("make-ccob-host.py: %s: the bundle is not a plain one" % a.lib)
    n = struct.unpack_from("<Q", data, off + 24)[0]
    p, end, ins, ids = off + 32, 0, [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n):
            eo, es, il = struct.unpack_from("<QQQ", data, p)
            p += 24
            ident = data[p:p + il].decode()
            p += il
            if ident.startswith("host-"):
                ident = "host-x86_64-unknown-linux-gnu"
            f = os.path.join(tmp, "e%d.bin" % i)
            with open(f, "wb") as o:
                o.write(data[off + eo:off + eo + es])
            ins.append("-input=" + f)
            ids.append(ident)
            end = max(end, eo + es)
        c = os.path.join(tmp, "c.bundle")
        subprocess.check_call([a.bundler, "-type=o", "-bundle-align=4096", "-compress",
                               "-targets=" + ",".join(ids)] + ins + ["-output=" + c])
        ccob = open(c, "rb").read()
    if ccob[:4] != b"CCOB" or len(ccob) > end:
        sys.exit("make-ccob-host.py: the bundler made no smaller CCOB")
    data[off:off + end] = ccob + bytes(end - len(ccob))
    with open(a.out, "wb") as o:
        o.write(data)
    subprocess.call(["fallocate", "-d", a.out])
    print("%s: CCOB of %d bytes for the plain bundle of %d" % (a.out, len(ccob), end))


if __name__ == "__main__":
    main()
