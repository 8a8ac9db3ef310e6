#!/usr/bin/env python3
"""Runs a command with its stdout and/or stderr on a pseudo-terminal.

Usage: pty-run.py [--stdout-tty] [--stderr-tty] [--tty-log FILE] -- CMD ARGS...

The streams named get the slave side of one new pty (isatty() is true for
them, as on a terminal); the others are inherited. What the command writes to
the pty goes to --tty-log (default: this script's stdout), with carriage
returns shown as <CR>, escape characters as <ESC> and the pty's "\\r\\n" as a
newline, so that FileCheck can match progress lines. Exits with the
command's exit status (128 + N when killed by signal N).
"""
import argparse
import os
import pty
import select
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stdout-tty", action="store_true")
    ap.add_argument("--stderr-tty", action="store_true")
    ap.add_argument("--tty-log")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("no command")
    master, slave = pty.openpty()
    # Raw output: no "\n" -> "\r\n" translation by the line discipline.
    try:
        import termios
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.OPOST
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
    except Exception:
        pass
    p = subprocess.Popen(cmd,
                         stdout=slave if args.stdout_tty else None,
                         stderr=slave if args.stderr_tty else None)
    # The slave stays open here until the command has exited: reading until
    # every slave is closed (EIO) can lose what the command wrote last on
    # some kernels. Then a marker written behind the command's output ends
    # the read: the pty is first in, first out.
    marker = b"\x00pty-run-end\x00"
    chunks = []
    buf = b""
    wrote_marker = False
    while True:
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            buf += os.read(master, 65536)
            if wrote_marker and buf.endswith(marker):
                buf = buf[:-len(marker)]
                break
            continue
        if not wrote_marker and p.poll() is not None:
            os.write(slave, marker)
            wrote_marker = True
    chunks.append(buf)
    os.close(slave)
    rc = p.wait()
    os.close(master)
    text = b"".join(chunks).replace(b"\r\n", b"\n")
    text = text.replace(b"\r", b"<CR>").replace(b"\x1b", b"<ESC>")
    if args.tty_log:
        with open(args.tty_log, "wb") as f:
            f.write(text)
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(text)
        sys.stdout.flush()
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
