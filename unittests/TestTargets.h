//===- unittests/TestTargets.h - TargetInfo for gtests ----------*- C++ -*-===//
//
// The TargetInfo of a processor as a code object v6 header would give it;
// a test failure (not an abort) when the machine value is unknown. And the
// MC state the tests of one processor share (testMC()): a test program is
// one thread, so one TargetMC per (processor, features) is enough.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_UNITTESTS_TESTTARGETS_H
#define HOTSWAP_UNITTESTS_TESTTARGETS_H

#include "hotswap/AMDGPU/TargetInfo.h"
#include "hotswap/AMDGPU/TargetMC.h"

#include "llvm/ADT/StringMap.h"

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

/// The TargetMC the tests use for (MCPU, Features), created on first use.
inline llvm::Expected<TargetMC &> testMC(llvm::StringRef MCPU,
                                         llvm::StringRef Features) {
  static llvm::StringMap<std::unique_ptr<TargetMC>> Cache;
  std::string Key = (MCPU + "/" + Features).str();
  auto It = Cache.find(Key);
  if (It != Cache.end())
    return *It->second;
  llvm::Expected<std::unique_ptr<TargetMC>> MC =
      TargetMC::create(MCPU, Features);
  if (!MC)
    return MC.takeError();
  return *Cache.try_emplace(Key, std::move(*MC)).first->second;
}

inline TargetMC &testMC(const TargetInfo &TI) {
  llvm::Expected<TargetMC &> MC = testMC(TI.MCPU, TI.Features);
  if (!MC)
    llvm::report_fatal_error(MC.takeError());
  return *MC;
}

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_UNITTESTS_TESTTARGETS_H
