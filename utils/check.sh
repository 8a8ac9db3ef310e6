#!/usr/bin/env bash
# The one test command: bootstrap, configure, build, run every gtest and lit
# test, and finish with a plain "N passed, N failed" line.
# Usage: utils/check.sh [--sanitize]
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="$("$ROOT/utils/build.sh" "$@" | tail -n 1)" || { echo "0 passed, 1 failed"; exit 1; }
[ -d "$BUILD_DIR" ] || { echo "0 passed, 1 failed"; exit 1; }

passed=0; failed=0

# gtest (through ctest, which discovered every TEST)
ctest_log="$BUILD_DIR/ctest.log"
(cd "$BUILD_DIR" && ctest --output-on-failure -j"$(nproc)") >"$ctest_log" 2>&1
ctest_rc=$?
tail -n 3 "$ctest_log"
[ $ctest_rc -ne 0 ] && grep -E "Failed|\*\*\*" "$ctest_log" | head -50
ct_total=$(sed -n 's/.* tests passed, \([0-9]*\) tests failed out of \([0-9]*\)/\2/p' "$ctest_log" | tail -1)
ct_failed=$(sed -n 's/.* tests passed, \([0-9]*\) tests failed out of \([0-9]*\)/\1/p' "$ctest_log" | tail -1)
if [ -z "$ct_total" ]; then ct_total=1; ct_failed=1; fi
passed=$((passed + ct_total - ct_failed)); failed=$((failed + ct_failed))

# lit
lit_log="$BUILD_DIR/lit.log"
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test" >"$lit_log" 2>&1
lit_rc=$?
grep -E "^(FAIL|XPASS|UNRESOLVED|TIMEOUT):" "$lit_log" | head -50
tail -n 8 "$lit_log"
lit_pass=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$lit_log" | tail -1)
lit_xfail=$(sed -n 's/^ *Expectedly Failed *: *\([0-9]*\).*/\1/p' "$lit_log" | tail -1)
lit_fail=0
for k in Failed Unresolved "Unexpectedly Passed" "Timed Out"; do
  n=$(sed -n "s/^ *$k *: *\([0-9]*\).*/\1/p" "$lit_log" | tail -1)
  lit_fail=$((lit_fail + ${n:-0}))
done
lit_skip=$(sed -n 's/^ *Unsupported *: *\([0-9]*\).*/\1/p' "$lit_log" | tail -1)
[ $lit_rc -ne 0 ] && [ $lit_fail -eq 0 ] && lit_fail=1
passed=$((passed + ${lit_pass:-0} + ${lit_xfail:-0})); failed=$((failed + lit_fail))

echo "gtest: $((ct_total - ct_failed)) passed, $ct_failed failed; lit: $(( ${lit_pass:-0} + ${lit_xfail:-0} )) passed, $lit_fail failed, ${lit_skip:-0} unsupported"
echo "$passed passed, $failed failed, ${lit_skip:-0} skipped"
[ $failed -eq 0 ] && [ $ctest_rc -eq 0 ] && [ $lit_rc -eq 0 ]
