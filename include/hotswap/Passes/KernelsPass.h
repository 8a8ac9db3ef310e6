//===- hotswap/Passes/KernelsPass.h - Passes over the kernels ---*- C++ -*-===//
//
// Most passes decide and work from the kernels analysis. This mixin gets the
// analysis (cached, or computed once) and hands it to the pass's hooks, so
// that no pass repeats the getResult/takeError preamble:
//
//   class MyPass : public KernelsPassMixin<MyPass> {
//   public:
//     static constexpr llvm::StringLiteral Name = "my-pass";
//     static constexpr llvm::StringLiteral Invariant = "...";
//     llvm::Expected<bool> holds(Object &, KernelsAnalysis::Result &,
//                                AnalysisManager &, PassContext &);
//     llvm::Expected<PreservedAnalyses> runOnKernels(Object &,
//         KernelsAnalysis::Result &, AnalysisManager &, PassContext &);
//     // optional:
//     llvm::Expected<std::optional<std::string>> precondition(Object &,
//         KernelsAnalysis::Result &, AnalysisManager &, PassContext &);
//   };
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_KERNELSPASS_H
#define HOTSWAP_PASSES_KERNELSPASS_H

#include "hotswap/Code/MetadataCommit.h"
#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Pass/Pass.h"
#include "hotswap/Passes/Kernels.h"

namespace hotswap {

/// Writes the metadata changes pending in \p R (code::commitMetadata):
/// R.MetadataSection follows a note written anew, which -stats counts under
/// \p PassName. Does nothing when the object has no metadata.
inline llvm::Error commitKernelMetadata(Object &Obj, KernelsAnalysis::Result &R,
                                        PassContext &Ctx,
                                        llvm::StringRef PassName) {
  if (!R.Metadata || !R.MetadataSection)
    return llvm::Error::success();
  llvm::Expected<code::MetadataCommit> How =
      code::commitMetadata(*R.Metadata, Obj, R.MetadataSection);
  if (!How)
    return How.takeError();
  if (*How == code::MetadataCommit::NewNote)
    Ctx.Stats.add(
        PassName, "new-note",
        "metadata notes written anew (the changes outgrew the old one)");
  return llvm::Error::success();
}

template <typename DerivedT>
class KernelsPassMixin : public PassInfoMixin<DerivedT> {
public:
  llvm::Expected<bool> isSatisfied(Object &Obj, AnalysisManager &AM,
                                   PassContext &Ctx) final {
    auto R = AM.getResult<KernelsAnalysis>(Obj);
    if (!R)
      return R.takeError();
    return derived().holds(Obj, *R, AM, Ctx);
  }
  llvm::Expected<std::optional<std::string>>
  unmetPrecondition(Object &Obj, AnalysisManager &AM, PassContext &Ctx) final {
    auto R = AM.getResult<KernelsAnalysis>(Obj);
    if (!R)
      return R.takeError();
    return derived().precondition(Obj, *R, AM, Ctx);
  }
  llvm::Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                        PassContext &Ctx) final {
    auto R = AM.getResult<KernelsAnalysis>(Obj);
    if (!R)
      return R.takeError();
    return derived().runOnKernels(Obj, *R, AM, Ctx);
  }

  /// No precondition unless the pass declares one.
  llvm::Expected<std::optional<std::string>>
  precondition(Object &, KernelsAnalysis::Result &, AnalysisManager &,
               PassContext &) {
    return std::nullopt;
  }

private:
  DerivedT &derived() { return static_cast<DerivedT &>(*this); }
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_KERNELSPASS_H
