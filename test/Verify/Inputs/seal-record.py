"""Makes the SHA-256 of record section SECTION of IN (an SHT_NOTE of the
record family, whose bytes a test edited) match its bytes again and writes
OUT: a record forged with a valid digest, so that tests reach the checks
behind the digest's (utils/elf.py seal_record).

  seal-record.py IN OUT SECTION
"""
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "utils"))
import elf as elffile  # noqa: E402  (utils/elf.py)

src, out, name = sys.argv[1:4]
data = open(src, "rb").read()
f = elffile.File(data)
sec = f.section(name)
if sec is None or sec["type"] != elffile.SHT_NOTE:
    sys.exit("seal-record.py: error: no note section '%s'" % name)
buf = bytearray(data)
f.seal_record(buf, name)
open(out, "wb").write(buf)
