//===- unittests/SGPRScanMemoTest.cpp - The scan memo's keys against MC ---===//
//
// The SGPR scan decodes an instruction once per memo key (memoKey) and
// reuses the summary for every instruction with the same key. That is sound
// only if the MC disassembler decodes every instruction of a key to the same
// opcode and size, with the same registers but for which VGPR (or AGPR) an
// operand names. Checked here on every opcode value of each encoding whose
// key drops bits, with random operand fields (half of them cleared, so that
// most opcodes decode), on each generation the scan runs on.
//
//===----------------------------------------------------------------------===//

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
using namespace hotswap;
using namespace hotswap::amdgpu;

namespace {

/// Whether \p Reg is a VGPR or AGPR, or a tuple of them.
bool isVectorRegister(const MCRegisterInfo &MRI, MCRegister Reg) {
  StringRef Name = MRI.getName(Reg);
  return Name.starts_with("VGPR") || Name.starts_with("AGPR");
}

/// Why \p A and \p B differ in more than the vector registers and the
/// immediates they name (empty: they do not). The scan reads no immediate,
/// and a field that is a VGPR for one opcode may be an immediate for another
/// of the same encoding (the attribute of a VOP3 v_interp_*).
std::string differenceBeyondVGPRs(const MCRegisterInfo &MRI,
                                  const std::optional<DecodedInst> &A,
                                  const std::optional<DecodedInst> &B) {
  if (bool(A) != bool(B))
    return A ? "only the first decodes" : "only the second decodes";
  if (!A)
    return "";
  if (A->Size != B->Size)
    return "sizes " + std::to_string(A->Size) + " and " +
           std::to_string(B->Size);
  if (A->Inst.getOpcode() != B->Inst.getOpcode())
    return "opcodes differ";
  if (A->Inst.getNumOperands() != B->Inst.getNumOperands())
    return "operand counts differ";
  for (unsigned I = 0; I < A->Inst.getNumOperands(); ++I) {
    const MCOperand &X = A->Inst.getOperand(I), &Y = B->Inst.getOperand(I);
    if (X.isReg() != Y.isReg() || X.isImm() != Y.isImm())
      return "operand " + std::to_string(I) + " changed kind";
    if (X.isReg() && X.getReg() != Y.getReg() &&
        !(isVectorRegister(MRI, X.getReg()) &&
          isVectorRegister(MRI, Y.getReg())))
      return std::string("register operand ") + std::to_string(I) + ": " +
             MRI.getName(X.getReg()) + " and " + MRI.getName(Y.getReg());
  }
  return "";
}

struct Format {
  const char *Name;
  uint32_t Fixed, FixedMask; // the first word's identifying bits
  unsigned OpShift, OpBits;  // its opcode field
  bool TwoWords;             // a 64-bit encoding
};

TEST(SGPRScanMemoTest, InstructionsWithOneKeyNameTheSameSGPRs) {
  const Format Formats[] = {
      {"VOP2", 0x00000000, 0x80000000, 25, 6, false},
      {"VOP1", 0x7e000000, 0xfe000000, 9, 8, false},
      {"VOPC", 0x7c000000, 0xfe000000, 17, 8, false},
      {"VOP3", 0xd0000000, 0xfc000000, 16, 10, true},
      {"DS", 0xd8000000, 0xfc000000, 17, 8, true},
      {"FLAT", 0xdc000000, 0xfc000000, 18, 7, true},
  };
  uint64_t Rand = 0x2545f4914f6cdd1d;
  auto next = [&Rand] {
    Rand ^= Rand << 13;
    Rand ^= Rand >> 7;
    Rand ^= Rand << 17;
    return Rand;
  };
  for (unsigned Mach :
       {ELF::EF_AMDGPU_MACH_AMDGCN_GFX803, ELF::EF_AMDGPU_MACH_AMDGCN_GFX900,
        ELF::EF_AMDGPU_MACH_AMDGCN_GFX906, ELF::EF_AMDGPU_MACH_AMDGCN_GFX908,
        ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A, ELF::EF_AMDGPU_MACH_AMDGCN_GFX942,
        ELF::EF_AMDGPU_MACH_AMDGCN_GFX950}) {
    TargetInfo TI = target(Mach);
    const TargetMC &MC = testMC(TI);
    unsigned Reduced = 0; // instructions whose key differs from their bytes
    unsigned Opcodes = 0; // opcode values with at least one such instruction
    for (const Format &F : Formats) {
      for (uint32_t Op = 0; Op < (1u << F.OpBits); ++Op) {
        const unsigned Before = Reduced;
        for (unsigned Sample = 0; Sample < 48; ++Sample) {
          uint64_t Q = next();
          // Every other sample clears about half of the fields (nibbles):
          // unused fields must be 0, and most opcodes decode only then.
          if (Sample % 2)
            for (uint64_t Keep = next(), N = 0; N < 16; ++N)
              if (!(Keep >> N & 1))
                Q &= ~(uint64_t(0xf) << (4 * N));
          uint32_t W = static_cast<uint32_t>(Q) & ~F.FixedMask;
          W &= ~(((1u << F.OpBits) - 1) << F.OpShift);
          W |= F.Fixed | (Op << F.OpShift);
          Q = (Q & ~uint64_t(0xffffffff)) | W;
          uint64_t Key;
          if (F.TwoWords) {
            Key = memoKey(Q);
          } else {
            if (!isOneWordEncoding(W))
              continue;
            Key = (Q & ~uint64_t(0xffffffff)) | memoKey(W);
          }
          if (Key == Q)
            continue;
          std::vector<uint8_t> Bytes(32, 0), KeyBytes(32, 0);
          support::endian::write64le(Bytes.data(), Q);
          support::endian::write64le(KeyBytes.data(), Key);
          std::optional<DecodedInst> A = MC.decodeOne(Bytes, 0x1000);
          std::optional<DecodedInst> B = MC.decodeOne(KeyBytes, 0x1000);
          ASSERT_EQ(differenceBeyondVGPRs(MC.regInfo(), A, B), "")
              << F.Name << " " << utohexstr(Q) << " and its key "
              << utohexstr(Key) << " on " << TI.Name;
          Reduced += A.has_value();
        }
        Opcodes += Reduced != Before;
      }
    }
    // Many of the reduced words are instructions, of most opcodes of these
    // encodings (gfx803: 830 opcode values): the check is not vacuous.
    EXPECT_GT(Reduced, 8000u) << TI.Name;
    EXPECT_GT(Opcodes, 780u) << TI.Name;
  }
}

TEST(SGPRScanMemoTest, KeysKeepWhatIsNotAVGPR) {
  // v_add_f32_e32 v3, s3, v4: s3 stays; v3 becomes v1 and v4 v2.
  EXPECT_EQ(memoKey(uint32_t(0x02060803)), 0x02020403u);
  // v0 stays v0: an unused field must be 0.
  EXPECT_EQ(memoKey(uint32_t(0x02000003)), 0x02000003u);
  // v_readfirstlane_b32 s5, v1 (VOP1's vdst): only src0 is reduced.
  EXPECT_EQ(memoKey(uint32_t(0x7e0a0501)), 0x7e0a0501u);
  // SOP2 and SOPP words are their own keys.
  EXPECT_EQ(memoKey(uint32_t(0x8e038806)), 0x8e038806u);
  EXPECT_EQ(memoKey(uint32_t(0xbf810000)), 0xbf810000u);
  // v_cmp_eq_f32_e64 s[10:11], s2, 0 (VOP3 with SGPR and constant sources).
  EXPECT_EQ(memoKey(uint64_t(0x00010002d042000a)), 0x00010002d042000aull);
  // v_lshlrev_b64 v[4:5], 2, v[3:4]: src1 v3 -> v1 (odd stays odd).
  EXPECT_EQ(memoKey(uint64_t(0x00020682d28f0004)), 0x00020282d28f0004ull);
  // A VGPR from v240 up is kept: a tuple there may run out of range.
  EXPECT_EQ(memoKey(uint64_t(0x000003f0d28f0004)), 0x000003f0d28f0004ull);
  // SMEM has no VGPRs.
  EXPECT_EQ(memoKey(uint64_t(0x00000014c00a0002)), 0x00000014c00a0002ull);
}

} // namespace
