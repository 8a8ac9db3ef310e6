"""Checks that COMGR reads a hotswap-opt output exactly as it reads the input.

Both arguments are comgr-read dumps (see comgr-read.cpp); the output's dump
may carry disassembly (comgr-read -d 256). What must hold:
  - the ISA line is identical (also when COMGR rejects the ISA);
  - every metadata scalar is identical, except `.sgpr_count`, which may only
    grow and, for a long-form stub, must cover the SGPR pair it writes;
  - the `.dynsym` view (what the runtime iterates) is identical;
  - the `.symtab` view is the input's plus exactly one `<kernel>.stub` FUNC of
    256 bytes per kernel, at the address its descriptor now enters at;
  - every descriptor stays where it was and enters at its stub;
  - disassembled by COMGR, each stub jumps to the kernel's original entry
    (`s_branch`, or s_getpc/s_add/s_addc/s_setpc) and is padded to 256 bytes
    with `s_nop 0` or `s_code_end`.
Prints one `ok ...` summary line, or `FAIL: ...` lines and exits 1.

Usage: comgr_compare.py IN.txt OUT.txt [LABEL]
"""
import re
import sys
from collections import Counter

STUB_SIZE = 256


class Dump:
    def __init__(self, path):
        self.isa = None
        self.meta = {}
        self.kernels = {}
        self.syms = {"dyn": [], "tab": []}
        self.entries = {}
        self.disasm = {}
        self.errors = []
        with open(path) as f:
            for line in f:
                self._parse(line.rstrip("\n"))

    def _parse(self, line):
        kind, _, rest = line.partition(" ")
        if kind == "isa":
            self.isa = rest
        elif kind == "meta":
            key, _, value = rest.partition(" = ")
            self.meta[key] = value
        elif kind == "kernel":
            name, *fields = rest.split(" ")
            self.kernels[name] = dict(f.split("=", 1) for f in fields)
        elif kind == "sym":
            view, name, typ, addr, size, *undef = rest.split(" ")
            self.syms[view].append((name, typ, int(addr, 16), int(size), bool(undef)))
        elif kind == "entry":
            m = re.fullmatch(r"(\S+) kd=(0x[0-9a-f]+) entry=(0x[0-9a-f]+)", rest)
            self.entries[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16))
        elif kind == "disasm":
            m = re.fullmatch(r"(\S+) (0x[0-9a-f]+): (.*)", rest)
            self.disasm.setdefault(m.group(1), []).append((int(m.group(2), 16), m.group(3)))
        elif kind == "error:":
            self.errors.append(line)
        elif kind != "kernels":
            self.errors.append("unparsed line: " + line)


def literal(text):
    return int(text, 0) & 0xFFFFFFFF


def check_stub(kernel, insns, stub, target, fail):
    """Returns the stub's form and the first SGPR it writes (None for short)."""
    if not insns or insns[0][0] != stub:
        fail("%s: no disassembly at its stub 0x%x" % (kernel, stub))
        return "?", None
    addr, text = insns[0]
    if text.startswith("s_branch "):
        m = re.search(r"; -> (0x[0-9a-f]+)$", text)
        if not m or int(m.group(1), 16) != target:
            fail("%s: stub branch '%s' does not reach 0x%x" % (kernel, text, target))
        form, reg, body = "short", None, 1
    else:
        texts = [t for _, t in insns[:4]]
        if len(texts) < 4:
            fail("%s: stub starts with '%s'" % (kernel, text))
            return "?", None
        m = re.fullmatch(r"s_getpc_b64 s\[(\d+):(\d+)\]", texts[0])
        if m:
            # A free SGPR pair, which .sgpr_count must cover.
            reg = int(m.group(1))
            pair, lo, hi = "s[%d:%d]" % (reg, reg + 1), "s%d" % reg, "s%d" % (reg + 1)
        elif texts[0] == "s_getpc_b64 vcc":
            # VCC, the fallback when no pair is free; undefined at kernel entry.
            reg, pair, lo, hi = None, "vcc", "vcc_lo", "vcc_hi"
        else:
            fail("%s: stub starts with '%s'" % (kernel, text))
            return "?", None
        add = re.fullmatch(r"s_add_u32 %s, %s, (\S+)" % (lo, lo), texts[1])
        addc = re.fullmatch(r"s_addc_u32 %s, %s, (\S+)" % (hi, hi), texts[2])
        if not add or not addc or texts[3] != "s_setpc_b64 " + pair:
            fail("%s: unexpected long stub %s" % (kernel, texts))
            return "?", None
        delta = literal(add.group(1)) | (literal(addc.group(1)) << 32)
        reached = (insns[1][0] + delta) & 0xFFFFFFFFFFFFFFFF
        if reached != target:
            fail("%s: long stub reaches 0x%x, not 0x%x" % (kernel, reached, target))
        form, body = "long" if reg is not None else "long-vcc", 4
    for addr, text in insns[body:]:
        if addr >= stub + STUB_SIZE:
            break
        if text not in ("s_nop 0", "s_code_end"):
            fail("%s: stub padding at 0x%x is '%s'" % (kernel, addr, text))
    if insns[-1][0] < stub + STUB_SIZE - 4:
        fail("%s: stub disassembly ends at 0x%x" % (kernel, insns[-1][0]))
    return form, reg


def compare(inp, out):
    failures = []
    fail = failures.append
    for which, d in (("input", inp), ("output", out)):
        for e in d.errors:
            fail("%s: %s" % (which, e))
    if not inp.meta or not inp.kernels or not inp.entries:
        fail("input: COMGR read no metadata, kernels or descriptors")
    if inp.isa != out.isa:
        fail("isa: %r != %r" % (inp.isa, out.isa))

    grown = 0
    if set(inp.meta) != set(out.meta):
        fail("metadata keys differ: only in input %s, only in output %s" % (
            sorted(set(inp.meta) - set(out.meta)), sorted(set(out.meta) - set(inp.meta))))
    for key in sorted(set(inp.meta) & set(out.meta)):
        a, b = inp.meta[key], out.meta[key]
        if key.endswith("/.sgpr_count"):
            if int(b) < int(a):
                fail("%s shrank: %s -> %s" % (key, a, b))
            grown += int(b) > int(a)
        elif a != b:
            fail("%s: %r -> %r" % (key, a, b))
    if set(inp.kernels) != set(out.kernels):
        fail("kernels: %s -> %s" % (sorted(inp.kernels), sorted(out.kernels)))

    if inp.syms["dyn"] != out.syms["dyn"]:
        fail(".dynsym view differs")

    expected_new = []
    forms = []
    for kernel in sorted(inp.entries):
        kd, entry = inp.entries[kernel]
        if kernel not in out.entries:
            fail("%s: descriptor missing in output" % kernel)
            continue
        kd2, stub = out.entries[kernel]
        if kd2 != kd:
            fail("%s: descriptor moved 0x%x -> 0x%x" % (kernel, kd, kd2))
        if stub == entry:
            fail("%s: entry did not move (0x%x)" % (kernel, entry))
        expected_new.append((kernel + ".stub", "FUNC", stub, STUB_SIZE, False))
        if out.disasm or inp.isa.startswith("<error"):
            continue
        fail("%s: output has no disassembly although COMGR knows the ISA" % kernel)
    for kernel in sorted(out.disasm):
        if kernel not in out.entries or kernel not in inp.entries:
            fail("%s: disassembled but not a kernel" % kernel)
            continue
        form, reg = check_stub(kernel, out.disasm[kernel], out.entries[kernel][1],
                               inp.entries[kernel][1], fail)
        forms.append(form)
        meta = out.kernels.get(kernel, {})
        if reg is not None and int(meta.get("sgpr_count", 0)) < reg + 2:
            fail("%s: .sgpr_count %s does not cover s[%d:%d]" % (
                kernel, meta.get("sgpr_count"), reg, reg + 1))

    added = Counter(out.syms["tab"]) - Counter(inp.syms["tab"])
    removed = Counter(inp.syms["tab"]) - Counter(out.syms["tab"])
    if removed:
        fail(".symtab lost %s" % sorted(removed.elements()))
    if sorted(added.elements()) != sorted(expected_new):
        fail(".symtab gained %s, expected %s" % (sorted(added.elements()), expected_new))
    summary = "isa=%s kernels=%d meta=%d dyn=%d tab=%d+%d sgpr_grown=%d stubs=%s" % (
        inp.isa, len(inp.kernels), len(inp.meta), len(inp.syms["dyn"]),
        len(inp.syms["tab"]), sum(added.values()), grown,
        ",".join(sorted(set(forms))) or "-")
    return failures, summary


def main(argv):
    label = argv[3] if len(argv) > 3 else argv[2]
    failures, summary = compare(Dump(argv[1]), Dump(argv[2]))
    for f in failures:
        print("FAIL %s: %s" % (label, f))
    if failures:
        return 1
    print("ok %s: %s" % (label, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
