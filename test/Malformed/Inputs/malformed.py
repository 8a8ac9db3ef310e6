#!/usr/bin/env python3
"""Well-formed inputs to break, and the check that a broken one is refused
(test/Malformed; fuzz/build-corpus.py takes its seeds from `base` too).

Usage (lit: %malformed is "python malformed.py"):

  malformed.py base LLVM_BIN DIR
      Writes the well-formed inputs every test starts from, each built by
      tools independent of hotswap-opt:
        gfx900.co, gfx90a.co   yaml2obj of test/Driver/Inputs/two-kernels-
                               gfx900.yaml and test/Inputs/gfx90a-two-kernels.yaml
        plain.hipfb            bundle.py build: an empty host entry, then
                               hipv4-amdgcn-amd-amdhsa--gfx900 and --gfx90a
        zstd-v2.hipfb, zstd-v3.hipfb
                               clang-offload-bundler -compress of the same
                               three entries (COMPRESSED_BUNDLE_FORMAT_VERSION)
        zlib-v2.hipfb, zlib-v3.hipfb
                               bundle.py compress of plain.hipfb
        host.so, host-zstd-v3.so
                               Inputs/host.yaml with plain.hipfb (or
                               zstd-v3.hipfb) in .hip_fatbin (see `host`)
  malformed.py host LLVM_BIN BUNDLE OUT [-DNAME=VALUE]...
      yaml2obj Inputs/host.yaml (with the macros given), then BUNDLE put into
      its .hip_fatbin by llvm-objcopy --update-section.
  malformed.py refused HOTSWAP_OPT FILE [OPTION]...
      Runs `HOTSWAP_OPT [OPTION]... FILE -o FILE.refused-out` (OPTIONs
      default to -passes=trampoline,stub-syms,verify), then the same with
      `-o FILE`, and fails unless each run exits with status 1, prints
      nothing on stdout and exactly one line on stderr, starting with
      "hotswap-opt: error: 'FILE': " and the same both times; creates no
      file (FILE.refused-out or a temporary one next to FILE); and leaves
      FILE's bytes and modification time as they were. Prints that line.
"""
import importlib.util
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean

HERE = os.path.dirname(os.path.abspath(__file__))
TEST = os.path.dirname(os.path.dirname(HERE))
HOST_YAML = os.path.join(HERE, "host.yaml")
PASSES = "-passes=trampoline,stub-syms,verify"
HOST_ID = "host-x86_64-unknown-linux-gnu-"
DEVICE_IDS = ["hipv4-amdgcn-amd-amdhsa--gfx900", "hipv4-amdgcn-amd-amdhsa--gfx90a"]


def fail(msg):
    sys.exit("malformed.py: " + msg)


def load_bundle_py():
    spec = importlib.util.spec_from_file_location(
        "bundle", os.path.join(TEST, "Bundle", "Inputs", "bundle.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if r.returncode != 0:
        fail("'%s' failed (status %d):\n%s" % (" ".join(cmd), r.returncode,
                                               r.stderr.decode(errors="replace")))
    return r


def host(llvm_bin, bundle, out, macros):
    tmp = out + ".empty-host"
    run([os.path.join(llvm_bin, "yaml2obj"), HOST_YAML, "-o", tmp] + macros)
    run([os.path.join(llvm_bin, "llvm-objcopy"),
         "--update-section=.hip_fatbin=" + bundle, tmp, out])
    os.remove(tmp)


def base(llvm_bin, d):
    bundle = load_bundle_py()
    os.makedirs(d, exist_ok=True)
    p = lambda name: os.path.join(d, name)
    run([os.path.join(llvm_bin, "yaml2obj"),
         os.path.join(TEST, "Driver", "Inputs", "two-kernels-gfx900.yaml"), "-o", p("gfx900.co")])
    run([os.path.join(llvm_bin, "yaml2obj"),
         os.path.join(TEST, "Inputs", "gfx90a-two-kernels.yaml"), "-o", p("gfx90a.co")])
    payloads = [open(p("gfx900.co"), "rb").read(), open(p("gfx90a.co"), "rb").read()]
    plain = bundle.build([(HOST_ID.encode(), b"")] +
                         [(i.encode(), c) for i, c in zip(DEVICE_IDS, payloads)], 4096)
    with open(p("plain.hipfb"), "wb") as f:
        f.write(plain)
    open(p("empty"), "wb").close()
    for v in (2, 3):
        env = dict(os.environ, COMPRESSED_BUNDLE_FORMAT_VERSION=str(v))
        run([os.path.join(llvm_bin, "clang-offload-bundler"), "-type=o",
             "-bundle-align=4096", "-compress",
             "-targets=" + ",".join([HOST_ID] + DEVICE_IDS),
             "-input=" + p("empty"), "-input=" + p("gfx900.co"),
             "-input=" + p("gfx90a.co"), "-output=" + p("zstd-v%d.hipfb" % v)], env=env)
        run([sys.executable, os.path.join(TEST, "Bundle", "Inputs", "bundle.py"),
             "compress", p("plain.hipfb"), p("zlib-v%d.hipfb" % v), "--version", str(v)])
    os.remove(p("empty"))
    host(llvm_bin, p("plain.hipfb"), p("host.so"), [])
    host(llvm_bin, p("zstd-v3.hipfb"), p("host-zstd-v3.so"), [])


def listing(d):
    return sorted(os.listdir(d))


def refused(tool, path, options):
    path = os.path.abspath(path)
    d = os.path.dirname(path)
    out = path + ".refused-out"
    if os.path.lexists(out):
        os.remove(out)
    before = open(path, "rb").read()
    mtime = os.stat(path).st_mtime_ns
    files = listing(d)
    prefix = "hotswap-opt: error: '%s': " % path
    lines = []
    for target in (out, path):
        cmd = [tool] + (options or [PASSES]) + [path, "-o", target]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = r.stderr.decode(errors="replace")
        what = "'%s' (-o %s)" % (os.path.basename(path),
                                 "FILE" if target == path else "FILE.refused-out")
        if r.returncode != 1:
            fail("%s: exit status %d, not 1; stderr:\n%s" % (what, r.returncode, err))
        if r.stdout:
            fail("%s: wrote to stdout: %r" % (what, r.stdout[:200]))
        if err.count("\n") != 1 or not err.endswith("\n"):
            fail("%s: not exactly one line on stderr:\n%s" % (what, err))
        if not err.startswith(prefix):
            fail("%s: the line does not start with \"%s\":\n%s" % (what, prefix, err))
        if open(path, "rb").read() != before or os.stat(path).st_mtime_ns != mtime:
            fail("%s: the input was changed" % what)
        if os.path.lexists(out):
            fail("%s: created %s" % (what, out))
        if listing(d) != files:
            fail("%s: files appeared or disappeared next to the input: %s"
                 % (what, sorted(set(listing(d)) ^ set(files))))
        lines.append(err)
    if lines[0] != lines[1]:
        fail("'%s': the error with -o FILE differs:\n%s%s" % (path, lines[0], lines[1]))
    sys.stdout.write(lines[0])


def main():
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "base":
        base(args[1], args[2])
    elif len(args) >= 4 and args[0] == "host":
        if not all(a.startswith("-D") for a in args[4:]):
            fail("host: macros are -DNAME=VALUE")
        host(args[1], args[2], args[3], args[4:])
    elif len(args) >= 3 and args[0] == "refused":
        refused(args[1], args[2], args[3:])
    else:
        fail("usage: see the docstring")
    return 0


if __name__ == "__main__":
    sys.exit(main())
