#!/usr/bin/env bash
# Memory of a long-lived embedder: runs hotswap-embed-memory (embed-memory.cpp,
# built with the project) 10 000 times on a small code object in one process
# and prints VmRSS/VmHWM and the heap in use at run 1, 10, 100, 1000 and
# 10 000, and the growth from run 100. Always exits 0 when the runs succeed
# (a benchmark, not a test).
#
# The input is unittests/Inputs/concurrency-gfx803.yaml (10 clang-built
# kernels without .numbered_sgpr symbols): with the default pipeline
# (long-form stubs, verify) every run creates its MC state, encodes stubs
# and decodes and emulates them.
#
# Usage: utils/bench/embed-memory.sh [-runs=N] [-capi] [-pool=N] [-passes=P]
#   BUILD_DIR   build directory (default: <repo>/build; built if needed)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
TOOL="$BUILD_DIR/utils/bench/hotswap-embed-memory"
if [ ! -x "$TOOL" ]; then
  BUILD_DIR="$(BUILD_DIR="$BUILD_DIR" "$ROOT/utils/build.sh" | tail -n 1)"
  TOOL="$BUILD_DIR/utils/bench/hotswap-embed-memory"
fi
BENCH_DIR="${BENCH_DIR:-$BUILD_DIR/bench}"
mkdir -p "$BENCH_DIR"
IN="$BENCH_DIR/embed-gfx803.co"
/usr/lib/llvm-22/bin/yaml2obj "$ROOT/unittests/Inputs/concurrency-gfx803.yaml" -o "$IN"
exec "$TOOL" "$@" "$IN"
