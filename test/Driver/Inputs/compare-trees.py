#!/usr/bin/env python3
"""Compares every entry of tree OLD with the entry at the same place in
tree NEW, without following symbolic links, and prints one sorted line per
entry of OLD, for FileCheck:

  "same REL"      a regular file, byte for byte the same (its mode too)
  "differs REL"   a regular file whose bytes differ
  "mode REL OLD NEW"  same bytes, another mode
  "link REL"      a symbolic link naming the same target
  "fifo REL"      a FIFO still
  "changed REL: WHAT"  anything else (missing, another kind, another target)

then "only in new: REL" for each entry NEW has and OLD has not.

Usage: compare-trees.py OLD NEW
"""
import os
import stat
import sys


def entries(root):
    out = {}
    for d, dirs, files in os.walk(root):  # does not follow links to dirs
        for n in dirs + files:
            p = os.path.join(d, n)
            out[os.path.relpath(p, root)] = os.lstat(p)
    return out


def read(p):
    with open(p, "rb") as f:
        return f.read()


def main():
    old_root, new_root = sys.argv[1], sys.argv[2]
    old, new = entries(old_root), entries(new_root)
    for rel in sorted(old):
        a, b = old[rel], new.get(rel)
        po, pn = os.path.join(old_root, rel), os.path.join(new_root, rel)
        if stat.S_ISDIR(a.st_mode):
            if b is None or not stat.S_ISDIR(b.st_mode):
                print("changed %s: no longer a directory" % rel)
            continue
        if b is None:
            print("changed %s: missing" % rel)
        elif stat.S_IFMT(a.st_mode) != stat.S_IFMT(b.st_mode):
            print("changed %s: another kind of file" % rel)
        elif stat.S_ISLNK(a.st_mode):
            if os.readlink(po) == os.readlink(pn):
                print("link " + rel)
            else:
                print("changed %s: another target" % rel)
        elif stat.S_ISFIFO(a.st_mode):
            print("fifo " + rel)
        elif stat.S_ISREG(a.st_mode):
            if read(po) != read(pn):
                print("differs " + rel)
            elif stat.S_IMODE(a.st_mode) != stat.S_IMODE(b.st_mode):
                print("mode %s %o %o" % (rel, stat.S_IMODE(a.st_mode),
                                         stat.S_IMODE(b.st_mode)))
            else:
                print("same " + rel)
        else:
            print("changed %s: not compared" % rel)
    for rel in sorted(set(new) - set(old)):
        print("only in new: " + rel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
