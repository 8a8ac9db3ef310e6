//===- fuzz/FuzzContainer.h - Shared body of the container targets -*- C++
//-*-===//
//
// hotswap-fuzz-bundle and hotswap-fuzz-host feed bytes to runPipeline (the
// library entry that takes any input kind) with the pipeline hotswap-opt
// users run, and check what a successful run promises:
//   * the output is of the input's kind (a plain bundle stays plain, a CCOB
//     stays a CCOB, a host stays a host);
//   * a run that changed nothing returns the input's bytes;
//   * `verify` passes on the output, and the pipeline run again on the
//     output succeeds and returns it byte for byte (idempotence);
//   * `restore` on an output that changed succeeds and gives back a file
//     of the input's kind: a host binary byte for byte the input (or what
//     restore gives for the input, when it carried a record already); a
//     bundle the rewrite warned restore would not give back byte for byte
//     (not laid out as clang does it) may be refused instead; a compressed
//     one's bytes may differ when it was not compressed as clang does it.
// Errors are the expected outcome for most inputs. Anything else -- a crash,
// a sanitizer report, a leak, a broken promise -- aborts.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_FUZZ_FUZZCONTAINER_H
#define HOTSWAP_FUZZ_FUZZCONTAINER_H

#include "hotswap/Hotswap.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <initializer_list>

namespace hotswap {
namespace fuzz {

inline const char *const ContainerPipeline = "trampoline,stub-syms,verify";

[[noreturn]] inline void bug(const llvm::Twine &What) {
  llvm::errs() << "hotswap-fuzz: " << What << "\n";
  llvm::errs().flush();
  abort();
}

[[noreturn]] inline void bug(const llvm::Twine &What, llvm::Error E) {
  bug(What + ": " + llvm::toString(std::move(E)));
}

/// `restore` on \p Out, the changed output of a run on \p In, a \p Kind;
/// \p Refusable: the run warned that restore would not give it back byte
/// for byte.
inline void checkRestore(llvm::MemoryBufferRef In, llvm::MemoryBufferRef Out,
                         bundle::InputKind Kind, const PipelineOptions &Opts,
                         bool Refusable) {
  using namespace llvm;
  Expected<std::unique_ptr<MemoryBuffer>> Back =
      runPipeline(Out, "restore", Opts);
  if (!Back && Refusable) {
    consumeError(Back.takeError());
    return;
  }
  if (!Back)
    bug("restore fails on the output of a successful run", Back.takeError());
  ArrayRef<uint8_t> BackBytes(
      reinterpret_cast<const uint8_t *>((*Back)->getBufferStart()),
      (*Back)->getBufferSize());
  if (bundle::identifyInput(BackBytes) != Kind)
    bug("restore made a " + bundle::inputKindName(Kind) + " a " +
        bundle::describeInput(BackBytes));
  if (Kind != bundle::InputKind::HostELF)
    return;
  Expected<std::unique_ptr<MemoryBuffer>> Before =
      runPipeline(In, "restore", Opts);
  StringRef Original = In.getBuffer();
  if (Before)
    Original = (*Before)->getBuffer();
  else
    consumeError(Before.takeError());
  if ((*Back)->getBuffer() != Original)
    bug("restore did not give back the host binary");
}

/// Runs the pipeline on \p Data when its kind is one of \p Kinds (other
/// inputs return at once, so the fuzzer spends its time on the target's
/// containers) and checks the promises above.
inline int runContainer(const uint8_t *Data, size_t Size,
                        std::initializer_list<bundle::InputKind> Kinds) {
  using namespace llvm;
  ArrayRef<uint8_t> Bytes(Data, Size);
  const bundle::InputKind Kind = bundle::identifyInput(Bytes);
  if (!is_contained(Kinds, Kind))
    return 0;
  MemoryBufferRef In(StringRef(reinterpret_cast<const char *>(Data), Size),
                     "fuzz-input");
  PipelineOptions Opts;
  Opts.VerifyAnalysisPreservation = true;
  bool Refusable = false;
  Opts.Warn = [&Refusable](const Twine &W) {
    if (StringRef(W.str()).starts_with(
            "restore will not give this bundle back byte for byte"))
      Refusable = true;
  };
  RunSummary Summary;
  Expected<std::unique_ptr<MemoryBuffer>> Out =
      runPipeline(In, ContainerPipeline, Opts, &Summary);
  Opts.Warn = nullptr;
  if (!Out) {
    consumeError(Out.takeError());
    return 0;
  }
  MemoryBufferRef OutRef = (*Out)->getMemBufferRef();
  ArrayRef<uint8_t> OutBytes(
      reinterpret_cast<const uint8_t *>(OutRef.getBufferStart()),
      OutRef.getBufferSize());
  if (Summary.Kind != Kind)
    bug("the run saw a " + bundle::inputKindName(Summary.Kind) + ", not a " +
        bundle::inputKindName(Kind));
  if (bundle::identifyInput(OutBytes) != Kind)
    bug("a " + bundle::inputKindName(Kind) + " became a " +
        bundle::describeInput(OutBytes));
  if (!Summary.OutputChanged && OutRef.getBuffer() != In.getBuffer())
    bug("a run that changed nothing returned other bytes");
  if (Expected<std::unique_ptr<MemoryBuffer>> V =
          runPipeline(OutRef, "verify", Opts);
      !V)
    bug("output of a successful run fails verify", V.takeError());
  RunSummary Again;
  Expected<std::unique_ptr<MemoryBuffer>> Twice =
      runPipeline(OutRef, ContainerPipeline, Opts, &Again);
  if (!Twice)
    bug("pipeline fails on its own output", Twice.takeError());
  if ((*Twice)->getBuffer() != OutRef.getBuffer() || Again.OutputChanged)
    bug("pipeline changed its own output");
  if (Again.CodeObjects != Summary.CodeObjects)
    bug("the output holds " + Twine(Again.CodeObjects) +
        " code objects, the input " + Twine(Summary.CodeObjects));
  if (Summary.OutputChanged)
    checkRestore(In, OutRef, Kind, Opts, Refusable);
  return 0;
}

} // namespace fuzz
} // namespace hotswap

#endif // HOTSWAP_FUZZ_FUZZCONTAINER_H
