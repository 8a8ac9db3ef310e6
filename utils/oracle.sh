#!/usr/bin/env bash
# Run the execution-oracle suite (test-oracle/): kernels executed on
# tinygrad's CPU ISA emulator before and after each rewrite, output memory
# compared. See test-oracle/README.md.
#
#   utils/oracle.sh [lit options...]
#
# The emulator: HOTSWAP_EMU if set (a tinygrad checkout), else a checkout of
# the pinned commit below kept in ${XDG_CACHE_HOME:-~/.cache}/hotswap-opt/
# (fetched once, ~tens of MB, needs git and network). hotswap-opt: HOTSWAP_OPT,
# else build/bin/hotswap-opt of this repository. tinygrad is an external test
# tool: nothing of it is copied into this repository.
set -euo pipefail

TINYGRAD_URL=${HOTSWAP_TINYGRAD_URL:-https://github.com/tinygrad/tinygrad}
TINYGRAD_COMMIT=a9069c177a9da9cca18593edf55acd2e6073cca6  # 2026-08-22, tested
LLVM_BIN=/usr/lib/llvm-22/bin

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [[ -z "${HOTSWAP_EMU:-}" ]]; then
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/hotswap-opt/tinygrad-$TINYGRAD_COMMIT"
  if [[ ! -f "$cache/test/mockgpu/amd/emu.py" ]]; then
    echo "oracle.sh: fetching tinygrad $TINYGRAD_COMMIT into $cache" >&2
    rm -rf "$cache.tmp"
    git init -q "$cache.tmp"
    git -C "$cache.tmp" fetch -q --depth 1 "$TINYGRAD_URL" "$TINYGRAD_COMMIT"
    git -C "$cache.tmp" checkout -q --detach FETCH_HEAD
    rm -rf "$cache"
    mv "$cache.tmp" "$cache"
  fi
  export HOTSWAP_EMU="$cache"
fi
if [[ ! -f "$HOTSWAP_EMU/test/mockgpu/amd/emu.py" ]]; then
  echo "oracle.sh: error: HOTSWAP_EMU=$HOTSWAP_EMU has no test/mockgpu/amd/emu.py" >&2
  exit 1
fi

# lit runs under /usr/bin/python3 (its #! line); the emulator needs >= 3.11.
python_lit=$(head -1 "$LLVM_BIN/lit" | sed 's/^#! *//')
if ! $python_lit -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "oracle.sh: error: lit's Python ($python_lit) is older than 3.11" >&2
  exit 1
fi

echo "oracle.sh: emulator $HOTSWAP_EMU" >&2
exec "$LLVM_BIN/lit" -v "$@" "$repo/test-oracle"
