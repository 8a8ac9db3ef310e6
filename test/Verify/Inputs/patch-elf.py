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
import re
import struct
import sys

TYPES = {"u8": "<B", "u16": "<H", "u32": "<I", "u64": "<Q"}
SHT_SYMTAB = 2
SHT_NOBITS = 8
SHF_ALLOC = 2


def fail(msg):
    sys.stderr.write("patch-elf.py: error: %s\n" % msg)
    sys.exit(1)


class Elf:
    def __init__(self, data):
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            fail("not a little-endian ELF64 file")
        self.data = data
        (shoff,) = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
        self.sections = []
        for i in range(shnum):
            off = shoff + i * shentsize
            (name, typ, flags, addr, offset, size, link, info, align,
             entsize) = struct.unpack_from("<IIQQQQIIQQ", data, off)
            self.sections.append(dict(
                hdr=off, name_off=name, type=typ, flags=flags, addr=addr,
                offset=offset, size=size, link=link, info=info))
        strtab = self.sections[shstrndx]["offset"]
        for s in self.sections:
            s["name"] = self.cstr(strtab + s["name_off"])

    def cstr(self, off):
        return self.data[off:self.data.index(b"\0", off)].decode()

    def section(self, name):
        for s in self.sections:
            if s["name"] == name:
                return s
        fail("no section named '%s'" % name)

    def symbol(self, name):
        """(file offset of the .symtab entry, st_value)"""
        found = []
        for s in self.sections:
            if s["type"] != SHT_SYMTAB:
                continue
            strs = self.sections[s["link"]]["offset"]
            for off in range(s["offset"], s["offset"] + s["size"], 24):
                (n,) = struct.unpack_from("<I", self.data, off)
                if n and self.cstr(strs + n) == name:
                    found.append((off, struct.unpack_from("<Q", self.data,
                                                          off + 8)[0]))
        if len(found) != 1:
            fail("%d .symtab symbols named '%s'" % (len(found), name))
        return found[0]

    def vaddr_to_offset(self, addr, width):
        for s in self.sections:
            if (s["flags"] & SHF_ALLOC and s["type"] != SHT_NOBITS
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
