//===- lib/AMDGPU/Occupancy.cpp - Waves a SIMD holds ----------------------===//

#include "hotswap/AMDGPU/Occupancy.h"

#include "hotswap/AMDGPU/TargetMC.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace hotswap;
using namespace hotswap::amdgpu;

OccupancyModel amdgpu::occupancyModel(const TargetMC &MC, const TargetInfo &TI,
                                      bool Wave32) {
  OccupancyModel M;
  const bool GFX10Plus = MC.hasFeature("gfx10-insts");
  const bool GFX103 = MC.hasFeature("gfx10-3-insts");
  const bool MoreVGPRs = MC.hasFeature("allocate1_5xvgprs");
  if (MC.hasFeature("gfx90a-insts")) {
    M.MaxWaves = 8;
    M.TotalVGPRs = 512;
    M.VGPRGranule = 8;
  } else if (!GFX10Plus) {
    M.MaxWaves = 10;
    M.TotalVGPRs = 256;
    M.VGPRGranule = 4;
  } else {
    M.MaxWaves = GFX103 ? 16 : 20;
    M.TotalVGPRs = (Wave32 ? 1024 : 512) * (MoreVGPRs ? 3 : 2) / 2;
    M.VGPRGranule = MoreVGPRs ? (Wave32 ? 24 : 12)
                    : GFX103  ? (Wave32 ? 16 : 8)
                              : (Wave32 ? 8 : 4);
  }
  M.SGPRsLimit = !GFX10Plus;
  M.GFX8SGPRTable = TI.Gen >= Generation::GFX8;
  return M;
}

unsigned amdgpu::wavesPerSIMD(const OccupancyModel &M, unsigned VGPRs,
                              unsigned SGPRs) {
  unsigned Waves = M.MaxWaves;
  if (VGPRs >= M.VGPRGranule)
    Waves = std::min(
        std::max(M.TotalVGPRs / unsigned(llvm::alignTo(VGPRs, M.VGPRGranule)),
                 1u),
        M.MaxWaves);
  if (!M.SGPRsLimit)
    return Waves;
  // The SGPR file's steps (AMDGPUBaseInfo's getOccupancyWithNumSGPRs).
  static constexpr unsigned GFX8[][2] = {{80, 10}, {88, 9}, {100, 8}};
  static constexpr unsigned GFX6[][2] = {
      {48, 10}, {56, 9}, {64, 8}, {72, 7}, {80, 6}};
  unsigned BySGPRs = M.GFX8SGPRTable ? 7 : 5;
  if (M.GFX8SGPRTable) {
    for (const auto &[Max, W] : GFX8)
      if (SGPRs <= Max) {
        BySGPRs = W;
        break;
      }
  } else {
    for (const auto &[Max, W] : GFX6)
      if (SGPRs <= Max) {
        BySGPRs = W;
        break;
      }
  }
  return std::min(Waves, BySGPRs);
}
