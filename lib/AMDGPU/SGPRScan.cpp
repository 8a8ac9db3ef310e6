//===- lib/AMDGPU/SGPRScan.cpp - SGPR usage from the code -----------------===//

#include "hotswap/AMDGPU/SGPRScan.h"

#include "hotswap/AMDGPU/TargetMC.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"

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

Expected<SGPRScan> amdgpu::scanSGPRs(const TargetInfo &TI, const TargetMC &MC,
                                     ArrayRef<uint8_t> Code, uint64_t Addr) {
  if (TI.Gen == Generation::GFX6 || TI.Gen == Generation::GFX7)
    return createStringError("LLVM 22 cannot disassemble " + TI.Name +
                             " code");
  const MCRegisterInfo &MRI = MC.regInfo();
  // Highest SGPR index covered by each register (memoized: few distinct).
  DenseMap<unsigned, int> Memo;
  auto MaxSGPR = [&](MCRegister R) -> int {
    auto It = Memo.find(R.id());
    if (It != Memo.end())
      return It->second;
    int Max = -1;
    for (MCPhysReg Sub : MRI.subregs_inclusive(R))
      if (std::optional<unsigned> I = sgprIndex(MRI.getName(Sub)))
        Max = std::max<int>(Max, *I);
    Memo[R.id()] = Max;
    return Max;
  };
  const MCInstrInfo &MII = MC.instrInfo();
  DenseMap<unsigned, bool> IsCall;
  auto IsCallOpcode = [&](unsigned Opc) {
    auto It = IsCall.find(Opc);
    if (It != IsCall.end())
      return It->second;
    StringRef N = MII.getName(Opc);
    bool C = N.starts_with("S_SWAPPC") || N.starts_with("S_SETPC") ||
             N.starts_with("S_CALL") || N.starts_with("S_SWAP_PC") ||
             N.starts_with("S_SET_PC");
    IsCall[Opc] = C;
    return C;
  };
  SGPRScan S;
  int Max = -1;
  uint64_t Off = 0;
  while (Off + 4 <= Code.size()) {
    std::optional<DecodedInst> D = MC.decodeOne(Code.drop_front(Off), Addr + Off);
    if (!D || D->Size == 0) {
      ++S.UndecodedWords;
      Off += 4;
      continue;
    }
    if (IsCallOpcode(D->Inst.getOpcode()))
      S.HasCalls = true;
    // Relative SGPR addressing (s[base + M0]) may reach any SGPR.
    if (MII.getName(D->Inst.getOpcode()).starts_with("S_MOVREL"))
      S.IndexesSGPRs = true;
    for (const MCOperand &Op : D->Inst)
      if (Op.isReg() && Op.getReg())
        Max = std::max(Max, MaxSGPR(Op.getReg()));
    Off += D->Size;
  }
  S.NumSGPRs = static_cast<unsigned>(Max + 1);
  return S;
}
