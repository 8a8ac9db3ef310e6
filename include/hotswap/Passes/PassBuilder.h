//===- hotswap/Passes/PassBuilder.h - Built-in pass registry ----*- C++ -*-===//
//
// The pass registry with every built-in pass, `print<analysis>` printer and
// alias of PassRegistry.def. Embedders add their own passes with
// registerPass() and parse pipelines with parsePassPipeline() (both from
// PassRegistry).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_PASSBUILDER_H
#define HOTSWAP_PASSES_PASSBUILDER_H

#include "hotswap/Pass/PassRegistry.h"

namespace hotswap {

class PassBuilder : public PassRegistry {
public:
  /// Registers every built-in pass, analysis printer and alias.
  PassBuilder();
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_PASSBUILDER_H
