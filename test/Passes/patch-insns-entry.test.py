"""Writes a copy of a patch-insns output with one instruction word of its
`.hotswap.clone.text` changed: python3 patch-insns-entry.test.py IN OUT
ADDR OLD NEW (ADDR the address, OLD and NEW the word's bytes in hex, as
llvm-objdump prints the word)."""
import struct
import sys

src, out, addr, old, new = sys.argv[1:6]
data = bytearray(open(src, "rb").read())
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
hdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        for i in range(shnum)]
strtab = hdrs[shstrndx][4]
for h in hdrs:
    name = data[strtab + h[0]:data.index(b"\0", strtab + h[0])].decode()
    if name == ".hotswap.clone.text":
        at = h[4] + int(addr, 0) - h[3]
        break
else:
    sys.exit("no .hotswap.clone.text")
have = struct.unpack_from("<I", data, at)[0]
assert have == int(old, 16), "%08x at %s" % (have, addr)
struct.pack_into("<I", data, at, int(new, 16))
open(out, "wb").write(data)
