#!/usr/bin/env python3
"""Runs two hotswap-opt binaries over a corpus and compares what they do.

For every AMDGPU code object found under the given directories (files
starting with an ELF header whose e_machine is EM_AMDGPU, e.g. the inputs and
outputs the lit suite left under build/test, and the real-world objects
utils/real-world.py extracted) and every pipeline of PIPELINES, runs
  BIN -passes=PIPELINE FILE -o OUT
with both binaries and compares exit status, stdout, stderr (with the
binary's path blanked) and the output bytes. Prints each difference and a
closing line "N runs, N identical, N different".

A redesign that must not change behaviour is checked with
  utils/compare-outputs.py --old OLD/hotswap-opt --new build/bin/hotswap-opt \\
      build/test build/real-world
and, for the containers (offload bundles, CCOBs, HIP host binaries found
under the directories, e.g. the libraries real-world.py extracted), with
--containers, over CONTAINER_PIPELINES.

A change to decoded code (graphs, liveness, clones, counters) is checked
with --pipeline for each of its pipelines ('print<cfg;insns>',
'print<liveness>', 'verify-code', 'clone-kernels,verify',
'instrument,verify', ...) instead of the default list.

Usage: utils/compare-outputs.py --old BIN --new BIN [--jobs N]
           [--pipeline P]... DIR...
"""
import argparse
import concurrent.futures
import hashlib
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # keep the source tree clean
import elf  # noqa: E402  (utils/elf.py, next to this script)

PIPELINES = [
    "trampoline,stub-syms",
    "trampoline,stub-syms,realign-shdrs,verify",
    "synth-trampolines<form=long>,patch-descriptors,stub-syms,verify",
    "realign-shdrs",
    "verify",
    "print<kernels>",
]
CONTAINER_PIPELINES = [
    "trampoline,stub-syms",
    "trampoline,stub-syms,verify",
    "verify",
    "print<kernels>",
]
EXTRA_FLAGS = [[], ["--kernels-format=json", "-stats"]]


def is_code_object(path):
    try:
        with open(path, "rb") as f:
            h = f.read(20)
    except OSError:
        return False
    return elf.e_machine(h) == elf.EM_AMDGPU


def is_container(path):
    """An offload bundle, a CCOB, or an x86-64 ELF naming a HIP section."""
    try:
        with open(path, "rb") as f:
            h = f.read(64)
            if h.startswith(b"__CLANG_OFFLOAD_BUNDLE__") or h.startswith(b"CCOB"):
                return True
            if len(h) < 64 or elf.e_machine(h) != elf.EM_X86_64:
                return False
            f.seek(0)
            data = f.read()
    except OSError:
        return False
    return b".hipFatBinSegment\0" in data or b".hip_fatbin\0" in data


def corpus(dirs, containers=False):
    seen = {}
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in sorted(files):
                p = os.path.join(root, f)
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                if not (is_container(p) if containers else is_code_object(p)):
                    continue
                digest = hashlib.sha256(open(p, "rb").read()).hexdigest()
                seen.setdefault(digest, p)  # one run per distinct input
    return sorted(seen.values())


DROP = None  # --drop-lines: a regex of stdout and stderr lines to leave out


def run(binary, inp, pipeline, flags, tmp):
    out = os.path.join(tmp, "out")
    if os.path.exists(out):
        os.remove(out)
    r = subprocess.run([binary, "-passes=" + pipeline, inp, "-o", out] + flags,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    data = open(out, "rb").read() if os.path.exists(out) else None
    def norm(b):
        b = b.replace(binary.encode(), b"BIN")
        if DROP is not None:
            b = b"".join(l for l in b.splitlines(True) if not DROP.search(l))
        return b
    return (r.returncode, norm(r.stdout), norm(r.stderr),
            hashlib.sha256(data).hexdigest() if data is not None else None)


def compare(args_tuple):
    old, new, inp, pipeline, flags = args_tuple
    with tempfile.TemporaryDirectory() as tmp:
        a = run(old, inp, pipeline, flags, tmp)
        b = run(new, inp, pipeline, flags, tmp)
    return inp, pipeline, flags, a, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--containers", action="store_true",
                    help="compare bundles, CCOBs and HIP host binaries "
                         "instead of code objects")
    ap.add_argument("--drop-lines", metavar="REGEX",
                    help="leave out stdout and stderr lines that match (a "
                         "counter that a deliberate change added)")
    ap.add_argument("--pipeline", action="append", metavar="PIPELINE",
                    help="compare this pipeline instead of the default "
                         "list (repeatable), e.g. 'print<cfg;insns>' or "
                         "'instrument,verify' for the decoded-code passes")
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    global DROP
    if args.drop_lines:
        DROP = re.compile(args.drop_lines.encode())
    files = corpus(args.dirs, args.containers)
    pipelines = args.pipeline or (CONTAINER_PIPELINES if args.containers
                                  else PIPELINES)
    work = [(args.old, args.new, f, p, fl) for f in files for p in pipelines
            for fl in EXTRA_FLAGS]
    same = diff = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for inp, pipeline, flags, a, b in pool.map(compare, work):
            if a == b:
                same += 1
                continue
            diff += 1
            what = [n for n, x, y in zip(("exit status", "stdout", "stderr", "output"), a, b) if x != y]
            print("DIFF %s -passes=%s %s: %s" % (inp, pipeline, " ".join(flags), ", ".join(what)))
            if a[2] != b[2]:
                print("  old stderr: %s\n  new stderr: %s" % (a[2][:300], b[2][:300]))
    print("%d inputs; %d runs, %d identical, %d different" % (len(files), same + diff, same, diff))
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
