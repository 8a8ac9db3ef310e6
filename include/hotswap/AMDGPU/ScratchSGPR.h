//===- hotswap/AMDGPU/ScratchSGPR.h - Scratch pair for stubs ----*- C++ -*-===//
//
// Chooses the SGPR pair a long-form stub may clobber:
// the first even pair at or above everything the kernel uses (live-ins
// included). gfx10+: any pair up to s[104:105], else VCC (undefined at entry,
// separate from the SGPR file). gfx6-9: VCC, FLAT_SCRATCH and XNACK_MASK sit
// at the top of the wave's allocation, so the pair must lie below
// (granule+1)*8 - extra; the granule is raised when needed (never on the
// SGPR-init-bug parts, whose count is fixed). When every addressable SGPR is
// in use, VCC (the top two SGPRs of the allocation, undefined at entry) is
// used instead, provided the allocation keeps the worst-case special
// registers above the kernel's SGPRs (raising the granule if needed).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_SCRATCHSGPR_H
#define HOTSWAP_AMDGPU_SCRATCHSGPR_H

#include "hotswap/AMDGPU/KernelDescriptor.h"
#include "hotswap/AMDGPU/TargetInfo.h"

#include <optional>

namespace hotswap {
namespace amdgpu {

struct ScratchChoice {
  bool UseVCC = false;
  unsigned SGPR = 0; // N of s[N:N+1] when !UseVCC
};

/// Picks the pair for a kernel that uses \p UsedSGPRs SGPRs (s0..s(U-1)).
/// \p ReservedTop is the number of special SGPRs (VCC, FLAT_SCRATCH,
/// XNACK_MASK) the kernel keeps at the top of its allocation on gfx6-9
/// (TargetInfo::SGPRGranuleExtra when unknown); ignored on gfx10+.
llvm::Expected<ScratchChoice> chooseScratch(const TargetInfo &TI,
                                            const KernelDescriptor &KD,
                                            unsigned UsedSGPRs,
                                            unsigned ReservedTop);

/// gfx6-9: the RSRC1 SGPR granule that covers s[N:N+1] plus the special
/// registers above it; nullopt when the current granule already does (and
/// always on gfx10+). Error when no granule can (limit or init bug).
llvm::Expected<std::optional<unsigned>>
granuleForPair(const TargetInfo &TI, const KernelDescriptor &KD, unsigned N,
               unsigned ReservedTop);

/// gfx6-9: the granule that keeps VCC/FLAT_SCRATCH/XNACK_MASK (at the top
/// of the allocation) above \p UsedSGPRs, so that a stub may clobber VCC;
/// nullopt when the current one does (and always on gfx10+).
llvm::Expected<std::optional<unsigned>>
granuleForVCC(const TargetInfo &TI, const KernelDescriptor &KD,
              unsigned UsedSGPRs, unsigned ReservedTop);

/// SGPRs a wave must have allocated for a stub to clobber s[N:N+1] (gfx6-9:
/// the pair plus the specials above it), and for it to clobber VCC (the
/// topmost pair) above \p UsedSGPRs.
unsigned sgprsNeededForPair(unsigned N, unsigned ReservedTop);
unsigned sgprsNeededForVCC(unsigned UsedSGPRs, unsigned ReservedTop);

/// The metadata `.sgpr_count` that covers s[N:N+1]: it counts the specials
/// too on gfx6-9.
uint64_t sgprCountCoveringPair(const TargetInfo &TI, unsigned N,
                               unsigned ReservedTop);

/// The largest SGPR granule the hardware accepts: addressable SGPRs plus the
/// special registers, in units of 8.
unsigned maxSGPRGranule(const TargetInfo &TI);

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_SCRATCHSGPR_H
