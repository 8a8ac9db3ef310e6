//===- utils/bench/embed-memory.cpp - Memory of a long-lived embedder -----===//
//
// Runs one pipeline on one code object many times in one process, as a
// long-lived embedder (a runtime, a profiler) does, and prints the resident
// set (VmRSS and its peak VmHWM, from /proc/self/status) and the heap in use
// (glibc mallinfo2) after run 1, 10, 100, 1000, 10000, ... and the growth
// from run 100 to the last run. Every output must be the first run's bytes.
//
// A benchmark, not a test: it asserts nothing about memory. The exit status
// is 1 only when a run fails or writes different bytes. See
// utils/bench/embed-memory.sh and utils/bench/README.md.
//
//===----------------------------------------------------------------------===//

#include "hotswap-c.h"

#include "hotswap/Hotswap.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <malloc.h>
#include <optional>
#include <string>

using namespace llvm;

static cl::opt<std::string> InputPath(cl::Positional, cl::Required,
                                      cl::desc("<code object>"));
static cl::opt<std::string>
    Passes("passes", cl::desc("pipeline to run"),
           cl::init("synth-trampolines<form=long>,patch-descriptors,"
                    "stub-syms,verify"));
static cl::opt<unsigned> Runs("runs", cl::desc("number of runs"),
                              cl::init(10000));
static cl::opt<bool> UseCAPI("capi",
                             cl::desc("run through hotswap-c.h instead of "
                                      "hotswap::runPipeline"));
static cl::opt<unsigned>
    PoolWorkers("pool",
                cl::desc("pass a thread pool of N workers as "
                         "PipelineOptions::ThreadPool (0: none)"),
                cl::init(0));

namespace {

struct MemorySample {
  uint64_t RSSKiB = 0;
  uint64_t HWMKiB = 0;
  uint64_t HeapKiB = 0;
};

/// The "<Key>: <N> kB" line of /proc/self/status, in KiB.
uint64_t statusKiB(StringRef Key) {
  std::ifstream Status("/proc/self/status");
  std::string Line;
  while (std::getline(Status, Line)) {
    StringRef L(Line);
    if (!L.consume_front(Key) || !L.consume_front(":"))
      continue;
    uint64_t V = 0;
    L.trim().split(' ').first.getAsInteger(10, V);
    return V;
  }
  return 0;
}

MemorySample sample() {
  MemorySample S;
  S.RSSKiB = statusKiB("VmRSS");
  S.HWMKiB = statusKiB("VmHWM");
  struct mallinfo2 MI = mallinfo2();
  S.HeapKiB = (MI.uordblks + MI.hblkhd) / 1024;
  return S;
}

/// One run; the output bytes, or the error.
Expected<std::string> runOnce(MemoryBufferRef In, ThreadPoolInterface *Pool) {
  if (UseCAPI) {
    hotswap_result_t R = hotswap_run_pipeline(
        nullptr, In.getBufferStart(), In.getBufferSize(), Passes.c_str());
    if (!R)
      return createStringError("hotswap_run_pipeline returned NULL");
    std::optional<std::string> Out;
    std::string Err;
    if (hotswap_result_succeeded(R)) {
      size_t Size = 0;
      const void *Data = hotswap_result_get_output(R, &Size);
      Out.emplace(static_cast<const char *>(Data), Size);
    } else {
      Err = hotswap_result_get_error(R);
    }
    hotswap_result_destroy(R);
    if (!Out)
      return createStringError(Err);
    return std::move(*Out);
  }
  hotswap::PipelineOptions Opts;
  Opts.ThreadPool = Pool;
  auto Out = hotswap::runPipeline(In, Passes, Opts);
  if (!Out)
    return Out.takeError();
  return (*Out)->getBuffer().str();
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv,
                              "runs a pipeline many times in one process "
                              "and reports memory\n");
  auto In = MemoryBuffer::getFile(InputPath);
  if (!In) {
    errs() << "embed-memory: error: '" << InputPath
           << "': " << In.getError().message() << "\n";
    return 1;
  }
  std::optional<DefaultThreadPool> Pool;
  if (PoolWorkers)
    Pool.emplace(hardware_concurrency(PoolWorkers));

  outs() << "input: " << InputPath << " (" << (*In)->getBufferSize()
         << " bytes)\npipeline: " << Passes
         << "\nthrough: " << (UseCAPI ? "hotswap-c.h" : "hotswap::runPipeline");
  if (PoolWorkers)
    outs() << ", thread pool of " << PoolWorkers << " workers";
  outs() << "\n";
  MemorySample Start = sample();
  outs() << format("%8s %12s %12s %12s\n", "run", "VmRSS KiB", "VmHWM KiB",
                   "heap KiB");
  outs() << format("%8s %12llu %12llu %12llu\n", "before", Start.RSSKiB,
                   Start.HWMKiB, Start.HeapKiB);

  std::string First;
  std::optional<MemorySample> At100;
  MemorySample Last;
  unsigned NextReport = 1;
  for (unsigned I = 1; I <= Runs; ++I) {
    Expected<std::string> Out =
        runOnce((*In)->getMemBufferRef(), Pool ? &*Pool : nullptr);
    if (!Out) {
      errs() << "embed-memory: error: run " << I << ": "
             << toString(Out.takeError()) << "\n";
      return 1;
    }
    if (I == 1)
      First = std::move(*Out);
    else if (*Out != First) {
      errs() << "embed-memory: error: run " << I
             << " wrote different bytes than run 1\n";
      return 1;
    }
    if (I == NextReport || I == Runs) {
      Last = sample();
      if (I == 100)
        At100 = Last;
      outs() << format("%8u %12llu %12llu %12llu\n", I, Last.RSSKiB,
                       Last.HWMKiB, Last.HeapKiB);
      outs().flush();
      if (I == NextReport)
        NextReport *= 10;
    }
  }
  if (At100 && Runs > 100)
    outs() << format("growth from run 100 to run %u: VmRSS %+lld KiB, "
                     "heap %+lld KiB\n",
                     unsigned(Runs),
                     (long long)Last.RSSKiB - (long long)At100->RSSKiB,
                     (long long)Last.HeapKiB - (long long)At100->HeapKiB);
  return 0;
}
