#!/usr/bin/env python3
"""Downloads a Debian package once and extracts it.

  fetch-deb.py --cache DIR PKG DEST

Keeps PKG's .deb in the cache DIR (apt-get download, which checks it against
apt's lists; a lock file serialises tests that run at the same time) and
extracts it into DEST (dpkg-deb -x). Prints the path of the .deb.
"""
import argparse
import fcntl
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", required=True)
    ap.add_argument("package")
    ap.add_argument("dest")
    args = ap.parse_args()
    os.makedirs(args.cache, exist_ok=True)

    def cached():
        debs = sorted(f for f in os.listdir(args.cache)
                      if f.startswith(args.package + "_") and f.endswith(".deb"))
        return os.path.join(args.cache, debs[-1]) if debs else None

    with open(os.path.join(args.cache, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        deb = cached()
        if deb is None:
            # Download into a private directory, then move: the cache never
            # holds a partial file.
            tmp = tempfile.mkdtemp(dir=args.cache, prefix=".download-")
            r = subprocess.run(["apt-get", "download", args.package], cwd=tmp,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True)
            got = [f for f in os.listdir(tmp) if f.endswith(".deb")]
            if r.returncode != 0 or len(got) != 1:
                sys.exit("fetch-deb.py: apt-get download %s failed:\n%s"
                         % (args.package, r.stdout))
            os.rename(os.path.join(tmp, got[0]), os.path.join(args.cache, got[0]))
            os.rmdir(tmp)
            deb = cached()
    os.makedirs(args.dest, exist_ok=True)
    subprocess.check_call(["dpkg-deb", "-x", deb, args.dest])
    print(deb)


if __name__ == "__main__":
    main()
