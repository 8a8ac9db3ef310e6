//===- hotswap/Passes/RealignShdrs.h - realign-shdrs ------------*- C++ -*-===//
//
// realign-shdrs
//   Requires:     nothing.
//   Establishes:  the section header table starts after all section data at
//                 an 8-byte-aligned offset, as ELF64 requires (Elf64_Shdr is
//                 8-byte aligned; readers that map the table as structs, and
//                 older LLVM releases, reject a misaligned one with "invalid
//                 alignment of section headers"; LLVM 22 tolerates it). It
//                 does so by setting the model's layout property
//                 (Object::requestSectionHeadersLast()), which the writer
//                 honours when it lays the file out, once.
//   Skipped when: the object, written as it is, already has that property
//                 (always true once another pass changed the layout).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_REALIGNSHDRS_H
#define HOTSWAP_PASSES_REALIGNSHDRS_H

#include "hotswap/Pass/Pass.h"

namespace hotswap {

class RealignShdrsPass : public PassInfoMixin<RealignShdrsPass> {
public:
  static constexpr llvm::StringLiteral Name = "realign-shdrs";
  static constexpr llvm::StringLiteral Invariant =
      "section header table is last and 8-byte aligned";

  llvm::Expected<bool> isSatisfied(Object &Obj, AnalysisManager &AM,
                                   PassContext &Ctx) override;
  llvm::Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                        PassContext &Ctx) override;
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_REALIGNSHDRS_H
