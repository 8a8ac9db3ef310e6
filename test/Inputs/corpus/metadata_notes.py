"""Compares the NT_AMDGPU_METADATA notes of two `llvm-readelf --notes` dumps.

Usage: metadata_notes.py BEFORE.txt AFTER.txt
Prints one line per kernel, note by note:
    note N: SYMBOL .sgpr_count A -> B (raised|same|LOWERED)
and "FAILED: ..." when the two dumps do not have the same notes, the same
kernels in each note, or the same metadata apart from .sgpr_count values.
"""
import re
import sys


def notes(path):
    """[(kernels: [(symbol, sgpr_count)], text without .sgpr_count values)]"""
    text = open(path).read()
    parts = re.split(r"^\s*AMDGPU\s+0x[0-9a-f]+\s+NT_AMDGPU_METADATA.*$", text,
                     flags=re.M)[1:]
    out = []
    for part in parts:
        # Up to the next note, or the next note section (the provenance
        # record a rewrite adds is one).
        part = re.split(r"^\s*\S+\s+0x[0-9a-f]+\s+NT_|^Displaying notes found in:",
                        part, flags=re.M)[0].rstrip()
        kernels = []
        for k in re.split(r"^  - \.", part, flags=re.M)[1:]:
            sym = re.search(r"\.symbol:\s+(\S+)", "." + k)
            sgpr = re.search(r"\.sgpr_count:\s+(\d+)", "." + k)
            kernels.append((sym.group(1) if sym else "?",
                            int(sgpr.group(1)) if sgpr else None))
        rest = re.sub(r"(\.sgpr_count:\s+)\d+", r"\1N", part)
        out.append((kernels, rest))
    return out


def main(before, after):
    a, b = notes(before), notes(after)
    print("%d notes" % len(a))
    if len(a) != len(b):
        print("FAILED: %d notes before, %d after" % (len(a), len(b)))
        return
    for i, ((ka, ra), (kb, rb)) in enumerate(zip(a, b)):
        if [s for s, _ in ka] != [s for s, _ in kb] or ra != rb:
            print("FAILED: note %d changed beyond .sgpr_count" % i)
        for (sym, x), (_, y) in zip(ka, kb):
            what = "same" if x == y else "raised" if x < y else "LOWERED"
            print("note %d: %s .sgpr_count %s -> %s (%s)" % (i, sym, x, y, what))


if __name__ == "__main__":
    main(*sys.argv[1:])
