//===- fuzz/hotswap-fuzz-host.cpp - libFuzzer target: HIP host binaries ---===//
//
// x86-64 host executables and libraries (wrappers, their relocations, the
// bundles they point to) through the whole pipeline; checks in
// FuzzContainer.h. Seeds: fuzz/build-corpus.py --kind host. Run with
// FUZZ_TARGET=host utils/fuzz.sh SECONDS.
//
//===----------------------------------------------------------------------===//

#include "FuzzContainer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  return hotswap::fuzz::runContainer(Data, Size,
                                     {hotswap::bundle::InputKind::HostELF});
}
