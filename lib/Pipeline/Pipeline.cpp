//===- lib/Pass/Pipeline.cpp - Library entry points -----------------------===//

#include "hotswap/Hotswap.h"

#include "hotswap/Object/InputFile.h"
#include "hotswap/Object/OutputFile.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Object/Writer.h"
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
  PassContext Ctx;
  if (Opts.Warn)
    Ctx.Warn = Opts.Warn;
  Ctx.Strict = Opts.Strict;
  Ctx.JSON = Opts.JSON;
  if (Opts.PrintOut)
    Ctx.Out = Opts.PrintOut;
  AnalysisManager AM;
  AM.ThreadPool = Opts.ThreadPool;
  PassInstrumentation PI;
  if (Opts.Instrumentation)
    PI = *Opts.Instrumentation;
  if (Opts.VerifyEach) {
    auto V = std::make_shared<VerifyPass>();
    PI.AfterPass.push_back([&AM, &Ctx, V](const Pass &P, Object &O,
                                          bool Changed) -> Error {
      if (!Changed || !P.isTransform())
        return Error::success();
      Expected<PreservedAnalyses> R = V->run(O, AM, Ctx);
      if (!R)
        return prefixError("after pass '" + P.name() + "'", R.takeError());
      return Error::success();
    });
  }
  Error E = PM.run(Obj, AM, Ctx, &PI);
  if (Opts.StatsOut)
    *Opts.StatsOut = Ctx.Stats;
  return E;
}

static Expected<PassManager> parse(StringRef Pipeline,
                                   const PipelineOptions &Opts) {
  PassManager PM;
  if (Opts.Builder) {
    if (Error E = Opts.Builder->parsePassPipeline(PM, Pipeline))
      return std::move(E);
  } else {
    PassBuilder PB;
    if (Error E = PB.parsePassPipeline(PM, Pipeline))
      return std::move(E);
  }
  return std::move(PM);
}

Expected<std::unique_ptr<MemoryBuffer>>
hotswap::runPipeline(MemoryBufferRef Input, StringRef Pipeline,
                     const PipelineOptions &Opts) {
  Expected<PassManager> PM = parse(Pipeline, Opts);
  if (!PM)
    return PM.takeError();
  Expected<std::unique_ptr<Object>> Obj = readObject(Input);
  if (!Obj)
    return Obj.takeError();
  if (Error E = runPassManager(**Obj, *PM, Opts))
    return std::move(E);
  return writeObjectToBuffer(**Obj);
}

Error hotswap::runPipelineOnFile(StringRef InPath, StringRef OutPath,
                                 StringRef Pipeline,
                                 const PipelineOptions &Opts) {
  Expected<PassManager> PM = parse(Pipeline, Opts);
  if (!PM)
    return PM.takeError();
  Expected<InputFile> In = InputFile::open(InPath);
  if (!In)
    return prefixError("cannot read file", In.takeError());
  Expected<std::unique_ptr<Object>> Obj = readObject(In->buffer());
  if (!Obj)
    return Obj.takeError();
  if (Error E = runPassManager(**Obj, *PM, Opts))
    return E;
  if (OutPath.empty())
    return Error::success();
  return writeObjectToFile(**Obj, OutPath, &*In);
}

Expected<KernelsAnalysis::Result> hotswap::getKernels(Object &Obj) {
  AnalysisManager AM;
  Expected<KernelsAnalysis::Result> R = KernelsAnalysis::run(Obj, AM);
  if (!R)
    return R.takeError();
  // Everything print<kernels> shows, exact SGPR usage included.
  if (Error E = R->refineAllSGPRs(Obj, AM))
    return std::move(E);
  return R;
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
