"""Checks a directory of libhotswap-counters dumps against what
hotswap-hsa-standin set: counter i of executable E on GPU G is
i*3+1 + 1000*E + 100*G.

Usage: check-dumps.py DIR EXECUTABLES GPUS COUNTERS

Every .bin must hold COUNTERS little-endian u64 counts of that pattern for
some (E, G), each (E, G) exactly once, with a .json sidecar naming it and
its sequence number. Prints "N dumps as the stand-in set them", or the
first problem (exit 1). The order of the dumps is not checked: with
--threads it is whatever order the executables were frozen in.
"""
import json
import os
import re
import struct
import sys


def main():
    d, execs, gpus, counters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    seen = set()
    sequences = set()
    names = sorted(n for n in os.listdir(d) if n.endswith(".bin"))
    for name in names:
        m = re.fullmatch(r"hotswap-counters\.(\d+)\.(\d+)\.bin", name)
        if not m:
            sys.exit("unexpected file name '%s'" % name)
        data = open(os.path.join(d, name), "rb").read()
        if len(data) != 8 * counters:
            sys.exit("'%s': %d bytes, not %d" % (name, len(data), 8 * counters))
        values = struct.unpack("<%dQ" % counters, data)
        base = values[0] - 1
        e, g = base // 1000, (base % 1000) // 100
        if base % 100 or not (0 <= e < execs and 0 <= g < gpus):
            sys.exit("'%s': counter 0 is %d, no executable's" % (name, values[0]))
        if values != tuple(i * 3 + 1 + base for i in range(counters)):
            sys.exit("'%s': counts %s are not executable %d's on GPU %d" % (name, values, e, g))
        if (e, g) in seen:
            sys.exit("'%s': a second dump of executable %d on GPU %d" % (name, e, g))
        seen.add((e, g))
        side = json.load(open(os.path.join(d, name[:-4] + ".json")))
        if side["dump"] != name or side["sequence"] != int(m.group(2)):
            sys.exit("'%s': its sidecar says %s" % (name, side))
        sequences.add(side["sequence"])
    if len(seen) != execs * gpus:
        sys.exit("%d dumps, not %d" % (len(seen), execs * gpus))
    if sequences != set(range(execs * gpus)):
        sys.exit("sequence numbers are not 0..%d" % (execs * gpus - 1))
    print("%d dumps as the stand-in set them" % len(seen))


main()
