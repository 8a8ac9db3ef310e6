"""Writes copies of an instrument output (gfx90a, loop.cl; see
instrument.test) with one thing changed each. Addresses come from the
section headers; the counter code is found by its counter map (read, and
sealed again once edited, by utils/elf.py)."""
import os
import struct
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "utils"))
import elf as elffile  # noqa: E402  (utils/elf.py)

src, out = sys.argv[1], sys.argv[2]
lane_as_wave = "--lane-as-wave" in sys.argv[3:]
data = open(src, "rb").read()
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)


def sections():
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
            for i in range(shnum)]
    strtab = hdrs[shstrndx][4]
    for h in hdrs:
        name = data[strtab + h[0]:data.index(b"\0", strtab + h[0])].decode()
        yield name, h[3], h[4], h[5]  # name, addr, offset, size


secs = {n: (a, o, s) for n, a, o, s in sections()}
text_addr, text_off, _ = secs[".hotswap.clone.text"]
records = elffile.File(data)
map_off, map_size = records.record_text_range(".hotswap.counters.map")
entries = records.record_lines(".hotswap.counters.map")
code = [int(e["code"], 16) for e in entries]


def write(name, patch):
    b = bytearray(data)
    patch(b)
    open("%s/%s.co" % (out, name), "wb").write(b)


def at(addr):
    return text_off + addr - text_addr


def word(addr, change):
    def patch(b):
        old, = struct.unpack_from("<I", b, at(addr))
        struct.pack_into("<I", b, at(addr), change(old))
    return patch


def write_map(name, old, new):
    def patch(b):
        text = bytes(b[map_off:map_off + map_size])
        assert old in text and len(old) == len(new)
        b[map_off:map_off + map_size] = text.replace(old, new)
        records.seal_record(b, ".hotswap.counters.map")
    write(name, patch)


if lane_as_wave:
    # A lane-counting output whose map says it counts waves.
    write_map("bad-unit", b'"unit":"lane"', b'"unit":"wave"')
    sys.exit(0)

# Counter 1's distance made that of counter 0 (8 bytes lower).
write("bad-distance", word(code[1] + 8, lambda d: d - 8))
# Counter 1's s_waitcnt lgkmcnt(0) -> s_nop 0.
def nop(old):
    assert old == 0xBF8CC07F, hex(old)
    return 0xBF800000
write("bad-wait", word(code[1] + 24, nop))


# The map names counter 2's code 4 bytes further on: the code there reads
# the PC and is in no map entry.
def bad_map(b):
    text = bytes(b[map_off:map_off + map_size])
    old = ('"code":"%#x"' % code[2]).encode()
    new = ('"code":"%#x"' % (code[2] + 4)).encode()
    assert old in text and len(old) == len(new)
    b[map_off:map_off + map_size] = text.replace(old, new)
    records.seal_record(b, ".hotswap.counters.map")
write("bad-map", bad_map)
