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
    # A lane-counting output (the form that finds its registers at each
    # block): its map says it counts waves; counter 1's distance made that
    # of counter 0 (8 bytes lower); counter 1's s_waitcnt lgkmcnt(0), its
    # last word, made s_nop 0.
    write_map("bad-unit", b'"unit":"lane"', b'"unit":"wave"')
    write("bad-distance", word(code[1] + 8, lambda d: d - 8))

    def nop(old):
        assert old == 0xBF8CC07F, hex(old)
        return 0xBF800000
    write("bad-wait", word(code[1] + 28, nop))
    sys.exit(0)

# Based code (counting waves): counter 1's atomic adds at offset 0, the
# base's own counter.
def offset(old):
    assert old == 8, hex(old)
    return 0
write("bad-offset", word(code[1] + 4, offset))
# Counter 1's atomic reads s[4:5] as its base (SBASE, the low 6 bits of
# its first word, counts register pairs).
write("bad-base", word(code[1], lambda w: (w & ~0x3F) | 2))
# The entry's code sets the one to 2 (s_mov_b64's inline constant).
def two(old):
    assert old & 0xFF == 0x81, hex(old)
    return (old & ~0xFF) | 0x82
write("bad-one", word(code[0] + 16, two))


# The map names counter 2's code 4 bytes further on: the code there is
# in no map entry, and the atomic there is not waited for.
def bad_map(b):
    text = bytes(b[map_off:map_off + map_size])
    old = ('"code":"%#x"' % code[2]).encode()
    new = ('"code":"%#x"' % (code[2] + 4)).encode()
    assert old in text and len(old) == len(new)
    b[map_off:map_off + map_size] = text.replace(old, new)
    records.seal_record(b, ".hotswap.counters.map")
write("bad-map", bad_map)
