"""Every program and file the lit suites use by absolute path.

lit.cfg.py substitutes the tools from here, and
utils/check-bootstrap.py checks that each of them comes from a package that
utils/bootstrap.sh installs: a tool added here without its package in
utils/bootstrap-packages.txt fails test/Setup/bootstrap-packages.test.
"""
import os

# Tools from LLVM 22's bin directory (/usr/bin/yaml2obj may be LLVM 14).
LLVM_TOOLS = [
    "yaml2obj", "obj2yaml", "llvm-readelf", "llvm-readobj", "llvm-objdump",
    "llvm-mc", "FileCheck", "not", "count", "split-file", "llvm-objcopy",
    "llvm-cxxfilt", "llvm-nm", "llvm-strip", "clang-offload-bundler",
    "clang", "clang++", "ld.lld", "lit",
]

# Packager tools the tests run on rewritten host binaries as Debian's
# dh_strip and friends do (lit substitution -> absolute path): GNU strip and
# objcopy (binutils) and patchelf.
PACKAGER_TOOLS = {
    "gnu_strip": "/usr/bin/strip",
    "gnu_objcopy": "/usr/bin/objcopy",
    "patchelf": "/usr/bin/patchelf",
}

# Files behind lit features. The feature is available when all exist (and,
# for some, a probe in lit.cfg.py succeeds); in CI a missing feature fails.
COMGR_HEADER = "/usr/include/amd_comgr.h"
COMGR_LIB_DIRS = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                  "/usr/lib64", "/usr/lib"]
CHATTR = "/usr/bin/chattr"
# ROCr's headers (libhsa-runtime-dev): with them the build makes
# libhotswap-counters and its stand-in runtime (feature 'hsa-tools').
HSA_HEADER = "/usr/include/hsa/hsa_api_trace.h"


def llvm_tool_paths(llvm_bin):
    return {name: os.path.join(llvm_bin, name) for name in LLVM_TOOLS}


def comgr_library():
    for d in COMGR_LIB_DIRS:
        p = os.path.join(d, "libamd_comgr.so")
        if os.path.exists(p):
            return p
    return None


def required_paths(llvm_bin):
    """(what, absolute path) for everything the suites need."""
    out = [("lit tool '%s'" % n, p) for n, p in llvm_tool_paths(llvm_bin).items()]
    out += [("lit tool '%%%s'" % n, p) for n, p in PACKAGER_TOOLS.items()]
    out.append(("feature 'comgr' header", COMGR_HEADER))
    out.append(("feature 'comgr' library",
                comgr_library() or os.path.join(COMGR_LIB_DIRS[0], "libamd_comgr.so")))
    out.append(("feature 'immutable-files' (chattr)", CHATTR))
    out.append(("feature 'hsa-tools' header", HSA_HEADER))
    return out
