#!/usr/bin/env python3
"""Run one kernel of an AMDGPU code object on a CPU ISA emulator.

The emulator is tinygrad's (test/mockgpu/amd/emu.py in a tinygrad checkout,
named by --emu); it is an external test tool and is only imported, never
copied. This script is the loader the emulator does not have: it reads the
ELF with plain Python, maps every PT_LOAD at its address relative to one base,
applies the dynamic relocations, finds <kernel>.kd, follows the descriptor's
kernel_code_entry_byte_offset (relative to the descriptor, so a rewritten
object whose descriptor points into a new segment is followed there), lays
out the kernarg segment, and derives the user SGPRs and rsrc2 that a command
processor would set up.

  run-kernel.py --emu DIR CODE_OBJECT KERNEL --grid 4 --block 64 \\
      --buffer out=zeros:1024 --buffer in=f32rand:384:7 [--scalar 5] \\
      [--dump DIR]

Arguments are placed in the kernarg segment in the order given: a --buffer
as an 8-byte pointer (8-aligned), a --scalar as a 4-byte i32 (4-aligned).
A buffer is one of
  NAME=FILE              the bytes of FILE
  NAME=zeros:BYTES       BYTES zero bytes
  NAME=f32rand:COUNT[:SEED]  COUNT distinct non-trivial floats (an LCG)
After the run one line per buffer is printed:
  buffer NAME bytes=N sha256=HEX
Every buffer sits between guard zones filled with a pattern; a kernel that
writes into one is reported and the script exits 3. With --counters FILE,
the bytes of the object's `__hotswap_counters` (instrument's counters) after
the run are written to FILE: the dump `print<counters;dump=FILE>` reads.

The emulator compiles each instruction from the ISA's pseudocode, which for
s_getpc_b64 reads a PC it does not provide. This loader gives it one: the
address of the next instruction (the ISA's definition), where the image is
mapped in host memory, which keeps every PC-relative distance of the object. Anything the loader does
not support (relocation kinds, kernarg preloading, scratch, an unknown
target) is an error with exit status 1.
"""

import argparse
import ctypes
import hashlib
import mmap
import os
import struct
import sys

PT_LOAD, PT_DYNAMIC = 1, 2
SHT_SYMTAB, SHT_DYNSYM = 2, 11
DT_NULL, DT_RELA, DT_RELASZ, DT_RELAENT, DT_REL, DT_RELSZ = 0, 7, 8, 9, 17, 18
EM_AMDGPU = 224
R_AMDGPU_NONE, R_AMDGPU_RELATIVE64 = 0, 13

# EF_AMDGPU_MACH (e_flags & 0xff) -> (name, emulator arch). Only targets
# whose ISA the emulator models are listed.
MACHS = {
    0x3F: ("gfx90a", "cdna"), 0x4C: ("gfx942", "cdna"), 0x4F: ("gfx950", "cdna"),
    0x41: ("gfx1100", "rdna3"), 0x46: ("gfx1101", "rdna3"), 0x47: ("gfx1102", "rdna3"),
    0x44: ("gfx1103", "rdna3"),
    0x48: ("gfx1200", "rdna4"), 0x4E: ("gfx1201", "rdna4"),
}

# kernel_code_properties bits and the user SGPRs each one enables, in order.
USER_SGPR_KINDS = [
    (0, "private_segment_buffer", 4), (1, "dispatch_ptr", 2), (2, "queue_ptr", 2),
    (3, "kernarg_segment_ptr", 2), (4, "dispatch_id", 2), (5, "flat_scratch_init", 2),
    (6, "private_segment_size", 1),
]
KCP_WAVEFRONT_SIZE32 = 1 << 10
KCP_USES_DYNAMIC_STACK = 1 << 11

GUARD = 4096
GUARD_BYTE = 0xA5


class Unsupported(Exception):
    pass


def die(msg):
    print("run-kernel: error: %s" % msg, file=sys.stderr)
    sys.exit(1)


class Elf:
    def __init__(self, data):
        self.data = data
        if data[:4] != b"\x7fELF" or len(data) < 64:
            raise Unsupported("not an ELF file")
        if data[4] != 2 or data[5] != 1:
            raise Unsupported("not a 64-bit little-endian ELF")
        (self.e_type, self.e_machine, _, _, self.e_phoff, self.e_shoff, self.e_flags, _,
         self.e_phentsize, self.e_phnum, self.e_shentsize, self.e_shnum,
         self.e_shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", data, 16)
        if self.e_machine != EM_AMDGPU:
            raise Unsupported("e_machine %d is not EM_AMDGPU" % self.e_machine)
        self.phdrs = []
        for i in range(self.e_phnum):
            off = self.e_phoff + i * self.e_phentsize
            if off + 56 > len(data):
                raise Unsupported("program header %d lies outside the file" % i)
            (p_type, p_flags, p_offset, p_vaddr, _, p_filesz, p_memsz,
             p_align) = struct.unpack_from("<IIQQQQQQ", data, off)
            self.phdrs.append(dict(type=p_type, flags=p_flags, offset=p_offset, vaddr=p_vaddr,
                                   filesz=p_filesz, memsz=p_memsz, align=p_align))
        self.shdrs = []
        for i in range(self.e_shnum if self.e_shoff else 0):
            off = self.e_shoff + i * self.e_shentsize
            if off + 64 > len(data):
                raise Unsupported("section header %d lies outside the file" % i)
            (sh_name, sh_type, _, sh_addr, sh_offset, sh_size, sh_link, _, _,
             sh_entsize) = struct.unpack_from("<IIQQQQIIQQ", data, off)
            self.shdrs.append(dict(name=sh_name, type=sh_type, addr=sh_addr, offset=sh_offset,
                                   size=sh_size, link=sh_link, entsize=sh_entsize))

    def section_bytes(self, sh):
        if sh["offset"] + sh["size"] > len(self.data):
            raise Unsupported("a section lies outside the file")
        return self.data[sh["offset"]:sh["offset"] + sh["size"]]

    def find_symbol(self, name):
        """st_value of NAME from .dynsym, else .symtab (None if absent)."""
        found = self.find_symbol_and_size(name)
        return found[0] if found else None

    def find_symbol_and_size(self, name):
        """(st_value, st_size) of NAME from .dynsym, else .symtab."""
        for want in (SHT_DYNSYM, SHT_SYMTAB):
            for sh in self.shdrs:
                if sh["type"] != want or sh["link"] >= len(self.shdrs):
                    continue
                strtab = self.section_bytes(self.shdrs[sh["link"]])
                syms = self.section_bytes(sh)
                ent = sh["entsize"] or 24
                for off in range(0, len(syms) - 23, ent):
                    st_name, _, _, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", syms, off)
                    if st_shndx == 0:
                        continue
                    end = strtab.find(b"\0", st_name)
                    if strtab[st_name:end].decode("utf-8", "replace") == name:
                        return st_value, st_size
        return None


class Image:
    """The PT_LOADs of one object mapped at base + p_vaddr in host memory."""

    def __init__(self, elf):
        loads = [p for p in elf.phdrs if p["type"] == PT_LOAD]
        if not loads:
            raise Unsupported("no PT_LOAD")
        span = max(p["vaddr"] + p["memsz"] for p in loads)
        self.size = span
        # Slack after the end: the emulator decodes 16 bytes at every PC.
        self.mem = mmap.mmap(-1, (span + 64 + mmap.PAGESIZE - 1) // mmap.PAGESIZE * mmap.PAGESIZE)
        self.base = ctypes.addressof(ctypes.c_char.from_buffer(self.mem))
        for p in loads:
            if p["filesz"] > p["memsz"] or p["offset"] + p["filesz"] > len(elf.data):
                raise Unsupported("a PT_LOAD's file bytes lie outside the file or its memory")
            self.mem[p["vaddr"]:p["vaddr"] + p["filesz"]] = elf.data[p["offset"]:p["offset"] + p["filesz"]]
        self.loads = loads
        self.relocate(elf)

    def mapped(self, vaddr, size):
        return any(p["vaddr"] <= vaddr and vaddr + size <= p["vaddr"] + p["memsz"] for p in self.loads)

    def read(self, vaddr, size):
        if not self.mapped(vaddr, size):
            raise Unsupported("address 0x%x (+%d) is not inside a PT_LOAD" % (vaddr, size))
        return bytes(self.mem[vaddr:vaddr + size])

    def relocate(self, elf):
        dyn = [p for p in elf.phdrs if p["type"] == PT_DYNAMIC]
        if not dyn:
            return
        d = dyn[0]
        tags = {}
        raw = elf.data[d["offset"]:d["offset"] + d["filesz"]]
        for off in range(0, len(raw) - 15, 16):
            tag, val = struct.unpack_from("<qQ", raw, off)
            if tag == DT_NULL:
                break
            tags[tag] = val
        if tags.get(DT_RELSZ):
            raise Unsupported("DT_REL relocations (only DT_RELA is supported)")
        if not tags.get(DT_RELASZ):
            return
        rela_vaddr, rela_size = tags.get(DT_RELA, 0), tags[DT_RELASZ]
        ent = tags.get(DT_RELAENT, 24)
        if ent != 24:
            raise Unsupported("DT_RELAENT %d" % ent)
        table = self.read(rela_vaddr, rela_size)
        for off in range(0, rela_size, ent):
            r_offset, r_info, r_addend = struct.unpack_from("<QQq", table, off)
            kind = r_info & 0xFFFFFFFF
            if kind == R_AMDGPU_NONE:
                continue
            if kind != R_AMDGPU_RELATIVE64:
                raise Unsupported("dynamic relocation type %d at 0x%x (only R_AMDGPU_RELATIVE64)"
                                  % (kind, r_offset))
            if not self.mapped(r_offset, 8):
                raise Unsupported("relocation at 0x%x outside every PT_LOAD" % r_offset)
            struct.pack_into("<Q", self.mem, r_offset, (self.base + r_addend) & (2**64 - 1))


class HostBuffer:
    """Bytes at a fixed host address, between two guard zones."""

    def __init__(self, name, payload):
        self.name, self.size = name, len(payload)
        total = GUARD + (self.size + mmap.PAGESIZE - 1) // mmap.PAGESIZE * mmap.PAGESIZE + GUARD
        self.mem = mmap.mmap(-1, total)
        self.mem[:] = bytes([GUARD_BYTE]) * total
        self.mem[GUARD:GUARD + self.size] = payload
        self.addr = ctypes.addressof(ctypes.c_char.from_buffer(self.mem)) + GUARD
        self.end = GUARD + self.size

    def contents(self):
        return bytes(self.mem[GUARD:self.end])

    def guards_intact(self):
        return self.mem[:GUARD].count(GUARD_BYTE) == GUARD and \
            self.mem[self.end:].count(GUARD_BYTE) == len(self.mem) - self.end


def f32rand(count, seed):
    out, x, seen = [], (seed * 2654435761 + 12345) & 0xFFFFFFFF, set()
    while len(out) < count:
        x = (x * 1664525 + 1013904223) & 0xFFFFFFFF
        v = struct.unpack("<f", struct.pack("<f", ((x >> 8) / float(1 << 24) - 0.5) * 200.0))[0]
        if v in seen or v == 0.0:
            continue
        seen.add(v)
        out.append(v)
    return struct.pack("<%df" % count, *out)


def buffer_payload(spec):
    if spec.startswith("zeros:"):
        return bytes(int(spec[6:], 0))
    if spec.startswith("f32rand:"):
        parts = spec.split(":")
        return f32rand(int(parts[1], 0), int(parts[2], 0) if len(parts) > 2 else 1)
    with open(spec, "rb") as f:
        return f.read()


class ArgAction(argparse.Action):
    def __call__(self, parser, ns, value, option_string=None):
        ns.args.append((self.dest, value))


def dims(text):
    parts = [int(x, 0) for x in text.split(",")]
    if not 1 <= len(parts) <= 3 or min(parts) < 1:
        raise argparse.ArgumentTypeError("expected X[,Y[,Z]] of positive integers")
    return tuple(parts + [1] * (3 - len(parts)))


def give_getpc_a_pc(emu):
    """s_getpc_b64 (SOP1) as the ISA defines it: the address of the next
    instruction into the SGPR pair; every other instruction as the emulator
    compiles it. Written against the emulator's own instruction context."""
    from tinygrad.dtype import dtypes
    from tinygrad.uop.ops import UOp

    def with_getpc(handler):
        def compile_inst(inst, ctx):
            if emu._op_name(inst) != "S_GETPC_B64":
                return handler(inst, ctx)
            sdst = ctx.inst_field(type(inst).sdst)
            lo, hi = emu._split64(ctx.rpc() + UOp.const(ctx.inst_size, dtypes.uint64))
            return UOp.sink(ctx.wsgpr_dyn(sdst, lo), ctx.wsgpr_dyn(sdst + emu._c(1), hi),
                            *ctx.inc_pc())
        return compile_inst

    for kind, handler in list(emu._INST_HANDLERS.items()):
        if kind.__name__ == "SOP1":
            emu._INST_HANDLERS[kind] = with_getpc(handler)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--emu", required=True, help="tinygrad checkout (has test/mockgpu/amd/emu.py)")
    ap.add_argument("object")
    ap.add_argument("kernel")
    ap.add_argument("--grid", type=dims, default=(1, 1, 1), help="workgroups X[,Y[,Z]]")
    ap.add_argument("--block", type=dims, default=(64, 1, 1), help="work-items per workgroup")
    ap.add_argument("--buffer", dest="buffer", action=ArgAction, metavar="NAME=SPEC")
    ap.add_argument("--scalar", dest="scalar", action=ArgAction, metavar="I32")
    ap.add_argument("--dynamic-lds", type=int, default=0, help="bytes of dynamic LDS")
    ap.add_argument("--dump", metavar="DIR", help="write every buffer to DIR/NAME.bin")
    ap.add_argument("--print-layout", action="store_true", help="print what the loader derived")
    ap.add_argument("--counters", metavar="FILE",
                    help="write the bytes of __hotswap_counters after the run to FILE")
    ap.set_defaults(args=[])
    opts = ap.parse_args()

    try:
        with open(opts.object, "rb") as f:
            elf = Elf(f.read())
        mach = elf.e_flags & 0xFF
        if mach not in MACHS:
            raise Unsupported("EF_AMDGPU_MACH 0x%x is not a target the emulator models" % mach)
        target, arch = MACHS[mach]
        image = Image(elf)
        kd = elf.find_symbol(opts.kernel + ".kd")
        if kd is None:
            raise Unsupported("no symbol %s.kd" % opts.kernel)
        desc = image.read(kd, 64)
        (group_size, private_size, kernarg_size, _, entry_off) = struct.unpack_from("<IIIIq", desc, 0)
        rsrc3, rsrc1, rsrc2, kcp, preload = struct.unpack_from("<IIIHH", desc, 44)
        entry = kd + entry_off
        if entry % 256 or not image.mapped(entry, 4):
            raise Unsupported("kernel entry 0x%x (descriptor 0x%x %+d) is not a 256-aligned "
                              "mapped address" % (entry, kd, entry_off))
        if preload:
            raise Unsupported("kernarg preloading (kernarg_preload 0x%x)" % preload)
        if private_size or kcp & KCP_USES_DYNAMIC_STACK or rsrc2 & 1:
            raise Unsupported("scratch (private segment %d bytes, dynamic stack %d, "
                              "ENABLE_PRIVATE_SEGMENT %d)" % (private_size,
                                                              bool(kcp & KCP_USES_DYNAMIC_STACK), rsrc2 & 1))
        wave32 = bool(kcp & KCP_WAVEFRONT_SIZE32)
        if wave32 != (arch != "cdna"):
            raise Unsupported("%s kernel with wave%d: the emulator runs %s as wave%d"
                              % (target, 32 if wave32 else 64, arch, 64 if arch == "cdna" else 32))
        if rsrc2 & (1 << 10):
            raise Unsupported("ENABLE_SGPR_WORKGROUP_INFO")
        counters = None
        if opts.counters:
            counters = elf.find_symbol_and_size("__hotswap_counters")
            if counters is None or not image.mapped(counters[0], counters[1]):
                raise Unsupported("--counters: no mapped __hotswap_counters in %s" % opts.object)
        # Every target in MACHS has packed work-item ids (all three in v0),
        # which is what the emulator sets up.

        # The kernarg segment: explicit arguments in order, then the hidden
        # arguments of code object v5 (block counts, group sizes, remainders,
        # grid dims) when the descriptor's kernarg size leaves room for them.
        buffers, layout, off = [], [], 0
        for kind, value in opts.args:
            if kind == "buffer":
                name, sep, spec = value.partition("=")
                if not sep or not name:
                    raise Unsupported("--buffer %r: expected NAME=SPEC" % value)
                off = (off + 7) & ~7
                buf = HostBuffer(name, buffer_payload(spec))
                buffers.append(buf)
                layout.append((off, "<Q", buf.addr, "pointer %s (%d bytes)" % (name, buf.size)))
                off += 8
            else:
                off = (off + 3) & ~3
                layout.append((off, "<i", int(value, 0), "i32 %s" % value))
                off += 4
        grid, block = opts.grid, opts.block
        hidden = (off + 7) & ~7
        seg_size = max(kernarg_size, off, 8)
        kernarg = HostBuffer("(kernarg)", bytes(seg_size))
        for o, fmt, v, _ in layout:
            struct.pack_into(fmt, kernarg.mem, GUARD + o, v)
        if kernarg_size >= hidden + 66:
            struct.pack_into("<III", kernarg.mem, GUARD + hidden, *grid)
            struct.pack_into("<HHH", kernarg.mem, GUARD + hidden + 12, *block)
            struct.pack_into("<HHH", kernarg.mem, GUARD + hidden + 18, *block)  # no partial groups
            struct.pack_into("<H", kernarg.mem, GUARD + hidden + 64,
                             3 if grid[2] * block[2] > 1 else 2 if grid[1] * block[1] > 1 else 1)

        # A dispatch packet for dispatch_ptr (hsa_kernel_dispatch_packet_t).
        packet = HostBuffer("(dispatch packet)", bytes(64))
        ndim = 3 if grid[2] * block[2] > 1 else 2 if grid[1] * block[1] > 1 else 1
        struct.pack_into("<HHHH", packet.mem, GUARD + 2, ndim, *block)
        struct.pack_into("<IIIII", packet.mem, GUARD + 12, grid[0] * block[0], grid[1] * block[1],
                         grid[2] * block[2], private_size, group_size + opts.dynamic_lds)
        struct.pack_into("<Q", packet.mem, GUARD + 40, kernarg.addr)
        queue = HostBuffer("(queue)", bytes(256))

        user = []
        for bit, what, n in USER_SGPR_KINDS:
            if not kcp & (1 << bit):
                continue
            if what == "private_segment_buffer" and arch != "cdna":
                raise Unsupported("private segment buffer on %s" % target)
            val = {"dispatch_ptr": packet.addr, "queue_ptr": queue.addr,
                   "kernarg_segment_ptr": kernarg.addr}.get(what, 0)
            user += [(val >> (32 * k)) & 0xFFFFFFFF for k in range(n)]
        user_count = (rsrc2 >> 1) & 0x1F
        if user_count < len(user):
            raise Unsupported("rsrc2 USER_SGPR_COUNT %d < %d enabled user SGPRs" % (user_count, len(user)))
        user += [0] * (user_count - len(user))

        lds = group_size + opts.dynamic_lds
        granules = (lds + 511) // 512
        if granules > 0x1FF:
            raise Unsupported("%d bytes of LDS" % lds)
        run_rsrc2 = (rsrc2 & ~(0x1FF << 15)) | (granules << 15)

        if opts.print_layout:
            print("target %s arch %s" % (target, arch))
            print("descriptor 0x%x entry 0x%x (offset %+d) image %d bytes" % (kd, entry, entry_off, image.size))
            print("rsrc1 0x%08x rsrc2 0x%08x (run 0x%08x) rsrc3 0x%08x kcp 0x%04x" % (
                rsrc1, rsrc2, run_rsrc2, rsrc3, kcp))
            print("lds %d bytes, kernarg %d bytes (hidden at %d), user sgprs %d" % (
                lds, seg_size, hidden, len(user)))
            for o, _, _, what in layout:
                print("  kernarg +%d: %s" % (o, what))
    except Unsupported as e:
        die(str(e))
    except (OSError, ValueError, struct.error) as e:
        die(str(e))

    emu_dir = os.path.abspath(opts.emu)
    if not os.path.isfile(os.path.join(emu_dir, "test", "mockgpu", "amd", "emu.py")):
        die("%s has no test/mockgpu/amd/emu.py" % emu_dir)
    if sys.version_info < (3, 11):
        die("the emulator needs Python >= 3.11 (this is %d.%d)" % sys.version_info[:2])
    sys.path.insert(0, emu_dir)
    sys.dont_write_bytecode = True
    try:
        from test.mockgpu.amd import emu  # noqa: E402  (external tool)
        run_asm = emu.run_asm
        give_getpc_a_pc(emu)
    except Exception as e:  # the checkout is not usable
        die("cannot import the emulator from %s: %s: %s" % (emu_dir, type(e).__name__, e))

    try:
        rc = run_asm(image.base + entry, image.size - entry, grid[0], grid[1], grid[2],
                     block[0], block[1], block[2], kernarg.addr, run_rsrc2, 0, arch, user)
    except Exception as e:
        die("the emulator stopped: %s: %s" % (type(e).__name__, e))
    if rc != 0:
        die("the emulator returned %d" % rc)

    if counters:
        with open(opts.counters, "wb") as f:
            f.write(image.read(counters[0], counters[1]))
    stray = [b.name for b in buffers + [kernarg, packet, queue] if not b.guards_intact()]
    for buf in buffers:
        data = buf.contents()
        print("buffer %s bytes=%d sha256=%s" % (buf.name, len(data), hashlib.sha256(data).hexdigest()))
        if opts.dump:
            os.makedirs(opts.dump, exist_ok=True)
            with open(os.path.join(opts.dump, buf.name + ".bin"), "wb") as f:
                f.write(data)
    if stray:
        print("run-kernel: error: the kernel wrote next to %s" % ", ".join(stray), file=sys.stderr)
        sys.exit(3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
