//===- hotswap/Passes/PatchDescriptors.h - patch-descriptors ----*- C++ -*-===//
//
// patch-descriptors
//   Requires:     stubs in a pool section that lead to kernels whose
//                 descriptors do not use them yet (synth-trampolines).
//   Establishes:  each such descriptor's kernel_code_entry_byte_offset
//                 points at its stub (stub - KD, checked int64); on gfx11+
//                 INST_PREF_SIZE is clamped to the stub size; on gfx6-9 the
//                 SGPR granule is raised when what the stub clobbers (its
//                 pair, or VCC) does not lie inside the allocation below the
//                 special registers at its top; metadata `.sgpr_count` is
//                 raised only when it does not cover the pair, in one
//                 batched same-size note rewrite.
//                 Nothing else in a descriptor changes.
//   Skipped when: no descriptor has a pending stub.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_PATCHDESCRIPTORS_H
#define HOTSWAP_PASSES_PATCHDESCRIPTORS_H

#include "hotswap/Passes/KernelsPass.h"

namespace hotswap {

class PatchDescriptorsPass : public KernelsPassMixin<PatchDescriptorsPass> {
public:
  static constexpr llvm::StringLiteral Name = "patch-descriptors";
  static constexpr llvm::StringLiteral Invariant =
      "no descriptor has a stub waiting for it";

  llvm::Expected<bool> holds(Object &Obj, KernelsAnalysis::Result &R,
                             AnalysisManager &AM, PassContext &Ctx);
  llvm::Expected<std::optional<std::string>>
  precondition(Object &Obj, KernelsAnalysis::Result &R, AnalysisManager &AM,
               PassContext &Ctx);
  llvm::Expected<PreservedAnalyses> runOnKernels(Object &Obj,
                                                 KernelsAnalysis::Result &R,
                                                 AnalysisManager &AM,
                                                 PassContext &Ctx);
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_PATCHDESCRIPTORS_H
