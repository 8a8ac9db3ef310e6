#!/usr/bin/env python3
"""Builds HIP fat binaries with clang-22 at test time, and reads them.

Usage (lit: %fatbin is "python fatbin.py --llvm-bin DIR --cache DIR"):

  fatbin.py [--llvm-bin DIR] [--cache DIR] build VARIANT OUTDIR
      Builds VARIANT (see VARIANTS below) into OUTDIR from the sources next to
      this script; prints "built FILE" for each product. Variants that build
      host programs or libraries also build the fake HIP runtime
      (OUTDIR/libfakehip.so, which executables link against and find
      through $ORIGIN); shared-library variants also build the dlopen
      driver (OUTDIR/run-fat). These helper
      programs (and comgr-lookup) come from the --cache directory when it
      has them, built from the same sources with the same command.
  fatbin.py wrappers FILE
      Reads a host ELF without running it: one line per 24-byte wrapper in
      .hipFatBinSegment, saying where its bundle pointer's value comes from
      (R_X86_64_RELATIVE addend, R_X86_64_64 symbol+addend, RELR or absolute,
      each with the in-place value), the bundle it points to (file offset,
      format, size as HIP computes it) and its entries.
  fatbin.py bundle FILE [OFFSET]
      Prints the header of the bundle at OFFSET (default 0) of FILE, its size
      as HIP computes it and how many bytes of FILE follow it; for a plain
      bundle whether the padding around the entries is all zero, and for
      each entry the alignment of its offset (up to 4096).
  fatbin.py extract FILE ID OUT [OFFSET]
      Writes the entry ID of the plain bundle at OFFSET of FILE to OUT, by
      its header alone (clang-offload-bundler 22 cannot unbundle most entries
      of bundles whose host ID is the older "host-x86_64-unknown-linux").
  fatbin.py corrupt FILE OUT magic|version|pointer+16|entry-size
      Writes OUT, a copy of FILE whose first wrapper has a wrong magic or
      version, points 16 bytes into its bundle, or whose bundle's last entry
      runs 1 MiB further: the mistakes the fake runtime must catch.
  fatbin.py segments FILE
      Prints where the program header table is and what holds it: e_phoff
      and e_phnum (and whether the table is inside the last PT_LOAD's file
      bytes, at its start), the first and the last PT_LOAD (p_vaddr -
      p_offset of each; whether GNU strip keeps the last one's addresses:
      its p_vaddr congruent to the end of the loaded file bytes before it),
      PT_PHDR and whether it matches e_phoff and lies inside the last
      PT_LOAD (file and memory), and whether the PT_LOADs are in ascending
      address order with the last one above all others: what a rewritten
      host binary must satisfy.
  fatbin.py memory FILE
      Prints the memory image FILE asks for, without file offsets: each
      PT_LOAD's address, size, flags and alignment and PT_PHDR's address
      and size, in program header order (what must not change when another
      tool lays the file out again).
  fatbin.py check-capture DUMPDIR FILE...
      Checks what the fake runtime captured (DUMPDIR/index.txt) against the
      FILEs read statically: for each registered wrapper, that FILE has a
      wrapper at that address pointing at that bundle, and that the dumped
      bundle is byte-identical to FILE's bytes there. Prints one line per
      capture and "N captured, N ok".

Variants (sources: fat-lib.hip, fat-main.hip, tu-a.hip, tu-b.hip; offload
archs gfx90a and gfx1100 unless said otherwise; lld unless said otherwise):

  so-lld          libfat.so        -shared
  so-bfd          libfat.so        -shared -fuse-ld=bfd (GNU ld 2.40)
  so-relr         libfat.so        -shared -Wl,-z,pack-relative-relocs
  so-relr-bfd     libfat.so        the same with GNU ld
  so-gfx8-9       libfat.so        -shared, gfx803, gfx900:xnack-, gfx900:xnack+
  pie, pie-bfd    fat-main         -fPIE -pie (lld, GNU ld)
  nopie, nopie-bfd fat-main        -fno-pic -no-pie (lld, GNU ld)
  multi-tu        fat-multi        -pie, three non-RDC TUs (fat-main, tu-a, tu-b)
  rdc             libfat-rdc.so    -fgpu-rdc -shared, two TUs (tu-a, fat-lib)
  rdc-bfd         libfat-rdc.so    the same linked by GNU ld
  rdc-exe         fat-rdc          -fgpu-rdc -pie, two TUs (tu-a, fat-main)
  new-driver      libfat.so        --offload-new-driver -shared
  new-driver-rdc  libfat-rdc.so    --offload-new-driver -fgpu-rdc -shared, two TUs
  compress-v3     libfat.so        --offload-compress (CCOB v3, LLVM 22's default)
  compress-v2     libfat.so        the same with COMPRESSED_BUNDLE_FORMAT_VERSION=2
  compress-level1 libfat.so        --offload-compress --offload-compression-level=1
  bare            device.hipfb     clang --offload-device-only (plain bundle)
  bare-compressed device-v3.hipfb, device-v2.hipfb (--offload-compress)
  bare-gfx8-9     device.hipfb     "bare" for gfx803, gfx900:xnack-, gfx900:xnack+
  bare-bundler    bundler.hipfb, bundler-v3.hipfb: clang-offload-bundler -type=o
                  (plain, -compress) of the code objects of "bare"
  rdc-object      rdc-object.o     -fgpu-rdc -c (bundle entries as ELF sections)
  hip-stand-ins   stand-in/ and versioned/libamdhip64.so.5, for Debian's librocrand
  comgr-lookup    the COMGR lookup checker (comgr-lookup.cpp)
  runtime         only the fake runtime and the dlopen driver

Facts found with these builds (clang/lld 22, GNU ld 2.40, Debian 12) and
checked by the tests in this directory. "Pointer" is where the value of the
bundle pointer (wrapper+8) comes from at load time; "in place" is the
8 bytes at wrapper+8 in the file.

  variant         wrappers bundles pointer
  so-lld, pie     1        1       R_X86_64_RELATIVE in .rela.dyn, addend = the
                                   bundle (.hip_fatbin start), in place 0
  so-bfd, pie-bfd 1        1       R_X86_64_RELATIVE, addend = in place = bundle
  so-relr(-bfd)   1        1       a .relr.dyn entry covers wrapper+8 (a bitmap
                                   word, with lld and GNU ld); the bundle
                                   address is in place; no RELA for it
  nopie(-bfd)     1        1       ET_EXEC: absolute address in place, no
                                   dynamic relocation
  multi-tu        3        3       3 x R_X86_64_RELATIVE, in link order; the
                                   bundles are back to back in .hip_fatbin,
                                   each starting 4096-aligned, zero padding
  rdc             2        1       one R_X86_64_RELATIVE (the TU whose
                                   __hip_fatbin_<cuid> the device link step
                                   defines PROTECTED) and one R_X86_64_64
                                   against __hip_fatbin_<cuid2>, an exported
                                   GLOBAL DEFAULT alias (.set) of the same
                                   address, addend 0, in place 0. Only the
                                   first constructor registers (they share
                                   __hip_gpubin_handle); all kernels register
                                   on that one handle
  rdc-bfd         2        1       2 x R_X86_64_64, in place 0: GNU ld keeps a
                                   symbolic relocation against the PROTECTED
                                   symbol too
  rdc-exe         2        1       2 x R_X86_64_RELATIVE (the alias is neither
                                   exported nor preemptible in an executable)
  new-driver      1        1       as so-lld
  new-driver-rdc  1        1       R_X86_64_RELATIVE; the wrapper is
                                   ".fatbin_wrapper", the bundle ".fatbin_image"
                                   (offload.wrapper.module from
                                   clang-linker-wrapper); .hip_fatbin is only
                                   16-byte aligned
  compress-v2/v3  1        1       as so-lld; .hip_fatbin is exactly the CCOB
                                   (total size in its header), zstd
  Debian librocrand1 (rocRAND 5.3.3, clang 15, GNU ld, stripped): 1 wrapper,
  1 bundle, R_X86_64_RELATIVE with the address also in place; .hip_fatbin is
  one zero byte longer than the bundle; 8 entries (older host ID
  "host-x86_64-unknown-linux", 7 device target IDs), 80 kernels each, one
  metadata note per code object.

Entry IDs: old driver "hipv4-amdgcn-amd-amdhsa--gfxNNN[:xnack+|-]", after
"host-x86_64-unknown-linux-gnu-" (size 0, first, sharing the first device
entry's offset); clang's driver sorts the device entries by ID ("gfx1100"
before "gfx90a"), clang-offload-bundler keeps -targets order. New driver:
"hip-amdgcn-amd-amdhsa--gfxNNN" in --offload-arch order. An -fgpu-rdc object
(-c) has "hip-" device entries of bitcode and "host-x86_64-pc-linux-gnu-".
Plain bundles start every entry on a 4096-byte boundary of the bundle and
pad with zeros; the header is 193-265 bytes here.

Device code objects are code object v6 (ELF ABI version 4). With -fgpu-rdc
(old and new driver) LTO runs with clang's default partitioning
(--lto-partitions=8) and links the partitions: the code object carries one
NT_AMDGPU_METADATA note per partition, in one .note section and one PT_NOTE
(5 kernels: 5 notes of one kernel each; 12 kernels: 8 notes); non-RDC
objects have one note for all kernels.

Consumers: llvm-objdump --offloading extracts plain bundles from host files
(one set per bundle, numbered), but not from bare bundle files or -fgpu-rdc
objects, and for CCOB in a host file it writes wrong bytes (llvm-readobj
--offloading gives the decompressed entry offsets as file offsets).
clang-offload-bundler 22 lists and unbundles every bundle built here; on
librocrand's it lists all entries but fails ("invalid bundle id") to unbundle
those it reaches after the older host ID.
"""
import argparse
import fcntl
import hashlib
import os
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "utils"))
import elf as elffile  # noqa: E402  (utils/elf.py)
LLVM_BIN = "/usr/lib/llvm-22/bin"

ARCHS = ["gfx90a", "gfx1100"]
ARCHS_GFX8_9 = ["gfx803", "gfx900:xnack-", "gfx900:xnack+"]
HOST_ID = "host-x86_64-unknown-linux-gnu-"
COMGR_HEADER = "/usr/include/amd_comgr.h"

# ---------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------


class Builder:
    def __init__(self, llvm_bin, outdir, cache=None):
        self.bin = llvm_bin
        self.cache = cache
        self.out = os.path.abspath(outdir)
        os.makedirs(self.out, exist_ok=True)
        self.built = []

    def tool(self, name):
        return os.path.join(self.bin, name)

    def run(self, argv, env=None):
        e = dict(os.environ)
        e.update(env or {})
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, env=e, cwd=self.out)
        if r.returncode != 0:
            sys.exit("fatbin.py: command failed (%d): %s\n%s"
                     % (r.returncode, " ".join(argv), r.stdout))
        return r.stdout

    def path(self, name):
        return os.path.join(self.out, name)

    def product(self, name):
        self.built.append(self.path(name))
        return self.path(name)

    def hip(self, archs, extra=()):
        """clang++ in HIP mode with no HIP SDK at all (clang++: links
        libstdc++, which the exceptions in the sources need)."""
        argv = [self.tool("clang++"), "-x", "hip", "-nogpulib", "-nogpuinc",
                "-no-hip-rt", "-O1", "-I", HERE, "-Wno-unused-command-line-argument"]
        argv += ["--offload-arch=%s" % a for a in archs]
        return argv + list(extra)

    def cached(self, name, argv, sources):
        """Builds OUTDIR/NAME with argv (where the output path is "{out}"),
        through the tool cache (--cache) when there is one: the helper
        programs do not change between tests, only the fat binaries do. The
        cache key is the command line, the compiler binary's size and time
        and the sources' contents; a lock serialises tests building the same
        entry."""
        out = self.path(name)
        if not self.cache:
            self.run([a.replace("{out}", out) for a in argv])
            return out
        st = os.stat(argv[0])
        h = hashlib.sha256(("%s\0%d\0%d" % ("\0".join(argv), st.st_size, st.st_mtime_ns)).encode())
        for src in sources:
            with open(src, "rb") as f:
                h.update(f.read())
        os.makedirs(self.cache, exist_ok=True)
        entry = os.path.join(self.cache, "%s-%s" % (h.hexdigest()[:20], os.path.basename(name)))
        with open(os.path.join(self.cache, ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not os.path.exists(entry):
                tmp = entry + ".tmp"
                self.run([a.replace("{out}", tmp) for a in argv])
                os.rename(tmp, entry)
        shutil.copy2(entry, out)
        return out

    # The fake runtime and the dlopen driver.
    def runtime(self):
        src = os.path.join(HERE, "fake-hip.c")
        lib = self.cached("libfakehip.so", [
            self.tool("clang"), "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-fPIC",
            "-shared", "-fvisibility=hidden", "-fuse-ld=lld", "-Wl,-soname,libfakehip.so",
            src, "-o", "{out}"], [src])
        self.built.append(lib)
        return lib

    def driver(self):
        src = os.path.join(HERE, "run-fat.cpp")
        exe = self.cached("run-fat", [
            self.tool("clang++"), "-std=c++17", "-O1", "-Wall", "-Werror", "-fuse-ld=lld",
            src, "-o", "{out}"], [src])
        self.built.append(exe)
        return exe

    def comgr_lookup(self):
        """The COMGR lookup checker (against Debian's libamd-comgr-dev)."""
        src = os.path.join(HERE, "comgr-lookup.cpp")
        self.built.append(self.cached("comgr-lookup", [
            self.tool("clang++"), "-std=c++17", "-O1", "-Wall", "-Werror", "-fuse-ld=lld",
            src, "-o", "{out}", "-Wl,--no-as-needed", "-lamd_comgr"], [src, COMGR_HEADER]))

    def exe_link(self):
        """Executables link against the fake runtime, found next to them."""
        self.runtime()
        return ["-L", self.out, "-lfakehip", "-Wl,-rpath,$ORIGIN"]

    # --- variants ----------------------------------------------------------

    def so(self, name, linker, extra=(), archs=ARCHS, src="fat-lib.hip", env=None):
        self.runtime()
        self.driver()
        out = self.product(name)
        self.run(self.hip(archs, ["-fPIC", "-shared", "-fuse-ld=" + linker] + list(extra) +
                          [os.path.join(HERE, src), "-o", out]), env=env)

    def exe(self, name, linker, pie, srcs=("fat-main.hip",), extra=()):
        pic = ["-fPIE", "-pie"] if pie else ["-fno-pic", "-no-pie"]
        link = self.exe_link()
        out = self.product(name)
        self.run(self.hip(ARCHS, pic + ["-fuse-ld=" + linker] + list(extra) +
                          [os.path.join(HERE, s) for s in srcs] + ["-o", out] + link))

    def rdc(self, name, shared, new_driver=False, linker="lld"):
        """-fgpu-rdc: compile each TU to a bundled object, then link."""
        self.runtime()
        if shared:
            self.driver()
        driver = ["--offload-new-driver"] if new_driver else []
        tag = "nd-" if new_driver else ""
        pic = ["-fPIC"] if shared else ["-fPIE"]
        objs = []
        srcs = ["tu-a.hip"] + (["fat-lib.hip"] if shared else ["fat-main.hip"])
        for s in srcs:
            o = self.path("%srdc-%s.o" % (tag, os.path.splitext(s)[0]))
            self.run(self.hip(ARCHS, driver + ["-fgpu-rdc", "-c", "-DRDC"] + pic +
                              [os.path.join(HERE, s), "-o", o]))
            objs.append(o)
        out = self.product(name)
        link = [self.tool("clang++"), "-fgpu-rdc", "--hip-link", "-no-hip-rt", "-nogpulib",
                "-fuse-ld=" + linker, "-Wno-unused-command-line-argument"] + driver
        link += ["--offload-arch=%s" % a for a in ARCHS]
        link += ["-shared"] if shared else ["-pie"] + self.exe_link()
        self.run(link + objs + ["-o", out])

    def bare(self, compressed=False, archs=ARCHS):
        """Bundle files from clang --offload-device-only: plain, or CCOB v3
        (the default) and v2."""
        src = os.path.join(HERE, "fat-lib.hip")
        if not compressed:
            self.run(self.hip(archs, ["--offload-device-only", src,
                                      "-o", self.product("device.hipfb")]))
            return
        self.run(self.hip(ARCHS, ["--offload-device-only", "--offload-compress", src,
                                  "-o", self.product("device-v3.hipfb")]))
        self.run(self.hip(ARCHS, ["--offload-device-only", "--offload-compress", src,
                                  "-o", self.product("device-v2.hipfb")]),
                 env={"COMPRESSED_BUNDLE_FORMAT_VERSION": "2"})

    def bare_bundler(self):
        """Bundle files from clang-offload-bundler itself, called the way the
        HIP driver calls it (-type=o with host input /dev/null gives the
        plain binary format, not an ELF object), from code objects unbundled
        from clang's own bundle: plain and -compress."""
        self.bare()
        plain = self.path("device.hipfb")
        ids = ["hipv4-amdgcn-amd-amdhsa--%s" % a for a in ARCHS]
        cos = [self.path("device-%s.co" % a.replace(":", "_")) for a in ARCHS]
        bundler = self.tool("clang-offload-bundler")
        self.run([bundler, "-type=o", "-unbundle", "-input=" + plain,
                  "-targets=" + ",".join(ids)] + ["-output=" + c for c in cos])
        self.built += cos
        targets = "-targets=" + ",".join([HOST_ID] + ids)
        inputs = ["-input=/dev/null"] + ["-input=" + c for c in cos]
        self.run([bundler, "-type=o", "-bundle-align=4096", targets] + inputs +
                 ["-output=" + self.product("bundler.hipfb")])
        self.run([bundler, "-type=o", "-bundle-align=4096", "-compress", targets] + inputs +
                 ["-output=" + self.product("bundler-v3.hipfb")])

    def rdc_object(self):
        """An -fgpu-rdc object: a host ELF relocatable whose bundle entries
        are sections named __CLANG_OFFLOAD_BUNDLE__<id>."""
        self.run(self.hip(ARCHS, ["-fgpu-rdc", "-fPIC", "-c", os.path.join(HERE, "fat-lib.hip"),
                                  "-o", self.product("rdc-object.o")]))

    def hip_stand_ins(self):
        """What Debian's librocrand needs besides the fake runtime: a file
        named libamdhip64.so.5 (its DT_NEEDED). stand-in/: an empty library
        with that soname and no symbol versions, for use with the fake
        runtime in LD_PRELOAD; versioned/: the fake runtime itself under that
        soname, its symbols in version node hip_4.2 (what librocrand's
        references ask for), usable without LD_PRELOAD."""
        self.runtime()
        self.driver()
        for d in ("stand-in", "versioned"):
            os.makedirs(self.path(d), exist_ok=True)
        empty = self.path("stand-in.c")
        with open(empty, "w") as f:
            f.write("/* Only a soname: the fake runtime, preloaded, defines the symbols. */\n"
                    "void fake_hip_stand_in(void) {}\n")
        self.run([self.tool("clang"), "-fPIC", "-shared", "-fuse-ld=lld",
                  "-Wl,-soname,libamdhip64.so.5", empty,
                  "-o", self.product("stand-in/libamdhip64.so.5")])
        script = self.path("hip_4.2.map")
        with open(script, "w") as f:
            f.write("hip_4.2 { global: *; };\n")
        self.run([self.tool("clang"), "-std=c11", "-O1", "-fPIC", "-shared",
                  "-fvisibility=hidden", "-fuse-ld=lld", "-Wl,-soname,libamdhip64.so.5",
                  "-Wl,--version-script=" + script, os.path.join(HERE, "fake-hip.c"),
                  "-o", self.product("versioned/libamdhip64.so.5")])


VARIANTS = {
    "so-lld": lambda b: b.so("libfat.so", "lld"),
    "so-bfd": lambda b: b.so("libfat.so", "bfd"),
    "so-relr": lambda b: b.so("libfat.so", "lld", ["-Wl,-z,pack-relative-relocs"]),
    "so-relr-bfd": lambda b: b.so("libfat.so", "bfd", ["-Wl,-z,pack-relative-relocs"]),
    "so-gfx8-9": lambda b: b.so("libfat.so", "lld", archs=ARCHS_GFX8_9),
    "pie": lambda b: b.exe("fat-main", "lld", pie=True),
    "pie-bfd": lambda b: b.exe("fat-main", "bfd", pie=True),
    "nopie": lambda b: b.exe("fat-main", "lld", pie=False),
    "nopie-bfd": lambda b: b.exe("fat-main", "bfd", pie=False),
    "multi-tu": lambda b: b.exe("fat-multi", "lld", pie=True,
                                srcs=("fat-main.hip", "tu-a.hip", "tu-b.hip"),
                                extra=["-DMULTI_TU"]),
    "rdc": lambda b: b.rdc("libfat-rdc.so", shared=True),
    "rdc-bfd": lambda b: b.rdc("libfat-rdc.so", shared=True, linker="bfd"),
    "rdc-exe": lambda b: b.rdc("fat-rdc", shared=False),
    "new-driver": lambda b: b.so("libfat.so", "lld", ["--offload-new-driver"]),
    "new-driver-rdc": lambda b: b.rdc("libfat-rdc.so", shared=True, new_driver=True),
    "compress-v3": lambda b: b.so("libfat.so", "lld", ["--offload-compress"]),
    "compress-v2": lambda b: b.so("libfat.so", "lld", ["--offload-compress"],
                                  env={"COMPRESSED_BUNDLE_FORMAT_VERSION": "2"}),
    "compress-level1": lambda b: b.so("libfat.so", "lld", ["--offload-compress",
                                                          "--offload-compression-level=1"]),
    "bare": lambda b: b.bare(),
    "bare-compressed": lambda b: b.bare(compressed=True),
    "bare-gfx8-9": lambda b: b.bare(archs=ARCHS_GFX8_9),
    "bare-bundler": lambda b: b.bare_bundler(),
    "rdc-object": lambda b: b.rdc_object(),
    "hip-stand-ins": lambda b: b.hip_stand_ins(),
    "comgr-lookup": lambda b: b.comgr_lookup(),
    "runtime": lambda b: (b.runtime(), b.driver()),
}

# ---------------------------------------------------------------------------
# Reading ELF files (utils/elf.py) and bundles, independently of LLVM: the
# tests compare this reader, llvm-readelf and the fake runtime
# ---------------------------------------------------------------------------

SHT_RELA, SHT_DYNSYM, SHT_RELR = elffile.SHT_RELA, elffile.SHT_DYNSYM, elffile.SHT_RELR
PT_LOAD = elffile.PT_LOAD
R_X86_64_64, R_X86_64_RELATIVE = elffile.R_X86_64_64, elffile.R_X86_64_RELATIVE
ET_EXEC = elffile.ET_EXEC
WRAPPER_MAGIC, WRAPPER_SIZE = 0x48495046, 24
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


class Elf(elffile.File):
    """A host ELF file read by utils/elf.py, and its dynamic relocations."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        if not elffile.is_elf64le(data):
            raise SystemExit("fatbin.py: %s: not an ELF64 little-endian file" % path)
        super().__init__(data)

    def u64_at(self, vaddr):
        off = self.offset_of(vaddr)
        return None if off is None else struct.unpack_from("<Q", self.data, off)[0]

    def dynsyms(self):
        for s in self.sections:
            if s["type"] == SHT_DYNSYM:
                return [(sym["name"], sym["value"]) for sym in self.symbols(s)]
        return []

    def dynamic_relocations(self):
        """{r_offset: (type, symbol name, symbol value, addend)} of every
        allocated RELA section, and the set of addresses .relr.dyn covers."""
        syms = self.dynsyms()
        rela, relr = {}, set()
        for s in self.sections:
            if s["type"] == SHT_RELA and s["flags"] & elffile.SHF_ALLOC:
                for r in self.rela(s):
                    sym = syms[r["sym"]] if r["sym"] < len(syms) else ("", 0)
                    rela[r["offset"]] = (r["type"], sym[0], sym[1], r["addend"])
            elif s["type"] == SHT_RELR:
                relr |= self.relr(s)
        return rela, relr


def bundle_info(data, off):
    """(format, size as HIP computes it, [(id, offset, size)], extra) of the
    bundle at data[off:]; format is None when there is no bundle magic."""
    if data[off:off + 24] == BUNDLE_MAGIC:
        (n,) = struct.unpack_from("<Q", data, off + 24)
        pos, entries = off + 32, []
        for _ in range(n):
            eoff, esize, idlen = struct.unpack_from("<QQQ", data, pos)
            ident = data[pos + 24:pos + 24 + idlen].decode(errors="replace")
            entries.append((ident, eoff, esize))
            pos += 24 + idlen
        size = entries[-1][1] + entries[-1][2] if entries else 0
        # Are the bytes between the header and the entries, and between
        # entries, all zero (what the bundler writes)?
        covered = [(0, pos - off)] + sorted((e[1], e[1] + e[2]) for e in entries)
        gaps, end = [], 0
        for start, stop in covered:
            if start > end:
                gaps.append(data[off + end:off + start])
            end = max(end, stop)
        zero = all(g.count(0) == len(g) for g in gaps)
        return ("bundle", size, entries, "header=%d gaps=%s"
                % (pos - off, "zero" if zero else "nonzero"))
    if data[off:off + 4] == b"CCOB":
        version, method = struct.unpack_from("<HH", data, off + 4)
        if version == 2:
            total, raw, digest = struct.unpack_from("<IIQ", data, off + 8)
        elif version == 3:
            total, raw, digest = struct.unpack_from("<QQQ", data, off + 8)
        else:
            return "ccob-v%d" % version, None, [], "no total size"
        return ("ccob-v%d" % version, total, [],
                "method=%s uncompressed=%d hash=0x%016x"
                % ({0: "zlib", 1: "zstd"}.get(method, str(method)), raw, digest))
    return None, None, [], ""


def alignment(offset):
    """The largest power of two up to 4096 that divides offset."""
    a = 1
    while a < 4096 and offset % (2 * a) == 0:
        a *= 2
    return a


def wrappers(elf):
    """One dict per wrapper in .hipFatBinSegment."""
    seg = elf.section(".hipFatBinSegment")
    if seg is None:
        return []
    rela, relr = elf.dynamic_relocations()
    out = []
    for i in range(seg["size"] // WRAPPER_SIZE):
        vaddr = seg["addr"] + i * WRAPPER_SIZE
        off = seg["offset"] + i * WRAPPER_SIZE
        magic, version, inplace, unused = struct.unpack_from("<IIQQ", elf.data, off)
        slot = vaddr + 8
        w = dict(index=i, vaddr=vaddr, magic=magic, version=version, inplace=inplace)
        if slot in rela:
            typ, sym, symval, addend = rela[slot]
            if typ == R_X86_64_RELATIVE:
                w["pointer"] = "R_X86_64_RELATIVE addend=0x%x inplace=0x%x" % (addend, inplace)
                w["bundle"] = addend
            elif typ == R_X86_64_64:
                w["pointer"] = "R_X86_64_64 %s+0x%x inplace=0x%x" % (sym, addend, inplace)
                w["bundle"] = symval + addend
            else:
                w["pointer"] = "relocation type %d" % typ
                w["bundle"] = None
        elif slot in relr:
            w["pointer"] = "RELR inplace=0x%x" % inplace
            w["bundle"] = inplace
        else:
            w["pointer"] = ("absolute inplace=0x%x" % inplace if elf.e_type == ET_EXEC
                            else "no relocation in a position-independent file")
            w["bundle"] = inplace if elf.e_type == ET_EXEC else None
        if w["bundle"] is not None:
            w["offset"] = elf.offset_of(w["bundle"])
        out.append(w)
    return out


def cmd_wrappers(args):
    elf = Elf(args.file)
    ws = wrappers(elf)
    fb = elf.section(".hip_fatbin")
    if fb:
        print(".hip_fatbin addr=0x%x offset=0x%x size=%d align=%d"
              % (fb["addr"], fb["offset"], fb["size"], fb["align"]))
    for w in ws:
        print("wrapper %d vaddr=0x%x magic=0x%08x version=%d pointer: %s"
              % (w["index"], w["vaddr"], w["magic"], w["version"], w["pointer"]))
        if w["bundle"] is None or w["offset"] is None:
            print("  bundle: not in a PT_LOAD")
            continue
        fmt, size, entries, extra = bundle_info(elf.data, w["offset"])
        where = ""
        if fb and fb["addr"] <= w["bundle"] < fb["addr"] + fb["size"]:
            where = " .hip_fatbin+0x%x" % (w["bundle"] - fb["addr"])
        print("  bundle vaddr=0x%x offset=0x%x%s format=%s size=%s %s"
              % (w["bundle"], w["offset"], where, fmt, size, extra))
        for ident, eoff, esize in entries:
            print("  entry %s offset=%d size=%d align=%d" % (ident, eoff, esize, alignment(eoff)))
    print("%d wrappers, %d distinct bundles"
          % (len(ws), len({w["bundle"] for w in ws})))


def cmd_bundle(args):
    with open(args.file, "rb") as f:
        data = f.read()
    fmt, size, entries, extra = bundle_info(data, args.offset)
    if fmt is None:
        sys.exit("fatbin.py: %s: no bundle at offset %d" % (args.file, args.offset))
    trailing = len(data) - args.offset - size if size is not None else "?"
    print("format=%s size=%s %s trailing=%s" % (fmt, size, extra, trailing))
    for ident, eoff, esize in entries:
        print("entry %s offset=%d size=%d align=%d" % (ident, eoff, esize, alignment(eoff)))


def cmd_check_capture(args):
    objs = {os.path.basename(p): Elf(p) for p in args.files}
    index = os.path.join(args.dumpdir, "index.txt")
    lines = open(index).read().splitlines() if os.path.exists(index) else []
    ok = 0
    for line in lines:
        f = dict(kv.split("=", 1) for kv in line.split())
        tag = "capture %s (%s)" % (f["wrapper"], f["object"])
        elf = objs.get(f["object"])
        if elf is None:
            print("%s: FAIL: object not among the files given" % tag)
            continue
        ws = [w for w in wrappers(elf) if w["vaddr"] == int(f["wrapper_vaddr"], 16)]
        if not ws:
            print("%s: FAIL: no wrapper at %s" % (tag, f["wrapper_vaddr"]))
            continue
        w = ws[0]
        if w["bundle"] != int(f["bundle_vaddr"], 16):
            print("%s: FAIL: registered bundle %s, the file says 0x%x"
                  % (tag, f["bundle_vaddr"], w["bundle"] or 0))
            continue
        dumped = open(os.path.join(args.dumpdir, f["file"]), "rb").read()
        start = w["offset"]
        if elf.data[start:start + len(dumped)] != dumped or len(dumped) != int(f["size"]):
            print("%s: FAIL: dumped bundle differs from the file's bytes at 0x%x"
                  % (tag, start))
            continue
        ok += 1
        print("%s: ok wrapper=%s bundle=%s %s %d bytes"
              % (tag, f["wrapper_vaddr"], f["bundle_vaddr"], f["format"], len(dumped)))
    print("%d captured, %d ok" % (len(lines), ok))
    return 0 if ok == len(lines) else 1


def cmd_segments(args):
    with open(args.file, "rb") as f:
        e = elffile.File(f.read())
    phoff, phentsize, phnum, phdrs = e.e_phoff, e.e_phentsize, e.e_phnum, e.phdrs
    loads = [p for p in phdrs if p[0] == PT_LOAD]
    yes = lambda c: "yes" if c else "no"
    signed = lambda v: "-0x%x" % -v if v < 0 else "0x%x" % v
    if not loads:
        print("e_phoff=0x%x e_phnum=%d no PT_LOAD" % (phoff, phnum))
        return 1
    first, last = loads[0], loads[-1]
    print("e_phoff=0x%x e_phnum=%d in-last-load=%s at-start=%s"
          % (phoff, phnum, yes(last[2] <= phoff and
                              phoff + phnum * phentsize <= last[2] + last[5]),
             yes(phoff == last[2])))
    print("first PT_LOAD offset=0x%x vaddr=0x%x vaddr-offset=%s"
          % (first[2], first[3], signed(first[3] - first[2])))
    flags = "".join(c for c, bit in (("R", 4), ("W", 2), ("E", 1)) if last[1] & bit)
    # GNU strip/objcopy lay a PT_LOAD that starts with the program header
    # table out again at the end of the loaded file bytes before it: the
    # addresses survive when its p_vaddr is congruent to that end (8-byte
    # aligned) modulo its p_align.
    loaded_end = max([p[2] + p[5] for p in loads[:-1] if p[5]] or [0])
    print("last PT_LOAD offset=0x%x vaddr=0x%x filesz=0x%x memsz=0x%x flags=%s "
          "align=0x%x vaddr-offset=%s gnu-strip-keeps=%s"
          % (last[2], last[3], last[5], last[6], flags, last[7],
             signed(last[3] - last[2]),
             yes(last[7] and (last[3] - (loaded_end & ~7)) % last[7] == 0)))
    print("loads ascending=%s last-above-all=%s"
          % (yes(all(a[3] < b[3] for a, b in zip(loads, loads[1:]))),
             yes(all(p[3] + p[6] <= last[3] for p in loads[:-1]))))
    for p in phdrs:
        if p[0] != elffile.PT_PHDR:
            continue
        _, _, off, vaddr, paddr, filesz, memsz, _ = p
        print("PT_PHDR offset=0x%x vaddr=0x%x size=0x%x matches-e_phoff=%s "
              "in-last-load=%s"
              % (off, vaddr, filesz,
                 yes(off == phoff and filesz == memsz == phnum * phentsize),
                 yes(last[2] <= off and off + filesz <= last[2] + last[5] and
                     vaddr - off == last[3] - last[2])))
    return 0


def cmd_memory(args):
    """The memory image FILE asks for: each PT_LOAD's and PT_PHDR's address,
    size and flags, in program header order (no file offsets)."""
    with open(args.file, "rb") as f:
        e = elffile.File(f.read())
    for p in e.phdrs:
        if p[0] == PT_LOAD:
            print("PT_LOAD vaddr=0x%x memsz=0x%x flags=0x%x align=0x%x"
                  % (p[3], p[6], p[1], p[7]))
        elif p[0] == elffile.PT_PHDR:
            print("PT_PHDR vaddr=0x%x memsz=0x%x" % (p[3], p[6]))
    return 0


def cmd_extract(args):
    """Writes the entry ID of the plain bundle at OFFSET of FILE to OUT."""
    with open(args.file, "rb") as f:
        data = f.read()
    fmt, _, entries, _ = bundle_info(data, args.offset)
    if fmt != "bundle":
        sys.exit("fatbin.py: %s: no plain bundle at offset %d" % (args.file, args.offset))
    for ident, eoff, esize in entries:
        if ident == args.id:
            with open(args.out, "wb") as f:
                f.write(data[args.offset + eoff:args.offset + eoff + esize])
            return 0
    sys.exit("fatbin.py: %s: no entry '%s'" % (args.file, args.id))


def data_bytes(fd, begin, end):
    """How many bytes of [begin, end) of the open file fd are data, not
    holes (SEEK_DATA/SEEK_HOLE; a file system without holes: all of them)."""
    n, pos = 0, begin
    while pos < end:
        try:
            pos = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError:  # ENXIO: a hole to the end of the file
            break
        if pos >= end:
            break
        hole = min(os.lseek(fd, pos, os.SEEK_HOLE), end)
        n += hole - pos
        pos = hole
    return n


def cmd_disk(args):
    """What FILE takes on disk: its apparent size, the bytes its blocks hold
    (st_blocks, as du counts), and for each SECTION how many of its file
    bytes are data rather than holes, and whether its bytes are all zeros."""
    st = os.stat(args.file)
    print("size=%d allocated=%d" % (st.st_size, st.st_blocks * 512))
    with open(args.file, "rb") as f:
        e = elffile.File(f.read())
        for name in args.sections:
            s = e.section(name)
            if s is None:
                print("%s: none" % name)
                continue
            begin, end = s["offset"], s["offset"] + s["size"]
            zeros = not any(e.data[begin:end])
            print("%s: size=0x%x holes=0x%x zeros=%s"
                  % (name, s["size"], s["size"] - data_bytes(f.fileno(), begin, end),
                     "yes" if zeros else "no"))
    return 0


def cmd_corrupt(args):
    """Writes a copy of FILE with wrapper 0 or its bundle broken the way a
    faulty rewrite could break it, to show the fake runtime notices."""
    elf = Elf(args.file)
    data = bytearray(elf.data)
    w = wrappers(elf)[0]
    seg = elf.section(".hipFatBinSegment")
    woff = seg["offset"] + (w["vaddr"] - seg["addr"])
    if args.kind == "magic":
        struct.pack_into("<I", data, woff, 0x46504948)  # the bytes reversed
    elif args.kind == "version":
        struct.pack_into("<I", data, woff + 4, 2)
    elif args.kind == "pointer+16":
        # Move the pointer 16 bytes into the bundle, wherever its value lives.
        rela, _ = elf.dynamic_relocations()
        slot = w["vaddr"] + 8
        done = False
        for s in elf.sections:
            if s["type"] == SHT_RELA and s["flags"] & elffile.SHF_ALLOC:
                for r in elf.rela(s):
                    if r["offset"] == slot:
                        elffile.put(data, r["entry"] + elffile.RELA["r_addend"][0], "q",
                                    r["addend"] + 16)
                        done = True
        if not done or w["inplace"]:
            struct.pack_into("<Q", data, woff + 8, w["inplace"] + 16)
    elif args.kind == "entry-size":
        # Make the last entry of a plain bundle end 1 MiB later.
        fmt, size, entries, _ = bundle_info(elf.data, w["offset"])
        pos = w["offset"] + 32
        for i, (ident, _, _) in enumerate(entries):
            if i == len(entries) - 1:
                (esize,) = struct.unpack_from("<Q", data, pos + 8)
                struct.pack_into("<Q", data, pos + 8, esize + (1 << 20))
            pos += 24 + len(ident.encode())
    with open(args.out, "wb") as f:
        f.write(bytes(data))
    os.chmod(args.out, 0o755)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llvm-bin", default=LLVM_BIN)
    ap.add_argument("--cache", help="keep the helper programs here between runs")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("variant", choices=sorted(VARIANTS))
    b.add_argument("outdir")
    w = sub.add_parser("wrappers")
    w.add_argument("file")
    bu = sub.add_parser("bundle")
    bu.add_argument("file")
    bu.add_argument("offset", nargs="?", type=lambda s: int(s, 0), default=0)
    x = sub.add_parser("extract")
    x.add_argument("file")
    x.add_argument("id")
    x.add_argument("out")
    x.add_argument("offset", nargs="?", type=lambda v: int(v, 0), default=0)
    k = sub.add_parser("corrupt")
    k.add_argument("file")
    k.add_argument("out")
    k.add_argument("kind", choices=["magic", "version", "pointer+16", "entry-size"])
    sg = sub.add_parser("segments")
    sg.add_argument("file")
    mm = sub.add_parser("memory")
    mm.add_argument("file")
    dk = sub.add_parser("disk")
    dk.add_argument("file")
    dk.add_argument("sections", nargs="*")
    c = sub.add_parser("check-capture")
    c.add_argument("dumpdir")
    c.add_argument("files", nargs="+")
    args = ap.parse_args()
    if args.cmd == "build":
        builder = Builder(args.llvm_bin, args.outdir, args.cache)
        VARIANTS[args.variant](builder)
        for p in dict.fromkeys(builder.built):
            print("built %s" % os.path.relpath(p, builder.out))
        return 0
    if args.cmd == "wrappers":
        return cmd_wrappers(args)
    if args.cmd == "bundle":
        return cmd_bundle(args)
    if args.cmd == "disk":
        return cmd_disk(args)
    if args.cmd == "corrupt":
        return cmd_corrupt(args)
    if args.cmd == "extract":
        return cmd_extract(args)
    if args.cmd == "segments":
        return cmd_segments(args)
    if args.cmd == "memory":
        return cmd_memory(args)
    return cmd_check_capture(args)


if __name__ == "__main__":
    sys.exit(main() or 0)
