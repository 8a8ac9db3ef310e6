//===- unittests/TestTargets.h - TargetInfo for gtests ----------*- C++ -*-===//
//
// The TargetInfo of a processor as a code object v6 header would give it;
// a test failure (not an abort) when the machine value is unknown.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_UNITTESTS_TESTTARGETS_H
#define HOTSWAP_UNITTESTS_TESTTARGETS_H

#include "hotswap/AMDGPU/TargetInfo.h"

#include "llvm/BinaryFormat/ELF.h"
#include "gtest/gtest.h"

namespace hotswap {
namespace amdgpu {

inline TargetInfo target(unsigned Mach) {
  llvm::Expected<TargetInfo> TI =
      getTargetInfo(Mach, llvm::ELF::ELFOSABI_AMDGPU_HSA,
                    llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V6);
  if (!TI) {
    ADD_FAILURE() << llvm::toString(TI.takeError());
    return TargetInfo();
  }
  return std::move(*TI);
}

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_UNITTESTS_TESTTARGETS_H
