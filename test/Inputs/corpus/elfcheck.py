"""Independent checks of rewritten AMDGPU code objects for the corpus tests.

Nothing here uses hotswap-opt: ELF structures are parsed by utils/elf.py (no
LLVM either) and stub targets are computed from llvm-objdump's disassembly
(addresses and encodings), so a wrong rewrite cannot hide behind a matching
bug in the tool.

Subcommands (each prints a report and exits 1 on a failed check):
  stub-targets OBJ MCPU       where every 256-byte stub slot jumps
  pcrel-targets OBJ MCPU      targets of s_getpc-relative sequences outside
                              .hotswap.text
  compare-loaded IN OUT       loaded bytes are unchanged except the fields of
                              kernel descriptors a stub patch may change
  scratch-pairs OBJ MCPU      the registers every kernel's stub overwrites,
                              against the SGPRs its descriptor says are live
                              at launch and allocated
"""
import os
import re
import struct
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "utils"))
import elf as elffile  # noqa: E402  (utils/elf.py)

SHF_ALLOC = elffile.SHF_ALLOC
SHT_NOTE = elffile.SHT_NOTE
SHT_NOBITS = elffile.SHT_NOBITS
PT_LOAD = elffile.PT_LOAD
PT_PHDR = elffile.PT_PHDR
POOL = ".hotswap.text"


class Elf(elffile.File):
    """A code object read by utils/elf.py, with the symbol tables by name
    and what the checks below ask of kernels and code addresses."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        if not elffile.is_elf64le(data):
            raise SystemExit("%s: not a little-endian ELF64 file" % path)
        super().__init__(data)
        self.symbols_by_table = {
            s["name"]: self.symbols(s) for s in self.sections
            if s["type"] in (elffile.SHT_SYMTAB, elffile.SHT_DYNSYM)}

    def symtab(self):
        return self.symbols_by_table.get(".symtab", [])

    def kernel_descriptors(self):
        """(name, address) of every '<k>.kd' object symbol of both tables."""
        seen = {}
        for table in self.symbols_by_table.values():
            for s in table:
                if s["name"].endswith(".kd") and s["type"] == 1:
                    seen[s["name"]] = s["value"]
        return sorted(seen.items(), key=lambda kv: kv[1])

    def func_names(self):
        """address -> name of every FUNC symbol of .symtab (stubs included)."""
        names = {}
        for s in self.symtab():
            if s["type"] == 2 and s["value"] not in names:
                names[s["value"]] = s["name"]
        return names

    def describe(self, addr):
        """'<sym>' or '<sym+0xoff>' for a code address, like llvm-objdump."""
        best = None
        for s in self.symtab():
            if s["type"] not in (1, 2) or s["value"] > addr:
                continue
            if s["value"] + max(s["size"], 1) <= addr:
                continue
            if best is None or s["value"] > best["value"]:
                best = s
        if best is None:
            return "<?>"
        off = addr - best["value"]
        return "<%s%s>" % (best["name"], "+0x%x" % off if off else "")


INSN = re.compile(r"^\s+(\S+)\s*(.*?)\s*//\s*([0-9A-Fa-f]+):\s*((?:[0-9A-Fa-f]{8}\s?)+)")
LABEL = re.compile(r"^([0-9a-f]+) <(.*)>:$")
SECTION = re.compile(r"^Disassembly of section (\S+):$")


def disassemble(path, mcpu, only=None):
    """[(section, address, mnemonic, operands, [words])] and any stderr, of
    every executable section or of section \p only."""
    p = subprocess.run([OBJDUMP, "-d", "--mcpu=" + mcpu, path] +
                       (["-j", only] if only else []),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        raise SystemExit("llvm-objdump failed on %s:\n%s" % (path, p.stderr))
    insns = []
    sec = None
    for line in p.stdout.splitlines():
        m = SECTION.match(line)
        if m:
            sec = m.group(1)
            continue
        m = INSN.match(line)
        if m:
            words = [int(w, 16) for w in m.group(4).split()]
            insns.append((sec, int(m.group(3), 16), m.group(1),
                          m.group(2), words))
    return insns, p.stderr


def sgpr_pair(operand):
    """First register of an SGPR pair operand: s[N:N+1] or vcc."""
    operand = operand.strip()
    m = re.match(r"s\[(\d+):(\d+)\]$", operand)
    if m and int(m.group(2)) == int(m.group(1)) + 1:
        return int(m.group(1))
    if operand == "vcc":
        return "vcc"
    return None


def lo_reg(operand):
    m = re.match(r"s(\d+)$", operand.strip())
    if m:
        return int(m.group(1))
    return "vcc" if operand.strip() == "vcc_lo" else None


def hi_reg_of(pair):
    return "vcc" if pair == "vcc" else pair + 1


GETPC = ("s_getpc_b64", "s_get_pc_i64")
ADD = ("s_add_u32", "s_add_co_u32")
ADDC = ("s_addc_u32", "s_add_co_ci_u32")
SETPC = ("s_setpc_b64", "s_set_pc_i64")


def follow(insns, i):
    """Emulates a jump sequence starting at insns[i]: returns (form, target,
    register text) or None when insns[i] does not start one."""
    sec, addr, mn, ops, words = insns[i]
    if mn == "s_branch":
        simm = words[0] & 0xFFFF
        if simm & 0x8000:
            simm -= 0x10000
        return ("s_branch", (addr + 4 + 4 * simm) % (1 << 64), "")
    if mn not in GETPC:
        return None
    pair = sgpr_pair(ops)
    if pair is None or i + 3 >= len(insns):
        return None
    pc = addr + 4
    (_, _, mn1, ops1, w1), (_, _, mn2, ops2, w2), (_, _, mn3, ops3, _) = \
        insns[i + 1:i + 4]
    o1 = [o.strip() for o in ops1.split(",")]
    o2 = [o.strip() for o in ops2.split(",")]
    if (mn1 not in ADD or mn2 not in ADDC or mn3 not in SETPC or
            len(w1) != 2 or len(w2) != 2 or
            lo_reg(o1[0]) != pair or lo_reg(o1[1]) != pair or
            sgpr_pair(ops3) != pair):
        return None
    hi = "vcc_hi" if pair == "vcc" else "s%d" % (pair + 1)
    if o2[0] != hi or o2[1] != hi:
        return None
    target = (pc + (w2[1] << 32 | w1[1])) % (1 << 64)
    reg = "vcc" if pair == "vcc" else "s[%d:%d]" % (pair, pair + 1)
    return ("long", target, reg)


def cmd_stub_targets(path, mcpu):
    elf = Elf(path)
    pool = elf.section(POOL)
    if pool is None:
        print("no %s section" % POOL)
        return 1
    stubs = sorted((s["value"], s["name"], s["size"]) for s in elf.symtab()
                   if s["name"].endswith(".stub") and s["type"] == 2)
    insns, err = disassemble(path, mcpu)
    by_addr = {a: i for i, (sec, a, _, _, _) in enumerate(insns)
               if sec == POOL}
    failed = 0
    for value, name, size in stubs:
        for half in range(0, max(size, 256), 256):
            slot = value + half
            # The jump is the first recognised sequence of the slot (a
            # prologue may precede it).
            result = None
            for a in range(slot, slot + 256, 4):
                if a in by_addr:
                    result = follow(insns, by_addr[a])
                    if result:
                        break
            if result is None:
                print("%s+0x%x: no jump" % (name, half))
                failed = 1
                continue
            form, target, reg = result
            print("%s+0x%x: %s%s -> 0x%x %s" % (
                name, half, form, " " + reg if reg else "", target,
                elf.describe(target)))
    if err.strip():
        print(err.strip())
    return failed


def cmd_pcrel_targets(path, mcpu):
    elf = Elf(path)
    insns, err = disassemble(path, mcpu)
    for i, (sec, addr, mn, ops, _) in enumerate(insns):
        if sec == POOL or mn not in GETPC:
            continue
        pair = sgpr_pair(ops)
        # The add/addc pair may be scheduled apart from the getpc: look at
        # the next few instructions for the adds of that register pair.
        lo = hi = None
        for _, _, mn2, ops2, w2 in insns[i + 1:i + 12]:
            o = [x.strip() for x in ops2.split(",")]
            # gfx12.5: one 64-bit add with a 64-bit literal.
            if (mn2 == "s_add_nc_u64" and len(w2) == 3 and len(o) == 3 and
                    sgpr_pair(o[0]) == pair == sgpr_pair(o[1])):
                lo, hi = w2[1], w2[2]
                break
            if len(w2) != 2 or len(o) != 3:
                continue
            if mn2 in ADD and lo is None and lo_reg(o[0]) == pair == lo_reg(o[1]):
                lo = w2[1]
            elif (mn2 in ADDC and hi is None and
                  o[0] == o[1] == ("vcc_hi" if pair == "vcc" else "s%d" % (pair + 1))):
                hi = w2[1]
        if lo is None or hi is None:
            continue
        target = (addr + 4 + (hi << 32 | lo)) % (1 << 64)
        print("getpc at 0x%x %s: target 0x%x %s" % (
            addr, elf.describe(addr), target, elf.describe(target)))
    if err.strip():
        print(err.strip())
    return 0


# Descriptor bytes a stub patch may change: kernel_code_entry_byte_offset
# (16..23), COMPUTE_PGM_RSRC3 (44..47: INST_PREF_SIZE) and COMPUTE_PGM_RSRC1
# (48..51: SGPR granule).
KD_MUTABLE = [(16, 24), (44, 52)]


def cmd_compare_loaded(inp, out):
    a, b = Elf(inp), Elf(out)
    failed = []
    if a.ident != b.ident:
        failed.append("e_ident changed")
    if a.e_flags != b.e_flags:
        failed.append("e_flags changed: 0x%x -> 0x%x" % (a.e_flags, b.e_flags))
    if (a.e_type, a.e_machine, a.e_entry) != (
            b.e_type, b.e_machine, b.e_entry):
        failed.append("e_type/e_machine/e_entry changed")
    # Program headers: the old ones, in order (PT_PHDR may become PT_NULL),
    # then exactly one new PT_LOAD, which is last and highest.
    old = [p for p in a.phdrs]
    new = b.phdrs[:len(old)]
    for p, q in zip(old, new):
        if p == q or (p[0] == PT_PHDR and q[0] == 0):
            continue
        if p[0] == PT_PHDR:
            failed.append("PT_PHDR neither kept nor turned into PT_NULL")
        else:
            failed.append("program header changed: %r -> %r" % (p, q))
    extra = b.phdrs[len(old):]
    if len(extra) != 1 or extra[0][0] != PT_LOAD:
        failed.append("expected one new PT_LOAD, got %r" % (extra,))
    else:
        loads = [p for p in b.phdrs if p[0] == PT_LOAD]
        if loads[-1] is not extra[0] or any(
                p[3] + p[6] > extra[0][3] for p in loads[:-1]):
            failed.append("the new PT_LOAD is not last and highest")
    kds = a.kernel_descriptors()
    checked = []
    for s in a.sections[1:]:
        t = b.section(s["name"])
        if t is None:
            failed.append("section %s disappeared" % s["name"])
            continue
        loaded = bool(s["flags"] & SHF_ALLOC)
        if not loaded and s["name"] in (".symtab", ".strtab", ".shstrtab"):
            continue
        keys = ("type", "flags", "addr", "size", "align", "entsize")
        if loaded:
            keys += ("offset",)
        for k in keys:
            if s[k] != t[k]:
                failed.append("%s: %s changed" % (s["name"], k))
        x, y = a.contents(s), b.contents(t)
        if x == y:
            checked.append(s["name"])
            continue
        if len(x) != len(y):
            continue
        diffs = [i for i in range(len(x)) if x[i] != y[i]]
        allowed = True
        for i in diffs:
            addr = s["addr"] + i
            ok = any(kd <= addr < kd + 64 and
                     any(lo <= addr - kd < hi for lo, hi in KD_MUTABLE)
                     for _, kd in kds)
            if not ok and s["type"] == SHT_NOTE:
                ok = NOTE_MAY_CHANGE
            if not ok:
                failed.append("%s: byte at 0x%x changed" % (s["name"], addr))
                allowed = False
                break
        if allowed:
            checked.append(s["name"] + "(descriptor fields" +
                           (", metadata" if s["type"] == SHT_NOTE else "") + ")")
    print("unchanged: " + " ".join(checked))
    for name, kd in kds:
        off = kd - [s for s in a.sections if s["addr"] <= kd < s["addr"] + s["size"] and
                    s["flags"] & SHF_ALLOC][0]["addr"]
        sec = [s for s in a.sections if s["addr"] <= kd < s["addr"] + s["size"] and
               s["flags"] & SHF_ALLOC][0]
        x = a.contents(sec)[off:off + 64]
        y = b.contents(b.section(sec["name"]))[off:off + 64]
        ea = struct.unpack_from("<q", x, 16)[0] + kd
        eb = struct.unpack_from("<q", y, 16)[0] + kd
        print("%s: entry 0x%x %s -> 0x%x %s; rsrc1 %s; rsrc3 %s" % (
            name, ea, a.describe(ea), eb, b.describe(eb),
            "same" if x[48:52] == y[48:52] else "changed",
            "same" if x[44:48] == y[44:48] else "changed"))
    for f in failed:
        print("FAILED: " + f)
    return 1 if failed else 0


# ------------------------------------------------------------ scratch-pairs --
# The initial SGPR state of a wave, from the descriptor and e_flags alone
# (AMDGPUUsage, "Initial Kernel Execution State"), computed here without
# hotswap-opt: live-in SGPRs s0..s(L-1) (USER_SGPR_COUNT, then the system
# SGPRs COMPUTE_PGM_RSRC2 enables); on gfx6-9 the allocation,
# (GRANULATED_WAVEFRONT_SGPR_COUNT + 1) * 8, with VCC, XNACK_MASK and
# FLAT_SCRATCH at its top (2, 4 or 6 SGPRs, as LLVM's getNumExtraSGPRs
# counts them).

XNACK_PROCESSORS = ("gfx801", "gfx810")  # and every gfx9
ARCH_FLAT_SCRATCH_GFX9 = ("gfx942", "gfx950", "gfx9-4-generic")


def generation(mcpu):
    m = re.match(r"gfx(\d+)", mcpu)
    major = m.group(1)
    if len(major) == 4:  # gfx1030, gfx1250, ...
        g = int(major[:2])
        return 12.5 if major.startswith("125") else g
    if major.startswith("12") and "-" in mcpu:  # gfx12-generic
        return 12
    if "-" in mcpu:  # gfx9-generic, gfx10-1-generic, gfx11-generic
        return int(major)
    return int(major[0])


def initial_sgprs(mcpu, eflags, kd):
    """(live-ins, addressable, allocated or None, specials) of a kernel."""
    gen = generation(mcpu)
    rsrc1, rsrc2 = struct.unpack_from("<II", kd, 48)
    props = struct.unpack_from("<H", kd, 56)[0]
    arch_fs = gen >= 11 or mcpu in ARCH_FLAT_SCRATCH_GFX9
    user = (rsrc2 >> 1) & (0x3f if gen == 12.5 else 0x1f)
    system = sum((rsrc2 >> b) & 1 for b in (7, 8, 9, 10))
    if rsrc2 & 1 and not arch_fs:
        system += 1  # private segment wave offset
    live = user + system
    if gen >= 10:
        return live, 106, None, 0
    addressable = 104 if gen < 8 else (96 if mcpu in ("gfx802", "gfx805")
                                      else 102)
    allocated = (((rsrc1 >> 6) & 0xf) + 1) * 8
    specials = 2  # VCC
    xnack = (eflags >> 8) & 3  # 0 unsupported, 1 any, 2 off, 3 on
    if gen >= 8 and (gen == 9 or mcpu in XNACK_PROCESSORS) and xnack != 2:
        specials = 4
    if arch_fs or props & (1 << 5):  # ENABLE_SGPR_FLAT_SCRATCH_INIT
        specials = 6 if gen >= 8 else 4
    return live, addressable, allocated, specials


def cmd_scratch_pairs(path, mcpu):
    elf = Elf(path)
    pool = elf.section(POOL)
    insns, err = disassemble(path, mcpu, POOL) if pool else ([], "")
    by_addr = {a: i for i, (sec, a, _, _, _) in enumerate(insns)
               if sec == POOL}
    failed = []
    for name, kdaddr in elf.kernel_descriptors():
        sec = [s for s in elf.sections if s["flags"] & SHF_ALLOC and
               s["addr"] <= kdaddr < s["addr"] + s["size"]][0]
        off = kdaddr - sec["addr"]
        kd = elf.contents(sec)[off:off + 64]
        entry = (kdaddr + struct.unpack_from("<q", kd, 16)[0]) % (1 << 64)
        kernel = name[:-3]
        if pool is None or not pool["addr"] <= entry < pool["addr"] + pool["size"]:
            print("%s: no stub" % kernel)
            continue
        live, addressable, allocated, specials = initial_sgprs(
            mcpu, elf.e_flags, kd)
        state = "live-in %d, " % live + (
            "addressable %d" % addressable if allocated is None else
            "allocated %d, special %d" % (allocated, specials))
        # Both halves of a dual stub (kernarg preload on gfx90a/942/950,
        # where the firmware may enter at +256) run before the kernel.
        dual = (mcpu in ("gfx90a", "gfx942", "gfx950", "gfx9-4-generic") and
                struct.unpack_from("<H", kd, 58)[0] & 0x7f)
        regs = []
        for half in ((0, 256) if dual else (0,)):
            result = None
            for a in range(entry + half, entry + half + 256, 4):
                if a in by_addr:
                    result = follow(insns, by_addr[a])
                    if result:
                        break
            if result:
                regs.append(result[2] or "none")
            if half == 0 and result is None:
                failed.append("%s: no jump at its entry 0x%x" % (kernel, entry))
        if not regs:
            continue
        for reg in sorted(set(regs)):
            lowest = live + live % 2
            if reg == "none":
                print("%s: %s: s_branch" % (kernel, state))
                continue
            if reg == "vcc":
                print("%s: %s: vcc" % (kernel, state))
                if allocated is not None and live + specials > allocated:
                    failed.append("%s: vcc (the top pair) is not above the %d "
                                  "live-ins and %d specials in %d SGPRs" % (
                                      kernel, live, specials, allocated))
                continue
            n = int(re.match(r"s\[(\d+):", reg).group(1))
            print("%s: %s: %s%s" % (kernel, state, reg,
                                    " (lowest)" if n == lowest else ""))
            if n < live:
                failed.append("%s: %s overlaps the %d live-ins" % (
                    kernel, reg, live))
            if n % 2 or n + 2 > addressable:
                failed.append("%s: %s is not an addressable pair" % (
                    kernel, reg))
            if allocated is not None and n + 2 + specials > allocated:
                failed.append("%s: %s and %d specials do not fit %d SGPRs" % (
                    kernel, reg, specials, allocated))
    if err.strip():
        print(err.strip())
    for f in failed:
        print("FAILED: " + f)
    return 1 if failed else 0


OBJDUMP = "llvm-objdump"
NOTE_MAY_CHANGE = False


def main(argv):
    global OBJDUMP, NOTE_MAY_CHANGE
    args = []
    for a in argv[1:]:
        if a.startswith("--objdump="):
            OBJDUMP = a.split("=", 1)[1]
        elif a == "--note-may-change":
            NOTE_MAY_CHANGE = True
        else:
            args.append(a)
    cmd = args[0]
    if cmd == "stub-targets":
        return cmd_stub_targets(args[1], args[2])
    if cmd == "pcrel-targets":
        return cmd_pcrel_targets(args[1], args[2])
    if cmd == "compare-loaded":
        return cmd_compare_loaded(args[1], args[2])
    if cmd == "scratch-pairs":
        return cmd_scratch_pairs(args[1], args[2])
    raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
