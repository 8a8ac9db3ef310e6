//===- lib/Code/Liveness.cpp - Registers that hold needed values ----------===//

#include "hotswap/Code/Liveness.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstrDesc.h"
#include "llvm/MC/MCInstrInfo.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

namespace {
/// EXEC value 0 holds every lane (whole-wave mode); 1 is the entry's; 2 is
/// the empty mask (a subset of every value).
constexpr uint32_t AllLanes = 0, EntryExec = 1, NoLanes = 2;

/// A lane mask an instruction reads or writes: EXEC, an SGPR or SGPR
/// tuple, VCC, or the constant -1.
struct MaskRef {
  enum Kind : uint8_t { None, Exec, SGPR, VCC, All, Zero } K = None;
  int First = -1;
  unsigned Count = 0;
  /// The key masks are kept under (VCC: -2).
  int key() const { return K == VCC ? -2 : First; }
};

/// What an instruction does to lane masks: Dst = Op(A, B).
struct ExecEffect {
  enum Op : uint8_t {
    NoOp,
    And,         // a & b
    AndN2,       // a & ~b
    AndN1,       // ~a & b
    Or,          // a | b
    Xor,         // a ^ b
    Mov,         // a
    SubsetOfCur, // a VALU compare: a subset of EXEC
    Unknown,
  } O = NoOp;
  MaskRef A, B, Dst;
  /// *_saveexec: SaveTo gets the old EXEC, then EXEC = Op(A, EXEC).
  MaskRef SaveTo;
  /// SGPRs written, [WLo, WHi]; -1 when none. WritesVCC likewise.
  int WLo = -1, WHi = -1;
  bool WritesVCC = false;
};

struct SavedCopy {
  int First;
  unsigned Count;
  uint32_t Value;
  bool operator==(const SavedCopy &O) const {
    return First == O.First && Count == O.Count && Value == O.Value;
  }
};

/// The forward state: the EXEC value and the masks SGPRs (and VCC) hold.
struct ExecState {
  bool Visited = false;
  uint32_t Cur = EntryExec;
  SmallVector<SavedCopy, 4> Saved;

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
    return Visited == O.Visited && Cur == O.Cur && Saved == O.Saved;
  }
};

/// The EXEC values of one function and how they nest.
class ExecValues {
public:
  ExecValues() : Parent{-1, AllLanes, EntryExec}, SiteBlock{-1, -1, -1} {}
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

private:
  DenseMap<uint64_t, uint32_t> BySite;
};
} // namespace

static void transfer(const ExecEffect &E, ExecState &S, ExecValues &V,
                     uint32_t Insn) {
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
      if (A && B) // a subset of both: take the narrower known bound
        return V.at(Key, V.within(*B, *A)             ? *B
                         : V.within(*A, *B)           ? *A
                         : V.depth(*B) >= V.depth(*A) ? *B
                                                      : *A);
      if (A || B)
        return V.at(Key, A ? *A : *B);
      return std::nullopt;
    case ExecEffect::AndN2:
      return A ? std::optional<uint32_t>(V.at(Key, *A)) : std::nullopt;
    case ExecEffect::AndN1:
      return B ? std::optional<uint32_t>(V.at(Key, *B)) : std::nullopt;
    case ExecEffect::Or:
      if (!A || !B)
        return std::nullopt;
      if (V.within(*A, *B))
        return *B;
      if (V.within(*B, *A))
        return *A;
      return V.at(Key, V.lca(*A, *B));
    case ExecEffect::Xor:
      if (!A || !B)
        return std::nullopt;
      return V.at(Key, V.lca(*A, *B));
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
}

/// Reads \p MI's registers and EXEC effect.
static void describe(const MCInst &MI, const MCInstrInfo &MII,
                     const InsnKinds &K, const RegisterModel &RM,
                     bool DSIgnoresM0, bool Wave32,
                     function_ref<bool(const MCInst &)> FetchInactive,
                     InsnRegs &R, ExecEffect &E, RegSet &Scratch) {
  const MCInstrDesc &D = MII.get(MI.getOpcode());
  StringRef N = K.baseName(MI.getOpcode());
  auto Units = [&](MCRegister Reg, SmallVectorImpl<uint16_t> &Out,
                   bool Implicit) {
    Scratch.reset();
    RM.addUnits(Reg, Scratch);
    for (unsigned U : Scratch.set_bits()) {
      // LLVM's descriptions name VCC and EXEC as implicit operands; a wave32
      // instruction uses their low halves only.
      const RegUnitInfo &I = RM.unit(U);
      if (Implicit && Wave32 && I.Index == 1 &&
          (I.Class == RegClass::VCC || I.Class == RegClass::EXEC))
        continue;
      Out.push_back(static_cast<uint16_t>(U));
    }
  };
  bool WritesExec = false;
  auto NoteDef = [&](MCRegister Reg, bool Implicit) {
    RegClass C = RM.classOf(Reg);
    Units(Reg,
          C == RegClass::VGPR || C == RegClass::AGPR ? R.VectorDefs
                                                     : R.ScalarDefs,
          Implicit);
    if (C == RegClass::EXEC)
      WritesExec = true;
    if (auto S = RM.sgprRange(Reg)) {
      int Lo = S->first, Hi = S->first + S->second - 1;
      E.WLo = E.WLo < 0 ? Lo : std::min(E.WLo, Lo);
      E.WHi = std::max(E.WHi, Hi);
    }
  };
  unsigned NumDefs = D.getNumDefs();
  for (unsigned I = 0; I < MI.getNumOperands(); ++I) {
    const MCOperand &O = MI.getOperand(I);
    if (!O.isReg() || !O.getReg().isValid())
      continue;
    if (I < NumDefs)
      NoteDef(O.getReg(), false);
    else
      Units(O.getReg(), R.Uses, false);
  }
  for (MCPhysReg Reg : D.implicit_uses()) {
    // LLVM describes every DS instruction as reading M0 (gfx6-8 clamp LDS
    // addresses with it); from gfx9 on only these still read it.
    if (DSIgnoresM0 && RM.classOf(Reg) == RegClass::M0 &&
        N.starts_with("DS_") && !N.starts_with("DS_APPEND") &&
        !N.starts_with("DS_CONSUME") && !N.starts_with("DS_GWS") &&
        !N.starts_with("DS_ORDERED_COUNT") && !N.contains("ADDTID") &&
        !N.contains("GS_REG"))
      continue;
    Units(Reg, R.Uses, true);
  }
  for (MCPhysReg Reg : D.implicit_defs())
    NoteDef(Reg, true);
  for (auto *V : {&R.Uses, &R.ScalarDefs, &R.VectorDefs}) {
    llvm::sort(*V);
    V->erase(std::unique(V->begin(), V->end()), V->end());
  }
  // Reads of other lanes than those EXEC enables: v_readlane (any lane),
  // permlane and DPP with "fetch inactive" (gfx10+). DPP without it,
  // ds_swizzle and ds_[b]permute read only enabled lanes (a disabled source
  // lane reads as the old value or zero).
  StringRef Full = MII.getName(MI.getOpcode());
  R.CrossLane =
      N.starts_with("V_READLANE") || N.starts_with("V_PERMLANE") ||
      (FetchInactive && (Full.contains("_dpp") || Full.contains("_DPP")) &&
       FetchInactive(MI));

  // Lane masks.
  auto RefOf = [&](unsigned I) {
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
  };
  for (unsigned I = 0; I < NumDefs && I < MI.getNumOperands(); ++I)
    if (MI.getOperand(I).isReg() &&
        RM.classOf(MI.getOperand(I).getReg()) == RegClass::VCC)
      E.WritesVCC = true;
  for (MCPhysReg Reg : D.implicit_defs())
    if (RM.classOf(Reg) == RegClass::VCC)
      E.WritesVCC = true;
  auto Base = [&](StringRef Op) {
    return N == ("S_" + Op + "_B64").str() || N == ("S_" + Op + "_B32").str();
  };
  auto OpOf = [&](StringRef Name) -> ExecEffect::Op {
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
  };
  if (N.contains("_SAVEEXEC_B")) {
    // S_<OP>_SAVEEXEC_B64 sD, s0: sD = EXEC; EXEC = OP(s0, EXEC).
    StringRef Op = N.drop_front(2).split("_SAVEEXEC").first;
    E.O = OpOf(Op);
    E.SaveTo = RefOf(0);
    E.A = RefOf(1);
    return;
  }
  if (N.starts_with("V_CMPX_")) {
    E.O = ExecEffect::SubsetOfCur;
    E.Dst.K = MaskRef::Exec;
    return;
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
    return;
  }
  if (N.contains("_WREXEC_B")) {
    // S_ANDN1_WREXEC / S_ANDN2_WREXEC: EXEC = sD = OP(s0, EXEC).
    StringRef Op = N.drop_front(2).split("_WREXEC").first;
    E.O = OpOf(Op);
    E.A = RefOf(1);
    E.B.K = MaskRef::Exec;
    E.Dst.K = MaskRef::Exec;
    return;
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
    return;
  }
  if (WritesExec) {
    E.O = ExecEffect::Unknown;
    E.Dst.K = MaskRef::Exec;
  }
}

static void addTo(Liveness::State &S, uint32_t Value, uint16_t Unit,
                  const RegSet &Empty) {
  for (auto &[V, Set] : S)
    if (V == Value) {
      Set.set(Unit);
      return;
    }
  S.push_back({Value, Empty});
  S.back().second.set(Unit);
}

static void merge(Liveness::State &Into, const Liveness::State &From) {
  for (const auto &[V, Set] : From) {
    bool Found = false;
    for (auto &[V2, Set2] : Into)
      if (V2 == V) {
        Set2 |= Set;
        Found = true;
        break;
      }
    if (!Found)
      Into.push_back({V, Set});
  }
}

static void normalize(Liveness::State &S) {
  llvm::erase_if(
      S, [](const std::pair<uint32_t, RegSet> &P) { return P.second.none(); });
  llvm::sort(S, [](const auto &A, const auto &B) { return A.first < B.first; });
}

static RegSet anyOf(const Liveness::State &S, const RegSet &Empty) {
  RegSet R = Empty;
  for (const auto &P : S)
    R |= P.second;
  return R;
}

Liveness::State Liveness::acrossEdge(uint32_t From, uint32_t To,
                                     const State &S) const {
  bool Any = false;
  for (auto &M : EdgeMap[To])
    Any |= std::get<0>(M) == From;
  if (!Any)
    return S;
  State R;
  RegSet Empty(AllTracked.size());
  for (const auto &[Id, Set] : S) {
    uint32_t To2 = Id;
    for (auto &[P, J, Val] : EdgeMap[To])
      if (P == From && within(Id, J)) {
        To2 = Val;
        break;
      }
    bool Found = false;
    for (auto &[Id2, Set2] : R)
      if (Id2 == To2) {
        Set2 |= Set;
        Found = true;
      }
    if (!Found)
      R.push_back({To2, Set});
  }
  normalize(R);
  return R;
}

bool Liveness::within(uint32_t A, uint32_t B) const {
  if (A == NoLanes)
    return true;
  for (int32_t X = A; X >= 0; X = ExecParent[X])
    if (uint32_t(X) == B)
      return true;
  return false;
}

void Liveness::step(uint32_t I, State &S) const {
  const InsnRegs &R = Regs[I];
  uint32_t E = ExecBefore[I];
  for (auto &[V, Set] : S) {
    for (uint16_t U : R.ScalarDefs)
      Set.reset(U);
    if (ExecConverged && within(V, E))
      for (uint16_t U : R.VectorDefs)
        Set.reset(U);
  }
  RegSet Empty(AllTracked.size());
  if (R.UsesAll) {
    bool Found = false;
    for (auto &[V, Set] : S)
      if (V == AllLanes) {
        Set |= AllTracked;
        Found = true;
      }
    if (!Found)
      S.push_back({AllLanes, AllTracked});
  }
  for (uint16_t U : R.Uses) {
    // Scalar registers have no lanes: kept under every lane.
    bool Lanes = !R.CrossLane && ScalarClassOf[U] == 0;
    addTo(S, Lanes ? E : AllLanes, U, Empty);
  }
  normalize(S);
}

Liveness code::computeLiveness(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                               ArrayRef<uint8_t> Bytes, FunctionKind Kind,
                               bool Wave32) {
  (void)Kind; // the entry's EXEC is the reference for kernels and functions
  const RegisterModel &RM = RegisterModel::get(MC.regInfo());
  const InsnKinds &K = InsnKinds::get(MC.instrInfo());
  Liveness L;
  L.G = &G;
  L.AllTracked = RM.allTracked();
  L.ScalarClassOf.assign(RM.numUnits(), 1);
  for (unsigned U = 0; U < RM.numUnits(); ++U) {
    RegClass C = RM.unit(U).Class;
    if (C == RegClass::VGPR || C == RegClass::AGPR)
      L.ScalarClassOf[U] = 0;
  }
  size_t N = G.Insns.size();
  L.Regs.resize(N);
  std::vector<ExecEffect> Exec(N);
  RegSet Scratch = RM.emptySet();
  L.Referenced = RM.emptySet();
  bool DSIgnoresM0 = MC.hasFeature("gfx9-insts");
  // gfx10+ DPP has a "fetch inactive" bit; LLVM prints it as "fi:1".
  auto FetchInactiveText = [&](const MCInst &MI) {
    return StringRef(MC.printInst(MI, 0)).contains("fi:1");
  };
  function_ref<bool(const MCInst &)> FetchInactive;
  if (MC.hasFeature("gfx10-insts"))
    FetchInactive = FetchInactiveText;
  for (size_t I = 0; I < N; ++I) {
    std::optional<amdgpu::DecodedInst> D =
        decodeAt(MC, Bytes, G.Begin, G.Insns[I]);
    if (!D)
      continue; // decoded before: cannot happen
    describe(D->Inst, MC.instrInfo(), K, RM, DSIgnoresM0, Wave32, FetchInactive,
             L.Regs[I], Exec[I], Scratch);
    for (auto *V :
         {&L.Regs[I].Uses, &L.Regs[I].ScalarDefs, &L.Regs[I].VectorDefs})
      for (uint16_t U : *V)
        L.Referenced.set(U);
    Flow F = G.Insns[I].F;
    if (F == Flow::Call || F == Flow::IndirectCall)
      L.Regs[I].UsesAll = true;
  }

  // Forward: the EXEC value before each instruction.
  size_t NB = G.Blocks.size();
  ExecValues V;
  std::vector<ExecState> Out(NB);
  L.ExecBefore.assign(N, EntryExec);
  // Dominators (Cooper, Harvey and Kennedy): a join's value may only be
  // said to be a subset of a value made where every path to the join
  // passes, before it; a value made inside a loop is a new one on every
  // iteration, and what held for the last iteration's need not hold now.
  std::vector<int32_t> IDom(NB, -1);
  {
    std::vector<uint32_t> RPO, Order(NB, UINT32_MAX);
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
  }
  auto StrictlyDominates = [&](int32_t A, uint32_t B) {
    if (A < 0 || uint32_t(A) == B || IDom[B] < 0)
      return false;
    for (uint32_t X = B; X != 0;) {
      X = IDom[X];
      if (X == uint32_t(A))
        return true;
    }
    return false;
  };
  V.InsnBlock.resize(N);
  for (uint32_t B = 0; B < NB; ++B)
    for (uint32_t I = G.Blocks[B].First; I < G.Blocks[B].End; ++I)
      V.InsnBlock[I] = B;
  // The value at the start of block B of values \p Vals from its
  // predecessors (the join made at site \p Sub of B when they differ).
  // The joins made at each block: (value, site), for the final pass.
  std::vector<SmallVector<std::pair<uint32_t, int>, 2>> Joins(NB);
  bool Record = false;
  auto Join = [&](uint32_t B, int Sub, ArrayRef<uint32_t> Vals) -> uint32_t {
    if (llvm::all_of(Vals, [&](uint32_t X) { return X == Vals.front(); }))
      return Vals.front();
    uint64_t Key = ExecValues::joinKey(B, Sub);
    uint32_t J = V.id(Key);
    std::optional<uint32_t> P;
    for (uint32_t X : Vals)
      if (X != J)
        P = P ? V.lca(*P, X) : X;
    uint32_t Up = P ? *P : AllLanes;
    while (Up > NoLanes && !StrictlyDominates(V.SiteBlock[Up], B))
      Up = V.Parent[Up];
    if (Up == NoLanes)
      return NoLanes;
    uint32_t R = V.at(Key, int32_t(Up));
    if (Record)
      Joins[B].push_back({R, Sub});
    return R;
  };
  auto InOf = [&](uint32_t B) {
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
    In.Cur = Join(B, -1, Vals);
    // A mask every path holds in the same place stays.
    for (const SavedCopy &C : Ins.front()->Saved) {
      Vals.clear();
      for (const ExecState *O : Ins)
        if (std::optional<uint32_t> X = O->saved(C.First, C.Count))
          Vals.push_back(*X);
      if (Vals.size() == Ins.size())
        In.Saved.push_back({C.First, C.Count, Join(B, C.First, Vals)});
    }
    return In;
  };
  if (NB) {
    std::vector<uint32_t> Work{0};
    std::vector<bool> Queued(NB, false);
    Queued[0] = true;
    size_t Steps = 0, Limit = 64 * NB + 64;
    while (!Work.empty()) {
      if (++Steps > Limit) {
        L.ExecConverged = false;
        break;
      }
      uint32_t B = Work.back();
      Work.pop_back();
      Queued[B] = false;
      ExecState S = InOf(B);
      const Block &Bl = G.Blocks[B];
      for (uint32_t I = Bl.First; I < Bl.End; ++I) {
        transfer(Exec[I], S, V, I);
        if (G.Insns[I].F == Flow::Call || G.Insns[I].F == Flow::IndirectCall)
          S.Saved.clear(); // the callee may write any SGPR
      }
      if (S == Out[B])
        continue;
      Out[B] = std::move(S);
      for (const Edge &E : Bl.Succs)
        if (!Queued[E.To]) {
          Queued[E.To] = true;
          Work.push_back(E.To);
        }
    }
    Record = true;
    for (uint32_t B = 0; B < NB; ++B) {
      ExecState S = InOf(B);
      const Block &Bl = G.Blocks[B];
      for (uint32_t I = Bl.First; I < Bl.End; ++I) {
        L.ExecBefore[I] = S.Cur;
        transfer(Exec[I], S, V, I);
        if (G.Insns[I].F == Flow::Call || G.Insns[I].F == Flow::IndirectCall)
          S.Saved.clear();
      }
    }
  }
  // On the edge from P into B, a join B made is what P holds at its end:
  // a need under the join (or under a subset of it) is a need under that.
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
        if (Sub == -1)
          Val = Out[P].Cur;
        else
          for (const SavedCopy &C : Out[P].Saved)
            if (C.First == Sub)
              Val = C.Value;
        if (Val && *Val != J)
          L.EdgeMap[B].push_back({P, J, *Val});
      }
    }
  }
  L.ExecParent = V.Parent;
  L.ExecFullBefore.assign(N, false);
  for (size_t I = 0; I < N; ++I)
    L.ExecFullBefore[I] =
        L.ExecBefore[I] == EntryExec || L.ExecBefore[I] == AllLanes;

  // Backward to a fixed point.
  RegSet Empty = RM.emptySet();
  L.LiveIn.assign(NB, Empty);
  L.LiveOut.assign(NB, Empty);
  L.OutState.assign(NB, {});
  std::vector<Liveness::State> InState(NB);
  std::vector<bool> Queued(NB, true);
  std::vector<uint32_t> Work;
  for (uint32_t B = 0; B < NB; ++B)
    Work.push_back(B); // the last block is popped first
  while (!Work.empty()) {
    uint32_t B = Work.back();
    Work.pop_back();
    Queued[B] = false;
    const Block &Bl = G.Blocks[B];
    Liveness::State S;
    if (Bl.Exit != BlockExit::None && Bl.Exit != BlockExit::EndProgram)
      S.push_back({AllLanes, L.AllTracked});
    for (const Edge &E : Bl.Succs)
      merge(S, L.acrossEdge(B, E.To, InState[E.To]));
    normalize(S);
    L.OutState[B] = S;
    for (uint32_t I = Bl.End; I-- > Bl.First;)
      L.step(I, S);
    if (S != InState[B]) {
      InState[B] = std::move(S);
      for (uint32_t P : Bl.Preds)
        if (!Queued[P]) {
          Queued[P] = true;
          Work.push_back(P);
        }
    }
  }
  L.EverLive = RM.emptySet();
  for (uint32_t B = 0; B < NB; ++B) {
    L.LiveIn[B] = anyOf(InState[B], Empty);
    L.LiveOut[B] = anyOf(L.OutState[B], Empty);
    L.EverLive |= L.LiveOut[B];
    for (const RegSet &S : L.liveBefore(B))
      L.EverLive |= S;
  }
  return L;
}

std::vector<RegSet> Liveness::liveBefore(uint32_t B) const {
  const Block &Bl = G->Blocks[B];
  std::vector<RegSet> Out(Bl.End - Bl.First);
  State S = OutState[B];
  RegSet Empty(AllTracked.size());
  for (uint32_t I = Bl.End; I-- > Bl.First;) {
    step(I, S);
    Out[I - Bl.First] = anyOf(S, Empty);
  }
  return Out;
}
