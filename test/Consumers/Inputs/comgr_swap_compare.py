"""Checks that COMGR reads a swap-kernels output as it reads the input, with
the swapped kernels' values taken from the replacement.

The arguments are comgr-read dumps (see comgr-read.cpp) of the input, of
the replacement and of the output, then the swapped kernels. What must hold:
  - the ISA line is the input's;
  - every metadata scalar is the input's, except the values the runtime
    reads of each swapped kernel (.sgpr_count, .vgpr_count, .agpr_count,
    .group_segment_fixed_size, .private_segment_fixed_size,
    .max_flat_workgroup_size, the spill counts, .uses_dynamic_stack), which
    are the replacement's (kernels are matched by name: their order may
    differ between the input and the replacement);
  - the kernels the runtime sees, and the .dynsym view, are the input's;
  - the .symtab view is the input's plus one `<kernel>.swap` FUNC per
    swapped kernel, of the size of the replacement's kernel function, at
    the address its descriptor now enters at; every descriptor stays where
    it was; the other kernels are entered where they were;
  - when the dumps have disassembly, COMGR decodes each swapped kernel's
    entry as the replacement's entry (branch targets left out).
Prints one `ok ...` summary line, or `FAIL: ...` lines and exits 1.

Usage: comgr_swap_compare.py IN.txt FILE.txt OUT.txt KERNEL...
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from comgr_compare import Dump  # noqa: E402

TAKEN = {".sgpr_count", ".vgpr_count", ".agpr_count",
         ".group_segment_fixed_size", ".private_segment_fixed_size",
         ".max_flat_workgroup_size", ".sgpr_spill_count",
         ".vgpr_spill_count", ".uses_dynamic_stack"}
KERNEL_KEY = re.compile(r"^/amdhsa\.kernels\[(\d+)\](/.*)$")


def by_kernel(dump):
    """{(kernel name, path inside the kernel map): value}, other keys as is."""
    names = {}
    for key, value in dump.meta.items():
        m = KERNEL_KEY.match(key)
        if m and m.group(2) == "/.name":
            names[m.group(1)] = value
    out = {}
    for key, value in dump.meta.items():
        m = KERNEL_KEY.match(key)
        out[(names.get(m.group(1), "?"), m.group(2)) if m else ("", key)] = value
    return out


def insns(dump, kernel):
    return [re.sub(r"\s*;.*$", "", t) for _, t in dump.disasm.get(kernel, [])]


def main(argv):
    inp, rep, out = (Dump(p) for p in argv[1:4])
    swapped = argv[4:]
    failures = []
    fail = failures.append
    for which, d in (("input", inp), ("replacement", rep), ("output", out)):
        for e in d.errors:
            fail("%s: %s" % (which, e))
    if inp.isa != out.isa:
        fail("isa: %r != %r" % (inp.isa, out.isa))
    a, r, b = by_kernel(inp), by_kernel(rep), by_kernel(out)
    if set(a) != set(b):
        fail("metadata keys differ: %s" % sorted(set(a) ^ set(b)))
    taken = 0
    for key in sorted(set(a) & set(b)):
        kernel, path = key
        leaf = path.rsplit("/", 1)[-1]
        if kernel in swapped and path.count("/") == 1 and leaf in TAKEN:
            want = r.get(key)
            taken += want != a[key]
        else:
            want = a[key]
        if b[key] != want:
            fail("%s %s: %r, expected %r" % (kernel or "(root)", path, b[key], want))
    if inp.kernels != out.kernels and set(inp.kernels) != set(out.kernels):
        fail("kernels: %s -> %s" % (sorted(inp.kernels), sorted(out.kernels)))
    if inp.syms["dyn"] != out.syms["dyn"]:
        fail(".dynsym view differs")

    expected_new = []
    rep_funcs = {name: size for name, typ, _, size, _ in rep.syms["tab"] if typ == "FUNC"}
    for kernel, (kd, entry) in sorted(inp.entries.items()):
        if kernel not in out.entries:
            fail("%s: descriptor missing in output" % kernel)
            continue
        kd2, entry2 = out.entries[kernel]
        if kd2 != kd:
            fail("%s: descriptor moved 0x%x -> 0x%x" % (kernel, kd, kd2))
        if kernel not in swapped:
            if entry2 != entry:
                fail("%s: not swapped, but entered at 0x%x, not 0x%x" % (kernel, entry2, entry))
            continue
        expected_new.append((kernel + ".swap", "FUNC", entry2, rep_funcs.get(kernel, 0), False))
        if out.disasm or rep.disasm:
            if not insns(out, kernel) or insns(out, kernel) != insns(rep, kernel):
                fail("%s: COMGR decodes %s at the new entry, the replacement's entry is %s" % (
                    kernel, insns(out, kernel), insns(rep, kernel)))
    added = sorted((set(out.syms["tab"]) - set(inp.syms["tab"])))
    removed = sorted(set(inp.syms["tab"]) - set(out.syms["tab"]))
    if removed:
        fail(".symtab lost %s" % removed)
    if added != sorted(expected_new):
        fail(".symtab gained %s, expected %s" % (added, sorted(expected_new)))
    for f in failures:
        print("FAIL: " + f)
    if failures:
        return 1
    print("ok: isa=%s kernels=%d meta=%d swapped=%d values-taken=%d tab=+%d disasm=%s" % (
        inp.isa, len(inp.kernels), len(inp.meta), len(swapped), taken, len(added),
        "yes" if out.disasm else "no"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
