#!/usr/bin/env python3
"""Variants of a linked code object that tell where a reader takes the
metadata note from (comgr-note-lookup.test).

  note-variants.py IN OUTDIR

Writes, each from IN (one PT_NOTE holding its NT_AMDGPU_METADATA note, a
PT_GNU_STACK before it in the program header table):
  no-ptnote.co    the PT_NOTE entry made PT_NULL: only the .note section
                  says where the note is
  no-shtnote.co   the .note section made SHT_PROGBITS: only PT_NOTE says it
  copy-first.co   a copy of the note with the first kernel's 4-letter name's
                  third letter made 'X' appended to the file, and the
                  PT_GNU_STACK entry made a PT_NOTE for it: two PT_NOTEs,
                  the copy's first in table order
  copy-last.co    the same, the original's PT_NOTE first and the copy's last
"""
import os
import struct
import sys


def main():
    src, outdir = sys.argv[1], sys.argv[2]
    d = bytearray(open(src, "rb").read())
    phoff, = struct.unpack_from("<Q", d, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", d, 0x3a)
    ph = []
    for i in range(phnum):
        at = phoff + i * phentsize
        ph.append((at,) + struct.unpack_from("<IIQQQQQQ", d, at))
    note = [p for p in ph if p[1] == 4]
    stack = [p for p in ph if p[1] == 0x6474e551]
    if len(note) != 1 or len(stack) != 1 or stack[0][0] > note[0][0]:
        sys.exit("note-variants.py: expected one PT_GNU_STACK, then one PT_NOTE")
    note, stack = note[0], stack[0]

    def write(name, data):
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)

    a = bytearray(d)
    struct.pack_into("<I", a, note[0], 0)
    write("no-ptnote.co", a)

    b = bytearray(d)
    for i in range(shnum):
        at = shoff + i * shentsize
        if struct.unpack_from("<I", b, at + 4)[0] == 7:
            struct.pack_into("<I", b, at + 4, 1)
    write("no-shtnote.co", b)

    off, size = note[3], note[6]
    orig = bytes(d[off:off + size])
    # The first kernel's .name: the fixstr after the key ".name".
    k = orig.find(b"\xa5.name")
    if k < 0 or orig[k + 6] != 0xa4:
        sys.exit("note-variants.py: the first .name is not a 4-byte string")
    copy = bytearray(orig)
    copy[k + 7 + 2] = ord("X")
    c = bytearray(d)
    pos = len(c) + (-len(c)) % 4
    c += b"\0" * (pos - len(c)) + copy
    first = bytearray(c)
    struct.pack_into("<IIQQQQQQ", first, stack[0], 4, 4, pos, 0, 0, size, 0, 4)
    write("copy-first.co", first)
    last = bytearray(c)
    struct.pack_into("<IIQQQQQQ", last, stack[0], 4, 4, off, note[4], note[5],
                     size, 0, 4)
    struct.pack_into("<IIQQQQQQ", last, note[0], 4, 4, pos, 0, 0, size, 0, 4)
    write("copy-last.co", last)
    return 0


if __name__ == "__main__":
    sys.exit(main())
