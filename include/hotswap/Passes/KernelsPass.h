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

#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Pass/Pass.h"
#include "hotswap/Passes/Kernels.h"

namespace hotswap {

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
