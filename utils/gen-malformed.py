#!/usr/bin/env python3
"""Derives a malformed ELF64 little-endian file from a well-formed one.

Usage: gen-malformed.py INPUT OUTPUT EDIT...

Each EDIT is applied in order to the bytes of INPUT; positions are resolved
against the headers of INPUT (before any edit), so edits do not interfere.

  ident[N]=V                 byte N of e_ident
  ehdr.FIELD=V               e_type, e_machine, e_version, e_entry, e_phoff,
                             e_shoff, e_flags, e_ehsize, e_phentsize, e_phnum,
                             e_shentsize, e_shnum, e_shstrndx
  phdr[N].FIELD=V            p_type, p_flags, p_offset, p_vaddr, p_paddr,
                             p_filesz, p_memsz, p_align
  shdr[S].FIELD=V            sh_name, sh_type, sh_flags, sh_addr, sh_offset,
                             sh_size, sh_link, sh_info, sh_addralign,
                             sh_entsize; S is an index or a section name
  sym[S][N].FIELD=V          st_name, st_info, st_other, st_shndx, st_value,
                             st_size of symbol N of symbol table section S
  bytes[S]+OFF=HEX           overwrite bytes at OFF inside section S
  bytes@OFF=HEX              overwrite bytes at file offset OFF
  truncate=N                 keep only the first N bytes
  shift-shdrs=N              insert N zero bytes before the section header
                             table (which must be last) and move e_shoff

Values are integers in any Python base (0x10, 16, -1 for all ones).
"""
import re
import struct
import sys

EHDR = {  # name: (offset, struct format)
    "e_type": (16, "H"), "e_machine": (18, "H"), "e_version": (20, "I"),
    "e_entry": (24, "Q"), "e_phoff": (32, "Q"), "e_shoff": (40, "Q"),
    "e_flags": (48, "I"), "e_ehsize": (52, "H"), "e_phentsize": (54, "H"),
    "e_phnum": (56, "H"), "e_shentsize": (58, "H"), "e_shnum": (60, "H"),
    "e_shstrndx": (62, "H"),
}
PHDR = {
    "p_type": (0, "I"), "p_flags": (4, "I"), "p_offset": (8, "Q"),
    "p_vaddr": (16, "Q"), "p_paddr": (24, "Q"), "p_filesz": (32, "Q"),
    "p_memsz": (40, "Q"), "p_align": (48, "Q"),
}
SHDR = {
    "sh_name": (0, "I"), "sh_type": (4, "I"), "sh_flags": (8, "Q"),
    "sh_addr": (16, "Q"), "sh_offset": (24, "Q"), "sh_size": (32, "Q"),
    "sh_link": (40, "I"), "sh_info": (44, "I"), "sh_addralign": (48, "Q"),
    "sh_entsize": (56, "Q"),
}
SYM = {
    "st_name": (0, "I"), "st_info": (4, "B"), "st_other": (5, "B"),
    "st_shndx": (6, "H"), "st_value": (8, "Q"), "st_size": (16, "Q"),
}


def fail(msg):
    sys.exit("gen-malformed.py: error: " + msg)


class Elf:
    def __init__(self, data):
        if len(data) < 64 or data[:4] != b"\x7fELF":
            fail("input is not an ELF file")
        self.data = data
        self.phoff, self.shoff = struct.unpack_from("<QQ", data, 32)
        self.phnum, = struct.unpack_from("<H", data, 56)
        self.shnum, self.shstrndx = struct.unpack_from("<HH", data, 60)
        self.sections = []
        for i in range(self.shnum):
            off = self.shoff + 64 * i
            self.sections.append(dict(
                (k, struct.unpack_from("<" + f, data, off + o)[0])
                for k, (o, f) in SHDR.items()))
        names = self.sections[self.shstrndx] if self.shnum else None
        for s in self.sections:
            s["name"] = ""
            if names is not None:
                start = names["sh_offset"] + s["sh_name"]
                end = data.index(b"\0", start)
                s["name"] = data[start:end].decode()

    def section(self, key):
        if re.fullmatch(r"\d+", key):
            return int(key)
        for i, s in enumerate(self.sections):
            if s["name"] == key:
                return i
        fail("no section named '%s'" % key)


def put(out, off, fmt, value):
    size = struct.calcsize("<" + fmt)
    value &= (1 << (8 * size)) - 1
    struct.pack_into("<" + fmt, out, off, value)


def field(table, name):
    if name not in table:
        fail("unknown field '%s'" % name)
    return table[name]


def main():
    if len(sys.argv) < 4:
        fail("usage: gen-malformed.py INPUT OUTPUT EDIT...")
    data = open(sys.argv[1], "rb").read()
    elf = Elf(data)
    out = bytearray(data)
    truncate = None
    shift = 0
    for edit in sys.argv[3:]:
        m = re.fullmatch(r"ident\[(\d+)\]=(.+)", edit)
        if m:
            put(out, int(m.group(1)), "B", int(m.group(2), 0))
            continue
        m = re.fullmatch(r"ehdr\.(\w+)=(.+)", edit)
        if m:
            o, f = field(EHDR, m.group(1))
            put(out, o, f, int(m.group(2), 0))
            continue
        m = re.fullmatch(r"phdr\[(\d+)\]\.(\w+)=(.+)", edit)
        if m:
            o, f = field(PHDR, m.group(2))
            put(out, elf.phoff + 56 * int(m.group(1)) + o, f,
                int(m.group(3), 0))
            continue
        m = re.fullmatch(r"shdr\[([^\]]+)\]\.(\w+)=(.+)", edit)
        if m:
            o, f = field(SHDR, m.group(2))
            put(out, elf.shoff + 64 * elf.section(m.group(1)) + o, f,
                int(m.group(3), 0))
            continue
        m = re.fullmatch(r"sym\[([^\]]+)\]\[(\d+)\]\.(\w+)=(.+)", edit)
        if m:
            s = elf.sections[elf.section(m.group(1))]
            o, f = field(SYM, m.group(3))
            put(out, s["sh_offset"] + 24 * int(m.group(2)) + o, f,
                int(m.group(4), 0))
            continue
        m = re.fullmatch(r"bytes\[([^\]]+)\]\+(\w+)=([0-9a-fA-F]*)", edit)
        if m:
            s = elf.sections[elf.section(m.group(1))]
            b = bytes.fromhex(m.group(3))
            off = s["sh_offset"] + int(m.group(2), 0)
            out[off:off + len(b)] = b
            continue
        m = re.fullmatch(r"bytes@(\w+)=([0-9a-fA-F]*)", edit)
        if m:
            b = bytes.fromhex(m.group(2))
            off = int(m.group(1), 0)
            out[off:off + len(b)] = b
            continue
        m = re.fullmatch(r"truncate=(\w+)", edit)
        if m:
            truncate = int(m.group(1), 0)
            continue
        m = re.fullmatch(r"shift-shdrs=(\w+)", edit)
        if m:
            shift = int(m.group(1), 0)
            continue
        fail("cannot parse edit '%s'" % edit)
    if shift:
        if elf.shoff + 64 * elf.shnum != len(data):
            fail("the section header table is not last")
        out[elf.shoff:elf.shoff] = bytes(shift)
        put(out, 40, "Q", elf.shoff + shift)
    if truncate is not None:
        del out[truncate:]
    open(sys.argv[2], "wb").write(out)


if __name__ == "__main__":
    main()
