//===- hotswap/AMDGPU/LaunchInterface.h - Comparing launch interfaces -*- C++
//-*-===//
//
// Whether a host that launches one kernel can launch another in its place
// unchanged: the same arguments (`.args` offsets, sizes and value kinds),
// `.kernarg_segment_size` and `.wavefront_size`, the descriptor's wavefront
// size and kernarg_size, and the same launch keys (`.kernarg_segment_align`,
// `.reqd_workgroup_size`, `.uniform_work_group_size`, ...). Resources
// (registers, LDS, scratch) may differ: they travel with the descriptor.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_LAUNCHINTERFACE_H
#define HOTSWAP_AMDGPU_LAUNCHINTERFACE_H

#include "hotswap/AMDGPU/KernelDescriptor.h"
#include "hotswap/AMDGPU/Metadata.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace hotswap {
namespace amdgpu {

/// One kernel as a host sees it when it launches it.
struct LaunchSide {
  const KernelInterface &Interface;
  const KernelMD &MD;
  const KernelDescriptor &KD;
  /// How messages name where this side comes from ("the code object",
  /// "'fixed.co'").
  llvm::StringRef Where;
};

/// The first difference between the launch interfaces of \p A and \p B, as
/// a phrase ("'.args[1] .size' is 8 in the code object, 4 in 'fixed.co'"),
/// or nullopt when a host can launch either unchanged.
std::optional<std::string> launchDifference(const LaunchSide &A,
                                            const LaunchSide &B);

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_LAUNCHINTERFACE_H
