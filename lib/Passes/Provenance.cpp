//===- lib/Passes/Provenance.cpp - The provenance analysis ----------------===//
//
// print<provenance>: the record of the file an object was read from, as
// text for people and JSON for tools.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Passes/Provenance.h"

#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace hotswap;

AnalysisKey ProvenanceAnalysis::Key;

Expected<ProvenanceAnalysis::Result>
hotswap::analyzeProvenance(const Object &Obj, ArrayRef<uint8_t> File,
                           const RebuildFn &Rebuild, const ReleaseFn &Release) {
  Expected<std::optional<ProvenanceRecord>> Rec = readProvenance(Obj);
  if (!Rec)
    return Rec.takeError();
  ProvenanceAnalysis::Result R;
  R.Record = std::move(*Rec);
  if (R.Record)
    if (Error E = checkProvenance(*R.Record, File, Rebuild, Release))
      R.Problem = toString(std::move(E));
  return std::move(R);
}

std::optional<std::string>
ProvenanceAnalysis::Result::firstDifference(const Result &Fresh) const {
  if (Record.has_value() != Fresh.Record.has_value())
    return std::string("record");
  if (Record) {
    const ProvenanceRecord &A = *Record, &B = *Fresh.Record;
    if (A.OriginalSize != B.OriginalSize ||
        A.OriginalSHA256 != B.OriginalSHA256)
      return std::string("original");
    if (A.Runs.size() != B.Runs.size())
      return std::string("runs");
    if (A.Ranges.size() != B.Ranges.size() || A.EditedSHA256 != B.EditedSHA256)
      return std::string("edited ranges");
    if (A.Rebuilt != B.Rebuilt)
      return std::string("rebuilt ranges");
  }
  if (Problem != Fresh.Problem)
    return std::string("problem");
  return std::nullopt;
}

Expected<ProvenanceAnalysis::Result>
ProvenanceAnalysis::run(Object &Obj, AnalysisManager &) {
  return analyzeProvenance(Obj, Obj.input());
}

void hotswap::printProvenance(const ProvenanceAnalysis::Result &R,
                              raw_ostream &OS) {
  if (!R.Record) {
    OS << "provenance: none (not rewritten by hotswap-opt)\n";
    return;
  }
  const ProvenanceRecord &Rec = *R.Record;
  OS << "provenance: rewritten " << Rec.Runs.size()
     << (Rec.Runs.size() == 1 ? " time" : " times") << " from "
     << Rec.OriginalSize << " bytes with SHA-256 "
     << digestHex(Rec.OriginalSHA256) << "\n";
  for (size_t I = 0; I < Rec.Runs.size(); ++I) {
    const ProvenanceRun &Run = Rec.Runs[I];
    OS << "  run " << I + 1 << ": hotswap-opt " << Run.Version
       << " -passes=" << Run.Pipeline << " on " << Run.InputSize << " bytes\n";
  }
  const size_t Moved = llvm::count_if(
      Rec.Ranges, [](const ProvenanceRange &G) { return G.Source; });
  const size_t Held = Rec.Ranges.size() - Moved;
  OS << "  edited in place: " << Held << (Held == 1 ? " range" : " ranges")
     << ", " << Rec.editedBytes() << " bytes\n";
  // Each range with the original bytes it holds (the first 16 of them).
  constexpr size_t Shown = 16;
  for (const ProvenanceRange &G : Rec.Ranges)
    if (!G.Source)
      OS << "    " << hex(G.Offset) << " +" << hex(G.Size) << " was "
         << toHex(G.Original.take_front(Shown), /*LowerCase=*/true)
         << (G.Original.size() > Shown ? "..." : "") << "\n";
  if (Moved) {
    OS << "  moved (the output holds the original bytes elsewhere): " << Moved
       << (Moved == 1 ? " range" : " ranges") << ", " << Rec.movedBytes()
       << " bytes\n";
    for (const ProvenanceRange &G : Rec.Ranges)
      if (G.Source)
        OS << "    " << hex(G.Offset) << " +" << hex(G.Size) << " now at "
           << hex(*G.Source) << "\n";
  }
  if (!Rec.Rebuilt.empty()) {
    uint64_t Bytes = 0;
    for (const RebuiltRange &G : Rec.Rebuilt)
      Bytes += G.Size; // disjoint, inside OriginalSize: no overflow
    OS << "  rebuilt from bundles: " << Rec.Rebuilt.size()
       << (Rec.Rebuilt.size() == 1 ? " range" : " ranges") << ", " << Bytes
       << " bytes\n";
    for (const RebuiltRange &G : Rec.Rebuilt)
      OS << "    " << hex(G.Offset) << " +" << hex(G.Size)
         << " from the bundle at " << hex(G.SourceOffset) << " +"
         << hex(G.SourceSize) << "\n";
  }
  if (Rec.LaidOutFrom < Rec.OriginalSize)
    OS << "  laid out again from " << hex(Rec.LaidOutFrom)
       << " (the bytes after it are the output's own)\n";
  OS << "  leads back to the original: "
     << (R.Problem ? "no: " + *R.Problem : std::string("yes")) << "\n";
}

json::Object hotswap::provenanceJSON(const ProvenanceAnalysis::Result &R) {
  if (!R.Record)
    return json::Object{{"provenance", nullptr}};
  const ProvenanceRecord &Rec = *R.Record;
  json::Array Runs, Edits;
  for (const ProvenanceRun &Run : Rec.Runs)
    Runs.push_back(json::Object{{"version", Run.Version},
                                {"pipeline", Run.Pipeline},
                                {"input_size", Run.InputSize}});
  json::Array MovedRanges;
  for (const ProvenanceRange &G : Rec.Ranges)
    if (G.Source)
      MovedRanges.push_back(json::Object{{"offset", G.Offset},
                                         {"size", G.Size},
                                         {"source_offset", *G.Source}});
    else
      Edits.push_back(
          json::Object{{"offset", G.Offset},
                       {"size", G.Size},
                       {"original", toHex(G.Original, /*LowerCase=*/true)}});
  json::Array Rebuilt;
  for (const RebuiltRange &G : Rec.Rebuilt)
    Rebuilt.push_back(json::Object{{"offset", G.Offset},
                                   {"size", G.Size},
                                   {"source_offset", G.SourceOffset},
                                   {"source_size", G.SourceSize}});
  json::Object O{{"original_size", Rec.OriginalSize},
                 {"original_sha256", digestHex(Rec.OriginalSHA256)},
                 {"runs", std::move(Runs)},
                 {"edits", std::move(Edits)},
                 {"edited_bytes", Rec.editedBytes()},
                 {"leads_back", !R.Problem}};
  if (!Rec.Rebuilt.empty())
    O["rebuilt"] = std::move(Rebuilt);
  if (Rec.LaidOutFrom < Rec.OriginalSize)
    O["laid_out_from"] = Rec.LaidOutFrom;
  if (!MovedRanges.empty()) {
    O["moved"] = std::move(MovedRanges);
    O["moved_bytes"] = Rec.movedBytes();
  }
  if (R.Problem)
    O["problem"] = *R.Problem;
  return json::Object{{"provenance", std::move(O)}};
}

Error ProvenanceAnalysis::print(Result &R, Object &, AnalysisManager &,
                                raw_ostream &OS) {
  printProvenance(R, OS);
  return Error::success();
}

json::Value ProvenanceAnalysis::toJSON(Result &R, Object &, AnalysisManager &) {
  return provenanceJSON(R);
}
