#!/usr/bin/env bash
# The main job on an embedded default: builds a sample two-kernel code object
# from test/Inputs/two-kernels.cl (clang-22 + ld.lld-22, gfx1100 unless
# MCPU=... is given), installs kernel-entry trampolines and stub symbols, and
# shows what changed.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="$("$ROOT/utils/build.sh" | tail -n 1)"
TOOL="$BUILD_DIR/bin/hotswap-opt"
LLVM=/usr/lib/llvm-22/bin
MCPU="${MCPU:-gfx1100}"
WORK="$BUILD_DIR/demo"
mkdir -p "$WORK"
IN="$WORK/sample-$MCPU.co"
OUT="$WORK/sample-$MCPU.hotswap.co"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "build a sample code object ($MCPU, 2 kernels) from test/Inputs/two-kernels.cl"
"$LLVM/clang" --target=amdgcn-amd-amdhsa -mcpu="$MCPU" -nogpulib -O2 \
  -c "$ROOT/test/Inputs/two-kernels.cl" -o "$WORK/sample.o"
"$LLVM/ld.lld" -shared "$WORK/sample.o" -o "$IN"
echo "$IN ($(stat -c %s "$IN") bytes)"

step "kernels before: hotswap-opt -passes='print<kernels>'"
"$TOOL" -passes='print<kernels>' "$IN"

step "rewrite: hotswap-opt -passes=trampoline,stub-syms,verify -stats"
"$TOOL" -passes=trampoline,stub-syms,verify -stats "$IN" -o "$OUT"

step "new program header and section (llvm-readelf -l -S)"
"$LLVM/llvm-readelf" -l "$OUT" | sed -n '/Program Headers/,/Section to Segment/p' | grep -E 'Type|LOAD|NULL'
"$LLVM/llvm-readelf" -S "$OUT" | grep -E 'Name|hotswap'

step "stub symbols (llvm-readelf -s)"
"$LLVM/llvm-readelf" -s "$OUT" | grep -E 'Num:|\.stub'

step "the stubs (llvm-objdump -d, padding elided)"
"$LLVM/llvm-objdump" -d --mcpu="$MCPU" -j .hotswap.text "$OUT" | \
  awk '/s_code_end|s_nop 0/ { if (!pad++) print "\t..."; next } { pad = 0; print }' | sed -n '1,40p'

step "kernels after"
"$TOOL" -passes='print<kernels>' "$OUT"

step "second run on the output changes nothing (-debug-pass-manager)"
"$TOOL" -passes=trampoline,stub-syms -debug-pass-manager "$OUT" -o "$OUT.again"
cmp "$OUT" "$OUT.again" && echo "byte-identical: $OUT.again"
