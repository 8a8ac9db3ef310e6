# Leads the first PT_NOTE of an ELF64 little-endian file to the section
# named SECTION (its offset, address and size), writing the result to OUT.
import struct
import sys

src, name, out = sys.argv[1], sys.argv[2].encode(), sys.argv[3]
data = bytearray(open(src, 'rb').read())
phoff, shoff = struct.unpack_from('<QQ', data, 0x20)
phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from('<HHHHH', data, 0x36)


def section(i):
    return struct.unpack_from('<IIQQQQ', data, shoff + i * shentsize)


names = section(shstrndx)[4]
for i in range(shnum):
    sh_name, _, _, addr, off, size = section(i)
    end = data.index(b'\0', names + sh_name)
    if bytes(data[names + sh_name:end]) == name:
        break
else:
    sys.exit('no section ' + name.decode())
for i in range(phnum):
    at = phoff + i * phentsize
    if struct.unpack_from('<I', data, at)[0] == 4:  # PT_NOTE
        struct.pack_into('<QQQQQ', data, at + 8, off, addr, addr, size, size)
        break
else:
    sys.exit('no PT_NOTE')
open(out, 'wb').write(data)
