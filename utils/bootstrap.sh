#!/usr/bin/env bash
# Installs every Debian package hotswap-opt needs: the list is
# utils/bootstrap-packages.txt (test/Setup/bootstrap-packages.test checks that
# every tool the tests and CMake use comes from it). Nothing else is assumed
# to be installed. Idempotent: when everything is present it only checks.
set -euo pipefail
LIST="$(cd "$(dirname "$0")" && pwd)/bootstrap-packages.txt"

mapfile -t PACKAGES < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$LIST")

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
