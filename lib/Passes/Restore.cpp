//===- lib/Passes/Restore.cpp - restore -----------------------------------===//

#include "hotswap/Passes/Restore.h"

#include "hotswap/Support/Error.h"

using namespace llvm;
using namespace hotswap;

Expected<PreservedAnalyses> RestorePass::run(Object &, AnalysisManager &,
                                             PassContext &) {
  return makeError("pass 'restore' gives back a whole input and cannot run "
                   "on a model: run it as the only pass of a pipeline "
                   "(runPipeline, runPipelineOnFile, -passes=restore)");
}
