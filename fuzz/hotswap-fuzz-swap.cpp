//===- fuzz/hotswap-fuzz-swap.cpp - libFuzzer target for swap-kernels ----===//
//
// The fuzzer's bytes are the replacement FILE of `swap-kernels<with=FILE>`
// (written to a temporary file), applied to fixed, valid code objects: the
// seed (FuzzSeed.h, gfx90a, kernels vadd and kern2) and the seed after
// `trampoline,stub-syms`; on the seed also with `own-variables`. The seed
// corpus (fuzz/build-corpus.py --kind swap) holds rebuilds of the seed's
// kernels (test/Inputs/two-kernels.cl and test/Passes/Inputs/swap-fixed.cl
// for gfx90a, relocatable and linked, code object v4 to v6) and code
// objects for other targets, which the pass must refuse.
//
// What is checked, for each target object, when the swap succeeds:
//   * `verify` passes on the output;
//   * the swap run again on the output, with the same FILE, succeeds and
//     gives its bytes back (a fixed point);
//   * `restore` on an output that changed gives back the very first input
//     byte for byte: the seed, also for the stubbed seed, whose record the
//     swap extends ("Provenance and undo" in README.md).
// Errors (the pass refusing FILE) are the expected outcome for most inputs;
// a crash, a sanitizer report or a leak is a bug.
//
//===----------------------------------------------------------------------===//

#include "FuzzSeed.h"

#include "hotswap/Hotswap.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::fuzz;

/// swap-kernels \p Swap on \p Target, whose provenance leads back to
/// \p Original (\p Target itself when it carries no record).
static void swapOnto(StringRef Target, StringRef Original,
                     const std::string &Swap) {
  PipelineOptions Opts;
  Opts.VerifyAnalysisPreservation = true;
  MemoryBufferRef In(Target, "target");
  Expected<std::unique_ptr<MemoryBuffer>> Out = runPipeline(In, Swap, Opts);
  if (!Out) {
    count("swaps refused");
    consumeError(Out.takeError());
    return;
  }
  count("swaps done");
  MemoryBufferRef OutRef = (*Out)->getMemBufferRef();
  if (Expected<std::unique_ptr<MemoryBuffer>> V =
          runPipeline(OutRef, "verify", Opts);
      !V)
    die("output of a successful swap fails verify", V.takeError());
  Expected<std::unique_ptr<MemoryBuffer>> Twice =
      runPipeline(OutRef, Swap, Opts);
  if (!Twice)
    die("swap-kernels fails on its own output", Twice.takeError());
  if ((*Twice)->getBuffer() != OutRef.getBuffer())
    die("swap-kernels changed its own output");
  if (OutRef.getBuffer() == Target)
    return;
  Expected<std::unique_ptr<MemoryBuffer>> Back =
      runPipeline(OutRef, "restore", Opts);
  if (!Back)
    die("restore fails on the output of a successful swap", Back.takeError());
  if ((*Back)->getBuffer() != Original)
    die("restore did not give back the original of the object swapped into");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static const std::string Stubbed =
      mustRun(seedObject(), "trampoline,stub-syms");
  const std::string &Path = tempPath<1>();
  if (Path.empty())
    return 0;
  {
    std::error_code EC;
    raw_fd_ostream OS(Path, EC);
    if (EC)
      return 0;
    OS << StringRef(reinterpret_cast<const char *>(Data), Size);
  }
  const std::string Swap = "swap-kernels<with=" + Path + ">";
  swapOnto(seedObject(), seedObject(), Swap);
  swapOnto(seedObject(), seedObject(),
           "swap-kernels<with=" + Path + ";own-variables>");
  swapOnto(Stubbed, seedObject(), Swap);
  return 0;
}
