"""Writes copies of a patch-insns output (gfx90a, the ds_read2 split; see
patch-insns.test) with one thing changed each: the file offsets come from
its section headers; edited records are sealed again (their SHA-256) by
utils/elf.py."""
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
    open("%s/%s.co" % (out, name), "wb").write(b)


def at(addr):
    return text_off + addr - text_addr


def put(addr, old, new):
    def patch(b):
        assert bytes(b[at(addr):at(addr) + 4]) == old, b[at(addr):at(addr) + 4].hex()
        b[at(addr):at(addr) + 4] = new
    return patch


# v_mov_b32 v0, v5 -> v_mov_b32 v2, v5 (v2 holds the output address)
write("bad-write", put(0x3068, bytes.fromhex("0503007e"), bytes.fromhex("0503047e")))
# s_waitcnt lgkmcnt(0) -> s_nop 0
write("bad-drain", put(0x3064, bytes.fromhex("7fc08cbf"), bytes.fromhex("000080bf")))


def bad_replaced(b):
    f = elffile.File(data)
    off, size = f.record_text_range(".hotswap.clones")
    text = bytes(b[off:off + size])
    old = b',"replaced":["0x54"]'
    assert old in text
    b[off:off + size] = text.replace(old, b" " * len(old))
    f.seal_record(b, ".hotswap.clones")


write("bad-replaced", bad_replaced)
