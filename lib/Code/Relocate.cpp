//===- lib/Code/Relocate.cpp - A function's code at another address
//---------===//

#include "hotswap/Code/Relocate.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Code/PCRelative.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstrDesc.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MathExtras.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

std::optional<uint64_t> Relocated::image(const FunctionCFG &G,
                                         uint64_t Addr) const {
  std::optional<uint32_t> I = G.insnAt(Addr);
  if (!I || *I >= LandAddr.size())
    return std::nullopt;
  return LandAddr[*I];
}

std::vector<std::pair<uint64_t, uint64_t>> Relocated::insertedRanges() const {
  std::vector<std::pair<uint64_t, uint64_t>> Out;
  for (size_t I = 0; I < LandAddr.size(); ++I) {
    uint64_t End = I < InsnAddr.size() ? InsnAddr[I] : Base + Bytes.size();
    if (LandAddr[I] != End)
      Out.push_back({LandAddr[I], End});
  }
  return Out;
}

std::optional<uint64_t> code::imageOf(const FunctionCFG &G,
                                      ArrayRef<uint64_t> Land, uint64_t T) {
  if (T < G.Begin || T >= G.End)
    return T;
  if (std::optional<uint32_t> I = G.insnAt(T))
    return Land[*I];
  return std::nullopt;
}

namespace {
/// What the relocator changes in one instruction.
struct Edit {
  enum Kind : uint8_t { None, Branch, PCLow, PCHigh, PC64 } K = None;
  uint32_t Idiom = 0;
};

RelocationResult refuse(StringRef Kind, const Twine &Message) {
  RelocationResult R;
  R.Refusal = {Kind.str(), Message.str()};
  return R;
}
} // namespace

namespace {
using Refused = std::optional<RelocationResult>;

/// relocate's state and its steps: the insertions and replacements
/// checked, the edits planned (branches, PC-relative adds) and checked to
/// re-encode, then the layout settled round by round (an edit may change
/// an instruction's size, a branch out of reach is relaxed), then the
/// bytes.
class Relocator {
public:
  Relocator(const amdgpu::TargetMC &MC, const FunctionCFG &G,
            ArrayRef<MCInst> Decoded, ArrayRef<uint8_t> Bytes, uint64_t NewBase,
            ArrayRef<Insertion> Inserts, const LongJumpScratch &Scratch)
      : MC(MC), G(G), Decoded(Decoded), Bytes(Bytes), NewBase(NewBase),
        Inserts(Inserts), Scratch(Scratch), N(G.Insns.size()),
        Kinds(InsnKinds::get(MC.instrInfo())) {}

  RelocationResult run() {
    if (Refused Why = checkInput())
      return std::move(*Why);
    Scan = findPCRelative(MC, G, Decoded);
    if (!Scan.Unknown.empty())
      return refuse("unknown PC use", Scan.Unknown.front().Message);
    if (Refused Why = markReplaced())
      return std::move(*Why);
    planEdits();
    if (Refused Why = checkReencodes())
      return std::move(*Why);
    Sizes.resize(N);
    for (size_t I = 0; I < N; ++I)
      Sizes[I] = Replaced[I] ? 0 : G.Insns[I].Size;
    R.Base = NewBase;
    Land.resize(N + 1);
    Encoded.resize(N);
    Relax.resize(N);
    Extra.resize(N);
    RelaxCode.resize(N);
    for (unsigned Round = 0; Round != 64; ++Round) {
      layOut();
      bool Changed = false;
      R.BranchesEncoded = R.PCRelAdjusted = R.BranchesRelaxed = 0;
      for (size_t I = 0; I < N; ++I)
        if (Edits[I].K != Edit::None)
          if (Refused Why = encodeEdit(I, Changed))
            return std::move(*Why);
      if (!Changed)
        return emit();
    }
    return refuse("does not re-encode",
                  "the layout does not settle after 64 rounds");
  }

private:
  const amdgpu::TargetMC &MC;
  const FunctionCFG &G;
  ArrayRef<MCInst> Decoded;
  ArrayRef<uint8_t> Bytes;
  const uint64_t NewBase;
  ArrayRef<Insertion> Inserts;
  const LongJumpScratch &Scratch;
  const size_t N;
  const InsnKinds &Kinds;
  PCRelScan Scan;
  std::vector<bool> Replaced;
  std::vector<Edit> Edits;
  /// Each instruction's size in the copy (0: replaced).
  std::vector<uint64_t> Sizes;
  Relocated R;
  /// Where control that reached instruction I lands in the copy (and N:
  /// the end).
  std::vector<uint64_t> Land;
  std::vector<std::vector<uint8_t>> Encoded;
  // Relaxed branches: the registers of each one's long jump, and the
  // bytes after it (sizes fixed once relaxed; the code is made anew each
  // round, for the addresses of that round).
  std::vector<std::optional<LongJumpRegs>> Relax;
  std::vector<uint64_t> Extra;
  std::vector<std::vector<uint8_t>> RelaxCode;

  ArrayRef<uint8_t> original(size_t I) const {
    return Bytes.slice(G.Insns[I].Addr - G.Begin, G.Insns[I].Size);
  }

  /// The graph is whole and the insertions are sorted, allowed where they
  /// go, and well-formed.
  Refused checkInput() const {
    for (const CodeFinding &F : G.Findings)
      if (F.Blocking)
        return refuse("blocking finding", F.Message);
    if (Decoded.size() != N)
      return refuse("blocking finding", "the instructions were not decoded");
    if (N == 0)
      return refuse("blocking finding", "the function has no instructions");
    for (size_t I = 0; I < Inserts.size(); ++I)
      if (Refused Why = checkInsertion(I))
        return Why;
    return std::nullopt;
  }

  Refused checkInsertion(size_t I) const {
    const Insertion &In = Inserts[I];
    if (In.Before > N || (I && Inserts[I - 1].Before > In.Before))
      return refuse("insertion in a window",
                    "insertions are not sorted by instruction");
    if (In.Before < N && !G.mayInsertAt(G.Insns[In.Before].Addr))
      return refuse("insertion in a window",
                    "code may not be inserted before " +
                        hex(G.Insns[In.Before].Addr));
    if (In.FallThrough) {
      const Flow Prev =
          In.Before && In.Before < N ? G.Insns[In.Before - 1].F : Flow::Jump;
      if (In.Replace || In.Bytes.empty() ||
          (Prev != Flow::Next && Prev != Flow::CondJump && Prev != Flow::Call &&
           Prev != Flow::IndirectCall))
        return refuse("insertion in a window",
                      "code on the way into the instruction at " +
                          hex(In.Before < N ? G.Insns[In.Before].Addr : G.End) +
                          " needs one before it that falls through");
    }
    if (In.Replace &&
        (In.Before >= N || In.Bytes.empty() ||
         (I + 1 < Inserts.size() && Inserts[I + 1].Before == In.Before)))
      return refuse("insertion in a window",
                    "a replacement must be the last, non-empty insertion at "
                    "an instruction");
    return std::nullopt;
  }

  /// Only straight-line instructions outside PC-relative idioms are
  /// replaced.
  Refused markReplaced() {
    Replaced.assign(N, false);
    for (const Insertion &In : Inserts)
      if (In.Replace) {
        const Insn &I = G.Insns[In.Before];
        if (I.F != Flow::Next || I.Target)
          return refuse("replaces control flow",
                        "the " + flowName(I.F) + " instruction at " +
                            hex(I.Addr) + " cannot be replaced");
        Replaced[In.Before] = true;
      }
    for (const PCRelIdiom &P : Scan.Idioms)
      for (uint32_t I : {P.GetPC, P.AddLo, P.AddHi})
        if (Replaced[I])
          return refuse("replaces control flow",
                        "the instruction at " + hex(G.Insns[I].Addr) +
                            " is part of a PC-relative address");
    return std::nullopt;
  }

  void planEdits() {
    Edits.assign(N, Edit());
    for (size_t I = 0; I < N; ++I) {
      Flow F = G.Insns[I].F;
      if (G.Insns[I].Target &&
          (F == Flow::Jump || F == Flow::CondJump || F == Flow::Call))
        Edits[I].K = Edit::Branch;
    }
    for (uint32_t P = 0; P < Scan.Idioms.size(); ++P) {
      Edits[Scan.Idioms[P].AddLo] = {Edit::PCLow, P};
      Edits[Scan.Idioms[P].AddHi] = {Edit::PCHigh, P};
      if (Scan.Idioms[P].AddLo == Scan.Idioms[P].AddHi)
        Edits[Scan.Idioms[P].AddLo] = {Edit::PC64, P};
    }
  }

  /// The encoder must give back what it is asked to change before it
  /// changes anything.
  Refused checkReencodes() const {
    for (size_t I = 0; I < N; ++I) {
      if (Edits[I].K == Edit::None)
        continue;
      Expected<std::vector<uint8_t>> E = MC.encode(Decoded[I]);
      if (!E || ArrayRef<uint8_t>(*E) != original(I)) {
        std::string Why = E ? "other bytes" : toString(E.takeError());
        return refuse("does not re-encode",
                      "LLVM MC encodes " +
                          MC.printInst(Decoded[I], G.Insns[I].Addr) + " at " +
                          hex(G.Insns[I].Addr) + " to " + Why);
      }
    }
    return std::nullopt;
  }

  /// This round's addresses: code on the fall-through way in first, then
  /// where control lands, then the instruction (and its long jump).
  void layOut() {
    R.InsnAddr.assign(N, 0);
    uint64_t At = NewBase;
    size_t NextInsert = 0;
    for (size_t I = 0; I <= N; ++I) {
      for (size_t K = NextInsert; K < Inserts.size() && Inserts[K].Before == I;
           ++K)
        if (Inserts[K].FallThrough)
          At += Inserts[K].Bytes.size();
      Land[I] = At;
      for (; NextInsert < Inserts.size() && Inserts[NextInsert].Before == I;
           ++NextInsert)
        if (!Inserts[NextInsert].FallThrough)
          At += Inserts[NextInsert].Bytes.size();
      if (I < N) {
        R.InsnAddr[I] = At;
        At += Sizes[I] + Extra[I];
      }
    }
  }

  std::optional<uint64_t> imageOf(uint64_t T) const {
    return code::imageOf(G, Land, T);
  }

  /// Instruction \p I encoded for this round's layout; \p Changed when its
  /// size (or a relaxation) changed the layout.
  Refused encodeEdit(size_t I, bool &Changed) {
    MCInst MI = Decoded[I];
    const Insn &In = G.Insns[I];
    Refused Why = Edits[I].K == Edit::Branch ? encodeBranch(I, MI, Changed)
                                             : encodePCRelative(I, MI);
    if (Why)
      return Why;
    Expected<std::vector<uint8_t>> Enc = MC.encode(MI);
    if (!Enc)
      return refuse("does not re-encode",
                    "LLVM MC cannot encode the new form of " +
                        MC.printInst(Decoded[I], In.Addr) + " at " +
                        hex(In.Addr) + ": " + toString(Enc.takeError()));
    if (Enc->size() != Sizes[I]) {
      Sizes[I] = Enc->size();
      Changed = true;
    }
    Encoded[I] = std::move(*Enc);
    return std::nullopt;
  }

  /// A branch's distance in the copy, relaxed to a long jump when it does
  /// not reach and the client names registers at its target.
  Refused encodeBranch(size_t I, MCInst &MI, bool &Changed) {
    const Insn &In = G.Insns[I];
    std::optional<uint64_t> T = imageOf(*In.Target);
    if (!T)
      return refuse("blocking finding", "the branch at " + hex(In.Addr) +
                                            " lands inside an instruction");
    const uint64_t After = R.InsnAddr[I] + Sizes[I];
    const bool Conditional = In.F == Flow::CondJump;
    int64_t Dist = static_cast<int64_t>(*T - After);
    bool InBytes = false;
    std::optional<unsigned> Offset = Kinds.offsetOperand(MI, &InBytes);
    if (InBytes) {
      // s_add_pc_i64 reaches every address; a longer literal may change
      // its size (the layout then settles again).
      MI.getOperand(*Offset) = MCOperand::createImm(Dist);
      ++R.BranchesEncoded;
      return std::nullopt;
    }
    if (!Relax[I] && (Dist % 4 || !isInt<16>(Dist / 4))) {
      // Relaxed when the target is an instruction of the function and the
      // client names registers for the long jump there.
      std::optional<uint32_t> TI = G.insnAt(*In.Target);
      if (Scratch && In.F != Flow::Call && TI)
        Relax[I] = Scratch(*TI);
      if (!Relax[I])
        return refuse("branch out of reach",
                      "the branch at " + hex(In.Addr) + " to " + hex(*T) +
                          " does not reach from " + hex(R.InsnAddr[I]) +
                          (Scratch && In.F != Flow::Call && TI
                               ? ", and no registers are free for a "
                                 "long jump at its target"
                               : ""));
      Extra[I] = relaxationSize(Conditional, *Relax[I]);
      Changed = true;
    }
    if (Relax[I]) {
      // The branch reaches the long jump right after it (after the
      // s_branch that goes on when a conditional one is not taken).
      Dist = Conditional ? 4 : 0;
      Expected<std::vector<uint8_t>> Code =
          relaxationCode(MC, Conditional, *Relax[I], After, *T);
      if (!Code)
        return refuse("does not re-encode", "the long jump for the branch at " +
                                                hex(In.Addr) + ": " +
                                                toString(Code.takeError()));
      RelaxCode[I] = std::move(*Code);
      ++R.BranchesRelaxed;
    }
    if (Offset)
      MI.getOperand(*Offset).setImm(Dist / 4);
    ++R.BranchesEncoded;
    return std::nullopt;
  }

  /// A PC-relative add's offset from its s_getpc in the copy.
  Refused encodePCRelative(size_t I, MCInst &MI) {
    const Edit &E = Edits[I];
    const PCRelIdiom &P = Scan.Idioms[E.Idiom];
    std::optional<uint64_t> T = imageOf(P.Target);
    if (!T)
      return refuse("unknown PC use", "s_getpc_b64 at " +
                                          hex(G.Insns[P.GetPC].Addr) +
                                          " computes " + hex(P.Target) +
                                          ", inside an instruction");
    uint64_t Off = *T - (R.InsnAddr[P.GetPC] + Sizes[P.GetPC]);
    uint32_t Half = E.K == Edit::PCLow ? static_cast<uint32_t>(Off)
                                       : static_cast<uint32_t>(Off >> 32);
    unsigned Op = E.K == Edit::PCLow ? P.LoOperand : P.HiOperand;
    MI.getOperand(Op) = MCOperand::createImm(
        E.K == Edit::PC64 ? static_cast<int64_t>(Off) : SignExtend64<32>(Half));
    ++R.PCRelAdjusted;
    return std::nullopt;
  }

  /// The copy's bytes, once the layout settled.
  RelocationResult emit() {
    R.Bytes.reserve(Land[N] - NewBase);
    size_t NextInsert = 0;
    for (size_t I = 0; I <= N; ++I) {
      for (size_t K = NextInsert; K < Inserts.size() && Inserts[K].Before == I;
           ++K)
        if (Inserts[K].FallThrough) {
          uint64_t B = NewBase + R.Bytes.size();
          llvm::append_range(R.Bytes, Inserts[K].Bytes);
          R.FallThrough.push_back({B, B + Inserts[K].Bytes.size()});
        }
      for (; NextInsert < Inserts.size() && Inserts[NextInsert].Before == I;
           ++NextInsert)
        if (!Inserts[NextInsert].FallThrough)
          llvm::append_range(R.Bytes, Inserts[NextInsert].Bytes);
      if (I == N || Replaced[I])
        continue;
      if (Edits[I].K == Edit::None)
        llvm::append_range(R.Bytes, original(I));
      else
        llvm::append_range(R.Bytes, Encoded[I]);
      if (Relax[I]) {
        uint64_t B = NewBase + R.Bytes.size();
        llvm::append_range(R.Bytes, RelaxCode[I]);
        R.Relaxed.push_back({B, B + RelaxCode[I].size()});
      }
    }
    R.LandAddr = std::move(Land);
    return {std::move(R), {}};
  }
};
} // namespace

RelocationResult code::relocate(const amdgpu::TargetMC &MC,
                                const FunctionCFG &G, ArrayRef<MCInst> Decoded,
                                ArrayRef<uint8_t> Bytes, uint64_t NewBase,
                                ArrayRef<Insertion> Inserts,
                                const LongJumpScratch &Scratch) {
  return Relocator(MC, G, Decoded, Bytes, NewBase, Inserts, Scratch).run();
}
