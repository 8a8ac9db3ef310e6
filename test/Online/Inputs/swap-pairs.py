#!/usr/bin/env python3
"""Swaps between the code objects of one HIP library (swap-rocsparse.test).

Takes the TARGET entry of every bundle of LIB (found by fatbin.py wrappers),
finds the pairs of code objects that define kernels of the same name (one
release builds a template instance in several translation units), and for
each pair runs hotswap-opt -passes='swap-kernels<with=A;skip-incompatible>,
verify' on B: every kernel they share at once; then one kernel at a time for
the first SINGLES of them. Every output must verify; every --check-th one
must also be a fixed point of the pipeline and restore to B byte for byte.
With --every N only every N-th pair is swapped (a sample spread over all of
them; the CI default of swap-rocsparse.test), 1 for the whole sweep.
Prints one summary line, and the first swap an error or a kernel left
names. The first pair is written to OUTDIR/file.co and OUTDIR/object.co.
"""
import argparse
import collections
import re
import struct
import subprocess
import sys
import os


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, **kw)


def bundle_entry(f, off, ident):
    """(offset, size) of entry IDENT of the plain offload bundle at OFF of
    the open file F, reading its header only; None if it has none."""
    f.seek(off)
    head = f.read(32)
    if head[:24] != b"__CLANG_OFFLOAD_BUNDLE__":
        return None
    (count,) = struct.unpack("<Q", head[24:32])
    for _ in range(count):
        eoff, esize, idlen = struct.unpack("<QQQ", f.read(24))
        if f.read(idlen).decode("utf-8", "replace") == ident:
            return eoff, esize
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hotswap", required=True)
    ap.add_argument("--readelf", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--singles", type=int, default=None,
                    help="pairs also swapped one kernel at a time "
                    "(default 40, 40/N with --every N)")
    ap.add_argument("--check", type=int, default=20)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("lib")
    ap.add_argument("outdir")
    ap.add_argument("fatbin", nargs=argparse.REMAINDER,
                    help="after --: the fatbin.py command line")
    a = ap.parse_args()
    if a.singles is None:
        a.singles = max(1, 40 // a.every)
    if a.fatbin[:1] == ["--"]:
        a.fatbin = a.fatbin[1:]

    w = run(a.fatbin + ["wrappers", a.lib])
    if w.returncode:
        sys.exit("swap-pairs.py: fatbin.py wrappers failed: " + w.stderr)
    offsets = sorted({int(m.group(1), 16) for m in
                      re.finditer(r"bundle vaddr=0x[0-9a-f]+ offset=0x([0-9a-f]+)", w.stdout)})
    objs = []
    with open(a.lib, "rb") as lib:
        for off in offsets:
            entry = bundle_entry(lib, off, a.target)
            if entry is None:
                continue
            out = os.path.join(a.outdir, "b%x.co" % off)
            lib.seek(off + entry[0])
            with open(out, "wb") as f:
                f.write(lib.read(entry[1]))
            objs.append(out)
    names = {}
    for o in objs:
        notes = run([a.readelf, "--notes", o]).stdout
        names[o] = {l.split(":", 1)[1].strip() for l in notes.splitlines()
                    if l.strip().startswith(".name:")}
    by = collections.defaultdict(list)
    for o in objs:
        for n in sorted(names[o]):
            by[n].append(o)
    pairs = collections.OrderedDict()
    for n in sorted(by):
        for f in by[n]:
            for o in by[n]:
                if f != o:
                    pairs.setdefault((f, o), []).append(n)
    if not pairs:
        sys.exit("swap-pairs.py: no two %s code objects share a kernel" % a.target)
    first = next(iter(pairs))
    for src, dst in zip(first, ("file.co", "object.co")):
        with open(src, "rb") as i, open(os.path.join(a.outdir, dst), "wb") as o:
            o.write(i.read())

    c = collections.Counter()
    problems = []
    out = os.path.join(a.outdir, "out.co")

    def swap(f, o, only, check):
        p = "swap-kernels<with=%s;%sskip-incompatible>,verify" % (
            f, "only=^%s$;" % re.escape(only) if only else "")
        r = run([a.hotswap, "-passes=" + p, "-stats", o, "-o", out])
        if r.returncode:
            problems.append(r.stderr.strip().splitlines()[-1])
            c["failed"] += 1
            return
        m = re.search(r"(\d+) swap-kernels - kernels swapped", r.stderr)
        c["swapped"] += int(m.group(1)) if m else 0
        left = re.findall(r"warning: (.*cannot be swapped.*)", r.stderr)
        c["left"] += len(left)
        problems.extend(left)
        if check:
            again = os.path.join(a.outdir, "again.co")
            back = os.path.join(a.outdir, "back.co")
            r2 = run([a.hotswap, "-passes=" + p, out, "-o", again])
            r3 = run([a.hotswap, "-passes=restore", out, "-o", back])
            ok = (r2.returncode == 0 and r3.returncode == 0 and
                  open(out, "rb").read() == open(again, "rb").read() and
                  open(back, "rb").read() == open(o, "rb").read())
            c["checked"] += 1
            c["checked-ok"] += ok
            if not ok:
                problems.append("%s into %s: not idempotent or not restored" % (f, o))

    singles = 0
    for k, ((f, o), shared) in enumerate(pairs.items()):
        c["pairs"] += 1
        c["shared"] += len(shared)
        if k % a.every:
            continue
        c["run"] += 1
        swap(f, o, None, (k // a.every) % a.check == 0)
        if singles < a.singles:
            singles += 1
            c["single-runs"] += 1
            swap(f, o, shared[0], True)
    print("%s: %d code objects, %d pairs sharing %d kernels; %d pairs run: "
          "swapped %d, left %d, failed runs %d; checked %d: %d not idempotent or "
          "not restored; single-kernel runs %d"
          % (a.target, len(objs), c["pairs"], c["shared"], c["run"], c["swapped"], c["left"],
             c["failed"], c["checked"], c["checked"] - c["checked-ok"],
             c["single-runs"]))
    for p in problems[:1]:
        print("first problem: " + p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
