#!/usr/bin/env python3
"""Checks that utils/bootstrap.sh installs everything the tests and the build use.

For every program and file that the lit suites use by absolute path
(test/tools.py) and every absolute path CMake resolved (FILEPATH/PATH
entries of a build's CMakeCache.txt), asks dpkg which package ships it and
checks that one of those packages is in utils/bootstrap-packages.txt or is
installed because a listed package depends on it (Depends/Pre-Depends,
recursively: apt always installs those). Prints one line per problem, naming
the path and the package to add, then "N checked, N missing".

Usage: utils/check-bootstrap.py [--cmake-cache FILE] [--packages FILE]
                                [--drop PKG]...
  --drop PKG  check as if PKG were not in the list (used by the test to show
              that the check fails when a package is removed).
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "test"))
import tools  # noqa: E402  (test/tools.py)

LLVM_BIN = "/usr/lib/llvm-22/bin"


def read_list(path):
    pkgs = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                pkgs.append(line)
    return pkgs


def owners_of(paths):
    """{path: set of packages that ship it}, as listed or as resolved (one
    dpkg call per round: dpkg -S is slow to start)."""
    result = {p: set() for p in paths}
    for resolve in (False, True):
        want = {}
        for p in paths:
            if not result[p]:
                want.setdefault(os.path.realpath(p) if resolve else p, []).append(p)
        if not want:
            break
        r = subprocess.run(["dpkg", "-S"] + sorted(want), stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        for line in r.stdout.splitlines():
            # "pkg1, pkg2: /path" (diversions print other lines: skip them)
            if ": " not in line or line.startswith("diversion "):
                continue
            names, _, listed = line.partition(": ")
            for orig in want.get(listed.strip(), []):
                for n in names.split(","):
                    result[orig].add(n.strip().split(":")[0])  # drop ":amd64"
    return result


_depends_cache = {}


def depends(pkg):
    if pkg not in _depends_cache:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Pre-Depends}, ${Depends}", pkg],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        deps = set()
        for alt in r.stdout.split(","):
            # "a (>= 1) | b": any alternative may be the installed one.
            for choice in alt.split("|"):
                name = re.sub(r"\(.*?\)|\[.*?\]", "", choice).strip().split(":")[0]
                if name:
                    deps.add(name)
        _depends_cache[pkg] = deps
    return _depends_cache[pkg]


def closure(pkgs):
    seen, todo = set(), list(pkgs)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo.extend(depends(p) - seen)
    return seen


def cmake_paths(cache, build_dir):
    src = ROOT
    out = []
    with open(cache) as f:
        for line in f:
            m = re.match(r"^([A-Za-z0-9_.+-]+):(FILEPATH|PATH)=(/.*)$", line.strip())
            if not m:
                continue
            name, _, value = m.groups()
            if name.startswith("CMAKE_INSTALL_") or value.startswith((src, build_dir)):
                continue
            if os.path.exists(value):
                out.append(("CMake %s" % name, value))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cmake-cache")
    ap.add_argument("--packages", default=os.path.join(ROOT, "utils", "bootstrap-packages.txt"))
    ap.add_argument("--drop", action="append", default=[])
    args = ap.parse_args()

    listed = [p for p in read_list(args.packages) if p not in args.drop]
    installed_by_bootstrap = closure(listed)

    checks = tools.required_paths(LLVM_BIN)
    if args.cmake_cache:
        checks += cmake_paths(args.cmake_cache, os.path.dirname(os.path.abspath(args.cmake_cache)))

    problems = 0
    found = owners_of([path for _, path in checks])
    for what, path in checks:
        pkgs = found[path]
        if not pkgs:
            print("%s: %s is not installed from any Debian package "
                  "(add its package to utils/bootstrap-packages.txt)" % (what, path))
            problems += 1
            continue
        if pkgs & installed_by_bootstrap:
            continue
        print("%s: %s comes from %s, which bootstrap does not install "
              "(add it to utils/bootstrap-packages.txt)"
              % (what, path, " or ".join(sorted(pkgs))))
        problems += 1
    print("%d checked, %d missing" % (len(checks), problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
