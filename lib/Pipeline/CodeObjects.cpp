//===- lib/Pipeline/CodeObjects.cpp - Running code objects ----------------===//
//
// The unit of work of every input: one code object, read, run through the
// pipeline and laid out. A container's code objects -- every entry of
// every bundle of a HIP library -- form one pool of work; what each run
// reports (warnings, print<...> output, counters) is kept and handed on in
// their order, so the output never depends on the scheduling.
//
//===----------------------------------------------------------------------===//

#include "InputDigest.h"
#include "Rewrite.h"

#include "hotswap/Object/Reader.h"
#include "hotswap/Object/Writer.h"
#include "hotswap/Support/Error.h"

#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::pipeline;

OutputPieces CodeObjectRun::pieces() const {
  if (Restored) {
    // A copy: the caller consumes it (nothing is owned: every piece is the
    // input's).
    OutputPieces Copy;
    Copy.Pieces = Restored->Pieces.Pieces;
    return Copy;
  }
  OutputPieces P = renderPieces(*Model, *ModelLayout);
  if (Record)
    Record->addTo(P, *ModelLayout, Payload);
  return P;
}

/// Whether the output of \p Obj laid out as \p L differs from \p Input: laid
/// out anew, or bytes edited in place that differ.
static bool outputDiffers(const Object &Obj, const Layout &L,
                          ArrayRef<uint8_t> Input) {
  if (!L.InPlace)
    return true;
  for (const auto &S : Obj.sections())
    if (S->isDirty() && S->Orig && !S->isNoBits() &&
        S->contents() != Input.slice(S->Orig->Offset, S->Orig->Size))
      return true;
  return false;
}

void pipeline::runCodeObject(CodeObjectRun &Run, const PipelineText &P,
                             const PipelineOptions &Opts) {
  if (P.restores())
    return restoreCodeObject(Run, Opts);
  auto Fail = [&](Error E) { Run.Err = std::move(E); };
  Expected<PassManager> PM = P.parse();
  if (!PM)
    return Fail(PM.takeError());
  MemoryBufferRef Ref(
      StringRef(reinterpret_cast<const char *>(Run.Payload.data()),
                Run.Payload.size()),
      "");
  Expected<std::unique_ptr<Object>> Obj = readObject(Ref);
  if (!Obj)
    return Fail(Obj.takeError());
  if (Opts.ReleaseInput)
    (*Obj)->setInputReleaser(Opts.ReleaseInput);
  const bool Recorded = carriesRecord(**Obj);
  if (Run.StartHead && !Recorded)
    Run.StartHead(Run.Payload.size());
  // Hashed while the passes run (a new record needs it if the object
  // changes; a pipeline without a transform, verify or a printer, changes
  // nothing and leaves no record).
  std::shared_ptr<InputDigest> Digest = std::move(Run.Digest);
  if (!Digest)
    Digest = std::make_shared<InputDigest>(
        Run.Payload, Opts, Run.InputOffset.has_value(),
        Recorded || P.canonical().empty() ? InputDigest::Ahead::No
                                          : InputDigest::Ahead::Pool);
  if (Error E = runPasses(**Obj, *PM, Opts, &Run.Facts))
    return Fail(std::move(E));
  // A code object's non-loaded tail follows its new segment, each table
  // once: the record points at the input's bytes where they moved, and
  // lies after them all (recordProvenance).
  uint64_t OursFrom = Run.Payload.size();
  if (Recorded) {
    Expected<Section *> Old = findProvenanceSection(**Obj);
    if (!Old)
      return Fail(Old.takeError());
    if (*Old)
      (*Old)->AfterInput = true;
    Expected<std::optional<ProvenanceRecord>> Rec = readProvenance(**Obj);
    if (!Rec)
      return Fail(Rec.takeError());
    if (*Rec)
      OursFrom = (*Rec)->OriginalSize;
  }
  (*Obj)->allowTailRelayout(OursFrom);
  Expected<Layout> L = computeLayout(**Obj);
  if (!L)
    return Fail(L.takeError());
  if (!outputDiffers(**Obj, *L, Run.Payload))
    return; // the input's bytes are the output: nothing to keep
  Expected<WrittenProvenance> W =
      recordProvenance(**Obj, *L, P, Digest, Run.DeferDigest);
  if (!W)
    return Fail(W.takeError());
  Run.Changed = true;
  Run.Record = std::move(*W);
  Run.Model = std::move(*Obj);
  Run.ModelLayout = std::move(*L);
}

/// runCodeObject with what the run reports kept in \p Run.
static void runAndKeepReports(CodeObjectRun &Run, const PipelineText &P,
                              const PipelineOptions &Opts) {
  PipelineOptions O = Opts;
  O.Warn = [&Run](const Twine &Msg) { Run.Warnings.push_back(Msg.str()); };
  raw_string_ostream PrintOS(Run.Printed);
  if (Opts.PrintOut)
    O.PrintOut = &PrintOS;
  O.StatsOut = &Run.Stats;
  runCodeObject(Run, P, O);
  // The payload has been read: the input's pages may go.
  if (Opts.ReleaseInput && Run.InputOffset)
    Opts.ReleaseInput(Run.Payload);
  if (Opts.OnCodeObjectDone)
    Opts.OnCodeObjectDone(Run.Payload.size());
}

/// Hands on what \p Run printed: its text after a line naming it, or its
/// JSON values each with an "entry" member (text an embedder's pass
/// printed in JSON mode becomes an "output" string).
static void replayPrinted(CodeObjectRun &Run, const PipelineOptions &Opts,
                          std::vector<json::Value> &JSONOut) {
  if (!Opts.PrintOut)
    return;
  if (!Opts.JSON) {
    if (!Run.Printed.empty())
      *Opts.PrintOut << Run.Name << ":\n" << Run.Printed;
    return;
  }
  for (json::Value &V : Run.Facts.Printed) {
    if (json::Object *O = V.getAsObject()) {
      O->try_emplace("entry", Run.Name);
      JSONOut.push_back(std::move(V));
    } else {
      JSONOut.push_back(json::Object{{"entry", Run.Name}, {"output", V}});
    }
  }
  Run.Facts.Printed.clear();
  if (!Run.Printed.empty())
    JSONOut.push_back(
        json::Object{{"entry", Run.Name}, {"output", Run.Printed}});
}

Error pipeline::runCodeObjects(
    ArrayRef<CodeObjectRun *> Runs, const PipelineText &P,
    const PipelineOptions &Opts, RunSummary &Summary,
    std::vector<json::Value> &JSONOut,
    const std::function<void(const CodeObjectRun &)> &Ended) {
  if (Opts.OnCodeObjectsFound)
    Opts.OnCodeObjectsFound(static_cast<unsigned>(Runs.size()));
  const bool Parallel =
      Opts.ThreadPool && !Opts.Instrumentation && Runs.size() > 1;
  if (Parallel) {
    // The code objects are the unit of parallel work: inside each,
    // everything runs on its task's thread.
    PipelineOptions RunOpts = Opts;
    RunOpts.ThreadPool = nullptr;
    ThreadPoolTaskGroup Tasks(*Opts.ThreadPool);
    for (CodeObjectRun *R : Runs)
      if (!R->Err)
        Tasks.async([R, &P, &RunOpts, &Ended] {
          runAndKeepReports(*R, P, RunOpts);
          if (Ended)
            Ended(*R);
        });
    Tasks.wait();
  }
  for (size_t K = 0; K < Runs.size(); ++K) {
    CodeObjectRun &R = *Runs[K];
    if (!Parallel && !R.Err) {
      if (Opts.OnCodeObject)
        Opts.OnCodeObject(R.Name);
      runAndKeepReports(R, P, Opts);
      if (Ended)
        Ended(R);
    }
    if (Opts.Warn)
      for (const std::string &W : R.Warnings)
        Opts.Warn(R.Name + ": " + W);
    if (Opts.StatsOut)
      Opts.StatsOut->merge(R.Stats);
    replayPrinted(R, Opts, JSONOut);
    ++Summary.CodeObjects;
    if (R.Err) {
      if (!Opts.KeepGoing) {
        // The first failing code object (in order) fails the input: one
        // error per input, the same whether the code objects ran on threads
        // or one after the other. Those after it that failed too (alongside
        // it, or before running at all) add nothing to that error.
        for (CodeObjectRun *Rest : Runs.drop_front(K + 1))
          consumeError(std::move(Rest->Err));
        return prefixError(R.Name, std::move(R.Err));
      }
      std::string Msg = toString(std::move(R.Err));
      if (Opts.Warn)
        Opts.Warn(R.Name + ": " + Msg + "; left unchanged");
      ++Summary.Failed;
      R.Changed = false;
      continue;
    }
    Summary.addUnfit(R.Facts.Unfit, R.Name);
    Summary.Kernels += R.Facts.Kernels.value_or(0);
    Summary.Changed += R.Changed;
  }
  return Error::success();
}
