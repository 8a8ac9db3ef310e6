//===- lib/Bundle/HostBinary.cpp - HIP host executables/libs --------------===//

#include "hotswap/Bundle/HostBinary.h"

#include "hotswap/Support/Error.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::bundle;

Expected<HostBinary> HostBinary::analyze(const Object &Host) {
  return makeError("HIP host binaries are not supported yet");
}

Error HostBinary::replaceBundles(
    Object &Host, ArrayRef<std::optional<std::vector<uint8_t>>> NewBundles,
    const HostRewriteOptions &Opts) const {
  return makeError("HIP host binaries are not supported yet");
}
