#!/usr/bin/env python3
"""Stands in for hotswap-opt in refused-helper.test: refuses its input
(FILE -o OUT, the last three arguments) the way $FAKE_MODE says, well or in
one of the ways malformed.py refused must catch."""
import os
import sys

inp, out = sys.argv[-3], sys.argv[-1]
line = "hotswap-opt: error: '%s': broken\n" % inp
mode = os.environ.get("FAKE_MODE", "well")
if mode == "status-2":
    sys.stderr.write(line)
    sys.exit(2)
if mode == "two-lines":
    sys.stderr.write(line + line)
    sys.exit(1)
if mode == "stdout":
    sys.stdout.write("output\n")
if mode == "writes-output":
    open(out, "wb").write(b"half")
if mode == "changes-input":
    open(inp, "ab").write(b"x")
if mode == "leaves-temporary":
    open(inp + ".tmp123", "wb").write(b"half")
if mode == "other-file":
    line = "hotswap-opt: error: 'other': broken\n"
sys.stderr.write(line)
sys.exit(1)
