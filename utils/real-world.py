#!/usr/bin/env python3
"""Runs hotswap-opt over every device code object of real HIP libraries.

Downloads Debian packages (default: librocrand1), finds every host ELF with
offload bundles, extracts each device code object (all bundles, also several
bundles back to back in one .hip_fatbin) through the offload URIs that
`llvm-readobj --offloading` prints, and for each object:
  * runs `-passes=trampoline,stub-syms,verify` (the verifier decodes and
    emulates every stub),
  * runs the same pipeline on the output and checks it is byte-identical,
  * checks that llvm-readelf reads the output without a warning,
  * runs `-passes=restore` on the output and checks that it gives back the
    extracted object byte for byte (the provenance record's undo).
Prints a table per target and a final "N passed, N failed" line.

Usage: utils/real-world.py [--tool PATH] [--work DIR] [--limit N] [--keep] [PKG ...]
"""
import argparse
import collections
import hashlib
import json
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when imported
import elf  # noqa: E402  (utils/elf.py)

LLVM_BIN = "/usr/lib/llvm-22/bin"


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def fetch(pkg, work):
    pkgdir = os.path.join(work, "pkgs")
    os.makedirs(pkgdir, exist_ok=True)
    debs = [f for f in os.listdir(pkgdir) if f.startswith(pkg + "_") and f.endswith(".deb")]
    if not debs:
        r = run(["apt-get", "download", pkg], cwd=pkgdir)
        if r.returncode != 0:
            sys.exit("cannot download %s: %s" % (pkg, r.stderr.decode(errors="replace")))
        debs = [f for f in os.listdir(pkgdir) if f.startswith(pkg + "_") and f.endswith(".deb")]
    root = os.path.join(work, "root", pkg)
    if not os.path.isdir(root):
        os.makedirs(root)
        subprocess.check_call(["dpkg-deb", "-x", os.path.join(pkgdir, sorted(debs)[-1]), root])
    return root


def host_objects(root):
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as fh:
                if fh.read(4) != elf.MAGIC:
                    continue
            yield p


URI = re.compile(r"^(\S+)\s+file://(.*)#offset=(\d+)&size=(\d+)\s*$")


def bundles(host):
    r = run([os.path.join(LLVM_BIN, "llvm-readobj"), "--offloading", host])
    for line in r.stdout.decode(errors="replace").splitlines():
        m = URI.match(line)
        if not m:
            continue
        ident, _, off, size = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
        if size == 0 or not ident.startswith(("hip", "openmp")) or "amdgcn" not in ident:
            continue
        yield ident, off, size


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--tool", default=os.path.join(here, "..", "build", "bin", "hotswap-opt"))
    ap.add_argument("--work", default=os.path.join(here, "..", "build", "real-world"))
    ap.add_argument("--limit", type=int, default=0, help="at most N code objects per package")
    ap.add_argument("--keep", action="store_true",
                    help="keep each extracted code object in WORK/co (for benchmarks and comparisons)")
    ap.add_argument("packages", nargs="*", default=["librocrand1"])
    args = ap.parse_args()
    tool = os.path.abspath(args.tool)
    work = os.path.abspath(args.work)
    cos = os.path.join(work, "co")
    os.makedirs(cos, exist_ok=True)

    rows = collections.OrderedDict()
    failures = []
    seen = set()
    total = 0
    t0 = time.time()
    for pkg in args.packages:
        root = fetch(pkg, work)
        count = 0
        for host in host_objects(root):
            with open(host, "rb") as fh:
                data = None
                for ident, off, size in bundles(host):
                    if args.limit and count >= args.limit:
                        break
                    fh.seek(off)
                    blob = fh.read(size)
                    digest = hashlib.sha256(blob).hexdigest()[:16]
                    if digest in seen:
                        continue
                    seen.add(digest)
                    count += 1
                    target = ident.split("--", 1)[-1]
                    name = os.path.join(cos, "%s-%s.co" % (digest, re.sub(r"[^\w.+-]", "_", target)))
                    with open(name, "wb") as out:
                        out.write(blob)
                    row = rows.setdefault(target, collections.Counter())
                    row["objects"] += 1
                    total += 1
                    what = "%s (%s, %s @%d)" % (os.path.basename(host), target, pkg, off)
                    out1, out2 = name + ".out", name + ".out2"
                    r = run([tool, "-passes=trampoline,stub-syms,verify", name, "-o", out1,
                             "-stats", "--kernels-format=json"])
                    if r.returncode != 0:
                        failures.append("%s: %s" % (what, r.stderr.decode(errors="replace").strip()))
                        row["failed"] += 1
                        continue
                    stats = {}
                    err = r.stderr.decode(errors="replace")
                    js = err[err.find("{"):] if "{" in err else "{}"
                    try:
                        stats = json.loads(js)
                    except ValueError:
                        pass
                    row["kernels"] += stats.get("synth-trampolines.kernels", 0)
                    row["stubs"] += stats.get("synth-trampolines.stubs", 0)
                    row["short"] += stats.get("synth-trampolines.short", 0)
                    row["vcc"] += stats.get("synth-trampolines.vcc", 0)
                    row["dual"] += stats.get("synth-trampolines.dual", 0)
                    row["granule+"] += stats.get("patch-descriptors.granule-raised", 0)
                    r2 = run([tool, "-passes=trampoline,stub-syms,verify", out1, "-o", out2])
                    if r2.returncode != 0 or open(out1, "rb").read() != open(out2, "rb").read():
                        failures.append("%s: second run is not byte-identical" % what)
                        row["failed"] += 1
                        continue
                    r3 = run([os.path.join(LLVM_BIN, "llvm-readelf"), "-h", "-l", "-S", "-s",
                              "--notes", out1])
                    if r3.returncode != 0 or b"warning" in r3.stderr:
                        failures.append("%s: llvm-readelf: %s" % (what, r3.stderr.decode().strip()))
                        row["failed"] += 1
                        continue
                    back = name + ".back"
                    r4 = run([tool, "-passes=restore", out1, "-o", back])
                    if r4.returncode != 0:
                        failures.append("%s: restore: %s" % (what, r4.stderr.decode(errors="replace").strip()))
                        row["failed"] += 1
                        continue
                    if open(back, "rb").read() != blob:
                        failures.append("%s: restore does not give back the original byte for byte" % what)
                        row["failed"] += 1
                        continue
                    os.remove(back)
                    os.remove(out2)
                    os.remove(out1)
                    if not args.keep:
                        os.remove(name)
    elapsed = time.time() - t0

    cols = ["objects", "kernels", "stubs", "short", "vcc", "dual", "granule+", "failed"]
    print("%-28s" % "target" + "".join("%9s" % c for c in cols))
    tot = collections.Counter()
    for target, row in rows.items():
        print("%-28s" % target + "".join("%9d" % row[c] for c in cols))
        tot.update(row)
    print("%-28s" % "total" + "".join("%9d" % tot[c] for c in cols))
    print("%.1f s for %d code objects" % (elapsed, total))
    for f in failures[:50]:
        print("FAIL:", f)
    print("%d passed, %d failed" % (total - len(failures), len(failures)))
    return 1 if failures or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
