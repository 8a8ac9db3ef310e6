//===- lib/Code/CounterCode.cpp - Code that counts a block ----------------===//

#include "hotswap/Code/CounterCode.h"

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Code/Registers.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/MC/MCInst.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

std::vector<std::string> code::counterCodeLines() {
  return {"s_getpc_b64 %sp0",
          "s_mov_b32 %s0, " + std::to_string(CounterDistancePlaceholder),
          "s_mov_b64 %sp1, 1", "s_atomic_add_x2 %sp1, %sp0, %s0",
          "s_waitcnt lgkmcnt(0)"};
}

Expected<uint64_t> code::counterCodeTarget(const amdgpu::TargetMC &MC,
                                           ArrayRef<uint8_t> Bytes,
                                           uint64_t Addr) {
  const InsnKinds &K = InsnKinds::get(MC.instrInfo());
  const RegisterModel &RM = RegisterModel::get(MC.regInfo());
  std::vector<std::pair<Insn, MCInst>> Insns;
  DecodedRange DR =
      decodeRange(MC, Bytes, Addr, [&](const Insn &I, const MCInst &M) {
        Insns.push_back({I, M});
      });
  if (DR.Stop)
    return makeError("the bytes at " + hex(DR.Stop->Addr) +
                     " are not an instruction");
  static constexpr StringLiteral Shape[] = {
      "S_GETPC_B64", "S_MOV_B32", "S_MOV_B64", "S_ATOMIC_ADD_X2", "S_WAITCNT"};
  if (Insns.size() != std::size(Shape))
    return makeError(Twine(Insns.size()) + " instructions, not the " +
                     Twine(std::size(Shape)) + " of counter code");
  for (size_t I = 0; I < Insns.size(); ++I)
    if (!K.baseName(Insns[I].second.getOpcode()).starts_with(Shape[I]))
      return makeError(
          "instruction " + Twine(I + 1) + " is " +
          StringRef(MC.printInst(Insns[I].second, Insns[I].first.Addr)).trim() +
          ", not " + StringRef(Shape[I]).lower());
  auto Reg = [&](size_t I, unsigned Op) -> MCRegister {
    const MCInst &M = Insns[I].second;
    return Op < M.getNumOperands() && M.getOperand(Op).isReg()
               ? M.getOperand(Op).getReg()
               : MCRegister();
  };
  auto Imm = [&](size_t I, unsigned Op) -> std::optional<int64_t> {
    const MCInst &M = Insns[I].second;
    return Op < M.getNumOperands() ? immediateValue(M.getOperand(Op))
                                   : std::nullopt;
  };
  MCRegister A = Reg(0, 0), C = Reg(1, 0), D = Reg(2, 0);
  std::optional<int64_t> Dist = Imm(1, 1), One = Imm(2, 1);
  if (!A || !C || !D || !Dist || One != 1)
    return makeError("its operands are not those of counter code");
  RegSet SA = RM.emptySet(), SC = RM.emptySet(), SD = RM.emptySet();
  RM.addUnits(A, SA);
  RM.addUnits(C, SC);
  RM.addUnits(D, SD);
  // The address is the PC's until the atomic: nothing between writes A.
  if (SA.anyCommon(SC) || SA.anyCommon(SD) || SC.anyCommon(SD))
    return makeError("its registers overlap");
  // The atomic: data D, base A, offset C, no return, nothing else.
  std::string Want = "s_atomic_add_x2 " + RM.format(SD) + ", " + RM.format(SA) +
                     ", " + RM.format(SC);
  std::string Got =
      StringRef(MC.printInst(Insns[3].second, Insns[3].first.Addr))
          .trim()
          .str();
  if (Got != Want)
    return makeError("its atomic is '" + Got + "', not '" + Want + "'");
  std::string Wait =
      StringRef(MC.printInst(Insns[4].second, Insns[4].first.Addr))
          .trim()
          .str();
  if (Wait != "s_waitcnt lgkmcnt(0)")
    return makeError("its wait is '" + Wait + "', not s_waitcnt lgkmcnt(0)");
  return Insns[0].first.end() + uint64_t(uint32_t(*Dist));
}
