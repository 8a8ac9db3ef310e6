#!/usr/bin/env python3
"""x86-64 assembly of a HIP host library with N __hip_fatbin_wrapper
records, each pointing at its own copy of one small zstd CCOB (v3).

Usage: many-ccobs.py N CCOB_OUT [--claim S] > OUT.s

The CCOB (written to CCOB_OUT, included N times with .incbin) holds a
well-formed bundle of S bytes (default 63 MiB, just under the 64 MiB that
an input may decompress whatever its size, so no single bundle is refused
for its ratio): a host entry and an OpenMP entry of zeros that fills the
bundle to S bytes. The zstd frame declares S as its content size; it is
one raw block (the bundle header) and then RLE blocks of zeros, 4 bytes per
128 KiB, so the CCOB takes about 2 KiB. Its hash is right: nothing but the
sizes makes the bundles expensive.
"""
import hashlib
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "Bundle", "Inputs"))
import bundle  # noqa: E402  (test/Bundle/Inputs/bundle.py)

BLOCK = 128 * 1024  # zstd's largest block


def zstd_frame(raw, zeros):
    """RFC 8878 frame: RAW in raw blocks, then ZEROS zero bytes in RLE
    blocks; 8-byte frame content size, 128 KiB window."""
    out = bytearray(struct.pack("<I", 0xFD2FB528))
    out += bytes([0xC0, 7 << 3]) + struct.pack("<Q", len(raw) + zeros)
    blocks = [(0, raw[i:i + BLOCK]) for i in range(0, len(raw), BLOCK)]
    while zeros:
        blocks.append((1, min(zeros, BLOCK)))
        zeros -= blocks[-1][1]
    for i, (kind, b) in enumerate(blocks):
        last = 1 if i == len(blocks) - 1 else 0
        size = len(b) if kind == 0 else b
        out += struct.pack("<I", last | (kind << 1) | (size << 3))[:3]
        out += b if kind == 0 else b"\0"
    return bytes(out)


def main():
    n, ccob_out = int(sys.argv[1]), sys.argv[2]
    claim = 63 << 20
    if "--claim" in sys.argv:
        claim = int(sys.argv[sys.argv.index("--claim") + 1], 0)
    entries = [(b"host-x86_64-unknown-linux-gnu-", b""),
               (b"openmp-x86_64-pc-linux-gnu-zeros", b"\0")]
    # Lay the bundle out with a one-byte stand-in for the zeros entry, then
    # give that entry the size that makes the bundle CLAIM bytes long.
    b = bytearray(bundle.build(entries, 16))
    (zeros_entry_at, zeros_off) = [(at, off) for _, off, _, at in
                                   bundle.parse(bytes(b))[0]][1]
    struct.pack_into("<Q", b, zeros_entry_at + 8, claim - zeros_off)
    raw = bytes(b[:zeros_off])
    h = hashlib.md5(raw)
    chunk = bytes(1 << 20)
    left = claim - zeros_off
    while left:
        h.update(chunk[:min(left, len(chunk))])
        left -= min(left, len(chunk))
    frame = zstd_frame(raw, claim - zeros_off)
    ccob = (bundle.CCOB + struct.pack("<HHQQQ", 3, 1, 32 + len(frame), claim,
                                      struct.unpack("<Q", h.digest()[:8])[0])
            + frame)
    with open(ccob_out, "wb") as f:
        f.write(ccob)
    out = ['.section .hip_fatbin,"a",@progbits\n']
    for i in range(n):
        out.append('.p2align 4\n.Lb%d:\n.incbin "%s"\n' % (i, ccob_out))
    out.append('.section .hipFatBinSegment,"aw",@progbits\n.p2align 3\n')
    for i in range(n):
        out.append(".long 0x48495046\n.long 1\n.quad .Lb%d\n.quad 0\n" % i)
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
