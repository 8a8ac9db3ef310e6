//===- hotswap/Passes/Kernels.h - The kernels analysis ----------*- C++ -*-===//
//
// kernels (analysis; print<kernels> prints it)
//   Finds every kernel of the object: `<name>.kd` symbols of .symtab and
//   .dynsym (de-duplicated by name and address), their descriptors, entries,
//   whether an entry already is a recognised stub (and where it leads), the
//   stubs of pool sections that lead to each kernel, metadata values, and
//   what a stub's scratch registers are chosen from: the SGPRs set at wave
//   launch and, on gfx6-9, the wave's SGPR allocation and the special
//   registers at its top, all from the descriptor and the target (no code is
//   disassembled). Everything is validated; inconsistencies are errors.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_KERNELS_H
#define HOTSWAP_PASSES_KERNELS_H

#include "hotswap/AMDGPU/KernelDescriptor.h"
#include "hotswap/AMDGPU/Metadata.h"
#include "hotswap/AMDGPU/StubEncoder.h"
#include "hotswap/AMDGPU/TargetInfo.h"
#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Pass/AnalysisManager.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace hotswap {

/// Name of the sections that hold stubs (code::CodePurpose::EntryStubs).
inline constexpr llvm::StringLiteral PoolSectionName = code::StubSectionName;
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

  /// The kernel's entry of the result's Metadata (its values include the
  /// changes pending there), or null when the metadata does not describe
  /// it. Points into KernelsAnalysis::Result::Metadata, which the result
  /// owns and never replaces: 100 000 kernels' copies were 27 MB.
  const amdgpu::KernelMD *MD = nullptr;
  /// SGPRs set at wave launch, s0..s(LiveInSGPRs - 1): user SGPRs (preloaded
  /// kernel arguments included), then the enabled system SGPRs.
  unsigned LiveInSGPRs = 0;
  /// gfx6-9: SGPRs allocated to a wave ((granule + 1) * 8) and how many at
  /// their top hold special registers (amdgpu::kernelSpecialSGPRs); nullopt
  /// and 0 on gfx10+.
  std::optional<unsigned> AllocatedSGPRs;
  unsigned SpecialSGPRs = 0;

  bool hasStub() const { return EntryStub.has_value(); }
  /// Sets LiveInSGPRs, AllocatedSGPRs and SpecialSGPRs from KD (what the
  /// analysis does; passes that change a kept descriptor call it).
  void deriveSGPRs(const amdgpu::TargetInfo &TI);
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

    /// The first field in which this result (kept up to date by passes)
    /// differs from \p Fresh (computed anew on the same object), or
    /// nullopt: -verify-analysis-preservation.
    std::optional<std::string> firstDifference(const Result &Fresh) const;

    // Passes that change what the analysis found keep it up to date
    // through these, which derive every field as run() does.

    /// A stub was written for kernel \p Kernel (an index into Kernels) in
    /// \p Pool, as \p Spec describes, after a prologue of \p PrologueSize
    /// bytes: its slots join PoolStubs and it becomes the kernel's
    /// PendingStub (synth-trampolines).
    void addStub(size_t Kernel, Section &Pool, const amdgpu::StubSpec &Spec,
                 uint64_t PrologueSize);
    /// The descriptor of kernel \p Kernel was rewritten to enter its
    /// PendingStub: re-reads the descriptor, makes the stub the EntryStub,
    /// takes the kernel's SGPRs anew (patch-descriptors; its metadata,
    /// KernelInfo::MD, shows Metadata's new values by itself). False when
    /// the descriptor does not enter the pending stub: the result is then
    /// stale and must not be kept.
    bool enterPendingStub(size_t Kernel);
  };

  static llvm::Expected<Result> run(Object &Obj, AnalysisManager &AM);
  /// print<kernels>: every kernel, as text ...
  static llvm::Error print(Result &R, Object &Obj, AnalysisManager &AM,
                           llvm::raw_ostream &OS);
  /// ... or as JSON (--kernels-format=json).
  static llvm::json::Value toJSON(Result &R, Object &Obj, AnalysisManager &AM);
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_KERNELS_H
