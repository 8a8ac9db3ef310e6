#!/usr/bin/env python3
"""deep-tree.py make ROOT FILE | get ROOT OUT

make: puts a copy of FILE at ROOT/d.../d.../a.co, 20 directories of 250
characters deep (a path of more than 5000 bytes, past PATH_MAX), made with
chdir one level at a time. get: copies that file to OUT."""
import os
import shutil
import sys

NAME = "d" * 250
DEPTH = 20


def descend(root, create):
    os.chdir(root)
    for _ in range(DEPTH):
        if create:
            os.mkdir(NAME)
        os.chdir(NAME)


def main():
    cmd, root, other = sys.argv[1:4]
    other = os.path.abspath(other)
    if cmd == "make":
        descend(root, True)
        shutil.copyfile(other, "a.co")
    else:
        descend(root, False)
        shutil.copyfile("a.co", other)


main()
