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

std::vector<std::string> code::counterCodeLines(CounterUnit Unit) {
  std::vector<std::string> L = {"s_getpc_b64 %sp0",
                                "s_mov_b32 %s0, " +
                                    std::to_string(CounterDistancePlaceholder)};
  if (Unit == CounterUnit::Wave) {
    L.push_back("s_mov_b64 %sp1, 1");
  } else {
    L.push_back("s_bcnt1_i32_b64 %sp1.0, exec");
    L.push_back("s_mov_b32 %sp1.1, 0");
  }
  L.push_back("s_atomic_add_x2 %sp1, %sp0, %s0");
  L.push_back("s_waitcnt lgkmcnt(0)");
  return L;
}

Expected<CounterTarget> code::counterCodeTarget(const amdgpu::TargetMC &MC,
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
  static constexpr StringLiteral WaveShape[] = {
      "S_GETPC_B64", "S_MOV_B32", "S_MOV_B64", "S_ATOMIC_ADD_X2", "S_WAITCNT"};
  static constexpr StringLiteral LaneShape[] = {"S_GETPC_B64",     "S_MOV_B32",
                                                "S_BCNT1_I32_B64", "S_MOV_B32",
                                                "S_ATOMIC_ADD_X2", "S_WAITCNT"};
  const bool Lane = Insns.size() == std::size(LaneShape);
  ArrayRef<StringLiteral> Shape = Lane ? ArrayRef<StringLiteral>(LaneShape)
                                       : ArrayRef<StringLiteral>(WaveShape);
  if (Insns.size() != Shape.size())
    return makeError(Twine(Insns.size()) + " instructions, not the " +
                     Twine(std::size(WaveShape)) + " or " +
                     Twine(std::size(LaneShape)) + " of counter code");
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
  auto Text = [&](size_t I) {
    return StringRef(MC.printInst(Insns[I].second, Insns[I].first.Addr))
        .trim()
        .str();
  };
  MCRegister A = Reg(0, 0), C = Reg(1, 0);
  std::optional<int64_t> Dist = Imm(1, 1);
  RegSet SA = RM.emptySet(), SC = RM.emptySet(), SD = RM.emptySet();
  if (!A || !C || !Dist)
    return makeError("its operands are not those of counter code");
  RM.addUnits(A, SA);
  RM.addUnits(C, SC);
  if (!Lane) {
    MCRegister D = Reg(2, 0);
    if (!D || Imm(2, 1) != 1)
      return makeError("its operands are not those of counter code");
    RM.addUnits(D, SD);
  } else {
    // The count of EXEC's lanes in the low half, 0 in the high half.
    MCRegister Lo = Reg(2, 0), Hi = Reg(3, 0);
    if (!Lo || !Hi || Imm(3, 1) != 0)
      return makeError("its operands are not those of counter code");
    RM.addUnits(Lo, SD);
    RM.addUnits(Hi, SD);
    std::string Count = "s_bcnt1_i32_b64 " + RM.format([&] {
      RegSet S = RM.emptySet();
      RM.addUnits(Lo, S);
      return S;
    }()) + ", exec";
    if (Text(2) != Count)
      return makeError("its lane count is '" + Text(2) + "', not '" + Count +
                       "'");
  }
  // The address is the PC's until the atomic: nothing between writes A.
  if (SA.anyCommon(SC) || SA.anyCommon(SD) || SC.anyCommon(SD))
    return makeError("its registers overlap");
  // The atomic: data D, base A, offset C, no return, nothing else.
  const size_t At = Lane ? 4 : 3;
  std::string Want = "s_atomic_add_x2 " + RM.format(SD) + ", " + RM.format(SA) +
                     ", " + RM.format(SC);
  if (Text(At) != Want)
    return makeError("its atomic is '" + Text(At) + "', not '" + Want + "'");
  if (Text(At + 1) != "s_waitcnt lgkmcnt(0)")
    return makeError("its wait is '" + Text(At + 1) +
                     "', not s_waitcnt lgkmcnt(0)");
  return CounterTarget{Insns[0].first.end() + uint64_t(uint32_t(*Dist)),
                       Lane ? CounterUnit::Lane : CounterUnit::Wave};
}
