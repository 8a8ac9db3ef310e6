#!/usr/bin/env bash
# Builds a libFuzzer target (separate build dir, clang-22, ASan+UBSan,
# -DHOTSWAP_FUZZ=ON), rebuilds its seed corpus, fuzzes for SECONDS and prints
# executions and coverage. Crashing inputs are left in
# $BUILD_DIR/fuzz-artifacts[-TARGET].
# Usage: utils/fuzz.sh SECONDS [JOBS]     (JOBS parallel processes, default 1)
#   FUZZ_TARGET picks the target: code (hotswap-fuzz, code objects; the
#     default), bundle (hotswap-fuzz-bundle: plain bundles and CCOBs), host
#     (hotswap-fuzz-host: HIP host binaries), restore (hotswap-fuzz-restore:
#     `restore` and `verify` on edited provenance records) or swap
#     (hotswap-fuzz-swap: fuzzed replacement FILEs for swap-kernels); each
#     has its own corpus, artifacts and log;
#   FUZZ_BUILD_DIR overrides the build directory (default ROOT/build-fuzz);
#   FUZZ_ARGS adds libFuzzer flags.
# Runs libFuzzer's fork mode (-fork=JOBS): like -jobs it runs JOBS processes,
# but it carries on after a crash (every crashing input is kept) and merges
# all new coverage into one corpus.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SECONDS_TO_RUN="${1:?usage: utils/fuzz.sh SECONDS [JOBS]}"
JOBS="${2:-1}"
BUILD_DIR="${FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
TARGET="${FUZZ_TARGET:-code}"
case "$TARGET" in
  code) FUZZER=hotswap-fuzz; SUFFIX= ;;
  bundle|host|restore|swap) FUZZER=hotswap-fuzz-$TARGET; SUFFIX=-$TARGET ;;
  *) echo "utils/fuzz.sh: FUZZ_TARGET must be code, bundle, host, restore or swap" >&2; exit 2 ;;
esac

"$ROOT/utils/bootstrap.sh" >&2
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=/usr/lib/llvm-22/bin/clang \
    -DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++ \
    -DHOTSWAP_FUZZ=ON -DHOTSWAP_BUILD_TESTS=OFF >&2
fi
cmake --build "$BUILD_DIR" --target "$FUZZER" hotswap-opt -- -j2 >&2

SEEDS="$BUILD_DIR/fuzz-seeds$SUFFIX"
CORPUS="$BUILD_DIR/fuzz-corpus$SUFFIX"
ARTIFACTS="$BUILD_DIR/fuzz-artifacts$SUFFIX"
LOG="$BUILD_DIR/fuzz$SUFFIX.log"
rm -rf "$SEEDS"
mkdir -p "$SEEDS" "$CORPUS" "$ARTIFACTS"
python3 "$ROOT/fuzz/build-corpus.py" "$SEEDS" --kind "$TARGET" \
  --hotswap-opt "$BUILD_DIR/bin/hotswap-opt" >&2
# One dictionary per run: ELF tokens, bundle tokens, or both for hosts (none
# for restore: its inputs are edit scripts).
DICT="$BUILD_DIR/fuzz$SUFFIX.dict"
case "$TARGET" in
  code|swap) cp "$ROOT/fuzz/elf-amdgpu.dict" "$DICT" ;;
  restore) DICT= ;;
  bundle) cp "$ROOT/fuzz/bundle.dict" "$DICT" ;;
  host) cat "$ROOT/fuzz/elf-amdgpu.dict" "$ROOT/fuzz/bundle.dict" > "$DICT" ;;
esac

# Leaks are bugs too (detect_leaks is on by default under ASan); UBSan reports
# abort (-fno-sanitize-recover=all), so libFuzzer sees them as crashes.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
before=$(ls "$ARTIFACTS" | wc -l)
cd "$BUILD_DIR"
set +e
# shellcheck disable=SC2086
"$BUILD_DIR/bin/$FUZZER" \
  ${DICT:+-dict="$DICT"} -max_len=65536 -timeout=20 \
  -max_total_time="$SECONDS_TO_RUN" -fork="$JOBS" \
  -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
  -artifact_prefix="$ARTIFACTS/" -print_final_stats=1 ${FUZZ_ARGS:-} \
  "$CORPUS" "$SEEDS" >"$LOG" 2>&1
rc=$?
set -e

# Fork mode's status lines: "#EXECS: cov: C ft: F corp: ... oom/timeout/crash: a/b/c ..."
last=$(grep -E '^#[0-9]+: cov: ' "$LOG" | tail -n 1 || true)
execs=$(sed -n 's/^#\([0-9]*\): .*/\1/p' <<<"$last")
cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
otc=$(sed -n 's|.*oom/timeout/crash: \([0-9/]*\).*|\1|p' <<<"$last")
after=$(ls "$ARTIFACTS" | wc -l)
echo "fuzz: $FUZZER, ${SECONDS_TO_RUN}s, $JOBS job(s): executions ${execs:-?}, cov ${cov:-?}, ft ${ft:-?}, corpus $(ls "$CORPUS" | wc -l) files, oom/timeout/crash ${otc:-?}"
echo "fuzz: $((after - before)) new artifact(s) in $ARTIFACTS (log: $LOG)"
if [ "$after" -gt "$before" ]; then
  ls -t "$ARTIFACTS" | head -n $((after - before)) | sed 's/^/  /'
  exit 1
fi
exit $rc
