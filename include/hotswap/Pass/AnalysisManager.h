//===- hotswap/Pass/AnalysisManager.h - Lazy cached analyses ----*- C++ -*-===//
//
// Analyses are computed on first request and cached until a pass that did not
// preserve them runs. An analysis is a class with
//   static AnalysisKey Key;  static llvm::StringRef name();
//   using Result = ...;
//   static llvm::Expected<Result> run(Object &, AnalysisManager &);
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASS_ANALYSISMANAGER_H
#define HOTSWAP_PASS_ANALYSISMANAGER_H

#include "hotswap/Pass/Pass.h"

#include "llvm/ADT/DenseMap.h"

#include <optional>

#include <functional>
#include <memory>

namespace hotswap {

class AnalysisManager {
public:
  /// Called before and after every computation (or recomputation) of an
  /// analysis, with its name: -debug-pass-manager, -time-passes.
  std::function<void(llvm::StringRef)> BeforeCompute, AfterCompute;

  template <typename AnalysisT>
  llvm::Expected<typename AnalysisT::Result &> getResult(Object &Obj) {
    using ResultT = typename AnalysisT::Result;
    auto It = Results.find(&AnalysisT::Key);
    if (It != Results.end())
      return static_cast<Model<ResultT> &>(*It->second).R;
    if (BeforeCompute)
      BeforeCompute(AnalysisT::name());
    std::optional<llvm::Expected<ResultT>> R;
    R.emplace(AnalysisT::run(Obj, *this));
    if (AfterCompute)
      AfterCompute(AnalysisT::name());
    if (!*R)
      return R->takeError();
    auto M = std::make_unique<Model<ResultT>>(std::move(**R));
    ResultT &Ref = M->R;
    Results[&AnalysisT::Key] = std::move(M);
    return Ref;
  }

  /// The cached result, or null (never computes).
  template <typename AnalysisT>
  typename AnalysisT::Result *getCachedResult() const {
    auto It = Results.find(&AnalysisT::Key);
    if (It == Results.end())
      return nullptr;
    return &static_cast<Model<typename AnalysisT::Result> &>(*It->second).R;
  }

  /// Drops every result \p PA does not preserve.
  void invalidate(const PreservedAnalyses &PA) {
    if (PA.areAllPreserved())
      return;
    for (auto It = Results.begin(); It != Results.end();) {
      auto Cur = It++;
      if (!PA.isPreserved(Cur->first))
        Results.erase(Cur);
    }
  }
  void clear() { Results.clear(); }
  bool isCached(const AnalysisKey *K) const { return Results.count(K); }

private:
  struct Concept {
    virtual ~Concept() = default;
  };
  template <typename T> struct Model : Concept {
    explicit Model(T R) : R(std::move(R)) {}
    T R;
  };
  llvm::DenseMap<const AnalysisKey *, std::unique_ptr<Concept>> Results;
};

} // namespace hotswap

#endif // HOTSWAP_PASS_ANALYSISMANAGER_H
