# -*- Python -*-
# lit configuration for test-oracle/, the execution-oracle suite: kernels run
# before and after a rewrite on a CPU ISA emulator (tinygrad's, an external
# tool named by HOTSWAP_EMU), and their output memory is compared. It is a
# suite of its own so that the main suite never reports its tests as
# UNSUPPORTED; utils/oracle.sh runs it. See README.md here.
import os
import re
import sys

import lit.formats

sys.dont_write_bytecode = True

config.name = "hotswap-oracle"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test"]
config.excludes = ["Inputs", "README.md", "lit.cfg.py"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(config.test_source_root)
llvm_bin = "/usr/lib/llvm-22/bin"

# Outputs (and the emulator's compiled-instruction cache) go under the build
# tree, or where HOTSWAP_ORACLE_OUT says.
config.test_exec_root = os.path.abspath(os.environ.get(
    "HOTSWAP_ORACLE_OUT", os.path.join(repo, "build", "test-oracle")))

hotswap_opt = os.path.abspath(os.environ.get(
    "HOTSWAP_OPT", os.path.join(repo, "build", "bin", "hotswap-opt")))
tools = {
    "hotswap-opt": hotswap_opt,
    "clang": os.path.join(llvm_bin, "clang"),
    "FileCheck": os.path.join(llvm_bin, "FileCheck"),
    "llvm-mc": os.path.join(llvm_bin, "llvm-mc"),
    "llvm-objdump": os.path.join(llvm_bin, "llvm-objdump"),
    "not": os.path.join(llvm_bin, "not"),
}
for name, path in tools.items():
    if not os.access(path, os.X_OK):
        lit_config.fatal("required tool '%s' not found at %s" % (name, path))
for name in sorted(tools, key=len, reverse=True):
    config.substitutions.append(
        (r"(?<![\w./%%-])%s(?![\w.+-])" % re.escape(name), tools[name]))
config.substitutions.append(("%python", sys.executable))

# amdgpu-emu: HOTSWAP_EMU names a tinygrad checkout with the emulator, and
# this Python can run it. A HOTSWAP_EMU that does not qualify is an error,
# not a quiet UNSUPPORTED.
emu = os.environ.get("HOTSWAP_EMU")
if emu:
    emu = os.path.abspath(emu)
    if not os.path.isfile(os.path.join(emu, "test", "mockgpu", "amd", "emu.py")):
        lit_config.fatal("HOTSWAP_EMU=%s has no test/mockgpu/amd/emu.py" % emu)
    if sys.version_info < (3, 11):
        lit_config.fatal("the emulator needs Python >= 3.11; lit runs %d.%d" % sys.version_info[:2])
    config.available_features.add("amdgpu-emu")
    cache = os.environ.get("HOTSWAP_EMU_CACHEDB",
                           os.path.join(config.test_exec_root, "emu-cache.db"))
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    config.environment["CACHEDB"] = cache
else:
    emu = "/nonexistent-HOTSWAP_EMU-is-unset"

config.substitutions.append(("%run-kernel", '"%s" "%s" --emu "%s"' % (
    sys.executable, os.path.join(repo, "utils", "oracle", "run-kernel.py"), emu)))
config.substitutions.append(("%mutate", '"%s" "%s"' % (
    sys.executable, os.path.join(config.test_source_root, "Inputs", "mutate.py"))))
# The emulator compiles each instruction with the host C compiler (found on
# PATH, which lit passes on) and keeps tinygrad's settings in the environment.
for var in ("HOME", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
