//===- tools/hotswap-opt/Options.cpp - Command line to configuration
//-------===//

#include "Options.h"

#include "hotswap/Hotswap.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include <functional>

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
static cl::opt<bool> Recursive(
    "recursive",
    cl::desc("Walk directories among the inputs and rewrite the GPU files "
             "in them (code objects, bundles, HIP host binaries, told by "
             "their content); with --output-dir the tree is mirrored there. "
             "Symbolic links are not followed; a file is done once"),
    cl::cat(Cat));
static cl::alias RecursiveShort("r", cl::desc("Alias for --recursive"),
                                cl::NotHidden, cl::aliasopt(Recursive),
                                cl::cat(Cat));
static cl::opt<bool> DryRun(
    "dry-run",
    cl::desc("Do everything but write: say for each input whether it would "
             "change, with its code objects and kernels (JSON with "
             "--kernels-format=json)"),
    cl::cat(Cat));
static cl::opt<unsigned> Threads(
    "threads",
    cl::desc("Threads for inputs, the code objects of containers and the "
             "functions verify-code checks (default: all cores; 1: "
             "everything on one thread). Outputs never depend on it"),
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
    cl::desc("HIP host binaries: also fill with zeros the replaced bundles "
             "restore cannot rebuild (their bytes go into the provenance "
             "record); those it can rebuild are holes either way"),
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
static cl::list<std::string> LoadPassPlugins(
    "load-pass-plugin",
    cl::desc("Load passes from a plugin shared object (repeatable)"),
    cl::value_desc("path"), cl::cat(Cat));
// -print-after, -print-after-all and -time-passes: LLVM's IR library
// registers options of the same names (opt's), and it is linked in with
// LLVM's DWARF reader (print<counters>' source lines). hotswap-opt then
// takes those over, as it takes over -stats, with LLVM's types
// (lib/IR/PrintPasses.cpp, PassTimingInfo.cpp); otherwise it registers its
// own. Either way before the command line is parsed.
static std::function<bool()> PrintAfterAll, TimePasses;
static cl::list<std::string> *PrintAfter;

static void adoptOrRegisterSharedOptions() {
  const char *AllDesc = "Print what every pass changed (sections, segments, "
                        "symbols, bytes rewritten in place)";
  const char *OneDesc = "Print what the named pass changed";
  const char *TimeDesc = "Time each pass and analysis and print a report";
  auto &Reg = cl::getRegisteredOptions();
  auto Adopt = [&](cl::Option *O, const char *Desc) {
    O->setDescription(Desc);
    O->setHiddenFlag(cl::NotHidden);
    O->addCategory(Cat);
  };
  if (cl::Option *O = Reg.lookup("print-after-all")) {
    Adopt(O, AllDesc);
    auto *Opt = static_cast<cl::opt<bool> *>(O);
    PrintAfterAll = [Opt] { return bool(*Opt); };
  } else {
    auto *Opt =
        new cl::opt<bool>("print-after-all", cl::desc(AllDesc), cl::cat(Cat));
    PrintAfterAll = [Opt] { return bool(*Opt); };
  }
  if (cl::Option *O = Reg.lookup("time-passes")) {
    Adopt(O, TimeDesc);
    auto *Opt = static_cast<cl::opt<bool, true> *>(O);
    TimePasses = [Opt] { return bool(*Opt); };
  } else {
    auto *Opt =
        new cl::opt<bool>("time-passes", cl::desc(TimeDesc), cl::cat(Cat));
    TimePasses = [Opt] { return bool(*Opt); };
  }
  if (cl::Option *O = Reg.lookup("print-after")) {
    Adopt(O, OneDesc);
    O->setValueStr("pass");
    PrintAfter = static_cast<cl::list<std::string> *>(O);
  } else {
    PrintAfter = new cl::list<std::string>("print-after", cl::desc(OneDesc),
                                           cl::value_desc("pass"),
                                           cl::CommaSeparated, cl::cat(Cat));
  }
}
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

static void printVersion(raw_ostream &OS) {
  OS << "hotswap-opt " << getVersionString() << " (LLVM " << LLVM_VERSION_STRING
     << ")\n"
     << "  AMDGPU code object rewriter: kernel-entry trampolines, stub "
        "symbols\n";
}

DriverConfig hotswap::parseCommandLine(int Argc, char **Argv) {
  adoptOrRegisterSharedOptions();
  cl::HideUnrelatedOptions(Cat);
  if (auto *O = cl::getRegisteredOptions().lookup("stats")) {
    O->setDescription("Print per-pass counters (kernels, stubs, symbols, ...)");
    O->setHiddenFlag(cl::NotHidden);
    O->addCategory(Cat);
  }
  cl::SetVersionPrinter(printVersion);
  static cl::extrahelp More(R"(
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

Files: outputs are written to a temporary next to the destination and renamed
over it on success (on any error or SIGINT/SIGTERM/SIGHUP the destination is
untouched). -i and -o follow symbolic links (the file is rewritten, the link
kept), keep an existing file's mode, owner and extended attributes, and
detach hard links (other names keep the old bytes).
)");
  // Options may also come from HOTSWAP_OPT_OPTIONS (the test suite turns
  // on -verify-analysis-preservation that way).
  cl::ParseCommandLineOptions(Argc, Argv,
                              "hotswap-opt: AMDGPU code object rewriter\n",
                              nullptr, nullptr, "HOTSWAP_OPT_OPTIONS");

  DriverConfig C;
  C.Inputs.assign(InputFilenames.begin(), InputFilenames.end());
  if (C.Inputs.empty())
    C.Inputs.push_back("-");
  if (OutputFilename.getNumOccurrences())
    C.OutputFile = OutputFilename;
  C.OutputDir = OutputDir;
  C.InPlace = InPlace;
  C.Recursive = Recursive;
  C.DryRun = DryRun;
  C.DisableOutput = DisableOutput;
  C.Passes = Passes;
  C.PrintPasses = PrintPasses;
  C.PassPlugins.assign(LoadPassPlugins.begin(), LoadPassPlugins.end());
  C.PrintPipelinePasses = PrintPipelinePasses;
  C.DebugPassManager = DebugPM;
  C.PrintAfterAll = PrintAfterAll();
  C.PrintAfter.assign(PrintAfter->begin(), PrintAfter->end());
  C.TimePasses = TimePasses();
  C.VerifyEach = VerifyEach;
  C.VerifyAnalysisPreservation = VerifyAnalysisPreservation;
  C.Strict = Strict;
  C.JSON = KernelsFormat == Format::JSON;
  C.Threads = Threads;
  C.ProgressAfterMs = ProgressAfter;
  C.KeepGoing = KeepGoing;
  C.ZeroOldBundles = ZeroOldBundles;
  return C;
}
