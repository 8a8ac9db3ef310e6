//===- hotswap/AMDGPU/ScratchSGPR.h - Scratch pair for stubs ----*- C++ -*-===//
//
// Chooses the SGPR pair a long-form stub may clobber, from the descriptor
// and the target alone. The stub runs before any instruction of the kernel:
// the only SGPRs holding a value then are the live-ins the hardware sets up
// from the descriptor, s0..s(L-1) (KernelDescriptor::liveInSGPRs), so the
// pair is the lowest even pair at or above L inside the wave's allocation,
// whatever the kernel's code does with it later.
//
//  * gfx10+: any pair up to s[104:105] (106 addressable SGPRs); else VCC,
//    which is undefined at entry and not part of the SGPR file.
//  * gfx6-9: the wave gets (granule + 1) * 8 SGPRs, and VCC, XNACK_MASK and
//    FLAT_SCRATCH occupy the top of them (kernelSpecialSGPRs()): the pair
//    lies below those. When it does not fit, VCC (the topmost pair,
//    undefined at entry) is used if every special lies above the live-ins;
//    otherwise the granule is raised (never on the SGPR-init-bug parts,
//    gfx802/805, whose allocation is fixed).
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

/// gfx6-9: the special SGPRs at the top of every wave's allocation on \p TI,
/// whatever the kernel: VCC (2); on gfx8-9, XNACK_MASK below it (4 in all)
/// on a processor with XNACK unless e_flags turn XNACK off (on, "any" and an
/// unsupported selector on such a processor all count); with architected
/// flat scratch (gfx942, gfx950, gfx9-4-generic) FLAT_SCRATCH below those,
/// which the hardware sets at launch (6 in all, as LLVM reserves it). 0 on
/// gfx10+. What verify requires a stub's pair to stay below.
unsigned targetSpecialSGPRs(const TargetInfo &TI);

/// gfx6-9: targetSpecialSGPRs() and, when the descriptor enables flat
/// scratch init (the kernel may set FLAT_SCRATCH up itself), FLAT_SCRATCH:
/// 4 on gfx6-7, 6 on gfx8-9, as LLVM's getNumExtraSGPRs counts them. The
/// specials a stub's pair is kept below. 0 on gfx10+.
unsigned kernelSpecialSGPRs(const TargetInfo &TI, const KernelDescriptor &KD);

/// Picks what the long-form stub of the kernel \p KD clobbers: the lowest
/// even pair at or above its live-ins that fits the current allocation,
/// else VCC when that needs no larger granule, else the pair with a larger
/// granule (granuleForPair() says which), else VCC with one.
llvm::Expected<ScratchChoice> chooseScratch(const TargetInfo &TI,
                                            const KernelDescriptor &KD);

/// gfx6-9: the RSRC1 SGPR granule that covers s[N:N+1] plus \p Specials
/// special registers above it; nullopt when the current granule already
/// does (and always on gfx10+). Error when no granule can (limit or init
/// bug).
llvm::Expected<std::optional<unsigned>>
granuleForPair(const TargetInfo &TI, const KernelDescriptor &KD, unsigned N,
               unsigned Specials);

/// gfx6-9: the granule that keeps the \p Specials special registers at the
/// top of the allocation (VCC the topmost pair) above the kernel's live-ins,
/// so that a stub may clobber VCC; nullopt when the current one does (and
/// always on gfx10+).
llvm::Expected<std::optional<unsigned>>
granuleForVCC(const TargetInfo &TI, const KernelDescriptor &KD,
              unsigned Specials);

/// SGPRs a wave must have allocated for a stub to clobber s[N:N+1] (gfx6-9:
/// the pair plus the specials above it), and for it to clobber VCC (the
/// topmost pair) with every special above \p LiveIns.
unsigned sgprsNeededForPair(unsigned N, unsigned Specials);
unsigned sgprsNeededForVCC(unsigned LiveIns, unsigned Specials);

/// The metadata `.sgpr_count` that covers s[N:N+1]: it counts the specials
/// too on gfx6-9.
uint64_t sgprCountCoveringPair(const TargetInfo &TI, unsigned N,
                               unsigned Specials);

/// The largest SGPR granule the hardware accepts: addressable SGPRs plus the
/// special registers, in units of 8.
unsigned maxSGPRGranule(const TargetInfo &TI);

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_SCRATCHSGPR_H
