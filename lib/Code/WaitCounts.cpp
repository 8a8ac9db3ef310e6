//===- lib/Code/WaitCounts.cpp - Memory operations still in flight --------===//

#include "hotswap/Code/WaitCounts.h"

#include "hotswap/Code/Decode.h"

#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstrDesc.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"

#include <algorithm>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;
using amdgpu::Generation;

CounterSet CounterSet::of(Generation Gen) {
  CounterSet S;
  S.Gen = Gen;
  auto Set = [&](Counter C, uint8_t Max) { S.Max[unsigned(C)] = Max; };
  switch (Gen) {
  case Generation::GFX6:
  case Generation::GFX7:
  case Generation::GFX8:
    Set(Counter::Load, 15), Set(Counter::Exp, 7), Set(Counter::DS, 15);
    break;
  case Generation::GFX9:
    Set(Counter::Load, 63), Set(Counter::Exp, 7), Set(Counter::DS, 15);
    break;
  case Generation::GFX10:
  case Generation::GFX11:
    Set(Counter::Load, 63), Set(Counter::Store, 63), Set(Counter::Exp, 7);
    Set(Counter::DS, 63);
    break;
  case Generation::GFX12:
  case Generation::GFX125:
    Set(Counter::Load, 63), Set(Counter::Store, 63), Set(Counter::Sample, 63);
    Set(Counter::BVH, 7), Set(Counter::Exp, 7), Set(Counter::DS, 63);
    Set(Counter::KM, 31);
    break;
  }
  return S;
}

StringRef CounterSet::name(Counter C) const {
  bool Split = Gen >= Generation::GFX12;
  switch (C) {
  case Counter::Load:
    return Split ? "loadcnt" : "vmcnt";
  case Counter::Store:
    return Split ? "storecnt" : "vscnt";
  case Counter::Sample:
    return "samplecnt";
  case Counter::BVH:
    return "bvhcnt";
  case Counter::Exp:
    return "expcnt";
  case Counter::DS:
    return Split ? "dscnt" : "lgkmcnt";
  case Counter::KM:
    return "kmcnt";
  }
  return "?";
}

Counter CounterSet::route(Counter C) const {
  if (has(C))
    return C;
  return C == Counter::KM ? Counter::DS : Counter::Load;
}

//===-- Classifying instructions ------------------------------------------===//

/// The counts s_waitcnt's immediate names, per generation (the ISA guides'
/// S_WAITCNT fields).
static void decodeWaitcnt(const CounterSet &Set, uint64_t Imm, WaitEffect &E) {
  unsigned VM, Exp, LGKM;
  switch (Set.Gen) {
  case Generation::GFX6:
  case Generation::GFX7:
  case Generation::GFX8:
    VM = Imm & 0xf, Exp = (Imm >> 4) & 7, LGKM = (Imm >> 8) & 0xf;
    break;
  case Generation::GFX9:
    VM = (Imm & 0xf) | ((Imm >> 14) & 3) << 4;
    Exp = (Imm >> 4) & 7, LGKM = (Imm >> 8) & 0xf;
    break;
  case Generation::GFX10:
    VM = (Imm & 0xf) | ((Imm >> 14) & 3) << 4;
    Exp = (Imm >> 4) & 7, LGKM = (Imm >> 8) & 0x3f;
    break;
  case Generation::GFX11:
    Exp = Imm & 7, LGKM = (Imm >> 4) & 0x3f, VM = (Imm >> 10) & 0x3f;
    break;
  default:
    return; // gfx12 has no s_waitcnt
  }
  E.Waits.push_back({Counter::Load, uint8_t(VM)});
  E.Waits.push_back({Counter::Exp, uint8_t(Exp)});
  E.Waits.push_back({Counter::DS, uint8_t(LGKM)});
}

static uint8_t clampCount(int64_t V) {
  return uint8_t(std::clamp<int64_t>(V, 0, 255));
}

/// Waits: true when \p N names one (whatever it waits for).
static bool classifyWait(StringRef N, const MCInst &MI,
                         const MCRegisterInfo &MRI, const CounterSet &Set,
                         WaitEffect &E) {
  if (!N.starts_with("S_WAIT"))
    return false;
  auto Imm = [&](unsigned I) -> std::optional<int64_t> {
    if (I < MI.getNumOperands() && MI.getOperand(I).isImm())
      return MI.getOperand(I).getImm();
    return std::nullopt;
  };
  if (N == "S_WAITCNT") {
    if (auto V = Imm(0))
      decodeWaitcnt(Set, uint64_t(*V), E);
    return true;
  }
  // gfx10-11: s_waitcnt_vscnt null, N (a register other than null adds its
  // value: not known, so no wait is assumed).
  static const std::pair<StringRef, Counter> Single[] = {
      {"S_WAITCNT_VSCNT", Counter::Store},
      {"S_WAITCNT_VMCNT", Counter::Load},
      {"S_WAITCNT_EXPCNT", Counter::Exp},
      {"S_WAITCNT_LGKMCNT", Counter::DS}};
  for (auto &[Name, C] : Single)
    if (N == Name) {
      if (MI.getNumOperands() >= 2 && MI.getOperand(0).isReg() &&
          StringRef(MRI.getName(MI.getOperand(0).getReg()))
              .starts_with("SGPR_NULL"))
        if (auto V = Imm(1))
          E.Waits.push_back({C, clampCount(*V & 0xffff)});
      return true;
    }
  // gfx12.
  static const std::pair<StringRef, Counter> Split[] = {
      {"S_WAIT_LOADCNT", Counter::Load},
      {"S_WAIT_STORECNT", Counter::Store},
      {"S_WAIT_SAMPLECNT", Counter::Sample},
      {"S_WAIT_BVHCNT", Counter::BVH},
      {"S_WAIT_EXPCNT", Counter::Exp},
      {"S_WAIT_DSCNT", Counter::DS},
      {"S_WAIT_KMCNT", Counter::KM}};
  for (auto &[Name, C] : Split)
    if (N == Name) {
      if (auto V = Imm(0))
        E.Waits.push_back({C, clampCount(*V & 0xffff)});
      return true;
    }
  if (N == "S_WAIT_LOADCNT_DSCNT" || N == "S_WAIT_STORECNT_DSCNT") {
    if (auto V = Imm(0)) {
      E.Waits.push_back(
          {N == "S_WAIT_LOADCNT_DSCNT" ? Counter::Load : Counter::Store,
           uint8_t((*V >> 8) & 0x3f)});
      E.Waits.push_back({Counter::DS, uint8_t(*V & 0x3f)});
    }
    return true;
  }
  return true; // s_wait_alu, s_waitcnt_depctr, s_wait_event...: no counter
}

WaitEffect code::waitEffect(const amdgpu::TargetMC &MC, const MCInst &MI,
                            const CounterSet &Set) {
  WaitEffect E;
  const MCInstrInfo &MII = MC.instrInfo();
  const MCInstrDesc &D = MII.get(MI.getOpcode());
  const InsnKinds &K = InsnKinds::get(MII);
  StringRef N = K.baseName(MI.getOpcode());
  if (classifyWait(N, MI, MC.regInfo(), Set, E))
    return E;
  Flow F = K.flowOf(MI);
  if (F == Flow::Call || F == Flow::IndirectCall) {
    E.Clobbers = true;
    return E;
  }

  auto AddDests = [&] {
    const RegisterModel &RM = RegisterModel::get(MC.regInfo());
    RegSet S = RM.emptySet();
    for (unsigned I = 0; I < D.getNumDefs() && I < MI.getNumOperands(); ++I)
      if (MI.getOperand(I).isReg() && MI.getOperand(I).getReg().isValid())
        RM.addUnits(MI.getOperand(I).getReg(), S);
    for (unsigned U : S.set_bits())
      E.Dests.push_back(uint16_t(U));
  };
  auto Event = [&](Counter C, uint8_t Kind, bool Inexact) {
    E.Events.push_back({Set.route(C), Kind, Inexact});
  };
  bool PreGFX10 = Set.Gen < Generation::GFX10;
  bool Returns = D.getNumDefs() > 0;

  // LDS parameter and direct loads count on expcnt (gfx11: LDS_*, gfx12:
  // DS_*_LOAD with the LDSDIR encoding).
  if (N.contains("PARAM_LOAD") || N.contains("DIRECT_LOAD")) {
    Event(Counter::Exp, EvLDS, true);
    AddDests();
    return E;
  }
  if (N.starts_with("DS_")) {
    bool Global = N.contains("GWS") || N.contains("ORDERED_COUNT");
    Event(Counter::DS, EvLDS, Global);
    AddDests();
    return E;
  }
  bool Flat = N.starts_with("FLAT_");
  if (Flat || N.starts_with("GLOBAL_") || N.starts_with("SCRATCH_") ||
      N.starts_with("BUFFER_") || N.starts_with("TBUFFER_") ||
      N.starts_with("IMAGE_")) {
    if (Flat) // LDS: lgkmcnt/dscnt, out of order (see FlatMayAccessLDS)
      E.Events.push_back(
          {Set.route(Counter::DS), EvLDS, true, true, false, true});
    if (!Returns && !D.mayStore() && !D.mayLoad()) {
      // A cache writeback or invalidate: whether it counts, LLVM's
      // descriptions do not say. It may, in order, on vmcnt (and vscnt).
      E.Events.push_back({Counter::Load, EvVMemRead, false, true, true});
      if (Set.has(Counter::Store))
        E.Events.push_back({Counter::Store, EvVMemWrite, false, true, true});
      return E;
    }
    if (N.contains("LDS")) {
      // LDS DMA: a load whose result goes to LDS.
      Event(Counter::Load, EvVMemRead, true);
      return E;
    }
    if (Returns) {
      bool Sample =
          N.starts_with("IMAGE_SAMPLE") || N.starts_with("IMAGE_GATHER") ||
          N.starts_with("IMAGE_GET_LOD") || N.starts_with("IMAGE_MSAA");
      bool BVH = N.starts_with("IMAGE_BVH");
      if (PreGFX10)
        Event(Counter::Load, EvVMemRead, false);
      else if (Sample)
        Event(Counter::Sample, EvVMemSample, false);
      else if (BVH)
        Event(Counter::BVH, EvVMemBVH, false);
      else
        Event(Counter::Load, EvVMemRead, false);
      AddDests();
      return E;
    }
    // A store or an atomic without return.
    Event(Counter::Store, PreGFX10 ? EvVMemRead : EvVMemWrite, false);
    if (Set.Gen == Generation::GFX6)
      Event(Counter::Exp, EvExport, true); // the data VGPRs stay locked
    return E;
  }
  if (N == "EXP" || N.starts_with("EXP_")) {
    Event(Counter::Exp, EvExport, false);
    return E;
  }
  if (N.starts_with("S_SENDMSG")) {
    Event(Counter::KM, EvMessage, false);
    AddDests();
    return E;
  }
  if (N.starts_with("S_") &&
      (D.mayLoad() || D.mayStore() || N.starts_with("S_MEMTIME") ||
       N.starts_with("S_MEMREALTIME") || N.starts_with("S_DCACHE"))) {
    Event(Counter::KM, EvSMem, false);
    AddDests();
    return E;
  }
  if (D.mayLoad() || D.mayStore()) {
    // Memory of no known class: every counter, out of order.
    for (unsigned C = 0; C < NumCounters; ++C)
      if (Set.Max[C])
        E.Events.push_back({Counter(C), 0, true});
    AddDests();
  }
  return E;
}

//===-- States ------------------------------------------------------------===//

bool WaitState::idle() const {
  return llvm::all_of(C, [](const CounterState &S) { return S.Count == 0; });
}

std::optional<Counter> WaitState::pendingOn(unsigned U) const {
  for (unsigned I = 0; I < NumCounters; ++I) {
    if (C[I].AnyReg)
      return Counter(I);
    for (const PendingReg &P : C[I].Regs)
      if (P.Unit == U)
        return Counter(I);
  }
  return std::nullopt;
}

RegSet WaitState::inFlight(const RegisterModel &RM) const {
  RegSet S = RM.emptySet();
  for (const CounterState &CS : C) {
    if (CS.AnyReg)
      return RM.allTracked();
    for (const PendingReg &P : CS.Regs)
      S.set(P.Unit);
  }
  return S;
}

std::string WaitState::format(const CounterSet &Set,
                              const RegisterModel &RM) const {
  std::string Out;
  for (unsigned I = 0; I < NumCounters; ++I) {
    const CounterState &S = C[I];
    if (!Set.Max[I] || S.Count == 0)
      continue;
    if (!Out.empty())
      Out += "; ";
    Out += Set.name(Counter(I)).str();
    Out += S.Count > Set.Max[I] ? std::string(" unknown")
                                : "<=" + std::to_string(S.Count);
    if (S.outOfOrder())
      Out += " unordered";
    if (S.AnyReg) {
      Out += " any register";
    } else if (!S.Regs.empty()) {
      RegSet R = RM.emptySet();
      for (const PendingReg &P : S.Regs)
        R.set(P.Unit);
      Out += " " + RM.format(R);
    }
  }
  return Out.empty() ? "none" : Out;
}

static void unknownState(const CounterSet &Set, WaitState &S) {
  for (unsigned I = 0; I < NumCounters; ++I) {
    CounterState &C = S.C[I];
    C = CounterState();
    if (!Set.Max[I])
      continue;
    C.Count = Set.Max[I] + 1;
    C.Inexact = C.AnyReg = true;
  }
}

static void waitFor(CounterState &S, uint8_t N) {
  S.Count = std::min(S.Count, N);
  if (S.Count == 0) {
    S = CounterState();
    return;
  }
  if (S.outOfOrder())
    return;
  llvm::erase_if(S.Regs, [&](const PendingReg &P) { return P.Dist >= N; });
}

static void issue(CounterState &S, uint8_t Max, const WaitEffect::Event &Ev,
                  ArrayRef<uint16_t> Dests) {
  S.Count = std::min<unsigned>(S.Count + 1, Max + 1u);
  S.Kinds |= Ev.Kind;
  S.Inexact |= Ev.Inexact || Ev.Kind == 0;
  if (Ev.Maybe)
    return; // distances stay lower bounds
  for (PendingReg &P : S.Regs)
    P.Dist = P.Dist == 255 ? 255 : P.Dist + 1;
  for (uint16_t U : Dests) {
    auto It = llvm::lower_bound(
        S.Regs, U, [](const PendingReg &P, uint16_t U) { return P.Unit < U; });
    if (It != S.Regs.end() && It->Unit == U)
      It->Dist = 0;
    else
      S.Regs.insert(It, PendingReg{U, 0});
  }
}

/// \p Into becomes the join of itself and \p From.
static void join(CounterState &Into, const CounterState &From) {
  Into.Count = std::max(Into.Count, From.Count);
  Into.Kinds |= From.Kinds;
  Into.Inexact |= From.Inexact;
  Into.AnyReg |= From.AnyReg;
  SmallVector<PendingReg, 4> Out;
  auto A = Into.Regs.begin(), AE = Into.Regs.end();
  auto B = From.Regs.begin(), BE = From.Regs.end();
  while (A != AE || B != BE) {
    if (B == BE || (A != AE && A->Unit < B->Unit))
      Out.push_back(*A++);
    else if (A == AE || B->Unit < A->Unit)
      Out.push_back(*B++);
    else
      Out.push_back({A->Unit, std::min(A->Dist, B->Dist)}), ++A, ++B;
  }
  Into.Regs = std::move(Out);
}

void WaitCounts::step(uint32_t I, WaitState &S) const {
  const WaitEffect *E = effect(I);
  if (!E)
    return;
  for (auto &[C, N] : E->Waits)
    if (Set.has(C))
      waitFor(S.C[unsigned(C)], N);
  for (const WaitEffect::Event &Ev : E->Events)
    if (!Ev.FlatLDS || Set.FlatMayAccessLDS)
      issue(S.C[unsigned(Ev.C)], Set.Max[unsigned(Ev.C)], Ev,
            Ev.NoDests ? ArrayRef<uint16_t>() : ArrayRef<uint16_t>(E->Dests));
  if (E->Clobbers)
    unknownState(Set, S);
}

WaitState WaitCounts::stateBefore(uint32_t I) const {
  const uint32_t B = G->blockOf(I);
  WaitState S = In[B];
  for (uint32_t J = G->Blocks[B].First; J < I; ++J)
    step(J, S);
  return S;
}

std::vector<WaitState> WaitCounts::statesBefore(uint32_t B) const {
  const Block &Bl = G->Blocks[B];
  std::vector<WaitState> Out;
  Out.reserve(Bl.End - Bl.First);
  WaitState S = In[B];
  for (uint32_t I = Bl.First; I < Bl.End; ++I) {
    Out.push_back(S);
    step(I, S);
  }
  return Out;
}

WaitCounts code::computeWaitCounts(const amdgpu::TargetMC &MC,
                                   const FunctionCFG &G,
                                   ArrayRef<uint8_t> Bytes, FunctionKind Kind,
                                   Generation Gen, bool FlatMayAccessLDS) {
  return computeWaitCounts(MC, G, decodeInsns(MC, G.Insns, Bytes, G.Begin),
                           Kind, Gen, FlatMayAccessLDS);
}

WaitCounts code::computeWaitCounts(const amdgpu::TargetMC &MC,
                                   const FunctionCFG &G,
                                   ArrayRef<MCInst> Decoded, FunctionKind Kind,
                                   Generation Gen, bool FlatMayAccessLDS) {
  WaitCounts W;
  W.Set = CounterSet::of(Gen);
  W.Set.FlatMayAccessLDS = FlatMayAccessLDS;
  const InsnKinds &K = InsnKinds::get(MC.instrInfo());
  W.G = &G;
  W.EffectOf.assign(G.Insns.size(), UINT32_MAX);
  for (uint32_t I = 0; I < G.Insns.size() && I < Decoded.size(); ++I) {
    W.HasFlat |= K.baseName(G.Insns[I].Opcode).starts_with("FLAT_");
    WaitEffect E = waitEffect(MC, Decoded[I], W.Set);
    if (E.empty())
      continue;
    W.EffectOf[I] = W.Effects.size();
    W.Effects.push_back(std::move(E));
  }
  W.Kind = Kind;
  W.solve();
  return W;
}

WaitCounts WaitCounts::assumingFlatGlobal() const {
  WaitCounts W = *this;
  W.Set.FlatMayAccessLDS = false;
  W.solve();
  return W;
}

void WaitCounts::solve() {
  WaitCounts &W = *this;
  const FunctionCFG &G = *this->G;
  Converged = true;
  size_t NB = G.Blocks.size();
  WaitState Unknown;
  unknownState(W.Set, Unknown);
  W.In.assign(NB, WaitState());
  std::vector<bool> Seen(NB, false);
  std::vector<uint32_t> Work;
  // Alignment padding (unreachable s_nop runs) never runs: it gives its
  // successor (a loop header) nothing, where other unreachable code might
  // be reached in ways the graph does not see and starts unknown.
  for (uint32_t B = 0; B < NB; ++B)
    if (B == 0 || (!G.Blocks[B].Reachable && !G.Blocks[B].Padding)) {
      if (B != 0 || Kind != FunctionKind::Kernel)
        W.In[B] = Unknown;
      Seen[B] = true;
      Work.push_back(B);
    }
  std::vector<bool> InWork(NB, false);
  for (uint32_t B : Work)
    InWork[B] = true;
  // States only grow (counts saturate, distances only shrink at joins); the
  // budget keeps a pathological graph from running long: past it every
  // block starts unknown.
  uint64_t Budget = 64 * (uint64_t(NB) + G.Insns.size()) + 4096;
  while (!Work.empty()) {
    if (Budget-- == 0) {
      W.Converged = false;
      std::fill(W.In.begin(), W.In.end(), Unknown);
      if (NB && Kind == FunctionKind::Kernel)
        W.In[0] = WaitState();
      break;
    }
    uint32_t B = Work.back();
    Work.pop_back();
    InWork[B] = false;
    WaitState S = W.In[B];
    for (uint32_t I = G.Blocks[B].First; I < G.Blocks[B].End; ++I)
      W.step(I, S);
    for (const Edge &E : G.Blocks[B].Succs) {
      WaitState &T = W.In[E.To];
      bool Changed = !Seen[E.To];
      if (!Seen[E.To]) {
        T = S;
        Seen[E.To] = true;
      } else {
        WaitState Old = T;
        for (unsigned C = 0; C < NumCounters; ++C)
          join(T.C[C], S.C[C]);
        Changed = T != Old;
      }
      if (Changed && !InWork[E.To]) {
        Work.push_back(E.To);
        InWork[E.To] = true;
      }
    }
  }
}
