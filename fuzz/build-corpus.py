#!/usr/bin/env python3
"""Builds the seed corpus of a fuzz target into a directory (never committed).

--kind code (hotswap-fuzz, the default) seeds:
  * every ELF YAML fixture under test/ that yaml2obj accepts as is: *.yaml
    files, and the parts of split-file tests;
  * real clang-22 code objects of test/Inputs/two-kernels.cl for a few
    targets (relocatable .o and linked .so, code object v4, v5 and the default v6, gfx90a and
    gfx1250 with kernarg preload);
  * each linked object after `trampoline,stub-syms` (when --hotswap-opt is
    given), so the fuzzer also starts from objects that already carry stubs.

--kind bundle (hotswap-fuzz-bundle) seeds: the well-formed bundles of
test/Malformed (test/Malformed/Inputs/malformed.py base: a plain bundle of
two yaml2obj code objects, zstd CCOB v2 and v3 from clang-offload-bundler,
zlib CCOB v2 and v3), small plain bundles of one code object (16-byte
aligned, with and without the empty host entry) and their zlib CCOBs, and
each after `trampoline,stub-syms` (with --hotswap-opt).

The bundle seeds also hold decompression bombs (bundle.py bomb: random
streams claiming 4 GiB, zstd and zlib streams of zeros claiming as much,
less or more than they hold, with and without zstd's content size), and a
bundle of 301 entries, plain and as a zlib CCOB.

--kind host (hotswap-fuzz-host) seeds: test/Malformed's host library
(Inputs/host.yaml) around each of those bundles (one bomb), a library of
300 wrappers linked by ld.lld, one of 201 wrappers each pointing at a bundle
of its own, and each rewritten.

--kind restore (hotswap-fuzz-restore) seeds are edit scripts (see the
target: byte 0 picks the rewritten object, then 6 bytes an edit): the empty
script (the record untouched), each fixed field of the record (version,
runs, original size, both digests, ranges, checksum) and the first run and
range entries xored, set to 0 and to all ones, the file truncated inside and
after the record, bytes appended, and 64 random scripts (fixed seed).

--kind swap (hotswap-fuzz-swap) seeds are replacement FILEs for the seed
object (test/Inputs/gfx90a-two-kernels.yaml): that object itself and
after `trampoline,stub-syms`, rebuilds of test/Inputs/two-kernels.cl and
test/Passes/Inputs/swap-fixed.cl for gfx90a (relocatable and linked, code
object v4, v5 and v6, kernarg preload), and code objects for other targets.

Usage: build-corpus.py OUTDIR [--kind code|bundle|host|restore|swap]
                       [--hotswap-opt PATH]
                       [--llvm-bin DIR]
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_LEN = 64 * 1024

# (tag, -mcpu, extra clang flags)
TARGETS = [
    ("gfx803", "gfx803", []),
    ("gfx803-g", "gfx803", ["-g"]),
    ("gfx90a", "gfx90a", []),
    ("gfx90a-preload", "gfx90a", ["-mllvm", "-amdgpu-kernarg-preload-count=2"]),
    ("gfx1100", "gfx1100", []),
    ("gfx1100-cov4", "gfx1100", ["-mcode-object-version=4"]),
    ("gfx1250", "gfx1250", []),
    ("gfx1250-preload", "gfx1250", ["-mllvm", "-amdgpu-kernarg-preload-count=2"]),
    ("gfx1250-cov5", "gfx1250", ["-mcode-object-version=5"]),
]


def add_seed(outdir, data, stats):
    if len(data) > MAX_LEN:
        stats["too_big"] += 1
        return
    name = hashlib.sha1(data).hexdigest()
    path = os.path.join(outdir, name)
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(data)
        stats["seeds"] += 1


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def yaml_seeds(outdir, bin_dir, tmp, stats):
    yaml2obj = os.path.join(bin_dir, "yaml2obj")
    split_file = os.path.join(bin_dir, "split-file")
    candidates = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "test")):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            try:
                text = open(path, encoding="utf-8", errors="replace").read()
            except OSError:
                continue
            if "--- !ELF" not in text:
                continue
            if "\n#--- " in text or text.startswith("#--- "):
                part_dir = os.path.join(tmp, "split", hashlib.sha1(path.encode()).hexdigest())
                if run([split_file, path, part_dir]).returncode == 0:
                    for p in sorted(os.listdir(part_dir)):
                        candidates.append(os.path.join(part_dir, p))
            else:
                candidates.append(path)
    for c in candidates:
        r = run([yaml2obj, c, "-o", "-"])
        if r.returncode == 0 and r.stdout:
            add_seed(outdir, r.stdout, stats)
            stats["yaml"] += 1
        else:
            stats["yaml_skipped"] += 1  # needs -D macros, or is meant to fail


def clang_seeds(outdir, bin_dir, tool, tmp, stats):
    clang = os.path.join(bin_dir, "clang")
    lld = os.path.join(bin_dir, "ld.lld")
    src = os.path.join(ROOT, "test", "Inputs", "two-kernels.cl")
    for tag, cpu, extra in TARGETS:
        o = os.path.join(tmp, tag + ".o")
        so = os.path.join(tmp, tag + ".so")
        r = run([clang, "--target=amdgcn-amd-amdhsa", "-mcpu=" + cpu, "-nogpulib",
                 "-O2", "-c", src, "-o", o] + extra)
        if r.returncode != 0:
            sys.stderr.write("build-corpus: clang failed for %s:\n%s" % (tag, r.stderr.decode()))
            stats["clang_failed"] += 1
            continue
        if run([lld, "-shared", o, "-o", so]).returncode != 0:
            stats["clang_failed"] += 1
            continue
        for p in (o, so):
            add_seed(outdir, open(p, "rb").read(), stats)
            stats["clang"] += 1
        if tool:
            out = os.path.join(tmp, tag + ".stubbed.so")
            if run([tool, "-passes=trampoline,stub-syms", so, "-o", out]).returncode == 0:
                add_seed(outdir, open(out, "rb").read(), stats)
                stats["stubbed"] += 1


def load_module(name, path):
    import importlib.util
    sys.dont_write_bytecode = True  # keep the source tree clean
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def container_seeds(outdir, kind, bin_dir, tool, tmp, stats):
    """Bundles (kind "bundle") or host libraries around them ("host")."""
    malformed = load_module("malformed", os.path.join(
        ROOT, "test", "Malformed", "Inputs", "malformed.py"))
    bundle = malformed.load_bundle_py()
    base = os.path.join(tmp, "base")
    malformed.base(bin_dir, base)
    p = lambda name: os.path.join(base, name)
    bundles = [p(n) for n in ("plain.hipfb", "zstd-v2.hipfb", "zstd-v3.hipfb",
                              "zlib-v2.hipfb", "zlib-v3.hipfb")]
    # Small ones: one code object, 16-byte aligned, with and without the
    # host entry; and their zlib CCOBs.
    co = open(p("gfx900.co"), "rb").read()
    for name, entries in (("one.hipfb", [(malformed.DEVICE_IDS[0].encode(), co)]),
                          ("host-one.hipfb", [(malformed.HOST_ID.encode(), b""),
                                              (malformed.DEVICE_IDS[0].encode(), co)])):
        with open(p(name), "wb") as f:
            f.write(bundle.build(entries, 16))
        bundles.append(p(name))
        for v in (2, 3):
            z = p("zlib-v%d-%s" % (v, name))
            if run([sys.executable, os.path.join(ROOT, "test", "Bundle", "Inputs", "bundle.py"),
                    "compress", p(name), z, "--version", str(v)]).returncode == 0:
                bundles.append(z)
    # Decompression bombs (bundle.py bomb): random bytes claiming more than
    # the ratio allows, and real zstd/zlib streams of zeros whose header
    # claims as much, less or more than they hold (with and without the
    # frame's content size, and with a frame that claims more than its raw
    # blocks hold).
    bundle_py = os.path.join(ROOT, "test", "Bundle", "Inputs", "bundle.py")
    for name, args in (
            ("bomb-random", ["--claim", "0x100000000", "--random", "4096"]),
            ("bomb-random-small", ["--claim", "0x10000", "--random", "512"]),
            ("bomb-zstd", ["--claim", "0x100000", "--zstd-zeros", "0x100000"]),
            ("bomb-zstd-more", ["--claim", "0x1000", "--zstd-zeros", "0x100000"]),
            ("bomb-zstd-unsized", ["--claim", "0x1000", "--zstd-zeros", "0x100000",
                                   "--no-content-size"]),
            ("bomb-zstd-huge", ["--claim", "0x100000000", "--zstd-zeros", "0x100000"]),
            ("bomb-zstd-frame-lies", ["--claim", "0x1000000", "--zstd-zeros",
                                      "0x4000", "--raw-blocks",
                                      "--frame-size", "0x1000000"]),
            ("bomb-zlib", ["--claim", "0x1000", "--zlib-zeros", "0x100000"])):
        if kind == "host" and name != "bomb-zstd-more":
            continue  # one is enough inside a host
        if run([sys.executable, bundle_py, "bomb", p(name)] + args).returncode == 0:
            bundles.append(p(name))
    # Many entries (Reliability/Inputs/many-entries.py): 300 OpenMP entries
    # before the code object, plain and as a zlib CCOB.
    gen = os.path.join(ROOT, "test", "Reliability", "Inputs", "many-entries.py")
    if kind == "bundle":
        for name, extra in (("many-entries.hipfb", []),
                            ("many-entries.ccob", ["--zlib-ccob"])):
            if run([sys.executable, gen, "others", "300", p("gfx900.co"),
                    p(name)] + extra).returncode == 0:
                bundles.append(p(name))
    inputs = bundles
    if kind == "host":
        inputs = []
        for b in bundles:
            h = b + ".so"
            malformed.host(bin_dir, b, h, [])
            inputs.append(h)
        # Many wrappers (all pointing at one bundle, each through its own
        # relocation), as lld links them.
        gen = os.path.join(ROOT, "test", "Reliability", "Inputs", "many-wrappers.py")
        asm, obj, lib = p("many.s"), p("many.o"), p("many.so")
        with open(asm, "w") as f:
            r = subprocess.run([sys.executable, gen, "300", p("one.hipfb")], stdout=f)
        if (r.returncode == 0 and
                run([os.path.join(bin_dir, "llvm-mc"), "-triple=x86_64-linux-gnu",
                     "-filetype=obj", asm, "-o", obj]).returncode == 0 and
                run([os.path.join(bin_dir, "ld.lld"), "-shared", obj, "-o", lib]).returncode == 0):
            inputs.append(lib)
        # Many bundles: the code object's and 200 of a host entry alone,
        # each behind a wrapper of its own.
        gen = os.path.join(ROOT, "test", "Reliability", "Inputs", "many-bundles.py")
        lone = p("host-alone.hipfb")
        with open(lone, "wb") as f:
            f.write(bundle.build([(malformed.HOST_ID.encode(), b"")], 16))
        asm, obj, lib = p("bundles.s"), p("bundles.o"), p("bundles.so")
        with open(asm, "w") as f:
            r = subprocess.run([sys.executable, gen, "200", p("one.hipfb"), lone],
                               stdout=f)
        if (r.returncode == 0 and
                run([os.path.join(bin_dir, "llvm-mc"), "-triple=x86_64-linux-gnu",
                     "-filetype=obj", asm, "-o", obj]).returncode == 0 and
                run([os.path.join(bin_dir, "ld.lld"), "-shared", obj, "-o", lib]).returncode == 0):
            inputs.append(lib)
    for i in inputs:
        add_seed(outdir, open(i, "rb").read(), stats)
        stats["containers"] += 1
        if tool:
            out = i + ".stubbed"
            if run([tool, "-passes=trampoline,stub-syms", i, "-o", out]).returncode == 0:
                add_seed(outdir, open(out, "rb").read(), stats)
                stats["stubbed"] += 1


# Offsets in the provenance section: the note header (12 bytes) and its
# owner "HOTSWAP" with its NUL (8), then the descriptor (ProvenanceRecord.h).
RECORD_FIELDS = [(20, 4), (24, 4), (28, 8), (36, 32), (68, 32), (100, 8), (108, 8),
                 (116, 4), (120, 8)]


def restore_seeds(outdir, stats):
    import random
    import struct

    def edit(op, where, value):
        return struct.pack("<BIB", op, where, value)

    def add(script):
        add_seed(outdir, script, stats)
        stats["scripts"] += 1

    for base in (0, 1):
        b = bytes([base])
        add(b)
        for off, size in RECORD_FIELDS:
            for i in range(size):
                add(b + edit(1 | 1 << 2, off + i, 0xff))  # xor, fixed fields
            add(b + b"".join(edit(1, off + i, 0) for i in range(size)))  # zero
            add(b + b"".join(edit(1, off + i, 0xff) for i in range(size)))  # ones
            if size == 8:
                for v in range(16):
                    add(b + edit(1 | 3 << 2, off, v))  # interesting u64
        for where in (0, 8, 200, 0x7fffffff):
            add(b + edit(0 | 4 << 2, where, 0))  # truncate inside the record
        add(b + edit(2 | 5 << 2, 0, 7))  # bytes appended
        add(b + edit(0 | 7 << 2, 3, 0))  # a byte of the record deleted
        add(b + edit(0 | 6 << 2, 150, 0x41))  # a byte inserted
    rng = random.Random(43)
    for _ in range(64):
        n = rng.randint(1, 6)
        add(bytes([rng.randint(0, 1)]) + b"".join(
            edit(rng.randint(0, 255), rng.randint(0, 0xffffffff), rng.randint(0, 255))
            for _ in range(n)))


SWAP_BUILDS = [
    ("two-kernels", "test/Inputs/two-kernels.cl", "gfx90a", []),
    ("two-kernels-cov4", "test/Inputs/two-kernels.cl", "gfx90a", ["-mcode-object-version=4"]),
    ("two-kernels-cov5", "test/Inputs/two-kernels.cl", "gfx90a", ["-mcode-object-version=5"]),
    ("swap-fixed", "test/Passes/Inputs/swap-fixed.cl", "gfx90a", []),
    ("swap-fixed-preload", "test/Passes/Inputs/swap-fixed.cl", "gfx90a",
     ["-mllvm", "-amdgpu-kernarg-preload-count=2"]),
    ("swap-fixed-gfx1100", "test/Passes/Inputs/swap-fixed.cl", "gfx1100", []),
    ("two-kernels-gfx908", "test/Inputs/two-kernels.cl", "gfx908", []),
]


def swap_seeds(outdir, bin_dir, tool, tmp, stats):
    seed = os.path.join(tmp, "seed.co")
    if run([os.path.join(bin_dir, "yaml2obj"),
            os.path.join(ROOT, "test", "Inputs", "gfx90a-two-kernels.yaml"),
            "-o", seed]).returncode == 0:
        add_seed(outdir, open(seed, "rb").read(), stats)
        stats["clang"] += 1
        if tool:
            out = seed + ".stubbed"
            if run([tool, "-passes=trampoline,stub-syms", seed, "-o", out]).returncode == 0:
                add_seed(outdir, open(out, "rb").read(), stats)
                stats["stubbed"] += 1
    else:
        stats["clang_failed"] += 1
    for tag, src, cpu, extra in SWAP_BUILDS:
        o = os.path.join(tmp, tag + ".o")
        so = os.path.join(tmp, tag + ".so")
        if run([os.path.join(bin_dir, "clang"), "--target=amdgcn-amd-amdhsa", "-mcpu=" + cpu,
                "-nogpulib", "-O2", "-c", os.path.join(ROOT, src), "-o", o] + extra
               ).returncode != 0 or run([os.path.join(bin_dir, "ld.lld"), "-shared", o,
                                         "-o", so]).returncode != 0:
            stats["clang_failed"] += 1
            continue
        for p in (o, so):
            add_seed(outdir, open(p, "rb").read(), stats)
            stats["clang"] += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--kind", choices=["code", "bundle", "host", "restore", "swap"], default="code")
    ap.add_argument("--hotswap-opt", default=None)
    ap.add_argument("--llvm-bin", default="/usr/lib/llvm-22/bin")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    stats = dict(seeds=0, yaml=0, yaml_skipped=0, clang=0, clang_failed=0, stubbed=0, too_big=0,
                 containers=0, scripts=0)
    tmp = tempfile.mkdtemp(prefix="hotswap-corpus-")
    try:
        if args.kind == "restore":
            restore_seeds(args.outdir, stats)
        elif args.kind == "swap":
            swap_seeds(args.outdir, args.llvm_bin, args.hotswap_opt, tmp, stats)
        elif args.kind == "code":
            yaml_seeds(args.outdir, args.llvm_bin, tmp, stats)
            clang_seeds(args.outdir, args.llvm_bin, args.hotswap_opt, tmp, stats)
        else:
            container_seeds(args.outdir, args.kind, args.llvm_bin, args.hotswap_opt, tmp,
                            stats)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.kind == "restore":
        print("build-corpus: %(seeds)d new seeds (%(scripts)d edit scripts)" % stats)
        return 0 if stats["seeds"] else 1
    if args.kind == "swap":
        print("build-corpus: %(seeds)d new seeds (code objects %(clang)d, clang failures "
              "%(clang_failed)d, with stubs %(stubbed)d)" % stats)
        return 1 if stats["clang_failed"] else 0
    if args.kind != "code":
        print("build-corpus: %(seeds)d new seeds (%(containers)d inputs, "
              "%(stubbed)d rewritten, over 64 KiB %(too_big)d)" % stats)
        return 0 if stats["seeds"] else 1
    print("build-corpus: %(seeds)d new seeds (yaml %(yaml)d, skipped yaml %(yaml_skipped)d, "
          "clang objects %(clang)d, clang failures %(clang_failed)d, with stubs %(stubbed)d, "
          "over 64 KiB %(too_big)d)" % stats)
    return 1 if stats["clang_failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
