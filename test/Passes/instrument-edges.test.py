"""Writes copies of an instrument<counters=edge> output of
Inputs/instrument/crossing.s (see instrument-edges.test) with its edge
counter code or its record changed, and a dump of the counter area. ELF
structures are read by utils/elf.py."""
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
(edge, _), = [(int(b, 16) + clone, int(e, 16) + clone)
              for b, e in record["fallthrough"]]


def write(name, patch):
    b = bytearray(data)
    patch(b)
    open("%s/%s.co" % (out, name), "wb").write(b)


def distance_off_by_8(b):
    # Based code: s_atomic_add_x2, its offset from the base in its second
    # word.
    o = f.offset_of(edge + 4)
    old, = struct.unpack_from("<I", b, o)
    struct.pack_into("<I", b, o, old + 8)


def no_record(b):
    text = data[rec_off:rec_off + rec_size]
    start = text.index(b'"fallthrough"')
    end = text.index(b"]],", start) + 3
    o = rec_off + start
    b[o:o + end - start] = b" " * (end - start)
    f.seal_record(b, ".hotswap.clones")


write("bad-distance", distance_off_by_8)
write("no-record", no_record)
# A run's counts: 10 waves; 'a' 6, 'c' 3, 'b' 4, 'd' 7, the end 10; the
# edge a -> c 2 times (counter 6).
open("%s/run.dump" % out, "wb").write(struct.pack("<7Q", 10, 6, 3, 4, 7, 10,
                                                  2))
