//===- fuzz/hotswap-fuzz.cpp - libFuzzer target for reader + pipeline -----===//
//
// Feeds arbitrary bytes to the validating reader and then to the whole
// rewriting pipeline. Errors are the expected outcome for most inputs; what
// the fuzzer hunts for is everything else: crashes, sanitizer reports, leaks,
// and outputs of a successful run that do not read back (or verify) as a
// code object.
//
// Build with -DHOTSWAP_FUZZ=ON (clang only); run through utils/fuzz.sh.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Hotswap.h"
#include "hotswap/Object/Reader.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace llvm;
using namespace hotswap;

static const char *const Pipeline = "trampoline,stub-syms,realign-shdrs,verify";

[[noreturn]] static void bug(const Twine &What, Error E) {
  errs() << "hotswap-fuzz: " << What << ": " << toString(std::move(E)) << "\n";
  errs().flush();
  abort();
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
  return 0;
}
