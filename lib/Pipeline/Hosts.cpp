//===- lib/Pipeline/Hosts.cpp - The bundles of a HIP host binary ----------===//
//
// A HIP host executable or library: every bundle its wrappers point to is
// planned, the code objects of all of them run as one pool of work (so one
// large library keeps every core busy), then the bundles that changed are
// placed in a new last PT_LOAD (HostBinary::placeBundles repoints the
// wrappers) and composed straight into the output, where the host's own
// bytes are the input's, copied whole. Written to a file with a pool, each
// new bundle goes out as soon as its code objects are done (BundleStream.h).
//
//===----------------------------------------------------------------------===//

#include "BundleStream.h"
#include "InputDigest.h"
#include "Rewrite.h"

#include "hotswap/Bundle/HostBinary.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Object/Writer.h"
#include "hotswap/Passes/Provenance.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::pipeline;

/// A plan per bundle of \p HB, whose bytes lie in \p Input.
static Expected<std::vector<BundlePlan>>
planBundles(const bundle::HostBinary &HB, ArrayRef<uint8_t> Input,
            const PipelineOptions &Opts) {
  std::vector<BundlePlan> Plans;
  DecompressionBudget Budget(Input.size());
  for (const bundle::HostBundle &B : HB.bundles()) {
    Expected<BundlePlan> Plan =
        planBundle(B.Bytes, B.Bytes.data() - Input.data(),
                   "bundle at " + hex(B.Addr), Budget);
    if (!Plan)
      return Plan.takeError();
    Plans.push_back(std::move(*Plan));
    // (Reading a header maps the file around it: handed back now.)
    if (Opts.ReleaseInput)
      Opts.ReleaseInput(B.Bytes);
  }
  return std::move(Plans);
}

/// The host's own provenance record, which the passes (run on code objects)
/// never see: `verify` checks it, print<provenance> prints it (before the
/// code objects', into \p JSON with --kernels-format=json).
static Error checkHostRecord(const Object &Host, ArrayRef<uint8_t> Input,
                             const PipelineText &P, const PipelineOptions &Opts,
                             std::vector<json::Value> &JSON) {
  const bool Print = P.has("print<provenance>") && Opts.PrintOut;
  if (!P.has("verify") && !Print)
    return Error::success();
  Expected<ProvenanceAnalysis::Result> R = analyzeProvenance(Host, Input);
  if (!R)
    return prefixError("host binary", R.takeError());
  if (Print) {
    if (Opts.JSON) {
      json::Object O = provenanceJSON(*R);
      O["entry"] = "host binary";
      JSON.push_back(std::move(O));
    } else {
      *Opts.PrintOut << "host binary:\n";
      printProvenance(*R, *Opts.PrintOut);
    }
  }
  if (!P.has("verify") || !R->Problem)
    return Error::success();
  // Stale, not broken: packagers strip, split debug information and set
  // rpaths after the build. What verify judges still holds (the structure,
  // every code object and its own record); restore refuses it.
  if (std::optional<std::string> Why =
          R->Record ? hostLaidOutAgain(Host, *R->Record) : std::nullopt) {
    if (Opts.Warn)
      Opts.Warn("host binary: " + *Why +
                ": its provenance record no longer leads back to the "
                "original, and restore will refuse it");
    return Error::success();
  }
  return makeError("host binary: verification failed: " + *R->Problem);
}

/// A host rewritten for the first time: its code objects are likely to
/// change too, each then needing its own digest. They are made now, in
/// order, for the thread that hashes the host to take along (two messages
/// hash at nearly twice the speed of one), not each by its run. Each hands
/// its pages back behind it, as the host's does (whoever hashes a code
/// object, its run may have read and handed back its pages before).
static void hashAlong(std::vector<BundlePlan> &Plans,
                      const PipelineOptions &Opts) {
  for (BundlePlan &Plan : Plans)
    for (auto &R : Plan.Runs)
      if (!R->Err)
        R->Digest = std::make_shared<InputDigest>(R->Payload, Opts,
                                                  R->InputOffset.has_value(),
                                                  InputDigest::Ahead::Along);
}

/// The bundles written ahead went where the host's layout puts them: a
/// difference would be a fault of this program, and the output wrong.
static Error checkStreamed(const BundleStream &Stream, size_t Streamed,
                           const bundle::PlacedBundles &Placed,
                           const Layout &L) {
  for (size_t I = 0; I < Streamed; ++I) {
    if (!Stream.offset(I))
      continue;
    if (!Placed.Section || Placed.Offsets[I] != Stream.offset(I) ||
        L.SectionOffsets[*Placed.Section] != Stream.sectionAt())
      return makeError("internal error: bundle " + Twine(I) +
                       " was written where the layout does not put it");
  }
  return Error::success();
}

/// Runs every code object of every bundle as one pool of work.
/// With \p Stream, each bundle is written as soon as its runs ended.
static Error runAll(std::vector<BundlePlan> &Plans, const PipelineText &P,
                    const PipelineOptions &Opts, RunSummary &Summary,
                    std::vector<json::Value> &JSON, BundleStream *Stream) {
  std::vector<CodeObjectRun *> Runs;
  for (BundlePlan &Plan : Plans)
    for (auto &R : Plan.Runs)
      Runs.push_back(R.get());
  std::function<void(const CodeObjectRun &)> Ended;
  if (Stream)
    Ended = [Stream](const CodeObjectRun &R) { Stream->ended(R); };
  // print<...> JSON: one array for the whole host, whatever its bundles.
  if (Error E = runCodeObjects(Runs, P, Opts, Summary, JSON, Ended))
    return E; // (text printed so far stays; JSON is all or none)
  printJSONEntries(JSON, Opts);
  return Error::success();
}

Expected<Rewritten> pipeline::rewriteHostInput(ArrayRef<uint8_t> Input,
                                               const PipelineText &P,
                                               const PipelineOptions &Opts,
                                               RunSummary &Summary,
                                               const StartHeadFn &StartHead) {
  MemoryBufferRef Ref(
      StringRef(reinterpret_cast<const char *>(Input.data()), Input.size()),
      "");
  ReadOptions RO;
  RO.AllowHost = true;
  Expected<std::unique_ptr<Object>> Host = readObject(Ref, RO);
  if (!Host)
    return Host.takeError();
  // Each bundle's header read maps the file around it (2 MiB where the
  // page cache holds it in huge folios: half of librocsparse.so.0.1 for
  // its headers alone), handed back as soon as it is read.
  Expected<bundle::HostBinary> HB =
      bundle::HostBinary::analyze(**Host, [&](ArrayRef<uint8_t> B) {
        if (Opts.ReleaseInput)
          Opts.ReleaseInput(B);
      });
  if (!HB)
    return HB.takeError();
  const bool Recorded = carriesRecord(**Host);
  WriteAheadFn WriteAhead;
  if (StartHead && !Recorded)
    WriteAhead = StartHead(Input.size());
  // Hashed on a pool thread beside the code objects' runs, when there is
  // a pool and a new record is likely to need it.
  auto Digest = std::make_shared<InputDigest>(
      Input, Opts, /*Release=*/true,
      Recorded ? InputDigest::Ahead::No : InputDigest::Ahead::Pool);
  std::vector<json::Value> JSON;
  if (Error E = checkHostRecord(**Host, Input, P, Opts, JSON))
    return std::move(E);
  Expected<std::vector<BundlePlan>> Plans = planBundles(*HB, Input, Opts);
  if (!Plans)
    return Plans.takeError();
  if (!Recorded)
    hashAlong(*Plans, Opts);
  std::optional<BundleStream> Stream;
  // (Where no new section can go, placeBundles says why if one is needed.)
  if (WriteAhead)
    if (std::optional<uint64_t> At =
            expectedToOptional(HB->newSectionFileOffset(**Host)))
      Stream.emplace(*Plans, *At, std::move(WriteAhead), Opts.ReleaseInput);
  Error RunErr =
      runAll(*Plans, P, Opts, Summary, JSON, Stream ? &*Stream : nullptr);
  if (Stream) // (a write that failed, say on a full disk, is said too)
    RunErr = joinErrors(std::move(RunErr), Stream->takeError());
  if (RunErr)
    return std::move(RunErr);
  const size_t Streamed = Stream ? Stream->settled() : 0;

  // The new bundles, laid out (a compressed one compressed), and placed;
  // those streamed are written already.
  std::vector<std::optional<NewBundle>> New(Plans->size());
  std::vector<std::optional<uint64_t>> Sizes(Plans->size());
  for (size_t I = 0; I < Plans->size(); ++I) {
    if (I < Streamed) {
      Sizes[I] = Stream->size(I);
      continue;
    }
    Expected<std::optional<NewBundle>> N = buildBundle((*Plans)[I]);
    if (!N)
      return N.takeError();
    Sizes[I] = *N ? std::optional<uint64_t>((*N)->Size) : std::nullopt;
    New[I] = std::move(*N);
  }
  bundle::HostRewriteOptions HO;
  HO.ZeroOldBundles = Opts.ZeroOldBundles;
  Expected<bundle::PlacedBundles> Placed = HB->placeBundles(**Host, Sizes, HO);
  if (!Placed)
    return Placed.takeError();
  Expected<Layout> L = computeLayout(**Host);
  if (!L)
    return L.takeError();
  if (Streamed != 0)
    if (Error E = checkStreamed(*Stream, Streamed, *Placed, *L))
      return std::move(E);
  Rewritten R;
  if (Placed->Section) {
    // The host's own record: its edits (wrapper pointers, relocation
    // addends, headers, zeroed bundles); its new bundles come after its end.
    Expected<WrittenProvenance> W = recordProvenance(**Host, *L, P, Digest);
    if (!W)
      return prefixError("host binary", W.takeError());
    R.Record = std::move(*W);
  }

  R.Size = L->FileSize;
  R.Pieces = renderPieces(**Host, *L);
  if (R.Record)
    R.Record->addTo(R.Pieces, *L, Input);
  if (Placed->Section) {
    const uint64_t SectionAt = L->SectionOffsets[*Placed->Section];
    for (size_t I = 0; I < New.size(); ++I)
      if (New[I])
        R.Pieces.append(std::move(New[I]->Pieces),
                        SectionAt + *Placed->Offsets[I], uint64_t(0));
  }
  R.Model = std::move(*Host);
  R.ModelLayout = std::move(*L);
  R.Bundles = std::move(*Plans);
  return std::move(R);
}
