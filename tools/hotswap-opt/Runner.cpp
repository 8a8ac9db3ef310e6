//===- tools/hotswap-opt/Runner.cpp - Planning and running inputs ---------===//

#include "Runner.h"

#include "llvm/ADT/Statistic.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;
using namespace hotswap;

static constexpr StringLiteral ToolName = "hotswap-opt";

std::string hotswap::displayName(StringRef File) {
  return File == "-" ? "<stdin>" : File.str();
}

void hotswap::reportError(raw_ostream &OS, StringRef File, const Twine &Msg) {
  WithColor::error(OS, ToolName);
  if (!File.empty())
    OS << "'" << File << "': ";
  OS << Msg << "\n";
}

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

/// Where \p In's output goes, or an error about the command line.
static Expected<std::string> outputFor(const DriverConfig &C, StringRef In,
                                       size_t NumInputs, bool Writes,
                                       StringMap<std::string> &Claimed) {
  if (C.OutputFile)
    return *C.OutputFile;
  if (C.InPlace) {
    if (In == "-")
      return createStringError("--in-place needs input files, not standard "
                               "input");
    return In.str();
  }
  if (!C.OutputDir.empty()) {
    if (In == "-")
      return createStringError("--output-dir needs input files, not standard "
                               "input");
    SmallString<256> P(C.OutputDir);
    sys::path::append(P, sys::path::filename(In));
    auto [It, New] = Claimed.try_emplace(P, In.str());
    if (!New)
      return createStringError("inputs '" + It->second + "' and '" + In +
                               "' would both be written to '" + P + "'");
    return std::string(P);
  }
  if (!Writes)
    return "";
  if (NumInputs > 1)
    return createStringError(Twine(NumInputs) +
                             " inputs need --output-dir=DIR or --in-place (or "
                             "-disable-output)");
  return "-";
}

Expected<std::vector<Job>> hotswap::planJobs(const DriverConfig &C,
                                             bool Writes) {
  const std::vector<std::string> &Inputs = C.Inputs;
  unsigned Modes = bool(C.OutputFile) + !C.OutputDir.empty() + C.InPlace;
  if (Modes > 1)
    return createStringError("-o, --output-dir and --in-place exclude each "
                             "other");
  if (C.OutputFile && Inputs.size() > 1)
    return createStringError("-o names one output but there are " +
                             Twine(Inputs.size()) +
                             " inputs; use --output-dir=DIR or --in-place");
  // Standard input can be read once.
  if (llvm::count(Inputs, "-") > 1)
    return createStringError("standard input ('-') is given more than once");
  std::vector<Job> Jobs(Inputs.size());
  StringMap<std::string> Claimed;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    Job &J = Jobs[I];
    J.In = Inputs[I];
    if (C.DisableOutput)
      continue;
    Expected<std::string> Out =
        outputFor(C, J.In, Inputs.size(), Writes, Claimed);
    if (!Out)
      return Out.takeError();
    J.Out = *Out;
    // Like opt: never a binary object on a terminal (-o - included).
    if (J.Out == "-" && sys::Process::StandardOutIsDisplayed())
      return createStringError("refusing to write a binary file to a "
                               "terminal; use -o FILE, --output-dir=DIR, "
                               "--in-place or -disable-output");
  }
  return std::move(Jobs);
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

Runner::Runner(const DriverConfig &C, const PassBuilder &PB,
               raw_ostream &TextOut)
    : C(C), PB(PB), TextOut(TextOut), Debug(errs(), TextOut, C.DebugPassManager,
                                            C.PrintAfterAll, C.PrintAfter) {
  Debug.attach(PI);
  if (C.TimePasses)
    Times.attach(PI);
  Instrumented = Debug.enabled() || C.TimePasses;
  unsigned N = C.Threads ? C.Threads
                         : llvm::hardware_concurrency().compute_thread_count();
  if (N > 1)
    Pool.emplace(llvm::hardware_concurrency(N));
}

void Runner::flushInOrder(std::vector<Job> &Jobs) {
  while (NextToFlush < Jobs.size() && Done[NextToFlush]) {
    Job &J = Jobs[NextToFlush++];
    Prog->clear();
    TextOut << J.Text;
    errs() << J.Diag;
    AllStats.merge(J.Stats);
  }
}

PipelineOptions Runner::optionsFor(Job &J, raw_ostream &Text, raw_ostream &Diag,
                                   bool Parallel) {
  PipelineOptions Opts;
  Opts.Strict = C.Strict;
  Opts.VerifyEach = C.VerifyEach;
  Opts.VerifyAnalysisPreservation = C.VerifyAnalysisPreservation;
  Opts.PrintOut = &Text;
  Opts.JSON = C.JSON;
  Opts.Builder = &PB;
  Opts.StatsOut = &J.Stats;
  // Inputs running at once are the unit of parallel work; inside each,
  // everything runs on its thread (see Bundles.cpp).
  Opts.ThreadPool = Pool && !Parallel ? &*Pool : nullptr;
  Opts.KeepGoing = C.KeepGoing;
  Opts.ZeroOldBundles = C.ZeroOldBundles;
  Opts.OnCodeObjectDone = [this, &J](uint64_t Bytes) {
    std::lock_guard<std::mutex> G(Lock);
    J.CountedBytes += Bytes;
    Prog->codeObjectDone(Bytes);
  };
  // Written straight to the terminal, a warning first erases the progress
  // line.
  Opts.Warn = [this, &Diag, Name = displayName(J.In),
               Parallel](const Twine &M) {
    if (!Parallel) {
      std::lock_guard<std::mutex> G(Lock);
      Prog->clear();
    }
    WithColor::warning(Diag, ToolName) << "'" << Name << "': " << M << "\n";
  };
  if (Instrumented) {
    Opts.Instrumentation = &PI;
    Opts.OnCodeObject = [this](StringRef Entry) {
      Debug.beginCodeObject(Entry);
    };
  }
  return Opts;
}

void Runner::runOne(Job &J, bool Parallel) {
  // Buffered when inputs run at once; direct otherwise.
  raw_string_ostream TextBuf(J.Text), DiagBuf(J.Diag);
  raw_ostream &T = Parallel ? static_cast<raw_ostream &>(TextBuf) : TextOut;
  raw_ostream &D = Parallel ? static_cast<raw_ostream &>(DiagBuf) : errs();
  PipelineOptions Opts = optionsFor(J, T, D, Parallel);
  if (C.TimePasses)
    Times.start("(read, lay out and write)");
  Error E = runPipelineOnFile(J.In, J.Out, C.Passes, Opts, &J.Summary);
  if (C.TimePasses)
    Times.stop();
  if (E) {
    J.Failed = true;
    if (!Parallel) {
      std::lock_guard<std::mutex> G(Lock);
      Prog->clear();
    }
    handleAllErrors(
        std::move(E),
        [&](const FileError &FE) {
          reportError(D, displayName(FE.getFileName()),
                      FE.messageWithoutFileInfo());
        },
        [&](const ErrorInfoBase &EI) {
          reportError(D, displayName(J.In), EI.message());
        });
  }
  if (!Parallel)
    D.flush();
  sys::fs::file_status St;
  if (J.In != "-" && !sys::fs::status(J.In, St))
    J.Bytes = St.getSize();
}

void Runner::run(std::vector<Job> &Jobs) {
  Prog.emplace(Jobs.size(), C.ProgressAfterMs, errs(),
               sys::Process::StandardErrIsDisplayed());
  Done.assign(Jobs.size(), false);
  const bool Parallel = Pool && !Instrumented && Jobs.size() > 1;
  auto Finish = [&](size_t I) {
    std::lock_guard<std::mutex> G(Lock);
    Done[I] = true;
    Prog->inputDone(Jobs[I].Bytes, Jobs[I].CountedBytes);
    if (Parallel)
      flushInOrder(Jobs);
  };
  if (Parallel) {
    ThreadPoolTaskGroup Tasks(*Pool);
    for (size_t I = 0; I < Jobs.size(); ++I)
      Tasks.async([this, &Jobs, &Finish, I] {
        runOne(Jobs[I], /*Parallel=*/true);
        Finish(I);
      });
    Tasks.wait();
  } else {
    for (size_t I = 0; I < Jobs.size(); ++I) {
      runOne(Jobs[I], /*Parallel=*/false);
      Finish(I);
    }
    for (Job &J : Jobs)
      AllStats.merge(J.Stats);
  }
  Prog->clear();
}

//===----------------------------------------------------------------------===//
// Summary
//===----------------------------------------------------------------------===//

void Runner::printSummary(ArrayRef<Job> Jobs) {
  unsigned Rewritten = 0, Unchanged = 0, Failed = 0;
  unsigned CodeObjects = 0, CodeObjectsChanged = 0, CodeObjectsFailed = 0;
  bool AnyContainer = false;
  for (const Job &J : Jobs) {
    if (J.Failed)
      ++Failed;
    else if (J.Summary.OutputChanged)
      ++Rewritten;
    else
      ++Unchanged;
    CodeObjects += J.Summary.CodeObjects;
    CodeObjectsChanged += J.Summary.Changed;
    CodeObjectsFailed += J.Summary.Failed;
    AnyContainer |= !J.Failed &&
                    J.Summary.Kind != bundle::InputKind::CodeObject &&
                    J.Summary.Kind != bundle::InputKind::Unknown;
  }
  if (Jobs.size() > 1 || (AnyContainer && !Failed)) {
    errs() << ToolName << ": " << Jobs.size()
           << (Jobs.size() == 1 ? " input: " : " inputs: ") << Rewritten
           << " rewritten, " << Unchanged << " unchanged, " << Failed
           << " failed (" << CodeObjects
           << (CodeObjects == 1 ? " code object: " : " code objects: ")
           << CodeObjectsChanged << " changed";
    if (CodeObjectsFailed)
      errs() << ", " << CodeObjectsFailed << " failed, left as they were";
    errs() << ")\n";
  }
  if (C.TimePasses)
    Times.print(errs(), CodeObjects);
  // -stats is LLVM's own option (registered by libSupport); it prints our
  // per-pass counters.
  if (AreStatisticsEnabled()) {
    if (C.JSON)
      AllStats.printJSON(errs());
    else
      AllStats.print(errs());
  }
}
