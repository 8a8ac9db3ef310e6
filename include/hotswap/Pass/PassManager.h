//===- hotswap/Pass/PassManager.h - Runs a pipeline -------------*- C++ -*-===//
//
// A flat list of passes (BOLT's size, LLVM's shape). For each pass: if its
// invariant already holds it is skipped; if a precondition is unmet it is
// skipped (error in strict mode); otherwise it runs, analyses it did not
// preserve are invalidated, and the instrumentation is told.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASS_PASSMANAGER_H
#define HOTSWAP_PASS_PASSMANAGER_H

#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Pass/Pass.h"
#include "hotswap/Pass/PassInstrumentation.h"

#include <memory>
#include <vector>

namespace hotswap {

class PassManager {
public:
  void addPass(std::unique_ptr<Pass> P) { Passes.push_back(std::move(P)); }
  bool empty() const { return Passes.empty(); }
  size_t size() const { return Passes.size(); }
  const std::vector<std::unique_ptr<Pass>> &passes() const { return Passes; }

  /// Runs every pass in order. Stops at the first error.
  llvm::Error run(Object &Obj, AnalysisManager &AM, PassContext &Ctx,
                  PassInstrumentation *PI = nullptr);

  /// The canonical textual pipeline (parses back to the same passes).
  void printPipeline(llvm::raw_ostream &OS) const;

private:
  std::vector<std::unique_ptr<Pass>> Passes;
};

} // namespace hotswap

#endif // HOTSWAP_PASS_PASSMANAGER_H
