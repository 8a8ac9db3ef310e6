//===- lib/Code/Liveness.cpp - Registers that hold needed values ----------===//

#include "hotswap/Code/Liveness.h"
#include "hotswap/Code/CallReads.h"

#include "ExecMasks.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstrDesc.h"
#include "llvm/MC/MCInstrInfo.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

/// Reads \p MI's registers.
static void describe(const MCInst &MI, const MCInstrInfo &MII,
                     const InsnKinds &K, const RegisterModel &RM,
                     bool DSIgnoresM0, bool Wave32,
                     function_ref<bool(const MCInst &)> FetchInactive,
                     InsnRegs &R) {
  const MCInstrDesc &D = MII.get(MI.getOpcode());
  StringRef N = K.baseName(MI.getOpcode());
  auto Units = [&](MCRegister Reg, SmallVectorImpl<uint16_t> &Out,
                   bool Implicit) {
    const size_t From = Out.size();
    RM.appendUnits(Reg, Out);
    // LLVM's descriptions name VCC and EXEC as implicit operands; a wave32
    // instruction uses their low halves only.
    if (Implicit && Wave32)
      Out.erase(std::remove_if(Out.begin() + From, Out.end(),
                               [&](uint16_t U) {
                                 const RegUnitInfo &I = RM.unit(U);
                                 return I.Index == 1 &&
                                        (I.Class == RegClass::VCC ||
                                         I.Class == RegClass::EXEC);
                               }),
                Out.end());
  };
  auto NoteDef = [&](MCRegister Reg, bool Implicit) {
    RegClass C = RM.classOf(Reg);
    Units(Reg,
          C == RegClass::VGPR || C == RegClass::AGPR ? R.VectorDefs
                                                     : R.ScalarDefs,
          Implicit);
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
    // std::sort: llvm::sort hands plain integers to qsort, five times as
    // slow on these few.
    std::sort(V->begin(), V->end());
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
}

InsnRegs code::instructionRegs(const amdgpu::TargetMC &MC, const MCInst &MI,
                               bool Wave32) {
  return std::move(instructionRegs(MC, ArrayRef(MI), Wave32).front());
}

std::vector<InsnRegs> code::instructionRegs(const amdgpu::TargetMC &MC,
                                            ArrayRef<MCInst> MIs, bool Wave32) {
  const RegisterModel &RM = RegisterModel::get(MC.regInfo());
  const InsnKinds &K = InsnKinds::get(MC.instrInfo());
  std::vector<InsnRegs> Out(MIs.size());
  auto FetchInactive = [&](const MCInst &X) {
    return StringRef(MC.printInst(X, 0)).contains("fi:1");
  };
  const bool DSIgnoresM0 = MC.hasFeature("gfx9-insts");
  const function_ref<bool(const MCInst &)> FI =
      MC.hasFeature("gfx10-insts")
          ? function_ref<bool(const MCInst &)>(FetchInactive)
          : function_ref<bool(const MCInst &)>();
  for (size_t I = 0; I < MIs.size(); ++I)
    describe(MIs[I], MC.instrInfo(), K, RM, DSIgnoresM0, Wave32, FI, Out[I]);
  return Out;
}

static void addTo(Liveness::State &S, uint32_t Value, uint16_t Unit,
                  size_t Units) {
  for (auto &[V, Set] : S)
    if (V == Value) {
      Set.set(Unit);
      return;
    }
  S.push_back({Value, RegSet(Units)});
  S.back().second.set(Unit);
}

/// Adds \p Set to what \p Into needs under value \p V.
static void addSet(Liveness::State &Into, uint32_t V, const RegSet &Set) {
  for (auto &[V2, Set2] : Into)
    if (V2 == V) {
      Set2 |= Set;
      return;
    }
  Into.push_back({V, Set});
}

static void merge(Liveness::State &Into, const Liveness::State &From) {
  for (const auto &[V, Set] : From)
    addSet(Into, V, Set);
}

static void normalize(Liveness::State &S) {
  // Nothing is read under the empty mask.
  llvm::erase_if(S, [](const std::pair<uint32_t, RegSet> &P) {
    return P.first == NoLanes || P.second.none();
  });
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
  // Back along an edge that closes a loop, a need under a value the loop
  // makes is one under the previous iteration's value: other lanes.
  bool Back = BlockOrder[To] <= BlockOrder[From];
  bool Any = Back;
  for (auto &M : EdgeMap[To])
    Any |= std::get<0>(M) == From;
  if (!Any)
    return S;
  State R;
  RegSet Empty(AllTracked.size());
  for (const auto &[Id, Set] : S) {
    uint32_t To2 = Back ? outsideLoopOf(Id, To) : Id;
    for (auto &[P, J, Val] : EdgeMap[To])
      if (P == From && within(Id, J)) {
        To2 = Val;
        break;
      }
    addSet(R, To2, Set);
  }
  normalize(R);
  return R;
}

uint32_t Liveness::outsideLoopOf(uint32_t V, uint32_t B) const {
  while (V > NoLanes && !strictlyDominates(DomPre, DomPost, ExecSite[V], B))
    V = ExecParent[V];
  return V;
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
  // A need under the union this instruction makes is, before it, a need
  // under each of its two parts (e.g. the lanes that left a loop: those
  // that leave in this iteration and those that left before).
  if (int32_t UI = UnionAt[I]; UI >= 0) {
    auto [V, A, B] = Unions[UI];
    for (size_t K = 0; K < S.size(); ++K)
      if (S[K].first == V && S[K].second.any()) {
        RegSet Set = std::move(S[K].second);
        S[K].second = RegSet(Set.size());
        addSet(S, A, Set);
        addSet(S, B, Set);
        break;
      }
  }
  for (auto &[V, Set] : S) {
    for (uint16_t U : R.ScalarDefs)
      Set.reset(U);
    if (ExecConverged && within(V, E))
      for (uint16_t U : R.VectorDefs)
        Set.reset(U);
  }
  if (R.UsesAll || R.CallReadsAt >= 0) {
    addSet(S, AllLanes, R.UsesAll ? AllTracked : CallSets[R.CallReadsAt]);
  }
  for (uint16_t U : R.Uses) {
    // Scalar registers have no lanes: kept under every lane.
    bool Lanes = !R.CrossLane && ScalarClassOf[U] == 0;
    addTo(S, Lanes ? E : AllLanes, U, AllTracked.size());
  }
}

Liveness code::computeLiveness(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                               ArrayRef<uint8_t> Bytes, FunctionKind Kind,
                               bool Wave32) {
  return computeLiveness(MC, G, decodeInsns(MC, G.Insns, Bytes, G.Begin), Kind,
                         Wave32);
}

Liveness code::computeLiveness(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                               ArrayRef<MCInst> Decoded, FunctionKind Kind,
                               bool Wave32, CallReads *Calls) {
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
  L.Referenced = RM.emptySet();
  bool DSIgnoresM0 = MC.hasFeature("gfx9-insts");
  // gfx10+ DPP has a "fetch inactive" bit; LLVM prints it as "fi:1".
  auto FetchInactiveText = [&](const MCInst &MI) {
    return StringRef(MC.printInst(MI, 0)).contains("fi:1");
  };
  function_ref<bool(const MCInst &)> FetchInactive;
  if (MC.hasFeature("gfx10-insts"))
    FetchInactive = FetchInactiveText;
  for (size_t I = 0; I < N && I < Decoded.size(); ++I) {
    describe(Decoded[I], MC.instrInfo(), K, RM, DSIgnoresM0, Wave32,
             FetchInactive, L.Regs[I]);
    Exec[I] = execEffect(Decoded[I], MC.instrInfo(), K, RM);
    for (auto *V :
         {&L.Regs[I].Uses, &L.Regs[I].ScalarDefs, &L.Regs[I].VectorDefs})
      for (uint16_t U : *V)
        L.Referenced.set(U);
    Flow F = G.Insns[I].F;
    if (F == Flow::Call || F == Flow::IndirectCall)
      L.Regs[I].UsesAll = true;
  }
  // A call into a function whose reads are known reads only those.
  if (Calls)
    for (const CallSite &C : G.Calls) {
      if (!C.Target || C.Insn >= N)
        continue;
      std::optional<RegSet> Read = Calls->of(*C.Target);
      if (!Read)
        continue;
      L.Regs[C.Insn].UsesAll = false;
      L.Regs[C.Insn].CallReadsAt = int32_t(L.CallSets.size());
      L.CallSets.push_back(std::move(*Read));
    }

  // Forward: the EXEC value before each instruction.
  size_t NB = G.Blocks.size();
  ExecFlow XF = analyseExec(G, Exec);
  L.ExecConverged = XF.Converged;
  L.ExecBefore = std::move(XF.Before);
  L.ExecParent = std::move(XF.Parent);
  L.EdgeMap = std::move(XF.EdgeMap);
  L.ExecSite = std::move(XF.SiteBlock);
  L.BlockOrder = std::move(XF.Order);
  L.DomPre = std::move(XF.DomPre);
  L.DomPost = std::move(XF.DomPost);
  L.UnionAt.assign(N, -1);
  for (const std::array<uint32_t, 4> &U : XF.Unions)
    if (U[0] < N) {
      L.UnionAt[U[0]] = int32_t(L.Unions.size());
      L.Unions.push_back({U[1], U[2], U[3]});
    }
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
    normalize(S);
    if (S != InState[B]) {
      InState[B] = std::move(S);
      for (uint32_t P : Bl.Preds)
        if (!Queued[P]) {
          Queued[P] = true;
          Work.push_back(P);
        }
    }
  }
  for (uint32_t B = 0; B < NB; ++B) {
    L.LiveIn[B] = anyOf(InState[B], Empty);
    L.LiveOut[B] = anyOf(L.OutState[B], Empty);
  }
  return L;
}

RegSet Liveness::everLive() const {
  RegSet Out(AllTracked.size());
  for (uint32_t B = 0; B < G->Blocks.size(); ++B) {
    Out |= LiveOut[B];
    for (const RegSet &S : liveBefore(B))
      Out |= S;
  }
  return Out;
}

RegSet Liveness::liveBeforeInsn(uint32_t I) const {
  const uint32_t B = G->blockOf(I);
  const Block &Bl = G->Blocks[B];
  if (I == Bl.First)
    return LiveIn[B];
  State S = OutState[B];
  for (uint32_t J = Bl.End; J-- > I;)
    step(J, S);
  return anyOf(S, RegSet(AllTracked.size()));
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
