//===- hotswap/Passes/Provenance.h - The provenance analysis ----*- C++ -*-===//
//
// provenance (analysis; print<provenance> prints it)
//   The provenance record of the file the object was read from
//   (ProvenanceRecord.h): how often and by what it was rewritten, the
//   original it leads back to, the ranges edited in place, and whether the
//   file still leads back to it (checkProvenance). Reads the input bytes,
//   never the model, so no pass invalidates what it says. An object
//   without a record has none; a record that does not parse is an error.
//   A HIP host binary's own record is printed by the pipeline, before those
//   of its code objects (the passes run on code objects only).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_PROVENANCE_H
#define HOTSWAP_PASSES_PROVENANCE_H

#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Passes/ProvenanceRecord.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace hotswap {

class ProvenanceAnalysis {
public:
  static AnalysisKey Key;
  static llvm::StringRef name() { return "provenance"; }

  struct Result {
    std::optional<ProvenanceRecord> Record;
    /// Why the file no longer leads back to the record's original, or
    /// nullopt when it does (or there is no record).
    std::optional<std::string> Problem;

    /// The first field in which this result differs from \p Fresh, or
    /// nullopt (-verify-analysis-preservation; it reads the input bytes
    /// only, so none ever does).
    std::optional<std::string> firstDifference(const Result &Fresh) const;
  };

  static llvm::Expected<Result> run(Object &Obj, AnalysisManager &AM);
  /// print<provenance>: the record, as text ...
  static llvm::Error print(Result &R, Object &Obj, AnalysisManager &AM,
                           llvm::raw_ostream &OS);
  /// ... or as JSON (provenanceJSON).
  static llvm::json::Value toJSON(Result &R, Object &Obj, AnalysisManager &AM);
};

/// The provenance of the file \p File, whose model is \p Obj (\p Rebuild
/// makes the rebuilt ranges of a host binary's record; what the check reads
/// of \p File is handed to \p Release behind it).
llvm::Expected<ProvenanceAnalysis::Result>
analyzeProvenance(const Object &Obj, llvm::ArrayRef<uint8_t> File,
                  const RebuildFn &Rebuild = {}, const ReleaseFn &Release = {});

/// \p R as text (several lines, each ending in a newline).
void printProvenance(const ProvenanceAnalysis::Result &R,
                     llvm::raw_ostream &OS);
/// \p R as a JSON object ("record": null without one).
llvm::json::Object provenanceJSON(const ProvenanceAnalysis::Result &R);

} // namespace hotswap

#endif // HOTSWAP_PASSES_PROVENANCE_H
