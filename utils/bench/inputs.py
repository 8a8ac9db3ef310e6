"""The benchmark's inputs: synthetic objects (gen.py), one clang-built
object, and the Debian packages' host libraries and code objects.
"""

import glob
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import elf  # noqa: E402  (utils/elf.py)

from common import HERE, LLVM, MCPU, log, sh


def synthetic(cache, name, n, body_words=0, debug_bytes=0, sgprs=0,
              numbered=True):
    """Generates, assembles and links a synthetic object (cached)."""
    so = os.path.join(cache, name + ".so")
    if os.path.exists(so):
        return so
    log("generating {} ({} kernels)".format(name, n))
    s = os.path.join(cache, name + ".s")
    o = os.path.join(cache, name + ".o")
    args = [sys.executable, os.path.join(HERE, "gen.py"), str(n), s,
            "--mcpu", MCPU]
    if body_words:
        args += ["--body-words", str(body_words)]
    if debug_bytes:
        args += ["--debug-bytes", str(debug_bytes)]
    if sgprs:
        args += ["--sgprs", str(sgprs)]
    if not numbered:
        args.append("--no-numbered-sgpr")
    sh(args)
    sh([LLVM + "/llvm-mc", "-triple=amdgcn-amd-amdhsa", "-mcpu=" + MCPU,
        "-filetype=obj", s, "-o", o])
    sh([LLVM + "/ld.lld", "-shared", o, "-o", so + ".tmp"])
    os.rename(so + ".tmp", so)
    os.unlink(s)
    os.unlink(o)
    check_layout(so, n)
    return so


def clang_object(cache, root):
    so = os.path.join(cache, "clang-two-kernels.so")
    if os.path.exists(so):
        return so
    log("compiling test/Inputs/two-kernels.cl with clang-22")
    o = os.path.join(cache, "clang-two-kernels.o")
    sh([LLVM + "/clang", "--target=amdgcn-amd-amdhsa", "-mcpu=" + MCPU,
        "-nogpulib", "-O2", "-c",
        os.path.join(root, "test", "Inputs", "two-kernels.cl"), "-o", o])
    sh([LLVM + "/ld.lld", "-shared", o, "-o", so])
    os.unlink(o)
    return so


def check_layout(so, n):
    """The generated object must look like a real one: every kernel has a
    .kd in .symtab and .dynsym, and there is an NT_AMDGPU_METADATA note."""
    def kd_count(dynamic):
        args = [LLVM + "/llvm-nm", "--defined-only"]
        if dynamic:
            args.append("-D")
        out = subprocess.run(args + [so], check=True, capture_output=True,
                             text=True).stdout
        return sum(1 for l in out.splitlines() if l.endswith(".kd"))
    notes = subprocess.run([LLVM + "/llvm-readelf", "--notes", so],
                           check=True, capture_output=True, text=True).stdout
    if kd_count(False) != n or kd_count(True) != n:
        raise SystemExit("{}: expected {} .kd symbols in .symtab and .dynsym"
                         .format(so, n))
    if "NT_AMDGPU_METADATA" not in notes:
        raise SystemExit("{}: no NT_AMDGPU_METADATA note".format(so))


def exec_bytes(path):
    """Bytes of the executable sections of an ELF64 file."""
    with open(path, "rb") as f:
        e = elf.File(f.read())
    return sum(s["size"] for s in e.sections
               if s["flags"] & elf.SHF_EXECINSTR and s["type"] != elf.SHT_NOBITS)


def real_world_module(root):
    spec = importlib.util.spec_from_file_location(
        "real_world", os.path.join(root, "utils", "real-world.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def package_dir(corpus, pkg):
    """CORPUS/PKG, or a CORPUS/*/ directory that holds root/PKG."""
    own = os.path.join(corpus, pkg)
    for d in [own] + sorted(glob.glob(os.path.join(corpus, "*"))):
        if os.path.isdir(os.path.join(d, "root", pkg)):
            return d
    return own


def corpus_package(root, corpus, pkg):
    """Downloads and extracts pkg if needed; returns (host libraries with
    offload bundles, device code objects), each a sorted list of paths."""
    rw = real_world_module(root)
    work = package_dir(corpus, pkg)
    log("package {}: {}".format(pkg, work))
    pkg_root = rw.fetch(pkg, work)
    hosts = []
    for h in sorted(rw.host_objects(pkg_root)):
        if any(True for _ in rw.bundles(h)):
            hosts.append(h)
    co = os.path.join(work, "co")
    if not glob.glob(os.path.join(co, "*.co")):
        log("extracting the code objects of {} into {}".format(pkg, co))
        tmp = co + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        seen = set()
        for h in hosts:
            with open(h, "rb") as fh:
                for ident, off, size in rw.bundles(h):
                    fh.seek(off)
                    blob = fh.read(size)
                    digest = hashlib.sha256(blob).hexdigest()[:16]
                    if digest in seen:
                        continue
                    seen.add(digest)
                    target = ident.split("--", 1)[-1]
                    name = "%s-%s.co" % (digest,
                                         re.sub(r"[^\w.+-]", "_", target))
                    with open(os.path.join(tmp, name), "wb") as out:
                        out.write(blob)
        if os.path.isdir(co):
            os.rmdir(co)  # empty
        os.rename(tmp, co)
    cos = sorted(glob.glob(os.path.join(co, "*.co")))
    return hosts, cos


def largest(cos, pattern):
    m = [c for c in cos if re.search(pattern, os.path.basename(c))]
    return max(m, key=os.path.getsize) if m else None


def target_of(co):
    return os.path.basename(co).split("-", 1)[1][:-3]
