#!/usr/bin/env bash
# The one test command: bootstrap, configure, build, run every gtest and lit
# test — once in the release build and once built with ASan+UBSan — plus the
# real-world run over librocrand1's code objects, and
# finish with a plain "N passed, N failed" line (non-zero exit on any
# failure).
# Usage: utils/check.sh            both suites (what CI runs)
#        utils/check.sh --fast     the release build only
#        utils/check.sh --sanitize the ASan+UBSan build only
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

case "${1:-}" in
  "") SUITES=(release sanitize) ;;
  --fast) SUITES=(release) ;;
  --sanitize) SUITES=(sanitize) ;;
  *) echo "usage: utils/check.sh [--fast|--sanitize]" >&2; exit 2 ;;
esac

total_passed=0; total_failed=0; total_skipped=0; ok=1

# run_suite NAME BUILD-FLAG...: builds, runs ctest and lit, adds to totals.
run_suite() {
  local name="$1"; shift
  echo "== $name suite"
  local build_dir
  if ! build_dir="$("$ROOT/utils/build.sh" "$@" | tail -n 1)" || [ ! -d "$build_dir" ]; then
    echo "$name: build failed"
    total_failed=$((total_failed + 1)); ok=0
    return
  fi

  # gtest (through ctest, which discovered every TEST)
  local ctest_log="$build_dir/ctest.log"
  (cd "$build_dir" && ctest --output-on-failure -j"$(nproc)") >"$ctest_log" 2>&1
  local ctest_rc=$?
  tail -n 3 "$ctest_log"
  [ $ctest_rc -ne 0 ] && grep -E "Failed|\*\*\*" "$ctest_log" | head -50
  local ct_total ct_failed
  ct_total=$(sed -n 's/.* tests passed, \([0-9]*\) tests failed out of \([0-9]*\)/\2/p' "$ctest_log" | tail -1)
  ct_failed=$(sed -n 's/.* tests passed, \([0-9]*\) tests failed out of \([0-9]*\)/\1/p' "$ctest_log" | tail -1)
  if [ -z "$ct_total" ]; then ct_total=1; ct_failed=1; fi

  # lit
  local lit_log="$build_dir/lit.log"
  /usr/lib/llvm-22/bin/lit -sv "$build_dir/test" >"$lit_log" 2>&1
  local lit_rc=$?
  grep -E "^(FAIL|XPASS|UNRESOLVED|TIMEOUT):" "$lit_log" | head -50
  tail -n 8 "$lit_log"
  local lit_pass lit_xfail lit_skip lit_fail=0 k n
  lit_pass=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$lit_log" | tail -1)
  lit_xfail=$(sed -n 's/^ *Expectedly Failed *: *\([0-9]*\).*/\1/p' "$lit_log" | tail -1)
  for k in Failed Unresolved "Unexpectedly Passed" "Timed Out"; do
    n=$(sed -n "s/^ *$k *: *\([0-9]*\).*/\1/p" "$lit_log" | tail -1)
    lit_fail=$((lit_fail + ${n:-0}))
  done
  lit_skip=$(sed -n 's/^ *Unsupported *: *\([0-9]*\).*/\1/p' "$lit_log" | tail -1)
  [ $lit_rc -ne 0 ] && [ $lit_fail -eq 0 ] && lit_fail=1

  local passed=$((ct_total - ct_failed + ${lit_pass:-0} + ${lit_xfail:-0}))
  local failed=$((ct_failed + lit_fail))
  echo "$name: gtest $((ct_total - ct_failed)) passed, $ct_failed failed; lit $(( ${lit_pass:-0} + ${lit_xfail:-0} )) passed, $lit_fail failed, ${lit_skip:-0} unsupported"
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  total_skipped=$((total_skipped + ${lit_skip:-0}))
  if [ $failed -ne 0 ] || [ $ctest_rc -ne 0 ] || [ $lit_rc -ne 0 ]; then ok=0; fi
}

# Real-world code objects (utils/real-world.py): every device code object of
# Debian's librocrand1 (ROCm 5.3 HIP fat binaries) through the pipeline and
# verify, twice. Needs the Debian archive; when the download is impossible
# the step is reported as skipped, never as passed.
run_real_world() {
  echo "== real-world code objects (librocrand1)"
  local build_dir="${BUILD_DIR:-$ROOT/build}" log
  log="$build_dir/real-world.log"
  python3 "$ROOT/utils/real-world.py" --tool "$build_dir/bin/hotswap-opt" \
    --work "$build_dir/real-world" librocrand1 >"$log" 2>&1
  local rc=$?
  tail -n 12 "$log"
  if grep -q "^cannot download" "$log"; then
    total_skipped=$((total_skipped + 1))
    return
  fi
  local p f
  p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$log" | tail -1)
  f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log" | tail -1)
  if [ -z "$p" ]; then p=0; f=1; fi
  [ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
  total_passed=$((total_passed + p)); total_failed=$((total_failed + f))
  [ "$f" -ne 0 ] && ok=0
}

for s in "${SUITES[@]}"; do
  if [ "$s" = release ]; then
    run_suite release
    run_real_world
  else
    run_suite "asan+ubsan" --sanitize
  fi
done

echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
[ $ok -eq 1 ] && [ $total_failed -eq 0 ]
