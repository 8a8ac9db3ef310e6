//===- hotswap/Passes/Restore.h - restore -----------------------*- C++ -*-===//
//
// restore (transform of whole inputs; the only pass of its pipeline)
//   Requires:     an input that carries a provenance record
//                 (ProvenanceRecord.h): a code object or HIP host binary
//                 the pipeline changed, or an offload bundle (plain or
//                 compressed) some of whose code objects it changed.
//   Establishes:  the output is the input the record leads back to: the
//                 first OriginalSize bytes with the original bytes of every
//                 edited range put back, checked against the recorded
//                 SHA-256 before anything is written. Byte for byte for
//                 code objects and host binaries (whose new bundles vanish
//                 with the truncation and whose old ones were never moved),
//                 and for plain bundles written as clang lays them out:
//                 their code objects are restored one by one and the bundle
//                 laid out again like that (the rewrite warns about a bundle
//                 that was not). A compressed bundle is the same
//                 uncompressed bundle compressed again with its version and
//                 method at clang's level; its bytes differ from the
//                 original's when that was compressed at another level or
//                 by another zstd or zlib (its contents never do).
//   Fails closed: an input without a record (a bundle: none of whose code
//                 objects has one), a record that does not parse, and a
//                 file modified after it was rewritten (checkProvenance)
//                 are errors; nothing is written.
//
// Not a mutation of the model: giving back bytes the model never held
// (truncating the file, putting edited bytes back) is what the pipeline
// does with the input's bytes when `restore` is its pipeline (see
// lib/Pipeline/Restore.cpp). The pass itself only names that mode; run on
// a model (runPassManager) it is an error, and so is a pipeline that mixes
// it with other passes.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_RESTORE_H
#define HOTSWAP_PASSES_RESTORE_H

#include "hotswap/Pass/Pass.h"

namespace hotswap {

class RestorePass : public PassInfoMixin<RestorePass> {
public:
  static constexpr llvm::StringLiteral Name = "restore";
  static constexpr llvm::StringLiteral Invariant =
      "the file is the input its provenance record leads back to";

  llvm::Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                        PassContext &Ctx) override;
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_RESTORE_H
