//===- lib/AMDGPU/Prologue.cpp - Entry prologues --------------------------===//

#include "hotswap/AMDGPU/Prologue.h"

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Support/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstrDesc.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

StringRef amdgpu::erratumPrologueAsm() {
  return "global_prefetch_b8 v0, s[0:1] scope:SCOPE_SE\nv_nop\n";
}

Expected<std::vector<uint8_t>>
amdgpu::assembleErratumPrologue(const TargetInfo &TI, const TargetMC &MC) {
  if (TI.Gen != Generation::GFX125)
    return makeError("prologue 'gfx1250-vmem' is only for gfx125x "
                     "targets, not " +
                     TI.Name);
  return MC.assemble(erratumPrologueAsm());
}

/// Assembly spelling of an MC register name: SGPR4 -> s4, VGPR0 -> v0,
/// SGPR4_SGPR5 -> s[4:5], EXEC -> exec.
static std::string asmRegName(StringRef Name) {
  SmallVector<StringRef, 4> Parts;
  Name.split(Parts, '_');
  auto One = [](StringRef P, std::string &Kind, std::string &Num) {
    for (StringRef Pre : {"SGPR", "VGPR", "AGPR", "TTMP"})
      if (P.starts_with(Pre) && P.size() > Pre.size() &&
          isDigit(P[Pre.size()])) {
        Kind = Pre == "SGPR"   ? "s"
               : Pre == "VGPR" ? "v"
               : Pre == "AGPR" ? "a"
                               : "ttmp";
        Num = P.drop_front(Pre.size()).str();
        return true;
      }
    return false;
  };
  std::string K1, N1, K2, N2;
  if (Parts.size() >= 2 && One(Parts.front(), K1, N1) &&
      One(Parts.back(), K2, N2) && K1 == K2)
    return K1 + "[" + N1 + ":" + N2 + "]";
  if (Parts.size() == 1 && One(Parts.front(), K1, N1))
    return K1 + N1;
  return Name.lower();
}

/// Whether writing the register named \p Name at kernel entry is harmless.
static bool writableAtEntry(const TargetInfo &TI, StringRef Name) {
  if (Name == "scc")
    return true;
  if (TI.Gen >= Generation::GFX10 &&
      (Name == "vcc" || Name == "vcc_lo" || Name == "vcc_hi"))
    return true;
  return false;
}

Error amdgpu::checkPrologue(const TargetInfo &TI, const TargetMC &MC,
                            ArrayRef<uint8_t> Bytes) {
  const MCInstrInfo &MII = MC.instrInfo();
  if (Bytes.size() % 4 != 0)
    return makeError("prologue size " + Twine(Bytes.size()) +
                     " is not a multiple of 4");
  if (Bytes.size() > 128)
    return makeError("prologue is " + Twine(Bytes.size()) +
                     " bytes; at most 128 fit in a stub");
  uint64_t Off = 0;
  while (Off < Bytes.size()) {
    std::optional<DecodedInst> D = MC.decodeOne(Bytes.drop_front(Off), Off);
    if (!D)
      return makeError("prologue: invalid instruction at offset " + Twine(Off));
    const MCInst &I = D->Inst;
    const MCInstrDesc &Desc = MII.get(I.getOpcode());
    std::string Text = MC.printInst(I, Off);
    StringRef T = StringRef(Text).trim();
    if (Desc.isBranch() || Desc.isCall() || Desc.isReturn() ||
        Desc.isTerminator() || Desc.isIndirectBranch() ||
        T.starts_with("s_endpgm") || T.starts_with("s_setpc") ||
        T.starts_with("s_set_pc") || T.starts_with("s_swappc") ||
        T.starts_with("s_swap_pc") || T.starts_with("s_add_pc") ||
        T.starts_with("s_cbranch") || T.starts_with("s_branch"))
      return makeError("prologue: '" + T +
                       "' changes control flow; a prologue must "
                       "fall through to the jump");
    auto Check = [&](MCRegister R) -> Error {
      std::string Name = asmRegName(MC.regName(R));
      if (writableAtEntry(TI, Name))
        return Error::success();
      return makeError("prologue: '" + T + "' writes " + Name +
                       ", which may be live at kernel entry");
    };
    for (unsigned K = 0; K < Desc.getNumDefs() && K < I.getNumOperands(); ++K)
      if (I.getOperand(K).isReg() && I.getOperand(K).getReg())
        if (Error E = Check(I.getOperand(K).getReg()))
          return E;
    for (MCPhysReg R : Desc.implicit_defs()) {
      // EXEC/M0 and friends are live; SCC/VCC are not.
      if (Error E = Check(R))
        return E;
    }
    Off += D->Size;
  }
  return Error::success();
}
