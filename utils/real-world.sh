#!/usr/bin/env bash
# Downloads public Debian packages with HIP fat binaries (default:
# librocrand1), extracts every device code object and runs
# trampoline,stub-syms,verify on each, twice (idempotency). See
# utils/real-world.py for the details. Usage: utils/real-world.sh [PKG ...]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="$("$ROOT/utils/build.sh" | tail -n 1)"
exec python3 "$ROOT/utils/real-world.py" --tool "$BUILD_DIR/bin/hotswap-opt" \
  --work "$BUILD_DIR/real-world" "$@"
