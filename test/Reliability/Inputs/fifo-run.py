#!/usr/bin/env python3
"""Runs a command that writes to a FIFO, and says what the FIFO received.

Usage: fifo-run.py FIFO RECEIVED -- CMD ARGS...

Creates the FIFO, opens it for reading (non-blocking, so nothing waits on a
writer that never comes), runs CMD while draining the FIFO, writes what came
through it to RECEIVED, and prints whether FIFO is still a FIFO afterwards
("FIFO is still a fifo" / "FIFO was replaced by a regular file"): a tool that
replaces its output by rename(2) turns a FIFO (or /dev/null, for root) into a
regular file and writes nothing through it. Exits with CMD's status.
"""
import errno
import os
import select
import stat
import subprocess
import sys


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit("usage: fifo-run.py FIFO RECEIVED -- CMD ARGS...")
    fifo, received, cmd = sys.argv[1], sys.argv[2], sys.argv[4:]
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    p = subprocess.Popen(cmd)
    data = bytearray()

    def drain():
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError as e:
                if e.errno == errno.EAGAIN:
                    return
                raise
            if not chunk:
                return
            data.extend(chunk)

    while p.poll() is None:
        select.select([fd], [], [], 0.05)
        drain()
    drain()
    os.close(fd)
    with open(received, "wb") as f:
        f.write(bytes(data))
    mode = os.lstat(fifo).st_mode
    kind = "is still a fifo" if stat.S_ISFIFO(mode) else (
        "was replaced by a regular file" if stat.S_ISREG(mode) else "is something else")
    print("FIFO %s" % kind)
    sys.stdout.flush()
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
