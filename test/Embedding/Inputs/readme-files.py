#!/usr/bin/env python3
"""Writes the files the README shows as `<!-- plugin-example: NAME -->`
followed by a fenced block into DIR: readme-files.py README DIR."""
import os
import re
import sys

readme, out = sys.argv[1], sys.argv[2]
text = open(readme, encoding="utf-8").read()
found = re.findall(r"<!-- plugin-example: (\S+) -->\n```[a-z+]*\n(.*?)```\n", text, re.S)
if not found:
    sys.exit("no plugin-example blocks in " + readme)
os.makedirs(out, exist_ok=True)
for name, body in found:
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write(body)
    print(name)
