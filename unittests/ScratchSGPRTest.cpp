//===- unittests/ScratchSGPRTest.cpp - Scratch pair, prologue -------------===//
//
// The register decisions a stub depends on: which SGPR pair it may clobber
// (and the granule that makes it legal on gfx6-9), and which prologues are
// rejected.
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/ScratchSGPR.h"
#include "hotswap/AMDGPU/KernelDescriptor.h"
#include "hotswap/AMDGPU/Prologue.h"
#include "hotswap/AMDGPU/TargetInfo.h"
#include "hotswap/AMDGPU/TargetMC.h"

#include "llvm/BinaryFormat/ELF.h"
#include "gtest/gtest.h"

#include "TestTargets.h"

using namespace llvm;
using namespace hotswap::amdgpu;

namespace {

KernelDescriptor withGranule(unsigned G) {
  KernelDescriptor KD;
  KD.setSGPRGranule(G);
  return KD;
}

/// A kernel with \p User user SGPRs and workgroup ID X (live-ins User + 1)
/// and SGPR granule \p G.
KernelDescriptor kernel(unsigned User, unsigned G) {
  KernelDescriptor KD = withGranule(G);
  KD.ComputePgmRsrc2 = (User << 1) | (1u << 7);
  return KD;
}

std::vector<uint8_t> assemble(const TargetInfo &TI, StringRef Text) {
  Expected<TargetMC &> MC = testMC(TI.MCPU, TI.Features);
  if (!MC) {
    ADD_FAILURE() << toString(MC.takeError());
    return {};
  }
  Expected<std::vector<uint8_t>> B = MC->assemble(Text);
  if (!B) {
    ADD_FAILURE() << toString(B.takeError());
    return {};
  }
  return *B;
}

} // namespace

TEST(ScratchSGPRTest, GFX10PlusTakesTheFirstEvenPairAtOrAboveTheLiveIns) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100);
  KernelDescriptor KD = kernel(16, 0); // 17 live-ins
  Expected<ScratchChoice> C = chooseScratch(TI, KD);
  ASSERT_TRUE(bool(C));
  EXPECT_FALSE(C->UseVCC);
  EXPECT_EQ(C->SGPR, 18u);
  // gfx10+ never needs a granule.
  Expected<std::optional<unsigned>> G = granuleForPair(TI, KD, 104, 6);
  ASSERT_TRUE(bool(G));
  EXPECT_FALSE(G->has_value());
}

TEST(ScratchSGPRTest, GFX9PairInsideTheAllocationNeedsNoGranule) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX900 |
                         ELF::EF_AMDGPU_FEATURE_XNACK_OFF_V4);
  // Granule 1: 16 SGPRs. 11 live-ins: s[12:13] + VCC = 16.
  Expected<ScratchChoice> C = chooseScratch(TI, kernel(10, 1));
  ASSERT_TRUE(bool(C));
  EXPECT_FALSE(C->UseVCC);
  EXPECT_EQ(C->SGPR, 12u);
  // Granule 5: 48 SGPRs. s[40:41] + 6 specials = 48.
  Expected<std::optional<unsigned>> G =
      granuleForPair(TI, withGranule(5), 40, 6);
  ASSERT_TRUE(bool(G));
  EXPECT_FALSE(G->has_value());
}

TEST(ScratchSGPRTest, GFX9GranuleIsRaisedWhenThePairDoesNotFit) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX900);
  KernelDescriptor KD = withGranule(5); // 48 SGPRs
  // s[42:43] + 6 specials = 50 > 48: granule 6 (56 SGPRs).
  Expected<std::optional<unsigned>> G = granuleForPair(TI, KD, 42, 6);
  ASSERT_TRUE(bool(G));
  ASSERT_TRUE(G->has_value());
  EXPECT_EQ(**G, 6u);
  // With only VCC reserved the same pair fits: 42 + 2 + 2 = 46.
  G = granuleForPair(TI, KD, 42, 2);
  ASSERT_TRUE(bool(G));
  EXPECT_FALSE(G->has_value());
}

TEST(ScratchSGPRTest, GFX9VCCWhenOnlyItFitsTheAllocation) {
  // XNACK may be on: VCC and XNACK_MASK at the top. Granule 1 (16 SGPRs),
  // 11 live-ins: s[12:13] + 4 = 18 does not fit, VCC does (11 + 4 <= 16).
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX906);
  Expected<ScratchChoice> C = chooseScratch(TI, kernel(10, 1));
  ASSERT_TRUE(bool(C));
  EXPECT_TRUE(C->UseVCC);
  Expected<std::optional<unsigned>> G = granuleForVCC(TI, kernel(10, 1), 4);
  ASSERT_TRUE(bool(G));
  EXPECT_FALSE(G->has_value());
  // A smaller allocation must grow so that VCC stays above the live-ins.
  G = granuleForVCC(TI, kernel(15, 1), 4); // 16 + 4 > 16
  ASSERT_TRUE(bool(G));
  ASSERT_TRUE(G->has_value());
  EXPECT_EQ(**G, 2u);
  EXPECT_EQ(maxSGPRGranule(TI), 13u);
}

TEST(ScratchSGPRTest, SGPRInitBugPartsCannotGrow) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX802);
  ASSERT_TRUE(TI.HasSGPRInitBug);
  KernelDescriptor KD = withGranule(11); // fixed 96
  Expected<std::optional<unsigned>> G = granuleForPair(TI, KD, 88, 6);
  ASSERT_TRUE(bool(G));
  EXPECT_FALSE(G->has_value());
  G = granuleForPair(TI, KD, 90, 6);
  ASSERT_FALSE(bool(G));
  EXPECT_NE(toString(G.takeError()).find("fixed SGPR allocation"),
            std::string::npos);
}

TEST(ScratchSGPRTest, OddPairIsRejected) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX900);
  Expected<std::optional<unsigned>> G =
      granuleForPair(TI, withGranule(1), 9, 0);
  ASSERT_FALSE(bool(G));
  EXPECT_EQ(toString(G.takeError()),
            "scratch pair s[9:10] is not even-aligned");
}

TEST(PrologueTest, ErratumPrologueIsAcceptedOnGFX1250Only) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1250);
  Expected<std::vector<uint8_t>> P = assembleErratumPrologue(TI, testMC(TI));
  ASSERT_TRUE(bool(P)) << toString(P.takeError());
  EXPECT_EQ(P->size(), 16u); // 12-byte global_prefetch_b8 + 4-byte v_nop
  EXPECT_FALSE(bool(checkPrologue(TI, testMC(TI), *P)));
  TargetInfo Old = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100);
  Expected<std::vector<uint8_t>> Q = assembleErratumPrologue(Old, testMC(Old));
  ASSERT_FALSE(bool(Q));
  EXPECT_EQ(toString(Q.takeError()),
            "prologue 'gfx1250-vmem' is only for gfx125x targets, not gfx1100");
}

TEST(PrologueTest, WritesToLiveRegistersAndBranchesAreRejected) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100);
  struct Case {
    const char *Asm;
    const char *Message;
  } Cases[] = {
      {"s_mov_b32 s0, 1", "prologue: 's_mov_b32 s0, 1' writes s0, which may "
                          "be live at kernel entry"},
      {"s_mov_b64 s[2:3], 0", "prologue: 's_mov_b64 s[2:3], 0' writes s[2:3], "
                              "which may be live at kernel entry"},
      {"s_mov_b64 exec, 0", "prologue: 's_mov_b64 exec, 0' writes exec, which "
                            "may be live at kernel entry"},
      {"s_branch 3", "prologue: 's_branch 3' changes control flow; a prologue "
                     "must fall through to the jump"},
      {"s_endpgm", "prologue: 's_endpgm' changes control flow; a prologue must "
                   "fall through to the jump"},
  };
  for (const Case &C : Cases) {
    std::vector<uint8_t> B = assemble(TI, C.Asm);
    Error E = checkPrologue(TI, testMC(TI), B);
    ASSERT_TRUE(bool(E)) << C.Asm;
    EXPECT_EQ(toString(std::move(E)), C.Message);
  }
  // SCC and VCC are undefined at entry on gfx10+: writing them is fine.
  std::vector<uint8_t> Ok =
      assemble(TI, "s_nop 0\ns_cmp_eq_u32 s0, 0\ns_mov_b64 vcc, 0\n");
  EXPECT_FALSE(bool(checkPrologue(TI, testMC(TI), Ok)));
}
