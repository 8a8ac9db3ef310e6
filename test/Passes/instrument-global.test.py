"""Writes copies of an instrument output for gfx11 (wave32, loop.cl; see
instrument-global.test), or with "gfx10" for gfx10 or "flat" for gfx8's
flat form, with one thing of the counter code changed each. The counter code is found by the counter map; its layout (CounterCode.h):

  +0 s_waitcnt_depctr 0    +4 s_getpc_b64         +8 s_mov_b32 se, exec_lo
  +12 s_mov_b32 exec_lo, 1 +16 v_mov_b32 vo, DIST (literal at +20)
  +24 v_mov_b32 vd, 1      +28 v_mov_b32 vd+1, 0  +32 global_atomic (8)
  +40 s_waitcnt_vscnt      +44 s_mov_b32 exec_lo, se
"""
import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "utils"))
import elf as elffile  # noqa: E402  (utils/elf.py)

src, out = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else ""
data = open(src, "rb").read()
f = elffile.File(data)
entries = f.record_lines(".hotswap.counters.map")
first = int(entries[0]["code"], 16)


def write(name, patch):
    b = bytearray(data)
    patch(b)
    open(os.path.join(out, name + ".co"), "wb").write(b)


def word(addr, change):
    def patch(b):
        at = f.offset_of(addr)
        old, = struct.unpack_from("<I", b, at)
        struct.pack_into("<I", b, at, change(old))
    return patch


if mode == "flat":
    # gfx8's flat form: s_getpc +0, s_add_u32 +4 (literal at +8), s_addc_u32
    # +12, EXEC copied and set +16 and +20, v_mov_b32 vp, sa +24, vp+1, sa+1
    # +28, vd, 1 +32, vd+1, 0 +36, the atomic +40 (8), the wait +48, EXEC
    # given back +52. The address's low half moved from the high SGPR (src0,
    # bits 0-8, one more); 2 (inline constant 0x82) added instead of 1; s_nop
    # 0 over the wait.
    write("flat-swapped", word(first + 24, lambda w: w + 1))
    write("flat-two", word(first + 32, lambda w: (w & ~0x1FF) | 0x82))
    write("flat-nowait", word(first + 48, lambda w: 0xBF800000))
    sys.exit(0)
if mode == "based":
    # The based form (gfx1100, wave32). The entry: s_getpc +0, s_add_u32
    # +4 (literal at +8), s_addc_u32 +12, v_mov_b32 vd, 1 +16, v_mov_b32
    # vd+1, 0 +20, then a block's code: the copy of EXEC +0, EXEC set +4,
    # the atomic +8 (its offset in the low 13 bits of its first word), the
    # wait +16, EXEC given back +20. Counter 1's offset one counter on; the
    # entry's one made 2 (inline constant 0x82); s_nop 0 over counter 1's
    # wait.
    second = int(entries[1]["code"], 16)
    write("based-offset", word(second + 8,
                               lambda w: (w & ~0x1FFF) | ((w & 0x1FFF) + 8)))
    write("based-one", word(first + 16, lambda w: (w & ~0x1FF) | 0x82))
    write("based-nowait", word(second + 16, lambda w: 0xBF800000))
    # The entry's s_add_u32 made s_add_i32 (SOP2 opcode bit 24): its SCC
    # is no carry for s_addc_u32. Counter 1's wait made s_nop with the
    # wait's operand (the opcode field, bits 16-22, of SOPP cleared).
    write("based-signed", word(first + 4, lambda w: w ^ (1 << 24)))
    write("based-nop", word(second + 16, lambda w: w & ~(0x7F << 16)))
    sys.exit(0)
if mode == "gfx10":
    # gfx10's layout: the guard at +32, the atomic at +36, its wait at +44,
    # the dependency wait at +48, EXEC given back at +52. s_nop 0 over the
    # guard, and over the dependency wait.
    write("gfx10-noguard", word(first + 32, lambda w: 0xBF800000))
    write("gfx10-nolast", word(first + 48, lambda w: 0xBF800000))
    sys.exit(0)

# The distance one counter further on.
write("bad-distance", word(first + 20, lambda w: w + 8))
# EXEC given back from another SGPR (the copy's number + 1), after the
# wait for the copy (+44).
write("bad-restore", word(first + 48, lambda w: w + 1))
# s_nop 0 where the wait for the copy of EXEC was.
write("bad-nosa", word(first + 44, lambda w: 0xBF800000))
# Adding 2 (inline constant 0x82) instead of 1.
write("bad-two", word(first + 24, lambda w: (w & ~0x1FF) | 0x82))
# s_nop 0 (0xbf800000) where the wait for the store was.
write("bad-nowait", word(first + 40, lambda w: 0xBF800000))


# The kernel's descriptor says wave64 (kernel_code_properties bit 10 cleared
# at +56): its code moves only EXEC_LO.
def wave64(b):
    symtab = f.section(".symtab")
    kd = [s for s in f.symbols(symtab) if s["name"] == "loop.kd"][0]
    at = f.offset_of(kd["value"]) + 56
    kcp, = struct.unpack_from("<H", b, at)
    struct.pack_into("<H", b, at, kcp & ~(1 << 10))


write("bad-wave64", wave64)
