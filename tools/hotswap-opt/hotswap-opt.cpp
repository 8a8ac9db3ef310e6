//===- tools/hotswap-opt/hotswap-opt.cpp - The driver ---------------------===//
//
// opt-shaped driver: read inputs (code objects, offload bundles, HIP host
// binaries), run a -passes= pipeline on every code object they hold, write
// each result atomically. All the work is in the library; this file turns
// options into PipelineOptions, schedules inputs on a thread pool, and turns
// errors into "hotswap-opt: error: 'FILE': message" with exit status 1.
//
//===----------------------------------------------------------------------===//

#include "Instrument.h"

#include "hotswap/Hotswap.h"
#include "hotswap/Support/LargeBuffer.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/Timer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <mutex>

using namespace llvm;
using namespace hotswap;

static cl::OptionCategory Cat("hotswap-opt options");

static cl::list<std::string> InputFilenames(cl::Positional,
                                            cl::desc("<input>..."),
                                            cl::ZeroOrMore, cl::cat(Cat));
static cl::opt<std::string>
    OutputFilename("o",
                   cl::desc("Output file for one input ('-' for stdout; "
                            "may equal the input, which is replaced "
                            "atomically)"),
                   cl::value_desc("filename"), cl::cat(Cat));
static cl::opt<std::string>
    OutputDir("output-dir",
              cl::desc("Write each output under its input's file name in this "
                       "directory (created if missing)"),
              cl::value_desc("dir"), cl::cat(Cat));
static cl::opt<bool> InPlace("in-place",
                             cl::desc("Replace each input with its output, "
                                      "atomically (unchanged inputs are not "
                                      "touched)"),
                             cl::cat(Cat));
static cl::alias InPlaceShort("i", cl::desc("Alias for --in-place"),
                              cl::NotHidden, cl::aliasopt(InPlace),
                              cl::cat(Cat));
static cl::opt<unsigned> Threads(
    "threads",
    cl::desc("Threads for inputs and the code objects of containers "
             "(default: all cores; 1: everything on one thread). Outputs "
             "never depend on it"),
    cl::value_desc("N"), cl::init(0), cl::cat(Cat));
static cl::opt<unsigned> ProgressAfter(
    "progress-after", cl::Hidden,
    cl::desc("On a terminal, show progress once the work has taken this "
             "many milliseconds (default 500)"),
    cl::value_desc("ms"), cl::init(500), cl::cat(Cat));
static cl::opt<bool> KeepGoing(
    "keep-going",
    cl::desc("In a container, leave a code object that fails as it was "
             "(reported) instead of failing the whole input"),
    cl::cat(Cat));
static cl::opt<bool> ZeroOldBundles(
    "zero-old-bundles",
    cl::desc("HIP host binaries: fill the replaced bundles with zeros"),
    cl::cat(Cat));
static cl::opt<std::string>
    Passes("passes",
           cl::desc("Pipeline to run, e.g. 'trampoline,stub-syms' (see "
                    "--print-passes)"),
           cl::value_desc("pipeline"), cl::cat(Cat));
static cl::alias PassesShort("p", cl::desc("Alias for -passes"), cl::NotHidden,
                             cl::aliasopt(Passes), cl::cat(Cat));
static cl::opt<bool>
    PrintPasses("print-passes", cl::desc("Print every available pass and exit"),
                cl::cat(Cat));
static cl::opt<bool> PrintPipelinePasses(
    "print-pipeline-passes",
    cl::desc("Print the canonical form of the -passes pipeline and exit"),
    cl::cat(Cat));
static cl::opt<bool>
    DebugPM("debug-pass-manager",
            cl::desc("Print each pass as it runs or is skipped (and why), "
                     "and each analysis as it is computed"),
            cl::cat(Cat));
static cl::opt<bool> PrintAfterAll(
    "print-after-all",
    cl::desc("Print what every pass changed (sections, segments, symbols, "
             "bytes rewritten in place)"),
    cl::cat(Cat));
static cl::list<std::string>
    PrintAfter("print-after", cl::desc("Print what the named pass changed"),
               cl::value_desc("pass"), cl::CommaSeparated, cl::cat(Cat));
static cl::opt<bool>
    TimePassesOpt("time-passes",
                  cl::desc("Time each pass and analysis and print a report"),
                  cl::cat(Cat));
static cl::opt<bool> VerifyEach(
    "verify-each",
    cl::desc("Run 'verify' after every pass that changed the object"),
    cl::cat(Cat));
static cl::opt<bool> VerifyAnalysisPreservation(
    "verify-analysis-preservation", cl::Hidden,
    cl::desc("After each pass that kept the kernels analysis up to date, "
             "compare it with a fresh one (for testing the passes)"),
    cl::cat(Cat));
static cl::opt<bool> Strict(
    "strict",
    cl::desc("Treat unmet preconditions and best-effort failures as errors"),
    cl::cat(Cat));
static cl::opt<bool> DisableOutput("disable-output",
                                   cl::desc("Run the pipeline, write nothing"),
                                   cl::cat(Cat));
enum class Format { Text, JSON };
static cl::opt<Format> KernelsFormat(
    "kernels-format", cl::desc("Output format of print<kernels> and -stats"),
    cl::values(clEnumValN(Format::Text, "text", "human readable (default)"),
               clEnumValN(Format::JSON, "json", "JSON, for tools")),
    cl::init(Format::Text), cl::cat(Cat));

static StringRef ToolName = "hotswap-opt";

static std::string displayName(StringRef File) {
  return File == "-" ? "<stdin>" : File.str();
}

/// "hotswap-opt: error: 'FILE': message" (without FILE when empty).
static void reportError(raw_ostream &OS, StringRef File, const Twine &Msg) {
  WithColor::error(OS, ToolName);
  if (!File.empty())
    OS << "'" << File << "': ";
  OS << Msg << "\n";
}

[[noreturn]] static void fail(StringRef File, const Twine &Msg) {
  reportError(errs(), File, Msg);
  errs().flush();
  exit(1);
}

static void printVersion(raw_ostream &OS) {
  OS << "hotswap-opt " << getVersionString() << " (LLVM " << LLVM_VERSION_STRING
     << ")\n"
     << "  AMDGPU code object rewriter: kernel-entry trampolines, stub "
        "symbols\n";
}

namespace {
/// One input and everything its run produced.
struct Job {
  std::string In, Out; // Out empty: nothing is written
  RunSummary Summary;
  bool Failed = false;
  /// Buffered output (several inputs at once), flushed in input order.
  std::string Text, Diag;
  Statistics Stats;
  TimeRecord Time;
  uint64_t Bytes = 0;
};

/// One updating line on a terminal: inputs done / total (when there are
/// several), code objects of containers done (when there are any) and MB/s.
/// Shown once the work has taken ProgressAfter; every call is made with the
/// driver's lock held.
class Progress {
public:
  Progress(size_t Total)
      : Total(Total), Enabled(sys::Process::StandardErrIsDisplayed()),
        Start(std::chrono::steady_clock::now()) {}
  /// An input is done; \p Bytes is its size, \p InFlight what of it was
  /// already counted by codeObjectDone.
  void inputDone(uint64_t Bytes, uint64_t InFlight) {
    ++Done;
    this->Bytes += Bytes - std::min(Bytes, InFlight);
    // A single bare code object has nothing to show.
    if (Total > 1 || CodeObjects)
      show(/*Final=*/Done == Total && Total > 1);
  }
  /// A code object of a container is done.
  void codeObjectDone(uint64_t Bytes) {
    ++CodeObjects;
    this->Bytes += Bytes;
    show(/*Final=*/false);
  }
  void clear() {
    if (Shown)
      errs() << "\r\x1b[K";
    Shown = false;
  }

private:
  void show(bool Final) {
    if (!Enabled)
      return;
    double S =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
            .count();
    if (S * 1000 < ProgressAfter && !Final)
      return; // only when the work takes more than a moment
    errs() << "\r";
    if (Total > 1)
      errs() << format("%zu/%zu inputs, ", Done, Total);
    if (CodeObjects)
      errs() << CodeObjects
             << (CodeObjects == 1 ? " code object, " : " code objects, ");
    errs() << format("%.1f MB/s", S > 0 ? Bytes / S / 1e6 : 0.0);
    Shown = true;
  }
  size_t Total, Done = 0, CodeObjects = 0;
  uint64_t Bytes = 0;
  bool Enabled, Shown = false;
  std::chrono::steady_clock::time_point Start;
};
} // namespace

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Cat);
  if (auto *O = cl::getRegisteredOptions().lookup("stats")) {
    O->setDescription("Print per-pass counters (kernels, stubs, symbols, ...)");
    O->setHiddenFlag(cl::NotHidden);
    O->addCategory(Cat);
  }
  cl::SetVersionPrinter(printVersion);
  cl::extrahelp More(R"(
Rewrites AMDGPU code objects after the compiler is done: bare code objects,
offload bundles (plain or compressed) and HIP host executables and libraries,
each written back as the same kind. Nothing that is loaded moves: new code
goes into a new last PT_LOAD.

Examples:
  hotswap-opt -passes=trampoline,stub-syms in.co -o out.co
      install a 256-byte entry stub for every kernel and name each stub
  hotswap-opt -passes=trampoline,stub-syms --output-dir=out lib/*.co
      many inputs at once, on all cores; each output under its input's name
  hotswap-opt -passes=trampoline,stub-syms -i libfoo.so
      every code object of a HIP library, replaced in place
  hotswap-opt -passes='print<kernels>' in.co
      list kernels, descriptors, entries and stubs (no output written)
  hotswap-opt -passes='synth-trampolines<prologue=gfx1250-vmem>,patch-descriptors' in.co -o out.co
      stubs that run the gfx1250 erratum prologue first
  hotswap-opt -passes=verify out.co
      check any code object, decoding and emulating every stub
  hotswap-opt --print-passes
      every pass, alias and analysis

Pass parameters (LLVM's name<params> form, ';'-separated):
  synth-trampolines<prologue=none|gfx1250-vmem|asm:FILE;only=REGEX;
                    form=auto|long;skip-unwrappable>
      prologue   code every stub runs before the jump (gfx1250 erratum pair,
                 or your assembly, checked not to write live registers)
      only       wrap only kernels whose name matches REGEX
      form=long  never use the short s_branch form
      skip-unwrappable  warn about (instead of failing on) kernels that have
                 no free scratch SGPRs

Every pass declares the invariant it establishes and is skipped when it
already holds (-debug-pass-manager shows it), so running a pipeline on its own
output changes nothing.
)");
  // Options may also come from HOTSWAP_OPT_OPTIONS (the test suite turns
  // on -verify-analysis-preservation that way).
  cl::ParseCommandLineOptions(argc, argv,
                              "hotswap-opt: AMDGPU code object rewriter\n",
                              nullptr, nullptr, "HOTSWAP_OPT_OPTIONS");

  PassBuilder PB;
  if (PrintPasses) {
    PB.printPassNames(outs());
    return 0;
  }

  PassManager PM;
  if (Error E = PB.parsePassPipeline(PM, Passes))
    fail("", toString(std::move(E)));

  if (PrintPipelinePasses) {
    std::string Text;
    raw_string_ostream OS(Text);
    PM.printPipeline(OS);
    // The canonical text must parse back to the same pipeline.
    PassManager Again;
    if (Error E = PB.parsePassPipeline(Again, Text))
      fail("",
           "canonical pipeline does not parse back: " + toString(std::move(E)));
    std::string Text2;
    raw_string_ostream OS2(Text2);
    Again.printPipeline(OS2);
    if (Text2 != Text)
      fail("",
           "canonical pipeline '" + Text + "' prints back as '" + Text2 + "'");
    outs() << Text << "\n";
    return 0;
  }

  bool HasTransform = false;
  for (const auto &P : PM.passes())
    HasTransform |= P->isTransform();
  bool Writes = !DisableOutput && (HasTransform || PM.empty());

  // Where each input's output goes.
  std::vector<std::string> Inputs(InputFilenames.begin(), InputFilenames.end());
  if (Inputs.empty())
    Inputs.push_back("-");
  unsigned Modes = (OutputFilename.getNumOccurrences() != 0) +
                   (!OutputDir.empty()) + bool(InPlace);
  if (Modes > 1)
    fail("", "-o, --output-dir and --in-place exclude each other");
  if (OutputFilename.getNumOccurrences() && Inputs.size() > 1)
    fail("", "-o names one output but there are " + Twine(Inputs.size()) +
                 " inputs; use --output-dir=DIR or --in-place");
  // Standard input can be read once.
  if (llvm::count(Inputs, "-") > 1)
    fail("", "standard input ('-') is given more than once");
  std::vector<Job> Jobs(Inputs.size());

  // A code object's run allocates megabytes in blocks of hundreds of KiB;
  // from a huge-page heap they cost a few page faults instead of a thousand
  // (librocsparse0's largest objects: -31% to -36% wall time). The heap keeps
  // what is freed, though: a whole HIP library (hundreds of MiB, its code
  // objects rewritten one after another) keeps malloc's defaults, which
  // give every large block back.
  constexpr uint64_t HugeHeapMaxInput = uint64_t(256) << 20;
  if (llvm::all_of(Inputs, [&](const std::string &In) {
        uint64_t Size;
        return In != "-" && !sys::fs::file_size(In, Size) &&
               Size <= HugeHeapMaxInput;
      }))
    (void)useHugePagesForTheHeap();
  StringMap<std::string> Claimed;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    Job &J = Jobs[I];
    J.In = Inputs[I];
    if (DisableOutput)
      continue;
    if (OutputFilename.getNumOccurrences()) {
      J.Out = OutputFilename;
    } else if (InPlace) {
      if (J.In == "-")
        fail("", "--in-place needs input files, not standard input");
      J.Out = J.In;
    } else if (!OutputDir.empty()) {
      if (J.In == "-")
        fail("", "--output-dir needs input files, not standard input");
      SmallString<256> P(OutputDir);
      sys::path::append(P, sys::path::filename(J.In));
      J.Out = std::string(P);
      auto [It, New] = Claimed.try_emplace(J.Out, J.In);
      if (!New)
        fail("", "inputs '" + It->second + "' and '" + J.In +
                     "' would both be written to '" + J.Out + "'");
    } else if (Writes) {
      if (Inputs.size() > 1)
        fail("", Twine(Inputs.size()) +
                     " inputs need --output-dir=DIR or --in-place (or "
                     "-disable-output)");
      J.Out = "-";
    }
    // Like opt: never a binary object on a terminal (-o - included).
    if (J.Out == "-" && sys::Process::StandardOutIsDisplayed())
      fail("", "refusing to write a binary file to a terminal; use -o "
               "FILE, --output-dir=DIR, --in-place or -disable-output");
  }
  if (!OutputDir.empty() && !DisableOutput)
    if (std::error_code EC = sys::fs::create_directories(OutputDir))
      fail(OutputDir, "cannot create the output directory: " + EC.message());

  // Text (print<...>, -print-after) goes to stdout, unless an object does:
  // then to stderr, so that the object is not corrupted.
  bool ObjectOnStdout =
      llvm::any_of(Jobs, [](const Job &J) { return J.Out == "-"; });
  raw_ostream &TextOut = ObjectOnStdout ? errs() : outs();

  // Debugging output needs one code object at a time, in order.
  PassTimes Times;
  DebugPrinter Debug(
      errs(), TextOut, DebugPM, PrintAfterAll,
      std::vector<std::string>(PrintAfter.begin(), PrintAfter.end()));
  PassInstrumentation PI;
  Debug.attach(PI);
  if (TimePassesOpt)
    Times.attach(PI);
  bool Instrumented = Debug.enabled() || TimePassesOpt;

  unsigned NThreads = Threads
                          ? unsigned(Threads)
                          : llvm::hardware_concurrency().compute_thread_count();
  std::optional<DefaultThreadPool> Pool;
  if (NThreads > 1)
    Pool.emplace(llvm::hardware_concurrency(NThreads));
  bool ParallelInputs = Pool && !Instrumented && Jobs.size() > 1;

  std::mutex Lock; // guards what jobs report while others run
  Progress Prog(Jobs.size());
  size_t NextToFlush = 0;
  std::vector<bool> Done(Jobs.size(), false);
  Statistics AllStats;
  auto FlushInOrder = [&] {
    while (NextToFlush < Jobs.size() && Done[NextToFlush]) {
      Job &J = Jobs[NextToFlush++];
      Prog.clear();
      TextOut << J.Text;
      errs() << J.Diag;
      AllStats.merge(J.Stats);
    }
  };

  auto RunJob = [&](size_t Index) {
    Job &J = Jobs[Index];
    // Buffered when inputs run at once; direct otherwise.
    raw_string_ostream TextBuf(J.Text), DiagBuf(J.Diag);
    raw_ostream &T =
        ParallelInputs ? static_cast<raw_ostream &>(TextBuf) : TextOut;
    raw_ostream &D =
        ParallelInputs ? static_cast<raw_ostream &>(DiagBuf) : errs();
    PipelineOptions Opts;
    Opts.Strict = Strict;
    Opts.VerifyEach = VerifyEach;
    Opts.VerifyAnalysisPreservation = VerifyAnalysisPreservation;
    Opts.PrintOut = &T;
    Opts.JSON = KernelsFormat == Format::JSON;
    Opts.Builder = &PB;
    Opts.StatsOut = &J.Stats;
    // Inputs running at once are the unit of parallel work; inside each,
    // everything runs on its thread (see Bundles.cpp).
    Opts.ThreadPool = Pool && !ParallelInputs ? &*Pool : nullptr;
    Opts.KeepGoing = KeepGoing;
    Opts.ZeroOldBundles = ZeroOldBundles;
    uint64_t InFlight = 0; // code object bytes the progress line counted
    Opts.OnCodeObjectDone = [&](uint64_t Bytes) {
      std::lock_guard<std::mutex> G(Lock);
      InFlight += Bytes;
      Prog.codeObjectDone(Bytes);
    };
    std::string Name = displayName(J.In);
    // Written straight to the terminal, a diagnostic first erases the
    // progress line.
    auto clearProgress = [&] {
      if (!ParallelInputs) {
        std::lock_guard<std::mutex> G(Lock);
        Prog.clear();
      }
    };
    Opts.Warn = [&D, Name, &clearProgress](const Twine &Msg) {
      clearProgress();
      WithColor::warning(D, ToolName) << "'" << Name << "': " << Msg << "\n";
    };
    if (Instrumented) {
      Opts.Instrumentation = &PI;
      Opts.OnCodeObject = [&Debug](StringRef Entry) {
        Debug.beginCodeObject(Entry);
      };
    }
    TimeRecord Start = TimeRecord::getCurrentTime(true);
    if (TimePassesOpt)
      Times.start("(read, lay out and write)");
    Error E = runPipelineOnFile(J.In, J.Out, Passes, Opts, &J.Summary);
    if (TimePassesOpt)
      Times.stop();
    J.Time = TimeRecord::getCurrentTime(false);
    J.Time -= Start;
    if (E) {
      J.Failed = true;
      clearProgress();
      handleAllErrors(
          std::move(E),
          [&](const FileError &FE) {
            reportError(D, displayName(FE.getFileName()),
                        FE.messageWithoutFileInfo());
          },
          [&](const ErrorInfoBase &EI) { reportError(D, Name, EI.message()); });
    }
    if (!ParallelInputs)
      D.flush();
    sys::fs::file_status St;
    if (J.In != "-" && !sys::fs::status(J.In, St))
      J.Bytes = St.getSize();
    std::lock_guard<std::mutex> G(Lock);
    Done[Index] = true;
    Prog.inputDone(J.Bytes, InFlight);
    if (ParallelInputs)
      FlushInOrder();
  };

  if (ParallelInputs) {
    ThreadPoolTaskGroup Tasks(*Pool);
    for (size_t I = 0; I < Jobs.size(); ++I)
      Tasks.async([&RunJob, I] { RunJob(I); });
    Tasks.wait();
  } else {
    for (size_t I = 0; I < Jobs.size(); ++I)
      RunJob(I);
    for (Job &J : Jobs)
      AllStats.merge(J.Stats);
  }
  Prog.clear();

  // Several inputs, or a container: say what happened to each.
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

  if (TimePassesOpt)
    Times.print(errs(), CodeObjects);
  // -stats is LLVM's own option (registered by libSupport); it prints our
  // per-pass counters.
  if (AreStatisticsEnabled()) {
    if (KernelsFormat == Format::JSON)
      AllStats.printJSON(errs());
    else
      AllStats.print(errs());
  }
  return Failed ? 1 : 0;
}
