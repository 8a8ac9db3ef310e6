#!/usr/bin/env python3
"""A sweep of mutated code objects guarding: what the rewrite accepts,
verify accepts; what it refuses, it refuses with one error line.

Usage: accept-implies-verify.py HOTSWAP-OPT GEN-MALFORMED WORKDIR
           FIXTURE... [--light FIXTURE...]

From each well-formed FIXTURE (a linked AMDGPU code object) it derives a
deterministic set of mutants with utils/gen-malformed.py's edits (the
script GEN-MALFORMED is loaded once and its main() run in this process):
every e_ident byte of class, data, version, OS ABI and ABI version, every
ELF header field, every field of every program header and of every
section header, and st_value, st_size, st_shndx and st_info of every
symbol of .symtab and .dynsym, each set to boundary values (0, 1, -1, the
file size, the file size + 1, the top bit of the field, the value - 1 and
+ 1 and, for offsets and addresses, the value of the same field of the
neighbouring header or symbol), plus truncations at the edges of the
headers and tables and the section header table shifted. The fixtures
after --light get fewer values (0, -1, the file size + 1, the value + 1,
the neighbours') and their SHN_ABS symbols none, to bound the run time.
Edits that leave the bytes as they were, and mutants whose bytes another
mutant (or a fixture) already has, are dropped.

Each mutant M goes through `HOTSWAP-OPT -passes=trampoline,stub-syms M -o
M.out` (two at a time). Then:
  status 0  M.out exists, and `HOTSWAP-OPT -passes=verify M.out
            -disable-output` exits 0 printing nothing;
  status 1  stdout and stderr are together exactly one line
            "hotswap-opt: error: 'M': ...", and M.out does not exist;
  otherwise (a signal, another status, a time-out) a violation.
The unmutated fixtures must be accepted (so that the mutants derive from
inputs that do rewrite). WORKDIR keeps only the mutants of violations
(named in their lines) and their outputs.

Prints one line per violation, "VIOLATION FIXTURE EDIT...: WHAT (mutant
PATH)", then
  N mutants: A accepted and verified, R refused with one line, V violations
and exits 1 if V is not 0.
"""
import concurrent.futures
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean

TIMEOUT = 60  # seconds for one run of the tool; far above what one takes
PIPELINE = "-passes=trampoline,stub-syms"


def load_gen(path):
    """utils/gen-malformed.py as a module (and utils/elf.py next to it)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location("gen_malformed", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def width_mask(code):
    return (1 << (8 * {"B": 1, "H": 2, "I": 4, "Q": 8}[code.upper()])) - 1


def boundary_values(orig, code, size, neighbours=(), light=False):
    """The values a field of struct code (holding orig) is set to; fewer
    when light."""
    mask = width_mask(code)
    top = (mask + 1) >> 1
    if light:
        values = [0, -1, size + 1, orig + 1]
    else:
        values = [0, 1, -1, size, size + 1, top, orig - 1, orig + 1]
    values += list(neighbours)
    out = []
    for v in values:
        v &= mask
        if v != orig and v not in out:
            out.append(v)
    return out


SHN_ABS = 0xfff1

ADDRESS_FIELDS = {"e_entry", "e_phoff", "e_shoff", "p_offset", "p_vaddr",
                  "p_paddr", "sh_addr", "sh_offset", "st_value"}


def neighbours_of(items, i, key):
    """key of the items just before and after item i."""
    return [items[j][key] for j in (i - 1, i + 1) if 0 <= j < len(items)]


def mutant_edits(elf, data, light=False):
    """[edit list] for one fixture, in a fixed order. When light, each
    field gets fewer values and the absolute symbols none."""
    f = elf.File(data)
    size = len(data)
    edits = []
    # e_ident: class, data, version, OS ABI, ABI version.
    for n in range(4, 9):
        for v in boundary_values(data[n], "B", size, (), light):
            edits.append(["ident[%d]=%#x" % (n, v)])
    for name, (off, code) in sorted(elf.EHDR.items(), key=lambda kv: kv[1][0]):
        orig = elf.get(data, off, code)
        for v in boundary_values(orig, code, size, (), light):
            edits.append(["ehdr.%s=%#x" % (name, v)])
    phdrs = [p._asdict() for p in f.phdrs]
    for i, p in enumerate(phdrs):
        for name, (off, code) in sorted(elf.PHDR.items(), key=lambda kv: kv[1][0]):
            near = neighbours_of(phdrs, i, name) if name in ADDRESS_FIELDS else ()
            for v in boundary_values(p[name], code, size, near, light):
                edits.append(["phdr[%d].%s=%#x" % (i, name, v)])
    # The keys of File.sections for each SHDR field.
    key = {"sh_name": "name_off", "sh_type": "type", "sh_flags": "flags",
           "sh_addr": "addr", "sh_offset": "offset", "sh_size": "size",
           "sh_link": "link", "sh_info": "info", "sh_addralign": "align",
           "sh_entsize": "entsize"}
    secs = f.sections
    for s in secs:
        for name, (off, code) in sorted(elf.SHDR.items(), key=lambda kv: kv[1][0]):
            k = key[name]
            near = neighbours_of(secs, s["index"], k) if name in ADDRESS_FIELDS else ()
            for v in boundary_values(s[k], code, size, near, light):
                edits.append(["shdr[%d].%s=%#x" % (s["index"], name, v)])
    skey = {"st_value": "value", "st_size": "size", "st_shndx": "shndx",
            "st_info": "info"}
    for s in secs:
        if s["type"] not in (elf.SHT_SYMTAB, elf.SHT_DYNSYM):
            continue
        syms = f.symbols(s)
        for sym in syms:
            if light and sym["shndx"] == SHN_ABS:
                continue
            for name in ("st_info", "st_shndx", "st_value", "st_size"):
                code = elf.SYM[name][1]
                near = neighbours_of(syms, sym["index"], skey[name]) \
                    if name in ADDRESS_FIELDS else ()
                for v in boundary_values(sym[skey[name]], code, size, near, light):
                    edits.append(["sym[%d][%d].%s=%#x"
                                  % (s["index"], sym["index"], name, v)])
    # Truncations: inside and at the end of the ELF header, the program
    # header table and the section header table; before the last byte.
    ph_end = f.e_phoff + f.e_phnum * f.e_phentsize
    sh_end = f.e_shoff + f.e_shnum * f.e_shentsize
    for n in (0, 4, 16, 63, 64, ph_end - 1, ph_end, size // 2, f.e_shoff,
              f.e_shoff + 1, sh_end - 1, size - 1):
        if 0 <= n < size:
            edits.append(["truncate=%d" % n])
    # Two edits at once: the section header table shifted (so that the
    # section offsets no longer match the program headers' view).
    if sh_end == size:
        for n in (1, 8, 64):
            edits.append(["shift-shdrs=%d" % n])
    return edits


def make(gen, src, dst, edits):
    """gen-malformed.py SRC DST EDITS..., in this process; None or an
    error message."""
    saved = sys.argv
    sys.argv = ["gen-malformed.py", src, dst] + edits
    try:
        gen.main()
    except SystemExit as e:  # gen-malformed.py's fail()
        return str(e.code)
    except Exception as e:  # noqa: BLE001  (an edit that cannot apply)
        return "%s: %s" % (type(e).__name__, e)
    finally:
        sys.argv = saved
    return None


def run(cmd):
    """(status, stdout + stderr); status is -SIGNAL or 'timeout'."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    return p.returncode, p.stdout.decode("utf-8", "replace")


def describe(status):
    if status == "timeout":
        return "timed out after %d s" % TIMEOUT
    if status < 0:
        return "killed by signal %d" % -status
    return "exited %d" % status


def first_lines(text, n=2):
    lines = text.splitlines()
    out = " | ".join(lines[:n])
    if len(lines) > n:
        out += " | ... (%d lines)" % len(lines)
    return repr(out)


def check(tool, path):
    """('accepted' | 'refused', None) or ('violation', what went wrong)."""
    out = path + ".out"
    status, text = run([tool, PIPELINE, path, "-o", out])
    if status == 0:
        if not os.path.isfile(out):
            return "violation", "rewrite exited 0 but wrote no output"
        vstatus, vtext = run([tool, "-passes=verify", out, "-disable-output"])
        if vstatus != 0:
            return "violation", "rewrite exited 0 but verify of its output %s: %s" % (
                describe(vstatus), first_lines(vtext))
        if vtext:
            return "violation", "verify of the output exited 0 but printed %s" % (
                first_lines(vtext))
        return "accepted", None
    if status != 1:
        return "violation", "rewrite %s: %s" % (describe(status), first_lines(text))
    lines = text.splitlines()
    prefix = "hotswap-opt: error: '%s': " % path
    if len(lines) != 1 or not text.endswith("\n"):
        return "violation", "rewrite exited 1 printing %d lines: %s" % (
            len(lines), first_lines(text, 3))
    if not lines[0].startswith(prefix) or len(lines[0]) == len(prefix):
        return "violation", "rewrite exited 1 but its line is not " \
            "\"hotswap-opt: error: 'FILE': ...\": %s" % first_lines(text)
    if os.path.lexists(out):
        return "violation", "rewrite exited 1 but created %s" % out
    return "refused", None


def main():
    if len(sys.argv) < 5:
        sys.exit("usage: accept-implies-verify.py HOTSWAP-OPT GEN-MALFORMED "
                 "WORKDIR [--every N] FIXTURE... [--light FIXTURE...]")
    tool, gen_path, work = sys.argv[1:4]
    fixtures = []  # (path, light)
    light = False
    # --every N: every Nth distinct mutant only (a sanitizer build, where
    # each run is several times slower; the release build runs them all).
    every = 1
    args = sys.argv[4:]
    while args:
        arg = args.pop(0)
        if arg == "--light":
            light = True
        elif arg == "--every":
            every = int(args.pop(0)) if args else 0
            if every < 1:
                sys.exit("accept-implies-verify.py: error: --every wants a "
                         "positive count")
        else:
            fixtures.append((arg, light))
    if not fixtures:
        sys.exit("accept-implies-verify.py: error: no fixture")
    gen = load_gen(gen_path)
    elf = sys.modules["elf"]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    violations = []
    mutants = []  # (fixture name, edits, path)
    distinct = 0
    seen = set()
    for fi, (fixture, light) in enumerate(fixtures):
        name = os.path.basename(fixture)
        data = open(fixture, "rb").read()
        base = os.path.join(work, "%d-base" % fi)
        shutil.copyfile(fixture, base)
        verdict, what = check(tool, base)
        if verdict != "accepted":
            violations.append("VIOLATION %s (no edit): the unmutated fixture is not "
                              "accepted: %s" % (name, what or verdict))
        seen.add(hashlib.sha256(data).digest())
        for edits in mutant_edits(elf, data, light):
            path = os.path.join(work, "%d-%d" % (fi, len(mutants)))
            err = make(gen, fixture, path, edits)
            if err is not None:
                violations.append("VIOLATION %s %s: gen-malformed.py failed: %s"
                                  % (name, " ".join(edits), err))
                continue
            digest = hashlib.sha256(open(path, "rb").read()).digest()
            if digest in seen:
                os.unlink(path)
                continue
            seen.add(digest)
            if distinct % every == 0:
                mutants.append((name, edits, path))
            else:
                os.unlink(path)
            distinct += 1

    accepted = refused = 0
    def check_and_clean(path):
        """check(); the mutant and its output removed unless a violation."""
        verdict, what = check(tool, path)
        if verdict != "violation":
            for p in (path, path + ".out"):
                if os.path.lexists(p):
                    os.unlink(p)
        return verdict, what

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = pool.map(lambda m: check_and_clean(m[2]), mutants)
        for (name, edits, path), (verdict, what) in zip(mutants, results):
            if verdict == "accepted":
                accepted += 1
            elif verdict == "refused":
                refused += 1
            else:
                violations.append("VIOLATION %s %s: %s (mutant %s)"
                                  % (name, " ".join(edits), what, path))
    for v in violations:
        print(v)
    print("%d mutants: %d accepted and verified, %d refused with one line, "
          "%d violations" % (len(mutants), accepted, refused, len(violations)))
    sys.exit(1 if violations else 0)


if __name__ == "__main__":
    main()
