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
    using Info = DenseMapInfo<decltype(Key)>;
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
      I = Remember(ByWord, W);
    else
      I = Remember(ByWords, support::endian::read64le(Code.data() + Off));
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
