//===- hotswap/Passes/CodePrinters.h - print<cfg>, print<liveness> -*- C++
//-*-===//
//
// Printers of the code analysis (CodeAnalysis.h), for people (text) and
// tools (--kernels-format=json):
//
//   print<cfg[;only=REGEX][;insns]>       functions, blocks with their
//                                         addresses and edges, calls,
//                                         resolved indirect jumps, findings,
//                                         the gaps between functions
//   print<liveness[;only=REGEX][;insns]>  registers live at every block's
//                                         start and end, and the highest
//                                         register ever live
//
// only=REGEX selects functions by name (kernels and device functions);
// insns adds every instruction (its text, and for liveness what is live
// before it).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_CODEPRINTERS_H
#define HOTSWAP_PASSES_CODEPRINTERS_H

#include "hotswap/Pass/Pass.h"

#include <memory>

namespace hotswap {

struct CodePrinterOptions {
  std::string Only;
  bool Insns = false;
};

class CFGPrinterPass {
public:
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params);
};

class LivenessPrinterPass {
public:
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params);
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_CODEPRINTERS_H
