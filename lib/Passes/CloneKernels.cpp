//===- lib/Passes/CloneKernels.cpp - clone-kernels
//---------------------------===//

#include "hotswap/Passes/CloneKernels.h"

#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Pass/PipelineParser.h"
#include "hotswap/Passes/ClonePlan.h"
#include "hotswap/Passes/CloneRecord.h"
#include "hotswap/Passes/CodeAnalysis.h"
#include "hotswap/Passes/CodeSymbols.h"
#include "hotswap/Passes/TargetAnalysis.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"

#include <array>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

CloneKernelsPass::CloneKernelsPass(std::string O) : Only(std::move(O)) {
  if (!Only.empty())
    OnlyRE.emplace(Only);
}

Expected<std::unique_ptr<Pass>> CloneKernelsPass::create(StringRef Params) {
  std::string Only;
  if (Error E = parseOnlyParams(Name, Params, Only))
    return std::move(E);
  return std::make_unique<CloneKernelsPass>(std::move(Only));
}

void CloneKernelsPass::printPipeline(raw_ostream &OS) const {
  OS << name();
  if (!Only.empty())
    OS << "<only=" << Only << ">";
}

std::vector<size_t>
CloneKernelsPass::candidates(Object &Obj, const KernelsAnalysis::Result &R,
                             PassContext *Ctx) const {
  const CodeSymbols Code(Obj);
  std::vector<size_t> Out;
  for (size_t I = 0; I < R.Kernels.size(); ++I) {
    const KernelInfo &K = R.Kernels[I];
    if (OnlyRE && !OnlyRE->match(K.Name))
      continue;
    const Section *S = Obj.sectionForAddress(K.CodeEntry);
    if (S && S->Name == CloneSectionName)
      continue; // runs a copy already
    if (K.hasStub() || K.PendingStub) {
      if (Ctx) {
        std::string Msg =
            "kernel '" + K.Name +
            "' cannot be cloned: it is entered through a stub (run "
            "clone-kernels before trampoline); left as it is";
        Ctx->Warn(Msg);
        Ctx->Stats.add(name(), "refused-stub",
                       "kernels left alone: entered through a stub");
      }
      continue;
    }
    Out.push_back(I);
  }
  return Out;
}

/// The statistic a refusal of kind \p Kind counts in.
static std::pair<StringRef, StringRef> refusalStat(StringRef Kind) {
  if (Kind == "blocking finding")
    return {"refused-finding", "kernels left alone: a blocking finding"};
  if (Kind == "unknown PC use")
    return {"refused-pc", "kernels left alone: the PC used otherwise"};
  if (Kind == "branch out of reach")
    return {"refused-reach", "kernels left alone: a branch out of reach"};
  return {"refused-other", "kernels left alone: other reasons"};
}

Expected<bool> CloneKernelsPass::holds(Object &Obj, KernelsAnalysis::Result &R,
                                       AnalysisManager &AM, PassContext &Ctx) {
  // A selected kernel entered through a stub is never cloned, but the run
  // says so (the pass runs, warns and changes nothing).
  for (const KernelInfo &K : R.Kernels)
    if ((!OnlyRE || OnlyRE->match(K.Name)) && (K.hasStub() || K.PendingStub)) {
      const Section *S = Obj.sectionForAddress(K.CodeEntry);
      if (!S || S->Name != CloneSectionName)
        return false;
    }
  std::vector<size_t> Cands = candidates(Obj, R, nullptr);
  if (Cands.empty())
    return true;
  // Kernels whose code cannot be followed stay as they are: the invariant
  // holds when no candidate's graph is editable (the cheap part of what
  // the relocator refuses; the run says why of the rest).
  auto CA = AM.getResult<CodeAnalysis>(Obj);
  if (!CA)
    return CA.takeError();
  for (size_t I : Cands)
    if (const CodeFunction *F =
            CA->functions().startingAt(R.Kernels[I].CodeEntry)) {
      size_t FI = CA->functions().indexOf(*F);
      bool Kept = CA->isComputed(FI);
      bool Editable = CA->cfg(FI).editable();
      if (!Kept)
        CA->invalidate(FI);
      if (Editable)
        return false;
    }
  return true;
}

Expected<PreservedAnalyses>
CloneKernelsPass::runOnKernels(Object &Obj, KernelsAnalysis::Result &R,
                               AnalysisManager &AM, PassContext &Ctx) {
  const amdgpu::TargetInfo &T = R.Target;
  Ctx.Stats.add(name(), "kernels", "kernels seen", R.Kernels.size());
  std::vector<size_t> Cands = candidates(Obj, R, &Ctx);
  if (Cands.empty())
    return PreservedAnalyses::all();
  auto CA = AM.getResult<CodeAnalysis>(Obj);
  if (!CA)
    return CA.takeError();
  const FunctionMap &M = CA->functions();

  // One copy per code: kernels that share code share its copy.
  std::vector<size_t> Functions;
  DenseMap<size_t, std::vector<size_t>> KernelsOf; // function -> kernels
  for (size_t I : Cands) {
    const CodeFunction *F = M.startingAt(R.Kernels[I].CodeEntry);
    if (!F)
      return makeError("kernel '" + R.Kernels[I].Name + "': its code entry " +
                       hex(R.Kernels[I].CodeEntry) + " starts no function");
    size_t FI = M.indexOf(*F);
    if (!KernelsOf.count(FI))
      Functions.push_back(FI);
    KernelsOf[FI].push_back(I);
  }
  llvm::sort(Functions);

  CodeAppender Appender(Obj);
  Expected<uint64_t> Base = Appender.nextAddress(CloneAlign);
  if (!Base)
    return Base.takeError();
  std::vector<ClonePlan> Plans = planClones(*CA, Functions, *Base);

  // Everything is decided before anything changes: refusals are warned
  // (errors with --strict), a copy the proof does not accept fails the
  // pass (that is a bug of the relocator, never of the input).
  std::vector<uint8_t> Bytes;
  std::vector<const ClonePlan *> Placed;
  for (const ClonePlan &P : Plans) {
    const CodeFunction &F = M.Functions[P.Function];
    if (!P.Code) {
      std::string Msg = "kernel '" + F.Name + "' cannot be cloned (" +
                        P.Refusal.Kind + "): " + P.Refusal.Message;
      if (Ctx.Strict)
        return makeError(Msg);
      Ctx.Warn(Msg + "; left as it is");
      auto [Key, Desc] = refusalStat(P.Refusal.Kind);
      Ctx.Stats.add(name(), Key, Desc, KernelsOf[P.Function].size());
      continue;
    }
    if (!P.Problems.empty())
      return makeError("kernel '" + F.Name +
                       "': its copy is not proven: " + P.Problems.front());
    // Copies follow each other CloneAlign-aligned: pad to this one's
    // address with the target's padding word.
    while (*Base + Bytes.size() < P.Code->Base)
      for (unsigned B = 0; B < 4; ++B)
        Bytes.push_back(static_cast<uint8_t>(T.PadWord >> (8 * B)));
    assert(*Base + Bytes.size() == P.Code->Base && "copies are word-aligned");
    llvm::append_range(Bytes, P.Code->Bytes);
    Placed.push_back(&P);
  }
  if (Placed.empty())
    return PreservedAnalyses::all();
  // The prefetch guard LLVM itself puts after code follows the copies.
  for (unsigned G = 0; G < T.PoolGuardBytes; G += 4)
    for (unsigned B = 0; B < 4; ++B)
      Bytes.push_back(static_cast<uint8_t>(T.PadWord >> (8 * B)));
  Expected<Section &> Sec = Appender.append(
      CodePurpose::Clones, CloneAlign, ELF::SHF_EXECINSTR, std::move(Bytes));
  if (!Sec)
    return Sec.takeError();
  assert(Sec->Addr == *Base && "the copies moved");

  std::vector<CloneRecord> Records;
  SymbolTable *ST = Obj.symtab();
  for (const ClonePlan *P : Placed) {
    const CodeFunction &F = M.Functions[P->Function];
    const Relocated &C = *P->Code;
    for (size_t I : KernelsOf[P->Function]) {
      const KernelInfo &K = R.Kernels[I];
      amdgpu::KernelDescriptor KD = K.KD;
      if (!KD.setEntryAddress(K.KDAddr, C.Base))
        return makeError("kernel '" + K.Name + "': its copy at " + hex(C.Base) +
                         " is not reachable from the descriptor at " +
                         hex(K.KDAddr) + " with a signed 64-bit offset");
      std::array<uint8_t, amdgpu::kd::Size> KDBytes;
      KD.write(KDBytes);
      if (Error E =
              K.KDSection->overwrite(K.KDAddr - K.KDSection->Addr, KDBytes))
        return prefixError("kernel '" + K.Name + "'", std::move(E));
      if (ST) {
        const std::string SymName = K.Name + CloneSymbolSuffix.str();
        Symbol S;
        S.Name = SymName; // the table keeps a copy
        S.Binding = ELF::STB_GLOBAL;
        S.Type = ELF::STT_FUNC;
        S.Other = ELF::STV_DEFAULT;
        S.Sec = &*Sec;
        S.Value = C.Base;
        S.Size = C.Bytes.size();
        ST->add(std::move(S));
        Ctx.Stats.add(name(), "symbols", "<kernel>.clone symbols added");
      }
      Records.push_back({K.Name, F.Begin, F.size(), C.Base, C.Bytes.size(),
                         P->OffsetMap, C.insertedRanges()});
      Ctx.Stats.add(name(), "cloned", "kernels cloned");
    }
    Ctx.Stats.add(name(), "copies", "copies of code placed");
    Ctx.Stats.add(name(), "branches", "branches encoded again",
                  C.BranchesEncoded);
    Ctx.Stats.add(name(), "pc-relative", "PC-relative adds re-derived",
                  C.PCRelAdjusted);
  }
  // Inserted ranges are recorded as offsets of the copy.
  for (CloneRecord &Rec : Records)
    for (auto &[B, E] : Rec.Inserted) {
      B -= Rec.Clone;
      E -= Rec.Clone;
    }
  if (Error E = appendCloneRecords(Obj, Records))
    return std::move(E);
  PreservedAnalyses PA = PreservedAnalyses::none();
  PA.preserve<TargetAnalysis>();
  return PA;
}
