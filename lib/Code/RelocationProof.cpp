//===- lib/Code/RelocationProof.cpp - Code moved does what it did
//-----------===//

#include "hotswap/Code/RelocationProof.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Code/PCRelative.h"
#include "hotswap/Code/Relocate.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstrDesc.h"
#include "llvm/MC/MCInstrInfo.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

/// Whether \p A and \p B are the same but for operand \p Except.
static bool sameBut(const MCInst &A, const MCInst &B, unsigned Except) {
  if (A.getOpcode() != B.getOpcode() ||
      A.getNumOperands() != B.getNumOperands())
    return false;
  for (unsigned I = 0; I < A.getNumOperands(); ++I) {
    if (I == Except)
      continue;
    const MCOperand &X = A.getOperand(I), &Y = B.getOperand(I);
    if (X.isReg() != Y.isReg() || X.isImm() != Y.isImm())
      return false;
    if (X.isReg() && X.getReg() != Y.getReg())
      return false;
    if (X.isImm() && X.getImm() != Y.getImm())
      return false;
  }
  return true;
}

namespace {
using Ranges = ArrayRef<std::pair<uint64_t, uint64_t>>;

/// proveRelocation's state and its steps: the copy decoded, the copy
/// walked along the original (pairing instructions), then each pair, each
/// relaxation and each PC-relative idiom checked.
class RelocationProver {
public:
  RelocationProver(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                   ArrayRef<MCInst> Decoded, ArrayRef<uint8_t> Bytes,
                   const CodeFunction &Copy, ArrayRef<uint8_t> CopyBytes,
                   Ranges Inserted, ArrayRef<uint32_t> Replaced,
                   bool InsertedMayReadPC, Ranges Relaxed, FunctionSeams *Seams,
                   Ranges FallThrough)
      : MC(MC), G(G), Decoded(Decoded), Bytes(Bytes), Copy(Copy),
        CopyBytes(CopyBytes), Inserted(Inserted), Replaced(Replaced),
        InsertedMayReadPC(InsertedMayReadPC), Relaxed(Relaxed), Seams(Seams),
        FallThrough(FallThrough), Kinds(InsnKinds::get(MC.instrInfo())) {}

  RelocationProofResult run(const FunctionMap &Map) {
    // The copy is decoded from its bytes; where they are the original's,
    // the original's decodes are the decoder's answers (DecodeHint).
    const DecodeHint Hint{Bytes, G.Begin, G.Insns, Decoded};
    C = buildCFG(MC, Copy, CopyBytes, Map, &CopyOps, &Hint);
    if (C.Insns.empty() || C.Insns.back().end() != Copy.End) {
      problem("the copy at " + hex(Copy.Begin) + " does not decode to its end" +
              (C.Findings.empty() ? "" : ": " + C.Findings.front().Message));
      return std::move(R);
    }
    if (!checkRanges() || !walk())
      return std::move(R);
    OrigScan = findPCRelative(MC, G, Decoded);
    CopyScan = findPCRelative(MC, C, CopyOps);
    checkPCUses();
    for (const PCRelIdiom &P : OrigScan.Idioms) {
      ConstantOf[P.AddLo] = P.LoOperand;
      ConstantOf[P.AddHi] = P.HiOperand;
    }
    for (uint32_t I = 0; I < G.Insns.size(); ++I)
      if (Pair[I] != UINT32_MAX) // else replaced
        checkPair(I);
    checkIdioms();
    if (R.Problems.empty()) {
      for (uint32_t I = 0; I < Pair.size(); ++I)
        R.InsnAddr.push_back(Pair[I] == UINT32_MAX ? Land[I]
                                                   : C.Insns[Pair[I]].Addr);
      // The copy as read, for the checks after the proof.
      R.CopyCFG = std::move(C);
      R.CopyDecoded = std::move(CopyOps);
    }
    return std::move(R);
  }

private:
  const amdgpu::TargetMC &MC;
  const FunctionCFG &G;
  ArrayRef<MCInst> Decoded;
  ArrayRef<uint8_t> Bytes;
  const CodeFunction &Copy;
  ArrayRef<uint8_t> CopyBytes;
  Ranges Inserted;
  ArrayRef<uint32_t> Replaced;
  const bool InsertedMayReadPC;
  Ranges Relaxed;
  FunctionSeams *Seams;
  Ranges FallThrough;
  const InsnKinds &Kinds;

  RelocationProofResult R;
  FunctionCFG C;
  std::vector<MCInst> CopyOps;
  /// Original instruction -> its copy (UINT32_MAX: replaced), and back.
  std::vector<uint32_t> Pair;
  DenseMap<uint32_t, uint32_t> FromCopy;
  /// Where control reaching each original instruction lands in the copy.
  std::vector<uint64_t> Land;
  /// Original branch -> the relaxation after its copy.
  DenseMap<uint32_t, std::pair<uint64_t, uint64_t>> RelaxedOf;
  PCRelScan OrigScan, CopyScan;
  /// The constant operand of each add of an idiom, by original index.
  DenseMap<uint32_t, unsigned> ConstantOf;

  void problem(const Twine &T) { R.Problems.push_back(T.str()); }

  /// Each kind of range is sorted, inside the copy, and begins and ends at
  /// instructions.
  bool checkRanges() {
    for (auto [Rs, What] :
         {std::pair{Inserted, "inserted"}, std::pair{Relaxed, "relaxation"},
          std::pair{FallThrough, "fall-through"}})
      for (size_t K = 0; K < Rs.size(); ++K) {
        auto [B, E] = Rs[K];
        if (B >= E || B < Copy.Begin || E > Copy.End ||
            (K && Rs[K - 1].second > B)) {
          problem("the " + Twine(What) + " ranges of the copy at " +
                  hex(Copy.Begin) + " are not sorted ranges inside it");
          return false;
        }
        if (!C.insnAt(B) || (E != Copy.End && !C.insnAt(E))) {
          problem("the " + Twine(What) + " range " + hex(B) + "-" + hex(E) +
                  " does not begin and end at instructions");
          return false;
        }
      }
    return true;
  }

  /// Walks the copy along the original: before each original instruction
  /// fall-through code, then at most one inserted range (where control
  /// reaching it lands), then its copy (and its relaxation), or nothing
  /// more when it was replaced (by what the range holds).
  bool walk() {
    Pair.assign(G.Insns.size(), UINT32_MAX);
    Land.assign(G.Insns.size(), 0);
    size_t NextRange = 0, NextReplaced = 0, NextRelaxed = 0, NextFall = 0;
    uint64_t At = Copy.Begin;
    for (uint32_t I = 0; I < G.Insns.size(); ++I) {
      if (NextFall < FallThrough.size() && FallThrough[NextFall].first == At) {
        if (!fallsThroughInto(I, At))
          return false;
        At = FallThrough[NextFall++].second;
      }
      Land[I] = At;
      bool HasRange =
          NextRange < Inserted.size() && Inserted[NextRange].first == At;
      if (HasRange)
        At = Inserted[NextRange++].second;
      if (NextReplaced < Replaced.size() && Replaced[NextReplaced] == I) {
        ++NextReplaced;
        if (HasRange)
          continue;
        problem("nothing takes the place of the replaced instruction at " +
                hex(G.Insns[I].Addr));
        return false;
      }
      std::optional<uint32_t> J = C.insnAt(At);
      if (!J) {
        problem("the copy at " + hex(Copy.Begin) + " ends before the copy of " +
                hex(G.Insns[I].Addr));
        return false;
      }
      Pair[I] = *J;
      FromCopy[*J] = I;
      At = C.Insns[*J].end();
      if (NextRelaxed < Relaxed.size() && Relaxed[NextRelaxed].first == At) {
        const Insn &O = G.Insns[I];
        if (!O.Target || (O.F != Flow::Jump && O.F != Flow::CondJump)) {
          problem("the relaxation at " + hex(At) + " follows the copy of " +
                  hex(O.Addr) + ", which is no direct branch");
          return false;
        }
        RelaxedOf[I] = Relaxed[NextRelaxed];
        At = Relaxed[NextRelaxed++].second;
      }
    }
    if (NextRange < Inserted.size() && Inserted[NextRange].first == At)
      At = Inserted[NextRange++].second;
    if (At != Copy.End || NextRange != Inserted.size() ||
        NextReplaced != Replaced.size() || NextRelaxed != Relaxed.size() ||
        NextFall != FallThrough.size()) {
      problem("the copy at " + hex(Copy.Begin) +
              " holds other instructions than the original's and the "
              "inserted ranges");
      return false;
    }
    return true;
  }

  /// Fall-through code at \p At, before the copy of original instruction
  /// \p I, must follow one that falls through.
  bool fallsThroughInto(uint32_t I, uint64_t At) {
    const Flow F = I ? G.Insns[I - 1].F : Flow::Jump;
    if (F == Flow::Next || F == Flow::CondJump || F == Flow::Call ||
        F == Flow::IndirectCall)
      return true;
    problem("the fall-through code at " + hex(At) + " follows " +
            (I ? "the copy of " + hex(G.Insns[I - 1].Addr) +
                     ", which does not fall through"
               : std::string("nothing")));
    return false;
  }

  std::optional<uint64_t> imageOf(uint64_t T) const {
    return code::imageOf(G, Land, T);
  }

  bool inInserted(uint64_t A) const {
    auto In = [&](const std::pair<uint64_t, uint64_t> &Rg) {
      return Rg.first <= A && A < Rg.second;
    };
    return llvm::any_of(Inserted, In) || llvm::any_of(FallThrough, In);
  }

  void checkPCUses() {
    for (const CodeFinding &F : CopyScan.Unknown)
      if (!InsertedMayReadPC || !inInserted(F.Addr))
        problem("in the copy, " + F.Message);
    if (!OrigScan.Unknown.empty())
      problem("the original reads the PC in a way no copy can keep: " +
              OrigScan.Unknown.front().Message);
  }

  /// The copy of original instruction \p I: the same instruction, a branch
  /// to the image of its target (or relaxed to a long jump there), an add
  /// of an idiom with only its constant changed, else the same bytes.
  void checkPair(uint32_t I) {
    const Insn &O = G.Insns[I], &N = C.Insns[Pair[I]];
    const MCInst &OI = Decoded[I], &NI = CopyOps[Pair[I]];
    if (O.Opcode != N.Opcode) {
      problem("the copy of " + hex(O.Addr) + " at " + hex(N.Addr) +
              " is another instruction");
      return;
    }
    if (O.Target &&
        (O.F == Flow::Jump || O.F == Flow::CondJump || O.F == Flow::Call)) {
      checkBranch(I);
      return;
    }
    auto It = ConstantOf.find(I);
    if (It != ConstantOf.end()) {
      if (!sameBut(OI, NI, It->second))
        problem("the copy of the add at " + hex(O.Addr) +
                " changes more than its constant");
      return;
    }
    if (Bytes.slice(O.Addr - G.Begin, O.Size) !=
        CopyBytes.slice(N.Addr - Copy.Begin, N.Size))
      problem("the copy of " + hex(O.Addr) + " at " + hex(N.Addr) +
              " has other bytes");
  }

  void checkBranch(uint32_t I) {
    const Insn &O = G.Insns[I], &N = C.Insns[Pair[I]];
    const MCInst &OI = Decoded[I], &NI = CopyOps[Pair[I]];
    ++R.BranchesChecked;
    std::optional<uint64_t> Want = imageOf(*O.Target);
    auto RIt = RelaxedOf.find(I);
    if (RIt != RelaxedOf.end()) {
      ++R.BranchesRelaxed;
      checkRelaxation(I, Pair[I], RIt->second.second, Want);
    } else if (!Want || N.Target != Want) {
      problem("the branch at " + hex(N.Addr) + " (the copy of " + hex(O.Addr) +
              ") does not reach the image of " + hex(*O.Target));
    }
    std::optional<unsigned> Offset = Kinds.offsetOperand(OI);
    if (!sameBut(OI, NI, Offset.value_or(~0u)))
      problem("the copy of the branch at " + hex(O.Addr) +
              " changes more than its offset");
  }

  /// A relaxed branch: the copy \p J of original branch \p I, relaxed up
  /// to \p End, must jump to \p Want with registers free at the target.
  void checkRelaxation(uint32_t I, uint32_t J, uint64_t End,
                       std::optional<uint64_t> Want) {
    const Insn &O = G.Insns[I];
    const std::string Of = "the relaxation of the branch at " +
                           hex(C.Insns[J].Addr) + " (the copy of " +
                           hex(O.Addr) + ")";
    Expected<ReadRelaxation> RR = readRelaxation(MC, C, CopyOps, J, End);
    if (!RR) {
      problem(Of + ": " + toString(RR.takeError()));
      return;
    }
    std::optional<uint32_t> TI = G.insnAt(*O.Target);
    if (!TI || !Want || RR->Target != *Want) {
      problem(Of + " jumps to " + hex(RR->Target) + ", not to the image of " +
              hex(*O.Target) +
              (TI ? "" : " (a branch out of the function is never relaxed)"));
      return;
    }
    if (!Seams) {
      problem(Of + ": the registers of its long jump cannot be proven free "
                   "without the original's analyses");
      return;
    }
    const RegisterModel &RM = RegisterModel::get(MC.regInfo());
    std::string Why = longJumpRegsProblem(RM, Seams->before(*TI), RR->Writes);
    if (!Why.empty())
      problem(Of + ": at the target " + hex(*O.Target) + ", " + Why);
  }

  /// Every idiom of the original is found again where its instructions
  /// went, and computes the image of its target; the copy reads the PC
  /// nowhere else (but in long jumps, and in inserted code that may).
  void checkIdioms() {
    DenseMap<uint32_t, const PCRelIdiom *> CopyIdiomAt;
    for (const PCRelIdiom &P : CopyScan.Idioms) {
      auto It = FromCopy.find(P.GetPC);
      if (It == FromCopy.end()) {
        const uint64_t A = C.Insns[P.GetPC].Addr;
        if (llvm::any_of(RelaxedOf, [&](const auto &E) {
              return E.second.first <= A && A < E.second.second;
            }))
          continue; // a long jump, checked with its branch
        if (!InsertedMayReadPC)
          problem("inserted code at " + hex(A) + " reads the PC");
        continue;
      }
      CopyIdiomAt[It->second] = &P;
    }
    for (const PCRelIdiom &P : OrigScan.Idioms) {
      ++R.PCRelChecked;
      auto It = CopyIdiomAt.find(P.GetPC);
      const PCRelIdiom *Q = It == CopyIdiomAt.end() ? nullptr : It->second;
      if (!Q || Pair[P.GetPC] == UINT32_MAX || Q->AddLo != Pair[P.AddLo] ||
          Q->AddHi != Pair[P.AddHi]) {
        problem("the copy of s_getpc_b64 at " + hex(G.Insns[P.GetPC].Addr) +
                " is not followed by the copies of its adds");
        continue;
      }
      std::optional<uint64_t> Want = imageOf(P.Target);
      if (!Want || Q->Target != *Want)
        problem("the copy of s_getpc_b64 at " + hex(G.Insns[P.GetPC].Addr) +
                " computes " + hex(Q->Target) + ", not the image of " +
                hex(P.Target));
    }
  }
};
} // namespace

RelocationProofResult code::proveRelocation(
    const amdgpu::TargetMC &MC, const FunctionCFG &G, ArrayRef<MCInst> Decoded,
    ArrayRef<uint8_t> Bytes, const FunctionMap &Map, const CodeFunction &Copy,
    ArrayRef<uint8_t> CopyBytes,
    ArrayRef<std::pair<uint64_t, uint64_t>> Inserted,
    ArrayRef<uint32_t> Replaced, bool InsertedMayReadPC,
    ArrayRef<std::pair<uint64_t, uint64_t>> Relaxed, FunctionSeams *Seams,
    ArrayRef<std::pair<uint64_t, uint64_t>> FallThrough) {
  return RelocationProver(MC, G, Decoded, Bytes, Copy, CopyBytes, Inserted,
                          Replaced, InsertedMayReadPC, Relaxed, Seams,
                          FallThrough)
      .run(Map);
}
