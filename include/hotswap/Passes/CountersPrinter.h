//===- hotswap/Passes/CountersPrinter.h - print<counters> -------*- C++ -*-===//
//
// print<counters[;dump=FILE][;only=REGEX][;svg=FILE][;edges]>
//   What instrument counts in an object (its counter map, CounterRecord.h),
//   per kernel and block: the block's offset in the kernel's original code,
//   what it counts (the kernel's entry, a block) and its counter. With
//   dump=FILE, a dump of the counter area (its bytes as a run left them:
//   one little-endian 64-bit count per counter, as many as the map has),
//   each block's count, and per kernel the blocks that never ran. Text or
//   JSON (--kernels-format=json). With svg=FILE (and a dump), a picture
//   too: a heat map, a row per kernel and a cell per block, coloured by
//   its count on a log scale, each cell's tooltip naming the block and
//   its count. With edges (and always for a map with edge counters), every
//   edge of each kernel's graph, read from its original code: counted
//   (counters=edge), derived from the counts by flow conservation
//   (EdgeCounts.h; wave counts only), or unknown. Nothing in the object
//   changes.
//
//   A map that does not parse, an object without one and a dump of another
//   size are errors.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_COUNTERSPRINTER_H
#define HOTSWAP_PASSES_COUNTERSPRINTER_H

#include "hotswap/Pass/Pass.h"

#include <memory>
#include <string>

namespace hotswap {

class CountersPrinterPass : public Pass {
public:
  CountersPrinterPass(std::string Dump, std::string Only, std::string SVG,
                      bool Edges = false);
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params);

  llvm::StringRef name() const override { return "print<counters>"; }
  void printPipeline(llvm::raw_ostream &OS) const override;
  bool isTransform() const override { return false; }
  llvm::Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                        PassContext &Ctx) override;

private:
  std::string Dump;
  std::string Only;
  std::string SVG;
  /// Also every edge: counted, derived from the counts, or unknown (shown
  /// too, without asking, for a map with edge counters).
  bool Edges = false;
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_COUNTERSPRINTER_H
