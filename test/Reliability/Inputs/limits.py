#!/usr/bin/env python3
"""Runs a command under a limit and reports how it ended.

Usage: limits.py [--tmpfs DIR --size BYTES [--fill BYTES] [--copy-out DIR2]]
                 [--fsize BYTES] [--max-rss-mib N] [--signal-when-file GLOB
                 --signal NAME] -- CMD...

  --tmpfs DIR     run CMD in a private mount namespace (unshare(2)) in which
                  a tmpfs of BYTES bytes is mounted on DIR: a small disk that
                  fills up. The mount exists only for CMD; --fill writes a
                  file DIR/fill of that many bytes first, --copy-out copies
                  what DIR holds afterwards to DIR2 (mode bits kept) so that
                  later RUN lines can look at it. Needs root (CAP_SYS_ADMIN);
                  --probe says whether it works here.
  --fsize BYTES   RLIMIT_FSIZE for CMD (a write past it fails with EFBIG, and
                  SIGXFSZ is sent: a tool that does not ignore it dies).
  --max-rss-mib N check that CMD's peak resident set stays within N MiB.
  --max-seconds S check that CMD ends within S seconds of wall time (it is
                  killed after 4 S: a run that far over is not waited for).
  --time-scale F  allow F times S (a sanitizer build runs slower); the line
                  printed still names S, followed by "(scaled by F)".
  --signal-when-file GLOB --signal NAME
                  send signal NAME to CMD as soon as a file matching GLOB
                  exists (inotify wakes it up when a file is created there), once.
  --ignore NAME   start CMD with signal NAME ignored (as nohup does for
                  SIGHUP); otherwise SIGINT, SIGTERM and SIGHUP act as they
                  do from an interactive shell.

CMD's stdout and stderr pass through. Then one line per fact, for FileCheck:
  "status N" (or "killed by SIGNAME"), "files: NAME..." (the tmpfs, sorted),
  "peak RSS within N MiB" or "peak RSS M MiB is more than N MiB",
  "time within S s" or "took T s, more than S s",
  "signal sent" / "signal not sent: CMD ended first".
The exit status is 0 unless the harness itself failed.
"""
import argparse
import ctypes
import glob
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CLONE_NEWNS = 0x00020000
MS_REC = 16384
MS_PRIVATE = 1 << 18


def libc():
    lib = ctypes.CDLL(None, use_errno=True)
    lib.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                          ctypes.c_ulong, ctypes.c_char_p]
    return lib


def private_tmpfs(path, size):
    """Enters a new mount namespace and mounts a tmpfs of SIZE on PATH."""
    c = libc()
    if c.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    if c.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise OSError(ctypes.get_errno(), "mount --make-rprivate /")
    opts = ("size=%d,mode=0777" % size).encode()
    if c.mount(b"tmpfs", path.encode(), b"tmpfs", 0, opts) != 0:
        raise OSError(ctypes.get_errno(), "mount -t tmpfs " + path)


class Watcher:
    """Wakes up as soon as a file is created in a directory (inotify)."""

    IN_CREATE = 0x100

    def __init__(self, path):
        c = ctypes.CDLL(None, use_errno=True)
        self.fd = c.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0 or c.inotify_add_watch(self.fd, path.encode(),
                                              self.IN_CREATE) < 0:
            raise OSError(ctypes.get_errno(), "inotify " + path)

    def wait(self, timeout):
        select.select([self.fd], [], [], timeout)
        try:
            os.read(self.fd, 65536)
        except BlockingIOError:
            pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tmpfs")
    ap.add_argument("--size", type=lambda v: int(v, 0))
    ap.add_argument("--fill", type=lambda v: int(v, 0), default=0)
    ap.add_argument("--copy-out")
    ap.add_argument("--fsize", type=lambda v: int(v, 0))
    ap.add_argument("--max-rss-mib", type=int)
    ap.add_argument("--max-seconds", type=float)
    ap.add_argument("--time-scale", type=float, default=1.0)
    ap.add_argument("--signal-when-file")
    ap.add_argument("--signal")
    ap.add_argument("--ignore", action="append", default=[])
    ap.add_argument("--probe", action="store_true",
                    help="exit 0 when --tmpfs works here")
    ap.add_argument("cmd", nargs="*")
    a = ap.parse_args()

    if a.probe:
        d = tempfile.mkdtemp()
        try:
            pid = os.fork()
            if pid == 0:
                try:
                    private_tmpfs(d, 4096)
                    os._exit(0)
                except OSError:
                    os._exit(1)
            _, st = os.waitpid(pid, 0)
            return 0 if os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0 else 1
        finally:
            os.rmdir(d)

    if a.tmpfs:
        private_tmpfs(a.tmpfs, a.size)
        if a.fill:
            with open(os.path.join(a.tmpfs, "fill"), "wb") as f:
                f.write(b"\0" * a.fill)

    def limit():
        # As from an interactive shell: the signals act (lit's workers
        # ignore SIGINT, which children would inherit).
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        for name in a.ignore:
            signal.signal(getattr(signal, name), signal.SIG_IGN)
        if a.fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (a.fsize, a.fsize))

    sys.stdout.flush()
    start = time.monotonic()
    p = subprocess.Popen(a.cmd, preexec_fn=limit)
    sent = None
    done = None
    if a.signal_when_file:
        sig = getattr(signal, a.signal)
        sent = False
        watch = Watcher(os.path.dirname(a.signal_when_file))
        while True:
            pid, st, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                done = (st, ru)
                break
            if glob.glob(a.signal_when_file):
                os.kill(p.pid, sig)
                sent = True
                break
            watch.wait(0.001)
    if done is None and a.max_seconds is not None:
        while True:
            pid, st, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                done = (st, ru)
                break
            if time.monotonic() - start > 4 * a.max_seconds * a.time_scale:
                os.kill(p.pid, signal.SIGKILL)
            time.sleep(0.01)
    if done is None:
        _, st, ru = os.wait4(p.pid, 0)
    else:
        st, ru = done
    p.returncode = 0  # reaped here, not by Popen
    if os.WIFSIGNALED(st):
        print("killed by %s" % signal.Signals(os.WTERMSIG(st)).name)
    else:
        print("status %d" % os.WEXITSTATUS(st))
    if sent is not None:
        print("signal sent" if sent else "signal not sent: CMD ended first")
    if a.tmpfs:
        print("files: " + " ".join(sorted(os.listdir(a.tmpfs))))
        if a.copy_out:
            os.makedirs(a.copy_out, exist_ok=True)
            for n in os.listdir(a.tmpfs):
                shutil.copy2(os.path.join(a.tmpfs, n), os.path.join(a.copy_out, n))
    if a.max_seconds is not None:
        took = time.monotonic() - start
        bound = a.max_seconds * a.time_scale
        scaled = "" if a.time_scale == 1.0 else " (scaled by %g)" % a.time_scale
        if took <= bound:
            print("time within %g s%s" % (a.max_seconds, scaled))
        else:
            print("took %.1f s, more than %g s%s" % (took, a.max_seconds, scaled))
    if a.max_rss_mib is not None:
        mib = ru.ru_maxrss / 1024.0  # KiB on Linux
        if mib <= a.max_rss_mib:
            print("peak RSS within %d MiB" % a.max_rss_mib)
        else:
            print("peak RSS %.1f MiB is more than %d MiB" % (mib, a.max_rss_mib))
    return 0


if __name__ == "__main__":
    sys.exit(main())
