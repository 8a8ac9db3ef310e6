//===- hotswap/Code/EntryPolicy.h - Entering a kernel through a stub -*- C++
//-*-===//
//
// The one policy for entering a kernel through a stub, shared by every pass
// that writes or retargets a stub (synth-trampolines, swap-kernels) or
// points a descriptor at one (patch-descriptors, swap-kernels):
//
//   * the stub's form: one `s_branch` when the kernel is in reach (both
//     halves of a dual stub), else the long form on the scratch pair the
//     descriptor allows (amdgpu::chooseScratch: from the live-in SGPRs and,
//     on gfx6-9, the allocation; no code is read);
//   * what entering through it implies for the descriptor: the entry
//     offset, INST_PREF_SIZE clamped to the stub (gfx11+), the SGPR granule
//     raised on gfx6-9 so that the scratch pair (or VCC) lies inside the
//     allocation below its special registers, and the floor the metadata
//     `.sgpr_count` must reach to cover the pair.
//
// docs/ARCHITECTURE.md ("The scratch registers of a long-form stub") has
// the argument why the scratch choice is safe.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_ENTRYPOLICY_H
#define HOTSWAP_CODE_ENTRYPOLICY_H

#include "hotswap/AMDGPU/KernelDescriptor.h"
#include "hotswap/AMDGPU/StubEncoder.h"
#include "hotswap/AMDGPU/TargetInfo.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>

namespace hotswap {
namespace code {

/// Where a stub goes and what it leads to; the form is chooseStubForm's.
struct StubPlace {
  uint64_t StubAddr = 0;
  uint64_t Target = 0;
  bool Dual = false;
};

/// How the form may be chosen.
struct FormRules {
  /// The short form may be chosen when it reaches (false: always long).
  bool AllowShort = true;
};

/// The stub spec for \p Place: short when allowed and in reach (\p Enc
/// says), else long on the scratch pair (or VCC) \p KD allows. Fails when
/// the long form has no scratch registers.
llvm::Expected<amdgpu::StubSpec>
chooseStubForm(const amdgpu::TargetInfo &T, const amdgpu::KernelDescriptor &KD,
               const amdgpu::StubEncoder &Enc, const StubPlace &Place,
               FormRules Rules = {});

/// What entering through a stub did to a descriptor.
struct EntryEffects {
  /// INST_PREF_SIZE was lowered to the stub's size.
  bool InstPrefClamped = false;
  /// gfx6-9: the SGPR granule was raised for the scratch registers.
  bool GranuleRaised = false;
  /// The metadata .sgpr_count must be at least this (a pair form).
  std::optional<uint64_t> SGPRCountFloor;
};

/// Makes \p KD (the descriptor at \p KDAddr) enter through a stub of
/// \p StubSize bytes at \p StubAddr whose form is \p Form (scratch pair
/// s[\p SGPR:\p SGPR+1] for a pair form): sets the entry offset, clamps
/// INST_PREF_SIZE and raises the granule as needed. Fails when the entry
/// is out of a signed 64-bit offset's reach or the allocation cannot hold
/// the scratch registers; \p KD is then unchanged.
llvm::Expected<EntryEffects>
enterThroughStub(const amdgpu::TargetInfo &T, amdgpu::KernelDescriptor &KD,
                 uint64_t KDAddr, uint64_t StubAddr, uint64_t StubSize,
                 amdgpu::StubSpec::RegKind Form, unsigned SGPR);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_ENTRYPOLICY_H
