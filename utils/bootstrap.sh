#!/usr/bin/env bash
# Installs every dependency hotswap-opt needs from Debian packages.
# Idempotent: when everything is present it only checks and returns.
set -euo pipefail

# libclang-rt-22-dev: ASan/UBSan runtimes (--sanitize) and libFuzzer (utils/fuzz.sh).
# libamd-comgr-dev: ROCm's code object manager, a real consumer for test/Consumers.
PACKAGES=(llvm-22 llvm-22-dev llvm-22-tools clang-22 lld-22 libclang-rt-22-dev libgtest-dev
          cmake ninja-build python3 zlib1g-dev libzstd-dev libamd-comgr-dev)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all dependencies present"
  exit 0
fi

echo "bootstrap: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "bootstrap: done"
