//===- hotswap/Pass/Pass.h - Pass interface ---------------------*- C++ -*-===//
//
// The unit of work of the pass manager, shaped after LLVM's new pass manager
// but with virtual dispatch: a pass has a textual name (with parameters in
// `name<params>` form), optionally declares the invariant it establishes, and
// runs on the ELF model returning what it preserved.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASS_PASS_H
#define HOTSWAP_PASS_PASS_H

#include "hotswap/Object/Object.h"
#include "hotswap/Pass/Statistics.h"
#include "hotswap/Support/Error.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>

namespace llvm {
class ThreadPoolInterface;
} // namespace llvm
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {

class AnalysisManager;

/// Identifies an analysis (the address of a static member, as in LLVM).
struct AnalysisKey {};

/// What a pass left valid, and whether it changed the object at all.
/// `all()` means "nothing changed"; `none()` "changed, recompute everything";
/// `changedPreservingAll()` "changed, but no analysis result is affected".
class PreservedAnalyses {
public:
  static PreservedAnalyses all() {
    PreservedAnalyses PA;
    PA.All = true;
    PA.Modified = false;
    return PA;
  }
  static PreservedAnalyses none() { return PreservedAnalyses(); }
  static PreservedAnalyses changedPreservingAll() {
    PreservedAnalyses PA;
    PA.All = true;
    return PA;
  }
  bool modified() const { return Modified; }
  template <typename AnalysisT> PreservedAnalyses &preserve() {
    Preserved.insert(&AnalysisT::Key);
    return *this;
  }
  bool isPreserved(const AnalysisKey *K) const {
    return All || Preserved.count(K);
  }
  bool areAllPreserved() const { return All; }

private:
  bool All = false;
  bool Modified = true;
  llvm::SmallPtrSet<const AnalysisKey *, 4> Preserved;
};

/// A pass that must fit some code object of an input
/// (Pass::needsSomeCodeObject) and was skipped on this one because its
/// precondition was unmet.
struct UnfitPass {
  /// Position of the pass in the pipeline (the same for every code object:
  /// each runs a PassManager parsed from the same text).
  size_t Position = 0;
  /// The pass as the pipeline spells it (printPipeline).
  std::string Pipeline;
  /// The unmet precondition.
  std::string Why;
  /// How near the code object came to fitting (PassContext::UnfitNearness):
  /// of an input that none fits, the nearest's Why is reported.
  unsigned Nearness = 0;
};

/// What a pass may use besides the object: options, diagnostics, counters.
struct PassContext {
  /// Receives warnings (the library never prints).
  std::function<void(const llvm::Twine &)> Warn = [](const llvm::Twine &) {};
  /// Destination of `print<...>` passes.
  llvm::raw_ostream *Out = &llvm::nulls();
  /// In strict mode unmet preconditions and best-effort failures are errors.
  bool Strict = false;
  Statistics Stats;
  /// Machine-readable output for print passes (--kernels-format=json).
  bool JSON = false;
  /// With JSON: where print passes put their values when set (whoever runs
  /// the pipeline prints them, e.g. each with the entry of a container it
  /// came from); else each is printed to Out.
  std::vector<llvm::json::Value> *JSONOut = nullptr;
  /// After a transform changed the object without warning, its invariant
  /// must hold (the pass manager asks; -verify-each).
  bool CheckInvariants = false;
  /// Filled by the pass manager: the passes that needsSomeCodeObject() and
  /// were skipped here for an unmet precondition, in pipeline order. Whoever
  /// runs the pipeline on the code objects of an input fails the input when
  /// such a pass fit none of them.
  std::vector<UnfitPass> Unfit;
  /// Set by a pass that needsSomeCodeObject() in its unmet precondition:
  /// how near the object came to fitting (higher: nearer; 0 before each
  /// precondition), so that a container's error names the code object that
  /// nearly fit.
  unsigned UnfitNearness = 0;
  /// Workers a pass may split its own work across (verify-code: the
  /// functions of the object), when the run has a pool and the code object
  /// is not itself one of several running on it. Null: one thread. Output
  /// must not depend on it.
  llvm::ThreadPoolInterface *ThreadPool = nullptr;
};

class Pass {
public:
  virtual ~Pass();
  /// The textual name used in `-passes=`.
  virtual llvm::StringRef name() const = 0;
  /// Canonical textual form including parameters (`name<a;b=c>`).
  virtual void printPipeline(llvm::raw_ostream &OS) const { OS << name(); }
  /// One line on what the pass establishes (for --print-passes/debug).
  virtual llvm::StringRef invariantDescription() const { return ""; }
  /// Whether the pass's invariant already holds on \p Obj. When it does, the
  /// manager skips the pass. Passes without an invariant return false.
  virtual llvm::Expected<bool> isSatisfied(Object &Obj, AnalysisManager &AM,
                                           PassContext &Ctx) {
    return false;
  }
  /// Why the pass cannot apply to \p Obj (e.g. stub-syms before any stub
  /// exists), or nullopt. The manager then skips it (errors in strict mode).
  virtual llvm::Expected<std::optional<std::string>>
  unmetPrecondition(Object &Obj, AnalysisManager &AM, PassContext &Ctx) {
    return std::nullopt;
  }
  /// Does the work. Returning PreservedAnalyses::all() means "no change".
  virtual llvm::Expected<PreservedAnalyses>
  run(Object &Obj, AnalysisManager &AM, PassContext &Ctx) = 0;
  /// Passes that only read (print<...>, verify) are not reported as changes.
  virtual bool isTransform() const { return true; }
  /// Whether the pass is meant for some code object of each input but not
  /// necessarily for every one: it picks the code objects it fits itself
  /// (swap-kernels: those whose target is its file's) and is skipped on the
  /// others with an unmet precondition. The pass manager records those skips
  /// (PassContext::Unfit); an input none of whose code objects the pass fit
  /// (a bare code object: the one) is an error, not a skip.
  virtual bool needsSomeCodeObject() const { return false; }
};

/// The declarations every pass repeats, in the spirit of LLVM's
/// PassInfoMixin. DerivedT provides
///   static constexpr llvm::StringLiteral Name = "my-pass";
/// and, for transforms with an invariant,
///   static constexpr llvm::StringLiteral Invariant = "what holds after it";
/// A pass without parameters gets create(); one with parameters defines its
/// own static create(), which hides this one.
template <typename DerivedT> class PassInfoMixin : public Pass {
public:
  static constexpr llvm::StringLiteral Invariant = "";

  llvm::StringRef name() const override { return DerivedT::Name; }
  llvm::StringRef invariantDescription() const override {
    return DerivedT::Invariant;
  }
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params) {
    if (!Params.empty())
      return makeError("unknown parameter '" + Params + "'");
    return std::make_unique<DerivedT>();
  }
};

} // namespace hotswap

#endif // HOTSWAP_PASS_PASS_H
