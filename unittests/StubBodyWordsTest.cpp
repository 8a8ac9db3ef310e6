//===- unittests/StubBodyWordsTest.cpp - Directly encoded stubs vs MC -----===//
//
// StubBodyWords stands in for MC's assembler: every body it gives must
// be the bytes MC assembles from the same text, on every processor
// TargetInfo knows, for every scratch pair, VCC and the short form.
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/StubBodyWords.h"
#include "hotswap/AMDGPU/StubEncoder.h"
#include "hotswap/AMDGPU/TargetInfo.h"
#include "hotswap/AMDGPU/TargetMC.h"

#include "llvm/ADT/StringExtras.h"
#include "gtest/gtest.h"

#include "TestTargets.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

namespace {

/// The TargetInfo of \p Mach from a v6 header (generic version 1 for the
/// generic targets, which need one).
TargetInfo anyTarget(unsigned Mach) {
  for (uint32_t Version : {0u, 1u}) {
    Expected<TargetInfo> TI = getTargetInfo(
        Mach | Version << ELF::EF_AMDGPU_GENERIC_VERSION_OFFSET,
        ELF::ELFOSABI_AMDGPU_HSA, ELF::ELFABIVERSION_AMDGPU_HSA_V6);
    if (TI)
      return std::move(*TI);
    consumeError(TI.takeError());
  }
  ADD_FAILURE() << "no TargetInfo for mach 0x" << utohexstr(Mach);
  return TargetInfo();
}

TEST(StubBodyWordsTest, EveryBodyIsWhatMCAssembles) {
  unsigned Checked = 0;
  for (unsigned Mach : allKnownMachs()) {
    TargetInfo TI = anyTarget(Mach);
    SCOPED_TRACE(TI.Name);
    TargetMC &MC = testMC(TI);
    auto E = StubEncoder::create(TI, MC);
    ASSERT_TRUE(bool(E)) << toString(E.takeError());
    auto check = [&](StubSpec::RegKind Form, unsigned SGPR,
                     const std::string &Asm) {
      std::optional<std::vector<uint8_t>> Cached =
          stubBodyWords(TI, Form, SGPR);
      ASSERT_TRUE(Cached.has_value()) << Asm;
      Expected<std::vector<uint8_t>> Want = MC.assemble(Asm);
      ASSERT_TRUE(bool(Want)) << toString(Want.takeError());
      EXPECT_EQ(toHex(*Cached), toHex(*Want)) << Asm;
      ++Checked;
    };
    check(StubSpec::Short, 0, (*E)->shortFormAsm(0));
    check(StubSpec::VCC, 0, (*E)->longFormAsm(StubSpec::VCC, 0, 0, 0));
    for (unsigned N = 0; N + 2 <= TI.AddressableSGPRs; N += 2)
      check(StubSpec::SGPRPair, N,
            (*E)->longFormAsm(StubSpec::SGPRPair, N, 0, 0));
  }
  EXPECT_GT(Checked, 2000u);
}

TEST(StubBodyWordsTest, NoBodyForAPairOutsideTheTarget) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX900);
  EXPECT_FALSE(stubBodyWords(TI, StubSpec::SGPRPair, 3).has_value());
  EXPECT_FALSE(
      stubBodyWords(TI, StubSpec::SGPRPair, TI.AddressableSGPRs).has_value());
  EXPECT_TRUE(stubBodyWords(TI, StubSpec::SGPRPair, TI.AddressableSGPRs - 2)
                  .has_value());
}

} // namespace
