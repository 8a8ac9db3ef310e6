#!/usr/bin/env bash
# clang-format (LLVM 22, package clang-format-22) over every C and C++ file
# of include lib tools unittests fuzz utils test, in the style of the
# top-level .clang-format (LLVM's, #include sorting included). Files are the
# ones git knows or would add (tracked, or untracked and not ignored):
# build directories never count.
#
# Usage: utils/format.sh --check   list the files that are not formatted;
#                                  exit 1 if there is any, 0 otherwise
#        utils/format.sh --fix     format those files in place
# Extensions: .c .cc .cpp .cxx .h .hh .hpp .hxx. Not .def (X-macro tables,
# laid out by hand) nor the kernel sources of the tests (.cl, .hip).
# CLANG_FORMAT overrides the binary.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CLANG_FORMAT="${CLANG_FORMAT:-/usr/lib/llvm-22/bin/clang-format}"
DIRS=(include lib tools unittests fuzz utils test)

case "${1:-}" in
  --check) MODE=check ;;
  --fix) MODE=fix ;;
  *) echo "usage: utils/format.sh --check|--fix" >&2; exit 2 ;;
esac
if [ ! -x "$CLANG_FORMAT" ]; then
  echo "format.sh: $CLANG_FORMAT not found (utils/bootstrap.sh installs clang-format-22)" >&2
  exit 2
fi

cd "$ROOT" || exit 2
FILES=()
while IFS= read -r -d '' F; do
  [ -f "$F" ] && FILES+=("$F")
done < <(git ls-files -z --cached --others --exclude-standard -- "${DIRS[@]}" |
           grep -zE '\.(c|cc|cpp|cxx|h|hh|hpp|hxx)$' | sort -zu)

if [ "$MODE" = fix ]; then
  [ ${#FILES[@]} -eq 0 ] || "$CLANG_FORMAT" -i --style=file "${FILES[@]}"
  exit $?
fi

BAD=0
for F in "${FILES[@]}"; do
  # --dry-run -Werror: exit non-zero, and say where, when F would change.
  if ! "$CLANG_FORMAT" --style=file --dry-run -Werror "$F" >/dev/null 2>&1; then
    echo "$F"
    BAD=$((BAD + 1))
  fi
done
if [ "$BAD" -ne 0 ]; then
  echo "format.sh: $BAD of ${#FILES[@]} files are not formatted (utils/format.sh --fix formats them)" >&2
  exit 1
fi
exit 0
