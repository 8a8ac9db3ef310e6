//===- tools/hotswap-opt/Runner.cpp - Planning and running inputs ---------===//

#include "Runner.h"

#include "llvm/ADT/Statistic.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"

#include <cerrno>
#include <deque>
#include <unistd.h>

using namespace llvm;
using namespace hotswap;

static constexpr StringLiteral ToolName = "hotswap-opt";

std::string hotswap::displayName(StringRef File) {
  return File == "-" ? "<stdin>" : File.str();
}

std::string hotswap::printable(StringRef Text, bool KeepNewlines) {
  std::string Out;
  Out.reserve(Text.size());
  auto Escape = [&](uint8_t C) {
    Out += "\\x";
    Out += hexdigit(C >> 4, /*LowerCase=*/true);
    Out += hexdigit(C & 15, /*LowerCase=*/true);
  };
  const auto *P = reinterpret_cast<const UTF8 *>(Text.data());
  const auto *End = P + Text.size();
  while (P < End) {
    if (*P < 0x80) {
      if ((*P < 0x20 && !(KeepNewlines && *P == '\n')) || *P == 0x7f)
        Escape(*P);
      else
        Out += char(*P);
      ++P;
      continue;
    }
    const unsigned N = getNumBytesForUTF8(*P);
    // C1 controls (U+0080..U+009F: C2 80..C2 9F) are escapes too.
    if (N > size_t(End - P) || !isLegalUTF8Sequence(P, P + N) ||
        (N == 2 && P[0] == 0xc2 && P[1] < 0xa0)) {
      Escape(*P++);
      continue;
    }
    Out.append(reinterpret_cast<const char *>(P), N);
    P += N;
  }
  return Out;
}

void hotswap::reportError(raw_ostream &OS, StringRef File, const Twine &Msg) {
  WithColor::error(OS, ToolName);
  if (!File.empty())
    OS << "'" << printable(File) << "': ";
  OS << printable(Msg.str(), /*KeepNewlines=*/true) << "\n";
}

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

/// Where \p In's output goes (\p Relative: its path under the tree it was
/// found in, with -r), or an error about the command line.
static Expected<std::string> outputFor(const DriverConfig &C, StringRef In,
                                       StringRef Relative, size_t NumInputs,
                                       bool Writes,
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
    sys::path::append(P, Relative.empty() ? sys::path::filename(In) : Relative);
    auto [It, New] = Claimed.try_emplace(P, In.str());
    if (!New)
      return createStringError("inputs '" + It->second + "' and '" + In +
                               "' would both be written to '" + P + "'");
    return std::string(P);
  }
  if (!Writes)
    return "";
  if (C.Recursive)
    return createStringError("-r needs --in-place, --output-dir=DIR, "
                             "--dry-run or -disable-output");
  if (NumInputs > 1)
    return createStringError(Twine(NumInputs) +
                             " inputs need --output-dir=DIR or --in-place (or "
                             "-disable-output)");
  return "-";
}

/// The inputs as jobs: with -r, each directory replaced by the GPU files
/// under it.
static Plan expandInputs(const DriverConfig &C,
                         std::vector<std::string> &Relative) {
  Plan P;
  std::set<sys::fs::UniqueID> Seen;
  // An output directory inside a tree is not walked (a second run would
  // take its outputs as inputs and write out/out/...): taken as seen, as a
  // directory walked already is. (Unless it is a tree itself.)
  sys::fs::file_status OutSt;
  if (C.Recursive && !C.OutputDir.empty() &&
      !sys::fs::status(C.OutputDir, OutSt) &&
      OutSt.type() == sys::fs::file_type::directory_file &&
      llvm::none_of(C.Inputs, [&](const std::string &In) {
        sys::fs::file_status St;
        return !sys::fs::status(In, St) &&
               St.getUniqueID() == OutSt.getUniqueID();
      }))
    Seen.insert(OutSt.getUniqueID());
  for (const std::string &In : C.Inputs) {
    if (!C.Recursive || In == "-" || !sys::fs::is_directory(In)) {
      // In place, a file named twice (or under two names, or also found
      // in a tree) is rewritten once, as a tree's file reached twice.
      sys::fs::file_status St;
      if (C.InPlace && In != "-" && !sys::fs::status(In, St) &&
          St.type() != sys::fs::file_type::directory_file &&
          !Seen.insert(St.getUniqueID()).second) {
        ++P.Duplicates;
        continue;
      }
      P.Jobs.emplace_back();
      P.Jobs.back().In = In;
      Relative.emplace_back();
      continue;
    }
    TreeWalk W;
    walkTree(In, W, Seen);
    for (TreeWalk::File &F : W.Files) {
      P.Jobs.emplace_back();
      P.Jobs.back().In = std::move(F.Path);
      P.Jobs.back().OpenIn = std::move(F.OpenPath);
      P.Jobs.back().AliasIns = std::move(F.AliasPaths);
      P.Jobs.back().AliasRelatives = std::move(F.AliasRelatives);
      Relative.push_back(std::move(F.Relative));
    }
    for (auto &[Path, Why] : W.Errors) {
      P.Jobs.emplace_back();
      P.Jobs.back().In = Path;
      P.Jobs.back().PresetError = Why;
      Relative.emplace_back();
    }
    P.NotGPU += W.NotGPU;
    P.Links += W.Links;
    P.Duplicates += W.Duplicates;
    P.Temporaries += W.Temporaries;
  }
  return P;
}

Expected<Plan> hotswap::planJobs(const DriverConfig &C, bool Writes) {
  unsigned Modes = bool(C.OutputFile) + !C.OutputDir.empty() + C.InPlace;
  if (Modes > 1)
    return createStringError("-o, --output-dir and --in-place exclude each "
                             "other");
  if (C.Recursive && C.OutputFile)
    return createStringError("-r writes many files: use --in-place or "
                             "--output-dir=DIR, not -o");
  // Standard input can be read once.
  if (llvm::count(C.Inputs, "-") > 1)
    return createStringError("standard input ('-') is given more than once");
  std::vector<std::string> Relative;
  Plan P = expandInputs(C, Relative);
  if (C.OutputFile && P.Jobs.size() > 1)
    return createStringError("-o names one output but there are " +
                             Twine(P.Jobs.size()) +
                             " inputs; use --output-dir=DIR or --in-place");
  StringMap<std::string> Claimed;
  for (size_t I = 0; I < P.Jobs.size(); ++I) {
    Job &J = P.Jobs[I];
    if (C.DisableOutput || !J.PresetError.empty())
      continue;
    Expected<std::string> Out =
        outputFor(C, J.In, Relative[I], P.Jobs.size(), Writes, Claimed);
    if (!Out)
      return Out.takeError();
    // In place, a path too long to open is written by its short name.
    if (C.InPlace && !J.OpenIn.empty())
      *Out = J.OpenIn;
    J.Out = C.DryRun ? "" : *Out;
    if (C.DryRun)
      J.DryOut = *Out;
    // The other names of the file: in place, themselves; mirrored, theirs
    // under the output directory.
    if (!J.Out.empty() && (C.InPlace || !C.OutputDir.empty()))
      for (size_t A = 0; A < J.AliasIns.size(); ++A) {
        Expected<std::string> AliasOut =
            outputFor(C, J.AliasIns[A], J.AliasRelatives[A], P.Jobs.size(),
                      Writes, Claimed);
        if (!AliasOut)
          return AliasOut.takeError();
        J.AliasOuts.push_back(std::move(*AliasOut));
      }
    // Like opt: never a binary object on a terminal (-o - included).
    if (J.Out == "-" && sys::Process::StandardOutIsDisplayed())
      return createStringError("refusing to write a binary file to a "
                               "terminal; use -o FILE, --output-dir=DIR, "
                               "--in-place or -disable-output");
  }
  return std::move(P);
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
                                   bool Buffered) {
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
  Opts.ThreadPool = Pool && !Buffered ? &*Pool : nullptr;
  Opts.KeepGoing = C.KeepGoing;
  Opts.ZeroOldBundles = C.ZeroOldBundles;
  Opts.CountKernels = C.DryRun;
  Opts.OnCodeObjectsFound = [this](unsigned Count) {
    std::lock_guard<std::mutex> G(Lock);
    Prog->codeObjectsFound(Count);
  };
  Opts.OnCodeObjectDone = [this, &J](uint64_t Bytes) {
    std::lock_guard<std::mutex> G(Lock);
    J.CountedBytes += Bytes;
    Prog->codeObjectDone(Bytes);
  };
  // Written straight to the terminal, a warning first erases the progress
  // line.
  Opts.Warn = [this, &Diag, Name = displayName(J.In),
               Buffered](const Twine &M) {
    if (!Buffered) {
      std::lock_guard<std::mutex> G(Lock);
      Prog->clear();
    }
    WithColor::warning(Diag, ToolName)
        << "'" << printable(Name)
        << "': " << printable(M.str(), /*KeepNewlines=*/true) << "\n";
  };
  if (Instrumented) {
    Opts.Instrumentation = &PI;
    Opts.OnCodeObject = [this](StringRef Entry) {
      Debug.beginCodeObject(Entry);
    };
  }
  return Opts;
}

/// The pipeline on one input up to what waits for its digest, after making
/// the directory its output goes into (a tree mirrored under
/// --output-dir).
static Expected<FileRewrite> startJob(const Job &J, const DriverConfig &C,
                                      const PipelineOptions &Opts,
                                      RunSummary &Summary) {
  if (!J.PresetError.empty())
    return createFileError(J.In, createStringError(J.PresetError));
  if (C.Recursive && !C.OutputDir.empty() && !J.Out.empty()) {
    StringRef Parent = sys::path::parent_path(J.Out);
    if (!Parent.empty())
      if (std::error_code EC = sys::fs::create_directories(
              Parent, /*IgnoreExisting=*/true, sys::fs::all_all))
        return createFileError(Parent, EC);
  }
  return FileRewrite::start(J.OpenIn.empty() ? J.In : J.OpenIn, J.Out, C.Passes,
                            Opts, &Summary);
}

/// Makes each of \p J's AliasOuts a hard link to its output, which was
/// written: by a rename of a link made next to it, so the alias is never
/// missing nor half made.
static Error linkAliases(const Job &J, const DriverConfig &C) {
  if (J.AliasOuts.empty() || (C.InPlace && !J.Summary.OutputChanged))
    return Error::success(); // in place and unchanged: still one file
  for (const std::string &Alias : J.AliasOuts) {
    StringRef Parent = sys::path::parent_path(Alias);
    if (!Parent.empty())
      if (std::error_code EC = sys::fs::create_directories(
              Parent, /*IgnoreExisting=*/true, sys::fs::all_all))
        return createFileError(Parent, EC);
    std::error_code EC;
    SmallString<256> Tmp;
    for (int Try = 0; Try < 100; ++Try) {
      sys::fs::createUniquePath(Alias + TemporarySuffix, Tmp,
                                /*MakeAbsolute=*/false);
      EC = sys::fs::create_hard_link(J.Out, Tmp);
      if (EC != std::errc::file_exists)
        break;
    }
    if (!EC)
      EC = sys::fs::rename(Tmp, Alias);
    if (EC) {
      sys::fs::remove(Tmp);
      return createFileError(
          Alias, make_error<StringError>(
                     "cannot make it a link to '" + J.Out +
                         "', another name of the file: " + EC.message(),
                     EC));
    }
  }
  return Error::success();
}

/// --dry-run: fails unless the output \p Out could be put in place: its
/// directory (the nearest one that exists, under --output-dir) takes a new
/// file, and an existing output is not immutable.
static Error checkReplaceable(StringRef Out) {
  if (Out.empty() || Out == "-")
    return Error::success();
  auto Refused = [](int Err) {
    return std::error_code(Err, std::generic_category());
  };
  SmallString<256> Dir(sys::path::parent_path(Out));
  if (Dir.empty())
    Dir = ".";
  while (!sys::fs::is_directory(Dir) && sys::path::has_parent_path(Dir))
    Dir = sys::path::parent_path(Dir);
  if (::access(Dir.c_str(), W_OK | X_OK) != 0)
    return createFileError(
        Out, createStringError(Refused(errno),
                               "would change, but the directory '" + Dir +
                                   "' does not take a new file: " +
                                   Refused(errno).message()));
  // Mode bits do not stop a rename; an immutable file does (EPERM).
  SmallString<256> Path(Out);
  if (::access(Path.c_str(), W_OK) != 0 && errno == EPERM)
    return createFileError(
        Out, createStringError(Refused(EPERM),
                               "would change, but the file cannot be "
                               "replaced: " +
                                   Refused(EPERM).message()));
  return Error::success();
}

/// --dry-run's line for an input that did not fail.
static void printDryRun(raw_ostream &OS, const Job &J) {
  const RunSummary &S = J.Summary;
  OS << (S.OutputChanged ? "would change: " : "unchanged: ")
     << displayName(J.In) << " (" << bundle::inputKindName(S.Kind) << ", "
     << S.CodeObjects
     << (S.CodeObjects == 1 ? " code object, " : " code objects, ") << S.Kernels
     << (S.Kernels == 1 ? " kernel" : " kernels") << ")\n";
}

/// --dry-run --kernels-format=json: one element of the array.
static json::Value dryRunJSON(const Job &J) {
  json::Object O{{"file", displayName(J.In)}};
  if (J.Failed) {
    O["error"] = true;
    return std::move(O);
  }
  O["kind"] = bundle::inputKindName(J.Summary.Kind);
  O["changes"] = J.Summary.OutputChanged;
  O["codeObjects"] = J.Summary.CodeObjects;
  O["codeObjectsChanged"] = J.Summary.Changed;
  O["kernels"] = J.Summary.Kernels;
  return std::move(O);
}

/// A job between start() and end(): where it reports, and its rewrite.
struct Runner::Started {
  explicit Started(Job &J) : J(J), TextBuf(J.Text), DiagBuf(J.Diag) {}
  Job &J;
  bool Buffered = false;
  raw_string_ostream TextBuf, DiagBuf;
  PipelineOptions Opts;
  /// What start() made of it (set by start()).
  std::optional<Expected<FileRewrite>> Rewrite;

  raw_ostream &diag() {
    return Buffered ? static_cast<raw_ostream &>(DiagBuf) : errs();
  }
  raw_ostream &text(raw_ostream &Direct) {
    return Buffered ? static_cast<raw_ostream &>(TextBuf) : Direct;
  }
};

std::unique_ptr<Runner::Started> Runner::start(Job &J, bool Buffered) {
  auto S = std::make_unique<Started>(J);
  S->Buffered = Buffered;
  S->Opts = optionsFor(J, S->text(TextOut), S->diag(), Buffered);
  if (C.TimePasses)
    Times.start("(read, lay out and write)");
  S->Rewrite.emplace(startJob(J, C, S->Opts, J.Summary));
  return S;
}

void Runner::end(Started &S) {
  Job &J = S.J;
  Expected<FileRewrite> &R = *S.Rewrite;
  Error E = R ? R->finish() : R.takeError();
  S.Rewrite.reset();
  if (!E)
    E = linkAliases(J, C);
  if (!E && C.DryRun && J.Summary.OutputChanged)
    E = checkReplaceable(J.DryOut);
  if (C.TimePasses)
    Times.stop();
  if (!E && C.DryRun && !C.JSON)
    printDryRun(S.text(TextOut), J);
  if (E) {
    J.Failed = true;
    if (!S.Buffered) {
      std::lock_guard<std::mutex> G(Lock);
      Prog->clear();
    }
    raw_ostream &D = S.diag();
    handleAllErrors(
        std::move(E),
        [&](const FileError &FE) {
          // (A short name of a deep file is named by its path.)
          StringRef Name = FE.getFileName();
          reportError(D,
                      displayName(!J.OpenIn.empty() && Name == J.OpenIn
                                      ? StringRef(J.In)
                                      : Name),
                      FE.messageWithoutFileInfo());
        },
        [&](const ErrorInfoBase &EI) {
          reportError(D, displayName(J.In), EI.message());
        });
  }
  if (!S.Buffered)
    S.diag().flush();
}

void Runner::runInTurn(std::vector<Job> &Jobs, std::atomic<size_t> &Next,
                       const std::function<void(size_t)> &Finish) {
  // Jobs started and not ended, oldest first. Ending one hashes what is
  // left of its input with the others' along, one at a time; with two
  // others a file much larger than the next is rarely left to hash alone
  // (measured on librocsparse0's 777 objects, --threads=2: 2% of the
  // hashing single-lane with two, 5% with one, 2% with three). Large inputs
  // keep one other: what a started input holds (its model, its mapped
  // pages) grows with it.
  constexpr size_t Others = 2;
  constexpr uint64_t ManyBytes = 256u << 20;
  std::deque<std::unique_ptr<Started>> InFlight;
  uint64_t InFlightBytes = 0;
  auto EndOldest = [&] {
    Started &S = *InFlight.front();
    const size_t I = &S.J - Jobs.data();
    end(S);
    InFlightBytes -= S.J.Bytes;
    InFlight.pop_front();
    Finish(I);
  };
  for (size_t I; (I = Next.fetch_add(1)) < Jobs.size();) {
    InFlight.push_back(start(Jobs[I], /*Buffered=*/true));
    InFlightBytes += Jobs[I].Bytes;
    while (InFlight.size() > Others ||
           (InFlight.size() > 1 && InFlightBytes > ManyBytes))
      EndOldest();
  }
  while (!InFlight.empty())
    EndOldest();
}

void Runner::run(std::vector<Job> &Jobs) {
  uint64_t TotalBytes = 0;
  for (Job &J : Jobs) {
    sys::fs::file_status St;
    if (J.In != "-" && !sys::fs::status(J.OpenIn.empty() ? J.In : J.OpenIn, St))
      J.Bytes = St.getSize();
    TotalBytes += J.Bytes;
  }
  Prog.emplace(Jobs.size(), TotalBytes, C.ProgressAfterMs, errs(),
               sys::Process::StandardErrIsDisplayed());
  Done.assign(Jobs.size(), false);
  // Several inputs: their text and diagnostics are buffered and flushed in
  // input order, each thread runs them in turn (runInTurn), on every
  // thread of the pool. Instrumentation needs one input at a time.
  const bool Buffered = !Instrumented && Jobs.size() > 1;
  auto Finish = [&](size_t I) {
    std::lock_guard<std::mutex> G(Lock);
    Done[I] = true;
    Prog->inputDone(Jobs[I].Bytes, Jobs[I].CountedBytes);
    if (Buffered)
      flushInOrder(Jobs);
  };
  if (Buffered) {
    std::atomic<size_t> Next{0};
    const size_t Threads =
        Pool ? std::min<size_t>(Pool->getMaxConcurrency(), Jobs.size()) : 1;
    if (Threads > 1) {
      ThreadPoolTaskGroup Tasks(*Pool);
      for (size_t T = 0; T < Threads; ++T)
        Tasks.async([&] { runInTurn(Jobs, Next, Finish); });
      Tasks.wait();
    } else {
      runInTurn(Jobs, Next, Finish);
    }
  } else {
    for (size_t I = 0; I < Jobs.size(); ++I) {
      end(*start(Jobs[I], /*Buffered=*/false));
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

void Runner::printSummary(const Plan &P) {
  ArrayRef<Job> Jobs = P.Jobs;
  if (C.DryRun && C.JSON) {
    json::Array A;
    for (const Job &J : Jobs)
      A.push_back(dryRunJSON(J));
    TextOut << formatv("{0:2}", json::Value(std::move(A))) << "\n";
  }
  unsigned Rewritten = 0, Unchanged = 0, Failed = 0;
  unsigned CodeObjects = 0, CodeObjectsChanged = 0, CodeObjectsFailed = 0,
           Kernels = 0;
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
    Kernels += J.Summary.Kernels;
    AnyContainer |= !J.Failed &&
                    J.Summary.Kind != bundle::InputKind::CodeObject &&
                    J.Summary.Kind != bundle::InputKind::Unknown;
  }
  if (Jobs.size() > 1 || (AnyContainer && !Failed) || C.Recursive || C.DryRun) {
    // -passes=restore gives files back rather than rewriting them (a
    // pipeline has no spaces: the text is exactly the pass's name).
    const bool Restore = C.Passes == "restore";
    errs() << ToolName << ": " << Jobs.size()
           << (Jobs.size() == 1 ? " input: " : " inputs: ") << Rewritten
           << (C.DryRun  ? " would change, "
               : Restore ? " restored, "
                         : " rewritten, ")
           << Unchanged << " unchanged, " << Failed << " failed ("
           << CodeObjects
           << (CodeObjects == 1 ? " code object: " : " code objects: ")
           << CodeObjectsChanged
           << (C.DryRun  ? " would change"
               : Restore ? " restored"
                         : " changed");
    if (C.DryRun)
      errs() << "; " << Kernels << (Kernels == 1 ? " kernel" : " kernels");
    if (CodeObjectsFailed)
      errs() << ", " << CodeObjectsFailed << " failed, left as they were";
    errs() << ")";
    if (C.Recursive)
      errs() << "; " << P.NotGPU << (P.NotGPU == 1 ? " file" : " files")
             << " not GPU code, " << P.Links
             << (P.Links == 1 ? " link" : " links") << " not followed";
    if (C.Recursive && P.Temporaries)
      errs() << ", " << P.Temporaries
             << (P.Temporaries == 1 ? " temporary" : " temporaries")
             << " of a run (NAME.tmpXXXXXXX) left out";
    errs() << "\n";
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
