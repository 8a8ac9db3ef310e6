#!/usr/bin/env python3
"""Writes a HIP host library with the shape of librocsparse0's (rocSPARSE
5.3.0, Debian): one translation unit per bundle, as clang's old offload
driver and ld lay them out, each contributing

  .hip_fatbin         its plain offload bundle (__CLANG_OFFLOAD_BUNDLE__,
                      header in clang-offload-bundler's layout, one entry
                      per target at 4096-byte offsets, the empty host entry
                      first), the section 4096-aligned
  .hipFatBinSegment   its __hip_fatbin_wrapper {"HIPF", 1, bundle, 0}: an
                      R_X86_64_RELATIVE relocation after ld.lld -shared
  .text, .init_array  __hip_module_ctor, which hands the wrapper to
                      __hipRegisterFatBinary (undefined: the HIP runtime's),
                      and host code filling the TU's share of librocsparse0's
                      10 MB of .text and 1.6 MB of .rodata

librocsparse0 has 111 bundles of 7 code objects (gfx1030, gfx803,
gfx900:xnack-, gfx906:xnack-, gfx908:xnack-, gfx90a:xnack+, gfx90a:xnack-):
777 objects, 1.30 GB in a 1.31 GB library; 20% of the objects' bytes are
code, 9% metadata notes, 64% debug info. Its bundles sorted by size, in
eighths, give the CLASSES below: the mean code object of each eighth.
Bundle I of B (sorted by size) takes the class of the eighth its quantile
(I + 1/2) / B falls in, so B = 114 (798 objects, ~1.3 GB) has the real
distribution and the library's total, and a smaller B samples it.

Each (class, target) code object is generated once by gen_shapes.py (the
small shape's kernel: head, s_nop body, descriptor, an 8-argument metadata
map of ~1 KB, no local labels, the class's code words per kernel and a
.debug_info section of its other bytes), assembled by llvm-mc and linked by
ld.lld -shared, into --objects (reused by every size). Copies of one object
differ: its .comment string holds the copy's number (16 hex digits patched
in by .incbin around them), so that no two of the library's code objects
are the same bytes, as in the real one.

After linking, the library is checked: B wrappers, each pointing at its own
plain bundle of 8 entries; and the smallest bundle is byte for byte what
clang-offload-bundler -type=o -bundle-align=4096 writes for its entries.

Usage: gen_host.py OUT.so --bundles B [--objects DIR] [--jobs N]
"""

import argparse
import concurrent.futures
import mmap
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "FatBinary",
                                "Inputs"))
import fatbin  # noqa: E402  (the tests' reader of wrappers and bundles)
from gen_shapes import target_mcpu  # noqa: E402

LLVM = "/usr/lib/llvm-22/bin"
TARGETS = ("gfx1030", "gfx803", "gfx900:xnack-", "gfx906:xnack-",
           "gfx908:xnack-", "gfx90a:xnack+", "gfx90a:xnack-")
HOST_ID = "host-x86_64-unknown-linux-gnu-"
DEVICE_ID = "hipv4-amdgcn-amd-amdhsa--"
MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
ALIGN = 4096
# librocsparse0's bundles sorted by size, in eighths (13-14 bundles each):
# the mean code object of each. kernels: half its .symtab entries (a kernel
# and its .kd); code: executable bytes; other: everything but code and the
# note (debug info, .rodata, dynamic symbols and ~150-byte names).
CLASSES = [
    # kernels, code bytes, note bytes, other bytes, object bytes
    (7, 2650, 4710, 37831, 45191),
    (17, 12901, 13333, 66844, 93077),
    (34, 35372, 32406, 144857, 212635),
    (60, 70585, 58311, 261339, 390236),
    (105, 117845, 107694, 355287, 580826),
    (176, 264621, 121556, 847402, 1233579),
    (298, 562473, 305999, 1991968, 2860440),
    (488, 1610560, 549038, 5638168, 7797766),
]
# The TU's share of librocsparse0's host .text and .rodata (111 TUs).
HOST_TEXT = 92 * 1024
HOST_RODATA = 14 * 1024
# The .comment string of every generated code object; each copy's number
# replaces the zeros.
COMMENT = "hotswap-opt bench host shape, copy 0000000000000000"
NUMBER = 16


def class_of(i, bundles):
    return (2 * i + 1) * len(CLASSES) // (2 * bundles)


def sh(argv):
    subprocess.run(argv, check=True)


def code_object(objects, c, target):
    """Generates, assembles and links class c's object for target
    (cached in objects)."""
    name = "c{}-{}".format(c, target.replace(":", "_"))
    co = os.path.join(objects, name + ".co")
    if os.path.exists(co):
        return co
    kernels, code, _, other, _ = CLASSES[c]
    # The kernel's head and tail are 8 words; kernels start 256-aligned.
    words = max(1, code // kernels // 4 - 8)
    # The other bytes less what the object has besides code, note and debug
    # info: ~256 bytes per kernel (two symbols in .symtab and .dynsym, hash,
    # names, descriptor) and 4 KiB of headers and padding.
    debug = max(0, other - 256 * kernels - 4096)
    s = os.path.join(objects, name + ".s")
    o = os.path.join(objects, name + ".o")
    sh([sys.executable, os.path.join(HERE, "gen_shapes.py"), "small", s,
        "--kernels", str(kernels), "--mcpu", target, "--labels", "0",
        "--words", str(words), "--debug-bytes", str(debug), "--comment",
        COMMENT])
    sh([LLVM + "/llvm-mc", "-triple=amdgcn-amd-amdhsa", "-filetype=obj"] +
       target_mcpu(target) + [s, "-o", o])
    sh([LLVM + "/ld.lld", "-shared", o, "-o", co + ".tmp"])
    os.rename(co + ".tmp", co)
    for f in (s, s + ".note", o):
        os.unlink(f)
    return co


def comment_offset(path):
    """Where the copy number's 16 digits are in the object at path."""
    with open(path, "rb") as f:
        data = f.read()
    at = data.find(COMMENT.encode())
    if at < 0 or data.find(COMMENT.encode(), at + 1) >= 0:
        raise SystemExit("gen_host.py: {}: no single '{}'".format(path,
                                                                  COMMENT))
    return at + len(COMMENT) - NUMBER


def bundle_layout(sizes):
    """(header bytes, [(offset, size)] of the host and device entries) as
    clang-offload-bundler lays a plain bundle out: the header, then each
    entry at the end of what precedes it rounded up to ALIGN."""
    ids = [HOST_ID] + [DEVICE_ID + t for t in TARGETS]
    end = len(MAGIC) + 8 + sum(24 + len(x) for x in ids)
    entries = []
    for size in [0] + sizes:
        end = (end + ALIGN - 1) // ALIGN * ALIGN
        entries.append((end, size))
        end += size
    header = bytearray(MAGIC)
    header += len(ids).to_bytes(8, "little")
    for x, (off, size) in zip(ids, entries):
        header += off.to_bytes(8, "little") + size.to_bytes(8, "little")
        header += len(x).to_bytes(8, "little") + x.encode()
    return bytes(header), entries


def tu_asm(i, objs, first_copy):
    """x86-64 assembly of TU i: its bundle of objs (one (path, size, digit
    offset) per target, copies first_copy, first_copy + 1, ...), its
    wrapper and constructor, and host code."""
    header, entries = bundle_layout([size for _, size, _ in objs])
    out = ["\t.text\n\t.p2align\t4\n\t.type\t__hip_module_ctor,@function\n"
           "__hip_module_ctor:\n\tpushq\t%rax\n"
           "\tleaq\t__hip_fatbin_wrapper(%rip), %rdi\n"
           "\tcallq\t__hipRegisterFatBinary@PLT\n"
           "\tmovq\t%rax, __hip_gpubin_handle(%rip)\n"
           "\tpopq\t%rax\n\tretq\n"
           ".Lctor_end:\n"
           "\t.size\t__hip_module_ctor, .Lctor_end-__hip_module_ctor\n",
           "\t.globl\thost_code_{0}\n\t.type\thost_code_{0},@function\n"
           "host_code_{0}:\n\t.fill\t{1}, 1, 0xc3\n"
           "\t.size\thost_code_{0}, {1}\n".format(i, HOST_TEXT),
           "\t.section\t.rodata,\"a\",@progbits\n\t.p2align\t4\n"
           "host_data_{}:\n\t.fill\t{}, 1, 0x2a\n".format(i, HOST_RODATA),
           "\t.section\t.init_array,\"aw\",@init_array\n\t.p2align\t3\n"
           "\t.quad\t__hip_module_ctor\n",
           "\t.local\t__hip_gpubin_handle\n"
           "\t.comm\t__hip_gpubin_handle,8,8\n",
           "\t.section\t.hip_fatbin,\"a\",@progbits\n\t.p2align\t12\n"
           "\t.type\t__hip_fatbin,@object\n__hip_fatbin:\n"]
    out.append("\t.byte\t" + ",".join(str(b) for b in header) + "\n")
    pos = len(header)
    for k, ((path, size, digits), (off, _)) in enumerate(zip(objs,
                                                             entries[1:])):
        if off > pos:
            out.append("\t.zero\t{}\n".format(off - pos))
        number = "{:016x}".format(first_copy + k)
        out.append('\t.incbin\t"{0}", 0, {1}\n\t.ascii\t"{2}"\n'
                   '\t.incbin\t"{0}", {3}\n'.format(path, digits, number,
                                                    digits + NUMBER))
        pos = off + size
    out.append("\t.size\t__hip_fatbin, {}\n".format(pos))
    out.append("\t.section\t.hipFatBinSegment,\"aw\",@progbits\n"
               "\t.p2align\t3\n\t.type\t__hip_fatbin_wrapper,@object\n"
               "__hip_fatbin_wrapper:\n\t.long\t0x48495046\n\t.long\t1\n"
               "\t.quad\t__hip_fatbin\n\t.quad\t0\n"
               "\t.size\t__hip_fatbin_wrapper, 24\n")
    return "".join(out)


class Mapped(mmap.mmap):
    """A read-only map with bytes' index() (utils/elf.py uses it)."""

    def index(self, sub, start=0):
        at = self.find(sub, start)
        if at < 0:
            raise ValueError("subsection not found")
        return at


class MappedElf(fatbin.Elf):
    """fatbin.Elf over a map of the file, not a copy in memory."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = Mapped(f.fileno(), 0, access=mmap.ACCESS_READ)
        fatbin.elffile.File.__init__(self, data)


def check(lib, bundles):
    """B wrappers, B plain bundles of 8 entries; the smallest bundle is
    clang-offload-bundler's for its entries. Returns (objects, a line)."""
    elf = MappedElf(lib)
    ws = fatbin.wrappers(elf)
    infos = []
    for w in ws:
        fmt, size, entries, _ = fatbin.bundle_info(elf.data, w["offset"])
        if fmt != "bundle" or len(entries) != 1 + len(TARGETS):
            raise SystemExit("gen_host.py: {}: wrapper {} points at no "
                             "bundle of {} entries".format(
                                 lib, w["index"], 1 + len(TARGETS)))
        infos.append((size, w["offset"], entries))
    if len(ws) != bundles or len({x[1] for x in infos}) != bundles:
        raise SystemExit("gen_host.py: {}: {} wrappers, {} bundles, expected "
                         "{}".format(lib, len(ws), len({x[1] for x in infos}),
                                     bundles))
    size, at, entries = min(infos)
    with tempfile.TemporaryDirectory() as tmp:
        ins = ["-input=/dev/null"]
        for ident, off, esize in entries[1:]:
            f = os.path.join(tmp, "e{}.co".format(len(ins)))
            with open(f, "wb") as o:
                o.write(elf.data[at + off:at + off + esize])
            ins.append("-input=" + f)
        ref = os.path.join(tmp, "ref.hipfb")
        sh([LLVM + "/clang-offload-bundler", "-type=o",
            "-bundle-align={}".format(ALIGN),
            "-targets=" + ",".join(e[0] for e in entries)] + ins +
           ["-output=" + ref])
        with open(ref, "rb") as f:
            same = f.read() == elf.data[at:at + size]
    if not same:
        raise SystemExit("gen_host.py: {}: the bundle at 0x{:x} is not "
                         "clang-offload-bundler's".format(lib, at))
    objects = sum(len(e) - 1 for _, _, e in infos)
    return objects, ("{} wrappers, {} plain bundles of {} entries ({} code "
                     "objects), the smallest ({} bytes) byte-identical to "
                     "clang-offload-bundler's".format(
                         len(ws), bundles, 1 + len(TARGETS), objects, size))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--bundles", type=int, required=True)
    ap.add_argument("--objects", default="",
                    help="where the generated code objects are kept "
                    "(default: OUT.objects, removed at the end)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    a = ap.parse_args()
    b = a.bundles
    objects = a.objects or a.out + ".objects"
    os.makedirs(objects, exist_ok=True)
    work = a.out + ".tus"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    pool = concurrent.futures.ThreadPoolExecutor(a.jobs)

    classes = sorted({class_of(i, b) for i in range(b)})
    made = {(c, t): pool.submit(code_object, objects, c, t)
            for c in classes for t in TARGETS}
    cos = {}
    for key, fut in made.items():
        path = fut.result()
        cos[key] = (path, os.path.getsize(path), comment_offset(path))

    def tu(i):
        s = os.path.join(work, "tu{}.s".format(i))
        o = os.path.join(work, "tu{}.o".format(i))
        with open(s, "w") as f:
            f.write(tu_asm(i, [cos[(class_of(i, b), t)] for t in TARGETS],
                           i * len(TARGETS)))
        sh([LLVM + "/llvm-mc", "-triple=x86_64-unknown-linux-gnu",
            "-filetype=obj", s, "-o", o])
        os.unlink(s)
        return o

    tus = list(pool.map(tu, range(b)))
    pool.shutdown()
    sh([LLVM + "/ld.lld", "-shared", "-soname", os.path.basename(a.out)] +
       tus + ["-o", a.out + ".tmp"])
    shutil.rmtree(work)
    n, line = check(a.out + ".tmp", b)
    os.rename(a.out + ".tmp", a.out)
    if not a.objects:
        shutil.rmtree(objects)
    print("{}: {} MiB; {}".format(a.out, round(os.path.getsize(a.out) /
                                               (1 << 20), 1), line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
