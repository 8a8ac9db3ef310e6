//===- lib/Passes/RealignShdrs.cpp - realign-shdrs ------------------------===//

#include "hotswap/Passes/RealignShdrs.h"

using namespace llvm;
using namespace hotswap;

Expected<bool> RealignShdrsPass::isSatisfied(Object &Obj, AnalysisManager &AM,
                                             PassContext &Ctx) {
  return Obj.sectionHeadersWillBeLastAndAligned();
}

Expected<PreservedAnalyses>
RealignShdrsPass::run(Object &Obj, AnalysisManager &AM, PassContext &Ctx) {
  Obj.requestSectionHeadersLast();
  Ctx.Stats.add(name(), "realigned", "section header tables moved");
  // Only file offsets of non-loaded data change: every analysis stays valid.
  return PreservedAnalyses::changedPreservingAll();
}
