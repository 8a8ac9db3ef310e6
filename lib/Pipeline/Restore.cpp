//===- lib/Pipeline/Restore.cpp - Giving back the original ----------------===//
//
// `restore` (hotswap/Passes/Restore.h) is a mode of the pipeline, not a
// mutation of a model: the original a provenance record leads back to is
// the input's first OriginalSize bytes with each edited range's original
// bytes put back, and all of those are bytes of the input (the record holds
// the original bytes), so the output is input pieces only -- copied by the
// kernel when written to a file. Each kind:
//   * a code object or a host binary: its own record (a host's new bundles
//     lie after the original's end; its old ones never moved: bytes zeroed
//     in them are in the record, and those left as holes are rebuilt from
//     the new bundles, each restored as a bundle input is);
//   * an offload bundle, plain or compressed: each code object with a
//     record is restored, the others kept, and the bundle written back as
//     any rewritten bundle is (clang's layout, the input's alignment; a
//     compressed one compressed again with its version and method).
// Every record is checked (checkProvenance) before anything is written.
//
//===----------------------------------------------------------------------===//

#include "Rewrite.h"

#include "hotswap/Object/Reader.h"
#include "hotswap/Support/Error.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::pipeline;
using bundle::InputKind;

namespace {

/// \p Where: " in ..." or empty.
Error noRecord(StringRef What, const Twine &Where = "") {
  return makeError("no provenance record" + Where + ": the " + What +
                   " was not changed by hotswap-opt, or its record was "
                   "removed");
}

void countRestored(const PipelineOptions &Opts) {
  if (Opts.StatsOut)
    Opts.StatsOut->add("restore", "restored",
                       "objects given back as they were before their first "
                       "rewrite");
}

/// Turns a failed check of the record into what a user is told.
using ExplainFn = std::function<Error(Error)>;

/// The original of the file \p Input, whose model is \p Obj, as pieces of
/// \p Input; nullopt when it has no record. \p Later: see
/// restoreCodeObject. A failed check goes through \p Explain, when set,
/// whether it fails here or later.
Expected<std::optional<CodeObjectRun::Original>>
originalOf(const Object &Obj, ArrayRef<uint8_t> Input,
           const PipelineOptions &Opts, const RebuildFn &Rebuild = {},
           std::unique_ptr<EarlyJob> *Later = nullptr,
           const ExplainFn &Explain = {}) {
  auto Told = [&](Error E) -> Error {
    return Explain ? Explain(std::move(E)) : std::move(E);
  };
  Expected<std::optional<ProvenanceRecord>> Rec = readProvenance(Obj);
  if (!Rec)
    return Rec.takeError();
  if (!*Rec)
    return std::nullopt;
  // The digest of a 400 MB original takes as long as writing it: on the
  // pool, while it is written.
  if (Later && Opts.ThreadPool) {
    Expected<OriginalAhead> A =
        originalAheadOfCheck(**Rec, Input, Rebuild, Opts.ReleaseInput);
    if (!A)
      return Told(A.takeError());
    *Later = std::make_unique<EarlyJob>(
        Opts.ThreadPool,
        [Check = std::move(A->DigestCheck), Explain]() -> Error {
          Error E = Check();
          return E && Explain ? Explain(std::move(E)) : std::move(E);
        });
    CodeObjectRun::Original O;
    O.Size = (*Rec)->OriginalSize;
    O.Pieces = std::move(A->Pieces);
    return std::optional<CodeObjectRun::Original>(std::move(O));
  }
  // Reading all of a large original (a library's gigabyte) leaves none of
  // it resident: the output copies it from the file.
  Expected<OutputPieces> Pieces =
      checkedOriginal(**Rec, Input, Rebuild, Opts.ReleaseInput);
  if (!Pieces)
    return Told(Pieces.takeError());
  CodeObjectRun::Original O;
  O.Size = (*Rec)->OriginalSize;
  O.Pieces = std::move(*Pieces);
  return std::optional<CodeObjectRun::Original>(std::move(O));
}

Expected<Rewritten> restoreCodeObjectInput(ArrayRef<uint8_t> Input,
                                           const PipelineOptions &Opts,
                                           RunSummary &Summary) {
  auto Run = std::make_unique<CodeObjectRun>();
  Run->Payload = Input;
  Run->InputOffset = 0;
  Rewritten R;
  restoreCodeObject(*Run, Opts, &R.Check);
  if (Run->Err)
    return std::move(Run->Err);
  if (!Run->Changed)
    return noRecord("code object");
  Summary.CodeObjects = Summary.Changed = 1;
  R.Size = Run->outputSize();
  R.Pieces = Run->pieces();
  R.Run = std::move(Run);
  return std::move(R);
}

Expected<Rewritten> restoreHostInput(ArrayRef<uint8_t> Input,
                                     const PipelineOptions &Opts) {
  MemoryBufferRef Ref(
      StringRef(reinterpret_cast<const char *>(Input.data()), Input.size()),
      "");
  ReadOptions RO;
  RO.AllowHost = true;
  Expected<std::unique_ptr<Object>> Host = readObject(Ref, RO);
  if (!Host)
    return Host.takeError();
  // Say why the record no longer leads back when another tool laid the
  // file out again (the record parsed: only its check failed).
  const Object *H = Host->get();
  ExplainFn Explain = [H](Error E) -> Error {
    Expected<std::optional<ProvenanceRecord>> Rec = readProvenance(*H);
    if (Rec && *Rec)
      if (std::optional<std::string> Why = hostLaidOutAgain(*H, **Rec)) {
        consumeError(std::move(E));
        return makeError(*Why + ": its provenance record cannot give the "
                                "original back");
      }
    if (!Rec)
      consumeError(Rec.takeError());
    return E;
  };
  Rewritten R;
  Expected<std::optional<CodeObjectRun::Original>> O = originalOf(
      **Host, Input, Opts, hostRebuilder(Input, Opts), &R.Check, Explain);
  if (!O)
    return O.takeError();
  if (!*O)
    return noRecord("host binary");
  countRestored(Opts);
  R.Size = (*O)->Size;
  R.Pieces = std::move((*O)->Pieces);
  R.Model = std::move(*Host);
  return std::move(R);
}

} // namespace

void pipeline::restoreCodeObject(CodeObjectRun &Run,
                                 const PipelineOptions &Opts,
                                 std::unique_ptr<EarlyJob> *Later) {
  MemoryBufferRef Ref(
      StringRef(reinterpret_cast<const char *>(Run.Payload.data()),
                Run.Payload.size()),
      "");
  Expected<std::unique_ptr<Object>> Obj = readObject(Ref);
  if (!Obj) {
    Run.Err = Obj.takeError();
    return;
  }
  Expected<std::optional<CodeObjectRun::Original>> O =
      originalOf(**Obj, Run.Payload, Opts, {}, Later);
  if (!O) {
    Run.Err = O.takeError();
    return;
  }
  if (!*O)
    return; // kept as it is (in a bundle; alone, an error)
  Run.Restored = std::move(**O);
  Run.Changed = true;
  countRestored(Opts);
}

Expected<Rewritten> pipeline::restoreInput(ArrayRef<uint8_t> Input,
                                           const PipelineText &P,
                                           const PipelineOptions &Opts,
                                           RunSummary &Summary) {
  switch (Summary.Kind) {
  case InputKind::Unknown:
    if (std::optional<std::string> Why = whyUnknown(Input))
      return makeError(*Why);
    [[fallthrough]];
  case InputKind::CodeObject:
    return restoreCodeObjectInput(Input, Opts, Summary);
  case InputKind::OffloadBundle:
  case InputKind::CompressedOffloadBundle: {
    // A code object that cannot be restored cannot be left as it is: the
    // bundle would not be the original.
    PipelineOptions O = Opts;
    O.KeepGoing = false;
    Expected<Rewritten> R = rewriteBundleInput(Input, P, O, Summary);
    if (R && Summary.Changed == 0)
      return noRecord("bundle", " in any of the " + Twine(Summary.CodeObjects) +
                                    " code objects of the bundle");
    return R;
  }
  case InputKind::HostELF:
    return restoreHostInput(Input, Opts);
  }
  llvm_unreachable("unknown input kind");
}
