//===- hotswap/Pass/AnalysisManager.h - Lazy cached analyses ----*- C++ -*-===//
//
// Analyses are computed on first request and cached until a pass that did not
// preserve them runs. An analysis is a class with
//   static AnalysisKey Key;  static llvm::StringRef name();
//   using Result = ...;
//   static llvm::Expected<Result> run(Object &, AnalysisManager &);
// and its Result has
//   std::optional<std::string> firstDifference(const Result &Fresh) const;
// naming the first field in which a result a pass kept up to date differs
// from one computed anew (-verify-analysis-preservation checks every
// analysis a pass claims to preserve with it). A pass that keeps a result
// up to date does so through methods of the result, next to run(): the
// analysis owns how its fields are derived.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASS_ANALYSISMANAGER_H
#define HOTSWAP_PASS_ANALYSISMANAGER_H

#include "hotswap/Pass/Pass.h"

#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace llvm {
class ThreadPoolInterface;
} // namespace llvm

namespace hotswap {

class AnalysisManager {
public:
  /// Called before and after every computation (or recomputation) of an
  /// analysis, with its name: -debug-pass-manager, -time-passes.
  std::function<void(llvm::StringRef)> BeforeCompute, AfterCompute;
  /// Threads an analysis may hand independent parts of its work to (the
  /// run's, PassContext::ThreadPool); null: none.
  llvm::ThreadPoolInterface *ThreadPool = nullptr;

  template <typename AnalysisT>
  llvm::Expected<typename AnalysisT::Result &> getResult(Object &Obj) {
    using ResultT = typename AnalysisT::Result;
    auto It = Results.find(&AnalysisT::Key);
    if (It != Results.end())
      return static_cast<Model<AnalysisT> &>(*It->second).R;
    if (BeforeCompute)
      BeforeCompute(AnalysisT::name());
    std::optional<llvm::Expected<ResultT>> R;
    R.emplace(AnalysisT::run(Obj, *this));
    if (AfterCompute)
      AfterCompute(AnalysisT::name());
    if (!*R)
      return R->takeError();
    auto M = std::make_unique<Model<AnalysisT>>(std::move(**R));
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
    return &static_cast<Model<AnalysisT> &>(*It->second).R;
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

  /// A kept result that differs from a fresh one: the analysis and the
  /// first field that differs.
  struct StaleResult {
    std::string Analysis, Field;
  };
  /// -verify-analysis-preservation: computes every cached result anew on
  /// \p Obj (with a fresh manager: nothing kept is used) and compares it
  /// with the kept one; analyses are taken by name. The cache is left as
  /// it was.
  llvm::Expected<std::optional<StaleResult>> firstStaleResult(Object &Obj);

private:
  struct Concept {
    virtual ~Concept() = default;
    virtual llvm::StringRef name() const = 0;
    /// The first field in which this result differs from one computed
    /// anew on \p Obj.
    virtual llvm::Expected<std::optional<std::string>>
    differenceFromFresh(Object &Obj) const = 0;
  };
  template <typename AnalysisT> struct Model : Concept {
    using ResultT = typename AnalysisT::Result;
    explicit Model(ResultT R) : R(std::move(R)) {}
    llvm::StringRef name() const override { return AnalysisT::name(); }
    llvm::Expected<std::optional<std::string>>
    differenceFromFresh(Object &Obj) const override {
      AnalysisManager Fresh;
      llvm::Expected<ResultT> F = AnalysisT::run(Obj, Fresh);
      if (!F)
        return F.takeError();
      return R.firstDifference(*F);
    }
    ResultT R;
  };
  llvm::DenseMap<const AnalysisKey *, std::unique_ptr<Concept>> Results;
};

} // namespace hotswap

#endif // HOTSWAP_PASS_ANALYSISMANAGER_H
