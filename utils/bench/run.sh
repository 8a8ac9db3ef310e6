#!/usr/bin/env bash
# Benchmarks hotswap-opt against cp (the I/O floor) and llvm-objcopy (adding
# the same symbols), alternating in one run; prints medians, ratios, peak RSS,
# scaling per kernel, -time-passes, stub forms and a profile, and how
# busy the machine was. Always exits 0 when it ran (it is a benchmark, not a
# test). Suites (utils/bench/README.md): synthetic and real by default; many,
# capi and libs (librocsparse0's 1.3 GB, minutes each) on request.
#
# Usage: utils/bench/run.sh [--suite synthetic,real,many,capi,libs|all]
#          [--corpus DIR] [--reps N] [--big-reps N] [--capi-reps N]
#          [--threads N] [--only NAME,NAME...] [--no-profile]
#          [--baseline HOTSWAP-OPT]
#   --corpus    Debian packages and their code objects (default:
#               $BENCH_DIR/corpus, downloaded with apt-get download on first
#               use; a utils/real-world.py --keep --work directory per
#               package, e.g. /work/corpus holding rs/ and rw/, is reused)
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
