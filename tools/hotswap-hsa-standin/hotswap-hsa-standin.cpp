//===- hotswap-hsa-standin.cpp - An HSA application on a fake runtime -----===//
//
// Test-only. No AMD GPU exists where the tests run, so test/Runtime drives
// libhotswap-counters (tools/hotswap-counters-rt) with this program: it
// plays ROCr (FakeRuntime.h) and an application on top of it. Like ROCr,
// it loads every library HSA_TOOLS_LIB names (separated by spaces) and
// calls its OnLoad with the API table; then, for each code object on the
// command line (or, with --together, for all of them at once), the
// application makes an executable with it loaded on every GPU agent, freezes it
// through the table (where the tool has put its wrapper), "runs the kernels"
// (counter i of `__hotswap_counters` on the G-th GPU of the E-th executable
// becomes i*3+1 + 1000*E + 100*G) and, unless --keep, destroys it through the
// table; last, like hsa_shut_down, it calls each tool's OnUnload. It prints
// what it does, one line a step.
//
//===----------------------------------------------------------------------===//

#include "CodeObject.h"
#include "FakeRuntime.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace llvm;
using namespace hotswap_standin;

static cl::list<std::string> Objects(cl::Positional, cl::OneOrMore,
                                     cl::desc("<code object>..."));
static cl::opt<unsigned> Gpus("gpus", cl::init(1),
                              cl::desc("GPU agents (after one CPU agent)"));
static cl::opt<std::string> GpuName("gpu-name", cl::init("gfx90a"),
                                    cl::desc("The GPUs' HSA_AGENT_INFO_NAME"));
static cl::opt<bool>
    Keep("keep", cl::desc("Do not destroy the executables (the tools see them "
                          "at OnUnload)"));
static cl::opt<bool>
    Together("together", cl::desc("Load every code object into one executable "
                                  "(one executable per object otherwise)"));
static cl::opt<unsigned> Threads(
    "threads", cl::init(1),
    cl::desc("Load, freeze, run and destroy the executables on this many "
             "threads at once (executable I on thread I mod N); prints a "
             "summary instead of a line per step"));
static cl::opt<bool> FailCopy("fail-copy",
                              cl::desc("Make hsa_memory_copy fail"));
static cl::opt<bool> NoLoader("no-loader",
                              cl::desc("Offer no loader extension"));
static cl::opt<uint32_t> CoreTableSize(
    "core-table-size", cl::init(0),
    cl::desc("Give the core API table this size (an older runtime's)"));

namespace {

struct Tool {
  std::string Name;
  void *Handle = nullptr;
  bool Loaded = false;
};

using OnLoadFn = bool (*)(HsaApiTable *, uint64_t, uint64_t,
                          const char *const *);
using OnUnloadFn = void (*)();

/// "file://" and the absolute path, URI-encoded as hsa_ven_amd_loader.h
/// describes ROCr's URIs.
std::string fileUri(const std::string &Path) {
  SmallString<256> Abs(Path);
  sys::fs::make_absolute(Abs);
  std::string Uri = "file://";
  for (unsigned char C : Abs) {
    if (isalnum(C) || C == '/' || C == '_' || C == '.' || C == '~' ||
        C == '-') {
      Uri += static_cast<char>(C);
    } else {
      static const char Hex[] = "0123456789ABCDEF";
      Uri += '%';
      Uri += Hex[C >> 4];
      Uri += Hex[C & 15];
    }
  }
  return Uri;
}

std::vector<Tool> loadTools(FakeTables &Tables) {
  std::vector<Tool> Tools;
  const char *Env = std::getenv("HSA_TOOLS_LIB");
  if (!Env)
    return Tools;
  std::istringstream Names(Env);
  std::vector<std::string> Failed;
  for (std::string Name; Names >> Name;) {
    Tool T{Name};
    T.Handle = dlopen(Name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!T.Handle) {
      outs() << "standin: cannot load tool '" << Name << "': " << dlerror()
             << "\n";
      Failed.push_back(Name);
      continue;
    }
    auto OnLoad = reinterpret_cast<OnLoadFn>(dlsym(T.Handle, "OnLoad"));
    std::vector<const char *> FailedNames;
    for (const std::string &F : Failed)
      FailedNames.push_back(F.c_str());
    // ROCr passes its version and the tools that failed before this one.
    T.Loaded = OnLoad && OnLoad(&Tables.Root, /*runtime_version=*/1,
                                FailedNames.size(), FailedNames.data());
    outs() << "standin: tool '" << sys::path::filename(Name) << "': "
           << (OnLoad ? (T.Loaded ? "OnLoad returned true"
                                  : "OnLoad returned false")
                      : "no OnLoad")
           << "\n";
    if (!T.Loaded)
      Failed.push_back(Name);
    Tools.push_back(std::move(T));
  }
  return Tools;
}

/// The --threads run: each thread loads, freezes, runs and destroys its
/// executables, as a multi-threaded application would, so that the tool's
/// wrappers run concurrently. False when a step failed.
bool runOnThreads(FakeTables &Tables,
                  const std::vector<std::vector<CodeObjectFile>> &Contents) {
  std::atomic<unsigned> Frozen{0}, Filled{0}, Destroyed{0};
  std::vector<std::thread> Workers;
  for (unsigned T = 0; T < Threads; ++T)
    Workers.emplace_back([&, T] {
      for (unsigned I = T; I < Contents.size(); I += Threads) {
        hsa_executable_t E = loadExecutable(Contents[I]);
        if (Tables.Core.hsa_executable_freeze_fn(E, "") == HSA_STATUS_SUCCESS)
          ++Frozen;
        Filled += runKernels(E, I);
        if (!Keep &&
            Tables.Core.hsa_executable_destroy_fn(E) == HSA_STATUS_SUCCESS)
          ++Destroyed;
      }
    });
  for (std::thread &W : Workers)
    W.join();
  outs() << "standin: " << Contents.size() << " executables on " << Threads
         << " threads: " << Frozen << " frozen, " << Filled
         << " counter areas filled, " << Destroyed << " destroyed\n";
  return Frozen == Contents.size() && (Keep || Destroyed == Contents.size());
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv,
                              "a stand-in HSA runtime and application that "
                              "loads HSA_TOOLS_LIB (tests only)\n");
  // Each line out before the tool can speak: its errors go to stderr, and
  // a reader of both should see them where they happened.
  outs().SetUnbuffered();
  FakeOptions Options;
  Options.Gpus = Gpus;
  Options.GpuName = GpuName;
  Options.FailCopy = FailCopy;
  Options.NoLoader = NoLoader;
  Options.CoreTableSize = CoreTableSize;
  FakeTables Tables;
  initFakeRuntime(Options, Tables);

  std::vector<Tool> Tools = loadTools(Tables);

  // The executables' contents: one object each, or all in one.
  std::vector<std::vector<CodeObjectFile>> Contents;
  std::vector<std::string> Names;
  for (const std::string &Path : Objects) {
    Expected<CodeObject> Object = readCodeObject(Path);
    if (!Object) {
      WithColor::error(errs(), "hotswap-hsa-standin")
          << toString(Object.takeError()) << "\n";
      return 1;
    }
    if (!Together || Contents.empty()) {
      Contents.emplace_back();
      Names.emplace_back();
    }
    Contents.back().push_back({std::move(*Object), fileUri(Path)});
    Names.back() += (Names.back().empty() ? "'" : ", '") +
                    sys::path::filename(Path).str() + "'";
  }

  if (Threads > 1) {
    if (!runOnThreads(Tables, Contents))
      return 1;
  } else {
    std::vector<hsa_executable_t> Executables;
    for (unsigned I = 0; I < Contents.size(); ++I) {
      hsa_executable_t E = loadExecutable(Contents[I]);
      Executables.push_back(E);
      // Through the table: where HSA_TOOLS_LIB's tools put their wrappers.
      hsa_status_t S = Tables.Core.hsa_executable_freeze_fn(E, "");
      outs() << "standin: executable " << I << " (" << Names[I] << "): freeze "
             << statusName(S) << ", " << runKernels(E, I)
             << " counter areas filled\n";
    }
    if (!Keep)
      for (unsigned I = 0; I < Executables.size(); ++I)
        outs() << "standin: executable " << I << ": destroy "
               << statusName(
                      Tables.Core.hsa_executable_destroy_fn(Executables[I]))
               << "\n";
  }
  outs().flush();

  // hsa_shut_down: ROCr calls its tools' OnUnload first.
  for (Tool &T : Tools) {
    if (!T.Loaded)
      continue;
    if (auto OnUnload =
            reinterpret_cast<OnUnloadFn>(dlsym(T.Handle, "OnUnload")))
      OnUnload();
    outs() << "standin: tool '" << sys::path::filename(T.Name)
           << "': OnUnload\n";
  }
  for (Tool &T : Tools)
    dlclose(T.Handle);
  outs() << "standin: done\n";
  return 0;
}
