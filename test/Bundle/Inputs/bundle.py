#!/usr/bin/env python3
"""Builds, reads and breaks offload bundles for test/Bundle, independently of
the library under test (clang/docs/ClangOffloadBundler.rst has the formats;
include/hotswap/Bundle/OffloadBundle.h and CompressedBundle.h sum them up).

Usage (lit: %bundle is "python bundle.py"):

  bundle.py build OUT [--align N] ID[=FILE]...
      Writes a plain bundle laid out as clang-offload-bundler does: the header
      table in the order given, each payload at the end of what precedes it
      rounded up to N (default 4096), zero padding, nothing after the last
      payload. "ID" alone (or "ID=") is an empty entry (HIP's host entry).
  bundle.py compress IN OUT --version 2|3 [--level L]
      Writes IN (a plain bundle) as a zlib CCOB of that version (the hash is
      the low 64 bits of the MD5 of IN). clang-offload-bundler -compress
      writes zstd ones.
  bundle.py layout FILE
      Prints the layout: for a CCOB its header fields, whether the total size
      is the file's size, and (zlib: decompressed here) whether the hash is
      right, then the bundle inside; for a plain bundle the header size, one
      line per entry (offset, size, the largest power of two up to 4096 that
      divides the offset, and the MD5 of the payload) and the properties HIP
      relies on: header within 4096 bytes, payload offsets increasing, zero
      padding, no trailing bytes.
  bundle.py md5low FILE
      "md5low=0x%016x size=0x%x": the low 64 bits of FILE's MD5 as a CCOB
      header stores it, and FILE's size.
  bundle.py decompress FILE OUT
      Writes the bundle inside a zlib CCOB.
  bundle.py extract FILE ID OUT
      Writes the payload of entry ID (plain bundle, or zlib CCOB).
  bundle.py bomb OUT --claim N (--random N [--seed S] | --zstd-zeros N
                [--no-content-size | --frame-size M] [--raw-blocks]
                | --zlib-zeros N)
      Writes a v3 CCOB whose header claims N uncompressed bytes over a
      stream of: N random bytes (zstd method; not a valid stream); a real
      zstd frame of RLE blocks that decompresses to N zero bytes in 4
      bytes per 128 KiB (raw blocks, the zeros themselves, with
      --raw-blocks), whose header declares N as its content size (M with
      --frame-size, none with --no-content-size); or a zlib stream of N
      zero bytes. The hash is that of no bytes: these bundles must be
      refused before it matters.
  bundle.py edit IN OUT [--section NAME] EDIT...
      Applies each EDIT in order to the bytes of IN (positions from the
      bytes as edited so far). With --section, IN is an ELF64 file (a HIP
      host binary) and the edits apply to the bundle at the start of its
      section NAME, in place (edits that change the size are refused):
        count=V  entry[N].offset=V  entry[N].size=V  entry[N].idlen=V
                                 (plain bundle header fields; entries=V is
                                 count=V for lit, which substitutes 'count')
        version=V  method=V  total=V  uncompressed=V  hash=V
                                 (CCOB header fields; total=size is the
                                 current size; v2 fields are 32-bit)
        entry[N].payload@OFF=HEX (plain: overwrite bytes of a payload)
        stream@OFF=HEX           (CCOB: overwrite bytes of the stream)
        truncate=N               (keep the first N bytes; N may be negative:
                                 drop -N bytes from the end)
        append=HEX
      Values are integers in any Python base.
"""
import argparse
import hashlib
import os
import struct
import sys
import zlib

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "utils"))
import elf  # noqa: E402  (utils/elf.py)

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB = b"CCOB"


def fail(msg):
    sys.exit("bundle.py: error: " + msg)


def align_up(v, a):
    return (v + a - 1) // a * a


def md5low(data):
    return struct.unpack("<Q", hashlib.md5(data).digest()[:8])[0]


def build(entries, align):
    """entries: [(id bytes, payload bytes)] -> bundle bytes."""
    header = len(MAGIC) + 8 + sum(24 + len(i) for i, _ in entries)
    pos, offsets = header, []
    for _, p in entries:
        off = align_up(pos, align)
        offsets.append(off)
        pos = off + len(p)
    out = bytearray(pos)
    out[0:24] = MAGIC
    struct.pack_into("<Q", out, 24, len(entries))
    at = 32
    for (ident, p), off in zip(entries, offsets):
        struct.pack_into("<QQQ", out, at, off, len(p), len(ident))
        out[at + 24:at + 24 + len(ident)] = ident
        at += 24 + len(ident)
        out[off:off + len(p)] = p
    return bytes(out)


def parse(data):
    """Plain bundle -> (entries [(id, offset, size, field position)],
    end of header)."""
    if data[:24] != MAGIC:
        fail("not a plain offload bundle")
    (n,) = struct.unpack_from("<Q", data, 24)
    at, entries = 32, []
    for _ in range(n):
        off, size, idlen = struct.unpack_from("<QQQ", data, at)
        entries.append((data[at + 24:at + 24 + idlen].decode(errors="replace"),
                        off, size, at))
        at += 24 + idlen
    return entries, at


def ccob_header(data):
    """CCOB -> dict of its header fields and where they are."""
    version, method = struct.unpack_from("<HH", data, 4)
    h = dict(version=version, method=method)
    if version == 2:
        h["total"], h["uncompressed"], h["hash"] = struct.unpack_from("<IIQ", data, 8)
        h["size"], h["fields"] = 24, {"total": (8, "I"), "uncompressed": (12, "I"),
                                      "hash": (16, "Q")}
    elif version == 3:
        h["total"], h["uncompressed"], h["hash"] = struct.unpack_from("<QQQ", data, 8)
        h["size"], h["fields"] = 32, {"total": (8, "Q"), "uncompressed": (16, "Q"),
                                      "hash": (24, "Q")}
    else:
        fail("CCOB version %d: only 2 and 3 are known here" % version)
    return h


def decompress(data):
    h = ccob_header(data)
    if h["method"] != 0:
        return None
    return zlib.decompress(data[h["size"]:])


def alignment(offset):
    a = 1
    while a < 4096 and offset % (2 * a) == 0:
        a *= 2
    return a


def print_layout(data):
    if data[:4] == CCOB:
        h = ccob_header(data)
        print("compressed bundle: version %d, method %s, total %s, uncompressed 0x%x, "
              "hash 0x%016x"
              % (h["version"], {0: "zlib", 1: "zstd"}.get(h["method"], str(h["method"])),
                 "= file size" if h["total"] == len(data) else
                 "0x%x != file size 0x%x" % (h["total"], len(data)),
                 h["uncompressed"], h["hash"]))
        inner = decompress(data)
        if inner is None:
            print("(zstd: not decompressed here)")
            return
        print("decompressed: 0x%x bytes, hash %s"
              % (len(inner), "matches" if md5low(inner) == h["hash"] else
                 "0x%016x does not match" % md5low(inner)))
        data = inner
    entries, header = parse(data)
    print("plain bundle: %d entries, header 0x%x bytes, size 0x%x"
          % (len(entries), header, len(data)))
    for ident, off, size, _ in entries:
        print("entry %s offset=0x%x size=0x%x align=%d md5=%s"
              % (ident, off, size, alignment(off),
                 hashlib.md5(data[off:off + size]).hexdigest()[:16]))
    payloads = [(off, size) for _, off, size, _ in entries if size]
    offsets = [off for off, _ in payloads]
    end = max([header] + [off + size for _, off, size, _ in entries])
    covered = [(0, header)] + sorted((o, o + s) for o, s in payloads)
    pad, last = bytearray(), 0
    for start, stop in covered:
        if start > last:
            pad += data[last:start]
        last = max(last, stop)
    yes = lambda c: "yes" if c else "no"
    print("header within 4096: %s" % yes(header <= 4096))
    print("offsets increasing: %s" % yes(all(a < b for a, b in zip(offsets, offsets[1:]))))
    print("padding zero: %s" % yes(pad.count(0) == len(pad)))
    print("trailing bytes: %d" % (len(data) - end))


def parse_value(v, data):
    if v == "size":
        return len(data)
    return int(v, 0)


def edit(data, edits):
    data = bytearray(data)
    for e in edits:
        key, _, value = e.partition("=")
        if key == "truncate":
            n = int(value, 0)
            data = data[:n] if n >= 0 else data[:len(data) + n]
        elif key == "append":
            data += bytes.fromhex(value)
        elif key.startswith("stream@"):
            h = ccob_header(data)
            at = h["size"] + int(key[7:], 0)
            b = bytes.fromhex(value)
            data[at:at + len(b)] = b
        elif key in ("version", "method"):
            struct.pack_into("<H", data, 4 if key == "version" else 6, int(value, 0))
        elif key in ("total", "uncompressed", "hash"):
            h = ccob_header(data)
            off, fmt = h["fields"][key]
            v = parse_value(value, data)
            struct.pack_into("<" + fmt, data, off, v & (0xffffffff if fmt == "I" else
                                                        0xffffffffffffffff))
        elif key in ("count", "entries"):
            struct.pack_into("<Q", data, 24, int(value, 0) & 0xffffffffffffffff)
        elif key.startswith("entry["):
            n = int(key[6:key.index("]")])
            field = key[key.index("]") + 2:]
            entries, _ = parse(data)
            _, off, _, at = entries[n]
            if field.startswith("payload@"):
                pos = off + int(field[8:], 0)
                b = bytes.fromhex(value)
                data[pos:pos + len(b)] = b
                continue
            idx = {"offset": 0, "size": 8, "idlen": 16}[field]
            struct.pack_into("<Q", data, at + idx, int(value, 0) & 0xffffffffffffffff)
        else:
            fail("unknown edit '%s'" % e)
    return bytes(data)


def section_range(data, name):
    """(file offset, size) of the ELF64 little-endian section NAME."""
    if not elf.is_elf64le(data):
        fail("--section needs an ELF64 little-endian file")
    s = elf.File(data).section(name)
    if s is None:
        fail("no section '%s'" % name)
    return s["offset"], s["size"]


def zstd_zeros(n, content_size=True, raw=False, frame_size=None):
    """A zstd frame (RFC 8878) that decompresses to n zeros: RLE blocks (4
    bytes each), or raw blocks (the zeros themselves) if raw. The frame
    header declares frame_size as its content size (default n)."""
    block = 128 * 1024
    # Frame header descriptor: content size field of 8 bytes (flag 3) or
    # none (flag 0); not single-segment, so a window descriptor follows
    # (exponent 7: a 128 KiB window).
    out = bytearray(struct.pack("<I", 0xFD2FB528))
    if content_size:
        out += bytes([0xC0, 7 << 3]) + struct.pack(
            "<Q", n if frame_size is None else frame_size)
    else:
        out += bytes([0x00, 7 << 3])
    left = n
    while True:
        size = min(left, block)
        left -= size
        last = 1 if left == 0 else 0
        if raw:  # block type 0: raw
            out += struct.pack("<I", last | (size << 3))[:3] + bytes(size)
        else:  # block type 1: RLE
            out += struct.pack("<I", last | (1 << 1) | (size << 3))[:3] + b"\0"
        if last:
            return bytes(out)


def zlib_zeros(n):
    c = zlib.compressobj(9)
    out = bytearray()
    chunk = bytes(1 << 20)
    while n:
        k = min(n, len(chunk))
        out += c.compress(chunk[:k])
        n -= k
    return bytes(out + c.flush())


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("out")
    b.add_argument("--align", type=lambda v: int(v, 0), default=4096)
    b.add_argument("entries", nargs="+")
    c = sub.add_parser("compress")
    c.add_argument("input")
    c.add_argument("out")
    c.add_argument("--version", type=int, choices=[2, 3], required=True)
    c.add_argument("--level", type=int, default=6)
    lo = sub.add_parser("layout")
    lo.add_argument("file")
    m = sub.add_parser("md5low")
    m.add_argument("file")
    d = sub.add_parser("decompress")
    d.add_argument("file")
    d.add_argument("out")
    x = sub.add_parser("extract")
    x.add_argument("file")
    x.add_argument("id")
    x.add_argument("out")
    bo = sub.add_parser("bomb")
    bo.add_argument("out")
    bo.add_argument("--claim", type=lambda v: int(v, 0), required=True)
    kind = bo.add_mutually_exclusive_group(required=True)
    kind.add_argument("--random", type=lambda v: int(v, 0))
    kind.add_argument("--zstd-zeros", type=lambda v: int(v, 0))
    kind.add_argument("--zlib-zeros", type=lambda v: int(v, 0))
    bo.add_argument("--no-content-size", action="store_true")
    bo.add_argument("--raw-blocks", action="store_true")
    bo.add_argument("--frame-size", type=lambda v: int(v, 0))
    bo.add_argument("--seed", type=int, default=1)
    e = sub.add_parser("edit")
    e.add_argument("input")
    e.add_argument("out")
    e.add_argument("--section")
    e.add_argument("edits", nargs="+")
    args = ap.parse_args()

    if args.cmd == "build":
        entries = []
        for spec in args.entries:
            ident, _, path = spec.partition("=")
            payload = open(path, "rb").read() if path else b""
            entries.append((ident.encode(), payload))
        with open(args.out, "wb") as f:
            f.write(build(entries, args.align))
    elif args.cmd == "compress":
        data = open(args.input, "rb").read()
        stream = zlib.compress(data, args.level)
        if args.version == 2:
            hdr = CCOB + struct.pack("<HHIIQ", 2, 0, 24 + len(stream), len(data), md5low(data))
        else:
            hdr = CCOB + struct.pack("<HHQQQ", 3, 0, 32 + len(stream), len(data), md5low(data))
        with open(args.out, "wb") as f:
            f.write(hdr + stream)
    elif args.cmd == "layout":
        print_layout(open(args.file, "rb").read())
    elif args.cmd == "md5low":
        data = open(args.file, "rb").read()
        print("md5low=0x%016x size=0x%x" % (md5low(data), len(data)))
    elif args.cmd == "decompress":
        data = open(args.file, "rb").read()
        if data[:4] != CCOB:
            fail("not a CCOB")
        inner = decompress(data)
        if inner is None:
            fail("zstd CCOB: not decompressed here")
        with open(args.out, "wb") as f:
            f.write(inner)
    elif args.cmd == "extract":
        data = open(args.file, "rb").read()
        if data[:4] == CCOB:
            data = decompress(data)
            if data is None:
                fail("zstd CCOB: use clang-offload-bundler -unbundle")
        for ident, off, size, _ in parse(data)[0]:
            if ident == args.id:
                with open(args.out, "wb") as f:
                    f.write(data[off:off + size])
                return 0
        fail("no entry '%s'" % args.id)
    elif args.cmd == "bomb":
        method = 1
        if args.random is not None:
            import random
            rng = random.Random(args.seed)
            stream = bytes(rng.getrandbits(8) for _ in range(args.random))
        elif args.zstd_zeros is not None:
            stream = zstd_zeros(args.zstd_zeros, not args.no_content_size,
                                args.raw_blocks, args.frame_size)
        else:
            stream = zlib_zeros(args.zlib_zeros)
            method = 0
        hdr = CCOB + struct.pack("<HHQQQ", 3, method, 32 + len(stream), args.claim,
                                 md5low(b""))
        with open(args.out, "wb") as f:
            f.write(hdr + stream)
    elif args.cmd == "edit":
        data = open(args.input, "rb").read()
        if args.section:
            off, size = section_range(data, args.section)
            inner = edit(data[off:off + size], args.edits)
            if len(inner) != size:
                fail("edits inside a section must keep its size")
            data = data[:off] + inner + data[off + size:]
        else:
            data = edit(data, args.edits)
        with open(args.out, "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
