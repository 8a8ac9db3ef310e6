"""Writes copies of a clone-kernels output with one thing changed each
(see clone-kernels.test): the file offsets come from its section headers;
edited records are sealed again (their SHA-256) by utils/elf.py."""
import os
import struct
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "utils"))
import elf as elffile  # noqa: E402  (utils/elf.py; the records)

src, out = sys.argv[1], sys.argv[2]
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


def write(name, patch):
    b = bytearray(data)
    patch(b)
    open("%s/%s.so" % (out, name), "wb").write(b)


def at(addr):
    return text_off + addr - text_addr


def flip(addr, mask):
    def patch(b):
        b[at(addr)] ^= mask
    return patch


write("bad-insn", flip(0x4014, 1))    # v_mov_b32 v1, 1 -> 0
write("bad-branch", flip(0x4010, 1))  # s_cbranch_execz 5 -> 4
write("bad-pc", flip(0x4108, 4))      # s_add_u32's literal, 'data'


def bad_map(b):
    f = elffile.File(data)
    off, size = f.record_text_range(".hotswap.clones")
    text = bytes(b[off:off + size])
    old = b'"map":[["0x0","0x0"],["0x14","0x10"]]'
    new = b'"map":[["0x0","0x0"],["0x14","0x14"]]'
    assert old in text
    b[off:off + size] = text.replace(old, new)
    f.seal_record(b, ".hotswap.clones")


write("bad-map", bad_map)
