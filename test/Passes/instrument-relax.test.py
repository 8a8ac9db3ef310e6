"""Writes copies of an instrument output of Inputs/instrument/far.s (see
instrument-relax.test) with one thing of a relaxed branch changed each.
The relaxations are found through the clone record; ELF structures are
read by utils/elf.py."""
import os
import struct
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "utils"))
import elf  # noqa: E402  (utils/elf.py)

src, out = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
f = elf.File(data)
rec_off, rec_size = f.record_text_range(".hotswap.clones")
record, = f.record_lines(".hotswap.clones")
clone = int(record["clone"], 16)
# The forward branch's relaxation first, then the back edge's.
(fwd, _), (back, back_end) = [(int(b, 16) + clone, int(e, 16) + clone)
                              for b, e in record["relaxed"]]


def write(name, patch):
    b = bytearray(data)
    patch(b)
    open("%s/%s.co" % (out, name), "wb").write(b)


def word(addr, value):
    def patch(b):
        struct.pack_into("<I", b, f.offset_of(addr), value)
    return patch


def words(pairs):
    def patch(b):
        for addr, value in pairs:
            struct.pack_into("<I", b, f.offset_of(addr), value)
    return patch


def read(addr):
    return struct.unpack_from("<I", data, f.offset_of(addr))[0]


# The forward long jump (after its s_branch): s_getpc_b64, s_add_u32 with
# its literal, s_addc_u32, s_setpc_b64. Its target one word further.
getpc = fwd + 4
assert read(getpc) & 0xffffff00 == 0xbe801c00 or read(getpc) >> 23 == 0x17d
write("bad-target", word(getpc + 8, read(getpc + 8) + 4))

# The back edge's long jump: s_cselect_b32 sQ, s_getpc_b64 s[P:P+1], the
# adds, s_cmp_lg_u32 sQ, s_setpc_b64. Its pair made s[0:1], which the loop
# head reads (s0), and SCC kept in s6: every SGPR field of the six.
cselect, getpc = back + 4, back + 8
add, addc, cmp, setpc = getpc + 4, getpc + 12, getpc + 20, getpc + 24
assert back_end == setpc + 4
write("live-pair", words([
    (cselect, (read(cselect) & ~(0x7f << 16)) | (6 << 16)),  # sdst
    (getpc, read(getpc) & ~(0x7f << 16)),                    # sdst
    (add, read(add) & ~((0x7f << 16) | 0xff)),               # sdst, ssrc0
    (addc, (read(addc) & ~((0x7f << 16) | 0xff)) | (1 << 16) | 1),
    (cmp, (read(cmp) & ~0xff) | 6),                          # ssrc0
    (setpc, read(setpc) & ~0xff),                            # ssrc0
]))
# Its pair made the base the copy's entry sets up for counter code (the
# based form: the entry's s_getpc_b64 names it), which a relaxation may
# not write, free as it is at the target.
base = (read(clone) >> 16) & 0x7f
write("reserved-pair", words([
    (getpc, (read(getpc) & ~(0x7f << 16)) | (base << 16)),
    (add, (read(add) & ~((0x7f << 16) | 0xff)) | (base << 16) | base),
    (addc, (read(addc) & ~((0x7f << 16) | 0xff)) | ((base + 1) << 16)
     | (base + 1)),
    (setpc, (read(setpc) & ~0xff) | base),
]))
# SCC not given back: s_cmp_lg_u32 becomes s_nop 0.
write("no-scc", word(cmp, 0xbf800000))


# A record that does not say the branches were relaxed (the same length:
# blanks in the line).
def no_record(b):
    text = data[rec_off:rec_off + rec_size]
    start = text.index(b'"relaxed"')
    end = text.index(b"]],", start) + 3
    o = rec_off + start
    b[o:o + end - start] = b" " * (end - start)
    f.seal_record(b, ".hotswap.clones")


write("no-record", no_record)
