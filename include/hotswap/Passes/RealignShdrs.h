//===- hotswap/Passes/RealignShdrs.h - realign-shdrs ------------*- C++ -*-===//
//
// realign-shdrs
//   Requires:     nothing.
//   Establishes:  the section header table starts after all section data at
//                 an 8-byte-aligned offset, as ELF64 requires (Elf64_Shdr is
//                 8-byte aligned; readers that map the table as structs, and
//                 older LLVM releases, reject a misaligned one with "invalid
//                 alignment of section headers"; LLVM 22 tolerates it).
//   Skipped when: the layout the writer would produce already has that
//                 property (always true once another pass changed layout).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_REALIGNSHDRS_H
#define HOTSWAP_PASSES_REALIGNSHDRS_H

#include "hotswap/Pass/Pass.h"

namespace hotswap {

class RealignShdrsPass : public Pass {
public:
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params);
  llvm::StringRef name() const override { return "realign-shdrs"; }
  llvm::StringRef invariantDescription() const override {
    return "section header table is last and 8-byte aligned";
  }
  llvm::Expected<bool> isSatisfied(Object &Obj, AnalysisManager &AM,
                                   PassContext &Ctx) override;
  llvm::Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                        PassContext &Ctx) override;
};

/// Whether \p Obj, written as it is now, has its section header table after
/// all section data at an 8-byte-aligned offset.
llvm::Expected<bool> sectionHeadersAligned(const Object &Obj);

} // namespace hotswap

#endif // HOTSWAP_PASSES_REALIGNSHDRS_H
