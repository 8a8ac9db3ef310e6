//===- lib/Pipeline/Pipeline.cpp - Runs a pipeline on a model -------------===//

#include "Rewrite.h"

#include "hotswap/Object/Reader.h"
#include "hotswap/Passes/TargetAnalysis.h"
#include "hotswap/Passes/Verify.h"
#include "hotswap/Support/Error.h"

using namespace llvm;
using namespace hotswap;

#ifndef HOTSWAP_VERSION_STRING
#error "HOTSWAP_VERSION_STRING must come from the build (PROJECT_VERSION)"
#endif
StringRef hotswap::getVersionString() { return HOTSWAP_VERSION_STRING; }

Error hotswap::runPassManager(Object &Obj, PassManager &PM,
                              const PipelineOptions &Opts) {
  return pipeline::runPasses(Obj, PM, Opts, nullptr);
}

Error pipeline::runPasses(Object &Obj, PassManager &PM,
                          const PipelineOptions &Opts, PassRunFacts *Facts) {
  PassContext Ctx;
  if (Opts.Warn)
    Ctx.Warn = Opts.Warn;
  Ctx.Strict = Opts.Strict;
  Ctx.JSON = Opts.JSON;
  Ctx.ThreadPool = Opts.ThreadPool;
  if (Opts.PrintOut)
    Ctx.Out = Opts.PrintOut;
  if (Facts && Opts.JSON)
    Ctx.JSONOut = &Facts->Printed;
  AnalysisManager AM;
  AM.ThreadPool = Opts.ThreadPool;
  PassInstrumentation PI;
  if (Opts.Instrumentation)
    PI = *Opts.Instrumentation;
  if (!PI.BeforeAnalysis.empty() || !PI.AfterAnalysis.empty()) {
    AM.BeforeCompute = [&PI](StringRef Name) {
      for (auto &CB : PI.BeforeAnalysis)
        CB(Name);
    };
    AM.AfterCompute = [&PI](StringRef Name) {
      for (auto &CB : PI.AfterAnalysis)
        CB(Name);
    };
  }
  if (Opts.VerifyAnalysisPreservation)
    PI.AfterPass.push_back([&AM](const Pass &P, Object &O,
                                 bool Changed) -> Error {
      if (!Changed)
        return Error::success();
      Expected<std::optional<AnalysisManager::StaleResult>> Stale =
          AM.firstStaleResult(O);
      if (!Stale)
        return prefixError("after pass '" + P.name() + "'", Stale.takeError());
      if (*Stale)
        return makeError(
            "after pass '" + P.name() + "': the " + (*Stale)->Analysis +
            " analysis it kept differs from a fresh one in " + (*Stale)->Field);
      return Error::success();
    });
  if (Opts.VerifyEach) {
    auto V = std::make_shared<VerifyPass>();
    PI.AfterPass.push_back(
        [&AM, &Ctx, V](const Pass &P, Object &O, bool Changed) -> Error {
          if (!Changed || !P.isTransform())
            return Error::success();
          Expected<PreservedAnalyses> R = V->run(O, AM, Ctx);
          if (!R)
            return prefixError("after pass '" + P.name() + "'", R.takeError());
          return Error::success();
        });
    Ctx.CheckInvariants = true;
  }
  Error E = PM.run(Obj, AM, Ctx, &PI);
  // What LLVM MC was needed for (the scratch pair is chosen from the
  // descriptor: the default pipeline starts no MC for an object without
  // stubs, and decodes no kernel code).
  if (const TargetAnalysis::Result *T = AM.getCachedResult<TargetAnalysis>())
    if (T->hasMC()) {
      Ctx.Stats.add("target", "mc", "LLVM MC states created");
      Ctx.Stats.add("target", "decoded", "instructions decoded by LLVM MC",
                    T->instructionsDecoded());
    }
  if (Opts.StatsOut)
    Opts.StatsOut->merge(Ctx.Stats);
  if (!Facts)
    return E;
  Facts->Unfit = std::move(Ctx.Unfit);
  if (E)
    return E;
  if (KernelsAnalysis::Result *K = AM.getCachedResult<KernelsAnalysis>()) {
    Facts->Kernels = K->Kernels.size();
  } else if (Opts.CountKernels) {
    Expected<KernelsAnalysis::Result> Fresh = KernelsAnalysis::run(Obj, AM);
    if (!Fresh)
      return Fresh.takeError();
    Facts->Kernels = Fresh->Kernels.size();
  }
  return Error::success();
}

Expected<KernelsAnalysis::Result> hotswap::getKernels(Object &Obj) {
  AnalysisManager AM;
  return KernelsAnalysis::run(Obj, AM);
}

Expected<AnalyzedObject> hotswap::analyzeKernels(MemoryBufferRef Input) {
  Expected<std::unique_ptr<Object>> Obj = readObject(Input);
  if (!Obj)
    return Obj.takeError();
  Expected<KernelsAnalysis::Result> K = getKernels(**Obj);
  if (!K)
    return K.takeError();
  return AnalyzedObject{std::move(*Obj), std::move(*K)};
}
