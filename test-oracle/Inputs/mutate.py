#!/usr/bin/env python3
"""Make a deliberately wrong copy of a rewritten code object (test-oracle).

The oracle suite shows it can fail by running mutants that must change the
output. This script edits the code a kernel's descriptor leads to (the entry
that run-kernel.py follows), so the edit lands in the rewritten code and not
in the original code the rewrite left in place.

  mutate.py IN OUT KERNEL --replace FIND:REPL
      replace the first 4-aligned occurrence of the hex bytes FIND at or after
      the kernel's entry (within its PT_LOAD) with REPL (same length)
  mutate.py IN OUT KERNEL --prepend-to-stub ENCODING_FILE
      the entry must be a short stub (s_branch followed by padding): put the
      instruction bytes that `llvm-mc -show-encoding` printed into
      ENCODING_FILE before the branch and retarget the branch to the same
      destination
"""

import argparse
import importlib.util
import os
import re
import struct
import sys

sys.dont_write_bytecode = True
_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "run_kernel", os.path.join(_here, "..", "..", "utils", "oracle", "run-kernel.py"))
run_kernel = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_kernel)

S_BRANCH = {0xBF82, 0xBFA0}          # SOPP s_branch: GFX9, GFX10+
PADDING = {0xBF800000, 0xBF9F0000}   # s_nop 0, s_code_end


def die(msg):
    print("mutate: error: %s" % msg, file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("kernel")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--replace", metavar="FIND:REPL")
    g.add_argument("--prepend-to-stub", metavar="ENCODING_FILE")
    opts = ap.parse_args()

    data = bytearray(open(opts.input, "rb").read())
    elf = run_kernel.Elf(bytes(data))
    kd = elf.find_symbol(opts.kernel + ".kd")
    if kd is None:
        die("no symbol %s.kd" % opts.kernel)
    load = [p for p in elf.phdrs if p["type"] == run_kernel.PT_LOAD
            and p["vaddr"] <= kd < p["vaddr"] + p["filesz"]]
    if not load:
        die("the descriptor is not in the file")
    off = load[0]["offset"] + kd - load[0]["vaddr"]
    entry = kd + struct.unpack_from("<q", data, off + 16)[0]
    seg = [p for p in elf.phdrs if p["type"] == run_kernel.PT_LOAD
           and p["vaddr"] <= entry < p["vaddr"] + p["filesz"]]
    if not seg:
        die("the entry 0x%x is not in the file" % entry)
    seg = seg[0]
    start = seg["offset"] + entry - seg["vaddr"]
    end = seg["offset"] + seg["filesz"]

    if opts.replace:
        find, _, repl = opts.replace.partition(":")
        find, repl = bytes.fromhex(find), bytes.fromhex(repl)
        if len(find) != len(repl) or not find:
            die("FIND and REPL must be non-empty and the same length")
        at = start
        while True:
            at = data.find(find, at, end)
            if at < 0:
                die("%s not found after the entry 0x%x" % (find.hex(), entry))
            if (at - start) % 4 == 0:
                break
            at += 1
        data[at:at + len(repl)] = repl
        print("replaced %s with %s at 0x%x (entry 0x%x)" % (find.hex(), repl.hex(),
                                                             seg["vaddr"] + at - seg["offset"], entry))
    else:
        text = open(opts.prepend_to_stub).read()
        enc = bytes(int(b, 16) for m in re.findall(r"encoding: \[([^\]]*)\]", text)
                    for b in m.split(","))
        if not enc or len(enc) % 4:
            die("no whole-dword encoding in %s" % opts.prepend_to_stub)
        word = struct.unpack_from("<I", data, start)[0]
        if word >> 16 not in S_BRANCH:
            die("the entry 0x%x is not an s_branch (0x%08x)" % (entry, word))
        n = len(enc) // 4
        for k in range(1, n + 1):
            if struct.unpack_from("<I", data, start + 4 * k)[0] not in PADDING:
                die("the stub has no room for %d more bytes" % len(enc))
        simm = (word & 0xFFFF) - (0x10000 if word & 0x8000 else 0)
        simm -= n
        if not -0x8000 <= simm < 0x8000:
            die("branch out of range")
        data[start:start + len(enc)] = enc
        struct.pack_into("<I", data, start + len(enc), (word & 0xFFFF0000) | (simm & 0xFFFF))
        print("stub at 0x%x: %d bytes inserted before the branch" % (entry, len(enc)))
    open(opts.output, "wb").write(bytes(data))


if __name__ == "__main__":
    main()
