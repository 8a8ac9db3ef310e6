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
// An old bundle, once its wrappers point at its new copy, is read by no one;
// the output leaves it as a hole (zeros, no disk blocks) when `restore` can
// make it again from the new copy -- its code objects given back by their
// records, then laid out (and compressed) again -- which is proven here for
// each: the bundle is laid out as clang lays it out (NewBundle::
// NotRestorable), and a compressed one is what compressing its
// uncompressed bundle again gives. The host's record then names it a
// rebuilt range (ProvenanceRecord.h) instead of holding its bytes. Where
// that is not proven the old bundle stays as it was (-stats counts it), or
// with --zero-old-bundles is zeroed and its bytes held in the record.
//
// A host rewritten before: the segment that run appended is ours, and when
// a bundle changes, the new segment takes its place (HostBinary::
// reclaimAppended), with every bundle that was in it; the record's rebuilt
// ranges follow them to their new copies (HoleRecord::Moved).
//
//===----------------------------------------------------------------------===//

#include "BundleStream.h"
#include "InputDigest.h"
#include "Rewrite.h"

#include "hotswap/Bundle/CompressedBundle.h"
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

void pipeline::leaveHoles(OutputPieces &P, ArrayRef<ByteRange> Holes) {
  if (Holes.empty())
    return;
  std::vector<OutputPiece> Out;
  Out.reserve(P.Pieces.size() + Holes.size());
  for (const OutputPiece &Piece : P.Pieces) {
    const uint64_t End = Piece.Offset + Piece.Bytes.size();
    auto Keep = [&](uint64_t From, uint64_t To) {
      if (From >= To)
        return;
      OutputPiece Part = Piece;
      Part.Offset = From;
      Part.Bytes = Piece.Bytes.slice(From - Piece.Offset, To - From);
      if (Piece.InputOffset)
        Part.InputOffset = *Piece.InputOffset + (From - Piece.Offset);
      Out.push_back(Part);
    };
    // The first hole that ends after the piece's start.
    auto H = llvm::partition_point(
        Holes, [&](const ByteRange &G) { return G.end() <= Piece.Offset; });
    uint64_t Pos = Piece.Offset;
    for (; H != Holes.end() && H->Offset < End; ++H) {
      Keep(Pos, std::min(End, H->Offset));
      Pos = std::max(Pos, H->end());
    }
    Keep(Pos, End);
  }
  P.Pieces = std::move(Out);
}

RebuildFn pipeline::hostRebuilder(ArrayRef<uint8_t> File,
                                  const PipelineOptions &Opts) {
  PipelineOptions Quiet = Opts;
  Quiet.StatsOut = nullptr; // (not restored objects of the output)
  // (The caller hands the whole bundle back once it is rebuilt, not each
  // code object's blocks as it is checked.)
  Quiet.ReleaseInput = nullptr;
  return [File, Quiet](const RebuiltRange &G) -> Expected<OutputPieces> {
    DecompressionBudget Budget(File.size());
    Expected<BundlePlan> Plan =
        planBundle(File.slice(G.SourceOffset, G.SourceSize), G.SourceOffset,
                   "bundle at offset " + hex(G.SourceOffset), Budget);
    if (!Plan)
      return Plan.takeError();
    for (auto &R : Plan->Runs) {
      if (!R->Err)
        restoreCodeObject(*R, Quiet);
      if (R->Err)
        return prefixError(R->Name, std::move(R->Err));
    }
    Expected<std::optional<NewBundle>> N = buildBundle(*Plan);
    if (!N)
      return N.takeError();
    if (!*N) // no code object was rewritten: the bundle is its own original
      return makeError("none of its code objects has a provenance record");
    if ((*N)->Size != G.Size)
      return makeError("restored, it is " + hex((*N)->Size) + " bytes, not " +
                       hex(G.Size));
    // The pieces point into the plan's decompressed bytes (a CCOB's
    // entries): kept with them.
    OutputPieces Out = std::move((*N)->Pieces);
    if (Plan->Decompressed)
      Out.Owned.push_back(std::move(Plan->Decompressed->Bytes));
    return std::move(Out);
  };
}

/// Why `restore` would not make the bundle of \p Plan (changed; its new
/// copy's NewBundle::NotRestorable is \p NotRestorable) again from its new
/// copy, or nullopt.
static std::optional<std::string>
whyNotRebuilt(const BundlePlan &Plan,
              const std::optional<std::string> &NotRestorable) {
  if (NotRestorable)
    return NotRestorable;
  if (!Plan.Decompressed)
    return std::nullopt;
  const bundle::CompressedBundleHeader &H = Plan.Decompressed->Header;
  Expected<std::vector<uint8_t>> Again =
      bundle::compressBundle(Plan.Decompressed->Bytes, H.Version, H.Method);
  if (!Again)
    return "it cannot be compressed again: " + toString(Again.takeError());
  if (ArrayRef<uint8_t>(*Again) != Plan.Decompressed->Compressed)
    return std::string("compressed again as clang compresses it, it is other "
                       "bytes");
  return std::nullopt;
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
  Expected<ProvenanceAnalysis::Result> R = analyzeProvenance(
      Host, Input, hostRebuilder(Input, Opts), Opts.ReleaseInput);
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
  if (Opts.ReleaseInput) // (what checking its record reads, handed back)
    (*Host)->setInputReleaser(Opts.ReleaseInput);
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
  // a pool and a new record is likely to need it (not without a transform:
  // verify and the printers change nothing).
  const bool Likely = !Recorded && !P.canonical().empty();
  auto Digest = std::make_shared<InputDigest>(Input, Opts, /*Release=*/true,
                                              Likely ? InputDigest::Ahead::Pool
                                                     : InputDigest::Ahead::No);
  std::vector<json::Value> JSON;
  if (Error E = checkHostRecord(**Host, Input, P, Opts, JSON))
    return std::move(E);
  Expected<std::vector<BundlePlan>> Plans = planBundles(*HB, Input, Opts);
  if (!Plans)
    return Plans.takeError();
  if (Likely)
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
  // Which old bundles become holes: those of an earlier rewrite of ours
  // (past the original's extent: the record needs none of them), and those
  // restore can make again.
  std::optional<ProvenanceRecord> OldRec;
  if (Recorded) {
    Expected<std::optional<ProvenanceRecord>> Rec = readProvenance(**Host);
    if (!Rec)
      return prefixError("host binary", Rec.takeError());
    OldRec = std::move(*Rec);
  }
  const uint64_t Extent = OldRec ? OldRec->OriginalSize : Input.size();
  // Rewritten before, and a bundle changes: the segment that run appended
  // is ours, and the new one takes its place (the file does not grow by a
  // copy per rewrite); each bundle in it goes into the new one, changed or
  // not. (When none changes, the host stays as it is.)
  bool Reclaimed = false;
  if (OldRec &&
      llvm::any_of(Sizes, [](const auto &S) { return S.has_value(); })) {
    Expected<bool> Took = HB->reclaimAppended(**Host, Extent);
    if (!Took)
      return Took.takeError();
    Reclaimed = *Took;
  }
  uint64_t Carried = 0;
  for (size_t I = 0; I < Plans->size(); ++I) {
    if (!HB->reclaimed(I) || Sizes[I])
      continue;
    ArrayRef<uint8_t> B = HB->bundles()[I].Bytes;
    NewBundle Copy;
    Copy.Size = B.size();
    Copy.Pieces.Pieces.push_back({0, B, uint64_t(B.data() - Input.data())});
    New[I] = std::move(Copy);
    Sizes[I] = B.size();
    ++Carried;
  }
  auto EditedBefore = [&](uint64_t Off, uint64_t Size) {
    if (!OldRec)
      return false;
    for (const ProvenanceRange &G : OldRec->Ranges)
      if (G.Offset < Off + Size && Off < G.end())
        return true;
    for (const RebuiltRange &G : OldRec->Rebuilt)
      if (G.Offset < Off + Size && Off < G.end())
        return true;
    return false;
  };
  std::vector<bool> Hole(Plans->size(), false), Rebuilt(Plans->size(), false);
  uint64_t Kept = 0, KeptBytes = 0, Holes = 0, HoleBytes = 0, Ours = 0;
  for (size_t I = 0; I < Plans->size(); ++I) {
    if (!Sizes[I])
      continue;
    ArrayRef<uint8_t> B = HB->bundles()[I].Bytes;
    const uint64_t Off = B.data() - Input.data();
    if (Off >= Extent) {
      Hole[I] = true;
      ++Ours;
      continue;
    }
    const bool Proven =
        Off + B.size() <= Extent && !EditedBefore(Off, B.size()) &&
        !whyNotRebuilt((*Plans)[I], I < Streamed ? Stream->notRestorable(I)
                                                 : New[I]->NotRestorable);
    Hole[I] = Rebuilt[I] = Proven;
    (Proven ? Holes : Kept) += 1;
    (Proven ? HoleBytes : KeptBytes) += B.size();
  }
  if (Opts.StatsOut && Holes)
    Opts.StatsOut->add("containers", "old-bundles-rebuilt",
                       "old bundles left as holes (restore rebuilds them)",
                       Holes);
  if (Opts.StatsOut && HoleBytes)
    Opts.StatsOut->add("containers", "old-bundle-bytes-rebuilt",
                       "bytes of old bundles left as holes", HoleBytes);
  if (Opts.StatsOut && Ours)
    Opts.StatsOut->add("containers", "old-bundles-appended",
                       Reclaimed ? "bundles an earlier rewrite appended, "
                                   "laid out again in its segment's place"
                                 : "bundles an earlier rewrite appended, left "
                                   "as holes",
                       Ours);
  if (Opts.StatsOut && Carried)
    Opts.StatsOut->add("containers", "old-bundles-carried",
                       "unchanged bundles an earlier rewrite appended, copied "
                       "into the new segment",
                       Carried);
  if (Opts.StatsOut && OldRec && !Reclaimed && Ours)
    Opts.StatsOut->add("containers", "appended-segments-kept",
                       "segments an earlier rewrite appended, kept (the file "
                       "was laid out again since)",
                       1);
  if (Opts.StatsOut && Kept)
    Opts.StatsOut->add("containers", "old-bundles-kept",
                       Opts.ZeroOldBundles
                           ? "old bundles restore cannot rebuild, zeroed "
                             "(their bytes in the provenance record)"
                           : "old bundles kept (restore cannot rebuild them)",
                       Kept);
  if (Opts.StatsOut && KeptBytes)
    Opts.StatsOut->add("containers", "old-bundle-bytes-kept",
                       "bytes of old bundles kept or held in the record",
                       KeptBytes);
  bundle::HostRewriteOptions HO;
  HO.ZeroOldBundles = Opts.ZeroOldBundles;
  HO.LeftAsHoles = Hole;
  Expected<bundle::PlacedBundles> Placed = HB->placeBundles(**Host, Sizes, HO);
  if (!Placed)
    return Placed.takeError();
  Expected<Layout> L = computeLayout(**Host);
  if (!L)
    return L.takeError();
  if (Streamed != 0)
    if (Error E = checkStreamed(*Stream, Streamed, *Placed, *L))
      return std::move(E);
  HoleRecord HR;
  std::optional<uint64_t> SectionAt;
  if (Placed->Section) {
    SectionAt = L->SectionOffsets[*Placed->Section];
    HR.Rebuild = hostRebuilder(Input, Opts);
    for (size_t I = 0; I < Plans->size(); ++I) {
      if (!Hole[I])
        continue;
      ArrayRef<uint8_t> B = HB->bundles()[I].Bytes;
      const ByteRange Old{uint64_t(B.data() - Input.data()), B.size()};
      const ByteRange NewCopy{*SectionAt + *Placed->Offsets[I], *Sizes[I]};
      // (What was appended and is laid out again holds the new bytes.)
      if (!HB->reclaimed(I))
        HR.Holes.push_back(Old);
      if (Rebuilt[I])
        HR.Rebuilt.push_back(
            {Old.Offset, Old.Size, NewCopy.Offset, NewCopy.Size});
      else
        HR.Moved.push_back({Old, NewCopy});
    }
    // (Bundles are listed by first use.)
    llvm::sort(HR.Holes, [](const ByteRange &A, const ByteRange &B) {
      return A.Offset < B.Offset;
    });
    llvm::sort(HR.Rebuilt, [](const RebuiltRange &A, const RebuiltRange &B) {
      return A.Offset < B.Offset;
    });
  }
  Rewritten R;
  if (Placed->Section) {
    // The host's own record: its edits (wrapper pointers, relocation
    // addends, headers, zeroed bundles) and the old bundles restore
    // rebuilds; its new bundles come after its end.
    Expected<WrittenProvenance> W =
        recordProvenance(**Host, *L, P, Digest, false, &HR);
    if (!W)
      return prefixError("host binary", W.takeError());
    R.Record = std::move(*W);
    if (L->SectionOffsets[*Placed->Section] != *SectionAt)
      return makeError("internal error: the provenance record moved the new "
                       "bundles");
  }

  R.Size = L->FileSize;
  R.Pieces = renderPieces(**Host, *L);
  if (R.Record)
    R.Record->addTo(R.Pieces, *L, Input);
  leaveHoles(R.Pieces, HR.Holes);
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
