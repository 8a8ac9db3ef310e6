"""Constants, command helpers and the report's formatting and targets
shared by the benchmark's modules.
"""

import os
import subprocess
import sys


HERE = os.path.dirname(os.path.abspath(__file__))
LLVM = "/usr/lib/llvm-22/bin"
MCPU = "gfx90a"
PIPELINE = "trampoline,stub-syms"
MiB = 1024 * 1024


def sh(cmd, **kw):
    subprocess.run(cmd, check=True, **kw)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def ms(s):
    return "{:.1f}".format(s * 1e3) if s < 10 else "{:.0f}".format(s * 1e3)


def secs(s):
    return "{:.2f}".format(s)


def mib(b):
    return "{:.1f}".format(b / MiB)


TARGETS = []


def target(text, ok, why=""):
    """Prints and records one target's verdict."""
    TARGETS.append((text, ok))
    print("  {}: {}{}".format(text, "met" if ok else "MISSED",
                              " ({})".format(why) if why else ""))


def sync():
    """Flushes dirty pages (untimed) so that the previous command's
    write-back does not land in the next one's time."""
    os.sync()
