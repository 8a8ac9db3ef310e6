//===- hotswap/Passes/StubSymbols.h - stub-syms -----------------*- C++ -*-===//
//
// stub-syms
//   Requires:     kernels entered through stubs; a `.symtab`.
//   Establishes:  every stub a descriptor uses has one `<kernel>.stub`
//                 symbol in `.symtab`: STT_FUNC, STB_GLOBAL, STV_DEFAULT,
//                 in the stub's section, value = stub address, size = 256
//                 (512 for dual stubs). Only `.symtab`/`.strtab` grow;
//                 locals stay first; `.dynsym` is never touched.
//   Best effort:  a name taken by a different symbol is a warning (an error
//                 with --strict) and that stub stays unnamed.
//   Skipped when: every such stub already has its symbol.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_STUBSYMBOLS_H
#define HOTSWAP_PASSES_STUBSYMBOLS_H

#include "hotswap/Pass/Pass.h"

namespace hotswap {

class StubSymbolsPass : public Pass {
public:
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params);
  llvm::StringRef name() const override { return "stub-syms"; }
  llvm::StringRef invariantDescription() const override {
    return "every stub has its <kernel>.stub symbol";
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

#endif // HOTSWAP_PASSES_STUBSYMBOLS_H
