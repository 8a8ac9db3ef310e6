//===- hotswap/Passes/PassBuilder.h - Every built-in pass -------*- C++ -*-===//
//
// The pipeline parser with every built-in pass, `print<analysis>` printer
// and alias registered (the library's list, lib/Passes/BuiltinPasses.def).
// Embedders add their own passes with
// registerPass() and parse pipelines with parsePassPipeline() (both from
// PipelineParser).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_PASSBUILDER_H
#define HOTSWAP_PASSES_PASSBUILDER_H

#include "hotswap/Pass/PipelineParser.h"

namespace hotswap {

class PassBuilder : public PipelineParser {
public:
  /// Registers every built-in pass, analysis printer and alias.
  PassBuilder();
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_PASSBUILDER_H
