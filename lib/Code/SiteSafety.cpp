//===- lib/Code/SiteSafety.cpp - Code inserted at one instruction ---------===//

#include "hotswap/Code/SiteSafety.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/MC/MCInst.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

StringRef code::siteWhereName(SiteWhere W) {
  switch (W) {
  case SiteWhere::Before:
    return "before";
  case SiteWhere::After:
    return "after";
  case SiteWhere::Replace:
    return "replace";
  }
  return "?";
}

std::optional<SiteWhere> code::parseSiteWhere(StringRef S) {
  return StringSwitch<std::optional<SiteWhere>>(S)
      .Case("before", SiteWhere::Before)
      .Case("after", SiteWhere::After)
      .Case("replace", SiteWhere::Replace)
      .Default(std::nullopt);
}

std::string code::siteRefusal(const FunctionCFG &G, uint32_t I, SiteWhere W) {
  if (I >= G.Insns.size())
    return "no such instruction";
  const Insn &In = G.Insns[I];
  switch (W) {
  case SiteWhere::Before:
    if (!G.mayInsertAt(In.Addr))
      return "code may not be inserted before it (an s_clause window or "
             "the kernarg preload header)";
    return "";
  case SiteWhere::Replace:
    if (In.F != Flow::Next || In.Target)
      return "it changes control flow (" + flowName(In.F).str() +
             "): it cannot be replaced";
    if (!G.mayInsertAt(In.Addr))
      return "it is inside an s_clause window or the kernarg preload header";
    return "";
  case SiteWhere::After: {
    if (In.F != Flow::Next)
      return "control does not always go on to the next instruction after "
             "it (" +
             flowName(In.F).str() + ")";
    if (I + 1 >= G.Insns.size())
      return "it is the last instruction";
    const Block &B = G.Blocks[G.blockOf(I + 1)];
    if (B.First == I + 1)
      return "other paths join at the next instruction (insert before it "
             "instead)";
    if (!G.mayInsertAt(G.Insns[I + 1].Addr))
      return "code may not be inserted after it (an s_clause window or the "
             "kernarg preload header)";
    return "";
  }
  }
  return "unknown placement";
}

SiteRegisters code::siteRegisters(const RegisterModel &RM, const FunctionCFG &G,
                                  const Liveness &L, const WaitCounts &WC,
                                  uint32_t I, SiteWhere W,
                                  RegisterLimits Limits) {
  RegSet Live = RM.emptySet();
  uint32_t Seam = W == SiteWhere::After ? I + 1 : I;
  if (W == SiteWhere::Replace) {
    // What is live once the instruction has run.
    uint32_t B = G.blockOf(I);
    Live = I + 1 < G.Blocks[B].End ? L.liveBeforeInsn(I + 1) : L.LiveOut[B];
  } else {
    Live = L.liveBeforeInsn(Seam);
  }
  return seamRegisters(RM, Live, WC.stateBefore(Seam).inFlight(RM), L.regs(I),
                       W, outsideLimits(RM, Limits));
}

RegSet code::outsideLimits(const RegisterModel &RM, RegisterLimits Limits) {
  RegSet Outside = RM.emptySet();
  RM.addSGPRs(Limits.SGPRs, 1024 - std::min(Limits.SGPRs, 1024u), Outside);
  RM.addVGPRs(Limits.VGPRs, 1024 - std::min(Limits.VGPRs, 1024u), Outside);
  RM.addClass(RegClass::AGPR, Outside);
  return Outside;
}

SiteRegisters code::seamRegisters(const RegisterModel &RM, const RegSet &Live,
                                  RegSet InFlight, const InsnRegs &Own,
                                  SiteWhere W, const RegSet &Outside) {
  SiteRegisters R;
  R.Writable = RM.allTracked();
  R.Writable.reset(Live);
  R.Writable.reset(InFlight);
  R.Writable.reset(Outside);
  RegSet Its = RM.emptySet();
  for (auto *V : {&Own.Uses, &Own.ScalarDefs, &Own.VectorDefs})
    for (uint16_t U : *V)
      Its.set(U);
  if (W == SiteWhere::Replace)
    for (auto *V : {&Own.ScalarDefs, &Own.VectorDefs})
      for (uint16_t U : *V)
        R.Writable.set(U);
  R.Scratch = R.Writable;
  R.Scratch.reset(Its);
  R.InFlight = std::move(InFlight);
  return R;
}

LiveBound::LiveBound(const RegisterModel &RM, const FunctionCFG &G,
                     std::vector<InsnRegs> Regs)
    : RM(RM), G(G), Regs(std::move(Regs)), Named(RM.emptySet()) {
  for (const InsnRegs &R : this->Regs)
    for (auto *V : {&R.Uses, &R.ScalarDefs, &R.VectorDefs})
      for (uint16_t U : *V)
        Named.set(U);
  // Exits that keep registers live (a return, a tail call, an unresolved
  // jump, a trap, code that runs off) and calls (they read what they like)
  // make registers the function never names live.
  Holds = G.Calls.empty() && this->Regs.size() == G.Insns.size();
  for (const Block &B : G.Blocks)
    Holds &= B.Exit == BlockExit::None || B.Exit == BlockExit::EndProgram;
  for (const InsnRegs &R : this->Regs)
    Holds &= !R.UsesAll && R.CallReadsAt < 0;
}

RegSet LiveBound::at(uint32_t I, SiteWhere W) const {
  assert(Holds && "no bound without liveness here");
  RegSet Live = Named;
  const uint32_t B = G.blockOf(I);
  // A scalar register the rest of the block writes before it reads it is
  // dead at the seam: one path leads on from there to the block's end. The
  // first use or write of each unit from the seam on decides; an
  // instruction reads before it writes.
  RegSet Decided = RM.emptySet();
  for (uint32_t J = W == SiteWhere::Before ? I : I + 1; J < G.Blocks[B].End;
       ++J) {
    for (uint16_t U : Regs[J].Uses)
      Decided.set(U);
    for (uint16_t U : Regs[J].ScalarDefs) {
      if (!Decided.test(U))
        Live.reset(U);
      Decided.set(U);
    }
  }
  return Live;
}

namespace {
/// checkBody's walk over the body, one instruction at a time: control
/// flow and PC reads, registers a load still writes, registers written
/// and given back (or not), and the memory operations not waited for.
class BodyChecker {
public:
  BodyChecker(const amdgpu::TargetMC &MC, bool Wave32, const CounterSet &Set,
              const RegSet &Writable, const RegSet &InFlight, bool MayReadPC,
              bool StoresMayStay)
      : MC(MC), Wave32(Wave32), Set(Set), Writable(Writable),
        InFlight(InFlight), MayReadPC(MayReadPC), StoresMayStay(StoresMayStay),
        RM(RegisterModel::get(MC.regInfo())), K(InsnKinds::get(MC.instrInfo())),
        Displaced(RM.emptySet()), DisplacedBy(RM.numUnits(), 0) {
    PendingRegs.fill(RM.emptySet());
  }

  std::vector<BodyProblem> run(ArrayRef<uint8_t> Body) {
    DecodedRange DR =
        decodeRange(MC, Body, 0, [&](const Insn &I, const MCInst &M) {
          Insns.push_back({I, M});
        });
    if (DR.Stop) {
      Out.push_back({std::nullopt, DR.Stop->Addr,
                     "the bytes at +" + hex(DR.Stop->Addr) +
                         " are not an instruction: " + DR.Stop->Reason});
      return std::move(Out);
    }
    if (Insns.empty()) {
      Out.push_back({std::nullopt, 0, "it holds no instruction"});
      return std::move(Out);
    }
    for (uint32_t J = 0; J < Insns.size(); ++J)
      step(J);
    reportDisplaced();
    llvm::stable_sort(Out, [](const BodyProblem &A, const BodyProblem &B) {
      return A.Insn.value_or(~0u) < B.Insn.value_or(~0u);
    });
    for (unsigned C = 0; C < NumCounters; ++C)
      if (Pending[C] && (!StoresMayStay || PendingWrites[C]))
        Out.push_back({*Pending[C], Insns[*Pending[C]].first.Addr,
                       "the memory operation is not waited for "
                       "(" +
                           Set.name(Counter(C)).str() +
                           "(0)) before the inserted code ends"});
    return std::move(Out);
  }

private:
  const amdgpu::TargetMC &MC;
  const bool Wave32;
  const CounterSet &Set;
  const RegSet &Writable, &InFlight;
  const bool MayReadPC, StoresMayStay;
  const RegisterModel &RM;
  const InsnKinds &K;
  std::vector<std::pair<Insn, MCInst>> Insns;
  std::vector<BodyProblem> Out;
  // Counters an operation of the body counts on and no wait of the body
  // has brought to 0 since, with the instruction that last counted.
  std::array<std::optional<uint32_t>, NumCounters> Pending{};
  // Whether one of them writes a register (a load, an atomic that returns).
  std::array<bool, NumCounters> PendingWrites{};
  // The registers those operations still write, per counter.
  std::array<RegSet, NumCounters> PendingRegs;
  // A register the site does not give may still be written when the body
  // gives its value back before it ends: saved by `s_mov D, R` (R not
  // written yet by the body) and restored by `s_mov R, D` (D not written
  // since): EXEC, set to one lane around a memory operation. Units written
  // and not restored yet, with the instruction that first wrote them, and
  // the copies (D, R) that still hold R's value at the seam.
  RegSet Displaced;
  std::vector<uint32_t> DisplacedBy;
  struct SavedCopy {
    MCRegister Copy, Of;
    RegSet CopyUnits;
  };
  std::vector<SavedCopy> Saved;

  RegSet units(MCRegister Reg) const {
    RegSet S = RM.emptySet();
    RM.addUnits(Reg, S);
    return S;
  }
  std::string mnemonic(uint32_t J) const {
    std::string Text = MC.printInst(Insns[J].second, Insns[J].first.Addr);
    return StringRef(Text).trim().split(' ').first.str();
  }

  void step(uint32_t J) {
    const auto &[In, MI] = Insns[J];
    if (In.F != Flow::Next) {
      Out.push_back({J, In.Addr,
                     mnemonic(J) + " is a " + flowName(In.F).str() +
                         " instruction: inserted code must run "
                         "straight through"});
      return;
    }
    if (!MayReadPC && K.baseName(MI.getOpcode()).starts_with("S_GETPC")) {
      Out.push_back({J, In.Addr, mnemonic(J) + " reads the PC"});
      return;
    }
    InsnRegs R = instructionRegs(MC, MI, Wave32);
    checkRacing(J, R);
    RegSet Defs = RM.emptySet();
    for (auto *V : {&R.ScalarDefs, &R.VectorDefs})
      for (uint16_t U : *V)
        Defs.set(U);
    trackWrites(J, Defs);
    trackWaits(J);
  }

  /// A register a load still writes: the guest's (in flight at the seam)
  /// or the body's own, not waited for yet.
  void checkRacing(uint32_t J, const InsnRegs &R) {
    RegSet Racing = RM.emptySet();
    for (auto *V : {&R.Uses, &R.ScalarDefs, &R.VectorDefs})
      for (uint16_t U : *V) {
        bool Own = false;
        for (const RegSet &P : PendingRegs)
          Own |= P.test(U);
        if (Own || InFlight.test(U))
          Racing.set(U);
      }
    if (Racing.any())
      Out.push_back({J, Insns[J].first.Addr,
                     mnemonic(J) + " reads or writes " + RM.format(Racing) +
                         " while a load still writes it (wait for it "
                         "first)"});
  }

  /// Registers \p Defs written by instruction \p J: given back by a move
  /// from a saved copy, else displaced unless the site gives them.
  void trackWrites(uint32_t J, const RegSet &Defs) {
    const MCInst &MI = Insns[J].second;
    // A move between two registers saves or restores.
    std::optional<std::pair<MCRegister, MCRegister>> Move;
    StringRef Base = K.baseName(MI.getOpcode());
    if ((Base.starts_with("S_MOV_B32") || Base.starts_with("S_MOV_B64")) &&
        MI.getNumOperands() >= 2 && MI.getOperand(0).isReg() &&
        MI.getOperand(1).isReg() && MI.getOperand(0).getReg() &&
        MI.getOperand(1).getReg())
      Move.emplace(MI.getOperand(0).getReg(), MI.getOperand(1).getReg());
    bool Restores = false;
    if (Move)
      for (const SavedCopy &C : Saved)
        if (C.Copy == Move->second && C.Of == Move->first)
          Restores = true;
    for (auto It = Saved.begin(); It != Saved.end();)
      It = It->CopyUnits.anyCommon(Defs) ? Saved.erase(It) : It + 1;
    if (Restores) {
      Displaced.reset(Defs);
      return;
    }
    for (unsigned U : Defs.set_bits())
      if (!Writable.test(U) && !Displaced.test(U)) {
        Displaced.set(U);
        DisplacedBy[U] = J;
      }
    if (Move && !units(Move->second).anyCommon(Displaced))
      Saved.push_back({Move->first, Move->second, units(Move->first)});
  }

  /// The counters instruction \p J waits for and counts on.
  void trackWaits(uint32_t J) {
    WaitEffect E = waitEffect(MC, Insns[J].second, Set);
    if (E.Clobbers)
      Out.push_back({J, Insns[J].first.Addr,
                     mnemonic(J) + " leaves anything outstanding"});
    for (const auto &[C, N] : E.Waits)
      if (N == 0) {
        Pending[unsigned(C)].reset();
        PendingWrites[unsigned(C)] = false;
        PendingRegs[unsigned(C)].reset();
      }
    for (const WaitEffect::Event &Ev : E.Events) {
      Pending[unsigned(Ev.C)] = J;
      PendingWrites[unsigned(Ev.C)] |= !Ev.NoDests && !E.Dests.empty();
      if (!Ev.NoDests)
        for (uint16_t U : E.Dests)
          PendingRegs[unsigned(Ev.C)].set(U);
    }
  }

  /// What the body wrote and did not give back, by the instruction that
  /// first wrote it.
  void reportDisplaced() {
    for (uint32_t J = 0; J < Insns.size() && Displaced.any(); ++J) {
      RegSet Bad = RM.emptySet();
      for (unsigned U : Displaced.set_bits())
        if (DisplacedBy[U] == J)
          Bad.set(U);
      if (Bad.none())
        continue;
      Displaced.reset(Bad);
      Out.push_back({J, Insns[J].first.Addr,
                     mnemonic(J) + " writes " + RM.format(Bad) +
                         ", which the site does not give (live, written "
                         "by a load in flight, or outside the "
                         "kernel's allocation)"});
    }
  }
};
} // namespace

std::vector<BodyProblem>
code::checkBody(const amdgpu::TargetMC &MC, ArrayRef<uint8_t> Body, bool Wave32,
                const CounterSet &Set, const RegSet &Writable,
                const RegSet &InFlight, bool MayReadPC, bool StoresMayStay) {
  return BodyChecker(MC, Wave32, Set, Writable, InFlight, MayReadPC,
                     StoresMayStay)
      .run(Body);
}
