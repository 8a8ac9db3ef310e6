#!/usr/bin/env python3
"""SIGKILL a command that rewrites a file in place, at many points of its
run, and say what each kill left behind.

Usage: kill-during.py --original ORIG --expected EXP --dest DEST
                      [--kills N] -- CMD...

ORIG is the file as it was, EXP the complete output (made beforehand by
the same pipeline with -o), DEST the file CMD rewrites in place (CMD names
it). First CMD runs once to its end from a fresh copy of ORIG to measure
how long a run takes (T); then, N times, DEST is made a fresh copy of ORIG,
CMD is started and SIGKILLed after T*k/(N+1) (k = 1..N), so that the kills
fall all over the run: reading, rewriting, writing the temporary, renaming.
Files CMD leaves in DEST's directory are checked: temporaries named
DEST.tmpXXXXXXX are allowed (nothing removes them after SIGKILL) and
removed; any other new file is reported.

Prints one line per run, for FileCheck (whether a given kill came before
or after the rename depends on timing, so each line says which of the two
it found, and a third answer is a failure):
  "full run: status N, destination rewritten|original|neither (S bytes)"
  "kill K: destination original|rewritten|neither (S bytes)"
then "unexpected file NAME" for any other file left, and last
"K kills: D before the rename, R after, H neither; every leftover a
temporary" (or "... H neither; U unexpected files").
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time


def classify(dest, orig, exp):
    with open(dest, "rb") as f:
        got = f.read()
    if got == orig:
        return "original"
    if got == exp:
        return "rewritten"
    return "neither (%d bytes)" % len(got)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--original", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--dest", required=True)
    ap.add_argument("--kills", type=int, default=8)
    ap.add_argument("cmd", nargs="+")
    a = ap.parse_args()

    with open(a.original, "rb") as f:
        orig = f.read()
    with open(a.expected, "rb") as f:
        exp = f.read()
    if orig == exp:
        sys.exit("kill-during.py: the expected output equals the original")
    d = os.path.dirname(os.path.abspath(a.dest))
    base = os.path.basename(a.dest)
    tmp = re.compile(re.escape(base) + r"\.tmp[0-9A-Za-z]{7}$")

    def fresh():
        shutil.copyfile(a.original, a.dest)
        return set(os.listdir(d))

    def leftovers(before):
        temps, others = 0, []
        for n in sorted(set(os.listdir(d)) - before):
            if tmp.match(n):
                os.unlink(os.path.join(d, n))
                temps += 1
            else:
                others.append(n)
        return temps, others

    def spawn():
        # lit's workers ignore SIGINT; the child gets the defaults, as
        # from a shell (SIGKILL cannot be ignored anyway).
        def reset():
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
        return subprocess.Popen(a.cmd, preexec_fn=reset,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)

    unexpected = []
    before = fresh()
    start = time.monotonic()
    p = spawn()
    p.wait()
    took = time.monotonic() - start
    print("full run: status %d, destination %s" %
          (p.returncode, classify(a.dest, orig, exp)))
    unexpected += leftovers(before)[1]

    counts = {"original": 0, "rewritten": 0}
    neither = 0
    for k in range(1, a.kills + 1):
        before = fresh()
        p = spawn()
        time.sleep(took * k / (a.kills + 1))
        p.send_signal(signal.SIGKILL)
        p.wait()
        what = classify(a.dest, orig, exp)
        print("kill %d: destination %s" % (k, what))
        if what in counts:
            counts[what] += 1
        else:
            neither += 1
        unexpected += leftovers(before)[1]
    for n in unexpected:
        print("unexpected file " + n)
    print("%d kills: %d before the rename, %d after, %d neither; %s" %
          (a.kills, counts["original"], counts["rewritten"], neither,
           "%d unexpected files" % len(unexpected) if unexpected
           else "every leftover a temporary"))
    shutil.copyfile(a.original, a.dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
