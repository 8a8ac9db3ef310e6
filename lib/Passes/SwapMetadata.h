//===- lib/Passes/SwapMetadata.h - A swapped kernel's metadata --*- C++ -*-===//
//
// swap-kernels' metadata policy (private to lib/Passes): whether FILE's
// kernel may take the place of the code object's (the launch interface the
// host relies on, and FILE's metadata in agreement with its own
// descriptor), which metadata values the swapped kernel takes from FILE
// (resources by meaning, informative values where they fit), and whether
// they fit the note in place or it must be written anew.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_LIB_PASSES_SWAPMETADATA_H
#define HOTSWAP_LIB_PASSES_SWAPMETADATA_H

#include "hotswap/AMDGPU/Metadata.h"
#include "hotswap/Passes/Kernels.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {
namespace swap {

/// The metadata fields a swapped kernel takes from the replacement
/// (fieldRule: resources, and informative fields where they fit; the others
/// that KernelMD has, .kernarg_segment_size and .wavefront_size, are part of
/// the launch interface and must be equal).
inline constexpr amdgpu::KernelField TakenFields[] = {
    amdgpu::KernelField::SGPRCount,
    amdgpu::KernelField::VGPRCount,
    amdgpu::KernelField::AGPRCount,
    amdgpu::KernelField::GroupSegmentFixedSize,
    amdgpu::KernelField::PrivateSegmentFixedSize,
    amdgpu::KernelField::MaxFlatWorkgroupSize,
    amdgpu::KernelField::SGPRSpillCount,
    amdgpu::KernelField::VGPRSpillCount,
    amdgpu::KernelField::UsesDynamicStack,
};

/// A metadata value a swap writes.
struct MetadataEdit {
  amdgpu::KernelField Field;
  uint64_t Value;
};

/// Why kernel \p RK of FILE (\p FR, named \p File) cannot take the place
/// of kernel \p K of the code object (\p R), or nullopt: metadata missing
/// on either side, FILE's metadata disagreeing with its own descriptor, or
/// a launch interface that differs (launchDifference).
std::optional<std::string> incompatibility(const KernelsAnalysis::Result &R,
                                           const KernelInfo &K,
                                           const KernelsAnalysis::Result &FR,
                                           const KernelInfo &RK,
                                           llvm::StringRef File);

/// The metadata values kernel \p K takes from \p RK (.sgpr_count at least
/// \p SGPRCountFloor), by meaning (fieldRule, fieldMeaning): nothing where
/// the two mean the same; a resource whose key the object lacks is added
/// (the note is then written anew); one FILE lacks, with no default,
/// cannot be taken: why, as the error.
llvm::Expected<std::vector<MetadataEdit>>
metadataEdits(const KernelInfo &K, const KernelInfo &RK,
              std::optional<uint64_t> SGPRCountFloor, llvm::StringRef File);

/// A kernel to swap: (index in R, index in FILE's) and the metadata values
/// it takes.
struct SwapPlan {
  size_t I, J;
  /// Informative fields left as they are (their new value does not fit).
  std::vector<amdgpu::KernelField> Left;
};

/// Tries the metadata edits of \p Plans (kernels of \p R taking those of
/// FILE's \p FR) on a copy of the note section: informative values that do
/// not fit in place are left out (SwapPlan::Left) while every other value
/// fits; once a resource value does not, the note is written anew
/// (code::commitMetadata) and every value goes in.
llvm::Error fitMetadata(const KernelsAnalysis::Result &R,
                        const KernelsAnalysis::Result &FR,
                        std::vector<SwapPlan> &Plans);

} // namespace swap
} // namespace hotswap

#endif // HOTSWAP_LIB_PASSES_SWAPMETADATA_H
