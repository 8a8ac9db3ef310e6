//===- unittests/ScratchSGPRTest.cpp - Scratch pair, SGPR scan, prologue --===//
//
// The register decisions a stub depends on: which SGPR pair it may clobber
// (and the granule that makes it legal on gfx6-9), the SGPR count read off
// real instructions, and which prologues are rejected.
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/ScratchSGPR.h"
#include "hotswap/AMDGPU/KernelDescriptor.h"
#include "hotswap/AMDGPU/Prologue.h"
#include "hotswap/AMDGPU/SGPRScan.h"
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

TEST(ScratchSGPRTest, GFX10PlusTakesTheFirstEvenPairAboveUse) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100);
  KernelDescriptor KD;
  Expected<ScratchChoice> C = chooseScratch(TI, KD, 17, 0);
  ASSERT_TRUE(bool(C));
  EXPECT_FALSE(C->UseVCC);
  EXPECT_EQ(C->SGPR, 18u);
  C = chooseScratch(TI, KD, 104, 0);
  ASSERT_TRUE(bool(C));
  EXPECT_FALSE(C->UseVCC);
  EXPECT_EQ(C->SGPR, 104u); // s[104:105] is the last addressable pair
  C = chooseScratch(TI, KD, 105, 0);
  ASSERT_TRUE(bool(C));
  EXPECT_TRUE(C->UseVCC);
  // gfx10+ never needs a granule.
  Expected<std::optional<unsigned>> G = granuleForPair(TI, KD, 104, 6);
  ASSERT_TRUE(bool(G));
  EXPECT_FALSE(G->has_value());
}

TEST(ScratchSGPRTest, GFX9PairInsideTheAllocationNeedsNoGranule) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX900);
  // Granule 5: 48 SGPRs allocated. 40 used + pair s[40:41] + 6 specials = 48.
  KernelDescriptor KD = withGranule(5);
  Expected<std::optional<unsigned>> G = granuleForPair(TI, KD, 40, 6);
  ASSERT_TRUE(bool(G));
  EXPECT_FALSE(G->has_value());
  Expected<ScratchChoice> C = chooseScratch(TI, KD, 39, 6);
  ASSERT_TRUE(bool(C));
  EXPECT_EQ(C->SGPR, 40u);
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

TEST(ScratchSGPRTest, GFX9FullSGPRFileFallsBackToVCC) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX906);
  // 102 SGPRs in use: no pair below the 102 addressable ones.
  KernelDescriptor KD = withGranule(13); // 112 SGPRs
  Expected<ScratchChoice> C = chooseScratch(TI, KD, 102, 6);
  ASSERT_TRUE(bool(C));
  EXPECT_TRUE(C->UseVCC);
  Expected<std::optional<unsigned>> G = granuleForVCC(TI, KD, 102, 6);
  ASSERT_TRUE(bool(G));
  EXPECT_FALSE(G->has_value());
  // A smaller allocation must grow so that VCC stays above the kernel.
  KernelDescriptor Small = withGranule(12); // 104 < 102 + 6
  G = granuleForVCC(TI, Small, 102, 6);
  ASSERT_TRUE(bool(G));
  ASSERT_TRUE(G->has_value());
  EXPECT_EQ(**G, 13u);
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

TEST(SGPRScanTest, HighestNumberedSGPRIncludingTuples) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A);
  std::vector<uint8_t> Code = assemble(TI, "s_mov_b32 s3, 0\n"
                                           "s_load_dwordx8 s[8:15], s[4:5], 0\n"
                                           "v_mov_b32 v7, s1\n"
                                           "s_mov_b64 vcc, exec\n"
                                           "s_endpgm\n");
  Expected<SGPRScan> S = scanSGPRs(TI, testMC(TI), Code, 0x1000);
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_EQ(S->NumSGPRs, 16u); // s15 is the highest; vcc/exec do not count
  EXPECT_FALSE(S->HasCalls);
  EXPECT_FALSE(S->IndexesSGPRs);
  EXPECT_EQ(S->UndecodedWords, 0u);
}

TEST(SGPRScanTest, CallsAndRelativeAddressingAreReported) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX900);
  std::vector<uint8_t> Call =
      assemble(TI, "s_swappc_b64 s[30:31], s[4:5]\ns_endpgm\n");
  Expected<SGPRScan> S = scanSGPRs(TI, testMC(TI), Call, 0);
  ASSERT_TRUE(bool(S));
  EXPECT_TRUE(S->HasCalls);
  EXPECT_EQ(S->NumSGPRs, 32u);
  std::vector<uint8_t> Rel = assemble(TI, "s_movrels_b32 s0, s10\n");
  S = scanSGPRs(TI, testMC(TI), Rel, 0);
  ASSERT_TRUE(bool(S));
  EXPECT_TRUE(S->IndexesSGPRs);
}

TEST(SGPRScanTest, NoDisassemblerBeforeGFX8) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX700);
  Expected<SGPRScan> S = scanSGPRs(TI, testMC(TI), {0, 0, 0x80, 0xbf}, 0);
  ASSERT_FALSE(bool(S));
  EXPECT_EQ(toString(S.takeError()), "LLVM 22 cannot disassemble gfx700 code");
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

TEST(SGPRScanTest, LiteralCutOffByTheEndIsNotDecoded) {
  // v_add_f32 v2, <literal>, v2 with its 32-bit literal missing: LLVM 22's
  // disassembler crashes on it unless the bytes are padded (found by the
  // fuzzer). The word is not an instruction that fits, so it is skipped.
  for (unsigned Mach :
       {ELF::EF_AMDGPU_MACH_AMDGCN_GFX803, ELF::EF_AMDGPU_MACH_AMDGCN_GFX900,
        ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A}) {
    TargetInfo TI = target(Mach);
    Expected<TargetMC &> MC = testMC(TI.MCPU, TI.Features);
    ASSERT_TRUE(bool(MC)) << toString(MC.takeError());
    const uint8_t Cut[] = {0xff, 0x04, 0x04, 0x02};
    EXPECT_FALSE(MC->decodeOne(Cut, 0x1000).has_value()) << TI.Name;
    // With its literal the same word decodes to an 8-byte instruction.
    const uint8_t Whole[] = {0xff, 0x04, 0x04, 0x02, 0x00, 0x00, 0x80, 0x3f};
    std::optional<DecodedInst> D = MC->decodeOne(Whole, 0x1000);
    ASSERT_TRUE(D.has_value()) << TI.Name;
    EXPECT_EQ(D->Size, 8u);
    Expected<SGPRScan> S = scanSGPRs(TI, testMC(TI), Cut, 0x1000);
    ASSERT_TRUE(bool(S));
    EXPECT_EQ(S->UndecodedWords, 1u);
  }
}

TEST(SGPRScanTest, LiteralFieldsOf64BitEncodingsBeforeGFX10) {
  // VOP3 with src0 = literal and MUBUF with soffset = literal: illegal
  // before gfx10 (no room for the literal) and crash LLVM 22's disassembler.
  // They are undecodable words, never a crash; legal neighbours still decode.
  const uint8_t VOP3Lit[] = {0x04, 0x00, 0x8f, 0xd2, 0xff, 0x0c, 0x02, 0x00};
  const uint8_t MUBUFLit[] = {0x00, 0x03, 0x00, 0xe0, 0x00, 0x01, 0xf8, 0xff};
  for (unsigned Mach :
       {ELF::EF_AMDGPU_MACH_AMDGCN_GFX803, ELF::EF_AMDGPU_MACH_AMDGCN_GFX900,
        ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A}) {
    TargetInfo TI = target(Mach);
    Expected<TargetMC &> MC = testMC(TI.MCPU, TI.Features);
    ASSERT_TRUE(bool(MC)) << toString(MC.takeError());
    EXPECT_FALSE(MC->decodeOne(VOP3Lit, 0).has_value()) << TI.Name;
    EXPECT_FALSE(MC->decodeOne(MUBUFLit, 0).has_value()) << TI.Name;
    // The same VOP3 with an SGPR source (s1) is an ordinary instruction.
    const uint8_t VOP3Reg[] = {0x04, 0x00, 0x8f, 0xd2, 0x01, 0x0c, 0x02, 0x00};
    std::optional<DecodedInst> D = MC->decodeOne(VOP3Reg, 0);
    ASSERT_TRUE(D.has_value()) << TI.Name;
    EXPECT_EQ(D->Size, 8u);
  }
}
