//===- unittests/KernelDescriptorTest.cpp - KernelDescriptor tests --------===//
//
// Round trips of the 64-byte descriptor, field offsets, and the bit-field
// helpers on hand-built descriptors (values as LLVM 22 emits them; layout
// from llvm/Support/AMDHSAKernelDescriptor.h, fields from AMDGPUUsage.rst).
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/KernelDescriptor.h"
#include "hotswap/AMDGPU/TargetInfo.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include "TestTargets.h"

#include <array>
#include <cstdint>
#include <random>

using namespace llvm;
using namespace hotswap::amdgpu;

namespace {

using Bytes = std::array<uint8_t, kd::Size>;

Bytes randomBytes(std::mt19937 &Rng) {
  Bytes B;
  for (uint8_t &X : B)
    X = static_cast<uint8_t>(Rng());
  return B;
}

/// Distinct values in every byte so that an offset mistake shows.
Bytes countingBytes() {
  Bytes B;
  for (size_t I = 0; I != B.size(); ++I)
    B[I] = static_cast<uint8_t>(I + 1);
  return B;
}

} // namespace

TEST(KernelDescriptorTest, RandomRoundTripIsByteExact) {
  std::mt19937 Rng(12345);
  for (int Iter = 0; Iter != 1000; ++Iter) {
    Bytes In = randomBytes(Rng);
    KernelDescriptor KD = KernelDescriptor::read(In);
    Bytes Out;
    Out.fill(0xAA);
    KD.write(Out);
    ASSERT_EQ(In, Out) << "iteration " << Iter;
    EXPECT_EQ(KernelDescriptor::read(Out), KD);
  }
}

TEST(KernelDescriptorTest, FieldOffsetsAndEndianness) {
  Bytes In = countingBytes();
  KernelDescriptor KD = KernelDescriptor::read(In);
  EXPECT_EQ(KD.GroupSegmentFixedSize, 0x04030201u);
  EXPECT_EQ(KD.PrivateSegmentFixedSize, 0x08070605u);
  EXPECT_EQ(KD.KernargSize, 0x0c0b0a09u);
  EXPECT_EQ(KD.Reserved0, (std::array<uint8_t, 4>{13, 14, 15, 16}));
  EXPECT_EQ(KD.KernelCodeEntryByteOffset, 0x1817161514131211);
  EXPECT_EQ(KD.Reserved1[0], 25);
  EXPECT_EQ(KD.Reserved1[19], 44);
  EXPECT_EQ(KD.ComputePgmRsrc3, 0x302f2e2du);
  EXPECT_EQ(KD.ComputePgmRsrc1, 0x34333231u);
  EXPECT_EQ(KD.ComputePgmRsrc2, 0x38373635u);
  EXPECT_EQ(KD.KernelCodeProperties, 0x3a39u);
  EXPECT_EQ(KD.KernargPreload, 0x3c3bu);
  EXPECT_EQ(KD.Reserved3, (std::array<uint8_t, 4>{61, 62, 63, 64}));

  // Writing a single field touches exactly its bytes.
  KernelDescriptor Zero;
  Zero.ComputePgmRsrc2 = 0xdeadbeef;
  Bytes Out{};
  Zero.write(Out);
  for (size_t I = 0; I != kd::Size; ++I) {
    if (I >= kd::ComputePgmRsrc2Offset && I < kd::ComputePgmRsrc2Offset + 4)
      continue;
    EXPECT_EQ(Out[I], 0) << "byte " << I;
  }
  EXPECT_EQ(support::endian::read32le(&Out[kd::ComputePgmRsrc2Offset]),
            0xdeadbeefu);
}

TEST(KernelDescriptorTest, NegativeEntryOffset) {
  Bytes In{};
  support::endian::write64le(&In[kd::KernelCodeEntryByteOffsetOffset],
                             static_cast<uint64_t>(-0x100));
  KernelDescriptor KD = KernelDescriptor::read(In);
  EXPECT_EQ(KD.KernelCodeEntryByteOffset, -0x100);
  EXPECT_EQ(KD.entryAddress(0x1000), std::optional<uint64_t>(0xf00));
  EXPECT_EQ(KD.entryAddress(0xff), std::nullopt);
}

TEST(KernelDescriptorTest, EntryAddress) {
  KernelDescriptor KD;
  // Measured: KD at 0x880 with offset 0x1180 enters at 0x1a00.
  KD.KernelCodeEntryByteOffset = 0x1180;
  EXPECT_EQ(KD.entryAddress(0x880), std::optional<uint64_t>(0x1a00));
  EXPECT_EQ(KD.entryAddress(UINT64_MAX - 0x1180),
            std::optional<uint64_t>(UINT64_MAX));
  EXPECT_EQ(KD.entryAddress(UINT64_MAX - 0x117f), std::nullopt);

  KD.KernelCodeEntryByteOffset = INT64_MAX;
  EXPECT_EQ(KD.entryAddress(0), std::optional<uint64_t>(INT64_MAX));
  EXPECT_EQ(KD.entryAddress(UINT64_MAX), std::nullopt);
  KD.KernelCodeEntryByteOffset = INT64_MIN;
  EXPECT_EQ(KD.entryAddress(UINT64_MAX),
            std::optional<uint64_t>(UINT64_MAX - (uint64_t(1) << 63)));
  EXPECT_EQ(KD.entryAddress((uint64_t(1) << 63) - 1), std::nullopt);

  EXPECT_TRUE(KD.setEntryAddress(0x880, 0x1a00));
  EXPECT_EQ(KD.KernelCodeEntryByteOffset, 0x1180);
  EXPECT_TRUE(KD.setEntryAddress(0x2000, 0x1000));
  EXPECT_EQ(KD.KernelCodeEntryByteOffset, -0x1000);
  EXPECT_EQ(KD.entryAddress(0x2000), std::optional<uint64_t>(0x1000));
  EXPECT_TRUE(KD.setEntryAddress(uint64_t(1) << 63, 0));
  EXPECT_EQ(KD.KernelCodeEntryByteOffset, INT64_MIN);
  EXPECT_FALSE(KD.setEntryAddress(0, UINT64_MAX));
  EXPECT_EQ(KD.KernelCodeEntryByteOffset, INT64_MIN) << "unchanged on failure";
  EXPECT_FALSE(KD.setEntryAddress(UINT64_MAX, 0));
}

TEST(KernelDescriptorTest, SGPRGranule) {
  TargetInfo Gfx90a = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A);
  KernelDescriptor KD;
  KD.ComputePgmRsrc1 = 0xffffffffu;
  EXPECT_EQ(KD.sgprGranule(), 15u);
  EXPECT_EQ(KD.vgprGranule(), 63u);
  KD.setSGPRGranule(2);
  EXPECT_EQ(KD.ComputePgmRsrc1, 0xfffffcbfu);
  EXPECT_EQ(KD.sgprGranule(), 2u);
  EXPECT_EQ(KD.vgprGranule(), 63u);
  EXPECT_EQ(KD.allocatedSGPRs(Gfx90a), std::optional<unsigned>(24));
  EXPECT_EQ(KD.usableSGPRs(Gfx90a), 18u);
  KD.setVGPRGranule(5);
  EXPECT_EQ(KD.ComputePgmRsrc1, 0xfffffc85u);

  // Large granules are capped by the addressable SGPRs.
  KD.setSGPRGranule(15);
  EXPECT_EQ(KD.allocatedSGPRs(Gfx90a), std::optional<unsigned>(128));
  EXPECT_EQ(KD.usableSGPRs(Gfx90a), 102u);

  // gfx802 (SGPR init bug): LLVM encodes 96 SGPRs as granule 11.
  TargetInfo Gfx802 = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX802);
  KD.ComputePgmRsrc1 = 0x002c0;
  EXPECT_EQ(KD.sgprGranule(), 11u);
  EXPECT_EQ(KD.allocatedSGPRs(Gfx802), std::optional<unsigned>(96));
  EXPECT_EQ(KD.usableSGPRs(Gfx802), 90u);

  TargetInfo Gfx600 = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX600);
  KD.setSGPRGranule(0);
  EXPECT_EQ(KD.usableSGPRs(Gfx600), 6u);

  // gfx10+: no granule, everything addressable is usable.
  TargetInfo Gfx1100 = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100);
  EXPECT_EQ(KD.allocatedSGPRs(Gfx1100), std::nullopt);
  EXPECT_EQ(KD.usableSGPRs(Gfx1100), 106u);
}

TEST(KernelDescriptorTest, LiveInSGPRs) {
  // gfx90a, LLVM 22 simple kernel: private segment buffer + kernarg pointer
  // (USER_SGPR_COUNT 6), workgroup id x, private segment enabled.
  TargetInfo Gfx90a = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A);
  KernelDescriptor KD;
  KD.ComputePgmRsrc2 = (6u << 1) | (1u << 7) | 1u;
  KD.KernelCodeProperties = 0x0009;
  EXPECT_EQ(KD.userSGPRCount(Gfx90a), 6u);
  EXPECT_TRUE(KD.enablesPrivateSegment());
  EXPECT_TRUE(KD.enablesWorkgroupIDX());
  EXPECT_FALSE(KD.enablesWorkgroupIDY());
  EXPECT_EQ(KD.systemSGPRCount(Gfx90a), 2u);
  EXPECT_EQ(KD.liveInSGPRs(Gfx90a), 8u);

  // gfx942 has architected flat scratch: no scratch wave offset SGPR.
  TargetInfo Gfx942 = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX942);
  EXPECT_EQ(KD.systemSGPRCount(Gfx942), 1u);
  EXPECT_EQ(KD.liveInSGPRs(Gfx942), 7u);

  // gfx1100 pads USER_SGPR_COUNT to 15; all system SGPRs enabled.
  TargetInfo Gfx1100 = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100);
  KD.ComputePgmRsrc2 = (15u << 1) | (0xfu << 7) | 1u;
  EXPECT_EQ(KD.userSGPRCount(Gfx1100), 15u);
  EXPECT_TRUE(KD.enablesWorkgroupIDZ());
  EXPECT_TRUE(KD.enablesWorkgroupInfo());
  EXPECT_EQ(KD.liveInSGPRs(Gfx1100), 19u);

  // USER_SGPR_COUNT is 6 bits wide on gfx125x only: bit 6 is the trap
  // handler / dynamic VGPR bit elsewhere.
  TargetInfo Gfx1250 = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1250);
  KD.ComputePgmRsrc2 = 34u << 1;
  EXPECT_EQ(KD.userSGPRCount(Gfx1250), 34u);
  EXPECT_EQ(KD.userSGPRCount(Gfx1100), 2u);
  EXPECT_EQ(KD.liveInSGPRs(Gfx1250), 34u);
}

TEST(KernelDescriptorTest, KernargSegmentPtrSGPR) {
  TargetInfo Gfx90a = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A);
  KernelDescriptor KD;
  // Private segment buffer (4) and kernarg pointer: s[4:5].
  KD.ComputePgmRsrc2 = 6u << 1;
  KD.KernelCodeProperties = 0x0009;
  EXPECT_EQ(KD.kernargSegmentPtrSGPR(Gfx90a), 4u);
  // The kernarg pointer alone (gfx11 and later, architected flat scratch).
  KD.KernelCodeProperties = 0x0008;
  EXPECT_EQ(KD.kernargSegmentPtrSGPR(Gfx90a), 0u);
  // After the dispatch and queue pointers: 4 + 2 + 2.
  KD.ComputePgmRsrc2 = 10u << 1;
  KD.KernelCodeProperties = 0x000f;
  EXPECT_EQ(KD.kernargSegmentPtrSGPR(Gfx90a), 8u);
  // Only the dispatch pointer before it.
  KD.KernelCodeProperties = 0x000a;
  EXPECT_EQ(KD.kernargSegmentPtrSGPR(Gfx90a), 2u);
  // Not enabled; enabled but past the user SGPRs the descriptor counts.
  KD.KernelCodeProperties = 0x0007;
  EXPECT_EQ(KD.kernargSegmentPtrSGPR(Gfx90a), std::nullopt);
  KD.KernelCodeProperties = 0x000f;
  KD.ComputePgmRsrc2 = 9u << 1;
  EXPECT_EQ(KD.kernargSegmentPtrSGPR(Gfx90a), std::nullopt);
}

TEST(KernelDescriptorTest, WorkgroupIDSGPR) {
  TargetInfo Gfx90a = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A);
  TargetInfo Gfx1201 = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1201);
  KernelDescriptor KD;
  // 6 user SGPRs; IDs x and z enabled: s6 and s7.
  KD.ComputePgmRsrc2 = (6u << 1) | (1u << 7) | (1u << 9);
  EXPECT_EQ(KD.workgroupIDSGPR(Gfx90a, 0), 6u);
  EXPECT_EQ(KD.workgroupIDSGPR(Gfx90a, 1), std::nullopt);
  EXPECT_EQ(KD.workgroupIDSGPR(Gfx90a, 2), 7u);
  // y too: z moves to s8.
  KD.ComputePgmRsrc2 |= 1u << 8;
  EXPECT_EQ(KD.workgroupIDSGPR(Gfx90a, 1), 7u);
  EXPECT_EQ(KD.workgroupIDSGPR(Gfx90a, 2), 8u);
  EXPECT_EQ(KD.workgroupIDSGPR(Gfx90a, 3), std::nullopt);
  // gfx12: architected SGPRs, the IDs are in trap temporaries.
  EXPECT_EQ(KD.workgroupIDSGPR(Gfx1201, 0), std::nullopt);
}

TEST(KernelDescriptorTest, AccumOffset) {
  TargetInfo Gfx90a = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A);
  KernelDescriptor KD;
  KD.ComputePgmRsrc3 = 0x00010005u; // TG_SPLIT, ACCUM_OFFSET 24
  KD.setVGPRGranule(3);             // 32 registers: 24 VGPRs, 8 AGPRs
  EXPECT_EQ(KD.accumOffset(), 24u);
  EXPECT_EQ(KD.usableVGPRs(Gfx90a), 24u);
  KD.setAccumOffset(256);
  EXPECT_EQ(KD.ComputePgmRsrc3, 0x0001003fu);
  KD.setAccumOffset(4);
  EXPECT_EQ(KD.ComputePgmRsrc3, 0x00010000u);
  EXPECT_EQ(KD.accumOffset(), 4u);
  EXPECT_EQ(KD.usableVGPRs(Gfx90a), 4u);
}

TEST(KernelDescriptorTest, InstPrefSizeKeepsOtherBits) {
  TargetInfo Gfx1100 = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100);
  TargetInfo Gfx1201 = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1201);
  TargetInfo Gfx90a = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A);

  KernelDescriptor KD;
  KD.ComputePgmRsrc3 = 0xffffffffu;
  EXPECT_EQ(KD.instPrefSize(Gfx1100), 63u);
  EXPECT_EQ(KD.instPrefSize(Gfx1201), 255u);
  EXPECT_EQ(KD.instPrefSize(Gfx90a), 0u);

  KD.setInstPrefSize(Gfx1100, 2);
  EXPECT_EQ(KD.ComputePgmRsrc3, 0xfffffc2fu); // bits 4-9 = 2
  EXPECT_EQ(KD.instPrefSize(Gfx1100), 2u);

  KD.ComputePgmRsrc3 = 0xffffffffu;
  KD.setInstPrefSize(Gfx1201, 2);
  EXPECT_EQ(KD.ComputePgmRsrc3, 0xfffff02fu); // bits 4-11 = 2
  EXPECT_EQ(KD.instPrefSize(Gfx1201), 2u);

  // Clamped to the field, never spilling into neighbouring bits.
  KD.ComputePgmRsrc3 = 0x80000001u; // IMAGE_OP and bit 0
  KD.setInstPrefSize(Gfx1100, 1000);
  EXPECT_EQ(KD.instPrefSize(Gfx1100), 63u);
  EXPECT_EQ(KD.ComputePgmRsrc3, 0x800003f1u);
  EXPECT_EQ(KernelDescriptor::maxInstPrefSize(Gfx1100), 63u);
  EXPECT_EQ(KernelDescriptor::maxInstPrefSize(Gfx1201), 255u);
  EXPECT_EQ(KernelDescriptor::maxInstPrefSize(Gfx90a), 0u);

  // No field: no change (RSRC3 holds ACCUM_OFFSET on gfx90a).
  KD.ComputePgmRsrc3 = 0x1234u;
  KD.setInstPrefSize(Gfx90a, 2);
  EXPECT_EQ(KD.ComputePgmRsrc3, 0x1234u);
}

TEST(KernelDescriptorTest, CodePropertiesAndPreload) {
  KernelDescriptor KD;
  EXPECT_FALSE(KD.isWave32());
  EXPECT_EQ(KD.wavefrontSize(), 64u);
  KD.KernelCodeProperties = 1u << 10;
  EXPECT_TRUE(KD.isWave32());
  EXPECT_FALSE(KD.usesDynamicStack());
  EXPECT_EQ(KD.wavefrontSize(), 32u);
  KD.KernelCodeProperties = 1u << 11;
  EXPECT_FALSE(KD.isWave32());
  EXPECT_TRUE(KD.usesDynamicStack());

  KD.KernargPreload = (3u << 7) | 5u;
  EXPECT_EQ(KD.kernargPreloadLength(), 5u);
  EXPECT_EQ(KD.kernargPreloadOffset(), 3u);
  KD.KernargPreload = 0xffff;
  EXPECT_EQ(KD.kernargPreloadLength(), 127u);
  EXPECT_EQ(KD.kernargPreloadOffset(), 511u);
}

TEST(KernelDescriptorTest, Print) {
  TargetInfo Gfx1100 = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100);
  KernelDescriptor KD;
  KD.KernelCodeEntryByteOffset = 0x1180;
  KD.ComputePgmRsrc2 = (2u << 1) | (1u << 7);
  KD.ComputePgmRsrc3 = 2u << 4;
  KD.KernelCodeProperties = (1u << 10) | (1u << 3);
  std::string Text;
  raw_string_ostream OS(Text);
  KD.print(OS, Gfx1100);
  EXPECT_NE(Text.find("kernel_code_entry_byte_offset: 4480\n"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("  user_sgpr_count: 2\n"), std::string::npos) << Text;
  EXPECT_NE(Text.find("  live_in_sgprs: 3\n"), std::string::npos) << Text;
  EXPECT_NE(Text.find("  inst_pref_size: 2\n"), std::string::npos) << Text;
  EXPECT_NE(Text.find("  wavefront_size: 32\n"), std::string::npos) << Text;
  EXPECT_EQ(Text.find("reserved"), std::string::npos) << Text;
}
