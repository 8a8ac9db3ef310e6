"""Corpus driver: builds features.cl for a group of targets and checks the
trampoline pipeline end to end on every object, in both stub forms.

Usage: matrix.py GROUP OUTDIR clang ld.lld hotswap-opt llvm-readelf llvm-objdump

For every object and form (auto, long):
  * hotswap-opt -passes=trampoline,stub-syms,verify succeeds silently;
  * llvm-readelf -h -l -S -s --notes / --all and llvm-objdump -d print no
    warning; e_flags are unchanged; the last PT_LOAD is the pool (R E) and
    .hotswap.text is AX, align 256; each kernel has <k>.stub FUNC GLOBAL
    DEFAULT of size 256 (512 for kernarg preload on gfx90a/gfx942/gfx950);
  * computed from the disassembly, every stub (both halves of a dual stub)
    lands on its kernel's code (+256), with the expected form;
  * print<kernels> (JSON) shows each entry as its stub, leading to the code;
  * loaded bytes are unchanged except descriptor fields (elfcheck.py), and
    the PC-relative targets of the original code are the same;
  * a second run skips every pass and writes identical bytes.
"""
import json
import os
import re
import subprocess
import sys
from io import StringIO

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import elfcheck  # noqa: E402

GROUPS = {
    "gfx8-9": ["gfx803", "gfx900", "gfx906", "gfx90a", "gfx942", "gfx950"],
    "gfx10-11": ["gfx1030", "gfx1100", "gfx1102", "gfx1151"],
    "gfx12": ["gfx1201", "gfx1250", "gfx1251"],
    "generic": ["gfx9-generic", "gfx9-4-generic", "gfx10-3-generic",
                "gfx11-generic", "gfx12-generic"],
}
PRELOAD = {"gfx90a", "gfx942", "gfx950", "gfx1250", "gfx1251"}
DUAL = {"gfx90a", "gfx942", "gfx950"}
NO_WAVE64 = {"gfx1250", "gfx1251"}
PIPELINE = {
    "auto": "trampoline,stub-syms,verify",
    "long": "synth-trampolines<form=long>,patch-descriptors,stub-syms,verify",
}

group, outdir, clang, lld, tool, readelf, objdump = sys.argv[1:8]
elfcheck.OBJDUMP = objdump
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "features.cl")
failures = []
checked = 0


def run(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, **kw)


def fail(tag, msg):
    failures.append("%s: %s" % (tag, msg))


def variants(target):
    generic = "generic" in target
    for cov in ([6] if generic else [4, 5, 6]):
        yield "v%d" % cov, ["-mcode-object-version=%d" % cov], False
    if generic:
        return
    yield "g", ["-g"], False
    if target.startswith("gfx1") and target not in NO_WAVE64:
        yield "w64", ["-mwavefrontsize64"], False
    if target in PRELOAD:
        yield "preload", ["-mllvm", "-amdgpu-kernarg-preload-count=4"], True


def check_output(tag, target, so, out, form, preload):
    global checked
    elf_in = elfcheck.Elf(so)
    elf_out = elfcheck.Elf(out)
    kernels = [n[:-3] for n, _ in elf_in.kernel_descriptors()]
    code = {s["name"]: s["value"] for s in elf_in.symtab() if s["type"] == 2}
    dual = preload and target in DUAL

    # llvm-readelf: layout, flags, symbols, and no warning anywhere.
    r = run([readelf, "-h", "-l", "-S", "-s", "--notes", out])
    r0 = run([readelf, "-h", so])
    if r.returncode or "warning" in (r.stdout + r.stderr).lower():
        fail(tag, "llvm-readelf -h -l -S -s --notes: rc %d\n%s" %
             (r.returncode, r.stderr))
    flags = re.findall(r"^\s*Flags:.*$", r.stdout, re.M)
    flags0 = re.findall(r"^\s*Flags:.*$", r0.stdout, re.M)
    if not flags or flags[:1] != flags0[:1]:
        fail(tag, "e_flags differ: %r vs %r" % (flags0[:1], flags[:1]))
    loads = re.findall(r"^\s*LOAD\s+(\S+)\s+(\S+)\s+\S+\s+\S+\s+\S+\s+(.*?)\s+(0x\w+)$",
                       r.stdout, re.M)
    pool = elf_out.section(elfcheck.POOL)
    if not loads or not pool or int(loads[-1][1], 16) != pool["addr"] or \
            loads[-1][2] != "R E" or loads[-1][3] != "0x1000":
        fail(tag, "last PT_LOAD is not the R E pool segment: %r" % (loads[-1:],))
    if not re.search(r"\] \.hotswap\.text\s+PROGBITS\s+\w+ \w+ \w+ 00\s+AX\s+0\s+0 256$",
                     r.stdout, re.M):
        fail(tag, ".hotswap.text is not PROGBITS AX align 256")
    syms = {m.group(3): (int(m.group(1), 16), int(m.group(2))) for m in re.finditer(
        r"^\s*\d+: ([0-9a-f]+)\s+(\d+) FUNC\s+GLOBAL DEFAULT\s+\d+ (\S+\.stub)$",
        r.stdout, re.M)}
    for k in kernels:
        if k + ".stub" not in syms:
            fail(tag, "no FUNC GLOBAL DEFAULT symbol %s.stub" % k)
        elif syms[k + ".stub"][1] != (512 if dual else 256):
            fail(tag, "%s.stub has size %d" % (k, syms[k + ".stub"][1]))
    r = run([readelf, "--all", out])
    if r.returncode or "warning" in (r.stdout + r.stderr).lower():
        fail(tag, "llvm-readelf --all warns:\n" + r.stderr)

    # llvm-objdump: stub labels and where every stub half lands.
    insns, err = elfcheck.disassemble(out, target)
    if "warning" in err.lower():
        fail(tag, "llvm-objdump -d warns:\n" + err)
    by_addr = {a: i for i, (sec, a, _, _, _) in enumerate(insns)
               if sec == elfcheck.POOL}
    for k in kernels:
        if k + ".stub" not in syms:
            continue
        addr, size = syms[k + ".stub"]
        for half in range(0, size, 256):
            res = None
            for a in range(addr + half, addr + half + 256, 4):
                if a in by_addr:
                    res = elfcheck.follow(insns, by_addr[a])
                    if res:
                        break
            want = code[k] + half
            if res is None or res[1] != want:
                fail(tag, "stub %s+0x%x lands on %s, not 0x%x" %
                     (k, half, hex(res[1]) if res else "nothing", want))
            elif form == "long" and res[0] != "long":
                fail(tag, "stub %s is %s with form=long" % (k, res[0]))
            elif form == "auto" and res[0] != "s_branch":
                fail(tag, "stub %s is %s, but its code is in s_branch range" %
                     (k, res[0]))

    # print<kernels>: the entry is the stub, leading to the code.
    r = run([tool, "-passes=print<kernels>", "--kernels-format=json",
             "-disable-output", out])
    info = json.loads(r.stdout) if r.returncode == 0 else {"kernels": []}
    seen = set()
    for K in info["kernels"]:
        seen.add(K["name"])
        st = K.get("stub")
        if (not st or K["entry"] != syms.get(K["name"] + ".stub", (None,))[0] or
                st["target"] != code.get(K["name"]) or
                K["code_entry"] != code.get(K["name"]) or st["dual"] != dual):
            fail(tag, "print<kernels>: %s" % json.dumps(K))
    if seen != set(kernels):
        fail(tag, "print<kernels> kernels %r, expected %r" % (seen, kernels))

    # Nothing loaded moved: bytes and PC-relative targets.
    saved = sys.stdout
    sys.stdout = buf = StringIO()
    elfcheck.NOTE_MAY_CHANGE = form == "long"
    rc = elfcheck.cmd_compare_loaded(so, out)
    sys.stdout = saved
    if rc:
        fail(tag, "compare-loaded:\n" + buf.getvalue())
    sys.stdout = buf = StringIO()
    elfcheck.cmd_pcrel_targets(so, target)
    before = buf.getvalue()
    buf.truncate(0)
    buf.seek(0)
    elfcheck.cmd_pcrel_targets(out, target)
    after = buf.getvalue()
    sys.stdout = saved
    if before != after or "<Table>" not in before:
        fail(tag, "PC-relative targets changed or missing:\n%s---\n%s" %
             (before, after))

    # Idempotency: a second run skips every pass and changes no byte.
    again = out + ".again"
    r = run([tool, "-passes=" + PIPELINE[form], "-debug-pass-manager", out,
             "-o", again])
    for p in ("synth-trampolines", "patch-descriptors", "stub-syms"):
        if "Skipping pass: " + p not in r.stderr:
            fail(tag, "second run did not skip %s:\n%s" % (p, r.stderr))
    if r.returncode or open(out, "rb").read() != open(again, "rb").read():
        fail(tag, "second run changed the object")
    checked += 1


for target in GROUPS[group]:
    for vname, flags, preload in variants(target):
        tag = "%s-%s" % (target, vname)
        o = os.path.join(outdir, tag + ".o")
        so = os.path.join(outdir, tag + ".so")
        r = run([clang, "--target=amdgcn-amd-amdhsa", "-mcpu=" + target,
                 "-nogpulib", "-O2", "-c", src, "-o", o] + flags)
        if r.returncode:
            fail(tag, "clang failed:\n" + r.stderr)
            continue
        r = run([lld, "-shared", o, "-o", so])
        if r.returncode:
            fail(tag, "ld.lld failed:\n" + r.stderr)
            continue
        for form in ("auto", "long"):
            out = os.path.join(outdir, "%s.%s.out" % (tag, form))
            r = run([tool, "-passes=" + PIPELINE[form], so, "-o", out])
            if r.returncode or r.stderr:
                fail(tag + "/" + form, "hotswap-opt: rc %d\n%s" %
                     (r.returncode, r.stderr))
                continue
            check_output(tag + "/" + form, target, so, out, form, preload)

for f in failures:
    print("FAIL: " + f)
print("objects checked: %d, failures: %d" % (checked, len(failures)))
sys.exit(1 if failures else 0)
