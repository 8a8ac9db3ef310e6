//===- hotswap/Passes/Kernels.h - The kernels analysis ----------*- C++ -*-===//
//
// kernels (analysis; print<kernels> prints it)
//   Finds every kernel of the object: `<name>.kd` symbols of .symtab and
//   .dynsym (de-duplicated by name and address), their descriptors, entries,
//   whether an entry already is a recognised stub (and where it leads), the
//   stubs of pool sections that lead to each kernel, metadata values and SGPR
//   usage. Everything is validated; inconsistencies are errors.
//
//   SGPR usage comes from the cheapest sound source: the LLVM 22
//   `<kernel>.numbered_sgpr` symbol, else the metadata `.sgpr_count` (an
//   upper bound: it includes VCC, FLAT_SCRATCH and XNACK_MASK), else the
//   descriptor. On gfx8-9 the exact count can be had by disassembling the
//   kernel's code; that costs most of a run on objects without
//   `.numbered_sgpr` (everything ROCm's compilers built), so the analysis
//   does not do it: a pass whose decision the cheap bound cannot make
//   without raising a granule (or falling back to VCC) asks for it with
//   Result::refineSGPRs(), for just those kernels.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_KERNELS_H
#define HOTSWAP_PASSES_KERNELS_H

#include "hotswap/AMDGPU/KernelDescriptor.h"
#include "hotswap/AMDGPU/Metadata.h"
#include "hotswap/AMDGPU/StubEncoder.h"
#include "hotswap/AMDGPU/TargetInfo.h"
#include "hotswap/Pass/AnalysisManager.h"

#include <optional>
#include <string>
#include <vector>

namespace hotswap {

/// Name of the sections that hold stubs.
inline constexpr llvm::StringLiteral PoolSectionName = ".hotswap.text";
using amdgpu::StubSlotSize;

/// A stub found in a pool section.
struct PoolStub {
  uint64_t Addr = 0;
  Section *Sec = nullptr;
  amdgpu::DecodedStub Decoded;
  bool Dual = false; // the next slot leads to Target + 256

  /// Bytes the stub takes (256, or 512 when dual).
  uint64_t size() const { return amdgpu::stubSize(Dual); }
};

struct KernelInfo {
  std::string Name;     // "vadd"
  std::string KDSymbol; // "vadd.kd"
  uint64_t KDAddr = 0;
  Section *KDSection = nullptr;
  amdgpu::KernelDescriptor KD;
  /// Where the descriptor points now.
  uint64_t Entry = 0;
  /// Set when Entry is a stub.
  std::optional<PoolStub> EntryStub;
  /// The kernel's own code: EntryStub's target, or Entry.
  uint64_t CodeEntry = 0;
  /// A pool stub leading to CodeEntry that the descriptor does not use yet.
  std::optional<PoolStub> PendingStub;

  std::optional<amdgpu::KernelMD> MD;
  /// LLVM 22 `<name>.numbered_sgpr` ABS symbol.
  std::optional<uint64_t> NumberedSGPR;
  /// The kernel's function symbol (address, size), when it starts at
  /// CodeEntry: the code an SGPR scan reads.
  std::optional<std::pair<uint64_t, uint64_t>> Function;
  /// Set once refineSGPRs() scanned the kernel's code (gfx8-9 without
  /// NumberedSGPR): the SGPRs the code names, or nullopt inside when the
  /// scan could not tell (s_movrel, words that do not decode).
  std::optional<std::optional<unsigned>> ScannedSGPRs;
  /// SGPRs set at wave launch (user + system).
  unsigned LiveInSGPRs = 0;
  /// Best known count of SGPRs the kernel uses (at least LiveInSGPRs) and
  /// where it came from: "numbered_sgpr", "metadata", "granule",
  /// "addressable" (nothing known: assume all).
  unsigned UsedSGPRs = 0;
  std::string UsedSGPRSource;
  /// gfx6-9: special SGPRs (VCC, FLAT_SCRATCH, XNACK_MASK) the kernel keeps
  /// at the top of its allocation, above UsedSGPRs: metadata `.sgpr_count`
  /// minus the SGPRs in use (and minus a stub's scratch pair, which a
  /// previous run added to it), at most TargetInfo::SGPRGranuleExtra; the
  /// worst case when unknown. 0 on gfx10+.
  unsigned ReservedTopSGPRs = 0;

  bool hasStub() const { return EntryStub.has_value(); }
  /// Sets LiveInSGPRs, UsedSGPRs, UsedSGPRSource and ReservedTopSGPRs from
  /// KD, NumberedSGPR, ScannedSGPRs, MD and the stub (what the analysis does;
  /// passes that update a kept result call it).
  void deriveSGPRUse(const amdgpu::TargetInfo &TI);
  /// Whether a code scan could make the SGPR usage exact and has not been
  /// done yet (gfx8-9, no NumberedSGPR).
  bool canRefineSGPRs(const amdgpu::TargetInfo &TI) const;
  /// Kernarg preload on a target whose firmware enters at +256.
  bool needsDualStub(const amdgpu::TargetInfo &TI) const;
};

class KernelsAnalysis {
public:
  static AnalysisKey Key;
  static llvm::StringRef name() { return "kernels"; }

  struct Result {
    amdgpu::TargetInfo Target;
    std::optional<amdgpu::CodeObjectMetadata> Metadata;
    Section *MetadataSection = nullptr;
    std::vector<KernelInfo> Kernels;
    std::vector<PoolStub> PoolStubs;

    /// Scans the code of the kernels \p Indices (those that
    /// canRefineSGPRs()) and derives their SGPR usage again from the exact
    /// counts. Scans run on the analysis manager's thread pool, each worker
    /// with its own MC state; results never depend on the thread count.
    /// \p Scanned, when given, receives how many kernels had their SGPR
    /// usage taken from a scan (of their own function, or of all the code
    /// when they call or have no function symbol).
    llvm::Error refineSGPRs(Object &Obj, AnalysisManager &AM,
                            llvm::ArrayRef<size_t> Indices,
                            size_t *Scanned = nullptr);
    /// The same for every kernel.
    llvm::Error refineAllSGPRs(Object &Obj, AnalysisManager &AM,
                               size_t *Scanned = nullptr);

    /// The first field in which this result (kept up to date by passes)
    /// differs from \p Fresh (computed anew on the same object, refined for
    /// the same kernels), or nullopt: -verify-analysis-preservation.
    std::optional<std::string> firstDifference(const Result &Fresh) const;
  };

  static llvm::Expected<Result> run(Object &Obj, AnalysisManager &AM);
  /// print<kernels>: every kernel, with exact SGPR usage where a scan can
  /// give it (the printer refines the result first).
  static llvm::Error print(Result &R, Object &Obj, AnalysisManager &AM,
                           llvm::raw_ostream &OS, bool JSON);
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_KERNELS_H
