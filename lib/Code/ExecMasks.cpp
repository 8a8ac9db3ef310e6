//===- lib/Code/ExecMasks.cpp - The values EXEC holds ---------------------===//

#include "ExecMasks.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstrDesc.h"
#include "llvm/MC/MCInstrInfo.h"

#include <algorithm>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

namespace {
struct SavedCopy {
  int First;
  unsigned Count;
  uint32_t Value;
  bool operator==(const SavedCopy &O) const {
    return First == O.First && Count == O.Count && Value == O.Value;
  }
};

/// A fact "the lanes of mask A and mask K together hold every lane of
/// value P" (A: -1 for EXEC, else a key as in SavedCopy; K a key; both
/// masks Count SGPRs wide). It is what a loop whose lanes leave one by one
/// keeps: EXEC loses exactly the lanes its exit mask gains, so when the
/// loop ends, EXEC | mask is again every lane that entered it.
struct Cover {
  int A;
  int K;
  unsigned Count;
  uint32_t P;
  bool operator==(const Cover &O) const {
    return A == O.A && K == O.K && Count == O.Count && P == O.P;
  }
};

/// Part Which of a mask Count SGPRs wide (value Value) where no whole
/// copy is: in one SGPR (Loc: its number), or in one lane of a VGPR, where
/// compilers spill SGPRs (Loc: laneLoc(VGPR, lane)) and read them back
/// with v_readlane, one SGPR at a time.
struct MaskPart {
  int Loc;
  uint32_t Value;
  uint8_t Which, Count;
  bool operator==(const MaskPart &O) const {
    return Loc == O.Loc && Value == O.Value && Which == O.Which &&
           Count == O.Count;
  }
};
constexpr int LaneLocBase = 256;
int laneLoc(int VGPR, int Lane) { return LaneLocBase + VGPR * 64 + Lane; }
/// The join key of a part's place (past those of SGPR copies and EXEC).
constexpr int PartSubBase = 1000;

/// The forward state: the EXEC value and the masks SGPRs (and VCC) hold.
struct ExecState {
  bool Visited = false;
  uint32_t Cur = EntryExec;
  SmallVector<SavedCopy, 4> Saved;
  SmallVector<Cover, 2> Covers;
  SmallVector<MaskPart, 4> Parts;

  std::optional<uint32_t> saved(int First, unsigned Count) const {
    for (const SavedCopy &C : Saved)
      if (C.First == First && C.Count == Count)
        return C.Value;
    return std::nullopt;
  }
  void dropOverlapping(int Lo, int Hi) {
    if (Lo < 0)
      return;
    llvm::erase_if(Saved, [&](const SavedCopy &C) {
      return C.First >= 0 && C.First <= Hi && C.First + int(C.Count) - 1 >= Lo;
    });
  }
  void drop(int Key) {
    llvm::erase_if(Saved, [&](const SavedCopy &C) { return C.First == Key; });
  }
  bool operator==(const ExecState &O) const {
    return Visited == O.Visited && Cur == O.Cur && Saved == O.Saved &&
           Covers == O.Covers && Parts == O.Parts;
  }
};

/// The EXEC values of one function and how they nest.
class ExecValues {
public:
  ExecValues() : SiteBlock{-1, -1, -1}, Parent{-1, AllLanes, EntryExec} {}
  /// The block of each value's site (-1 for the three constants).
  std::vector<int32_t> SiteBlock;
  /// Where a site key lies: instruction sites (even keys) map through this.
  std::vector<uint32_t> InsnBlock;
  static uint64_t joinKey(uint32_t B, int Sub) {
    return ((uint64_t(B) << 24 | uint64_t(Sub + 8)) << 1) | 1;
  }
  int32_t blockOfKey(uint64_t Key) const {
    if (Key & 1)
      return int32_t((Key >> 1) >> 24);
    return Key / 2 < InsnBlock.size() ? int32_t(InsnBlock[Key / 2]) : -1;
  }
  /// The value made at site \p Key (stable across iterations), a subset of
  /// \p P (-1: related to nothing but AllLanes).
  /// The value made at site \p Key (the same across iterations).
  uint32_t id(uint64_t Key) {
    auto [It, New] = BySite.try_emplace(Key, Parent.size());
    if (New) {
      Parent.push_back(AllLanes);
      SiteBlock.push_back(blockOfKey(Key));
    }
    return It->second;
  }
  /// The value made at site \p Key, now known to be a subset of \p P (-1:
  /// of nothing but every lane). A parent that would make a cycle is not
  /// taken.
  uint32_t at(uint64_t Key, int32_t P) {
    uint32_t I = id(Key);
    int32_t NewP = P < 0 ? int32_t(AllLanes) : P;
    if (Parent[I] != NewP && !within(uint32_t(NewP), I))
      Parent[I] = NewP;
    return I;
  }
  unsigned depth(uint32_t A) const {
    unsigned D = 0;
    for (int32_t X = A; X >= 0; X = Parent[X])
      ++D;
    return D;
  }
  bool within(uint32_t A, uint32_t B) const {
    if (A == NoLanes)
      return true;
    for (int32_t X = A; X >= 0; X = Parent[X])
      if (uint32_t(X) == B)
        return true;
    return false;
  }
  uint32_t lca(uint32_t A, uint32_t B) const {
    if (A == NoLanes)
      return B;
    if (B == NoLanes)
      return A;
    for (int32_t X = A; X >= 0; X = Parent[X])
      if (within(B, X))
        return X;
    return AllLanes;
  }
  std::vector<int32_t> Parent;

  /// Value \p R is \p Whole without the lanes of \p Part (a subset of
  /// Whole): together they are Whole, e.g. the 'else' lanes of an if and
  /// its 'then' lanes. Made again at every visit of R's site.
  void setRest(uint32_t R, std::optional<std::pair<uint32_t, uint32_t>> PW) {
    if (PW)
      Rest[R] = *PW;
    else
      Rest.erase(R);
  }
  /// The union of \p A and \p B where one is the rest of the other.
  std::optional<uint32_t> unionOf(uint32_t A, uint32_t B) const {
    for (auto [X, Y] : {std::pair(A, B), std::pair(B, A)}) {
      auto It = Rest.find(X);
      if (It != Rest.end() && It->second.first == Y)
        return It->second.second;
    }
    return std::nullopt;
  }

private:
  DenseMap<uint64_t, uint32_t> BySite;
  DenseMap<uint32_t, std::pair<uint32_t, uint32_t>> Rest;
};
} // namespace

static bool isMask(const MaskRef &R) {
  return R.K == MaskRef::SGPR || R.K == MaskRef::VCC;
}

/// Whether an instruction with effect \p E writes the mask kept under
/// \p Key (Count wide) or any SGPR of it.
static bool writesKey(const ExecEffect &E, int Key, unsigned Count) {
  if (Key == -2)
    return E.WritesVCC;
  return Key >= 0 && E.WLo >= 0 && Key <= E.WHi &&
         Key + int(Count) - 1 >= E.WLo;
}

/// The cover facts after an instruction with effect \p E (those before
/// it: \p Old; EXEC now holds \p Cur).
static SmallVector<Cover, 2> coversAfter(const ExecEffect &E,
                                         ArrayRef<Cover> Old, bool ToExec,
                                         uint32_t Cur) {
  auto Is = [](const MaskRef &R, int Key, unsigned Count) {
    return isMask(R) && R.key() == Key && R.Count == Count;
  };
  // EXEC = EXEC | sS (s_or_b64 exec, exec, s or s_or_saveexec): EXEC gains
  // lanes, and every lane of sS.
  const MaskRef *OrWith = nullptr;
  if (ToExec && E.O == ExecEffect::Or) {
    if (E.SaveTo.K != MaskRef::None)
      OrWith = &E.A;
    else if (E.A.K == MaskRef::Exec)
      OrWith = &E.B;
    else if (E.B.K == MaskRef::Exec)
      OrWith = &E.A;
  }
  bool ExecGrows = OrWith != nullptr;
  // EXEC = EXEC & ~sK: the lanes EXEC loses are in sK.
  const MaskRef *AndN2With = nullptr;
  if (ToExec && E.SaveTo.K == MaskRef::None && E.O == ExecEffect::AndN2 &&
      E.A.K == MaskRef::Exec && isMask(E.B))
    AndN2With = &E.B;
  // sK = sK | x: the mask gains lanes.
  const MaskRef *Grown = nullptr;
  if (E.O == ExecEffect::Or && isMask(E.Dst) &&
      (Is(E.A, E.Dst.key(), E.Dst.Count) || Is(E.B, E.Dst.key(), E.Dst.Count)))
    Grown = &E.Dst;
  auto Survives = [&](int Key, unsigned Count) {
    if (Key == -1)
      return !ToExec || ExecGrows;
    return !writesKey(E, Key, Count) || (Grown && Is(*Grown, Key, Count));
  };
  SmallVector<Cover, 2> Out;
  auto Add = [&](const Cover &C) {
    if (!llvm::is_contained(Out, C) && Out.size() < 8)
      Out.push_back(C);
  };
  for (const Cover &C : Old) {
    bool Keep = Survives(C.K, C.Count) &&
                (Survives(C.A, C.Count) ||
                 (C.A == -1 && AndN2With && Is(*AndN2With, C.K, C.Count)));
    if (Keep)
      Add(C);
    // The old EXEC saved to sS: sS | K holds what EXEC | K held.
    if (C.A == -1 && isMask(E.SaveTo) && E.SaveTo.Count == C.Count &&
        !writesKey(E, C.K, C.Count) && C.K != E.SaveTo.key())
      Add({E.SaveTo.key(), C.K, C.Count, C.P});
    // EXEC gains every lane of sS (EXEC |= sS, or EXEC = sS).
    bool FromS = (OrWith && Is(*OrWith, C.A, C.Count)) ||
                 (ToExec && E.O == ExecEffect::Mov &&
                  E.SaveTo.K == MaskRef::None && Is(E.A, C.A, C.Count));
    if (C.A != -1 && FromS && Survives(C.K, C.Count))
      Add({-1, C.K, C.Count, C.P});
  }
  // A mask set afresh (a loop's exit mask starts as 0): EXEC | sK holds at
  // least what EXEC holds.
  if (isMask(E.Dst) && E.O == ExecEffect::Mov)
    Add({-1, E.Dst.key(), E.Dst.Count, Cur});
  return Out;
}

/// The parts of masks in \p S after an instruction with effect \p E
/// (its other effects made): spilled to VGPR lanes, read back into SGPRs,
/// whole again once every part is back in place.
static void partsAfter(const ExecEffect &E, ExecState &S) {
  llvm::erase_if(S.Parts, [&](const MaskPart &P) {
    if (P.Loc < LaneLocBase)
      return E.WLo >= 0 && P.Loc >= E.WLo && P.Loc <= E.WHi;
    int VGPR = (P.Loc - LaneLocBase) / 64;
    if (E.LOp == ExecEffect::WriteLane && VGPR == E.LaneVGPR)
      return E.Lane < 0 || P.Loc == laneLoc(E.LaneVGPR, E.Lane);
    return E.VLo >= 0 && VGPR >= E.VLo && VGPR <= E.VHi;
  });
  if (E.LaneSGPR < 0 || E.LaneVGPR < 0 || E.Lane < 0)
    return;
  int Slot = laneLoc(E.LaneVGPR, E.Lane);
  // (v_writelane writes no SGPR and v_readlane no VGPR: what they read is
  // still as it was.)
  if (E.LOp == ExecEffect::WriteLane) {
    // The SGPR is part of a whole copy, or holds a part.
    SmallVector<MaskPart, 2> New;
    for (const SavedCopy &C : S.Saved)
      if (C.First >= 0 && E.LaneSGPR >= C.First &&
          E.LaneSGPR < C.First + int(C.Count))
        New.push_back(
            {Slot, C.Value, uint8_t(E.LaneSGPR - C.First), uint8_t(C.Count)});
    for (const MaskPart &P : S.Parts)
      if (P.Loc == E.LaneSGPR)
        New.push_back({Slot, P.Value, P.Which, P.Count});
    S.Parts.append(New.begin(), New.end());
    return;
  }
  // ReadLane: the slot's part into the SGPR.
  std::optional<MaskPart> From;
  for (const MaskPart &P : S.Parts)
    if (P.Loc == Slot)
      From = P;
  if (!From)
    return;
  MaskPart Got{E.LaneSGPR, From->Value, From->Which, From->Count};
  S.Parts.push_back(Got);
  int First = Got.Loc - Got.Which;
  if (First < 0)
    return;
  SmallVector<size_t, 2> Found;
  for (unsigned I = 0; I < Got.Count; ++I)
    for (size_t J = 0; J < S.Parts.size(); ++J)
      if (S.Parts[J] ==
          MaskPart{First + int(I), Got.Value, uint8_t(I), Got.Count})
        Found.push_back(J);
  if (Found.size() != Got.Count)
    return;
  for (size_t J : llvm::reverse(Found))
    S.Parts.erase(S.Parts.begin() + J);
  S.dropOverlapping(First, First + int(Got.Count) - 1);
  S.Saved.push_back({First, Got.Count, Got.Value});
}

/// One instruction's effect on \p S. A union it makes, (value, A, B),
/// goes to \p Union.
static void transfer(const ExecEffect &E, ExecState &S, ExecValues &V,
                     uint32_t Insn,
                     std::optional<std::array<uint32_t, 3>> *Union = nullptr) {
  uint64_t Key = uint64_t(Insn) * 2;
  auto ValueOf = [&](const MaskRef &R) -> std::optional<uint32_t> {
    switch (R.K) {
    case MaskRef::None:
      return std::nullopt;
    case MaskRef::Exec:
      return S.Cur;
    case MaskRef::All:
      return AllLanes;
    case MaskRef::Zero:
      return NoLanes;
    case MaskRef::SGPR:
    case MaskRef::VCC:
      return S.saved(R.key(), R.Count);
    }
    return std::nullopt;
  };
  // The value A | B makes (A, B: the values of masks RA, RB).
  auto OrOf = [&](const MaskRef &RA, const MaskRef &RB, uint32_t A,
                  uint32_t B) -> std::optional<uint32_t> {
    // EXEC | sK where EXEC and sK together hold every lane of P and
    // neither holds a lane outside it: exactly P (a loop's end).
    if (RA.K == MaskRef::Exec || RB.K == MaskRef::Exec) {
      const MaskRef &M = RA.K == MaskRef::Exec ? RB : RA;
      for (const Cover &C : S.Covers)
        if (C.A == -1 && isMask(M) && C.K == M.key() && C.Count == M.Count &&
            V.within(A, C.P) && V.within(B, C.P))
          return C.P;
    }
    if (std::optional<uint32_t> W = V.unionOf(A, B))
      return *W;
    if (V.within(A, B))
      return B;
    if (V.within(B, A))
      return A;
    return V.at(Key, V.lca(A, B));
  };
  // The value Op(A, B) makes, or nullopt when nothing is known of it.
  auto Eval = [&](const MaskRef &RA,
                  const MaskRef &RB) -> std::optional<uint32_t> {
    std::optional<uint32_t> A = ValueOf(RA), B = ValueOf(RB);
    switch (E.O) {
    case ExecEffect::NoOp:
    case ExecEffect::Unknown:
      return std::nullopt;
    case ExecEffect::Mov:
      return A;
    case ExecEffect::SubsetOfCur:
      return V.at(Key, S.Cur);
    case ExecEffect::And:
      if ((A && *A == NoLanes) || (B && *B == NoLanes))
        return NoLanes;
      if (A && B) // a subset of both: the narrower known bound, else the
                  // EXEC it narrows (what the code before ran under)
        return V.at(Key, V.within(*B, *A)             ? *B
                         : V.within(*A, *B)           ? *A
                         : *B == S.Cur                ? *B
                         : *A == S.Cur                ? *A
                         : V.depth(*B) >= V.depth(*A) ? *B
                                                      : *A);
      if (A || B)
        return V.at(Key, A ? *A : *B);
      return std::nullopt;
    case ExecEffect::AndN2:
    case ExecEffect::AndN1: {
      // Whole & ~Part.
      std::optional<uint32_t> Whole = E.O == ExecEffect::AndN2 ? A : B;
      std::optional<uint32_t> Part = E.O == ExecEffect::AndN2 ? B : A;
      if (!Whole)
        return std::nullopt;
      uint32_t R = V.at(Key, *Whole);
      V.setRest(R, Part && V.within(*Part, *Whole)
                       ? std::optional(std::pair(*Part, *Whole))
                       : std::nullopt);
      return R;
    }
    case ExecEffect::Or: {
      if (!A || !B)
        return std::nullopt;
      std::optional<uint32_t> R = OrOf(RA, RB, *A, *B);
      if (R && Union && *R != *A && *R != *B)
        *Union = {*R, *A, *B};
      return R;
    }
    case ExecEffect::Xor: {
      if (!A || !B)
        return std::nullopt;
      // Of two disjoint masks, their union; of a mask and a subset of it,
      // the rest.
      if (std::optional<uint32_t> W = V.unionOf(*A, *B)) {
        if (Union && *W != *A && *W != *B)
          *Union = {*W, *A, *B};
        return *W;
      }
      uint32_t R = V.at(Key, V.lca(*A, *B));
      V.setRest(R, V.within(*B, *A)   ? std::optional(std::pair(*B, *A))
                   : V.within(*A, *B) ? std::optional(std::pair(*A, *B))
                                      : std::nullopt);
      return R;
    }
    }
    return std::nullopt;
  };
  uint32_t Old = S.Cur;
  std::optional<uint32_t> New;
  bool ToExec = E.Dst.K == MaskRef::Exec;
  if (E.SaveTo.K != MaskRef::None) {
    MaskRef ExecRef;
    ExecRef.K = MaskRef::Exec;
    New = Eval(E.A, ExecRef);
    ToExec = true;
  } else if (E.O != ExecEffect::NoOp) {
    New = Eval(E.A, E.B);
  }
  // Every mask an SGPR or VCC held and this instruction overwrites is gone.
  S.dropOverlapping(E.WLo, E.WHi);
  if (E.WritesVCC)
    S.drop(-2);
  if (E.SaveTo.K == MaskRef::SGPR || E.SaveTo.K == MaskRef::VCC)
    S.Saved.push_back({E.SaveTo.key(), E.SaveTo.Count, Old});
  if (ToExec) {
    S.Cur = New ? *New : V.at(Key, -1);
  } else if (New && (E.Dst.K == MaskRef::SGPR || E.Dst.K == MaskRef::VCC)) {
    S.Saved.push_back({E.Dst.key(), E.Dst.Count, *New});
  }
  if (!S.Covers.empty() || (isMask(E.Dst) && E.O == ExecEffect::Mov))
    S.Covers = coversAfter(E, S.Covers, ToExec, S.Cur);
  if (!S.Parts.empty() || E.LOp != ExecEffect::NoLane)
    partsAfter(E, S);
}

/// The lane mask operand \p I of \p MI names: all lanes, none, EXEC, VCC
/// or SGPRs (None for anything else).
static MaskRef maskRefOf(const MCInst &MI, unsigned I,
                         const RegisterModel &RM) {
  MaskRef R;
  if (I >= MI.getNumOperands())
    return R;
  const MCOperand &O = MI.getOperand(I);
  if (O.isImm()) {
    if (O.getImm() == -1 || O.getImm() == 0xffffffff)
      R.K = MaskRef::All;
    else if (O.getImm() == 0)
      R.K = MaskRef::Zero;
    return R;
  }
  if (!O.isReg())
    return R;
  RegClass C = RM.classOf(O.getReg());
  if (C == RegClass::EXEC) {
    R.K = MaskRef::Exec;
  } else if (C == RegClass::VCC) {
    R.K = MaskRef::VCC;
    R.Count = 1;
  } else if (auto S = RM.sgprRange(O.getReg())) {
    R.K = MaskRef::SGPR;
    R.First = S->first;
    R.Count = S->second;
  }
  return R;
}

/// The mask operation of a scalar ALU name ("AND", "ANDN2", ...).
static ExecEffect::Op maskOpOf(StringRef Name) {
  if (Name == "AND")
    return ExecEffect::And;
  if (Name == "ANDN2" || Name == "AND_NOT1")
    return ExecEffect::AndN2;
  if (Name == "ANDN1" || Name == "AND_NOT0")
    return ExecEffect::AndN1;
  if (Name == "OR")
    return ExecEffect::Or;
  if (Name == "XOR")
    return ExecEffect::Xor;
  return ExecEffect::Unknown;
}

/// The SGPRs (E.WLo..E.WHi) and masks (E.WritesVCC) \p MI writes; whether
/// it writes EXEC.
static bool noteWrites(const MCInst &MI, const MCInstrDesc &D,
                       const RegisterModel &RM, ExecEffect &E) {
  bool WritesExec = false;
  auto NoteDef = [&](MCRegister Reg) {
    RegClass C = RM.classOf(Reg);
    if (C == RegClass::EXEC)
      WritesExec = true;
    if (C == RegClass::VCC)
      E.WritesVCC = true;
    if (auto S = RM.sgprRange(Reg)) {
      int Lo = S->first, Hi = S->first + S->second - 1;
      E.WLo = E.WLo < 0 ? Lo : std::min(E.WLo, Lo);
      E.WHi = std::max(E.WHi, Hi);
    }
    if (C == RegClass::VGPR) {
      SmallVector<uint16_t, 8> Units;
      RM.appendUnits(Reg, Units);
      for (uint16_t U : Units) {
        int V = RM.unit(U).Index;
        E.VLo = E.VLo < 0 ? V : std::min(E.VLo, V);
        E.VHi = std::max(E.VHi, V);
      }
    }
  };
  for (unsigned I = 0; I < D.getNumDefs() && I < MI.getNumOperands(); ++I)
    if (MI.getOperand(I).isReg() && MI.getOperand(I).getReg().isValid())
      NoteDef(MI.getOperand(I).getReg());
  for (MCPhysReg Reg : D.implicit_defs())
    NoteDef(Reg);
  return WritesExec;
}

ExecEffect code::execEffect(const MCInst &MI, const MCInstrInfo &MII,
                            const InsnKinds &K, const RegisterModel &RM) {
  ExecEffect E;
  const MCInstrDesc &D = MII.get(MI.getOpcode());
  StringRef N = K.baseName(MI.getOpcode());
  unsigned NumDefs = D.getNumDefs();
  const bool WritesExec = noteWrites(MI, D, RM, E);
  auto RefOf = [&](unsigned I) { return maskRefOf(MI, I, RM); };
  auto OpOf = maskOpOf;
  // S_<Op>_B64 or S_<Op>_B32.
  auto Base = [&](StringRef Op) {
    return N.starts_with("S_") &&
           (N.ends_with("_B64") || N.ends_with("_B32")) &&
           N.drop_front(2).drop_back(4) == Op;
  };
  if (N.contains("_SAVEEXEC_B")) {
    // S_<OP>_SAVEEXEC_B64 sD, s0: sD = EXEC; EXEC = OP(s0, EXEC).
    StringRef Op = N.drop_front(2).split("_SAVEEXEC").first;
    E.O = OpOf(Op);
    E.SaveTo = RefOf(0);
    E.A = RefOf(1);
    return E;
  }
  // An SGPR spilled to a lane of a VGPR, or read back from one.
  bool Write = N == "V_WRITELANE_B32", Read = N == "V_READLANE_B32";
  if ((Write || Read) && !WritesExec && MI.getNumOperands() >= 3) {
    const MCOperand &S = MI.getOperand(Write ? 1 : 0);
    const MCOperand &V = MI.getOperand(Write ? 0 : 1);
    const MCOperand &Lane = MI.getOperand(2);
    E.LOp = Write ? ExecEffect::WriteLane : ExecEffect::ReadLane;
    if (S.isReg())
      if (auto R = RM.sgprRange(S.getReg()); R && R->second == 1)
        E.LaneSGPR = R->first;
    if (V.isReg() && RM.classOf(V.getReg()) == RegClass::VGPR) {
      SmallVector<uint16_t, 2> Units;
      RM.appendUnits(V.getReg(), Units);
      if (!Units.empty())
        E.LaneVGPR = RM.unit(Units.front()).Index;
    }
    if (Lane.isImm() && Lane.getImm() >= 0 && Lane.getImm() < 64)
      E.Lane = int(Lane.getImm());
    // One lane of the VGPR changes, not the VGPR.
    if (Write)
      E.VLo = E.VHi = -1;
    return E;
  }
  if (N.starts_with("V_CMPX_")) {
    E.O = ExecEffect::SubsetOfCur;
    E.Dst.K = MaskRef::Exec;
    return E;
  }
  if (N.starts_with("V_CMP_") || N.starts_with("V_CMP_CLASS")) {
    // The result mask: explicit (e64: SGPRs or VCC) or VCC (e32).
    E.O = ExecEffect::SubsetOfCur;
    if (NumDefs >= 1)
      E.Dst = RefOf(0);
    else if (E.WritesVCC) {
      E.Dst.K = MaskRef::VCC;
      E.Dst.Count = 1;
    }
    if (E.Dst.K != MaskRef::SGPR && E.Dst.K != MaskRef::VCC)
      E.O = ExecEffect::NoOp;
    return E;
  }
  if (N.contains("_WREXEC_B")) {
    // S_ANDN1_WREXEC / S_ANDN2_WREXEC: EXEC = sD = OP(s0, EXEC).
    StringRef Op = N.drop_front(2).split("_WREXEC").first;
    E.O = OpOf(Op);
    E.A = RefOf(1);
    E.B.K = MaskRef::Exec;
    E.Dst.K = MaskRef::Exec;
    return E;
  }
  ExecEffect::Op Op = ExecEffect::NoOp;
  for (StringRef Name : {"AND", "ANDN2", "ANDN1", "OR", "XOR"})
    if (Base(Name))
      Op = OpOf(Name);
  if (Base("MOV"))
    Op = ExecEffect::Mov;
  if (Op != ExecEffect::NoOp && NumDefs == 1) {
    E.O = Op;
    E.Dst = RefOf(0);
    E.A = RefOf(1);
    E.B = RefOf(2);
    if (E.Dst.K == MaskRef::None)
      E.O = ExecEffect::NoOp;
    return E;
  }
  if (WritesExec) {
    E.O = ExecEffect::Unknown;
    E.Dst.K = MaskRef::Exec;
  }
  return E;
}

/// Immediate dominators (Cooper, Harvey and Kennedy), -1 for blocks the
/// entry does not reach.
static std::vector<int32_t> immediateDominators(const FunctionCFG &G,
                                                std::vector<uint32_t> &Order) {
  size_t NB = G.Blocks.size();
  std::vector<int32_t> IDom(NB, -1);
  std::vector<uint32_t> RPO;
  Order.assign(NB, UINT32_MAX);
  std::vector<bool> Seen(NB, false);
  std::vector<std::pair<uint32_t, size_t>> Stack;
  if (NB) {
    Stack.push_back({0, 0});
    Seen[0] = true;
  }
  while (!Stack.empty()) {
    auto &[B, Next] = Stack.back();
    if (Next < G.Blocks[B].Succs.size()) {
      uint32_t S = G.Blocks[B].Succs[Next++].To;
      if (!Seen[S]) {
        Seen[S] = true;
        Stack.push_back({S, 0});
      }
      continue;
    }
    RPO.push_back(B);
    Stack.pop_back();
  }
  std::reverse(RPO.begin(), RPO.end());
  for (uint32_t I = 0; I < RPO.size(); ++I)
    Order[RPO[I]] = I;
  if (NB)
    IDom[0] = 0;
  bool Changed = true;
  while (Changed) {
    Changed = false;
    for (uint32_t B : RPO) {
      if (B == 0)
        continue;
      int32_t New = -1;
      for (uint32_t P : G.Blocks[B].Preds) {
        if (IDom[P] < 0)
          continue;
        if (New < 0) {
          New = P;
          continue;
        }
        uint32_t X = P, Y = New;
        while (X != Y) {
          while (Order[X] > Order[Y])
            X = IDom[X];
          while (Order[Y] > Order[X])
            Y = IDom[Y];
        }
        New = X;
      }
      if (New >= 0 && IDom[B] != New) {
        IDom[B] = New;
        Changed = true;
      }
    }
  }
  return IDom;
}

namespace {
/// analyseExec's state and its steps: the forward analysis iterated to a
/// fixed point, a last pass that records the value before each
/// instruction and the joins, then the edge maps.
class ExecAnalysis {
public:
  ExecAnalysis(const FunctionCFG &G, ArrayRef<ExecEffect> Exec)
      : G(G), Exec(Exec), NB(G.Blocks.size()), Out(NB), Joins(NB) {
    // Dominators (Cooper, Harvey and Kennedy): a join's value may only be
    // said to be a subset of a value made where every path to the join
    // passes, before it; a value made inside a loop is a new one on every
    // iteration, and what held for the last iteration's need not hold now.
    IDom = immediateDominators(G, L.Order);
    // The dominator tree's preorder and postorder numbers.
    std::vector<SmallVector<uint32_t, 2>> Kids(NB);
    for (uint32_t B = 1; B < NB; ++B)
      if (IDom[B] >= 0 && uint32_t(IDom[B]) != B)
        Kids[IDom[B]].push_back(B);
    L.DomPre.assign(NB, 0);
    L.DomPost.assign(NB, 0);
    uint32_t Pre = 1, Post = 1;
    std::vector<std::pair<uint32_t, size_t>> Stack;
    if (NB) {
      Stack.push_back({0, 0});
      L.DomPre[0] = Pre++;
    }
    while (!Stack.empty()) {
      auto &[B, Next] = Stack.back();
      if (Next < Kids[B].size()) {
        uint32_t K = Kids[B][Next++];
        L.DomPre[K] = Pre++;
        Stack.push_back({K, 0});
        continue;
      }
      L.DomPost[B] = Post++;
      Stack.pop_back();
    }
    V.InsnBlock.resize(G.Insns.size());
    for (uint32_t B = 0; B < NB; ++B)
      for (uint32_t I = G.Blocks[B].First; I < G.Blocks[B].End; ++I)
        V.InsnBlock[I] = B;
  }

  ExecFlow run() {
    L.Before.assign(G.Insns.size(), EntryExec);
    if (NB) {
      iterate();
      Record = true;
      for (uint32_t B = 0; B < NB; ++B)
        runBlock(B, inOf(B), /*Before=*/true);
    }
    mapEdges();
    L.Parent = V.Parent;
    L.SiteBlock = V.SiteBlock;
    return std::move(L);
  }

private:
  const FunctionCFG &G;
  ArrayRef<ExecEffect> Exec;
  const size_t NB;
  ExecFlow L; // named as in Liveness, whose half this is
  ExecValues V;
  /// The state at each block's end.
  std::vector<ExecState> Out;
  std::vector<int32_t> IDom;
  /// The joins made at each block: (value, site), for the final pass.
  std::vector<SmallVector<std::pair<uint32_t, int>, 2>> Joins;
  /// Each join's inputs when last made (itself left out).
  DenseMap<uint32_t, SmallVector<uint32_t, 2>> JoinIn;

  /// What \p X stands for: a join whose inputs, joins among them followed
  /// in turn, come to one value is that value (a loop that leaves a value
  /// alone brings back the join it met at its header). nullopt: nothing
  /// but joins already on the way (\p Seen).
  std::optional<uint32_t> resolve(uint32_t X, SmallVectorImpl<uint32_t> &Seen) {
    auto It = JoinIn.find(X);
    if (It == JoinIn.end())
      return X;
    if (llvm::is_contained(Seen, X))
      return std::nullopt;
    Seen.push_back(X);
    std::optional<uint32_t> One;
    for (uint32_t In : SmallVector<uint32_t, 2>(It->second)) {
      std::optional<uint32_t> R = resolve(In, Seen);
      if (!R)
        continue;
      if (One && *One != *R)
        return X;
      One = R;
    }
    return One;
  }
  bool Record = false;

  bool strictlyDominates(int32_t A, uint32_t B) const {
    return code::strictlyDominates(L.DomPre, L.DomPost, A, B);
  }

  /// The value at the start of block \p B of values \p Vals from its
  /// predecessors (the join made at site \p Sub of B when they differ).
  uint32_t join(uint32_t B, int Sub, ArrayRef<uint32_t> Vals) {
    if (llvm::all_of(Vals, [&](uint32_t X) { return X == Vals.front(); }))
      return Vals.front();
    uint64_t Key = ExecValues::joinKey(B, Sub);
    uint32_t J = V.id(Key);
    SmallVector<uint32_t, 4> Ins;
    for (uint32_t X : Vals) {
      SmallVector<uint32_t, 4> Seen{J};
      std::optional<uint32_t> R = X == J ? std::nullopt : resolve(X, Seen);
      if (R && !llvm::is_contained(Ins, *R))
        Ins.push_back(*R);
    }
    JoinIn[J].assign(Ins.begin(), Ins.end());
    if (Ins.size() == 1)
      return Ins.front();
    Vals = Ins;
    // A value already within the join (a loop's back edge bringing back
    // a narrowing of the value its header held) adds no lanes: on every
    // iteration the header holds a subset of what it held the first time.
    std::optional<uint32_t> P;
    for (uint32_t X : Vals)
      if (!V.within(X, J))
        P = P ? V.lca(*P, X) : X;
    uint32_t Up = P ? *P : AllLanes;
    while (Up > NoLanes && !strictlyDominates(V.SiteBlock[Up], B))
      Up = V.Parent[Up];
    if (Up == NoLanes)
      return NoLanes;
    uint32_t R = V.at(Key, int32_t(Up));
    if (Record)
      Joins[B].push_back({R, Sub});
    return R;
  }

  ExecState inOf(uint32_t B) {
    ExecState In;
    SmallVector<const ExecState *, 4> Ins;
    for (uint32_t P : G.Blocks[B].Preds)
      if (Out[P].Visited)
        Ins.push_back(&Out[P]);
    ExecState Entry;
    Entry.Visited = true;
    Entry.Cur = EntryExec;
    if (B == 0)
      Ins.push_back(&Entry);
    if (Ins.empty())
      return In;
    In.Visited = true;
    SmallVector<uint32_t, 4> Vals;
    for (const ExecState *O : Ins)
      Vals.push_back(O->Cur);
    In.Cur = join(B, -1, Vals);
    // A mask every path holds in the same place stays.
    for (const SavedCopy &C : Ins.front()->Saved) {
      Vals.clear();
      for (const ExecState *O : Ins)
        if (std::optional<uint32_t> X = O->saved(C.First, C.Count))
          Vals.push_back(*X);
      if (Vals.size() == Ins.size())
        In.Saved.push_back({C.First, C.Count, join(B, C.First, Vals)});
    }
    for (const MaskPart &C : Ins.front()->Parts) {
      Vals.clear();
      for (const ExecState *O : Ins)
        for (const MaskPart &P : O->Parts)
          if (P.Loc == C.Loc && P.Which == C.Which && P.Count == C.Count)
            Vals.push_back(P.Value);
      if (Vals.size() == Ins.size())
        In.Parts.push_back(
            {C.Loc, join(B, PartSubBase + C.Loc, Vals), C.Which, C.Count});
    }
    // A cover every path holds stays, when its value is made where every
    // path to B passes (on a loop's back edge it is then the same value).
    for (const Cover &C : Ins.front()->Covers)
      if ((C.P <= NoLanes || strictlyDominates(V.SiteBlock[C.P], B)) &&
          llvm::all_of(Ins, [&](const ExecState *O) {
            return llvm::is_contained(O->Covers, C);
          }))
        In.Covers.push_back(C);
    return In;
  }

  /// Block \p B's instructions from state \p S (recording the value
  /// before each when \p Before): the state at its end.
  ExecState runBlock(uint32_t B, ExecState S, bool Before) {
    const Block &Bl = G.Blocks[B];
    for (uint32_t I = Bl.First; I < Bl.End; ++I) {
      if (Before)
        L.Before[I] = S.Cur;
      std::optional<std::array<uint32_t, 3>> Union;
      transfer(Exec[I], S, V, I, Before ? &Union : nullptr);
      if (Union)
        L.Unions.push_back({I, (*Union)[0], (*Union)[1], (*Union)[2]});
      if (G.Insns[I].F == Flow::Call || G.Insns[I].F == Flow::IndirectCall) {
        S.Saved.clear(); // the callee may write any SGPR (and VGPR)
        S.Covers.clear();
        S.Parts.clear();
      }
    }
    return S;
  }

  /// The forward analysis to a fixed point (or a bound on steps).
  void iterate() {
    std::vector<uint32_t> Work{0};
    std::vector<bool> Queued(NB, false);
    Queued[0] = true;
    size_t Steps = 0, Limit = 64 * NB + 64;
    while (!Work.empty()) {
      if (++Steps > Limit) {
        L.Converged = false;
        break;
      }
      uint32_t B = Work.back();
      Work.pop_back();
      Queued[B] = false;
      ExecState S = runBlock(B, inOf(B), /*Before=*/false);
      if (S == Out[B])
        continue;
      Out[B] = std::move(S);
      for (const Edge &E : G.Blocks[B].Succs)
        if (!Queued[E.To]) {
          Queued[E.To] = true;
          Work.push_back(E.To);
        }
    }
  }

  /// On the edge from P into B, a join B made is what P holds at its end:
  /// a need under the join (or under a subset of it) is a need under that.
  void mapEdges() {
    L.EdgeMap.assign(NB, {});
    for (uint32_t B = 0; B < NB; ++B) {
      auto &Js = Joins[B];
      llvm::sort(Js, [&](const auto &A, const auto &C) {
        return V.depth(A.first) > V.depth(C.first);
      });
      for (uint32_t P : G.Blocks[B].Preds) {
        if (!Out[P].Visited)
          continue;
        for (auto &[J, Sub] : Js) {
          std::optional<uint32_t> Val;
          if (Sub == -1) {
            Val = Out[P].Cur;
          } else if (Sub >= PartSubBase) {
            for (const MaskPart &C : Out[P].Parts)
              if (C.Loc == Sub - PartSubBase)
                Val = C.Value;
          } else {
            for (const SavedCopy &C : Out[P].Saved)
              if (C.First == Sub)
                Val = C.Value;
          }
          if (Val && *Val != J)
            L.EdgeMap[B].push_back({P, J, *Val});
        }
      }
    }
  }
};
} // namespace

ExecFlow code::analyseExec(const FunctionCFG &G, ArrayRef<ExecEffect> Exec) {
  return ExecAnalysis(G, Exec).run();
}
