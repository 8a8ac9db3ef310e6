#!/usr/bin/env python3
"""Proves the layering of lib/CMakeLists.txt: for every layer, compiles one
`#include` of a representative header of every other layer with exactly the
include directories that layer's library is built with (its include folder
under BUILD/layers/ and LLVM's headers). A header of a lower layer must
compile; a header of a higher or sibling layer must fail with "file not
found". Prints, per layer, what it sees and what it refuses.

Usage: check-layering.py CXX BUILD_DIR LLVM_INCLUDE_DIR
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile

# One header per layer, in bottom-up order.
LAYERS = [
    ("Support", "hotswap/Support/Error.h"),
    ("Object", "hotswap/Object/Object.h"),
    ("AMDGPU", "hotswap/AMDGPU/TargetInfo.h"),
    ("Bundle", "hotswap/Bundle/Bundle.h"),
    ("Code", "hotswap/Code/CodeAppender.h"),
    ("Pass", "hotswap/Pass/Pass.h"),
    ("Passes", "hotswap/Passes/Kernels.h"),
    ("Pipeline", "hotswap/Hotswap.h"),
    ("CAPI", "hotswap-c.h"),
]


def compile_include(cxx, forest, llvm_inc, header, tmp):
    fd, src = tempfile.mkstemp(suffix=".cpp", dir=tmp)
    with os.fdopen(fd, "w") as f:
        f.write('#include "%s"\n' % header)
    r = subprocess.run([cxx, "-std=c++17", "-fsyntax-only", "-I", forest,
                        "-isystem", llvm_inc, src],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


def main():
    cxx, build, llvm_inc = sys.argv[1:4]
    root = os.path.join(build, "layers")
    present = [(n, h) for n, h in LAYERS if os.path.isdir(os.path.join(root, n))]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        probes = {(layer, other): pool.submit(compile_include, cxx,
                                              os.path.join(root, layer),
                                              llvm_inc, header, tmp)
                  for layer, _ in present for other, header in present
                  if other != layer}
        for layer, _ in present:
            forest = os.path.join(root, layer)
            sees, refuses = [], []
            for other, header in present:
                if other == layer:
                    continue
                visible = os.path.exists(os.path.join(forest, header))
                rc, out = probes[(layer, other)].result()
                if visible:
                    if rc != 0:
                        print("%s: %s does not compile:\n%s" % (layer, header, out))
                        bad += 1
                    sees.append(other)
                else:
                    if rc == 0 or ("'%s' file not found" % header) not in out:
                        print("%s: including %s was not refused:\n%s" % (layer, header, out))
                        bad += 1
                    refuses.append(other)
            print("%s sees: %s; refuses: %s" % (layer, " ".join(sees) or "-",
                                                " ".join(refuses) or "-"))
    print("layering %s" % ("ok" if bad == 0 else "BROKEN (%d)" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
