#!/usr/bin/env python3
"""Grows a linked AMDGPU code object (ELF64 little-endian) by a count, for
the tests that hotswap-opt's time stays linear in what a file declares.

Usage: grow.py MODE IN OUT N [M]

Nothing of IN moves: new contents, a new .shstrtab, .symtab and .strtab
(when symbols are added), a new program header table (when segments are
added; PT_PHDR then becomes PT_NULL) and a new section header table are
appended after its end. New PT_LOADs lie above every address of IN, in
address order. The first kernel of IN (the first '.kd' symbol of .symtab)
provides the descriptor template and the code new kernels enter; each new
kernel has a descriptor of its own.

  dual-stubs K P     K kernels with kernarg preload (descriptors
                     'dN.kd', preload length 2), all entering a copy of
                     the code of IN's first kernel, and a stub pool
                     '.hotswap.text' of P long-form stubs (s_getpc/s_add/
                     s_addc/s_setpc, then s_nop) that all lead to that copy
  kernels-sections K S
                     S empty non-loaded sections '.sN', then K kernels
                     'dN' entering a copy of IN's first kernel's code
                     (IN's .text copied to '.text.copy'), their
                     descriptors in a section '.kds' after those S (table
                     order) in a PT_LOAD of their own
  dual-shared K      K kernels with kernarg preload entering the code of
                     IN's first kernel itself (no copy)
  kernels-loads K L  L PT_LOADs of 16 bytes (no sections), then K kernels as
                     above, their PT_LOAD after those L (table and address
                     order)
  own-loads N        N loaded 16-byte sections '.aN', each in a PT_LOAD of
                     its own
  note-sections N M  IN's metadata note moved to a last note section
                     '.note.md' (the loaded '.note' becomes SHT_PROGBITS),
                     before which N note sections '.note.x' all describe
                     the same M empty notes (12 bytes each)
  pool-sections N S  one R+X PT_LOAD of S bytes of s_nop (256-byte aligned)
                     and N section headers '.hotswap.text' all describing it
  symbols N          N global symbols 'sI' (STT_NOTYPE, in '.kds')
  same-name N        N global symbols (STT_NOTYPE, in '.kds') whose st_name
                     all point at one name of N bytes
  suffix-names N     N kernels whose descriptor symbols are named by the
                     suffixes of one string 'K' * (N + 1) + '.kd'
"""
import struct
import sys

SHDR = struct.Struct("<IIQQQQIIQQ")
PHDR = struct.Struct("<IIQQQQQQ")
SYM = struct.Struct("<IBBHQQ")
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOTE = 1, 2, 3, 7
SHF_ALLOC, SHF_EXECINSTR = 2, 4
PT_NULL, PT_LOAD, PT_PHDR = 0, 1, 6
PF_X, PF_R = 1, 4
STB_GLOBAL, STT_NOTYPE, STT_OBJECT = 1, 0, 1
NT_AMDGPU_METADATA = 32
S_NOP = 0xBF800000
PAGE = 0x1000


def align(v, a):
    return (v + a - 1) // a * a


def cstr(data, off):
    return bytes(data[off:data.index(b"\0", off)])


class Grower:
    def __init__(self, data):
        self.data = bytearray(data)
        d = self.data
        assert d[:6] == b"\x7fELF\x02\x01", "not ELF64 little-endian"
        phoff, shoff = struct.unpack_from("<QQ", d, 32)
        phnum, = struct.unpack_from("<H", d, 56)
        shnum, self.shstrndx = struct.unpack_from("<HH", d, 60)
        self.phdrs = [list(PHDR.unpack_from(d, phoff + 56 * i))
                      for i in range(phnum)]
        self.shdrs = [list(SHDR.unpack_from(d, shoff + 64 * i))
                      for i in range(shnum)]
        names = self.shdrs[self.shstrndx][4]
        self.names = [cstr(d, names + s[0]).decode() for s in self.shdrs]
        self.shstrtab = bytearray(self.contents(self.shstrndx))
        self.new_phdrs = []
        self.new_syms = []  # (name offset or bytes, info, shndx, value, size)
        self.top = align(max(p[3] + p[5] for p in self.phdrs
                             if p[0] == PT_LOAD), PAGE) + PAGE

    def index(self, name):
        return self.names.index(name)

    def contents(self, i):
        s = self.shdrs[i]
        return self.data[s[4]:s[4] + s[5]]

    def append(self, blob, alignment=8):
        off = align(len(self.data), alignment)
        self.data += bytes(off - len(self.data)) + blob
        return off

    def name(self, n):
        off = len(self.shstrtab)
        self.shstrtab += n.encode() + b"\0"
        return off

    def section(self, name, sh_type, flags=0, addr=0, off=0, size=0,
                addralign=1, link=0, info=0, entsize=0):
        n = self.name(name) if isinstance(name, str) else name
        self.shdrs.append([n, sh_type, flags, addr, off, size, link, info,
                           addralign, entsize])
        self.names.append(name if isinstance(name, str) else "")
        return len(self.shdrs) - 1

    def load(self, blob, flags=PF_R, p_align=PAGE):
        """blob in a new PT_LOAD above everything; returns (offset, addr)."""
        off = self.append(blob, PAGE)
        addr = self.top
        self.phdrs_add(PT_LOAD, flags, off, addr, len(blob), len(blob),
                       p_align)
        self.top = align(addr + len(blob), PAGE) + PAGE
        return off, addr

    def phdrs_add(self, *p):
        self.new_phdrs.append(list(p[:4]) + [p[3]] + list(p[4:]))

    def first_kernel(self):
        """(descriptor bytes, descriptor address, code address)."""
        symtab = self.index(".symtab")
        st = self.shdrs[symtab]
        strtab = self.shdrs[st[6]][4]
        for k in range(1, st[5] // 24):
            f = SYM.unpack_from(self.data, st[4] + 24 * k)
            if cstr(self.data, strtab + f[0]).endswith(b".kd"):
                sec = self.shdrs[f[3]]
                kd = bytes(self.data[sec[4] + f[4] - sec[3]:][:64])
                entry_off, = struct.unpack_from("<q", kd, 16)
                return kd, f[4], f[4] + entry_off
        raise SystemExit("grow.py: no kernel descriptor in .symtab")

    def copy_text(self):
        """A copy of IN's .text in a new R+X PT_LOAD (section '.text.copy');
        returns the address of the first kernel's code in it."""
        _, _, code = self.first_kernel()
        t = self.index(".text")
        off, addr = self.load(bytes(self.contents(t)), PF_R | PF_X)
        self.section(".text.copy", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
                     addr, off, self.shdrs[t][5], 256)
        return addr + code - self.shdrs[t][3]

    def kernels(self, names, code, preload=False, sec_name=".kds"):
        """A kernel per name, each with its own descriptor entering CODE
        (the '.kd' symbols in order), in a new section in a new PT_LOAD."""
        kd, _, _ = self.first_kernel()
        kd = bytearray(kd)
        if preload:
            # kernarg_preload: length 2 dwords (bits 0-6), offset 0; the
            # user SGPRs (COMPUTE_PGM_RSRC2 bits 1-5) count them.
            struct.pack_into("<H", kd, 58, 2)
            rsrc2, = struct.unpack_from("<I", kd, 52)
            user = (rsrc2 >> 1) & 31
            struct.pack_into("<I", kd, 52, (rsrc2 & ~(31 << 1)) | ((user + 2) << 1))
        size = 64 * len(names)
        off, addr = self.load(bytes(size))
        for i in range(len(names)):
            struct.pack_into("<q", kd, 16, code - (addr + 64 * i))
            self.data[off + 64 * i:off + 64 * i + 64] = kd
        idx = self.section(sec_name, SHT_PROGBITS, SHF_ALLOC, addr, off, size,
                           64)
        for i, nm in enumerate(names):
            self.new_syms.append((nm, (STB_GLOBAL << 4) | STT_OBJECT, idx,
                                  addr + 64 * i, 64))
        return idx, addr

    def write(self, path):
        if self.new_syms:
            self.write_symbols()
        sh = self.shdrs[self.shstrndx]
        sh[4] = self.append(bytes(self.shstrtab), 1)
        sh[5] = len(self.shstrtab)
        phoff, phnum = struct.unpack_from("<QH", self.data, 32)[0], len(self.phdrs)
        if self.new_phdrs:
            for p in self.phdrs:
                if p[0] == PT_PHDR:
                    p[:] = [PT_NULL, 0, 0, 0, 0, 0, 0, 0]
            tab = self.phdrs + self.new_phdrs
            assert len(tab) < 0xffff, "too many program headers"
            phoff = self.append(b"".join(PHDR.pack(*p) for p in tab))
            phnum = len(tab)
        assert len(self.shdrs) < 0xff00, "too many sections"
        shoff = self.append(b"".join(SHDR.pack(*s) for s in self.shdrs))
        struct.pack_into("<QQ", self.data, 32, phoff, shoff)
        struct.pack_into("<H", self.data, 56, phnum)
        struct.pack_into("<H", self.data, 60, len(self.shdrs))
        with open(path, "wb") as f:
            f.write(self.data)

    def write_symbols(self):
        """.symtab and .strtab rewritten at the end with the new symbols
        (globals) after the old ones."""
        st = self.shdrs[self.index(".symtab")]
        strs = self.shdrs[st[6]]
        strtab = bytearray(self.contents(st[6]))
        syms = bytearray(self.contents(self.index(".symtab")))
        for nm, info, shndx, value, size in self.new_syms:
            if isinstance(nm, str):
                off = len(strtab)
                strtab += nm.encode() + b"\0"
            else:
                off = nm
            syms += SYM.pack(off, info, 0, shndx, value, size)
        strs[4], strs[5] = self.append(bytes(strtab), 1), len(strtab)
        st[4], st[5] = self.append(bytes(syms), 8), len(syms)

    def add_strtab_string(self, s):
        """Adds s to .strtab now (before the new symbols); its offset."""
        st = self.shdrs[self.index(".symtab")]
        strtab = bytearray(self.contents(st[6])) + s + b"\0"
        strs = self.shdrs[st[6]]
        strs[4], strs[5] = self.append(bytes(strtab), 1), len(strtab)
        return len(strtab) - len(s) - 1


def long_stub(addr, target):
    """A 256-byte pool slot at ADDR jumping to TARGET (gfx9 encodings)."""
    rel = (target - (addr + 4)) & 0xFFFFFFFFFFFFFFFF
    body = struct.pack("<IIIIIII",
                       0xBE841C00,                   # s_getpc_b64 s[4:5]
                       0x8004FF04, rel & 0xFFFFFFFF,  # s_add_u32 s4, s4, lit
                       0x8205FF05, rel >> 32,         # s_addc_u32 s5, s5, lit
                       0xBE801D04,                   # s_setpc_b64 s[4:5]
                       S_NOP)
    return body + struct.pack("<I", S_NOP) * ((256 - len(body)) // 4)


def note(name, ntype, desc):
    n = name + b"\0"
    return (struct.pack("<III", len(n), len(desc), ntype) +
            n + bytes(align(len(n), 4) - len(n)) +
            desc + bytes(align(len(desc), 4) - len(desc)))


def main():
    mode, src, out, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    m = int(sys.argv[5], 0) if len(sys.argv) > 5 else 0
    g = Grower(open(src, "rb").read())
    _, _, code = g.first_kernel()
    if mode == "dual-shared":
        # Kernels with kernarg preload entering IN's first kernel's own code.
        g.kernels(["d%d.kd" % i for i in range(n)], code, preload=True)
    elif mode == "dual-stubs":
        code = g.copy_text()
        g.kernels(["d%d.kd" % i for i in range(n)], code, preload=True)
        off, addr = g.load(bytes(256 * m), PF_R | PF_X)
        g.data[off:off + 256 * m] = b"".join(
            long_stub(addr + 256 * i, code) for i in range(m))
        g.section(".hotswap.text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
                  addr, off, 256 * m, 256)
    elif mode == "kernels-sections":
        for i in range(m):
            g.section(".s%d" % i, SHT_PROGBITS, off=len(g.data))
        g.kernels(["d%d.kd" % i for i in range(n)], g.copy_text())
    elif mode == "kernels-loads":
        off = g.append(bytes(16 * m), PAGE)
        base = g.top
        for i in range(m):
            g.phdrs_add(PT_LOAD, PF_R, off + 16 * i, base + 16 * i, 16, 16, 1)
        g.top = align(base + 16 * m, PAGE) + PAGE
        g.kernels(["d%d.kd" % i for i in range(n)], g.copy_text())
    elif mode == "own-loads":
        off = g.append(b"\xab" * (16 * n), PAGE)
        base = g.top
        for i in range(n):
            g.phdrs_add(PT_LOAD, PF_R, off + 16 * i, base + 16 * i, 16, 16, 1)
            g.section(".a%d" % i, SHT_PROGBITS, SHF_ALLOC, base + 16 * i,
                      off + 16 * i, 16)
    elif mode == "note-sections":
        md = g.index(".note")
        md_bytes = bytes(g.contents(md))
        g.shdrs[md][1] = SHT_PROGBITS
        blob = note(b"", 1, b"") * m
        off = g.append(blob, 4)
        nm = g.name(".note.x")
        for _ in range(n):
            g.section(nm, SHT_NOTE, off=off, size=len(blob), addralign=4)
        g.section(".note.md", SHT_NOTE, off=g.append(md_bytes, 4),
                  size=len(md_bytes), addralign=4)
    elif mode == "pool-sections":
        off, addr = g.load(struct.pack("<I", S_NOP) * (m // 4), PF_R | PF_X)
        nm = g.name(".hotswap.text")
        for _ in range(n):
            g.section(nm, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, addr, off,
                      m, 256)
    elif mode == "symbols":
        off, addr = g.load(bytes(64))
        idx = g.section(".kds", SHT_PROGBITS, SHF_ALLOC, addr, off, 64, 64)
        for i in range(n):
            g.new_syms.append(("s%d" % i, (STB_GLOBAL << 4) | STT_NOTYPE,
                               idx, addr, 0))
    elif mode == "same-name":
        off, addr = g.load(bytes(64))
        idx = g.section(".kds", SHT_PROGBITS, SHF_ALLOC, addr, off, 64, 64)
        name = g.add_strtab_string(b"S" * n)
        for _ in range(n):
            g.new_syms.append((name, (STB_GLOBAL << 4) | STT_NOTYPE, idx,
                               addr, 0))
    elif mode == "suffix-names":
        long_name = b"K" * (n + 1) + b".kd"
        base = g.add_strtab_string(long_name)
        idx, addr = g.kernels(["d%d.kd" % i for i in range(n)], code)
        g.new_syms = [(base + 1 + i,) + s[1:]
                      for i, s in enumerate(g.new_syms)]
    else:
        sys.exit("grow.py: unknown mode " + mode)
    g.write(out)


if __name__ == "__main__":
    main()
