//===- lib/Pipeline/Rewrite.cpp - One input, any kind ---------------------===//

#include "Rewrite.h"

#include "hotswap/Object/Writer.h"
#include "hotswap/Support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::pipeline;
using bundle::InputKind;

Expected<PipelineText> PipelineText::create(StringRef Text,
                                            const PipelineOptions &Opts) {
  std::unique_ptr<PassBuilder> Own;
  const PipelineParser *Parser = Opts.Builder;
  if (!Parser) {
    Own = std::make_unique<PassBuilder>();
    Parser = Own.get();
  }
  Expected<PipelinePlan> Parsed = Parser->parsePipeline(Text);
  if (!Parsed)
    return Parsed.takeError();
  Expected<PassManager> PM = Parsed->instantiate();
  if (!PM)
    return PM.takeError();
  PipelineText T(Text, std::move(*Parsed));
  T.Own = std::move(Own);
  // What a provenance record names: the passes that may change the file,
  // so that verifying or printing on the way gives the same bytes.
  raw_string_ostream OS(T.Canonical);
  ListSeparator Comma(",");
  for (const auto &Pass : PM->passes()) {
    T.Names.push_back(Pass->name().str());
    if (!Pass->isTransform())
      continue;
    OS << Comma;
    Pass->printPipeline(OS);
  }
  return std::move(T);
}

bool PipelineText::has(StringRef Name) const {
  return llvm::is_contained(Names, Name);
}

Error PipelineText::checkRestoreAlone() const {
  if (has("restore") && Names.size() != 1)
    return makeError("pass 'restore' gives back the input its provenance "
                     "record leads to, and runs alone: it cannot be combined "
                     "with other passes");
  return Error::success();
}

OutputImage Rewritten::image() const {
  OutputImage Image;
  Image.Size = Size;
  Image.Pieces = [this] {
    // A copy: the writer consumes it (the owned buffers stay here).
    OutputPieces Copy;
    Copy.Pieces = Pieces.Pieces;
    return Copy;
  };
  // A code object's record may still wait for its input's digest: the
  // writer copies the input's bytes first.
  if (Run && Run->Record && Run->Record->Pending)
    Image.BeforeLate = [this] { Run->Record->settle(); };
  return Image;
}

void pipeline::printJSONEntries(std::vector<json::Value> &Entries,
                                const PipelineOptions &Opts) {
  if (Entries.empty() || !Opts.PrintOut)
    return;
  *Opts.PrintOut << formatv("{0:2}", json::Value(std::move(Entries))) << "\n";
  Entries.clear();
}

/// -stats on a container: the code objects it held, after their passes'
/// counters.
static void countCodeObjects(const RunSummary &Summary,
                             const PipelineOptions &Opts) {
  if (!Opts.StatsOut)
    return;
  Opts.StatsOut->add("containers", "code-objects",
                     "code objects in bundles and host binaries",
                     Summary.CodeObjects);
  Opts.StatsOut->add("containers", "code-objects-changed",
                     "code objects changed", Summary.Changed);
  if (Summary.Failed)
    Opts.StatsOut->add("containers", "code-objects-failed",
                       "code objects that failed, left as they were",
                       Summary.Failed);
}

/// A code object that is the whole input.
static Expected<Rewritten>
rewriteCodeObjectInput(ArrayRef<uint8_t> Input, const PipelineText &P,
                       const PipelineOptions &Opts, RunSummary &Summary,
                       const StartHeadFn &StartHead) {
  auto Run = std::make_unique<CodeObjectRun>();
  Run->Payload = Input;
  Run->InputOffset = 0;
  Run->DeferDigest = true; // settled by image()'s writer
  Run->StartHead = StartHead;
  runCodeObject(*Run, P, Opts);
  // What its print passes printed as JSON (before any error, as text is).
  if (Opts.PrintOut)
    for (const json::Value &V : Run->Facts.Printed)
      *Opts.PrintOut << formatv("{0:2}", V) << "\n";
  if (Run->Err)
    return std::move(Run->Err);
  Summary.CodeObjects = 1;
  Summary.Changed = Run->Changed;
  Summary.addUnfit(Run->Facts.Unfit, "");
  Summary.Kernels += Run->Facts.Kernels.value_or(0);
  Rewritten R;
  if (Run->Changed) {
    R.Size = Run->outputSize();
    R.Pieces = Run->pieces();
  } else {
    R.Size = Input.size();
    R.Pieces.Pieces.push_back({0, Input, uint64_t(0)});
  }
  R.Run = std::move(Run);
  return std::move(R);
}

static Expected<Rewritten> rewriteByKind(ArrayRef<uint8_t> Input,
                                         const PipelineText &P,
                                         const PipelineOptions &Opts,
                                         RunSummary &Summary,
                                         const StartHeadFn &StartHead) {
  switch (Summary.Kind) {
  case InputKind::Unknown:
    // Unknown input goes to the code object reader, which says what is
    // wrong with it, unless it is plainly no code object at all.
    if (std::optional<std::string> Why = whyUnknown(Input))
      return makeError(*Why);
    [[fallthrough]];
  case InputKind::CodeObject:
    return rewriteCodeObjectInput(Input, P, Opts, Summary, StartHead);
  case InputKind::OffloadBundle:
  case InputKind::CompressedOffloadBundle:
    return rewriteBundleInput(Input, P, Opts, Summary);
  case InputKind::HostELF:
    return rewriteHostInput(Input, P, Opts, Summary, StartHead);
  }
  llvm_unreachable("unknown input kind");
}

Expected<Rewritten> pipeline::rewriteInput(ArrayRef<uint8_t> Input,
                                           const PipelineText &P,
                                           const PipelineOptions &Opts,
                                           RunSummary &Summary,
                                           const StartHeadFn &StartHead) {
  Summary.Kind = bundle::identifyInput(Input);
  Expected<Rewritten> R =
      P.restores() ? restoreInput(Input, P, Opts, Summary)
                   : rewriteByKind(Input, P, Opts, Summary, StartHead);
  // (Restoring a host binary runs no code object.)
  if (Summary.Kind != InputKind::CodeObject &&
      Summary.Kind != InputKind::Unknown &&
      !(P.restores() && Summary.Kind == InputKind::HostELF))
    countCodeObjects(Summary, Opts);
  if (!R)
    return R;
  if (Error E = checkPassesFit(P, Summary))
    return std::move(E);
  // A restore that succeeded gave back another file than its input.
  Summary.OutputChanged = Summary.Changed != 0 || P.restores();
  return R;
}
