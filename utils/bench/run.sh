#!/usr/bin/env bash
# Benchmarks hotswap-opt against cp (the I/O floor) and llvm-objcopy (adding
# the same symbols), alternating in one run; prints medians, ratios, peak RSS,
# scaling per kernel and -time-passes for the largest input. Always exits 0
# when it ran (it is a benchmark, not a test).
#
# Usage: utils/bench/run.sh [--reps N] [--only NAME,NAME...] [--baseline HOTSWAP-OPT]
#   BUILD_DIR   build directory (default: <repo>/build; built if needed)
#   BENCH_DIR   where generated inputs are cached (default: $BUILD_DIR/bench)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
TOOL="$BUILD_DIR/bin/hotswap-opt"
if [ ! -x "$TOOL" ]; then
  BUILD_DIR="$(BUILD_DIR="$BUILD_DIR" "$ROOT/utils/build.sh" | tail -n 1)"
  TOOL="$BUILD_DIR/bin/hotswap-opt"
fi
[ -x "$TOOL" ] || { echo "run.sh: no hotswap-opt at $TOOL" >&2; exit 1; }
BENCH_DIR="${BENCH_DIR:-$BUILD_DIR/bench}"
echo "tool: $TOOL ($("$TOOL" --version 2>&1 | head -n 1))"
echo "machine: $(nproc) cores, $(uname -m), $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
exec python3 "$ROOT/utils/bench/bench.py" --tool "$TOOL" --root "$ROOT" \
  --cache "$BENCH_DIR" "$@"
