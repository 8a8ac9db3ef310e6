#!/usr/bin/env bash
# The one test command: bootstrap, configure, build, run every gtest and lit
# test -- once in the release build and once built with ASan+UBSan -- every
# gtest once more built with ThreadSanitizer, plus the real-world run over
# librocrand1's code objects, plus the style check (utils/format.sh --check:
# every C/C++ file formatted as .clang-format says), and finish with a plain
# "N passed, N failed, N skipped" line (non-zero exit on any failure).
#
# lit runs two suites: test/ (offline) and test/Online/ (Debian's real HIP
# libraries, downloaded; feature debian-archive), the second with its own
# report ("online lit"); both count in the totals.
#
# Results are read from the runners' machine-readable reports (ctest
# --output-junit, lit --xunit-xml-output) by utils/test-results.py. With
# CI=true nothing may be skipped: a lit test UNSUPPORTED for a missing
# feature (debian-archive included), or a real-world run that cannot
# download its package, fails.
# Elsewhere, skipped tests and why are listed in the closing lines.
#
# The TSan suite runs the gtests only. Nothing but the library's
# PipelineOptions::ThreadPool and its callers' own threads starts a thread.
# The gtests that use threads (unittests/ConcurrencyTest.cpp,
# TargetMCTest.ConcurrentUse) all run under TSan (~1.5 min; the threaded
# ones alone ~10 s). hotswap-opt runs inputs and bundle entries on a pool
# (--threads, all cores by default), so lit tests on
# several inputs or on containers use threads too; those paths are checked
# for identical bytes (test/Driver/many-threads-bytes.test,
# test/Bundle/threads.test) but not under TSan. (The whole lit suite under
# TSan took 16 min on 2 busy cores, for no report, when the driver still
# ran on one thread.)
# TSan exits with status 66 after any report, so ctest fails the test that
# raced.
#
# The style check runs whatever suites are asked for; it counts as one test.
#
# Usage: utils/check.sh            every suite (what CI runs)
#        utils/check.sh --fast     the release build only
#        utils/check.sh --sanitize the ASan+UBSan build only
#        utils/check.sh --tsan     the ThreadSanitizer build only (gtests)
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

case "${1:-}" in
  "") SUITES=(release sanitize tsan) ;;
  --fast) SUITES=(release) ;;
  --sanitize) SUITES=(sanitize) ;;
  --tsan) SUITES=(tsan) ;;
  *) echo "usage: utils/check.sh [--fast|--sanitize|--tsan]" >&2; exit 2 ;;
esac

CI_FLAG=()
if [ "${CI:-}" = "true" ]; then CI_FLAG=(--ci); fi

total_passed=0; total_failed=0; total_skipped=0
SKIP_LINES=()

# add_results LABEL REPORT...: summarises reports, adds to the totals.
add_results() {
  local label="$1"; shift
  local out line p f s
  out="$(python3 "$ROOT/utils/test-results.py" "${CI_FLAG[@]}" --label "$label" "$@")"
  while IFS= read -r line; do
    case "$line" in
      RESULT*) ;;
      *": skipped "*) SKIP_LINES+=("$line") ;;
      *) echo "$line" ;;
    esac
  done <<<"$out"
  line="$(grep '^RESULT ' <<<"$out")"
  p=$(sed -n 's/.*passed=\([0-9]*\).*/\1/p' <<<"$line")
  f=$(sed -n 's/.*failed=\([0-9]*\).*/\1/p' <<<"$line")
  s=$(sed -n 's/.*skipped=\([0-9]*\).*/\1/p' <<<"$line")
  echo "$label: ${p:-0} passed, ${f:-1} failed, ${s:-0} skipped"
  total_passed=$((total_passed + ${p:-0}))
  total_failed=$((total_failed + ${f:-1}))
  total_skipped=$((total_skipped + ${s:-0}))
}

# run_suite NAME LIT BUILD-FLAG...: builds, runs ctest and (LIT=lit) lit.
run_suite() {
  local name="$1" lit="$2"; shift 2
  echo "== $name suite"
  local build_dir
  if ! build_dir="$("$ROOT/utils/build.sh" "$@" | tail -n 1)" || [ ! -d "$build_dir" ]; then
    echo "$name: build failed"
    total_failed=$((total_failed + 1))
    return
  fi

  # gtest, through ctest (which discovered every TEST).
  rm -f "$build_dir/ctest-junit.xml"
  (cd "$build_dir" && ctest --output-on-failure -j"$(nproc)" \
      --output-junit "$build_dir/ctest-junit.xml") >"$build_dir/ctest.log" 2>&1
  [ $? -ne 0 ] && grep -E "Failed|\*\*\*|(WARNING|ERROR): ThreadSanitizer" "$build_dir/ctest.log" | head -50
  add_results "$name gtest" "$build_dir/ctest-junit.xml"

  [ "$lit" = lit ] || return
  run_lit "$name lit" "$build_dir/test" "$build_dir/lit"
  run_lit "$name online lit" "$build_dir/test/Online" "$build_dir/lit-online"
}

# run_lit LABEL SUITE-DIR OUT: runs one lit suite (OUT.log, OUT-xunit.xml),
# prints what failed and adds its results.
run_lit() {
  local label="$1" suite="$2" out="$3"
  rm -f "$out-xunit.xml"
  /usr/lib/llvm-22/bin/lit -sv --xunit-xml-output="$out-xunit.xml" \
    "$suite" >"$out.log" 2>&1
  if [ $? -ne 0 ]; then
    grep -E "^(FAIL|XPASS|UNRESOLVED|TIMEOUT):|fatal" "$out.log" | head -50
    # First the lines that say why (errors, signals, a full disk), at most
    # 12 per test: a CI log that is cut short still shows them.
    local stars="********************"
    awk -v s="$stars" '
      index($0, s " TEST ") == 1 && index($0, " FAILED " s) { on = 1; n = 0; print "why " $0 }
      on && n < 12 && /error|Error|No space|Killed|Segmentation|Abort|signal|not found|Traceback/ && !/^# (RUN|executed command)|# RUN: at line|^\+ / { print "  " $0; n++ }
      on && $0 == s { on = 0 }' "$out.log" | head -120
    # FileCheck's annotated input of each failing test, at most 40 lines:
    # what the command printed where a check did not match.
    awk -v s="$stars" '
      index($0, s " TEST ") == 1 && index($0, " FAILED " s) { on = 1; n = 0 }
      on && /Input was:/ { dump = 1 }
      on && dump && n++ < 40 { print "  " $0 }
      on && dump && />>>>>>/ { dump = 0 }
      on && $0 == s { on = 0; dump = 0 }' "$out.log" | head -120
    # What each failing test printed (lit -v's block), at most 80 lines
    # per test, so that a CI log alone says why.
    awk -v s="$stars" '
      index($0, s " TEST ") == 1 && index($0, " FAILED " s) { on = 1; n = 0 }
      on && n++ < 80 { print }
      on && $0 == s { on = 0 }' "$out.log" | head -400
  fi
  add_results "$label" "$out-xunit.xml"
}

# Real-world code objects (utils/real-world.py): every device code object of
# Debian's librocrand1 (ROCm 5.3 HIP fat binaries) through the pipeline and
# verify, twice. Needs the Debian archive; when the download is impossible
# the step is skipped (a failure in CI), never passed.
run_real_world() {
  echo "== real-world code objects (librocrand1)"
  local build_dir="${BUILD_DIR:-$ROOT/build}" log
  log="$build_dir/real-world.log"
  python3 "$ROOT/utils/real-world.py" --tool "$build_dir/bin/hotswap-opt" \
    --work "$build_dir/real-world" librocrand1 >"$log" 2>&1
  local rc=$?
  tail -n 12 "$log"
  if grep -q "^cannot download" "$log"; then
    if [ ${#CI_FLAG[@]} -ne 0 ]; then
      echo "real-world: FAILED (skipped in CI): librocrand1 cannot be downloaded"
      total_failed=$((total_failed + 1))
    else
      SKIP_LINES+=("real-world: skipped librocrand1: cannot download the package")
      total_skipped=$((total_skipped + 1))
    fi
    return
  fi
  local p f
  p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$log" | tail -1)
  f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log" | tail -1)
  if [ -z "$p" ]; then p=0; f=1; fi
  [ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
  total_passed=$((total_passed + p)); total_failed=$((total_failed + f))
}

# Style: clang-format (LLVM style, .clang-format) over every C/C++ file.
run_format_check() {
  echo "== style (utils/format.sh --check)"
  local out
  if out="$("$ROOT/utils/format.sh" --check 2>&1)"; then
    echo "style: every C/C++ file is formatted"
    total_passed=$((total_passed + 1))
  else
    grep -v '^format.sh:' <<<"$out" | head -n 20
    grep '^format.sh:' <<<"$out"
    echo "style: FAILED (utils/format.sh --fix formats the files listed)"
    total_failed=$((total_failed + 1))
  fi
}

for s in "${SUITES[@]}"; do
  case "$s" in
    release)
      run_suite release lit
      run_real_world ;;
    sanitize) run_suite "asan+ubsan" lit --sanitize ;;
    tsan) run_suite tsan no-lit --tsan ;;
  esac
done

# After the suites: their build has run utils/bootstrap.sh, which installs
# clang-format-22.
run_format_check

if [ ${#SKIP_LINES[@]} -ne 0 ]; then
  echo "== skipped (a missing feature or download; in CI these fail)"
  printf '%s\n' "${SKIP_LINES[@]}"
fi
echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
[ "$total_failed" -eq 0 ]
