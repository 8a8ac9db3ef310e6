#!/usr/bin/env python3
"""Checks print<cfg> and verify-code against the compiler's own view.

Usage: clang-cross-check.py --tool HOTSWAP_OPT --llvm-bin DIR --out DIR
                            SOURCE.cl TARGET[:FEATURES]...

For each target, SOURCE is compiled by clang to assembly, assembled with its
local labels kept (llvm-mc --save-temp-labels) and linked (ld.lld -shared
--discard-none), so every basic-block label clang emitted (.LBB*) is a
symbol of the code object. Then, independently of the graph builder:
  * every .LBB label inside a function is the first instruction of a block;
  * every branch llvm-objdump shows to such a label (from the instruction's
    address) is an edge of ours from the block that holds the branch to
    the block at the label;
  * every block of ours is reachable (or its finding says why), but for
    s_nop alignment padding;
  * with TARGET:preload (clang preloads kernargs), every kernel has its
    256-byte header window and a block start where firmware enters.
and verify-code must decode every byte, find nothing unreachable, explain
the registers live at every kernel's entry (set by the ABI, read before
any write, or at a call), keep every kernel within its metadata's
register counts, and find no read of a register a load may still be
writing (clang's waits are the independent view of the wait counters).
Prints "== TARGET" and one line per check, then "agree"
or "DISAGREE"; exits 1 on any disagreement.
"""
import argparse
import json
import os
import re
import subprocess
import sys


def check(tool, llvm_bin, obj, preload):
    """The label, branch and reachability checks of OBJECT: True if all hold."""
    out = subprocess.run([tool, "-passes=print<cfg>", "--kernels-format=json",
                          obj], check=True, capture_output=True,
                         text=True).stdout
    doc = json.loads(out)
    if isinstance(doc, list):
        doc = doc[0]
    cfg = doc["cfg"]
    fns = cfg["functions"]

    # Labels from the symbol table.
    syms = subprocess.run([os.path.join(llvm_bin, "llvm-nm"), "--defined-only",
                           obj], check=True, capture_output=True,
                          text=True).stdout
    labels = {}
    for line in syms.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].startswith(".LBB"):
            labels[parts[2]] = int(parts[0], 16)

    def function_of(addr):
        for f in fns:
            if f["begin"] <= addr < f["end"]:
                return f
        return None

    starts = {}
    block_of = {}
    for f in fns:
        for b in f["blocks"]:
            starts[b["begin"]] = (f, b)
        for b in f["blocks"]:
            block_of[(f["name"], b["index"])] = b

    def block_holding(f, addr):
        for b in f["blocks"]:
            if b["begin"] <= addr < b["end"]:
                return b
        return None

    ok = True
    inside = [(n, ad) for n, ad in labels.items() if function_of(ad)]
    missing = [n for n, ad in inside if ad not in starts]
    print("labels: %d of %d .LBB labels inside functions are block starts"
          % (len(inside) - len(missing), len(inside)))
    for n in missing[:10]:
        print("  not a block start: %s at 0x%x" % (n, labels[n]))
    ok &= not missing and len(inside) > 0

    # Branches to labels, as llvm-objdump shows them.
    dis = subprocess.run([os.path.join(llvm_bin, "llvm-objdump"), "-d",
                          obj], check=True, capture_output=True,
                         text=True).stdout
    # "s_cbranch_execz .LBB0_4   // 000000001C18: BF88000A"
    pat = re.compile(r"\ss_(c?branch\w*)\s+(\.LBB[\w.]+)\s+//\s*([0-9A-Fa-f]+):")
    branches = found = 0
    for line in dis.splitlines():
        m = pat.search(line)
        if not m:
            continue
        at, label = int(m.group(3), 16), m.group(2)
        f = function_of(at)
        if not f or label not in labels:
            continue
        branches += 1
        b = block_holding(f, at)
        target = starts.get(labels[label])
        if b and target and target[0] is f and any(
                s["to"] == target[1]["index"] for s in b["successors"]):
            found += 1
        else:
            print("  no edge for the branch at 0x%x to %s" % (at, label))
    print("branches: %d of %d branches to labels are edges" % (found, branches))
    ok &= found == branches and branches > 0

    unreachable = sum(1 for f in fns for b in f["blocks"]
                      if not b["reachable"] and not b["padding"])
    blocks = sum(len(f["blocks"]) for f in fns)
    print("blocks: %d, %d unreachable" % (blocks, unreachable))
    ok &= unreachable == 0

    if preload:
        # Firmware may start a preloading kernel 256 bytes in: that is a
        # block start, and the bytes before it one window.
        kernels = [f for f in fns if f["kind"] == "kernel"]
        good = [f for f in kernels
                if f["begin"] + 256 in starts
                and any(w["kind"] == "kernarg preload header"
                        and w["begin"] == f["begin"]
                        and w["end"] == f["begin"] + 256 for w in f["windows"])]
        print("preload: %d of %d kernels have the header window and the "
              "second entry" % (len(good), len(kernels)))
        ok &= len(good) == len(kernels) > 0
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--llvm-bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("source")
    ap.add_argument("targets", nargs="+")
    a = ap.parse_args()
    tool = lambda name: os.path.join(a.llvm_bin, name)
    ok = True
    for t in a.targets:
        cpu, _, feats = t.partition(":")
        # "preload" is no feature: it asks clang to preload kernargs.
        preload = feats == "preload"
        if preload:
            feats = ""
        name = t.replace(":", "_").replace("+", "")
        base = os.path.join(a.out, name)
        mattr = ["-mattr=" + feats] if feats else []
        subprocess.run([tool("clang"), "--target=amdgcn-amd-amdhsa", "-mcpu=" + cpu,
                        "-nogpulib", "-O2", "-S", a.source, "-o", base + ".s"]
                       + (["-Xclang", "-target-feature", "-Xclang", feats]
                          if feats else [])
                       + (["-mllvm", "-amdgpu-kernarg-preload-count=16"]
                          if preload else []), check=True)
        subprocess.run([tool("llvm-mc"), "-triple=amdgcn-amd-amdhsa", "-mcpu=" + cpu]
                       + mattr + ["--save-temp-labels", "-filetype=obj",
                                  base + ".s", "-o", base + ".o"], check=True)
        subprocess.run([tool("ld.lld"), "-shared", "--discard-none", base + ".o",
                        "-o", base + ".so"], check=True)
        print("== " + t)
        sys.stdout.flush()
        ok &= check(a.tool, a.llvm_bin, base + ".so", preload)
        v = subprocess.run([a.tool, "-passes=verify-code", "--kernels-format=json",
                            base + ".so"], capture_output=True, text=True)
        if v.returncode != 0:
            print(v.stdout + v.stderr)
            ok = False
            continue
        doc = json.loads(v.stdout)
        r = (doc[0] if isinstance(doc, list) else doc)["verify-code"]
        explained = r["abi_ok"] + r["abi_undefined_reads"] + r["abi_conservative"]
        print("verify-code: %d of %d bytes decoded, %d unreachable, abi %d of %d "
              "kernels (%d exact), counts %d of %d, waits %d of %d"
              % (r["decoded_bytes"], r["bytes"], r["unreachable_blocks"],
                 explained, r["kernels"], r["abi_ok"], r["counts_ok"],
                 r["counts_checked"], r["waits_ok"], r["waits_checked"]))
        for e in r["exceptions"]:
            print("  exception: " + e)
        ok &= (r["decoded_bytes"] == r["bytes"] and r["unreachable_blocks"] == 0
               and explained == r["kernels"] and r["kernels"] > 0
               and r["counts_ok"] == r["counts_checked"] and not r["failures"]
               and r["waits_checked"] > 0 and r["waits_ok"] == r["waits_checked"])
    print("%s: %d targets" % ("agree" if ok else "DISAGREE", len(a.targets)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
