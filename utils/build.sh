#!/usr/bin/env bash
# Configures and builds hotswap-opt (after bootstrap). Progress goes to stderr;
# the last line on stdout is the build directory.
# Usage: utils/build.sh [--sanitize|--tsan]   (BUILD_DIR overrides the directory)
#   --sanitize  ASan+UBSan, in build-sanitize
#   --tsan      ThreadSanitizer, in build-tsan
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
EXTRA=()
case "${1:-}" in
  --sanitize)
    BUILD_DIR="${BUILD_DIR:-$ROOT/build-sanitize}"
    EXTRA+=(-DHOTSWAP_SANITIZE=ON) ;;
  --tsan)
    BUILD_DIR="${BUILD_DIR:-$ROOT/build-tsan}"
    EXTRA+=(-DHOTSWAP_TSAN=ON) ;;
  "")
    BUILD_DIR="${BUILD_DIR:-$ROOT/build}" ;;
  *)
    echo "usage: utils/build.sh [--sanitize|--tsan]" >&2; exit 2 ;;
esac
"$ROOT/utils/bootstrap.sh" >&2
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=/usr/lib/llvm-22/bin/clang \
    -DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++ \
    "${EXTRA[@]}" >&2
fi
cmake --build "$BUILD_DIR" -- -j"$(nproc)" >&2
echo "$BUILD_DIR"
