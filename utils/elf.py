"""Little-endian ELF64 files read and edited field by field: the one ELF
parser of the project's Python scripts (test helpers and utils).

It uses nothing of LLVM on purpose: the tests compare what the scripts read
through it with llvm-readelf, with hotswap-opt's reader and with what a
loader does, so a bug shared with LLVM's ELF library cannot hide there.

  File(data)         a parsed view of the bytes: header fields as attributes
                     (e_type, e_machine, e_flags, ...; ident), phdrs,
                     sections, symbols(section), rela(section),
                     relr(section), section(name), contents(section),
                     offset_of(vaddr), record_lines(name) and
                     record_text_range(name) (the records' JSON lines,
                     checked); parsed on first use, so that a file
                     with broken section headers still gives its program
                     headers and the other way round
  EHDR, PHDR, SHDR, SYM, RELA
                     field name -> (offset in the structure, struct code),
                     for reading and for patching one field (put())
  is_elf64le(data), e_machine(head)
                     what a file is, from its first bytes

Scripts outside utils/ put utils/ first on sys.path to import it (and set
sys.dont_write_bytecode, keeping the source tree clean).
"""
import collections
import hashlib
import json
import struct

MAGIC = b"\x7fELF"
ELFCLASS64, ELFDATA2LSB = 2, 1
ET_EXEC, ET_DYN = 2, 3
EM_X86_64, EM_AMDGPU = 62, 224
PT_NULL, PT_LOAD, PT_PHDR = 0, 1, 6
SHT_SYMTAB, SHT_RELA, SHT_NOTE, SHT_NOBITS, SHT_DYNSYM, SHT_RELR = 2, 4, 7, 8, 11, 19
SHF_ALLOC, SHF_EXECINSTR = 0x2, 0x4
STT_OBJECT, STT_FUNC = 1, 2
R_X86_64_64, R_X86_64_RELATIVE = 1, 8

EHDR_SIZE, PHDR_SIZE, SHDR_SIZE, SYM_SIZE, RELA_SIZE = 64, 56, 64, 24, 24

# name: (offset, struct code) of each field, little-endian.
EHDR = {
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
RELA = {"r_offset": (0, "Q"), "r_info": (8, "Q"), "r_addend": (16, "q")}


def _fmt(table):
    return "<" + "".join(code for _, code in sorted(table.values()))


class Phdr(collections.namedtuple("Phdr", [n for n in PHDR])):
    """A program header; compares and prints as the plain tuple
    (type, flags, offset, vaddr, paddr, filesz, memsz, align)."""
    __slots__ = ()
    __repr__ = tuple.__repr__


def put(buf, off, code, value):
    """Writes value, wrapped to the width of struct code (signed or not),
    little-endian at buf[off:]."""
    code = code.upper()  # the same bytes for the wrapped value
    size = struct.calcsize("<" + code)
    struct.pack_into("<" + code, buf, off, value & ((1 << (8 * size)) - 1))


def get(data, off, code):
    return struct.unpack_from("<" + code, data, off)[0]


def is_elf64le(data):
    """ELF magic, ELFCLASS64, ELFDATA2LSB."""
    return data[:4] == MAGIC and data[4] == ELFCLASS64 and data[5] == ELFDATA2LSB


def e_machine(head):
    """e_machine of an ELF file from its first 20 bytes, or None."""
    if len(head) < 20 or head[:4] != MAGIC:
        return None
    return get(head, EHDR["e_machine"][0], "H")


class File:
    def __init__(self, data):
        self.data = data
        self.ident = data[:16]
        for name, value in zip(sorted(EHDR, key=lambda k: EHDR[k][0]),
                               struct.unpack_from(_fmt(EHDR), data, 16)):
            setattr(self, name, value)
        self._sections = None
        self._phdrs = None

    @property
    def phdrs(self):
        """[Phdr] in table order."""
        if self._phdrs is None:
            self._phdrs = [Phdr(*struct.unpack_from(
                _fmt(PHDR), self.data, self.e_phoff + i * self.e_phentsize))
                for i in range(self.e_phnum)]
        return self._phdrs

    @property
    def sections(self):
        """One dict per section header: index, hdr (file offset of the
        header), name_off, name, type, flags, addr, offset, size, link,
        info, align, entsize."""
        if self._sections is None:
            secs = []
            for i in range(self.e_shnum):
                hdr = self.e_shoff + i * self.e_shentsize
                (name, typ, flags, addr, offset, size, link, info, align,
                 entsize) = struct.unpack_from(_fmt(SHDR), self.data, hdr)
                secs.append(dict(index=i, hdr=hdr, name_off=name, type=typ,
                                 flags=flags, addr=addr, offset=offset,
                                 size=size, link=link, info=info, align=align,
                                 entsize=entsize))
            names = secs[self.e_shstrndx]["offset"] if secs else None
            for s in secs:
                s["name"] = self.cstr(names + s["name_off"]) if secs else ""
            self._sections = secs
        return self._sections

    def cstr(self, off):
        """The NUL-terminated string at file offset off."""
        return self.data[off:self.data.index(b"\0", off)].decode()

    def section(self, name):
        """The first section named name, or None."""
        for s in self.sections:
            if s["name"] == name:
                return s
        return None

    def contents(self, sec):
        if sec["type"] == SHT_NOBITS:
            return b""
        return self.data[sec["offset"]:sec["offset"] + sec["size"]]

    def symbols(self, sec):
        """One dict per entry of symbol table sec: index, entry (file offset
        of the entry), name_off, name, info, type, bind, other, vis, shndx,
        value, size."""
        strs = self.sections[sec["link"]]["offset"]
        out = []
        for i in range(sec["size"] // SYM_SIZE):
            entry = sec["offset"] + i * SYM_SIZE
            name, info, other, shndx, value, size = struct.unpack_from(
                _fmt(SYM), self.data, entry)
            out.append(dict(index=i, entry=entry, name_off=name,
                            name=self.cstr(strs + name), info=info,
                            type=info & 15, bind=info >> 4, other=other,
                            vis=other & 3, shndx=shndx, value=value,
                            size=size))
        return out

    def rela(self, sec):
        """One dict per entry of RELA section sec: entry (file offset of the
        entry), offset, type, sym (symbol index), addend."""
        out = []
        for i in range(sec["size"] // RELA_SIZE):
            entry = sec["offset"] + i * RELA_SIZE
            off, info, addend = struct.unpack_from(_fmt(RELA), self.data, entry)
            out.append(dict(entry=entry, offset=off, type=info & 0xffffffff,
                            sym=info >> 32, addend=addend))
        return out

    def relr(self, sec):
        """The set of addresses RELR section sec relocates."""
        out, base = set(), None
        for i in range(sec["size"] // 8):
            entry = get(self.data, sec["offset"] + 8 * i, "Q")
            if entry & 1 == 0:  # an address
                out.add(entry)
                base = entry + 8
            else:  # a bitmap of the next 63 words
                for bit in range(1, 64):
                    if entry >> bit & 1:
                        out.add(base + (bit - 1) * 8)
                base += 63 * 8
        return out

    def offset_of(self, vaddr):
        """The file offset of vaddr through the PT_LOADs' file bytes, or
        None."""
        for p in self.phdrs:
            if p.p_type == PT_LOAD and p.p_vaddr <= vaddr < p.p_vaddr + p.p_filesz:
                return vaddr - p.p_vaddr + p.p_offset
        return None

    def record_text_range(self, name):
        """(file offset, size) of the JSON lines of record section name, or
        None without it. A record of the record family is an SHT_NOTE with
        one note, owner "HOTSWAP", whose descriptor is a u32 format version
        (1), the lines, and the SHA-256 of both: the note is checked here,
        digest included, from the bytes (ValueError when it does not hold).
        An SHT_PROGBITS section of an earlier version is the lines alone."""
        sec = self.section(name)
        if sec is None:
            return None
        if sec["type"] != SHT_NOTE:
            return sec["offset"], sec["size"]
        body = self.contents(sec)
        if len(body) < 20:
            raise ValueError(name + ": too short for a note")
        namesz, descsz, _ = struct.unpack_from("<III", body, 0)
        if namesz != 8 or body[12:20] != b"HOTSWAP\0":
            raise ValueError(name + ": not a HOTSWAP note")
        if 20 + descsz > len(body) or descsz < 36:
            raise ValueError(name + ": the descriptor does not fit")
        desc = body[20:20 + descsz]
        if struct.unpack_from("<I", desc, 0)[0] != 1:
            raise ValueError(name + ": not format version 1")
        if hashlib.sha256(desc[:-32]).digest() != desc[-32:]:
            raise ValueError(name + ": the SHA-256 does not match")
        return sec["offset"] + 24, descsz - 36

    def record_lines(self, name):
        """The JSON objects of record section name (record_text_range), one
        per line; [] without the section."""
        where = self.record_text_range(name)
        if where is None:
            return []
        off, size = where
        text = self.data[off:off + size].decode()
        return [json.loads(l) for l in text.split("\n") if l.strip("\0 ")]

    def seal_record(self, buf, name):
        """Writes into buf (a copy of this file's bytes whose record note
        name a test edited in place, its size kept) the SHA-256 of the
        descriptor as it now is, whatever its version field says: the
        tests' forged records. A section of an earlier version (no note)
        has no digest to write."""
        sec = self.section(name)
        if sec is None or sec["type"] != SHT_NOTE:
            return
        descsz, = struct.unpack_from("<I", buf, sec["offset"] + 4)
        desc = sec["offset"] + 20
        buf[desc + descsz - 32:desc + descsz] = hashlib.sha256(
            bytes(buf[desc:desc + descsz - 32])).digest()
