"""Moves the section header table of an ELF64 file N bytes later (zero fill)
and patches e_shoff: shift-shdrs.py IN OUT N"""
import struct
import sys

src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = open(src, "rb").read()
shoff = struct.unpack_from("<Q", b, 0x28)[0]
out = bytearray(b[:shoff] + b"\0" * n + b[shoff:])
struct.pack_into("<Q", out, 0x28, shoff + n)
open(dst, "wb").write(out)
