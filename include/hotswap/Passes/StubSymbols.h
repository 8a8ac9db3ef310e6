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

#include "hotswap/Passes/KernelsPass.h"

namespace hotswap {

class StubSymbolsPass : public KernelsPassMixin<StubSymbolsPass> {
public:
  static constexpr llvm::StringLiteral Name = "stub-syms";
  static constexpr llvm::StringLiteral Invariant =
      "every stub has its <kernel>.stub symbol";

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

#endif // HOTSWAP_PASSES_STUBSYMBOLS_H
