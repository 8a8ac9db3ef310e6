//===- tools/hotswap-opt/hotswap-opt.cpp - The driver ---------------------===//
//
// opt-shaped driver: read a code object, run a -passes= pipeline over the ELF
// model, write the result atomically. All the work is in the library; this
// file turns options into PipelineOptions/instrumentation and errors into
// "hotswap-opt: error: 'FILE': message" with exit status 1.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Hotswap.h"
#include "hotswap/Object/InputFile.h"
#include "hotswap/Object/OutputFile.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Object/Summary.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Process.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Timer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;
using namespace hotswap;

static cl::OptionCategory Cat("hotswap-opt options");

static cl::opt<std::string> InputFilename(cl::Positional,
                                          cl::desc("<input code object>"),
                                          cl::init("-"), cl::cat(Cat));
static cl::opt<std::string>
    OutputFilename("o", cl::desc("Output file ('-' for stdout; may equal the "
                                 "input, which is replaced atomically)"),
                   cl::value_desc("filename"), cl::cat(Cat));
static cl::opt<std::string>
    Passes("passes",
           cl::desc("Pipeline to run, e.g. 'trampoline,stub-syms' (see "
                    "--print-passes)"),
           cl::value_desc("pipeline"), cl::cat(Cat));
static cl::alias PassesShort("p", cl::desc("Alias for -passes"), cl::NotHidden,
                             cl::aliasopt(Passes), cl::cat(Cat));
static cl::opt<bool> PrintPasses("print-passes",
                                 cl::desc("Print every available pass and exit"),
                                 cl::cat(Cat));
static cl::opt<bool> PrintPipelinePasses(
    "print-pipeline-passes",
    cl::desc("Print the canonical form of the -passes pipeline and exit"),
    cl::cat(Cat));
static cl::opt<bool>
    DebugPM("debug-pass-manager",
            cl::desc("Print each pass as it runs or is skipped, and why"),
            cl::cat(Cat));
static cl::opt<bool> PrintAfterAll(
    "print-after-all",
    cl::desc("Print what every pass changed (sections, segments, symbols, "
             "bytes rewritten in place)"),
    cl::cat(Cat));
static cl::list<std::string>
    PrintAfter("print-after", cl::desc("Print what the named pass changed"),
               cl::value_desc("pass"), cl::CommaSeparated, cl::cat(Cat));
static cl::opt<bool> TimePasses("time-passes",
                                cl::desc("Time each pass and print a report"),
                                cl::cat(Cat));
static cl::opt<bool>
    VerifyEach("verify-each",
               cl::desc("Run 'verify' after every pass that changed the object"),
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

[[noreturn]] static void fail(StringRef File, const Twine &Msg) {
  WithColor::error(errs(), ToolName);
  if (!File.empty())
    errs() << "'" << (File == "-" ? "<stdin>" : File) << "': ";
  errs() << Msg << "\n";
  errs().flush();
  exit(1);
}

static void printVersion(raw_ostream &OS) {
  OS << "hotswap-opt " << getVersionString() << " (LLVM "
     << LLVM_VERSION_STRING << ")\n"
     << "  AMDGPU code object rewriter: kernel-entry trampolines, stub "
        "symbols\n";
}

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
Rewrites an AMDGPU code object (ELF, EM_AMDGPU) after the compiler is done.
Nothing that is loaded moves: new code goes into a new last PT_LOAD.

Examples:
  hotswap-opt -passes=trampoline,stub-syms in.co -o out.co
      install a 256-byte entry stub for every kernel and name each stub
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
  cl::ParseCommandLineOptions(argc, argv,
                              "hotswap-opt: AMDGPU code object rewriter\n");

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
      fail("", "canonical pipeline does not parse back: " +
                   toString(std::move(E)));
    std::string Text2;
    raw_string_ostream OS2(Text2);
    Again.printPipeline(OS2);
    if (Text2 != Text)
      fail("", "canonical pipeline '" + Text + "' prints back as '" + Text2 +
                   "'");
    outs() << Text << "\n";
    return 0;
  }

  bool HasTransform = false;
  for (const auto &P : PM.passes())
    HasTransform |= P->isTransform();

  std::string Out = OutputFilename;
  if (DisableOutput)
    Out.clear();
  else if (OutputFilename.getNumOccurrences() == 0) {
    if (!HasTransform && !PM.empty())
      Out.clear(); // only printing/checking: like opt -disable-output
    else {
      Out = "-";
      if (sys::Process::StandardOutIsDisplayed())
        fail("", "refusing to write a binary code object to a terminal; use "
                 "-o FILE (or -disable-output)");
    }
  }

  Expected<InputFile> In = InputFile::open(InputFilename);
  if (!In)
    fail(InputFilename, toString(In.takeError()));
  Expected<std::unique_ptr<Object>> ObjOrErr = readObject(In->buffer());
  if (!ObjOrErr)
    fail(InputFilename, toString(ObjOrErr.takeError()));
  Object &Obj = **ObjOrErr;

  PipelineOptions Opts;
  Opts.Strict = Strict;
  Opts.VerifyEach = VerifyEach;
  // Text (print<...>, -print-after) goes to stdout, unless the code object
  // itself does: then to stderr, so that the object is not corrupted.
  raw_ostream &TextOut = Out == "-" ? errs() : outs();
  Opts.PrintOut = &TextOut;
  Opts.JSON = KernelsFormat == Format::JSON;
  Opts.Warn = [&](const Twine &Msg) {
    WithColor::warning(errs(), ToolName)
        << "'" << (InputFilename == "-" ? "<stdin>" : InputFilename.getValue())
        << "': " << Msg << "\n";
  };
  Statistics RunStats;
  Opts.StatsOut = &RunStats;

  PassInstrumentation PI;
  if (DebugPM) {
    PI.BeforePass.push_back([](const Pass &P, const Object &) {
      errs() << "Running pass: " << P.name() << "\n";
    });
    PI.SkippedPass.push_back([](const Pass &P, StringRef Why) {
      errs() << "Skipping pass: " << P.name() << " (" << Why << ")\n";
    });
    PI.AfterPass.push_back([](const Pass &P, Object &, bool Changed) {
      if (P.isTransform())
        errs() << "  " << P.name() << ": "
               << (Changed ? "changed the object" : "no change") << "\n";
      return Error::success();
    });
  }

  // -print-after(-all): snapshot before each pass, diff after.
  StringSet<> PrintAfterSet;
  for (const std::string &N : PrintAfter)
    PrintAfterSet.insert(N);
  std::optional<ObjectSnapshot> Snap;
  if (PrintAfterAll || !PrintAfterSet.empty()) {
    PI.BeforePass.push_back([&](const Pass &P, const Object &O) {
      if (PrintAfterAll || PrintAfterSet.count(P.name()))
        Snap = ObjectSnapshot::take(O);
    });
    PI.AfterPass.push_back([&](const Pass &P, Object &O, bool) {
      if (!(PrintAfterAll || PrintAfterSet.count(P.name())) || !Snap)
        return Error::success();
      TextOut << "*** After " << P.name() << " ***\n";
      Snap->printDiff(O, TextOut);
      Snap.reset();
      return Error::success();
    });
  }

  // -time-passes.
  struct Timing {
    std::string Name;
    double Seconds;
  };
  std::vector<Timing> Timings;
  std::chrono::steady_clock::time_point T0;
  if (TimePasses) {
    PI.BeforePass.push_back([&](const Pass &, const Object &) {
      T0 = std::chrono::steady_clock::now();
    });
    PI.AfterPass.insert(
        PI.AfterPass.begin(), [&](const Pass &P, Object &, bool) {
          double S = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - T0)
                         .count();
          Timings.push_back({P.name().str(), S});
          return Error::success();
        });
  }
  Opts.Instrumentation = &PI;

  if (Error E = runPassManager(Obj, PM, Opts))
    fail(InputFilename, toString(std::move(E)));

  auto WriteStart = std::chrono::steady_clock::now();
  if (!Out.empty()) {
    // A layout that cannot be made is the input's fault (with what the
    // passes did to it); a write that fails is the output's.
    Expected<Layout> L = computeLayout(Obj);
    if (!L)
      fail(InputFilename, toString(L.takeError()));
    if (Error E = writeObjectToFile(Obj, *L, Out, &*In))
      fail(Out == InputFilename ? StringRef(InputFilename) : StringRef(Out),
           toString(std::move(E)));
  }
  double WriteSeconds = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - WriteStart)
                            .count();

  if (TimePasses) {
    double Total = WriteSeconds;
    for (const Timing &T : Timings)
      Total += T.Seconds;
    errs() << "===" << std::string(73, '-') << "===\n"
           << "                      ... Pass execution timing report ...\n"
           << "===" << std::string(73, '-') << "===\n"
           << format("  Total Execution Time: %.4f seconds\n\n", Total)
           << "   ---Wall Time---  --- Name ---\n";
    for (const Timing &T : Timings)
      errs() << format("   %.4f (%5.1f%%)  ", T.Seconds,
                       Total > 0 ? 100 * T.Seconds / Total : 0.0)
             << T.Name << "\n";
    errs() << format("   %.4f (%5.1f%%)  ", WriteSeconds,
                     Total > 0 ? 100 * WriteSeconds / Total : 0.0)
           << "(layout and write)\n";
  }
  // -stats is LLVM's own option (registered by libSupport); it prints our
  // per-pass counters.
  if (AreStatisticsEnabled()) {
    if (KernelsFormat == Format::JSON)
      RunStats.printJSON(errs());
    else
      RunStats.print(errs());
  }
  return 0;
}
