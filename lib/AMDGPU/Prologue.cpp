//===- lib/AMDGPU/Prologue.cpp - Entry prologues --------------------------===//

#include "hotswap/AMDGPU/Prologue.h"

#include "hotswap/AMDGPU/TargetMC.h"

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
amdgpu::assembleErratumPrologue(const TargetInfo &TI) {
  if (TI.Gen != Generation::GFX125)
    return createStringError("prologue 'gfx1250-vmem' is only for gfx125x "
                             "targets, not " +
                             TI.Name);
  Expected<TargetMC &> MC = TargetMC::get(TI.MCPU, TI.Features);
  if (!MC)
    return MC.takeError();
  return MC->assemble(erratumPrologueAsm());
}

/// Whether writing \p Reg at kernel entry is harmless.
static bool writableAtEntry(const TargetInfo &TI, StringRef Name) {
  if (Name == "scc")
    return true;
  if (TI.Gen >= Generation::GFX10 &&
      (Name == "vcc" || Name == "vcc_lo" || Name == "vcc_hi"))
    return true;
  return false;
}

Error amdgpu::checkPrologue(const TargetInfo &TI, ArrayRef<uint8_t> Bytes) {
  Expected<TargetMC &> MCOrErr = TargetMC::get(TI.MCPU, TI.Features);
  if (!MCOrErr)
    return MCOrErr.takeError();
  TargetMC &MC = *MCOrErr;
  const MCInstrInfo &MII = MC.instrInfo();
  const MCRegisterInfo &MRI = MC.regInfo();
  if (Bytes.size() % 4 != 0)
    return createStringError("prologue size " + Twine(Bytes.size()) +
                             " is not a multiple of 4");
  if (Bytes.size() > 128)
    return createStringError("prologue is " + Twine(Bytes.size()) +
                             " bytes; at most 128 fit in a stub");
  uint64_t Off = 0;
  while (Off < Bytes.size()) {
    std::optional<DecodedInst> D = MC.decodeOne(Bytes.drop_front(Off), Off);
    if (!D)
      return createStringError("prologue: invalid instruction at offset " +
                               Twine(Off));
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
      return createStringError("prologue: '" + T +
                               "' changes control flow; a prologue must "
                               "fall through to the jump");
    auto check = [&](MCRegister R) -> Error {
      StringRef Name = MC.regName(R);
      if (writableAtEntry(TI, Name))
        return Error::success();
      return createStringError("prologue: '" + T + "' writes " + Name +
                               ", which may be live at kernel entry");
    };
    for (unsigned K = 0; K < Desc.getNumDefs() && K < I.getNumOperands(); ++K)
      if (I.getOperand(K).isReg() && I.getOperand(K).getReg())
        if (Error E = check(I.getOperand(K).getReg()))
          return E;
    for (MCPhysReg R : Desc.implicit_defs()) {
      // EXEC/M0 and friends are live; SCC/VCC are not.
      if (Error E = check(R))
        return E;
    }
    (void)MRI;
    Off += D->Size;
  }
  return Error::success();
}
