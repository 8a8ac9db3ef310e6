//===- lib/Code/RelocationProof.cpp - Code moved does what it did
//-----------===//

#include "hotswap/Code/RelocationProof.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Code/PCRelative.h"
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

RelocationProofResult code::proveRelocation(
    const amdgpu::TargetMC &MC, const FunctionCFG &G, ArrayRef<MCInst> Decoded,
    ArrayRef<uint8_t> Bytes, const FunctionMap &Map, const CodeFunction &Copy,
    ArrayRef<uint8_t> CopyBytes,
    ArrayRef<std::pair<uint64_t, uint64_t>> Inserted,
    ArrayRef<uint32_t> Replaced, bool InsertedMayReadPC,
    ArrayRef<std::pair<uint64_t, uint64_t>> Relaxed, FunctionSeams *Seams,
    ArrayRef<std::pair<uint64_t, uint64_t>> FallThrough) {
  RelocationProofResult R;
  auto Problem = [&](const Twine &T) { R.Problems.push_back(T.str()); };
  std::vector<MCInst> CopyOps;
  FunctionCFG C = buildCFG(MC, Copy, CopyBytes, Map, &CopyOps);
  if (C.Insns.empty() || C.Insns.back().end() != Copy.End) {
    Problem("the copy at " + hex(Copy.Begin) + " does not decode to its end" +
            (C.Findings.empty() ? "" : ": " + C.Findings.front().Message));
    return R;
  }
  // Walk the copy along the original: before each original instruction
  // at most one inserted range (where control reaching it lands), then its
  // copy, or nothing more when it was replaced (by what the range holds).
  std::vector<uint32_t> Pair(G.Insns.size(), UINT32_MAX); // orig -> copy
  std::vector<uint64_t> Land(G.Insns.size());
  DenseMap<uint32_t, uint32_t> FromCopy;
  for (auto [Ranges, What] :
       {std::pair{Inserted, "inserted"}, std::pair{Relaxed, "relaxation"},
        std::pair{FallThrough, "fall-through"}})
    for (size_t K = 0; K < Ranges.size(); ++K) {
      auto [B, E] = Ranges[K];
      if (B >= E || B < Copy.Begin || E > Copy.End ||
          (K && Ranges[K - 1].second > B)) {
        Problem("the " + Twine(What) + " ranges of the copy at " +
                hex(Copy.Begin) + " are not sorted ranges inside it");
        return R;
      }
      if (!C.insnAt(B) || (E != Copy.End && !C.insnAt(E))) {
        Problem("the " + Twine(What) + " range " + hex(B) + "-" + hex(E) +
                " does not begin and end at instructions");
        return R;
      }
    }
  // Original branch -> the relaxation after its copy.
  DenseMap<uint32_t, std::pair<uint64_t, uint64_t>> RelaxedOf;
  size_t NextRange = 0, NextReplaced = 0, NextRelaxed = 0, NextFall = 0;
  uint64_t At = Copy.Begin;
  for (uint32_t I = 0; I < G.Insns.size(); ++I) {
    if (NextFall < FallThrough.size() && FallThrough[NextFall].first == At) {
      const Flow F = I ? G.Insns[I - 1].F : Flow::Jump;
      if (F != Flow::Next && F != Flow::CondJump && F != Flow::Call &&
          F != Flow::IndirectCall) {
        Problem("the fall-through code at " + hex(At) + " follows " +
                (I ? "the copy of " + hex(G.Insns[I - 1].Addr) +
                         ", which does not fall through"
                   : std::string("nothing")));
        return R;
      }
      At = FallThrough[NextFall++].second;
    }
    Land[I] = At;
    bool HasRange =
        NextRange < Inserted.size() && Inserted[NextRange].first == At;
    if (HasRange)
      At = Inserted[NextRange++].second;
    if (NextReplaced < Replaced.size() && Replaced[NextReplaced] == I) {
      ++NextReplaced;
      if (!HasRange) {
        Problem("nothing takes the place of the replaced instruction at " +
                hex(G.Insns[I].Addr));
        return R;
      }
      continue;
    }
    std::optional<uint32_t> J = C.insnAt(At);
    if (!J) {
      Problem("the copy at " + hex(Copy.Begin) + " ends before the copy of " +
              hex(G.Insns[I].Addr));
      return R;
    }
    Pair[I] = *J;
    FromCopy[*J] = I;
    At = C.Insns[*J].end();
    if (NextRelaxed < Relaxed.size() && Relaxed[NextRelaxed].first == At) {
      const Insn &O = G.Insns[I];
      if (!O.Target || (O.F != Flow::Jump && O.F != Flow::CondJump)) {
        Problem("the relaxation at " + hex(At) + " follows the copy of " +
                hex(O.Addr) + ", which is no direct branch");
        return R;
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
    Problem("the copy at " + hex(Copy.Begin) +
            " holds other instructions than the original's and the "
            "inserted ranges");
    return R;
  }
  auto ImageOf = [&](uint64_t T) -> std::optional<uint64_t> {
    if (T < G.Begin || T >= G.End)
      return T;
    if (std::optional<uint32_t> I = G.insnAt(T))
      return Land[*I];
    return std::nullopt;
  };

  PCRelScan OrigScan = findPCRelative(MC, G, Decoded);
  PCRelScan CopyScan = findPCRelative(MC, C, CopyOps);
  auto InInserted = [&](uint64_t A) {
    auto In = [&](const std::pair<uint64_t, uint64_t> &R) {
      return R.first <= A && A < R.second;
    };
    return llvm::any_of(Inserted, In) || llvm::any_of(FallThrough, In);
  };
  for (const CodeFinding &F : CopyScan.Unknown)
    if (!InsertedMayReadPC || !InInserted(F.Addr))
      Problem("in the copy, " + F.Message);
  if (!OrigScan.Unknown.empty())
    Problem("the original reads the PC in a way no copy can keep: " +
            OrigScan.Unknown.front().Message);
  // The constant operand of each add of an idiom, by original index.
  DenseMap<uint32_t, unsigned> ConstantOf;
  for (const PCRelIdiom &P : OrigScan.Idioms) {
    ConstantOf[P.AddLo] = P.LoOperand;
    ConstantOf[P.AddHi] = P.HiOperand;
  }

  // A relaxed branch: the copy \p J of original branch \p I, relaxed up
  // to \p End, must jump to \p Want with registers free at the target.
  const RegisterModel &RM = RegisterModel::get(MC.regInfo());
  auto checkRelaxation = [&](uint32_t I, uint32_t J, uint64_t End,
                             std::optional<uint64_t> Want) {
    const Insn &O = G.Insns[I];
    const std::string Of = "the relaxation of the branch at " +
                           hex(C.Insns[J].Addr) + " (the copy of " +
                           hex(O.Addr) + ")";
    Expected<ReadRelaxation> RR = readRelaxation(MC, C, CopyOps, J, End);
    if (!RR) {
      Problem(Of + ": " + toString(RR.takeError()));
      return;
    }
    std::optional<uint32_t> TI = G.insnAt(*O.Target);
    if (!TI || !Want || RR->Target != *Want) {
      Problem(Of + " jumps to " + hex(RR->Target) + ", not to the image of " +
              hex(*O.Target) +
              (TI ? "" : " (a branch out of the function is never relaxed)"));
      return;
    }
    if (!Seams) {
      Problem(Of + ": the registers of its long jump cannot be proven free "
                   "without the original's analyses");
      return;
    }
    std::string Why = longJumpRegsProblem(RM, Seams->before(*TI), RR->Writes);
    if (!Why.empty())
      Problem(Of + ": at the target " + hex(*O.Target) + ", " + Why);
  };

  const MCInstrInfo &MII = MC.instrInfo();
  for (uint32_t I = 0; I < G.Insns.size(); ++I) {
    if (Pair[I] == UINT32_MAX)
      continue; // replaced
    const Insn &O = G.Insns[I], &N = C.Insns[Pair[I]];
    const MCInst &OI = Decoded[I], &NI = CopyOps[Pair[I]];
    if (O.Opcode != N.Opcode) {
      Problem("the copy of " + hex(O.Addr) + " at " + hex(N.Addr) +
              " is another instruction");
      continue;
    }
    if (O.Target &&
        (O.F == Flow::Jump || O.F == Flow::CondJump || O.F == Flow::Call)) {
      ++R.BranchesChecked;
      std::optional<uint64_t> Want = ImageOf(*O.Target);
      auto RIt = RelaxedOf.find(I);
      if (RIt != RelaxedOf.end()) {
        ++R.BranchesRelaxed;
        checkRelaxation(I, Pair[I], RIt->second.second, Want);
      } else if (!Want || N.Target != Want) {
        Problem("the branch at " + hex(N.Addr) + " (the copy of " +
                hex(O.Addr) + ") does not reach the image of " +
                hex(*O.Target));
      }
      unsigned Offset = ~0u;
      const MCInstrDesc &D = MII.get(OI.getOpcode());
      for (unsigned Op = 0; Op < D.getNumOperands(); ++Op)
        if (D.operands()[Op].OperandType == MCOI::OPERAND_PCREL)
          Offset = Op;
      if (!sameBut(OI, NI, Offset))
        Problem("the copy of the branch at " + hex(O.Addr) +
                " changes more than its offset");
      continue;
    }
    auto It = ConstantOf.find(I);
    if (It != ConstantOf.end()) {
      if (!sameBut(OI, NI, It->second))
        Problem("the copy of the add at " + hex(O.Addr) +
                " changes more than its constant");
      continue;
    }
    if (Bytes.slice(O.Addr - G.Begin, O.Size) !=
        CopyBytes.slice(N.Addr - Copy.Begin, N.Size))
      Problem("the copy of " + hex(O.Addr) + " at " + hex(N.Addr) +
              " has other bytes");
  }

  // Every idiom of the original is found again where its instructions
  // went, and computes the image of its target.
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
        Problem("inserted code at " + hex(C.Insns[P.GetPC].Addr) +
                " reads the PC");
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
      Problem("the copy of s_getpc_b64 at " + hex(G.Insns[P.GetPC].Addr) +
              " is not followed by the copies of its adds");
      continue;
    }
    std::optional<uint64_t> Want = ImageOf(P.Target);
    if (!Want || Q->Target != *Want)
      Problem("the copy of s_getpc_b64 at " + hex(G.Insns[P.GetPC].Addr) +
              " computes " + hex(Q->Target) + ", not the image of " +
              hex(P.Target));
  }
  if (R.Problems.empty())
    for (uint32_t I = 0; I < Pair.size(); ++I)
      R.InsnAddr.push_back(Pair[I] == UINT32_MAX ? Land[I]
                                                 : C.Insns[Pair[I]].Addr);
  return R;
}
