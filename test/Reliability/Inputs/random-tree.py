#!/usr/bin/env python3
"""Random trees for `hotswap-opt -r` (test/Reliability/tree-random.test).

Builds, from a fixed seed, trees of nested directories holding code objects
(test/Inputs/gfx90a-two-kernels.yaml via yaml2obj, some already rewritten),
offload bundles, broken GPU files (code objects cut short, which fail),
ordinary files (text, an x86-64-looking ELF header, empty files), FIFOs,
hard links, and symbolic links: to files, to directories, dangling, and
loops (a link to an ancestor, a link to itself, two links to each other).
Then, for each tree, runs
  hotswap-opt -passes=trampoline,stub-syms -r -i TREE
  hotswap-opt -passes=trampoline,stub-syms -r --output-dir=OUT TREE
(with a timeout) and checks:
  * the run ends (no hang) with status 0, or 1 when some file failed;
  * no crash (a signal), and stderr is one `hotswap-opt: error:` line per
    failed file plus the closing summary line, whose failure count matches;
  * links, FIFOs and directories stay as they were; every name of a
    hard-linked file holds the same bytes after -i (counted in the last
    line), and a second -i run changes nothing;
  * --output-dir twice gives the same files.
Prints "ok: N trees" or the first problem (exit 1).

Usage: random-tree.py --hotswap-opt PATH --yaml2obj PATH --work DIR
                      [--seed N] [--trees N] [--timeout S]
"""
import argparse
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
PIPELINE = "-passes=trampoline,stub-syms"


def snapshot(top):
    """Every path under top: its kind and bytes or link target."""
    out = {}
    for dirpath, dirs, files in os.walk(top, followlinks=False):
        for name in dirs + files:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, top)
            st = os.lstat(p)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = ("dir",)
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    out[rel] = ("file", hashlib.sha256(f.read()).hexdigest(), st.st_ino)
            else:
                out[rel] = ("other", oct(st.st_mode))
    return out


def build_tree(rng, top, co, stubbed):
    dirs = [top]
    files = []
    for _ in range(rng.randint(2, 6)):
        d = os.path.join(rng.choice(dirs), "d%d" % len(dirs))
        os.makedirs(d)
        dirs.append(d)
    n = 0
    for _ in range(rng.randint(8, 24)):
        n += 1
        d = rng.choice(dirs)
        p = os.path.join(d, "f%d" % n)
        kind = rng.choice(["co", "co", "stubbed", "cut", "text", "empty", "elf-ish",
                           "fifo", "hardlink", "symlink-file", "symlink-dir",
                           "dangling", "loop-self", "loop-up", "loop-pair"])
        if kind == "co":
            open(p, "wb").write(co)
        elif kind == "stubbed":
            open(p, "wb").write(stubbed)
        elif kind == "cut":
            open(p, "wb").write(co[:rng.randint(64, len(co) - 1)])
        elif kind == "text":
            open(p, "w").write("not GPU code %d\n" % rng.randint(0, 1 << 30))
        elif kind == "empty":
            open(p, "wb").close()
        elif kind == "elf-ish":
            open(p, "wb").write(b"\x7fELF\x02\x01\x01" + bytes(rng.randint(0, 200)))
        elif kind == "fifo":
            os.mkfifo(p)
        elif kind == "hardlink" and files:
            os.link(rng.choice(files), p)
        elif kind == "symlink-file" and files:
            os.symlink(os.path.relpath(rng.choice(files), d), p)
        elif kind == "symlink-dir":
            os.symlink(os.path.relpath(rng.choice(dirs), d), p)
        elif kind == "dangling":
            os.symlink("nowhere-%d" % n, p)
        elif kind == "loop-self":
            os.symlink(os.path.basename(p), p)
        elif kind == "loop-up":
            os.symlink("..", p)
        elif kind == "loop-pair":
            os.symlink(os.path.basename(p) + "b", p)
            os.symlink(os.path.basename(p), p + "b")
        if os.path.isfile(p) and not os.path.islink(p):
            files.append(p)


def run(cmd, timeout):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SystemExit("FAILED: timed out after %d s: %s" % (timeout, " ".join(cmd)))


def check_run(r, what):
    if r.returncode < 0:
        raise SystemExit("FAILED: %s: killed by signal %d" % (what, -r.returncode))
    if r.returncode not in (0, 1):
        raise SystemExit("FAILED: %s: status %d" % (what, r.returncode))
    lines = r.stderr.decode(errors="replace").splitlines()
    errors = [l for l in lines if l.startswith("hotswap-opt: error: ")]
    summary = [l for l in lines if re.match(r"hotswap-opt: \d+ inputs?: ", l)]
    other = [l for l in lines if l not in errors and l not in summary
             and not l.startswith("hotswap-opt: warning: ")]
    if other:
        raise SystemExit("FAILED: %s: unexpected stderr: %r" % (what, other[:3]))
    if len(summary) != 1:
        raise SystemExit("FAILED: %s: %d closing lines: %r" % (what, len(summary), lines))
    m = re.search(r"(\d+) failed", summary[0])
    failed = int(m.group(1)) if m else 0
    if failed != len(errors):
        raise SystemExit("FAILED: %s: %d failed, %d error lines: %r"
                         % (what, failed, len(errors), lines))
    if (r.returncode == 1) != (failed > 0):
        raise SystemExit("FAILED: %s: status %d with %d failed"
                         % (what, r.returncode, failed))
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hotswap-opt", required=True)
    ap.add_argument("--yaml2obj", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seed", type=int, default=43)
    ap.add_argument("--trees", type=int, default=12)
    ap.add_argument("--timeout", type=int, default=30)
    a = ap.parse_args()
    tool = a.hotswap_opt
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    co_path = os.path.join(a.work, "seed.co")
    subprocess.run([a.yaml2obj, os.path.join(ROOT, "test", "Inputs", "gfx90a-two-kernels.yaml"),
                    "-o", co_path], check=True)
    subprocess.run([tool, PIPELINE, co_path, "-o", co_path + ".stubbed"], check=True)
    co = open(co_path, "rb").read()
    stubbed = open(co_path + ".stubbed", "rb").read()
    rng = random.Random(a.seed)
    failures = 0
    hardlinked = 0
    for t in range(a.trees):
        top = os.path.join(a.work, "tree%d" % t)
        build_tree(rng, top, co, stubbed)
        before = snapshot(top)
        # --output-dir twice: the same files.
        outs = []
        for k in (1, 2):
            out = os.path.join(a.work, "out%d-%d" % (t, k))
            r = run([tool, PIPELINE, "--threads=1", "-r", "--output-dir=" + out, top],
                    a.timeout)
            check_run(r, "tree %d --output-dir" % t)
            outs.append(snapshot(out) if os.path.isdir(out) else {})
        if snapshot(top) != before:
            raise SystemExit("FAILED: tree %d: --output-dir changed the tree" % t)
        strip = lambda s: {k: v[:2] for k, v in s.items()}
        if strip(outs[0]) != strip(outs[1]):
            raise SystemExit("FAILED: tree %d: --output-dir twice differs" % t)
        # -i, then -i again: nothing more changes.
        r = run([tool, PIPELINE, "-r", "-i", top], a.timeout)
        failures += check_run(r, "tree %d -i" % t)
        after = snapshot(top)
        for rel, v in before.items():
            if rel not in after or after[rel][0] != v[0]:
                raise SystemExit("FAILED: tree %d: -i changed the kind of %s" % (t, rel))
            if v[0] == "link" and after[rel] != v:
                raise SystemExit("FAILED: tree %d: -i changed link %s" % (t, rel))
        if set(after) != set(before):
            raise SystemExit("FAILED: tree %d: -i added or removed %r"
                             % (t, sorted(set(after) ^ set(before))))
        r = run([tool, PIPELINE, "-r", "-i", top], a.timeout)
        check_run(r, "tree %d -i again" % t)
        again = strip(snapshot(top))
        changed = sorted(k for k in set(again) | set(after)
                         if again.get(k) != strip(after).get(k))
        # Every name of a hard-linked file gets the result of the first run
        # (issue 43, N5), so a second run changes nothing.
        inodes = [v[2] for v in before.values() if v[0] == "file"]
        groups = {}
        for k, v in before.items():
            if v[0] == "file" and inodes.count(v[2]) > 1:
                groups.setdefault(v[2], []).append(k)
        for names in groups.values():
            hardlinked += len(names)
            if len({after[k][1] for k in names}) != 1:
                raise SystemExit("FAILED: tree %d: the names %s of one file "
                                 "differ after -i" % (t, ", ".join(names)))
        if changed:
            raise SystemExit("FAILED: tree %d: a second -i run changed %s"
                             % (t, ", ".join(changed)))
        last = strip(snapshot(top))
        r = run([tool, PIPELINE, "-r", "-i", top], a.timeout)
        check_run(r, "tree %d -i last" % t)
        if strip(snapshot(top)) != last:
            raise SystemExit("FAILED: tree %d: -i runs never settle" % t)
    print("ok: %d trees, %d files failed as expected, %d hard-linked names"
          % (a.trees, failures, hardlinked))
    return 0


if __name__ == "__main__":
    sys.exit(main())
