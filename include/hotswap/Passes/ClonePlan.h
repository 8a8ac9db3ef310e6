//===- hotswap/Passes/ClonePlan.h - Where each kernel's copy would go -*- C++
//-*-===//
//
// print<clones[;only=REGEX]>
//   What clone-kernels (issue 40) is to do, without doing it: every
//   selected kernel's code relocated (code::relocate) to where the run's
//   appended code would start, copies packed 256-byte aligned in kernel
//   order, and each copy proven from its bytes (code::proveRelocation).
//   Per kernel: the copy's address, size, the branches and PC-relative
//   idioms encoded again, and whether it is proven; or why it is refused,
//   with the refusal's kind. A summary counts kernels planned, proven and
//   refused by kind. Nothing is written: the object is unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_CLONEPLAN_H
#define HOTSWAP_PASSES_CLONEPLAN_H

#include "hotswap/Code/Relocate.h"
#include "hotswap/Code/SiteSafety.h"
#include "hotswap/Pass/Pass.h"
#include "hotswap/Passes/CodeAnalysis.h"
#include "hotswap/Passes/Kernels.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Regex.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {

/// One kernel's planned copy.
struct ClonePlan {
  /// The kernel's index in the code analysis' function map.
  size_t Function = 0;
  std::optional<code::Relocated> Code;
  code::RelocationRefusal Refusal;
  /// What the proof found wrong with the copy (empty: proven).
  std::vector<std::string> Problems;
  /// The copy's offset map (cloneOffsetMap), when there is a copy.
  std::vector<std::pair<uint64_t, uint64_t>> OffsetMap;
  /// Offsets in the original of the instructions inserted code replaces.
  std::vector<uint64_t> Replaced;
  /// The copy's address where inserted code starts -> the assembly it was
  /// made from (Insertion::Asm), where the client gave it.
  std::vector<std::pair<uint64_t, std::string>> Asm;
};

/// Copies are aligned as kernel code is (AMDGPUUsage: 256 bytes).
inline constexpr uint64_t CloneAlign = 256;

/// Plans a copy of each function \p Functions names (indices of \p R's
/// function map, kernels), the first at \p Base, each next one
/// CloneAlign-aligned after the one before, and proves each; with
/// \p Inserts (one list per function, or none) code inserted into each
/// (code that reads the PC only with \p InsertedMayReadPC, whose caller
/// fixes it up and checks it: code::proveRelocation).
/// The registers every kernel of \p Kernels (indices of R.Kernels) is
/// sure to hold: the smallest allocation among them.
code::RegisterLimits kernelLimits(const KernelsAnalysis::Result &R,
                                  llvm::ArrayRef<size_t> Kernels);
/// kernelLimits of the kernels of each of \p Functions (\p KernelsOf:
/// function -> indices of R.Kernels), in order: planClones' Limits.
std::vector<code::RegisterLimits>
functionLimits(const KernelsAnalysis::Result &R,
               llvm::ArrayRef<size_t> Functions,
               const llvm::DenseMap<size_t, std::vector<size_t>> &KernelsOf);

/// Relocates and proves a copy of each of \p Functions (indices of the
/// function map) from \p Base on, with \p Inserts (per function, when
/// given). With \p Limits (per function: its kernels' kernelLimits), a
/// branch out of reach is relaxed where registers are free at its target;
/// without, it is refused. With \p Code (per function, or null), a
/// function's graph and instructions are taken from there, not decoded
/// again.
std::vector<ClonePlan>
planClones(CodeAnalysis::Result &R, llvm::ArrayRef<size_t> Functions,
           uint64_t Base,
           llvm::ArrayRef<std::vector<code::Insertion>> Inserts = {},
           bool InsertedMayReadPC = false,
           llvm::ArrayRef<code::RegisterLimits> Limits = {},
           llvm::ArrayRef<const code::DecodedFunction *> Code = {});

/// Places the copies of \p Plans (planned from \p Base, the address the
/// run's appended code starts at) in one `.hotswap.clone.text` section,
/// enters each copy from the descriptors of its kernels (\p KernelsOf:
/// function -> indices of \p R's kernels), adds `<kernel>.clone` symbols
/// and `.hotswap.clones` records. A refused plan is warned of (an error
/// with --strict), in statistics of \p PassName; a copy not proven is an
/// error, before anything changes. Returns how many copies were placed.
llvm::Expected<size_t>
placeClones(Object &Obj, KernelsAnalysis::Result &R, CodeAnalysis::Result &CA,
            llvm::ArrayRef<ClonePlan> Plans,
            const llvm::DenseMap<size_t, std::vector<size_t>> &KernelsOf,
            uint64_t Base, llvm::StringRef PassName, AnalysisManager &AM,
            PassContext &Ctx);

/// The offset map of a copy (CloneRecord::Map): (original offset, copy
/// offset) wherever the distance between them changes.
std::vector<std::pair<uint64_t, uint64_t>>
cloneOffsetMap(const code::FunctionCFG &G, const code::Relocated &C);

class ClonePlanPrinterPass : public Pass {
public:
  explicit ClonePlanPrinterPass(std::string Only);
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params);

  llvm::StringRef name() const override { return "print<clones>"; }
  void printPipeline(llvm::raw_ostream &OS) const override;
  bool isTransform() const override { return false; }
  llvm::Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                        PassContext &Ctx) override;

private:
  std::string Only;
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_CLONEPLAN_H
