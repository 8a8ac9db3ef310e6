//===- hotswap/Passes/CloneKernels.h - clone-kernels ------------*- C++ -*-===//
//
// clone-kernels<only=REGEX>
//   Requires:     a linked (ET_DYN) code object with kernels.
//   Establishes:  every selected kernel that can be cloned runs a copy of
//                 its code in the appended code: the copy is the kernel's
//                 code relocated (code::relocate: branches encoded again,
//                 PC-relative constants re-derived, device functions it
//                 calls stay where they are), proven from its bytes
//                 (code::proveRelocation) before anything changes, placed
//                 256-byte aligned in one `.hotswap.clone.text` section of
//                 the run's appended segment (CodeAppender) followed by the
//                 target's prefetch guard. Each descriptor enters its
//                 kernel's copy; the original bytes stay as they were (the
//                 original remains a valid fallback, and restore is exact).
//                 A kernarg-preload kernel's copy keeps its 256-byte header
//                 (no code is inserted there), so firmware that starts at
//                 entry + 256 runs the copy's too.
//   Records:      `<kernel>.clone` symbols and `.hotswap.clones` lines
//                 (CloneRecord.h), which verify proves again.
//   Refuses:      a kernel whose code cannot be relocated (the kind and the
//                 reason: a blocking finding, an unknown use of the PC, a
//                 call out of reach...) is left as it is, with a warning
//                 (an error with --strict). A kernel entered through a
//                 stub of trampoline's (or about to be) keeps it: the stub
//                 is led to the copy (StubRetarget.h); run before
//                 trampoline, its stubs lead to the copies anyway.
//   Kernels that share code share one copy.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_CLONEKERNELS_H
#define HOTSWAP_PASSES_CLONEKERNELS_H

#include "hotswap/Passes/KernelsPass.h"

#include "llvm/Support/Regex.h"

#include <optional>
#include <string>
#include <vector>

namespace hotswap {

class CloneKernelsPass : public KernelsPassMixin<CloneKernelsPass> {
public:
  static constexpr llvm::StringLiteral Name = "clone-kernels";
  static constexpr llvm::StringLiteral Invariant =
      "every selected kernel that can be cloned runs its copy";

  explicit CloneKernelsPass(std::string Only);
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params);
  void printPipeline(llvm::raw_ostream &OS) const override;

  llvm::Expected<bool> holds(Object &Obj, KernelsAnalysis::Result &R,
                             AnalysisManager &AM, PassContext &Ctx);
  llvm::Expected<PreservedAnalyses> runOnKernels(Object &Obj,
                                                 KernelsAnalysis::Result &R,
                                                 AnalysisManager &AM,
                                                 PassContext &Ctx);

private:
  /// Selected kernels that do not run a copy yet (indices into R), and,
  /// through \p Ctx when given, those left alone and why.
  std::vector<size_t> candidates(Object &Obj, const KernelsAnalysis::Result &R,
                                 PassContext *Ctx) const;

  std::string Only;
  std::optional<llvm::Regex> OnlyRE;
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_CLONEKERNELS_H
