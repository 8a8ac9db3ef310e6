//===- fuzz/hotswap-fuzz-bundle.cpp - libFuzzer target: offload bundles ---===//
//
// Plain offload bundles and CCOBs (v1-v3, zlib and zstd) through the whole
// pipeline; checks in FuzzContainer.h. Seeds: fuzz/build-corpus.py --kind
// bundle. Run with FUZZ_TARGET=bundle utils/fuzz.sh SECONDS.
//
//===----------------------------------------------------------------------===//

#include "FuzzContainer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  using hotswap::bundle::InputKind;
  return hotswap::fuzz::runContainer(
      Data, Size,
      {InputKind::OffloadBundle, InputKind::CompressedOffloadBundle});
}
