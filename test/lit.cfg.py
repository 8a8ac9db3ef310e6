# -*- Python -*-
# lit configuration for hotswap-opt. Every tool resolves to an absolute path:
# hotswap-opt and hotswap-host-test from the build tree, everything else from
# LLVM 22's bin directory (/usr/bin/yaml2obj and friends may belong to an
# older LLVM). test/Online/lit.cfg.py loads this file for the online suite.
import os
import re
import shutil
import sys
import subprocess

import lit.formats

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tools as required_tools  # noqa: E402  (test/tools.py)

config.name = "hotswap-opt"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test", ".yaml", ".s", ".cl"]
# Online/ is a suite of its own (Online/lit.cfg.py): its tests download
# Debian packages, and `lit build/test` runs offline. utils/check.sh runs both.
config.excludes = ["Inputs", "Online", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.hotswap_obj_root, "test")

llvm_bin = config.llvm_tools_dir
tools = {
    "hotswap-opt": os.path.join(config.hotswap_tools_dir, "hotswap-opt"),
    # Test-only driver of the host half of the Bundle layer (HostBinary) with
    # a stand-in rewrite (--pad, options to replace only some bundles): the
    # test/FatBinary tests that need it call it by name (%rewrite_host is
    # hotswap-opt).
    "hotswap-host-test": os.path.join(config.hotswap_tools_dir, "hotswap-host-test"),
}
# test/Runtime: the stand-in HSA runtime that loads libhotswap-counters
# (HSA_TOOLS_LIB) as ROCr would; both are built where ROCr's headers are.
if os.path.exists(required_tools.HSA_HEADER):
    tools["hotswap-hsa-standin"] = os.path.join(config.hotswap_tools_dir,
                                                "hotswap-hsa-standin")
# The fuzz targets' replay drivers (fuzz/CMakeLists.txt; test/Fuzz).
for _t in ("", "-bundle", "-host", "-restore", "-swap"):
    tools["hotswap-fuzz%s-replay" % _t] = os.path.join(config.hotswap_tools_dir,
                                                        "hotswap-fuzz%s-replay" % _t)
tools.update(required_tools.llvm_tool_paths(llvm_bin))
del tools["lit"]  # runs the suite; not substituted

for name, path in tools.items():
    if not os.path.exists(path):
        lit_config.fatal("required tool '%s' not found at %s" % (name, path))

# Longest names first so that e.g. 'llvm-readelf' is not split by a shorter match.
for name in sorted(tools, key=len, reverse=True):
    config.substitutions.append(
        (r"(?<![\w./-])%s(?![\w.+-])" % re.escape(name), tools[name]))

# %gnu_strip, %gnu_objcopy, %patchelf: the packager tools (test/tools.py),
# by absolute path (strip and objcopy are GNU binutils', not LLVM's).
for name, path in required_tools.PACKAGER_TOOLS.items():
    if not os.path.exists(path):
        lit_config.fatal("required tool '%s' not found at %s" % (name, path))
    config.substitutions.append(("%" + name, path))

# %limits runs a command under a limit (a small tmpfs, a file size limit,
# a time or memory bound, a signal) and reports how it ended.
# In a sanitizer build the code runs several times slower (ASan's checks,
# UBSan's, no static driver): a time bound meant to tell linear from
# quadratic work is allowed 5 times over there (--time-scale), which still
# tells them apart; the bound printed for FileCheck stays the one written.
_limits_scale = ""
if getattr(config, "hotswap_sanitize", "OFF").upper() in ("ON", "1", "TRUE", "YES"):
    _limits_scale = " --time-scale 5"
# %sweep_every: how many of a sweep's inputs a sanitizer build runs one of
# (a few thousand runs, each several times slower there: 13 of the ASan
# suite's minutes went to one sweep); the release build runs them all.
config.substitutions.append(("%sweep_every", "4" if _limits_scale else "1"))
config.substitutions.append(("%limits", '"%s" "%s"%s' % (
    sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "Reliability", "Inputs", "limits.py"), _limits_scale)))
config.substitutions.append(("%python", sys.executable))
# %llvm_bin: LLVM 22's tool directory, for scripts that run several tools.
config.substitutions.append(("%llvm_bin", llvm_bin))
# %fatbin: test/FatBinary/Inputs/fatbin.py with this build's LLVM (HIP fat
# binaries built at test time, read, broken on purpose; see its docstring),
# its helper programs kept in test/FatBinary/tool-cache/ of this build
# between tests. %rewrite_host IN -o OUT: hotswap-opt with the pipeline every
# rewritten host binary is checked after (test/FatBinary, test/Online).
config.substitutions.append(("%fatbin", '"%s" "%s" --llvm-bin "%s" --cache "%s"' % (
    sys.executable,
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "FatBinary", "Inputs", "fatbin.py"),
    config.llvm_tools_dir,
    os.path.join(config.hotswap_obj_root, "test", "FatBinary", "tool-cache"))))
# %gen IN OUT EDIT...: utils/gen-malformed.py, an ELF file with fields, bytes
# or its length edited (see the script's docstring for the edits).
config.substitutions.append(("%gen", '"%s" "%s"' % (
    sys.executable, os.path.join(config.hotswap_src_root, "utils", "gen-malformed.py"))))
# %bundle: test/Bundle/Inputs/bundle.py, offload bundles and CCOBs built,
# printed, extracted and broken on purpose (see its docstring).
config.substitutions.append(("%bundle", '"%s" "%s"' % (
    sys.executable,
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "Bundle", "Inputs", "bundle.py"))))
config.substitutions.append(("%rewrite_host", '"%s" -passes=trampoline,stub-syms,verify'
                             % tools["hotswap-opt"]))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%src_root", config.hotswap_src_root))
# The driver is linked fully statically (release builds; sanitizer builds
# link it dynamically): it then hands plugins to its twin
# hotswap-opt-plugins, built and installed beside it.
# %plugin_driver is the driver that loads plugins: the twin, or the driver.
_twin = os.path.join(config.hotswap_obj_root, "bin", "hotswap-opt-plugins")
if os.path.exists(_twin):
    config.available_features.add("static-driver")
config.substitutions.append(("%plugin_driver", _twin if os.path.exists(_twin)
                             else os.path.join(config.hotswap_obj_root, "bin", "hotswap-opt")))

# %counters_rt: the tools library itself (feature 'hsa-tools').
if os.path.exists(required_tools.HSA_HEADER):
    _counters_rt = os.path.join(config.hotswap_obj_root, "lib", "libhotswap-counters.so")
    if not os.path.exists(_counters_rt):
        lit_config.fatal("required library not found at %s" % _counters_rt)
    config.available_features.add("hsa-tools")
    config.substitutions.append(("%counters_rt", _counters_rt))

# test/Plugins: the pass plugins of test/CMakeLists.txt (libNAME.so).
config.substitutions.append(("%plugins", os.path.join(config.hotswap_obj_root, "test-plugins")))

config.environment["PATH"] = os.pathsep.join(
    [config.hotswap_tools_dir, llvm_bin, config.environment.get("PATH", "")])
config.environment["LC_ALL"] = "C"
# Every hotswap-opt run of the suite (scripts included) also checks that
# every analysis a pass kept equals a fresh computation of it
# (the driver reads extra options from HOTSWAP_OPT_OPTIONS).
config.environment["HOTSWAP_OPT_OPTIONS"] = "-verify-analysis-preservation"


def clang_can_target_amdgpu():
    try:
        out = subprocess.run(
            [tools["clang"], "--target=amdgcn-amd-amdhsa", "-mcpu=gfx900", "-nogpulib",
             "-x", "cl", "-c", "-o", os.devnull, "-"],
            input=b"__kernel void k(__global int *p) { *p = 1; }\n",
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        return out.returncode == 0
    except Exception:
        return False


if clang_can_target_amdgpu() and os.path.exists(tools["ld.lld"]):
    config.available_features.add("amdgpu-clang")

# test/Embedding: install the package from this build into %t and build the
# examples against it with this build's compilers (and lld, like the build).
#   %cmake           the cmake of this build
#   %hotswap_build   this build directory (for cmake --install)
#   %example_cmake   cmake configuring an example like this build: generator,
#                    build type, linker; compilers through CC/CXX so that only
#                    the languages a project enables are set up (LLVM's
#                    FindFFI breaks when CMAKE_C_COMPILER is set but C is not
#                    enabled).
config.substitutions.append(("%hotswap_build", config.hotswap_obj_root))
example_cmake = [
    "env", "CC=" + config.host_cc, "CXX=" + config.host_cxx,
    config.cmake_command, "-G", "Ninja",
    "-DCMAKE_MAKE_PROGRAM=" + config.cmake_make_program,
    "-DCMAKE_BUILD_TYPE=Release"]
if config.host_cxx_id == "Clang":
    example_cmake.append("-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld")
config.substitutions.append(("%example_cmake", " ".join(example_cmake)))
config.substitutions.append(("%cmake", config.cmake_command))
# test/Setup/layering.test compiles probes like the layer libraries are built.
config.substitutions.append(("%host_cxx", config.host_cxx))
config.substitutions.append(("%llvm_include", config.llvm_include_dir))


# ROCm's Code Object Manager (Debian libamd-comgr-dev, COMGR 5.2): the tests in
# Consumers/ build a small reader against it with %comgr_cxx.
if os.path.exists(required_tools.COMGR_HEADER) and required_tools.comgr_library():
    config.available_features.add("comgr")
config.substitutions.append(
    ("%comgr_cxx", "%s -std=c++17 -O1 -Wall -Wl,--no-as-needed -lamd_comgr"
     % os.path.join(llvm_bin, "clang++")))
