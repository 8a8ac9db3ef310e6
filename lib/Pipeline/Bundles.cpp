//===- lib/Pipeline/Bundles.cpp - The code objects of a bundle ------------===//
//
// Runs the pipeline on every AMDGPU code object of an offload bundle (plain
// or compressed) and writes the bundle back with the new ones: entries,
// IDs and their order kept, other entries copied verbatim, the input's
// version and method for a compressed bundle. The code objects run in
// parallel on Opts.ThreadPool unless instrumentation asks for one at a
// time; what each run reports (warnings, print<...> output, counters) is
// kept and handed on in entry order, so the output never depends on it.
//
//===----------------------------------------------------------------------===//

#include "Rewrite.h"

#include "hotswap/Bundle/CompressedBundle.h"
#include "hotswap/Bundle/OffloadBundle.h"
#include "hotswap/Object/Writer.h"
#include "hotswap/Support/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::pipeline;
using bundle::InputKind;

namespace {
/// One code object of the bundle and what its run produced.
struct EntryRun {
  size_t Index = 0;
  std::string Name; // "bundle entry 'hip-amdgcn-amd-amdhsa--gfx90a'"
  ArrayRef<uint8_t> Payload;

  Error Err = Error::success();
  bool Changed = false;
  /// The rewritten code object, laid out; rendered straight into the new
  /// bundle.
  std::optional<Rewritten> Result;
  std::vector<std::string> Warnings;
  std::string Printed;
  Statistics Stats;
  /// Passes that did not fit this code object (PassContext::Unfit).
  std::vector<UnfitPass> Unfit;
};

/// Whether a bundle entry ID names an AMDGPU (HSA) target:
/// "<kind>-amdgcn-amd-amdhsa-<env>-<target id>".
bool isAMDGPUEntry(StringRef ID) { return ID.contains("-amdgcn-amd-amdhsa"); }

std::string entryName(StringRef Where, StringRef ID) {
  std::string S;
  raw_string_ostream OS(S);
  OS << (Where.empty() ? StringRef("bundle") : Where) << " entry '";
  printEscapedString(ID.take_front(120), OS);
  OS << "'";
  return S;
}

/// What a payload that is not a code object is, for the message.
std::string notACodeObject(ArrayRef<uint8_t> Payload) {
  StringRef S(reinterpret_cast<const char *>(Payload.data()), Payload.size());
  if (S.starts_with("BC\xC0\xDE"))
    return "its payload is LLVM bitcode (an -fgpu-rdc object before device "
           "linking), not a linked AMDGPU code object";
  return "its payload is " + bundle::describeInput(Payload) +
         ", not an AMDGPU code object";
}

void run(EntryRun &E, const PipelineText &P, const PipelineOptions &Opts) {
  PipelineOptions O = Opts;
  O.Warn = [&E](const Twine &Msg) { E.Warnings.push_back(Msg.str()); };
  raw_string_ostream PrintOS(E.Printed);
  if (Opts.PrintOut)
    O.PrintOut = &PrintOS;
  O.StatsOut = &E.Stats;
  Expected<Rewritten> R =
      rewriteCodeObject(E.Payload, P, O, E.Changed, &E.Unfit);
  if (Opts.OnCodeObjectDone)
    Opts.OnCodeObjectDone(E.Payload.size());
  if (!R) {
    E.Err = R.takeError();
    return;
  }
  if (E.Changed)
    E.Result = std::move(*R);
}

/// Hands on what \p E reported, in order, on the calling thread.
void replay(EntryRun &E, const PipelineOptions &Opts,
            std::vector<json::Value> *JSONOut) {
  if (Opts.Warn)
    for (const std::string &W : E.Warnings)
      Opts.Warn(E.Name + ": " + W);
  if (Opts.StatsOut)
    Opts.StatsOut->merge(E.Stats);
  if (!Opts.PrintOut || E.Printed.empty())
    return;
  if (!JSONOut) {
    *Opts.PrintOut << E.Name << ":\n" << E.Printed;
    return;
  }
  // Each code object's JSON, with the entry it came from.
  Expected<json::Value> V = json::parse(E.Printed);
  if (!V) {
    consumeError(V.takeError());
    json::Object O{{"entry", E.Name}, {"output", E.Printed}};
    JSONOut->push_back(std::move(O));
    return;
  }
  if (json::Object *O = V->getAsObject()) {
    O->try_emplace("entry", E.Name);
    JSONOut->push_back(std::move(*V));
  } else {
    JSONOut->push_back(json::Object{{"entry", E.Name}, {"output", *V}});
  }
}

/// \p Decompressed: \p Bytes came out of a CCOB (the offsets and sizes a
/// parse error names are in those bytes, not in the input's).
Expected<std::optional<std::vector<uint8_t>>>
rewriteUncompressed(ArrayRef<uint8_t> Bytes, StringRef Where, bool Decompressed,
                    const PipelineText &P, const PipelineOptions &Opts,
                    RunSummary &Summary, std::vector<json::Value> *JSONOut) {
  Expected<bundle::OffloadBundle> B = bundle::parseOffloadBundle(Bytes);
  if (!B) {
    if (Decompressed)
      return prefixError(Where.empty() ? Twine("decompressed bundle")
                                       : Where + ", decompressed",
                         B.takeError());
    if (Where.empty())
      return B.takeError();
    return prefixError(Where, B.takeError());
  }

  std::vector<EntryRun> Runs;
  for (size_t I = 0; I < B->Entries.size(); ++I) {
    const bundle::OffloadBundleEntry &Entry = B->Entries[I];
    if (Entry.empty() || !isAMDGPUEntry(Entry.ID))
      continue; // host and other entries are copied verbatim
    EntryRun R;
    R.Index = I;
    R.Name = entryName(Where, Entry.ID);
    R.Payload = Entry.Payload;
    if (bundle::identifyInput(Entry.Payload) != InputKind::CodeObject)
      R.Err = makeError(notACodeObject(Entry.Payload));
    Runs.push_back(std::move(R));
  }

  if (Opts.OnCodeObjectsFound)
    Opts.OnCodeObjectsFound(static_cast<unsigned>(Runs.size()));
  bool Parallel = Opts.ThreadPool && !Opts.Instrumentation && Runs.size() > 1;
  if (Parallel) {
    // The code objects are the unit of parallel work: inside each, the
    // scans run on its task's thread (fanning them out again would give
    // every code object MC states of its own on every worker, for nothing).
    PipelineOptions EntryOpts = Opts;
    EntryOpts.ThreadPool = nullptr;
    ThreadPoolTaskGroup Tasks(*Opts.ThreadPool);
    for (EntryRun &R : Runs)
      if (!R.Err)
        Tasks.async([&R, &P, &EntryOpts] { run(R, P, EntryOpts); });
    Tasks.wait();
  }

  // The JSON of every entry, for the caller's array or one of our own.
  std::vector<json::Value> OwnJSON;
  std::vector<json::Value> *JSONEntries = JSONOut ? JSONOut : &OwnJSON;
  std::vector<std::optional<bundle::RenderedPayload>> Replace(
      B->Entries.size());
  for (size_t K = 0; K < Runs.size(); ++K) {
    EntryRun &R = Runs[K];
    if (!Parallel && !R.Err) {
      if (Opts.OnCodeObject)
        Opts.OnCodeObject(R.Name);
      run(R, P, Opts);
    }
    replay(R, Opts, Opts.JSON ? JSONEntries : nullptr);
    ++Summary.CodeObjects;
    if (R.Err) {
      if (!Opts.KeepGoing) {
        // The first failing entry (in order) fails the bundle.
        for (EntryRun &Rest : MutableArrayRef(Runs).drop_front(K + 1))
          consumeError(std::move(Rest.Err));
        return prefixError(R.Name, std::move(R.Err));
      }
      std::string Msg = toString(std::move(R.Err));
      if (Opts.Warn)
        Opts.Warn(R.Name + ": " + Msg + "; left unchanged");
      ++Summary.Failed;
      continue;
    }
    Summary.addUnfit(R.Unfit, R.Name);
    if (R.Changed) {
      ++Summary.Changed;
      const Object &Obj = *R.Result->Model;
      const Layout &L = *R.Result->ModelLayout;
      Replace[R.Index] = bundle::RenderedPayload{
          L.FileSize, [&Obj, &L](MutableArrayRef<uint8_t> Out) {
            writeObject(Obj, L, Out);
          }};
    }
  }
  printJSONEntries(OwnJSON, Opts);
  if (llvm::none_of(Replace, [](const auto &R) { return R.has_value(); }))
    return std::nullopt;
  Expected<std::vector<uint8_t>> Out =
      bundle::rewriteOffloadBundle(*B, Replace);
  if (!Out) {
    if (Where.empty())
      return Out.takeError();
    return prefixError(Where, Out.takeError());
  }
  return std::optional<std::vector<uint8_t>>(std::move(*Out));
}
} // namespace

void pipeline::printJSONEntries(std::vector<json::Value> &Entries,
                                const PipelineOptions &Opts) {
  if (Entries.empty() || !Opts.PrintOut)
    return;
  *Opts.PrintOut << formatv("{0:2}", json::Value(std::move(Entries))) << "\n";
  Entries.clear();
}

Expected<std::optional<std::vector<uint8_t>>>
pipeline::rewriteBundle(ArrayRef<uint8_t> Bytes, StringRef Where,
                        const PipelineText &P, const PipelineOptions &Opts,
                        RunSummary &Summary,
                        std::vector<json::Value> *JSONOut) {
  if (bundle::identifyInput(Bytes) != InputKind::CompressedOffloadBundle)
    return rewriteUncompressed(Bytes, Where, /*Decompressed=*/false, P, Opts,
                               Summary, JSONOut);
  // The bundle layer's messages say "compressed bundle" already.
  auto Located = [&](Error E) {
    return Where.empty() ? std::move(E) : prefixError(Where, std::move(E));
  };
  Expected<bundle::DecompressedBundle> D = bundle::decompressBundle(Bytes);
  if (!D)
    return Located(D.takeError());
  Expected<std::optional<std::vector<uint8_t>>> Inner = rewriteUncompressed(
      D->Bytes, Where, /*Decompressed=*/true, P, Opts, Summary, JSONOut);
  if (!Inner || !*Inner)
    return Inner;
  Expected<std::vector<uint8_t>> Out = bundle::recompressBundle(*D, **Inner);
  if (!Out)
    return Located(Out.takeError());
  return std::optional<std::vector<uint8_t>>(std::move(*Out));
}
