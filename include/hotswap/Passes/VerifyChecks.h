//===- hotswap/Passes/VerifyChecks.h - What verify checks -------*- C++ -*-===//
//
// verify runs a list of registered checks, each named, in registration
// order: the built-in ones first (structure, provenance, kernels, swaps),
// then any a pass or an embedder registered with registerVerifyCheck(). A
// pass that adds a structure to an object registers the check that proves
// it, and verify (and -verify-each) re-checks it on every object, apart
// from the pass that made it. Each problem is typed: the check that found
// it, what it is about, and the sentence printed.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_VERIFYCHECKS_H
#define HOTSWAP_PASSES_VERIFYCHECKS_H

#include "hotswap/Object/Object.h"
#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Passes/Kernels.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <functional>
#include <string>
#include <vector>

namespace hotswap {

/// One thing verify found wrong.
struct VerifyProblem {
  /// The check that found it ("structure", "provenance", "kernels",
  /// "swaps", or a registered check's name).
  std::string Check;
  /// What it is about, as the message begins: "kernel 'vadd'",
  /// "section '.text'", "symbol 'k.stub'", "symbol table '.symtab'",
  /// "PT_LOAD at 0x2000", "image of the replacement 'f.co'"; empty for the
  /// object as a whole.
  std::string Where;
  /// The whole sentence, as printed.
  std::string Message;

  /// {"check": ..., "where": ..., "message": ...}
  llvm::json::Value toJSON() const;
};

/// What a check sees: the object, the run's analyses, and the kernels found
/// afresh on the object as it is (not as the passes kept them).
struct VerifyContext {
  Object &Obj;
  AnalysisManager &AM;
  /// Null for a relocatable object, or when finding the kernels failed (a
  /// problem of the check "kernels").
  const KernelsAnalysis::Result *Kernels = nullptr;
};

/// Where a check puts its problems.
class VerifyProblems {
public:
  VerifyProblems(std::vector<VerifyProblem> &Out, llvm::StringRef Check)
      : Out(Out), Check(Check.str()) {}
  /// A problem about \p Where.
  void add(std::string Where, std::string Message);
  /// A problem whose subject is where \p Message begins (subjectOf).
  void push_back(std::string Message);

private:
  std::vector<VerifyProblem> &Out;
  std::string Check;
};

/// The subject a message begins with ("kernel 'k'", "section 's'", "symbol
/// 's'", "PT_LOAD at 0x..", "image of the replacement 'f'"), or "".
std::string subjectOf(llvm::StringRef Message);

using VerifyCheckFn =
    std::function<void(const VerifyContext &, VerifyProblems &)>;

/// Registers a check that verify runs on every object after those
/// registered before it; \p NeedsKernels: only when the kernels were found.
/// A second registration of a name replaces the first. Thread-safe.
void registerVerifyCheck(llvm::StringRef Name, VerifyCheckFn Check,
                         bool NeedsKernels = true);
/// The names of the registered checks, in the order verify runs them.
std::vector<std::string> verifyCheckNames();
/// Runs every registered check on \p Ctx, in order.
std::vector<VerifyProblem> runVerifyChecks(const VerifyContext &Ctx);

} // namespace hotswap

#endif // HOTSWAP_PASSES_VERIFYCHECKS_H
