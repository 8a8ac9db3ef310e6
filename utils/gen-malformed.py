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
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
import elf  # noqa: E402  (utils/elf.py, next to this script)


def fail(msg):
    sys.exit("gen-malformed.py: error: " + msg)


def section_index(f, key):
    """The index of section KEY: an index, or the first section so named."""
    if re.fullmatch(r"\d+", key):
        return int(key)
    for s in f.sections:
        if s["name"] == key:
            return s["index"]
    fail("no section named '%s'" % key)


def field(table, name):
    if name not in table:
        fail("unknown field '%s'" % name)
    return table[name]


def main():
    if len(sys.argv) < 4:
        fail("usage: gen-malformed.py INPUT OUTPUT EDIT...")
    data = open(sys.argv[1], "rb").read()
    if len(data) < 64 or data[:4] != elf.MAGIC:
        fail("input is not an ELF file")
    f = elf.File(data)
    out = bytearray(data)
    truncate = None
    shift = 0
    for edit in sys.argv[3:]:
        m = re.fullmatch(r"ident\[(\d+)\]=(.+)", edit)
        if m:
            elf.put(out, int(m.group(1)), "B", int(m.group(2), 0))
            continue
        m = re.fullmatch(r"ehdr\.(\w+)=(.+)", edit)
        if m:
            o, code = field(elf.EHDR, m.group(1))
            elf.put(out, o, code, int(m.group(2), 0))
            continue
        m = re.fullmatch(r"phdr\[(\d+)\]\.(\w+)=(.+)", edit)
        if m:
            o, code = field(elf.PHDR, m.group(2))
            elf.put(out, f.e_phoff + elf.PHDR_SIZE * int(m.group(1)) + o,
                    code, int(m.group(3), 0))
            continue
        m = re.fullmatch(r"shdr\[([^\]]+)\]\.(\w+)=(.+)", edit)
        if m:
            o, code = field(elf.SHDR, m.group(2))
            elf.put(out, f.e_shoff + elf.SHDR_SIZE * section_index(f, m.group(1)) + o,
                    code, int(m.group(3), 0))
            continue
        m = re.fullmatch(r"sym\[([^\]]+)\]\[(\d+)\]\.(\w+)=(.+)", edit)
        if m:
            s = f.sections[section_index(f, m.group(1))]
            o, code = field(elf.SYM, m.group(3))
            elf.put(out, s["offset"] + elf.SYM_SIZE * int(m.group(2)) + o,
                    code, int(m.group(4), 0))
            continue
        m = re.fullmatch(r"bytes\[([^\]]+)\]\+(\w+)=([0-9a-fA-F]*)", edit)
        if m:
            s = f.sections[section_index(f, m.group(1))]
            b = bytes.fromhex(m.group(3))
            off = s["offset"] + int(m.group(2), 0)
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
        if f.e_shoff + elf.SHDR_SIZE * f.e_shnum != len(data):
            fail("the section header table is not last")
        out[f.e_shoff:f.e_shoff] = bytes(shift)
        elf.put(out, elf.EHDR["e_shoff"][0], "Q", f.e_shoff + shift)
    if truncate is not None:
        del out[truncate:]
    open(sys.argv[2], "wb").write(out)


if __name__ == "__main__":
    main()
