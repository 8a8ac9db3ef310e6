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

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/Support/Endian.h"
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
    // v_cmp_class_f32_e64 with sdst = 0xff (a literal) crashes it the same
    // way (found by SGPRScanMemoTest); 0xff is v255 where the destination
    // is a VGPR (v_add_f32_e64 v255, s1, s2), which decodes.
    const uint8_t CmpLit[] = {0xff, 0x00, 0x10, 0xd0, 0x01, 0x04, 0x00, 0x00};
    EXPECT_FALSE(MC->decodeOne(CmpLit, 0).has_value()) << TI.Name;
    const uint8_t AddV255[] = {0xff, 0x00, 0x01, 0xd1, 0x01, 0x04, 0x00, 0x00};
    std::optional<DecodedInst> V255 = MC->decodeOne(AddV255, 0);
    ASSERT_TRUE(V255.has_value()) << TI.Name;
    EXPECT_EQ(MC->regInfo().getName(V255->Inst.getOperand(0).getReg()),
              StringRef("VGPR255"));
    // The same VOP3 with an SGPR source (s1) is an ordinary instruction.
    const uint8_t VOP3Reg[] = {0x04, 0x00, 0x8f, 0xd2, 0x01, 0x0c, 0x02, 0x00};
    std::optional<DecodedInst> D = MC->decodeOne(VOP3Reg, 0);
    ASSERT_TRUE(D.has_value()) << TI.Name;
    EXPECT_EQ(D->Size, 8u);
  }
}

// The scanner remembers a one-word encoding by its first word alone
// (isOneWordEncoding). That is sound only if the MC disassembler decodes
// such a word to the same instruction, with the same size and the same
// registers, whatever word follows it (which, when it is read at all, is a
// literal). Checked on every opcode value of every 32-bit encoding, with
// random operand fields, against several following words, on each
// generation the scan runs on.
TEST(SGPRScanTest, OneWordEncodingsDoNotDependOnTheNextWord) {
  struct Format {
    const char *Name;
    uint32_t Fixed, FixedMask; // the encoding's identifying bits
    unsigned OpShift, OpBits;  // its opcode field
  };
  const Format Formats[] = {
      {"VOP2", 0x00000000, 0x80000000, 25, 6},
      {"VOP1", 0x7e000000, 0xfe000000, 9, 8},
      {"VOPC", 0x7c000000, 0xfe000000, 17, 8},
      {"SOP2", 0x80000000, 0xc0000000, 23, 7},
      {"SOPK", 0xb0000000, 0xf0000000, 23, 5},
      {"SOP1", 0xbe800000, 0xff800000, 8, 8},
      {"SOPC", 0xbf000000, 0xff800000, 16, 7},
      {"SOPP", 0xbf800000, 0xff800000, 16, 7},
  };
  uint64_t Rand = 0x9e3779b97f4a7c15;
  auto next = [&Rand] {
    Rand ^= Rand << 13;
    Rand ^= Rand >> 7;
    Rand ^= Rand << 17;
    return static_cast<uint32_t>(Rand);
  };
  for (unsigned Mach :
       {ELF::EF_AMDGPU_MACH_AMDGCN_GFX803, ELF::EF_AMDGPU_MACH_AMDGCN_GFX900,
        ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A, ELF::EF_AMDGPU_MACH_AMDGCN_GFX942}) {
    TargetInfo TI = target(Mach);
    const TargetMC &MC = testMC(TI);
    unsigned Checked = 0;
    for (const Format &F : Formats) {
      for (uint32_t Op = 0; Op < (1u << F.OpBits); ++Op) {
        for (unsigned Sample = 0; Sample < 6; ++Sample) {
          // Random operand fields; src0 = 0xff (a literal) on one sample.
          uint32_t W = next() & ~F.FixedMask;
          W &= ~(((1u << F.OpBits) - 1) << F.OpShift);
          W |= F.Fixed | (Op << F.OpShift);
          if (Sample == 0)
            W = (W & ~0xffu) | 0xff;
          if (!isOneWordEncoding(W))
            continue;
          std::optional<DecodedInst> First;
          for (uint32_t Next : {0u, ~0u, next(), next(), next()}) {
            std::vector<uint8_t> Bytes(32, 0);
            support::endian::write32le(Bytes.data(), W);
            support::endian::write32le(Bytes.data() + 4, Next);
            std::optional<DecodedInst> D = MC.decodeOne(Bytes, 0x1000);
            if (!First) {
              First = D ? D : DecodedInst();
              continue;
            }
            SCOPED_TRACE(std::string(F.Name) + " word " + utohexstr(W) +
                         " then " + utohexstr(Next) + " on " + TI.Name);
            ASSERT_EQ(bool(D), First->Size != 0);
            if (!D)
              continue;
            ASSERT_EQ(D->Size, First->Size);
            ASSERT_EQ(D->Inst.getOpcode(), First->Inst.getOpcode());
            ASSERT_EQ(D->Inst.getNumOperands(), First->Inst.getNumOperands());
            for (unsigned I = 0; I < D->Inst.getNumOperands(); ++I) {
              const MCOperand &A = D->Inst.getOperand(I);
              const MCOperand &B = First->Inst.getOperand(I);
              ASSERT_EQ(A.isReg(), B.isReg());
              if (A.isReg())
                ASSERT_EQ(A.getReg(), B.getReg());
            }
            ++Checked;
          }
        }
      }
    }
    // Most of those words are instructions: the check is not vacuous.
    EXPECT_GT(Checked, 10000u) << TI.Name;
  }
}

TEST(SGPRScanTest, WordsOfTwoWordEncodingsAreNotOneWord) {
  EXPECT_TRUE(isOneWordEncoding(0x7e000280));  // v_mov_b32 v0, 0
  EXPECT_FALSE(isOneWordEncoding(0x7e0002f9)); // its SDWA form
  EXPECT_FALSE(isOneWordEncoding(0x7e0002fa)); // its DPP form
  EXPECT_TRUE(isOneWordEncoding(0xbf810000));  // s_endpgm
  EXPECT_FALSE(isOneWordEncoding(0xd1000000)); // VOP3
  EXPECT_FALSE(isOneWordEncoding(0xc0020000)); // SMEM
  EXPECT_FALSE(isOneWordEncoding(0xdc500000)); // FLAT
  EXPECT_FALSE(isOneWordEncoding(0xd4000000)); // VINTRP (kept out)
}
