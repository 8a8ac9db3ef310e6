//===- fuzz/hotswap-fuzz.cpp - libFuzzer target for reader + pipeline -----===//
//
// Feeds arbitrary bytes to the validating reader and then to the whole
// rewriting pipeline. Errors are the expected outcome for most inputs; what
// the fuzzer hunts for is everything else: crashes, sanitizer reports, leaks,
// and outputs of a successful run that do not read back (or verify) as a
// code object. Inputs that get through the pipeline also go through
// swap-kernels with themselves as the replacement (written to a temporary
// file): the pass's checks of the file it reads, and, for a code object with
// kernels, the whole swap, on the input and on its trampolined output. A
// run that changed its input must be undone byte for byte by `restore`.
//
// Build with -DHOTSWAP_FUZZ=ON (clang only); run through utils/fuzz.sh.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Hotswap.h"
#include "hotswap/Object/Reader.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

using namespace llvm;
using namespace hotswap;

static const char *const Pipeline = "trampoline,stub-syms,realign-shdrs,verify";

[[noreturn]] static void bug(const Twine &What, Error E) {
  errs() << "hotswap-fuzz: " << What << ": " << toString(std::move(E)) << "\n";
  errs().flush();
  abort();
}

/// The file swap-kernels reads its replacement from: one per process,
/// rewritten with each input, removed at exit. Empty when it cannot be made.
static const std::string &replacementPath() {
  static const std::string Path = [] {
    SmallString<128> P;
    int FD = -1;
    if (sys::fs::createTemporaryFile("hotswap-fuzz", "co", FD, P))
      return std::string();
    sys::fs::closeFile(FD);
    return std::string(P);
  }();
  // Registered once Path is complete, so that it runs before Path is
  // destroyed.
  static const bool RemovedAtExit = [] {
    return std::atexit([] {
             if (!replacementPath().empty())
               sys::fs::remove(replacementPath());
           }) == 0;
  }();
  (void)RemovedAtExit;
  return Path;
}

/// swap-kernels on \p Target with the bytes of \p Replacement as its file:
/// when it succeeds, its output must verify and be a fixed point.
static void swapWithItself(MemoryBufferRef Target, StringRef Replacement,
                           const PipelineOptions &Opts) {
  const std::string &Path = replacementPath();
  if (Path.empty())
    return;
  {
    std::error_code EC;
    raw_fd_ostream OS(Path, EC);
    if (EC)
      return;
    OS << Replacement;
  }
  const std::string Swap = "swap-kernels<with=" + Path + ";own-variables>";
  Expected<std::unique_ptr<MemoryBuffer>> Out = runPipeline(Target, Swap, Opts);
  if (!Out) {
    consumeError(Out.takeError());
    return;
  }
  MemoryBufferRef OutRef = (*Out)->getMemBufferRef();
  Expected<std::unique_ptr<MemoryBuffer>> Verified =
      runPipeline(OutRef, "verify", Opts);
  if (!Verified)
    bug("output of a successful swap fails verify", Verified.takeError());
  Expected<std::unique_ptr<MemoryBuffer>> Twice =
      runPipeline(OutRef, Swap, Opts);
  if (!Twice)
    bug("swap-kernels fails on its own output", Twice.takeError());
  if ((*Twice)->getBuffer() != OutRef.getBuffer()) {
    errs() << "hotswap-fuzz: swap-kernels changed its own output\n";
    abort();
  }
}

/// `restore` on the output of a run that changed \p In must give back
/// the input's original: \p In itself, or what restore gives for \p In
/// when it already carried a provenance record.
static void checkRestore(MemoryBufferRef In, MemoryBufferRef Out,
                         const PipelineOptions &Opts) {
  if (Out.getBuffer() == In.getBuffer())
    return;
  Expected<std::unique_ptr<MemoryBuffer>> Before =
      runPipeline(In, "restore", Opts);
  StringRef Original = In.getBuffer();
  if (Before)
    Original = (*Before)->getBuffer();
  else
    consumeError(Before.takeError());
  Expected<std::unique_ptr<MemoryBuffer>> Back =
      runPipeline(Out, "restore", Opts);
  if (!Back)
    bug("restore fails on the output of a successful run", Back.takeError());
  if ((*Back)->getBuffer() != Original) {
    errs() << "hotswap-fuzz: restore did not give back the input\n";
    abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  MemoryBufferRef In(StringRef(reinterpret_cast<const char *>(Data), Size),
                     "fuzz-input");

  // The reader alone (most inputs stop here).
  Expected<std::unique_ptr<Object>> Obj = readObject(In);
  if (!Obj) {
    consumeError(Obj.takeError());
    return 0;
  }
  Obj->reset();

  // The full pipeline, writing to memory, checking that the kernels
  // analysis passes keep is the one a fresh computation gives.
  PipelineOptions Opts;
  Opts.VerifyAnalysisPreservation = true;
  Expected<std::unique_ptr<MemoryBuffer>> Out = runPipeline(In, Pipeline, Opts);
  if (!Out) {
    consumeError(Out.takeError());
    return 0;
  }

  // A successful run's output must be a code object the reader accepts and
  // `verify` passes on, and running the pipeline on it again must succeed
  // and change nothing (every pass is skipped once its invariant holds).
  MemoryBufferRef OutRef = (*Out)->getMemBufferRef();
  Expected<std::unique_ptr<Object>> Again = readObject(OutRef);
  if (!Again)
    bug("output of a successful run does not read back", Again.takeError());
  Again->reset();
  Expected<std::unique_ptr<MemoryBuffer>> Verified =
      runPipeline(OutRef, "verify", Opts);
  if (!Verified)
    bug("output of a successful run fails verify", Verified.takeError());
  Expected<std::unique_ptr<MemoryBuffer>> Twice =
      runPipeline(OutRef, Pipeline, Opts);
  if (!Twice)
    bug("pipeline fails on its own output", Twice.takeError());
  if ((*Twice)->getBuffer() != OutRef.getBuffer()) {
    errs() << "hotswap-fuzz: pipeline changed its own output\n";
    abort();
  }

  checkRestore(In, OutRef, Opts);
  swapWithItself(In, In.getBuffer(), Opts);
  swapWithItself(OutRef, In.getBuffer(), Opts);
  return 0;
}
