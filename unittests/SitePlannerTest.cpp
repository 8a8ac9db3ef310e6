//===- unittests/SitePlannerTest.cpp - Registers above the allocation ----===//

#include "TestTargets.h"

#include "hotswap/Passes/SitePlanner.h"

#include "gtest/gtest.h"

using namespace hotswap;
using namespace hotswap::amdgpu;
using namespace llvm;

namespace {

KernelsAnalysis::Result oneKernel(unsigned Mach, uint32_t Rsrc1,
                                  uint32_t Rsrc3) {
  KernelsAnalysis::Result R;
  R.Target = target(Mach);
  KernelInfo &K = R.Kernels.emplace_back();
  K.Name = "k";
  K.KD.ComputePgmRsrc1 = Rsrc1;
  K.KD.ComputePgmRsrc3 = Rsrc3;
  return R;
}

KernelSites vgprsUsed(unsigned Allocated, unsigned Used) {
  KernelSites KS;
  KS.Kernels = {0};
  KS.SGPRsAllocated = KS.SGPRsUsed = 0;
  KS.VGPRsAllocated = Allocated;
  KS.VGPRsUsed = Used;
  return KS;
}

/// The message of \p E, or "" for success.
std::string message(Error E) { return E ? toString(std::move(E)) : ""; }

} // namespace

TEST(SitePlannerTest, VGPRsTakenOnGfx90aMoveTheAGPRsUp) {
  // 32 registers, AGPRs from 24: 24 VGPRs, 8 AGPRs. Two VGPRs more: the
  // AGPRs start at 28 (the next multiple of 4) and the allocation holds
  // 36 (granule 4: 40), so every AGPR keeps its number.
  KernelsAnalysis::Result R =
      oneKernel(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A, 3, 0x00010005u);
  ASSERT_EQ(message(growDescriptors(R, vgprsUsed(24, 26))), "");
  const KernelDescriptor &KD = R.Kernels[0].KD;
  EXPECT_EQ(KD.accumOffset(), 28u);
  EXPECT_EQ(KD.vgprGranule(), 4u);
  EXPECT_EQ(KD.usableVGPRs(R.Target), 28u);
  EXPECT_GE((KD.vgprGranule() + 1) * 8 - KD.accumOffset(), 8u);
  EXPECT_EQ(KD.ComputePgmRsrc3 & ~0x3fu, 0x00010000u); // TG_SPLIT kept

  // gfx942 alike; AGPRs that would end past 512 registers: an error.
  KernelsAnalysis::Result Full =
      oneKernel(ELF::EF_AMDGPU_MACH_AMDGCN_GFX942, 63, 31); // 512, from 128
  EXPECT_EQ(message(growDescriptors(Full, vgprsUsed(128, 130))),
            "kernel 'k': 130 VGPRs and 384 AGPRs do not fit its descriptor");

  // Elsewhere only the granule grows: gfx906, in 4s.
  KernelsAnalysis::Result Gfx906 =
      oneKernel(ELF::EF_AMDGPU_MACH_AMDGCN_GFX906, 0, 0);
  ASSERT_EQ(message(growDescriptors(Gfx906, vgprsUsed(4, 5))), "");
  EXPECT_EQ(Gfx906.Kernels[0].KD.vgprGranule(), 1u);
  EXPECT_EQ(Gfx906.Kernels[0].KD.ComputePgmRsrc3, 0u);
}
