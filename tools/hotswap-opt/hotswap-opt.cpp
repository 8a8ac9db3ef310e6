//===- tools/hotswap-opt/hotswap-opt.cpp - The driver ---------------------===//
//
// opt-shaped driver: read inputs (code objects, offload bundles, HIP host
// binaries), run a -passes= pipeline on every code object they hold, write
// each result atomically. All the work is in the library; the driver reads
// its options into a DriverConfig (Options.cpp), plans where each output
// goes and runs the inputs on a thread pool (Runner.cpp), and turns errors
// into "hotswap-opt: error: 'FILE': message" with exit status 1.
//
//===----------------------------------------------------------------------===//

#include "HugePageHeap.h"
#include "Options.h"
#include "Runner.h"

#include "hotswap/Hotswap.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <unistd.h>

using namespace llvm;
using namespace hotswap;

[[noreturn]] static void fail(StringRef File, const Twine &Msg) {
  reportError(errs(), File, Msg);
  errs().flush();
  exit(1);
}

/// The interrupt signals this process was started with ignored (nohup
/// ignores SIGHUP; a script's background job, SIGINT). LLVM's handlers,
/// which remove temporary files and then let the signal act, replace
/// SIG_IGN; on such a signal they would remove the temporary and let the run
/// go on to fail. What the parent ignored stays ignored.
static std::vector<int> ignoredInterruptSignals() {
  std::vector<int> Ignored;
  for (int Sig : {SIGHUP, SIGINT, SIGTERM, SIGUSR2}) {
    struct sigaction Old;
    if (sigaction(Sig, nullptr, &Old) == 0 && Old.sa_handler == SIG_IGN)
      Ignored.push_back(Sig);
  }
  return Ignored;
}

#ifndef HOTSWAP_DRIVER_LOADS_PLUGINS
#define HOTSWAP_DRIVER_LOADS_PLUGINS 1
#endif

#if !HOTSWAP_DRIVER_LOADS_PLUGINS
/// This driver is linked fully statically, which keeps every run ~2 ms
/// faster, and cannot load a plugin: its twin hotswap-opt-plugins, next to
/// it, is the same program linked for plugins (tools/hotswap-opt/
/// CMakeLists.txt). Nothing was read or written yet; the environment
/// (HOTSWAP_OPT_OPTIONS) and the signals ignored at start go along.
[[noreturn]] static void runTheDriverForPlugins(char **argv) {
  std::string Self =
      sys::fs::getMainExecutable(argv[0], (void *)&runTheDriverForPlugins);
  SmallString<256> Twin(sys::path::parent_path(Self));
  sys::path::append(Twin, "hotswap-opt-plugins");
  execv(Twin.c_str(), argv);
  fail(Twin, Twine("cannot run the driver that loads pass plugins (this "
                   "one is linked statically): ") +
                 std::strerror(errno));
}
#endif

/// A crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) inside a plugin's
/// pass ends the process with the driver's one error line naming the
/// plugin and status 1, after removing the temporary outputs (LLVM's
/// interrupt handlers); elsewhere LLVM's handler prints its stack dump as
/// before. The handler only reads the thread's marker, writes and exits.
static struct sigaction PreviousCrashAction[NSIG];
static void onCrash(int Sig, siginfo_t *Info, void *Context) {
  const PluginPassInFlight *P = pluginPassOnThisThread();
  if (!P) {
    sigaction(Sig, &PreviousCrashAction[Sig], nullptr);
    raise(Sig);
    return;
  }
  // Several pool threads may crash at once: the first reports and exits,
  // the others wait for the exit (one line, not interleaved ones).
  static std::atomic<bool> Reporting{false};
  if (Reporting.exchange(true))
    for (;;)
      pause();
  sys::RunInterruptHandlers();
  auto Put = [](const char *S) {
    ssize_t R = write(2, S, strlen(S));
    (void)R;
  };
  Put("hotswap-opt: error: '");
  Put(P->Plugin);
  Put("': pass '");
  Put(P->Pass);
  Put("' crashed (");
  // strsignal may translate and allocate: the C locale's names.
  Put(Sig == SIGSEGV  ? "Segmentation fault"
      : Sig == SIGBUS ? "Bus error"
      : Sig == SIGILL ? "Illegal instruction"
      : Sig == SIGFPE ? "Floating point exception"
                      : "Aborted");
  Put(")\n");
  _exit(1);
}
static void reportPluginCrashes() {
  struct sigaction A = {};
  A.sa_sigaction = onCrash;
  // SA_ONSTACK: LLVM gave the main thread an alternate stack, for a
  // plugin that overflows its own.
  A.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&A.sa_mask);
  for (int Sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
    sigaction(Sig, &A, &PreviousCrashAction[Sig]);
}

/// --print-pipeline-passes: the canonical text, which must parse back to
/// the same pipeline.
static int printPipeline(const PassBuilder &PB, const PassManager &PM) {
  std::string Text;
  raw_string_ostream OS(Text);
  PM.printPipeline(OS);
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

/// A code-object-sized run allocates megabytes in blocks of hundreds of KiB:
/// from a huge-page heap they cost a few page faults instead of a thousand.
/// The heap keeps what is freed, though: a whole HIP library (hundreds of
/// MiB, its code objects rewritten one after another) keeps malloc's
/// defaults, which give every large block back.
static void chooseHeap(const DriverConfig &C) {
  constexpr uint64_t HugeHeapMaxInput = uint64_t(256) << 20;
  if (llvm::all_of(C.Inputs, [&](const std::string &In) {
        uint64_t Size;
        return In != "-" && !sys::fs::file_size(In, Size) &&
               Size <= HugeHeapMaxInput;
      }))
    (void)useHugePagesForTheHeap();
}

int main(int argc, char **argv) {
  const std::vector<int> Ignored = ignoredInterruptSignals();
  InitLLVM X(argc, argv);
  // InitLLVM installed LLVM's signal handlers (once per process).
  for (int Sig : Ignored)
    std::signal(Sig, SIG_IGN);
  // Past RLIMIT_FSIZE a write fails with EFBIG, which is reported like any
  // other write error, instead of killing the process (SIGXFSZ) with a
  // temporary file left behind.
  std::signal(SIGXFSZ, SIG_IGN);

  const DriverConfig C = parseCommandLine(argc, argv);
  PassBuilder PB;
#if !HOTSWAP_DRIVER_LOADS_PLUGINS
  if (!C.PassPlugins.empty())
    runTheDriverForPlugins(argv);
#endif
  // Plugins first: their passes are listed and parsed like built-in ones.
  if (!C.PassPlugins.empty()) {
    reportPluginCrashes();
    for (const std::string &Path : C.PassPlugins)
      if (Error E = loadPassPlugins(PB, Path))
        handleAllErrors(
            std::move(E),
            [&](const FileError &FE) {
              fail(FE.getFileName(), FE.messageWithoutFileInfo());
            },
            [&](const ErrorInfoBase &EI) { fail(Path, EI.message()); });
  }
  if (C.PrintPasses) {
    PB.printPassNames(outs());
    return 0;
  }
  PassManager PM;
  if (Error E = PB.parsePassPipeline(PM, C.Passes))
    fail("", toString(std::move(E)));
  if (C.PrintPipelinePasses)
    return printPipeline(PB, PM);

  bool HasTransform =
      llvm::any_of(PM.passes(), [](const auto &P) { return P->isTransform(); });
  bool Writes = !C.DisableOutput && !C.DryRun && (HasTransform || PM.empty());
  Expected<Plan> P = planJobs(C, Writes);
  if (!P)
    fail("", toString(P.takeError()));
  std::vector<Job> &Jobs = P->Jobs;
  if (!C.OutputDir.empty() && !C.DisableOutput && !C.DryRun)
    if (std::error_code EC = sys::fs::create_directories(
            C.OutputDir, /*IgnoreExisting=*/true, sys::fs::all_all))
      fail(C.OutputDir, "cannot create the output directory: " + EC.message());
  chooseHeap(C);

  // Text (print<...>, -print-after) goes to stdout, unless an object does:
  // then to stderr, so that the object is not corrupted.
  bool ObjectOnStdout =
      llvm::any_of(Jobs, [](const Job &J) { return J.Out == "-"; });
  Runner R(C, PB, ObjectOnStdout ? errs() : outs());
  R.run(Jobs);
  R.printSummary(*P);

  // Text on standard output (print<...>, -print-after): a write that failed
  // (a full disk, /dev/full) is this run's error, not LLVM's fatal one when
  // the stream is destroyed.
  outs().flush();
  if (outs().has_error()) {
    reportError(errs(), "<stdout>", outs().error().message());
    outs().clear_error();
    return 1;
  }
  return llvm::any_of(Jobs, [](const Job &J) { return J.Failed; }) ? 1 : 0;
}
