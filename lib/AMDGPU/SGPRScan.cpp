//===- lib/AMDGPU/SGPRScan.cpp - SGPR usage from the code -----------------===//

#include "hotswap/AMDGPU/SGPRScan.h"

#include "hotswap/AMDGPU/TargetMC.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/Support/Endian.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

/// Index of a 32-bit SGPR from its MC name ("SGPR5", "s5", "SGPR5_LO16").
static std::optional<unsigned> sgprIndex(StringRef Name) {
  unsigned N;
  if (Name.consume_front("SGPR")) {
    Name = Name.take_while([](char C) { return C >= '0' && C <= '9'; });
    if (!Name.empty() && !Name.getAsInteger(10, N))
      return N;
    return std::nullopt;
  }
  if (Name.consume_front("s") && !Name.empty() && !Name.getAsInteger(10, N))
    return N;
  return std::nullopt;
}

bool amdgpu::isOneWordEncoding(uint32_t W) {
  if ((W >> 31) == 0) { // VOP2, VOP1, VOPC
    const uint32_t Src0 = W & 0x1ff;
    return Src0 != 0xf9 && Src0 != 0xfa; // SDWA, DPP
  }
  return (W >> 30) == 0b10; // SOP2, SOPK, SOP1, SOPC, SOPP
}

namespace {
/// \p W with the \p Bits-bit field at \p Shift replaced by \p F(field).
template <typename T, typename Fn>
T mapField(T W, unsigned Shift, unsigned Bits, Fn F) {
  const T Mask = ((T(1) << Bits) - 1) << Shift;
  return (W & ~Mask) |
         (T(F(static_cast<uint32_t>((W & Mask) >> Shift))) << Shift);
}

/// A VGPR number (an 8-bit field) reduced to v1 (odd) or v2 (even), from v1
/// to v223; v0 stays (a field an opcode does not use must be 0), and so do
/// v224 and up, where a tuple of 32 (an MFMA's 1024-bit operand) runs out of
/// range.
uint32_t vgprClass(uint32_t N) { return N == 0 || N >= 224 ? N : 2 - (N & 1); }

/// A 9-bit source operand: a VGPR (256 + N) reduced as vgprClass does;
/// SGPRs, constants and specials (below 256) as they are.
uint32_t sourceClass(uint32_t V) {
  return V < 256 ? V : 256 + vgprClass(V - 256);
}
} // namespace

uint32_t amdgpu::memoKey(uint32_t W) {
  if ((W >> 31) != 0) // SOP*: no VGPRs
    return W;
  W = mapField(W, 0, 9, sourceClass); // src0 (SDWA/DPP never get here)
  const uint32_t Op = (W >> 25) & 0x3f;
  if (Op == 0x3f) // VOP1: vdst may be an SGPR
    return W;
  W = mapField(W, 9, 8, vgprClass); // vsrc1
  if (Op == 0x3e)                   // VOPC: bits 24-17 are the opcode
    return W;
  return mapField(W, 17, 8, vgprClass); // VOP2's vdst
}

uint64_t amdgpu::memoKey(uint64_t Q) {
  switch (static_cast<uint32_t>(Q) >> 26) {
  case 0b110100: // VOP3, VOP3P: src0, src1, src2 in the second word
    for (unsigned Shift : {32u, 41u, 50u})
      Q = mapField(Q, Shift, 9, sourceClass);
    return Q;
  case 0b110110: // DS: addr, data0, data1, vdst
    for (unsigned Shift : {32u, 40u, 48u, 56u})
      Q = mapField(Q, Shift, 8, vgprClass);
    return Q;
  case 0b110111: // FLAT, GLOBAL, SCRATCH: addr, data, vdst (not saddr)
    for (unsigned Shift : {32u, 40u, 56u})
      Q = mapField(Q, Shift, 8, vgprClass);
    return Q;
  default:
    return Q;
  }
}

SGPRScanner::InstSummary SGPRScanner::summarize(ArrayRef<uint8_t> Bytes,
                                                uint64_t Addr) {
  InstSummary R;
  std::optional<DecodedInst> D = MC.decodeOne(Bytes, Addr);
  ++Decoded;
  if (!D || D->Size == 0)
    return R;
  R.Size = static_cast<uint8_t>(D->Size);
  unsigned Opc = D->Inst.getOpcode();
  auto KI = OpcodeKind.find(Opc);
  if (KI == OpcodeKind.end()) {
    StringRef N = MC.instrInfo().getName(Opc);
    bool C = N.starts_with("S_SWAPPC") || N.starts_with("S_SETPC") ||
             N.starts_with("S_CALL") || N.starts_with("S_SWAP_PC") ||
             N.starts_with("S_SET_PC");
    // Relative SGPR addressing (s[base + M0]) may reach any SGPR.
    bool M = N.starts_with("S_MOVREL");
    KI = OpcodeKind.try_emplace(Opc, C, M).first;
  }
  R.Call = KI->second.first;
  R.MovRel = KI->second.second;
  const MCRegisterInfo &MRI = MC.regInfo();
  for (const MCOperand &Op : D->Inst) {
    if (!Op.isReg() || !Op.getReg())
      continue;
    MCRegister Reg = Op.getReg();
    auto RI = RegMax.find(Reg.id());
    if (RI == RegMax.end()) {
      int Max = -1;
      for (MCPhysReg Sub : MRI.subregs_inclusive(Reg))
        if (std::optional<unsigned> I = sgprIndex(MRI.getName(Sub)))
          Max = std::max<int>(Max, *I);
      RI = RegMax.try_emplace(Reg.id(), Max).first;
    }
    R.MaxSGPR = std::max(R.MaxSGPR, RI->second);
  }
  return R;
}

Expected<SGPRScan> SGPRScanner::scan(ArrayRef<uint8_t> Code, uint64_t Addr) {
  if (TI.Gen == Generation::GFX6 || TI.Gen == Generation::GFX7)
    return createStringError("LLVM 22 cannot disassemble " + TI.Name + " code");
  // The memo is sound where the instruction is at most 8 bytes (gfx8-9, the
  // only targets scanned) and decodeOne() sees the bytes themselves, not a
  // padded copy (at least 32 bytes left).
  const bool Memo = TI.Gen == Generation::GFX8 || TI.Gen == Generation::GFX9;
  constexpr uint64_t Reach = 32;
  SGPRScan S;
  int Max = -1;
  uint64_t Off = 0;
  // The summary at Off, through the memo \p Map under \p Key (a key DenseMap
  // reserves is decoded every time).
  auto Remember = [&](auto &Map, auto Key) {
    using Info = WordInfo<decltype(Key)>;
    if (Key == Info::getEmptyKey() || Key == Info::getTombstoneKey())
      return summarize(Code.drop_front(Off), Addr + Off);
    auto [It, New] = Map.try_emplace(Key);
    if (New)
      It->second = summarize(Code.drop_front(Off), Addr + Off);
    else
      ++Remembered;
    return It->second;
  };
  while (Off + 4 <= Code.size()) {
    InstSummary I;
    if (!Memo || Code.size() - Off < Reach)
      I = summarize(Code.drop_front(Off), Addr + Off);
    else if (uint32_t W = support::endian::read32le(Code.data() + Off);
             isOneWordEncoding(W))
      I = Remember(ByWord, memoKey(W));
    else
      I = Remember(ByWords,
                   memoKey(support::endian::read64le(Code.data() + Off)));
    if (I.Size == 0) {
      ++S.UndecodedWords;
      Off += 4;
      continue;
    }
    S.HasCalls |= I.Call;
    S.IndexesSGPRs |= I.MovRel;
    Max = std::max(Max, I.MaxSGPR);
    Off += I.Size;
  }
  S.NumSGPRs = static_cast<unsigned>(Max + 1);
  return S;
}

Expected<SGPRScan> amdgpu::scanSGPRs(const TargetInfo &TI, const TargetMC &MC,
                                     ArrayRef<uint8_t> Code, uint64_t Addr) {
  SGPRScanner Scanner(TI, MC);
  return Scanner.scan(Code, Addr);
}
