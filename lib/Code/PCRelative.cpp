//===- lib/Code/PCRelative.cpp - Values computed from the PC
//----------------===//

#include "hotswap/Code/PCRelative.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Code/Registers.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstrDesc.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/Support/MathExtras.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

namespace {
/// The SGPRs one instruction reads and writes, and whether it writes SCC.
struct ScalarTouch {
  SmallVector<std::pair<unsigned, unsigned>, 4> Reads, Writes;
  bool WritesSCC = false;

  static bool overlaps(ArrayRef<std::pair<unsigned, unsigned>> Rs,
                       unsigned Reg) {
    for (auto [First, Count] : Rs)
      if (Reg >= First && Reg < First + Count)
        return true;
    return false;
  }
  bool reads(unsigned Reg) const { return overlaps(Reads, Reg); }
  bool writes(unsigned Reg) const { return overlaps(Writes, Reg); }
};

ScalarTouch touchOf(const MCInst &MI, const MCInstrInfo &MII,
                    const RegisterModel &RM) {
  ScalarTouch T;
  const MCInstrDesc &D = MII.get(MI.getOpcode());
  auto Add = [&](MCRegister R, bool Def) {
    if (auto S = RM.sgprRange(R))
      (Def ? T.Writes : T.Reads).push_back(*S);
    else if (Def && RM.classOf(R) == RegClass::SCC)
      T.WritesSCC = true;
  };
  for (unsigned I = 0; I < MI.getNumOperands(); ++I)
    if (MI.getOperand(I).isReg())
      Add(MI.getOperand(I).getReg(), I < D.getNumDefs());
  for (MCPhysReg R : D.implicit_uses())
    Add(R, false);
  for (MCPhysReg R : D.implicit_defs())
    Add(R, true);
  return T;
}

/// Constants held by 32-bit SGPRs along one block: s_mov_b32 of an
/// immediate, s_add_i32 / s_sub_i32 of two known values.
class BlockConstants {
public:
  void step(const MCInst &MI, StringRef Name, const ScalarTouch &T,
            const RegisterModel &RM) {
    std::optional<uint32_t> V;
    auto Src = [&](unsigned I) -> std::optional<uint32_t> {
      if (I >= MI.getNumOperands())
        return std::nullopt;
      const MCOperand &O = MI.getOperand(I);
      if (std::optional<int64_t> V = immediateValue(O))
        return static_cast<uint32_t>(*V);
      if (O.isReg())
        if (auto S = RM.sgprRange(O.getReg()); S && S->second == 1)
          return get(S->first);
      return std::nullopt;
    };
    if (Name == "S_MOV_B32")
      V = Src(1);
    else if (Name == "S_ADD_I32" || Name == "S_SUB_I32")
      if (auto A = Src(1), B = Src(2); A && B)
        V = Name == "S_ADD_I32" ? *A + *B : *A - *B;
    for (auto [First, Count] : T.Writes)
      for (unsigned R = First; R < First + Count; ++R)
        Known.erase(R);
    if (V && T.Writes.size() == 1 && T.Writes[0].second == 1)
      Known[T.Writes[0].first] = *V;
  }
  std::optional<uint32_t> get(unsigned Reg) const {
    auto It = Known.find(Reg);
    if (It == Known.end())
      return std::nullopt;
    return It->second;
  }

private:
  DenseMap<unsigned, uint32_t> Known;
};

/// Whether \p MI is `<Name> sDst, sDst, constant` (either source order):
/// the operand index of the constant and its value.
std::optional<std::pair<unsigned, uint32_t>> addOf(const MCInst &MI,
                                                   unsigned Dst,
                                                   const RegisterModel &RM,
                                                   const BlockConstants &C) {
  if (MI.getNumOperands() < 3)
    return std::nullopt;
  auto IsDst = [&](const MCOperand &O) {
    if (!O.isReg())
      return false;
    auto S = RM.sgprRange(O.getReg());
    return S && S->first == Dst && S->second == 1;
  };
  if (!IsDst(MI.getOperand(0)))
    return std::nullopt;
  for (unsigned Self : {1u, 2u}) {
    unsigned Other = Self == 1 ? 2 : 1;
    if (!IsDst(MI.getOperand(Self)))
      continue;
    const MCOperand &O = MI.getOperand(Other);
    if (std::optional<int64_t> V = immediateValue(O))
      return std::make_pair(Other, static_cast<uint32_t>(*V));
    if (O.isReg() && !IsDst(O))
      if (auto S = RM.sgprRange(O.getReg()); S && S->second == 1)
        if (auto V = C.get(S->first))
          return std::make_pair(Other, *V);
    return std::nullopt;
  }
  return std::nullopt;
}
} // namespace

PCRelScan code::findPCRelative(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                               ArrayRef<MCInst> Decoded) {
  PCRelScan Scan;
  const InsnKinds &K = InsnKinds::get(MC.instrInfo());
  const RegisterModel &RM = RegisterModel::get(MC.regInfo());
  const MCInstrInfo &MII = MC.instrInfo();
  for (const Block &B : G.Blocks) {
    // Idioms and the constants they add lie within a block: a block
    // without s_getpc_b64 has nothing to find.
    bool GetPC = false;
    for (uint32_t I = B.First; I < B.End && I < Decoded.size() && !GetPC; ++I)
      GetPC = K.baseName(Decoded[I].getOpcode()) == "S_GETPC_B64";
    if (!GetPC)
      continue;
    BlockConstants C;
    for (uint32_t I = B.First; I < B.End && I < Decoded.size(); ++I) {
      const MCInst &MI = Decoded[I];
      StringRef Name = K.baseName(MI.getOpcode());
      ScalarTouch T = touchOf(MI, MII, RM);
      if (Name == "S_GETPC_B64" && T.Writes.size() == 1 &&
          T.Writes[0].second == 2) {
        unsigned N = T.Writes[0].first;
        PCRelIdiom P;
        P.GetPC = I;
        std::string Why = "its value is still in s[" + std::to_string(N) + ":" +
                          std::to_string(N + 1) + "] where the block ends";
        bool HaveLo = false, Done = false;
        uint32_t Lo = 0, Hi = 0;
        BlockConstants After = C;
        After.step(MI, Name, T, RM);
        for (uint32_t J = I + 1; J < B.End && J < Decoded.size() && !Done;
             ++J) {
          const MCInst &MJ = Decoded[J];
          StringRef NJ = K.baseName(MJ.getOpcode());
          ScalarTouch TJ = touchOf(MJ, MII, RM);
          auto Fail = [&](const Twine &What) {
            Why = (What + " at " + hex(G.Insns[J].Addr)).str();
            J = B.End;
          };
          // gfx12 code sign-extends the high half of the PC from bit 47
          // before the adds (s_sext_i32_i16 on it): the address, a
          // canonical one below 2^47, does not change, and a copy in the
          // same image has the same bit 47.
          if (!HaveLo && NJ == "S_SEXT_I32_I16" && TJ.Writes.size() == 1 &&
              TJ.Writes[0] == std::make_pair(N + 1, 1u) && TJ.reads(N + 1) &&
              !TJ.reads(N)) {
            After.step(MJ, NJ, TJ, RM);
            continue;
          }
          // gfx1250 adds a 64-bit constant to the pair in one instruction
          // (s_add_nc_u64): both halves at once.
          if (!HaveLo && NJ == "S_ADD_U64" && MJ.getNumOperands() > 2 &&
              TJ.Writes.size() == 1 && TJ.Writes[0] == std::make_pair(N, 2u) &&
              MJ.getOperand(1).isReg()) {
            auto S = RM.sgprRange(MJ.getOperand(1).getReg());
            std::optional<int64_t> V = immediateValue(MJ.getOperand(2));
            if (S && *S == std::make_pair(N, 2u) && V) {
              P.AddLo = P.AddHi = J;
              P.LoOperand = P.HiOperand = 2;
              Lo = static_cast<uint32_t>(*V);
              Hi = static_cast<uint32_t>(uint64_t(*V) >> 32);
              Done = true;
              break;
            }
          }
          if (!HaveLo && NJ == "S_ADD_U32") {
            if (auto A = addOf(MJ, N, RM, After)) {
              P.AddLo = J;
              P.LoOperand = A->first;
              Lo = A->second;
              HaveLo = true;
              After.step(MJ, NJ, TJ, RM);
              continue;
            }
          }
          if (HaveLo && NJ == "S_ADDC_U32") {
            if (auto A = addOf(MJ, N + 1, RM, After)) {
              P.AddHi = J;
              P.HiOperand = A->first;
              Hi = A->second;
              Done = true;
              break;
            }
          }
          if (TJ.reads(N + 1) || TJ.writes(N + 1) || TJ.writes(N) ||
              (!HaveLo && TJ.reads(N)))
            Fail("it is read or changed otherwise");
          else if (HaveLo && TJ.WritesSCC)
            Fail("the carry of its low half is overwritten");
          else
            After.step(MJ, NJ, TJ, RM);
        }
        if (Done) {
          P.Offset = (uint64_t(Hi) << 32) | Lo;
          P.Target = G.Insns[I].end() + P.Offset;
          Scan.Idioms.push_back(P);
        } else {
          Scan.Unknown.push_back(
              {G.Insns[I].Addr,
               "s_getpc_b64 at " + hex(G.Insns[I].Addr) + ": " + Why, true});
        }
      }
      C.step(MI, Name, T, RM);
    }
  }
  return Scan;
}
