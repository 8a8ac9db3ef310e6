//===- hotswap/Passes/SwapKernels.h - swap-kernels --------------*- C++ -*-===//
//
// swap-kernels<with=FILE;only=REGEX;own-variables;skip-incompatible>
//   Replaces the code of kernels of a finished code object with the code of
//   the kernels of the same name in FILE (a linked code object: a rebuild
//   with a bug fixed, say), without relinking. Default: every kernel FILE
//   and the object both have; only= narrows that by kernel name.
//   Requires:     FILE is a linked code object of the object's processor
//                 and code object version whose code runs under the object's
//                 features (xnack/sramecc "any" under on or off; otherwise
//                 the same) and that needs no dynamic relocation; each
//                 selected kernel has, in both, the same launch interface
//                 (amdgpu::launchDifference: .args offsets, sizes, value
//                 kinds; .kernarg_segment_size and _align; wavefront size;
//                 required and uniform work-group size), keys one side lacks
//                 compared by their meaning (docs/ARCHITECTURE.md, "Which
//                 kernels swap-kernels swaps").
//   Establishes:  each selected kernel runs code equal to FILE's: FILE's
//                 whole loaded image (every PT_LOAD, bss included) is
//                 appended above every existing address, all at one
//                 page-aligned delta, one section per PT_LOAD of FILE in the
//                 run's appended PT_LOAD (code::CodeAppender; FILE's
//                 PC-relative references stay right; nothing loaded moves).
//                 The kernel's descriptor becomes FILE's (resources, user
//                 SGPRs, LDS, scratch, wave size, preload), entered at FILE's
//                 code in the image: through the kernel's stub when it has
//                 one (only the stub's jump changes; its prologue keeps
//                 running; INST_PREF_SIZE and the SGPR granule follow the
//                 stub as patch-descriptors would), else directly. The
//                 metadata values the runtime reads (.sgpr_count,
//                 .vgpr_count, .agpr_count, .group_segment_fixed_size,
//                 .private_segment_fixed_size, .max_flat_workgroup_size, the
//                 spill counts, .uses_dynamic_stack) take FILE's values, in
//                 place, by meaning (fieldRule: an absent key that means
//                 FILE's value is left; informative values are written
//                 where they fit). `<kernel>.swap` symbols name the new code; a
//                 line of
//                 `.hotswap.swaps` records each swap (SwapRecord.h). FILE's
//                 other symbols are not exported; .dynsym is untouched. An
//                 image of FILE already in the object is used again.
//   Fails closed: an incompatible kernel (the error names the kernel, the
//                 one field that blocks and both values), FILE with dynamic
//                 relocations, FILE defining device variables the host can
//                 reach (the swapped code would use FILE's copies, not the
//                 object's; own-variables accepts that; HIP's empty
//                 __HIP_Coordinates constants are none), a stub that cannot
//                 serve FILE's kernel (kernarg preload differs: single vs
//                 dual stub), a key the note would need added
//                 (.uses_dynamic_stack true where the note has none). A
//                 value that outgrows its note is not refused: the note is
//                 written anew (code::commitMetadata). With
//                 skip-incompatible, a kernel refused for one of those
//                 per-kernel reasons is left as it was with a warning and
//                 the others are swapped; --strict fails still.
//   Skipped when: every selected kernel already runs FILE's code (second
//                 runs: byte-identical), or the object is not for FILE's
//                 target or has none of FILE's kernels: in a container those
//                 code objects are copied unchanged, and an input where the
//                 pass fits no code object fails (needsSomeCodeObject).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_SWAPKERNELS_H
#define HOTSWAP_PASSES_SWAPKERNELS_H

#include "hotswap/Passes/CodeSymbols.h"
#include "hotswap/Passes/KernelsPass.h"
#include "hotswap/Passes/SwapReplacement.h"

#include "llvm/ADT/DenseMap.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"

#include <memory>

namespace hotswap {

struct SwapOptions {
  std::string With; // the replacement code object
  std::string Only; // regex on kernel names; empty = every kernel
  bool OwnVariables = false;
  /// Swap every kernel that can be and warn of each one that cannot (the
  /// blocking field and both values), instead of failing.
  bool SkipIncompatible = false;
};

class SwapKernelsPass : public KernelsPassMixin<SwapKernelsPass> {
public:
  static constexpr llvm::StringLiteral Name = "swap-kernels";
  static constexpr llvm::StringLiteral Invariant =
      "every selected kernel runs the code of its namesake in the file";

  explicit SwapKernelsPass(SwapOptions Opts);
  ~SwapKernelsPass() override;
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params);
  void printPipeline(llvm::raw_ostream &OS) const override;
  bool needsSomeCodeObject() const override { return true; }

  llvm::Expected<bool> holds(Object &Obj, KernelsAnalysis::Result &R,
                             AnalysisManager &AM, PassContext &Ctx);
  llvm::Expected<std::optional<std::string>>
  precondition(Object &Obj, KernelsAnalysis::Result &R, AnalysisManager &AM,
               PassContext &Ctx);
  llvm::Expected<PreservedAnalyses> runOnKernels(Object &Obj,
                                                 KernelsAnalysis::Result &R,
                                                 AnalysisManager &AM,
                                                 PassContext &Ctx);

private:
  /// FILE, read and analysed once for every pass that swaps from it.
  llvm::Expected<const SwapReplacement &> replacement();
  /// Why the object is not one FILE can serve (target, code object
  /// version), or nullopt.
  /// \p Nearness, when given, is set to how near the object came to
  /// fitting: 0 another processor, 1 FILE's processor.
  std::optional<std::string> mismatch(const Object &Obj,
                                      const KernelsAnalysis::Result &R,
                                      unsigned *Nearness = nullptr);
  /// The selected kernels both have: (index in R, index in FILE's).
  std::vector<std::pair<size_t, size_t>>
  selected(const KernelsAnalysis::Result &R, const SwapReplacement &F) const;
  /// Whether kernel \p K already runs the code of \p RK (at some delta
  /// whose image is intact), with FILE's descriptor and metadata values.
  bool isSwapped(const Object &Obj, const KernelsAnalysis::Result &R,
                 const KernelInfo &K, const KernelInfo &RK);

  SwapOptions Opts;
  std::optional<llvm::Regex> OnlyRE;
  std::shared_ptr<const SwapReplacement> Repl;
  /// Whether FILE's image is intact at a delta, by delta, in the object as
  /// it is during one call of the pass (cleared at the start of each).
  llvm::DenseMap<uint64_t, bool> IntactAt;
  /// Code this file swapped in that a kernel now runs a copy of (cloned,
  /// patched or instrumented after the swap): kernel name -> that code.
  /// Read once per run (holds, run).
  std::optional<llvm::StringMap<uint64_t>> CopiedSwaps;
  /// The function symbols, read once per call of the pass when a `.swap`
  /// symbol is looked for (a Tensile object has 1.8M symbols).
  std::optional<CodeSymbols> Functions;
  /// Whether a `<kernel>.swap` symbol of \p K is at \p Code.
  bool swapSymbolAt(const Object &Obj, const KernelInfo &K, uint64_t Code);
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_SWAPKERNELS_H
