//===- lib/Passes/RealignShdrs.cpp - realign-shdrs ------------------------===//

#include "hotswap/Passes/RealignShdrs.h"

#include "hotswap/Object/Writer.h"
#include "hotswap/Pass/AnalysisManager.h"

using namespace llvm;
using namespace hotswap;

Expected<std::unique_ptr<Pass>> RealignShdrsPass::create(StringRef Params) {
  if (!Params.empty())
    return createStringError("unknown parameter '" + Params + "'");
  return std::make_unique<RealignShdrsPass>();
}

Expected<bool> hotswap::sectionHeadersAligned(const Object &Obj) {
  if (Obj.Sections.empty())
    return true;
  Expected<Layout> L = Writer::computeLayout(Obj);
  if (!L)
    return L.takeError();
  if (L->ShOff % 8 != 0)
    return false;
  for (size_t I = 1; I < Obj.Sections.size(); ++I) {
    const Section &S = *Obj.Sections[I];
    if (S.isNoBits())
      continue;
    uint64_t Size = S.size();
    auto It = L->Rebuilt.find(&S);
    if (It != L->Rebuilt.end())
      Size = It->second.size();
    if (Size && L->SectionOffsets[I] + Size > L->ShOff)
      return false;
  }
  return true;
}

Expected<bool> RealignShdrsPass::isSatisfied(Object &Obj, AnalysisManager &AM,
                                             PassContext &Ctx) {
  return sectionHeadersAligned(Obj);
}

Expected<PreservedAnalyses> RealignShdrsPass::run(Object &Obj,
                                                  AnalysisManager &AM,
                                                  PassContext &Ctx) {
  Obj.RelayoutSectionHeaders = true;
  Ctx.Stats.add(name(), "realigned", "section header tables moved");
  // Only file offsets of non-loaded data change: every analysis stays valid.
  return PreservedAnalyses::changedPreservingAll();
}
