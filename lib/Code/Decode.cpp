//===- lib/Code/Decode.cpp - Instructions decoded by LLVM MC --------------===//

#include "hotswap/Code/Decode.h"

#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/MC/MCExpr.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstrDesc.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/Support/MathExtras.h"

#include <cctype>
#include <memory>
#include <mutex>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

StringRef code::flowName(Flow F) {
  switch (F) {
  case Flow::Next:
    return "next";
  case Flow::Jump:
    return "jump";
  case Flow::CondJump:
    return "cond-jump";
  case Flow::IndirectJump:
    return "indirect-jump";
  case Flow::Call:
    return "call";
  case Flow::IndirectCall:
    return "indirect-call";
  case Flow::EndProgram:
    return "end-program";
  case Flow::Trap:
    return "trap";
  case Flow::CodeEnd:
    return "code-end";
  case Flow::Unknown:
    return "unknown";
  }
  return "?";
}

/// "S_CBRANCH_SCC0_gfx6_gfx7" -> "S_CBRANCH_SCC0": LLVM's real (encoded)
/// instructions are named after their pseudo instruction, all capitals,
/// followed by an encoding suffix that starts with a lower-case letter.
static StringRef stripEncoding(StringRef Name) {
  for (size_t I = 0; I + 1 < Name.size(); ++I)
    if (Name[I] == '_' && std::islower(static_cast<unsigned char>(Name[I + 1])))
      return Name.take_front(I);
  return Name;
}

InsnKinds::InsnKinds(const MCInstrInfo &MII) : MII(MII) {
  BaseNames.resize(MII.getNumOpcodes());
  for (unsigned Op = 0; Op < BaseNames.size(); ++Op)
    BaseNames[Op] = stripEncoding(MII.getName(Op));
}

const InsnKinds &InsnKinds::get(const MCInstrInfo &MII) {
  static std::mutex M;
  static DenseMap<const MCInstrInfo *, std::unique_ptr<InsnKinds>> All;
  std::lock_guard<std::mutex> L(M);
  auto &Slot = All[&MII];
  if (!Slot)
    Slot.reset(new InsnKinds(MII));
  return *Slot;
}

StringRef InsnKinds::baseName(unsigned Opcode) const {
  return Opcode < BaseNames.size() ? BaseNames[Opcode] : StringRef();
}

/// The index of the PC-relative operand, if the instruction has one.
static std::optional<unsigned> pcRelOperand(const MCInstrDesc &D,
                                            const MCInst &MI) {
  for (unsigned I = 0; I < D.getNumOperands() && I < MI.getNumOperands(); ++I)
    if (D.operands()[I].OperandType == MCOI::OPERAND_PCREL &&
        MI.getOperand(I).isImm())
      return I;
  return std::nullopt;
}

/// gfx1250's s_add_pc_i64 with an immediate (inline, a 32-bit literal, or
/// lit64(), which LLVM keeps as an expression): PC = the end of the
/// instruction + the signed 64-bit operand. With an SGPR pair it is an
/// indirect jump.
static bool isAddPCImm(StringRef Name, const MCInst &MI) {
  return Name == "S_ADD_PC_I64" && MI.getNumOperands() >= 1 &&
         code::immediateValue(MI.getOperand(0)).has_value();
}

std::optional<unsigned> InsnKinds::offsetOperand(const MCInst &MI,
                                                 bool *InBytes) const {
  const bool AddPC = isAddPCImm(baseName(MI.getOpcode()), MI);
  if (InBytes)
    *InBytes = AddPC;
  if (AddPC)
    return 0;
  return pcRelOperand(MII.get(MI.getOpcode()), MI);
}

std::optional<uint64_t> InsnKinds::pcRelTarget(const MCInst &MI, uint64_t Addr,
                                               uint64_t Size) const {
  bool InBytes = false;
  std::optional<unsigned> Op = offsetOperand(MI, &InBytes);
  if (!Op)
    return std::nullopt;
  if (InBytes)
    return Addr + Size +
           static_cast<uint64_t>(*immediateValue(MI.getOperand(*Op)));
  const int64_t Imm = MI.getOperand(*Op).getImm();
  // A signed 16-bit count of dwords, from the end of the instruction.
  return Addr + Size + static_cast<uint64_t>(SignExtend64<16>(Imm) * 4);
}

Flow InsnKinds::flowOf(const MCInst &MI) const {
  const MCInstrDesc &D = MII.get(MI.getOpcode());
  StringRef Name = baseName(MI.getOpcode());
  if (Name.starts_with("S_ENDPGM"))
    return Flow::EndProgram;
  if (Name == "S_CODE_END")
    return Flow::CodeEnd;
  if (Name == "S_TRAP")
    return Flow::Trap;
  if (Name == "S_SETPC_B64")
    return Flow::IndirectJump;
  if (isAddPCImm(Name, MI))
    return Flow::Jump;
  bool PCRel = pcRelOperand(D, MI).has_value();
  if (D.isCall())
    return PCRel ? Flow::Call : Flow::IndirectCall;
  if (D.isBranch()) {
    if (!PCRel)
      return Flow::Unknown;
    return D.isConditionalBranch() ? Flow::CondJump : Flow::Jump;
  }
  if (D.isReturn() || D.isIndirectBranch())
    return Flow::Unknown;
  return Flow::Next;
}

std::optional<int64_t> code::immediateValue(const MCOperand &O) {
  if (O.isImm())
    return O.getImm();
  int64_t V;
  if (O.isExpr() && O.getExpr()->evaluateAsAbsolute(V))
    return V;
  return std::nullopt;
}

DecodedRange
code::decodeRange(const amdgpu::TargetMC &MC, ArrayRef<uint8_t> Bytes,
                  uint64_t Addr,
                  function_ref<void(const Insn &, const MCInst &)> Visit,
                  const DecodeHint *Hint) {
  const InsnKinds &K = InsnKinds::get(MC.instrInfo());
  DecodedRange R;
  R.Insns.reserve(Bytes.size() / 6 + 1);
  const size_t Window = MC.decodeWindow();
  // The hint's next instruction (see DecodeHint): the one after the last
  // the code repeated (its bytes, or its opcode: a branch to another
  // place), or the one after that (an instruction the code replaced); code
  // the hint does not have leaves it. It only decides where to look.
  size_t Next = 0;
  auto HintAt = [&](size_t T, size_t Len) -> std::optional<ArrayRef<uint8_t>> {
    if (T >= Hint->Insns.size())
      return std::nullopt;
    const Insn &HI = Hint->Insns[T];
    if (HI.Addr < Hint->Begin || HI.Addr - Hint->Begin >= Hint->Bytes.size())
      return std::nullopt;
    return Hint->Bytes.drop_front(HI.Addr - Hint->Begin).take_front(Len);
  };
  auto Hinted = [&](uint64_t Off) -> amdgpu::DecodedView {
    ArrayRef<uint8_t> Here = Bytes.drop_front(Off).take_front(Window);
    for (size_t T = Next; T < Next + 2; ++T)
      if (HintAt(T, Window) == Here &&
          Hint->Insns[T].Size <= Bytes.size() - Off) {
        Next = T + 1;
        return {&Hint->Decoded[T], Hint->Insns[T].Size, false};
      }
    return {};
  };
  auto Follow = [&](uint64_t Off, const amdgpu::DecodedView &D) {
    ArrayRef<uint8_t> Here = Bytes.slice(Off, D.Size);
    for (size_t T = Next; T < Next + 2 && T < Hint->Insns.size(); ++T)
      if (Hint->Insns[T].Size == D.Size &&
          (Hint->Decoded[T].getOpcode() == D.Inst->getOpcode() ||
           HintAt(T, D.Size) == Here)) {
        Next = T + 1;
        return;
      }
  };
  const bool UseHint = Hint && Hint->Decoded.size() == Hint->Insns.size();
  uint64_t Off = 0;
  while (Off < Bytes.size()) {
    amdgpu::DecodedView D;
    if (UseHint)
      D = Hinted(Off);
    const bool FromHint = D.Inst;
    if (!D.Inst)
      D = MC.decodeView(Bytes.drop_front(Off), Addr + Off,
                        /*AllowSoftFail=*/true);
    if (!D.Inst || D.Size == 0 || D.Size > Bytes.size() - Off) {
      R.Stop = DecodeStop{Addr + Off, "bytes that are not an instruction"};
      break;
    }
    if (UseHint && !FromHint)
      Follow(Off, D);
    Insn I;
    I.Addr = Addr + Off;
    I.Opcode = D.Inst->getOpcode();
    I.Size = static_cast<uint8_t>(D.Size);
    I.F = K.flowOf(*D.Inst);
    if (I.F == Flow::Jump || I.F == Flow::CondJump || I.F == Flow::Call)
      I.Target = K.pcRelTarget(*D.Inst, I.Addr, D.Size);
    R.Insns.push_back(I);
    if (Visit)
      Visit(R.Insns.back(), *D.Inst);
    Off += D.Size;
  }
  return R;
}

std::optional<amdgpu::DecodedInst> code::decodeAt(const amdgpu::TargetMC &MC,
                                                  ArrayRef<uint8_t> Bytes,
                                                  uint64_t Begin,
                                                  const Insn &I) {
  if (I.Addr < Begin || I.Addr - Begin >= Bytes.size())
    return std::nullopt;
  return MC.decodeOne(Bytes.drop_front(I.Addr - Begin), I.Addr,
                      /*AllowSoftFail=*/true);
}

std::vector<MCInst> code::decodeInsns(const amdgpu::TargetMC &MC,
                                      ArrayRef<Insn> Insns,
                                      ArrayRef<uint8_t> Bytes, uint64_t Begin) {
  std::vector<MCInst> Out(Insns.size());
  for (size_t I = 0; I < Insns.size(); ++I)
    if (std::optional<amdgpu::DecodedInst> D =
            decodeAt(MC, Bytes, Begin, Insns[I]))
      Out[I] = D->Inst;
  return Out;
}
