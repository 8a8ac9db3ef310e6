//===- hotswap/Passes/PatchDescriptors.h - patch-descriptors ----*- C++ -*-===//
//
// patch-descriptors
//   Requires:     stubs in a pool section that lead to kernels whose
//                 descriptors do not use them yet (synth-trampolines).
//   Establishes:  each such descriptor's kernel_code_entry_byte_offset
//                 points at its stub (stub - KD, checked int64); on gfx11+
//                 INST_PREF_SIZE is clamped to the stub size; on gfx6-9 the
//                 SGPR granule is raised when the stub's scratch pair lies
//                 above the allocation; metadata `.sgpr_count` is raised to
//                 cover the pair, in one batched same-size note rewrite.
//                 Nothing else in a descriptor changes.
//   Skipped when: no descriptor has a pending stub.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_PATCHDESCRIPTORS_H
#define HOTSWAP_PASSES_PATCHDESCRIPTORS_H

#include "hotswap/Pass/Pass.h"

namespace hotswap {

class PatchDescriptorsPass : public Pass {
public:
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params);
  llvm::StringRef name() const override { return "patch-descriptors"; }
  llvm::StringRef invariantDescription() const override {
    return "no descriptor has a stub waiting for it";
  }
  llvm::Expected<bool> isSatisfied(Object &Obj, AnalysisManager &AM,
                                   PassContext &Ctx) override;
  llvm::Expected<std::optional<std::string>>
  unmetPrecondition(Object &Obj, AnalysisManager &AM,
                    PassContext &Ctx) override;
  llvm::Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                        PassContext &Ctx) override;
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_PATCHDESCRIPTORS_H
