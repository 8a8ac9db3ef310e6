//===- hotswap/AMDGPU/LaunchInterface.h - Swap compatibility ---*- C++ -*-===//
//
// Whether a host that launches one kernel can launch another in its place
// unchanged, decided from what the ABI says the runtime and the hardware
// read (AMDGPUUsage, "Code Object V3 to V6 Metadata" and "Kernel
// Descriptor"), not from the equality of keys:
//
//   * the launch interface must match: the arguments (`.args` offsets,
//     sizes and value kinds; no `.args` means none), `.kernarg_segment_size`,
//     `.kernarg_segment_align`, `.wavefront_size`, `.reqd_workgroup_size`,
//     `.uniform_work_group_size` (absent means false, "only emitted when
//     1"), the descriptor's wavefront size and kernarg_size;
//   * resources come from the replacement (registers, LDS, scratch, dynamic
//     stack, the flat work-group size limit), in the descriptor and in the
//     metadata values the runtime reads (fieldRule: Resource);
//   * informative keys never block: argument names, `.access`, `.symbol`,
//     hints (`.workgroup_size_hint`, `.vec_type_hint`), spill counts.
//
// A key one side lacks is compared by its meaning: the ABI's default for it
// where the ABI gives one (fieldMeaning).
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

/// What a metadata field of KernelMD is to a kernel swapped in.
enum class FieldRole {
  /// Part of the launch interface: must be equal (launchDifference).
  Launch,
  /// What the code needs: the replacement's value is written.
  Resource,
  /// Read by no runtime to launch: written when it can be, never blocks.
  Informative,
};

struct FieldRule {
  FieldRole Role;
  /// The value an absent key means (AMDGPUUsage), when the ABI gives one.
  std::optional<uint64_t> Absent;
};

/// The rule of \p F.
FieldRule fieldRule(KernelField F);

/// The value of \p F in \p MD as the runtime reads it: the value when the
/// key is present, else the ABI's default for an absent key, else nullopt.
std::optional<uint64_t> fieldMeaning(const KernelMD &MD, KernelField F);

/// \p V written for a message: "absent", "false"/"true" for the boolean
/// `.uses_dynamic_stack`, else the number; with \p WasAbsent, the default
/// is followed by " (absent)".
std::string fieldValueText(KernelField F, std::optional<uint64_t> V,
                           bool WasAbsent = false);

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_LAUNCHINTERFACE_H
