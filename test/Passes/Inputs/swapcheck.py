"""Independent check of a swap-kernels output (nothing here uses hotswap-opt).

Usage: swapcheck.py [--objdump=P] [--readelf=P] --mcpu=GFX IN FILE OUT KERNEL...

IN is the code object before the swap, FILE the replacement, OUT the result
and KERNEL... the kernels that must have been swapped (the others must be as
they were). Checked, from the ELF bytes, llvm-readelf --notes and
llvm-objdump's disassembly:
  - every loaded byte of IN is at the same offset in OUT, but for the
    descriptors of the swapped kernels, the metadata note, and the stub
    slots (`<kernel>.stub`) of the swapped kernels; IN's program headers are
    kept (PT_PHDR may become PT_NULL);
  - FILE's PT_LOADs follow, all at one page-aligned delta, above every
    PT_LOAD of IN, each inside a new PT_LOAD of OUT (one appended segment
    holds everything a run adds) whose flags include its own, with the same
    file bytes;
  - each swapped kernel's descriptor is FILE's but for its entry offset
    (and, entered through a stub, COMPUTE_PGM_RSRC3 and RSRC1: INST_PREF_SIZE
    and the SGPR granule), and it is entered at FILE's kernel moved by the
    delta, directly or through a stub (emulated from the disassembly; in
    a `<kernel>.stub`, after the prologue that may precede the jump);
  - the metadata of each swapped kernel has FILE's resource values (the
    .sgpr_count of a kernel entered through a long stub may be higher) and
    IN's other values; every other kernel's metadata is IN's;
  - .symtab has a `<kernel>.swap` FUNC symbol at each swapped kernel's new
    code.
Prints one line per swapped kernel and "ok", or FAILED lines (exit 1).
"""
import os
import re
import struct
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "Inputs", "corpus"))
import elfcheck  # noqa: E402

PT_LOAD, PT_PHDR, PT_NULL = 1, 6, 0
PF_X = 1
SHT_NOTE = 7
TAKEN = (".sgpr_count", ".vgpr_count", ".agpr_count",
         ".group_segment_fixed_size", ".private_segment_fixed_size",
         ".max_flat_workgroup_size", ".sgpr_spill_count",
         ".vgpr_spill_count", ".uses_dynamic_stack")
READELF = "llvm-readelf"


def kernels_metadata(path):
    """{symbol: {key: value text}} from llvm-readelf --notes."""
    out = subprocess.run([READELF, "--notes", path], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    kernels, cur, key = {}, None, None
    inside = False
    for line in out.splitlines():
        if line.startswith("amdhsa.kernels:"):
            inside = True
            continue
        if not inside:
            continue
        if line and not line.startswith(" "):
            inside = line.startswith("amdhsa.kernels")
            continue
        if line.startswith("  - "):
            cur = {}
            kernels.setdefault("?", []).append(cur)
            line = "    " + line[4:]
        m = re.match(r"^    (\.[\w]+):\s*(.*)$", line)
        if m and cur is not None:
            key = m.group(1)
            cur[key] = m.group(2).strip()
        elif cur is not None and key:
            cur[key] += " " + line.strip()
    return {k[".symbol"]: k for k in kernels.get("?", [])}


def loads(elf):
    return [p for p in elf.phdrs if p[0] == PT_LOAD]


def main(argv):
    global READELF
    args, mcpu = [], None
    for a in argv[1:]:
        if a.startswith("--objdump="):
            elfcheck.OBJDUMP = a.split("=", 1)[1]
        elif a.startswith("--readelf="):
            READELF = a.split("=", 1)[1]
        elif a.startswith("--mcpu="):
            mcpu = a.split("=", 1)[1]
        else:
            args.append(a)
    inp_path, file_path, out_path = args[:3]
    swapped = args[3:]
    a, f, b = (elfcheck.Elf(p) for p in (inp_path, file_path, out_path))
    failed = []
    fail = failed.append

    # Program headers: IN's, then FILE's at one delta.
    old, new = a.phdrs, b.phdrs[:len(a.phdrs)]
    for p, q in zip(old, new):
        if p != q and not (p[0] == PT_PHDR and q[0] == PT_NULL):
            fail("program header changed: %r -> %r" % (p, q))
    flo = [p for p in loads(f) if p[6]]
    added = [p for p in b.phdrs[len(a.phdrs):] if p[0] == PT_LOAD]
    top = max(p[3] + p[6] for p in loads(a))

    def covering(addr, size):
        """The new PT_LOAD of OUT whose memory holds [addr, addr+size)."""
        for q in added:
            if q[3] <= addr and addr + size <= q[3] + q[6]:
                return q
        return None

    def bytes_at(q, addr, size):
        off = q[2] + addr - q[3]
        return b.data[off:off + size]

    # The delta: where FILE's first PT_LOAD with file bytes begins in a new
    # section of OUT, its bytes there.
    first = next((p for p in flo if p[5]), None)
    delta = None
    for sec in b.sections[len(a.sections):]:
        if not sec["flags"] & elfcheck.SHF_ALLOC or first is None:
            continue
        d = sec["addr"] - first[3]
        q = covering(first[3] + d, first[6])
        if q and bytes_at(q, first[3] + d, first[5]) == \
                f.data[first[2]:first[2] + first[5]]:
            delta = d
            break
    if delta is None:
        fail("FILE's image is not in a new PT_LOAD of OUT")
        flo, delta = [], 0
    if delta % 0x1000:
        fail("delta 0x%x is not page-aligned" % delta)
    for p in flo:
        # (type, flags, offset, vaddr, paddr, filesz, memsz, align)
        q = covering(p[3] + delta, p[6])
        if q is None or q[1] & p[1] != p[1]:
            fail("FILE's PT_LOAD %r is not inside a new PT_LOAD with its "
                 "flags at delta 0x%x" % (p, delta))
            continue
        if q[3] < top:
            fail("new PT_LOAD at 0x%x is not above IN's (end 0x%x)" % (q[3], top))
        if bytes_at(q, p[3] + delta, p[5]) != f.data[p[2]:p[2] + p[5]]:
            fail("FILE's PT_LOAD at 0x%x: bytes differ at 0x%x" %
                 (p[3], p[3] + delta))
    print("image: %d PT_LOADs at delta 0x%x" % (len(flo), delta))

    # Loaded bytes of IN: the same, but where a swap may write.
    kd_in = dict(a.kernel_descriptors())
    kd_file = dict(f.kernel_descriptors())
    stubs = {s["name"][:-5]: s for s in a.symtab()
             if s["name"].endswith(".stub") and s["type"] == 2}
    allowed = []
    for k in swapped:
        allowed.append((kd_in.get(k + ".kd", 0), 64))
        if k in stubs:
            allowed.append((stubs[k]["value"], stubs[k]["size"]))
    for s in a.sections[1:]:
        if not s["flags"] & elfcheck.SHF_ALLOC or s["type"] == elfcheck.SHT_NOBITS:
            continue
        x = a.contents(s)
        y = b.data[s["offset"]:s["offset"] + s["size"]]
        if x == y or s["type"] == SHT_NOTE:
            continue
        for i in range(len(x)):
            if x[i] != y[i] and not any(lo <= s["addr"] + i < lo + n
                                        for lo, n in allowed):
                fail("%s: byte at 0x%x changed" % (s["name"], s["addr"] + i))
                break

    # Descriptors and entries.
    insns, _ = elfcheck.disassemble(out_path, mcpu)
    at = {addr: i for i, (_, addr, _, _, _) in enumerate(insns)}
    syms = b.symtab()

    def kd_bytes(elf, addr):
        sec = [s for s in elf.sections if s["flags"] & elfcheck.SHF_ALLOC and
               s["addr"] <= addr < s["addr"] + s["size"]][0]
        return elf.data[sec["offset"] + addr - sec["addr"]:][:64]

    meta_in, meta_file, meta_out = (kernels_metadata(p) for p in
                                    (inp_path, file_path, out_path))
    for k in swapped:
        if k + ".kd" not in kd_file or k + ".kd" not in kd_in:
            fail("%s: not a kernel of both IN and FILE" % k)
            continue
        x, y = kd_bytes(f, kd_file[k + ".kd"]), kd_bytes(b, kd_in[k + ".kd"])
        code = kd_file[k + ".kd"] + struct.unpack_from("<q", x, 16)[0] + delta
        entry = kd_in[k + ".kd"] + struct.unpack_from("<q", y, 16)[0]
        through = "direct"
        mutable = [(16, 24)]
        if entry != code:
            # The jump is the first instruction, or, when the entry is the
            # kernel's <k>.stub, the first jump in its slot (a prologue may
            # precede it).
            r, prologue = None, 0
            is_stub = any(s["name"] == k + ".stub" and s["type"] == 2 and
                          s["value"] == entry for s in syms)
            for a in range(entry, entry + (256 if is_stub else 4), 4):
                i = at.get(a)
                r = elfcheck.follow(insns, i) if i is not None else None
                if r is not None:
                    prologue = (a - entry) // 4
                    break
            if r is None or r[1] != code:
                fail("%s: entry 0x%x does not lead to FILE's code at 0x%x" %
                     (k, entry, code))
            else:
                through = "stub %s%s" % (r[0], " " + r[2] if r[2] else "")
                if prologue:
                    through += " after %d words of prologue" % prologue
            mutable.append((44, 52))
        for i in range(64):
            if x[i] != y[i] and not any(lo <= i < hi for lo, hi in mutable):
                fail("%s: descriptor byte %d is 0x%02x, FILE's is 0x%02x" %
                     (k, i, y[i], x[i]))
                break
        if not any(s["name"] == k + ".swap" and s["type"] == 2 and
                   s["value"] == code for s in syms):
            fail("%s: no FUNC symbol %s.swap at 0x%x" % (k, k, code))
        mi, mf, mo = (m[k + ".kd"] for m in (meta_in, meta_file, meta_out))
        for key in sorted(set(mi) | set(mo)):
            want = mf.get(key) if key in TAKEN else mi.get(key)
            have = mo.get(key)
            if key == ".sgpr_count" and "long" in through and have and want:
                if int(have) < int(want):
                    fail("%s: .sgpr_count %s below FILE's %s" % (k, have, want))
            elif have != want:
                fail("%s: metadata %s is %s, expected %s" % (k, key, have, want))
        print("%s: %s -> FILE's code + 0x%x (%s)" % (k, through, delta,
                                                    b.describe(code)))
    for sym, m in meta_in.items():
        if sym[:-3] not in swapped and meta_out.get(sym) != m:
            fail("%s: metadata changed although not swapped" % sym[:-3])
    for line in failed:
        print("FAILED: " + line)
    if not failed:
        print("ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
