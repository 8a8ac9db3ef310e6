#!/usr/bin/env python3
"""tail-copies.py IN OUT SECTION...: for each named section of the input,
how many times its bytes occur in the output file, and whether the
output's section of that name starts with them:

  .strtab 1 prefix
  .debug_info 1 same

("same": the output's section is those bytes; "prefix": it starts with
them and goes on; "other": neither). Read with utils/elf.py, not LLVM.

  tail-copies.py --poke OUT SECTION OFFSET: adds 1 to the byte at OFFSET of
  the output's section SECTION, in place (tampering with moved bytes).
"""
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "utils"))
import elf  # noqa: E402  (utils/elf.py)


def count(hay, needle):
    n, at = 0, hay.find(needle)
    while at >= 0:
        n += 1
        at = hay.find(needle, at + 1)
    return n


def main(argv):
    if argv[1] == "--poke":
        path, name, off = argv[2], argv[3], int(argv[4], 0)
        data = bytearray(open(path, "rb").read())
        sec = elf.File(bytes(data)).section(name)
        data[sec["offset"] + off] = (data[sec["offset"] + off] + 1) & 0xff
        open(path, "wb").write(bytes(data))
        return 0
    src = elf.File(open(argv[1], "rb").read())
    out_bytes = open(argv[2], "rb").read()
    out = elf.File(out_bytes)
    for name in argv[3:]:
        old = src.contents(src.section(name))
        new = out.contents(out.section(name))
        how = ("same" if new == old else
               "prefix" if new.startswith(old) else "other")
        print(name, count(out_bytes, old), how)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
