//===- hotswap/AMDGPU/Occupancy.h - Waves a SIMD holds ----------*- C++ -*-===//
//
// How many waves of a kernel one SIMD holds at once as its registers allow:
// the VGPR file divided by the kernel's VGPRs rounded up to the allocation
// granule, and on gfx6-9 the SGPR file likewise, capped by the waves a
// SIMD runs at most (facts of the AMDGPU backend's AMDGPUBaseInfo; which
// ones apply is read off LLVM's subtarget features: gfx90a-insts,
// gfx10-insts, gfx10-3-insts, allocate1_5xvgprs). LDS and the workgroup size
// may lower it further; they are not counted here. A pass that raises a
// kernel's register counts reports what this gives before and after.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_OCCUPANCY_H
#define HOTSWAP_AMDGPU_OCCUPANCY_H

#include "hotswap/AMDGPU/TargetInfo.h"

namespace hotswap {
namespace amdgpu {

class TargetMC;

struct OccupancyModel {
  /// Waves a SIMD runs at most: 8 (gfx90a class), 10 (gfx6-9), 20
  /// (gfx10.1), 16 (gfx10.3 and later).
  unsigned MaxWaves = 10;
  /// The VGPR file per lane and the granule VGPRs are allocated in.
  unsigned TotalVGPRs = 256, VGPRGranule = 4;
  /// SGPRs limit waves (gfx6-9), by the table of gfx6-7 or of gfx8-9.
  bool SGPRsLimit = true, GFX8SGPRTable = true;
};

/// The model of \p MC's target (\p TI) for a wave32 or wave64 kernel.
OccupancyModel occupancyModel(const TargetMC &MC, const TargetInfo &TI,
                              bool Wave32);

/// Waves per SIMD for a kernel of \p VGPRs (on the gfx90a class VGPRs and
/// AGPRs together) and \p SGPRs (VCC and the other registers at the top
/// included).
unsigned wavesPerSIMD(const OccupancyModel &M, unsigned VGPRs, unsigned SGPRs);

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_OCCUPANCY_H
