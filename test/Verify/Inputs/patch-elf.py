"""Patches little-endian integers in an ELF64 file, located by virtual
address, symbol or section, so that tests can corrupt an object that
hotswap-opt wrote without checking binaries into the repository.

  patch-elf.py IN OUT EDIT...      apply every EDIT in order, write OUT
  patch-elf.py IN --read LOC:TYPE  print the value (hex) and exit

EDIT is LOC:TYPE OP VALUE with OP one of  =  +=  |=  &=  (wrapping to the
width of TYPE), e.g. 'sym:vadd.stub+0x4:u32=0xbf820010'. VALUE is a sum of
numbers and sym:NAME terms (a symbol's value) joined by + and -, e.g.
'sym:kern2.kd+16:u64=sym:vadd.stub+0x100-sym:kern2.kd'.
LOC is a BASE with an optional +OFF or -OFF (decimal or 0x hex):
  0xADDR          a virtual address inside a loaded section with file data
  sym:NAME        the value of .symtab symbol NAME (a virtual address)
  sec:NAME        the start of section NAME's data (a file offset)
  symentry:NAME   the file offset of NAME's 24-byte .symtab entry
                  (+4 is st_info: binding << 4 | type)
  shdr:NAME       the file offset of section NAME's header (+0x2c sh_info)
  file:OFF        a file offset
TYPE is u8, u16, u32 or u64. Every edit prints what it changed.
"""
import os
import re
import struct
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "utils"))
import elf as elffile  # noqa: E402  (utils/elf.py)

TYPES = {"u8": "<B", "u16": "<H", "u32": "<I", "u64": "<Q"}


def fail(msg):
    sys.stderr.write("patch-elf.py: error: %s\n" % msg)
    sys.exit(1)


class Elf(elffile.File):
    def __init__(self, data):
        if not elffile.is_elf64le(data):
            fail("not a little-endian ELF64 file")
        super().__init__(data)

    def section(self, name):
        s = super().section(name)
        if s is None:
            fail("no section named '%s'" % name)
        return s

    def symbol(self, name):
        """(file offset of the .symtab entry, st_value)"""
        found = []
        for s in self.sections:
            if s["type"] != elffile.SHT_SYMTAB:
                continue
            for sym in self.symbols(s):
                if sym["name_off"] and sym["name"] == name:
                    found.append((sym["entry"], sym["value"]))
        if len(found) != 1:
            fail("%d .symtab symbols named '%s'" % (len(found), name))
        return found[0]

    def vaddr_to_offset(self, addr, width):
        for s in self.sections:
            if (s["flags"] & elffile.SHF_ALLOC
                    and s["type"] != elffile.SHT_NOBITS
                    and s["addr"] <= addr
                    and addr + width <= s["addr"] + s["size"]):
                return s["offset"] + addr - s["addr"]
        fail("address 0x%x is not inside a loaded section with file data"
             % addr)


def parse_int(text):
    try:
        return int(text, 0)
    except ValueError:
        fail("bad number '%s'" % text)


def evaluate(elf, text):
    """A sum of numbers and sym:NAME terms joined by + and -."""
    total = 0
    for sign, term in re.findall(r"([+-]?)([^+-]+)", text):
        v = (elf.symbol(term[4:])[1] if term.startswith("sym:")
             else parse_int(term))
        total += -v if sign == "-" else v
    if re.sub(r"[+-]?[^+-]+", "", text):
        fail("bad value '%s'" % text)
    return total


def locate(elf, loc, width):
    """File offset of LOC and a printable description."""
    m = re.fullmatch(r"(?:(sym|sec|symentry|shdr|file):)?(.+?)"
                     r"(?:([+-])(0x[0-9a-fA-F]+|[0-9]+))?", loc)
    if not m:
        fail("bad location '%s'" % loc)
    kind, base, sign, off = m.groups()
    delta = 0
    if off:
        delta = parse_int(off) * (-1 if sign == "-" else 1)
    if kind is None:
        return elf.vaddr_to_offset(parse_int(base) + delta, width)
    if kind == "sym":
        return elf.vaddr_to_offset(elf.symbol(base)[1] + delta, width)
    if kind == "sec":
        return elf.section(base)["offset"] + delta
    if kind == "symentry":
        return elf.symbol(base)[0] + delta
    if kind == "shdr":
        return elf.section(base)["hdr"] + delta
    return parse_int(base) + delta


def parse_edit(text):
    m = re.fullmatch(r"(.+):(u8|u16|u32|u64)(\+=|\|=|&=|=)(.+)", text)
    if not m:
        fail("bad edit '%s' (expected LOC:TYPE=VALUE, +=, |= or &=)" % text)
    return m.groups()


def main(argv):
    if len(argv) == 3 and argv[1] == "--read":
        data = open(argv[0], "rb").read()
        m = re.fullmatch(r"(.+):(u8|u16|u32|u64)", argv[2])
        if not m:
            fail("bad location '%s' (expected LOC:TYPE)" % argv[2])
        fmt = TYPES[m.group(2)]
        off = locate(Elf(data), m.group(1), struct.calcsize(fmt))
        print("0x%x" % struct.unpack_from(fmt, data, off)[0])
        return
    if len(argv) < 3:
        fail("usage: patch-elf.py IN OUT EDIT... | IN --read LOC:TYPE")
    src, dst, edits = argv[0], argv[1], argv[2:]
    data = bytearray(open(src, "rb").read())
    for text in edits:
        loc, typ, op, value = parse_edit(text)
        fmt = TYPES[typ]
        width = struct.calcsize(fmt)
        elf = Elf(bytes(data))  # earlier edits may have changed headers
        off = locate(elf, loc, width)
        if off < 0 or off + width > len(data):
            fail("'%s' is outside the file" % loc)
        mask = (1 << (8 * width)) - 1
        old = struct.unpack_from(fmt, data, off)[0]
        v = evaluate(elf, value)
        new = {"=": v, "+=": old + v, "|=": old | v, "&=": old & v}[op] & mask
        struct.pack_into(fmt, data, off, new)
        print("%s: file offset 0x%x: 0x%x -> 0x%x" % (loc, off, old, new))
    open(dst, "wb").write(bytes(data))


if __name__ == "__main__":
    main(sys.argv[1:])
