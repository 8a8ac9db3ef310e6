"""Writes copies of patch-insns<place=site> outputs (see
patch-insns-in-place.test) with one thing changed each: the file offsets
come from the program headers and an edited record is sealed again (its
SHA-256), both by utils/elf.py. Usage: SRC OUT KIND, KIND one of gfx90a (the
ds_read2 split), gfx1010 (a hook with the store waits), hazard (the guarded
hook of h9.so), gateway (the ds_read2 split of far-gateway.cl)."""
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "utils"))
import elf as elffile  # noqa: E402  (utils/elf.py; the records)

src, out, kind = sys.argv[1], sys.argv[2], sys.argv[3]
data = open(src, "rb").read()
at = elffile.File(data).offset_of  # a loaded address -> its file offset


def write(name, patch):
    b = bytearray(data)
    patch(b)
    open("%s/%s.co" % (out, name), "wb").write(b)


def put(addr, old, new):
    def patch(b):
        got = bytes(b[at(addr):at(addr) + 4])
        assert got == old, got.hex()
        b[at(addr):at(addr) + 4] = new
    return patch


def record(old, new):
    def patch(b):
        f = elffile.File(data)
        off, size = f.record_text_range(".hotswap.patches")
        text = bytes(b[off:off + size])
        assert old in text, text
        assert len(old) == len(new)
        b[off:off + size] = text.replace(old, new)
        f.seal_record(b, ".hotswap.patches")
    return patch


if kind == "gfx90a":
    # The body at 0x3000: ds_read_b32 v5, v0; ds_read_b32 v1, v0 offset:4;
    # s_waitcnt lgkmcnt(0) (0x3010); v_mov_b32 v0, v5 (0x3014); s_branch
    # back (0x3018). The site at 0x1654: s_branch 1642, s_nop 0.
    # v_mov_b32 v0, v5 -> v_mov_b32 v2, v5 (v2 holds the output address)
    write("bad-write", put(0x3014, bytes.fromhex("0503007e"),
                           bytes.fromhex("0503047e")))
    # s_waitcnt lgkmcnt(0) -> s_nop 0
    write("bad-drain", put(0x3010, bytes.fromhex("7fc08cbf"),
                           bytes.fromhex("000080bf")))
    # The site branches one dword past its body.
    write("bad-slot", put(0x1654, bytes.fromhex("6a0682bf"),
                          bytes.fromhex("6b0682bf")))
    # The body branches back one dword short.
    write("bad-back", put(0x3018, bytes.fromhex("90f982bf"),
                          bytes.fromhex("8ff982bf")))
    # The record says the body runs before the instruction, not instead.
    write("bad-where", record(b'"where":"replace"', b'"where":"before" '))
    # The record's assembly is another register than the bytes.
    write("bad-asm", record(b"v_mov_b32 v0, v5", b"v_mov_b32 v0, v6"))
    # Records that do not hold together (each sealed again): a site past
    # the code's size, inserted code past the body, a site at the last
    # instruction (s_endpgm, 0x74), a body outside the object.
    write("bad-rec-size", record(b'"size":"0x78"', b'"size":"0x18"'))
    write("bad-rec-insert", record(b'"insert_end":"0x18"',
                                   b'"insert_end":"0x98"'))
    write("bad-rec-site", record(b'"site":"0x54"', b'"site":"0x74"'))
    write("bad-rec-body", record(b'"body":"0x3000"', b'"body":"0xf000"'))
elif kind == "gfx1010":
    # The body's first instruction, s_waitcnt_vscnt null, 0x0 -> s_nop 0.
    write("bad-nowait", put(0x3000, bytes.fromhex("0000fdbb"),
                            bytes.fromhex("000080bf")))
elif kind == "hazard":
    # The guard before the VMEM: s_nop 4 -> s_nop 0.
    write("bad-guard", put(0x3004, bytes.fromhex("040080bf"),
                           bytes.fromhex("000080bf")))
elif kind == "gateway":
    # The gateway at 0x1a60: s_getpc_b64 s[2:3]; s_add_u32 s2, s2, lit
    # (0x1a64, its literal at 0x1a68); s_addc_u32 s3, s3, lit; s_setpc_b64.
    write("bad-gw-target", put(0x1a68, bytes.fromhex("9c250400"),
                               bytes.fromhex("a0250400")))

    def s0(b):  # the same long jump with s[0:1]
        for addr, old, new in ((0x1a60, "001c82be", "001c80be"),
                               (0x1a64, "02ff0280", "00ff0080"),
                               (0x1a6c, "03ff0382", "01ff0182"),
                               (0x1a74, "021d80be", "001d80be")):
            put(addr, bytes.fromhex(old), bytes.fromhex(new))(b)
    write("bad-gw-regs", s0)
    # The record moves the gateway into lds2's code, or makes it longer
    # than the padding.
    write("bad-gw-where", record(b'"gateway":"0x1a60"',
                                 b'"gateway":"0x1960"'))
    write("bad-gw-size", record(b'"gateway_size":"0x18"',
                                b'"gateway_size":"0xf8"'))
    # The body's long jump back: its s_add_u32's literal (0x4401c + 4).
    write("bad-gw-back", put(0x44020, bytes.fromhex("64d9fbff"),
                             bytes.fromhex("68d9fbff")))
