//===- lib/Passes/CloneKernels.cpp - clone-kernels
//---------------------------===//

#include "hotswap/Passes/CloneKernels.h"

#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Pass/PipelineParser.h"
#include "hotswap/Passes/ClonePlan.h"
#include "hotswap/Passes/CloneRecord.h"
#include "hotswap/Passes/CodeAnalysis.h"
#include "hotswap/Passes/CodeSymbols.h"
#include "hotswap/Passes/PatchRecord.h"
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
  // A kernel with sites patched in place leaves its code at each site: a
  // copy would too (a record that does not read is verify's to report).
  Expected<StringSet<>> Patched = patchedKernels(Obj);
  if (!Patched)
    consumeError(Patched.takeError());
  for (size_t I = 0; I < R.Kernels.size(); ++I) {
    const KernelInfo &K = R.Kernels[I];
    if (OnlyRE && !OnlyRE->match(K.Name))
      continue;
    const Section *S = Obj.sectionForAddress(K.CodeEntry);
    if (S && S->Name == CloneSectionName)
      continue; // runs a copy already
    if (Patched && Patched->count(K.Name)) {
      if (Ctx)
        Ctx->Warn("kernel '" + K.Name +
                  "' has sites patched in place: left alone");
      continue;
    }
    Out.push_back(I);
  }
  return Out;
}

Expected<bool> CloneKernelsPass::holds(Object &Obj, KernelsAnalysis::Result &R,
                                       AnalysisManager &AM, PassContext &Ctx) {
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
  std::vector<RegisterLimits> Limits = functionLimits(R, Functions, KernelsOf);
  std::vector<ClonePlan> Plans =
      planClones(*CA, Functions, *Base, {}, false, Limits);
  Expected<size_t> Placed =
      placeClones(Obj, R, *CA, Plans, KernelsOf, *Base, name(), AM, Ctx);
  if (!Placed)
    return Placed.takeError();
  if (*Placed == 0)
    return PreservedAnalyses::all();
  PreservedAnalyses PA = PreservedAnalyses::none();
  PA.preserve<TargetAnalysis>();
  return PA;
}
