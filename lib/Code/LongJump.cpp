//===- lib/Code/LongJump.cpp - Branches relaxed to reach anywhere ---------===//

#include "hotswap/Code/LongJump.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CallReads.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/MC/MCInst.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

namespace {
/// The literal written while the code is assembled, then replaced.
constexpr uint32_t Placeholder = 0x7fffffff;
/// s_getpc_b64, the adds with their literals, s_setpc_b64.
constexpr uint64_t JumpBytes = 4 + 8 + 8 + 4;

std::string sgpr(unsigned I) { return "s" + std::to_string(I); }
std::string pair(unsigned I) {
  return "s[" + std::to_string(I) + ":" + std::to_string(I + 1) + "]";
}
} // namespace

uint64_t code::relaxationSize(bool Conditional, const LongJumpRegs &Regs) {
  return (Conditional ? 4 : 0) + (Regs.SCCCopy ? 8 : 0) + JumpBytes +
         (Regs.WaitSALU ? 12 : 0);
}

Expected<std::vector<uint8_t>> code::relaxationCode(const amdgpu::TargetMC &MC,
                                                    bool Conditional,
                                                    const LongJumpRegs &Regs,
                                                    uint64_t After,
                                                    uint64_t Target) {
  const uint64_t Size = relaxationSize(Conditional, Regs);
  const unsigned P = Regs.Pair;
  std::string Text;
  if (Conditional) // past the long jump: 4 bytes of its own, then the rest
    Text += "s_branch " + std::to_string((Size - 4) / 4) + "\n";
  if (Regs.SCCCopy)
    Text += "s_cselect_b32 " + sgpr(*Regs.SCCCopy) + ", -1, 0\n";
  const uint64_t GetPC = (Conditional ? 4 : 0) + (Regs.SCCCopy ? 4 : 0);
  const std::string Wait =
      Regs.WaitSALU ? "s_waitcnt_depctr depctr_sa_sdst(0)\n" : "";
  Text += "s_getpc_b64 " + pair(P) + "\n" + Wait;
  Text += "s_add_u32 " + sgpr(P) + ", " + sgpr(P) + ", " +
          std::to_string(Placeholder) + "\n" + Wait;
  Text += "s_addc_u32 " + sgpr(P + 1) + ", " + sgpr(P + 1) + ", " +
          std::to_string(Placeholder) + "\n" + Wait;
  if (Regs.SCCCopy)
    Text += "s_cmp_lg_u32 " + sgpr(*Regs.SCCCopy) + ", 0\n";
  Text += "s_setpc_b64 " + pair(P) + "\n";
  Expected<std::vector<uint8_t>> B = MC.assemble(Text);
  if (!B)
    return B.takeError();
  if (B->size() != Size)
    return makeError("the long jump assembles to " + Twine(B->size()) +
                     " bytes, not " + Twine(Size));
  // s_getpc_b64 yields the address of what follows it; the adds'
  // literals follow their first 4 bytes.
  const uint64_t Offset = Target - (After + GetPC + 4);
  const uint64_t W = Regs.WaitSALU ? 4 : 0;
  for (auto [At, Half] : {std::pair<uint64_t, uint32_t>{GetPC + W + 8, Offset},
                          {GetPC + 2 * W + 16, Offset >> 32}})
    for (unsigned K = 0; K < 4; ++K)
      (*B)[At + K] = static_cast<uint8_t>(Half >> (8 * K));
  return B;
}

std::optional<LongJumpRegs> code::longJumpRegisters(const RegisterModel &RM,
                                                    const SiteRegisters &Free) {
  auto IsFree = [&](unsigned I) {
    RegSet S = RM.emptySet();
    RM.addSGPRs(I, 1, S);
    return S.any() && S.subsetOf(Free.Scratch);
  };
  RegSet SCC = RM.emptySet();
  RM.addClass(RegClass::SCC, SCC);
  const bool KeepSCC = !SCC.subsetOf(Free.Scratch);
  std::optional<unsigned> Pair;
  for (unsigned I = 0; I + 1 < 106 && !Pair; I += 2)
    if (IsFree(I) && IsFree(I + 1))
      Pair = I;
  if (!Pair)
    return std::nullopt;
  LongJumpRegs R{*Pair, std::nullopt};
  if (KeepSCC) {
    for (unsigned I = 0; I < 106 && !R.SCCCopy; ++I)
      if (I != *Pair && I != *Pair + 1 && IsFree(I))
        R.SCCCopy = I;
    if (!R.SCCCopy)
      return std::nullopt;
  }
  return R;
}

Expected<ReadRelaxation> code::readRelaxation(const amdgpu::TargetMC &MC,
                                              const FunctionCFG &C,
                                              ArrayRef<MCInst> Ops,
                                              uint32_t Branch, uint64_t End) {
  const InsnKinds &K = InsnKinds::get(MC.instrInfo());
  const RegisterModel &RM = RegisterModel::get(MC.regInfo());
  if (Branch >= C.Insns.size() || Ops.size() != C.Insns.size())
    return makeError("no branch to read");
  const Insn &B = C.Insns[Branch];
  if (B.F != Flow::Jump && B.F != Flow::CondJump)
    return makeError("the instruction at " + hex(B.Addr) +
                     " is not a direct branch");
  uint32_t I = Branch + 1;
  auto Name = [&](uint32_t J) {
    return J < C.Insns.size() ? K.baseName(Ops[J].getOpcode()) : StringRef();
  };
  auto Text = [&](uint32_t J) -> std::string {
    if (J >= C.Insns.size())
      return "the end of the code";
    return "'" + StringRef(MC.printInst(Ops[J], C.Insns[J].Addr)).trim().str() +
           "' at " + hex(C.Insns[J].Addr);
  };
  auto Fail = [&](uint32_t J, const Twine &Want) {
    return makeError(Text(J) + " is not " + Want);
  };
  if (B.F == Flow::CondJump) {
    if (Name(I) != "S_BRANCH" || C.Insns[I].Target != End)
      return Fail(I, "an s_branch past the long jump to " + hex(End));
    ++I;
  }
  if (I >= C.Insns.size() || B.Target != C.Insns[I].Addr)
    return makeError("the branch at " + hex(B.Addr) +
                     " does not reach the long jump after it");
  ReadRelaxation R;
  R.Entry = C.Insns[I].Addr;
  R.Writes = RM.emptySet();
  // A single SGPR operand, or an aligned SGPR pair.
  auto SGPR = [&](uint32_t J, unsigned Op,
                  unsigned Count) -> std::optional<unsigned> {
    if (J >= Ops.size() || Op >= Ops[J].getNumOperands() ||
        !Ops[J].getOperand(Op).isReg())
      return std::nullopt;
    auto S = RM.sgprRange(Ops[J].getOperand(Op).getReg());
    if (!S || S->second != Count)
      return std::nullopt;
    return S->first;
  };
  auto Imm = [&](uint32_t J, unsigned Op) -> std::optional<int64_t> {
    if (J >= Ops.size() || Op >= Ops[J].getNumOperands())
      return std::nullopt;
    return immediateValue(Ops[J].getOperand(Op));
  };
  if (Name(I) == "S_CSELECT_B32") {
    R.Regs.SCCCopy = SGPR(I, 0, 1);
    if (!R.Regs.SCCCopy || Imm(I, 1) != -1 || Imm(I, 2) != 0)
      return Fail(I, "s_cselect_b32 sQ, -1, 0");
    ++I;
  }
  std::optional<unsigned> P = SGPR(I, 0, 2);
  if (Name(I) != "S_GETPC_B64" || !P || *P % 2)
    return Fail(I, "s_getpc_b64 of an aligned SGPR pair");
  R.Regs.Pair = *P;
  const uint64_t PC = C.Insns[I].end();
  ++I;
  // gfx12's waits for the SALU's writes, after s_getpc_b64 and each add.
  auto SkipWait = [&](bool First) {
    const bool Wait =
        Name(I) == "S_WAITCNT_DEPCTR" && Imm(I, 0) && (*Imm(I, 0) & 1) == 0;
    if (First)
      R.Regs.WaitSALU = Wait;
    if (Wait && R.Regs.WaitSALU)
      ++I;
    return Wait == R.Regs.WaitSALU;
  };
  if (!SkipWait(true))
    return Fail(I, "s_add_u32");
  if (Name(I) != "S_ADD_U32" || SGPR(I, 0, 1) != *P || SGPR(I, 1, 1) != *P ||
      !Imm(I, 2))
    return Fail(I, "s_add_u32 " + sgpr(*P) + ", " + sgpr(*P) + ", constant");
  const uint32_t Lo = static_cast<uint32_t>(*Imm(I, 2));
  ++I;
  if (!SkipWait(false))
    return Fail(I, "s_waitcnt_depctr depctr_sa_sdst(0)");
  if (Name(I) != "S_ADDC_U32" || SGPR(I, 0, 1) != *P + 1 ||
      SGPR(I, 1, 1) != *P + 1 || !Imm(I, 2))
    return Fail(I, "s_addc_u32 " + sgpr(*P + 1) + ", " + sgpr(*P + 1) +
                       ", constant");
  const uint32_t Hi = static_cast<uint32_t>(*Imm(I, 2));
  ++I;
  if (!SkipWait(false))
    return Fail(I, "s_waitcnt_depctr depctr_sa_sdst(0)");
  if (R.Regs.SCCCopy) {
    if (Name(I) != "S_CMP_LG_U32" || SGPR(I, 0, 1) != R.Regs.SCCCopy ||
        Imm(I, 1) != 0)
      return Fail(I, "s_cmp_lg_u32 " + sgpr(*R.Regs.SCCCopy) + ", 0");
    if (*R.Regs.SCCCopy == *P || *R.Regs.SCCCopy == *P + 1)
      return makeError("the long jump at " + hex(R.Entry) +
                       " keeps SCC in a register of its address");
    ++I;
  }
  if (Name(I) != "S_SETPC_B64" || SGPR(I, 0, 2) != *P)
    return Fail(I, "s_setpc_b64 " + pair(*P));
  if (C.Insns[I].end() != End)
    return makeError("the relaxation of the branch at " + hex(B.Addr) +
                     " ends at " + hex(C.Insns[I].end()) + ", not at " +
                     hex(End));
  R.Target = PC + ((uint64_t(Hi) << 32) | Lo);
  RM.addSGPRs(*P, 2, R.Writes);
  if (R.Regs.SCCCopy)
    RM.addSGPRs(*R.Regs.SCCCopy, 1, R.Writes);
  else
    RM.addClass(RegClass::SCC, R.Writes);
  return R;
}

std::string code::longJumpRegsProblem(const RegisterModel &RM,
                                      const SiteRegisters &Free,
                                      const RegSet &Writes) {
  RegSet Bad = Writes;
  Bad.reset(Free.Scratch);
  if (Bad.none())
    return "";
  return RM.format(Bad) +
         " may not be written there (live, written by a load in flight, "
         "outside the allocation or used by the instruction)";
}

FunctionSeams::FunctionSeams(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                             ArrayRef<MCInst> Decoded, FunctionKind Kind,
                             bool Wave32, amdgpu::Generation Gen,
                             RegisterLimits Limits, CallReads *Calls)
    : MC(MC), G(G), Decoded(Decoded), Kind(Kind), Wave32(Wave32), Gen(Gen),
      Limits(Limits), Calls(Calls) {}

FunctionSeams::~FunctionSeams() = default;

const Liveness &FunctionSeams::liveness() {
  if (!L)
    L.emplace(computeLiveness(MC, G, Decoded, Kind, Wave32, Calls));
  return *L;
}

const WaitCounts &FunctionSeams::waitCounts() {
  if (!WC)
    WC.emplace(computeWaitCounts(MC, G, Decoded, Kind, Gen));
  return *WC;
}

SiteRegisters FunctionSeams::at(uint32_t I, SiteWhere W) {
  return siteRegisters(RegisterModel::get(MC.regInfo()), G, liveness(),
                       waitCounts(), I, W, Limits);
}
