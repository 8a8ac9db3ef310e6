#!/usr/bin/env python3
"""Mutation test of what verify proves about inserted code: applies a
patch-insns rule (or another pipeline that inserts code: --pipeline
instrument) to a code object, flips single bits in the inserted code (with
place=site: in each site's slot, body and gateway), and, of
the mutants whose disassembly differs from the body's (the code says
something else), counts those verify rejects (a problem other than
provenance). Prints the figure and the first mutants that escaped.

  utils/patch-mutants.py --tool build/bin/hotswap-opt --mcpu gfx90a \\
      --rule 'match=^ds_read2_b32;where=replace;insert=RULE.s' OBJ \\
      [--bits-per-word 6] [--max 400] [--seed 1]
  utils/patch-mutants.py --tool build/bin/hotswap-opt --mcpu gfx90a \\
      --pipeline instrument OBJ

Not part of CI (one verify per mutant).
"""
import argparse
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import elf  # noqa: E402  (utils/elf.py: the records, checked)

LLVM = "/usr/lib/llvm-22/bin"


def sections(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
            for i in range(shnum)]
    strtab = hdrs[shstrndx][4]
    out = {}
    for h in hdrs:
        name = data[strtab + h[0]:data.index(b"\0", strtab + h[0])].decode()
        out[name] = (h[3], h[4], h[5])  # addr, offset, size
    return out


def disasm(mcpu, bs):
    p = subprocess.run([LLVM + "/llvm-mc", "--disassemble",
                        "-triple=amdgcn-amd-amdhsa", "-mcpu=" + mcpu],
                       input=" ".join("0x%02x" % x for x in bs),
                       capture_output=True, text=True)
    return p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--mcpu", required=True)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--rule")
    g.add_argument("--pipeline")
    ap.add_argument("--bits-per-word", type=int, default=6)
    ap.add_argument("--max", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("object")
    a = ap.parse_args()
    random.seed(a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        patched = os.path.join(tmp, "p.co")
        pipeline = a.pipeline or "patch-insns<%s>" % a.rule
        subprocess.run([a.tool, "-passes=" + pipeline, a.object,
                        "-o", patched], check=True, capture_output=True)
        data = open(patched, "rb").read()
        secs = sections(data)

        def offset(addr):  # the file offset of a loaded address
            for name, (saddr, soff, size) in secs.items():
                if saddr and saddr <= addr < saddr + size:
                    return soff + addr - saddr
            raise SystemExit("no section holds %#x" % addr)
        ranges = []
        if ".hotswap.clone.text" in secs:
            for r in elf.File(data).record_lines(".hotswap.clones"):
                c = int(r["clone"], 16)
                ranges += [(c + int(b, 16), c + int(e, 16))
                           for b, e in r["inserted"]]
        # In place (place=site): each site's slot, its whole body (the
        # waits, the instruction and the branch or long jump back too) and
        # its gateway.
        if ".hotswap.patches" in secs:
            for r in elf.File(data).record_lines(".hotswap.patches"):
                site = int(r["code"], 16) + int(r["site"], 16)
                body = int(r["body"], 16)
                ranges.append((site, site + len(r["orig"]) // 2))
                ranges.append((body, body + int(r["body_size"], 16)))
                if "gateway" in r:
                    gw = int(r["gateway"], 16)
                    ranges.append((gw, gw + int(r["gateway_size"], 16)))
        candidates = [(b, e, w, bit) for b, e in ranges
                      for w in range(0, e - b, 4)
                      for bit in random.sample(range(32), a.bits_per_word)]
        random.shuffle(candidates)
        candidates = candidates[:a.max]
        changed = rejected = 0
        escapes = []
        mutant = os.path.join(tmp, "m.co")
        for b, e, w, bit in candidates:
            at = offset(b)
            body = data[at:at + e - b]
            m = bytearray(body)
            m[w + bit // 8] ^= 1 << (bit % 8)
            before, after = disasm(a.mcpu, body), disasm(a.mcpu, m)
            if before == after:
                continue
            changed += 1
            full = bytearray(data)
            full[at:at + e - b] = m
            open(mutant, "wb").write(full)
            p = subprocess.run([a.tool, "--kernels-format=json",
                                "-passes=verify", mutant],
                               capture_output=True, text=True)
            out = p.stdout
            problems = (json.loads(out[out.index("{"):])["verify"]["problems"]
                        if "{" in out else [])
            if any(x.get("check") != "provenance" for x in problems):
                rejected += 1
            else:
                new = [l.strip() for l in after.split("\n")
                       if l.strip() and not l.startswith("\t.")]
                escapes.append("%#x+%d bit %d: %s" % (b, w, bit,
                                                       " | ".join(new)))
        print("%d ranges; %d mutants, %d change the code, %d rejected by "
              "verify (%.1f%%)" % (len(ranges), len(candidates), changed,
                                   rejected, 100.0 * rejected / max(changed, 1)))
        for x in escapes[:10]:
            print("escaped: " + x)
    return 0


if __name__ == "__main__":
    sys.exit(main())
