//===- unittests/ScratchSGPRTest.cpp - Scratch pair, prologue -------------===//
//
// The register decisions a stub depends on: which SGPR pair it may clobber
// (and the granule that makes it legal on gfx6-9), and which prologues are
// rejected.
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/ScratchSGPR.h"
#include "hotswap/AMDGPU/KernelDescriptor.h"
#include "hotswap/AMDGPU/Prologue.h"
#include "hotswap/AMDGPU/TargetInfo.h"
#include "hotswap/AMDGPU/TargetMC.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "gtest/gtest.h"

#include "TestTargets.h"

using namespace llvm;
using namespace hotswap::amdgpu;

namespace {

KernelDescriptor withGranule(unsigned G) {
  KernelDescriptor KD;
  KD.setSGPRGranule(G);
  return KD;
}

/// A kernel with \p User user SGPRs and workgroup ID X (live-ins User + 1)
/// and SGPR granule \p G.
KernelDescriptor kernel(unsigned User, unsigned G) {
  KernelDescriptor KD = withGranule(G);
  KD.ComputePgmRsrc2 = (User << 1) | (1u << 7);
  return KD;
}

// RSRC2 bits of the system SGPRs, and KERNEL_CODE_PROPERTIES' flat scratch
// init bit.
constexpr uint32_t PrivateSegment = 1u << 0;
constexpr uint32_t WorkgroupIDX = 1u << 7;
constexpr uint32_t WorkgroupIDY = 1u << 8;
constexpr uint32_t WorkgroupIDZ = 1u << 9;
constexpr uint32_t WorkgroupInfo = 1u << 10;
constexpr uint16_t FlatScratchInit = 1u << 5;

/// A kernel with \p User user SGPRs, the system SGPRs of \p System, SGPR
/// granule \p G and kernel code properties \p Props.
KernelDescriptor descriptor(unsigned User, uint32_t System, unsigned G,
                            uint16_t Props = 0) {
  KernelDescriptor KD = withGranule(G);
  KD.ComputePgmRsrc2 = (User << 1) | System;
  KD.KernelCodeProperties = Props;
  return KD;
}

/// What synth-trampolines and patch-descriptors make of a kernel: "s[N:M]"
/// or "vcc", then " granule G" when the granule is raised, or the error.
std::string decide(const TargetInfo &TI, const KernelDescriptor &KD) {
  Expected<ScratchChoice> C = chooseScratch(TI, KD);
  if (!C)
    return "error: " + toString(C.takeError());
  unsigned Specials = kernelSpecialSGPRs(TI, KD);
  Expected<std::optional<unsigned>> G =
      C->UseVCC ? granuleForVCC(TI, KD, Specials)
                : granuleForPair(TI, KD, C->SGPR, Specials);
  if (!G)
    return "error: " + toString(G.takeError());
  std::string R = C->UseVCC ? std::string("vcc")
                            : "s[" + std::to_string(C->SGPR) + ":" +
                                  std::to_string(C->SGPR + 1) + "]";
  if (*G)
    R += " granule " + std::to_string(**G);
  return R;
}

std::vector<uint8_t> assemble(const TargetInfo &TI, StringRef Text) {
  Expected<TargetMC &> MC = testMC(TI.MCPU, TI.Features);
  if (!MC) {
    ADD_FAILURE() << toString(MC.takeError());
    return {};
  }
  Expected<std::vector<uint8_t>> B = MC->assemble(Text);
  if (!B) {
    ADD_FAILURE() << toString(B.takeError());
    return {};
  }
  return *B;
}

} // namespace

TEST(ScratchSGPRTest, GFX10PlusTakesTheFirstEvenPairAtOrAboveTheLiveIns) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100);
  KernelDescriptor KD = kernel(16, 0); // 17 live-ins
  Expected<ScratchChoice> C = chooseScratch(TI, KD);
  ASSERT_TRUE(bool(C));
  EXPECT_FALSE(C->UseVCC);
  EXPECT_EQ(C->SGPR, 18u);
  // gfx10+ never needs a granule.
  Expected<std::optional<unsigned>> G = granuleForPair(TI, KD, 104, 6);
  ASSERT_TRUE(bool(G));
  EXPECT_FALSE(G->has_value());
}

TEST(ScratchSGPRTest, GFX9PairInsideTheAllocationNeedsNoGranule) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX900 |
                         ELF::EF_AMDGPU_FEATURE_XNACK_OFF_V4);
  // Granule 1: 16 SGPRs. 11 live-ins: s[12:13] + VCC = 16.
  Expected<ScratchChoice> C = chooseScratch(TI, kernel(10, 1));
  ASSERT_TRUE(bool(C));
  EXPECT_FALSE(C->UseVCC);
  EXPECT_EQ(C->SGPR, 12u);
  // Granule 5: 48 SGPRs. s[40:41] + 6 specials = 48.
  Expected<std::optional<unsigned>> G =
      granuleForPair(TI, withGranule(5), 40, 6);
  ASSERT_TRUE(bool(G));
  EXPECT_FALSE(G->has_value());
}

TEST(ScratchSGPRTest, GFX9GranuleIsRaisedWhenThePairDoesNotFit) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX900);
  KernelDescriptor KD = withGranule(5); // 48 SGPRs
  // s[42:43] + 6 specials = 50 > 48: granule 6 (56 SGPRs).
  Expected<std::optional<unsigned>> G = granuleForPair(TI, KD, 42, 6);
  ASSERT_TRUE(bool(G));
  ASSERT_TRUE(G->has_value());
  EXPECT_EQ(**G, 6u);
  // With only VCC reserved the same pair fits: 42 + 2 + 2 = 46.
  G = granuleForPair(TI, KD, 42, 2);
  ASSERT_TRUE(bool(G));
  EXPECT_FALSE(G->has_value());
}

TEST(ScratchSGPRTest, GFX9VCCWhenOnlyItFitsTheAllocation) {
  // XNACK may be on: VCC and XNACK_MASK at the top. Granule 1 (16 SGPRs),
  // 11 live-ins: s[12:13] + 4 = 18 does not fit, VCC does (11 + 4 <= 16).
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX906);
  Expected<ScratchChoice> C = chooseScratch(TI, kernel(10, 1));
  ASSERT_TRUE(bool(C));
  EXPECT_TRUE(C->UseVCC);
  Expected<std::optional<unsigned>> G = granuleForVCC(TI, kernel(10, 1), 4);
  ASSERT_TRUE(bool(G));
  EXPECT_FALSE(G->has_value());
  // A smaller allocation must grow so that VCC stays above the live-ins.
  G = granuleForVCC(TI, kernel(15, 1), 4); // 16 + 4 > 16
  ASSERT_TRUE(bool(G));
  ASSERT_TRUE(G->has_value());
  EXPECT_EQ(**G, 2u);
  EXPECT_EQ(maxSGPRGranule(TI), 13u);
}

// The special registers at the top of a gfx6-9 allocation, per target and
// kernel, as LLVM's getNumExtraSGPRs counts them: VCC 2, with XNACK_MASK 4,
// with FLAT_SCRATCH 6 (gfx6-7: VCC 2, with FLAT_SCRATCH 4); none on gfx10+.
TEST(ScratchSGPRTest, SpecialSGPRsPerTargetAndKernel) {
  using namespace ELF;
  constexpr unsigned Generic1 = 1u << EF_AMDGPU_GENERIC_VERSION_OFFSET;
  struct Case {
    unsigned Flags;
    uint16_t Props;
    unsigned Target, Kernel;
  } Cases[] = {
      {EF_AMDGPU_MACH_AMDGCN_GFX600, 0, 2, 2},
      {EF_AMDGPU_MACH_AMDGCN_GFX600, FlatScratchInit, 2, 4},
      {EF_AMDGPU_MACH_AMDGCN_GFX701, 0, 2, 2},
      {EF_AMDGPU_MACH_AMDGCN_GFX701, FlatScratchInit, 2, 4},
      // gfx802/803/805 have no XNACK.
      {EF_AMDGPU_MACH_AMDGCN_GFX803, 0, 2, 2},
      {EF_AMDGPU_MACH_AMDGCN_GFX803, FlatScratchInit, 2, 6},
      {EF_AMDGPU_MACH_AMDGCN_GFX802, 0, 2, 2},
      // gfx801 has: it counts unless e_flags say xnack-.
      {EF_AMDGPU_MACH_AMDGCN_GFX801, 0, 4, 4},
      {EF_AMDGPU_MACH_AMDGCN_GFX801 | EF_AMDGPU_FEATURE_XNACK_OFF_V4, 0, 2, 2},
      {EF_AMDGPU_MACH_AMDGCN_GFX900 | EF_AMDGPU_FEATURE_XNACK_OFF_V4, 0, 2, 2},
      {EF_AMDGPU_MACH_AMDGCN_GFX900 | EF_AMDGPU_FEATURE_XNACK_OFF_V4,
       FlatScratchInit, 2, 6},
      {EF_AMDGPU_MACH_AMDGCN_GFX900 | EF_AMDGPU_FEATURE_XNACK_ON_V4, 0, 4, 4},
      {EF_AMDGPU_MACH_AMDGCN_GFX900 | EF_AMDGPU_FEATURE_XNACK_ANY_V4, 0, 4, 4},
      // An unsupported selector on a processor with XNACK: unknown, counted.
      {EF_AMDGPU_MACH_AMDGCN_GFX906, 0, 4, 4},
      {EF_AMDGPU_MACH_AMDGCN_GFX90A | EF_AMDGPU_FEATURE_XNACK_ON_V4,
       FlatScratchInit, 4, 6},
      {EF_AMDGPU_MACH_AMDGCN_GFX9_GENERIC | Generic1, 0, 4, 4},
      // Architected flat scratch: the hardware sets FLAT_SCRATCH at launch.
      {EF_AMDGPU_MACH_AMDGCN_GFX942 | EF_AMDGPU_FEATURE_XNACK_OFF_V4, 0, 6, 6},
      {EF_AMDGPU_MACH_AMDGCN_GFX950 | EF_AMDGPU_FEATURE_XNACK_OFF_V4, 0, 6, 6},
      {EF_AMDGPU_MACH_AMDGCN_GFX9_4_GENERIC | Generic1, 0, 6, 6},
      {EF_AMDGPU_MACH_AMDGCN_GFX1030, FlatScratchInit, 0, 0},
      {EF_AMDGPU_MACH_AMDGCN_GFX1100, FlatScratchInit, 0, 0},
      {EF_AMDGPU_MACH_AMDGCN_GFX1201, 0, 0, 0},
      {EF_AMDGPU_MACH_AMDGCN_GFX1250, 0, 0, 0},
  };
  for (const Case &C : Cases) {
    TargetInfo TI = target(C.Flags);
    SCOPED_TRACE(TI.targetID() + (C.Props ? " flat scratch init" : ""));
    EXPECT_EQ(targetSpecialSGPRs(TI), C.Target);
    EXPECT_EQ(kernelSpecialSGPRs(TI, descriptor(2, 0, 0, C.Props)), C.Kernel);
  }
}

// Every source of live-in SGPRs moves the pair: the user SGPRs, then each
// system SGPR RSRC2 enables. The private segment wave offset is one only
// without architected flat scratch.
TEST(ScratchSGPRTest, EachLiveInSourceMovesThePair) {
  using namespace ELF;
  TargetInfo Gfx900 =
      target(EF_AMDGPU_MACH_AMDGCN_GFX900 | EF_AMDGPU_FEATURE_XNACK_OFF_V4);
  TargetInfo Gfx942 =
      target(EF_AMDGPU_MACH_AMDGCN_GFX942 | EF_AMDGPU_FEATURE_XNACK_OFF_V4);
  TargetInfo Gfx1030 = target(EF_AMDGPU_MACH_AMDGCN_GFX1030);
  TargetInfo Gfx1100 = target(EF_AMDGPU_MACH_AMDGCN_GFX1100);
  struct Case {
    unsigned User;
    uint32_t System;
    const char *Gfx900, *Gfx942, *Gfx1030, *Gfx1100;
  } Cases[] = {
      {0, 0, "s[0:1]", "s[0:1]", "s[0:1]", "s[0:1]"},
      {3, 0, "s[4:5]", "s[4:5]", "s[4:5]", "s[4:5]"},
      {4, 0, "s[4:5]", "s[4:5]", "s[4:5]", "s[4:5]"},
      {4, WorkgroupIDX, "s[6:7]", "s[6:7]", "s[6:7]", "s[6:7]"},
      {5, WorkgroupIDY, "s[6:7]", "s[6:7]", "s[6:7]", "s[6:7]"},
      {5, WorkgroupIDZ, "s[6:7]", "s[6:7]", "s[6:7]", "s[6:7]"},
      {6, WorkgroupInfo, "s[8:9]", "s[8:9]", "s[8:9]", "s[8:9]"},
      {6, PrivateSegment, "s[8:9]", "s[6:7]", "s[8:9]", "s[6:7]"},
      {6, WorkgroupIDX | WorkgroupIDY | WorkgroupIDZ, "s[10:11]", "s[10:11]",
       "s[10:11]", "s[10:11]"},
      {6,
       WorkgroupIDX | WorkgroupIDY | WorkgroupIDZ | WorkgroupInfo |
           PrivateSegment,
       "s[12:13]", "s[10:11]", "s[12:13]", "s[10:11]"},
      {16, WorkgroupIDX, "s[18:19]", "s[18:19]", "s[18:19]", "s[18:19]"},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE("user " + std::to_string(C.User) + ", rsrc2 system bits " +
                 utohexstr(C.System));
    // Granule 12 (104 SGPRs): every pair fits the allocation.
    KernelDescriptor KD = descriptor(C.User, C.System, 12);
    EXPECT_EQ(decide(Gfx900, KD), C.Gfx900);
    EXPECT_EQ(decide(Gfx942, KD), C.Gfx942);
    EXPECT_EQ(decide(Gfx1030, KD), C.Gfx1030);
    EXPECT_EQ(decide(Gfx1100, KD), C.Gfx1100);
  }
}

// Preloaded kernel arguments are user SGPRs (USER_SGPR_COUNT counts them;
// KERNARG_PRELOAD itself adds nothing), on gfx90a/942/950 and gfx125x.
TEST(ScratchSGPRTest, PreloadedArgumentsAreLiveIns) {
  using namespace ELF;
  for (unsigned Mach :
       {EF_AMDGPU_MACH_AMDGCN_GFX90A, EF_AMDGPU_MACH_AMDGCN_GFX942,
        EF_AMDGPU_MACH_AMDGCN_GFX950, EF_AMDGPU_MACH_AMDGCN_GFX1250}) {
    TargetInfo TI = target(Mach);
    SCOPED_TRACE(TI.Name);
    // Kernarg pointer (2) + 14 preloaded dwords, workgroup ID X: 17.
    KernelDescriptor KD = descriptor(16, WorkgroupIDX, 12);
    KD.KernargPreload = 14; // KERNARG_PRELOAD_SPEC_LENGTH
    ASSERT_EQ(KD.kernargPreloadLength(), 14u);
    EXPECT_EQ(KD.liveInSGPRs(TI), 17u);
    EXPECT_EQ(decide(TI, KD), "s[18:19]");
    KD.KernargPreload = 0;
    EXPECT_EQ(decide(TI, KD), "s[18:19]");
  }
}

// USER_SGPR_COUNT is 6 bits wide on gfx125x: 40 user SGPRs there; the same
// RSRC2 read by gfx1201 (5 bits) has 8.
TEST(ScratchSGPRTest, GFX125xUserSGPRCountIsSixBits) {
  using namespace ELF;
  KernelDescriptor KD = descriptor(40, WorkgroupIDX, 0);
  for (unsigned Mach :
       {EF_AMDGPU_MACH_AMDGCN_GFX1250, EF_AMDGPU_MACH_AMDGCN_GFX1251}) {
    TargetInfo TI = target(Mach);
    EXPECT_EQ(KD.liveInSGPRs(TI), 41u) << TI.Name;
    EXPECT_EQ(decide(TI, KD), "s[42:43]") << TI.Name;
  }
  TargetInfo Gfx1201 = target(EF_AMDGPU_MACH_AMDGCN_GFX1201);
  EXPECT_EQ(KD.liveInSGPRs(Gfx1201), 9u);
  EXPECT_EQ(decide(Gfx1201, KD), "s[10:11]");
  // The most a descriptor can ask for: 63 user and 5 system SGPRs still
  // leave a pair below s106.
  KernelDescriptor Max = descriptor(63,
                                    WorkgroupIDX | WorkgroupIDY | WorkgroupIDZ |
                                        WorkgroupInfo | PrivateSegment,
                                    0);
  TargetInfo Gfx1250 = target(EF_AMDGPU_MACH_AMDGCN_GFX1250);
  EXPECT_EQ(Max.liveInSGPRs(Gfx1250), 67u); // no wave offset: architected
  EXPECT_EQ(decide(Gfx1250, Max), "s[68:69]");
}

// gfx10+ has no SGPR granule: the pair depends on the live-ins alone.
TEST(ScratchSGPRTest, GFX10PlusIgnoresTheGranuleField) {
  using namespace ELF;
  for (unsigned Mach :
       {EF_AMDGPU_MACH_AMDGCN_GFX1030, EF_AMDGPU_MACH_AMDGCN_GFX1100,
        EF_AMDGPU_MACH_AMDGCN_GFX1201, EF_AMDGPU_MACH_AMDGCN_GFX1250}) {
    TargetInfo TI = target(Mach);
    for (unsigned G : {0u, 5u, 15u})
      EXPECT_EQ(decide(TI, descriptor(30, WorkgroupIDX, G)), "s[32:33]")
          << TI.Name << " granule " << G;
  }
}

// The boundaries on gfx6-9, per generation: the pair right above the
// live-ins just fits below the specials; it just does not, and VCC (the top
// pair) does, with every special above the live-ins; neither does, and the
// granule is raised for the pair.
TEST(ScratchSGPRTest, GFX6To9Boundaries) {
  using namespace ELF;
  struct Case {
    unsigned Flags;
    uint16_t Props;
    unsigned User; // plus workgroup ID X
    unsigned Granule;
    const char *Expected;
  } Cases[] = {
      // gfx6: VCC only. 16 SGPRs: s[12:13] + 2 = 16.
      {EF_AMDGPU_MACH_AMDGCN_GFX600, 0, 11, 1, "s[12:13]"},
      {EF_AMDGPU_MACH_AMDGCN_GFX600, 0, 12, 1, "vcc"}, // 13 + 2 <= 16
      {EF_AMDGPU_MACH_AMDGCN_GFX600, 0, 14, 1, "s[16:17] granule 2"}, // 15 + 2
      // gfx7 with flat scratch init: VCC and FLAT_SCRATCH.
      {EF_AMDGPU_MACH_AMDGCN_GFX701, FlatScratchInit, 9, 1, "s[10:11]"},
      {EF_AMDGPU_MACH_AMDGCN_GFX701, FlatScratchInit, 10, 1, "vcc"},
      {EF_AMDGPU_MACH_AMDGCN_GFX701, FlatScratchInit, 12, 1,
       "s[14:15] granule 2"},
      // gfx8 without XNACK: VCC only; with flat scratch init: 6.
      {EF_AMDGPU_MACH_AMDGCN_GFX803, 0, 11, 1, "s[12:13]"},
      {EF_AMDGPU_MACH_AMDGCN_GFX803, 0, 12, 1, "vcc"},
      {EF_AMDGPU_MACH_AMDGCN_GFX803, 0, 6, 0, "s[8:9] granule 1"},
      {EF_AMDGPU_MACH_AMDGCN_GFX803, FlatScratchInit, 7, 1, "s[8:9]"},
      {EF_AMDGPU_MACH_AMDGCN_GFX803, FlatScratchInit, 8, 1, "vcc"},
      {EF_AMDGPU_MACH_AMDGCN_GFX803, FlatScratchInit, 10, 1,
       "s[12:13] granule 2"},
      // gfx9, XNACK on: VCC and XNACK_MASK; off: VCC.
      {EF_AMDGPU_MACH_AMDGCN_GFX900 | EF_AMDGPU_FEATURE_XNACK_ON_V4, 0, 9, 1,
       "s[10:11]"},
      {EF_AMDGPU_MACH_AMDGCN_GFX900 | EF_AMDGPU_FEATURE_XNACK_ON_V4, 0, 10, 1,
       "vcc"},
      {EF_AMDGPU_MACH_AMDGCN_GFX900 | EF_AMDGPU_FEATURE_XNACK_ON_V4, 0, 12, 1,
       "s[14:15] granule 2"},
      {EF_AMDGPU_MACH_AMDGCN_GFX900 | EF_AMDGPU_FEATURE_XNACK_OFF_V4, 0, 10, 1,
       "s[12:13]"},
      // gfx90a with kernarg preload (user SGPRs: kernarg pointer, 8 or 10
      // preloaded dwords), XNACK unknown: counted.
      {EF_AMDGPU_MACH_AMDGCN_GFX90A, 0, 12, 2, "s[14:15]"},
      {EF_AMDGPU_MACH_AMDGCN_GFX90A, 0, 10, 1, "vcc"},
      {EF_AMDGPU_MACH_AMDGCN_GFX90A, 0, 12, 1, "s[14:15] granule 2"},
      // gfx942: VCC, XNACK_MASK, architected FLAT_SCRATCH.
      {EF_AMDGPU_MACH_AMDGCN_GFX942, 0, 7, 1, "s[8:9]"},
      {EF_AMDGPU_MACH_AMDGCN_GFX942, 0, 8, 1, "vcc"},
      {EF_AMDGPU_MACH_AMDGCN_GFX942, 0, 2, 0, "s[4:5] granule 1"},
      {EF_AMDGPU_MACH_AMDGCN_GFX950, 0, 9, 1, "vcc"},
      {EF_AMDGPU_MACH_AMDGCN_GFX950, 0, 10, 1, "s[12:13] granule 2"},
      // The largest allocation: granule 13 (112 SGPRs).
      {EF_AMDGPU_MACH_AMDGCN_GFX906, 0, 30, 13, "s[32:33]"},
  };
  for (const Case &C : Cases) {
    TargetInfo TI = target(C.Flags);
    KernelDescriptor KD = descriptor(C.User, WorkgroupIDX, C.Granule, C.Props);
    EXPECT_EQ(decide(TI, KD), C.Expected)
        << TI.targetID() << (C.Props ? " flat scratch init" : "") << ", "
        << KD.liveInSGPRs(TI) << " live-ins, " << (C.Granule + 1) * 8
        << " SGPRs";
  }
}

// gfx802/805 (SGPR init bug): the allocation is fixed (LLVM writes granule
// 11: 96 SGPRs) and never raised. A pair or VCC inside it is used; a kernel
// that fits neither way cannot be wrapped.
TEST(ScratchSGPRTest, SGPRInitBugAllocationIsFixed) {
  using namespace ELF;
  for (unsigned Mach :
       {EF_AMDGPU_MACH_AMDGCN_GFX802, EF_AMDGPU_MACH_AMDGCN_GFX805}) {
    TargetInfo TI = target(Mach);
    SCOPED_TRACE(TI.Name);
    ASSERT_TRUE(TI.HasSGPRInitBug);
    EXPECT_EQ(decide(TI, descriptor(30, WorkgroupIDX, 11)), "s[32:33]");
    // Hand-made smaller allocations, 16 SGPRs: the pair, VCC, nothing.
    EXPECT_EQ(decide(TI, descriptor(11, WorkgroupIDX, 1)), "s[12:13]");
    EXPECT_EQ(decide(TI, descriptor(12, WorkgroupIDX, 1)), "vcc");
    std::string E = decide(TI, descriptor(15, WorkgroupIDX, 1));
    EXPECT_EQ(E, "error: no free SGPR pair: the kernel has 16 live-in SGPRs; "
                 "scratch pair s[16:17] needs 20 SGPRs but " +
                     TI.Name +
                     " has a fixed SGPR allocation (SGPR init bug); VCC "
                     "would alias the kernel's live-in SGPRs and " +
                     TI.Name + " has a fixed SGPR allocation");
  }
}

// The metadata .sgpr_count that covers a pair counts the specials on gfx6-9.
TEST(ScratchSGPRTest, SGPRCountCoveringThePair) {
  using namespace ELF;
  EXPECT_EQ(sgprCountCoveringPair(target(EF_AMDGPU_MACH_AMDGCN_GFX900), 8, 4),
            14u);
  EXPECT_EQ(sgprCountCoveringPair(target(EF_AMDGPU_MACH_AMDGCN_GFX1100), 8, 0),
            10u);
}

TEST(ScratchSGPRTest, SGPRInitBugPartsCannotGrow) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX802);
  ASSERT_TRUE(TI.HasSGPRInitBug);
  KernelDescriptor KD = withGranule(11); // fixed 96
  Expected<std::optional<unsigned>> G = granuleForPair(TI, KD, 88, 6);
  ASSERT_TRUE(bool(G));
  EXPECT_FALSE(G->has_value());
  G = granuleForPair(TI, KD, 90, 6);
  ASSERT_FALSE(bool(G));
  EXPECT_NE(toString(G.takeError()).find("fixed SGPR allocation"),
            std::string::npos);
}

TEST(ScratchSGPRTest, OddPairIsRejected) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX900);
  Expected<std::optional<unsigned>> G =
      granuleForPair(TI, withGranule(1), 9, 0);
  ASSERT_FALSE(bool(G));
  EXPECT_EQ(toString(G.takeError()),
            "scratch pair s[9:10] is not even-aligned");
}

TEST(PrologueTest, ErratumPrologueIsAcceptedOnGFX1250Only) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1250);
  Expected<std::vector<uint8_t>> P = assembleErratumPrologue(TI, testMC(TI));
  ASSERT_TRUE(bool(P)) << toString(P.takeError());
  EXPECT_EQ(P->size(), 16u); // 12-byte global_prefetch_b8 + 4-byte v_nop
  EXPECT_FALSE(bool(checkPrologue(TI, testMC(TI), *P)));
  TargetInfo Old = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100);
  Expected<std::vector<uint8_t>> Q = assembleErratumPrologue(Old, testMC(Old));
  ASSERT_FALSE(bool(Q));
  EXPECT_EQ(toString(Q.takeError()),
            "prologue 'gfx1250-vmem' is only for gfx125x targets, not gfx1100");
}

TEST(PrologueTest, WritesToLiveRegistersAndBranchesAreRejected) {
  TargetInfo TI = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100);
  struct Case {
    const char *Asm;
    const char *Message;
  } Cases[] = {
      {"s_mov_b32 s0, 1", "prologue: 's_mov_b32 s0, 1' writes s0, which may "
                          "be live at kernel entry"},
      {"s_mov_b64 s[2:3], 0", "prologue: 's_mov_b64 s[2:3], 0' writes s[2:3], "
                              "which may be live at kernel entry"},
      {"s_mov_b64 exec, 0", "prologue: 's_mov_b64 exec, 0' writes exec, which "
                            "may be live at kernel entry"},
      {"s_branch 3", "prologue: 's_branch 3' changes control flow; a prologue "
                     "must fall through to the jump"},
      {"s_endpgm", "prologue: 's_endpgm' changes control flow; a prologue must "
                   "fall through to the jump"},
  };
  for (const Case &C : Cases) {
    std::vector<uint8_t> B = assemble(TI, C.Asm);
    Error E = checkPrologue(TI, testMC(TI), B);
    ASSERT_TRUE(bool(E)) << C.Asm;
    EXPECT_EQ(toString(std::move(E)), C.Message);
  }
  // SCC and VCC are undefined at entry on gfx10+: writing them is fine.
  std::vector<uint8_t> Ok =
      assemble(TI, "s_nop 0\ns_cmp_eq_u32 s0, 0\ns_mov_b64 vcc, 0\n");
  EXPECT_FALSE(bool(checkPrologue(TI, testMC(TI), Ok)));
}
