//===- unittests/TargetInfoTest.cpp - AMDGPU TargetInfo tests -------------===//
//
// Checks getTargetInfo against LLVM itself (processor names from the ELF
// reader, ISA versions from TargetParser, -mcpu acceptance by the AMDGPU MC
// layer) and against facts from LLVM's ELF.h, AMDGPUUsage.rst and the
// AMDGPU backend (see include/hotswap/AMDGPU/TargetInfo.h).
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/TargetInfo.h"
#include "hotswap/AMDGPU/Occupancy.h"
#include "hotswap/AMDGPU/TargetMC.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TargetParser/TargetParser.h"
#include "llvm/TargetParser/Triple.h"
#include "gtest/gtest.h"

#include <memory>
#include <vector>

extern "C" void LLVMInitializeAMDGPUTargetInfo();
extern "C" void LLVMInitializeAMDGPUTargetMC();

using namespace llvm;
using namespace hotswap::amdgpu;

namespace {

constexpr uint8_t HSA = ELF::ELFOSABI_AMDGPU_HSA;
constexpr uint8_t V4 = ELF::ELFABIVERSION_AMDGPU_HSA_V4;
constexpr uint8_t V5 = ELF::ELFABIVERSION_AMDGPU_HSA_V5;
constexpr uint8_t V6 = ELF::ELFABIVERSION_AMDGPU_HSA_V6;

bool isGenericMach(unsigned Mach) {
  switch (Mach) {
  case ELF::EF_AMDGPU_MACH_AMDGCN_GFX9_GENERIC:
  case ELF::EF_AMDGPU_MACH_AMDGCN_GFX9_4_GENERIC:
  case ELF::EF_AMDGPU_MACH_AMDGCN_GFX10_1_GENERIC:
  case ELF::EF_AMDGPU_MACH_AMDGCN_GFX10_3_GENERIC:
  case ELF::EF_AMDGPU_MACH_AMDGCN_GFX11_GENERIC:
  case ELF::EF_AMDGPU_MACH_AMDGCN_GFX12_GENERIC:
    return true;
  default:
    return false;
  }
}

/// A valid v6 e_flags word for Mach (generic version 1 for generic targets).
uint32_t v6Flags(unsigned Mach) {
  return Mach | (isGenericMach(Mach) ? 1u << 24 : 0u);
}

TargetInfo decodeOrFail(uint32_t EFlags, uint8_t ABIVersion = V6) {
  Expected<TargetInfo> TI = getTargetInfo(EFlags, HSA, ABIVersion);
  if (!TI) {
    ADD_FAILURE() << "e_flags 0x" << std::hex << EFlags << ": "
                  << toString(TI.takeError());
    return TargetInfo();
  }
  return std::move(*TI);
}

std::string errorOf(uint32_t EFlags, uint8_t OSABI = HSA,
                    uint8_t ABIVersion = V6) {
  Expected<TargetInfo> TI = getTargetInfo(EFlags, OSABI, ABIVersion);
  if (TI)
    return "<no error>";
  return toString(TI.takeError());
}

/// The processor name LLVM's own ELF reader derives from e_flags, read from a
/// bare ELF64 header built in memory.
std::string llvmCPUName(uint32_t EFlags) {
  std::vector<uint8_t> Header(sizeof(ELF::Elf64_Ehdr), 0);
  Header[ELF::EI_MAG0] = 0x7f;
  Header[ELF::EI_MAG1] = 'E';
  Header[ELF::EI_MAG2] = 'L';
  Header[ELF::EI_MAG3] = 'F';
  Header[ELF::EI_CLASS] = ELF::ELFCLASS64;
  Header[ELF::EI_DATA] = ELF::ELFDATA2LSB;
  Header[ELF::EI_VERSION] = ELF::EV_CURRENT;
  Header[ELF::EI_OSABI] = HSA;
  Header[ELF::EI_ABIVERSION] = V6;
  using support::endian::write16le;
  using support::endian::write32le;
  write16le(&Header[offsetof(ELF::Elf64_Ehdr, e_type)], ELF::ET_DYN);
  write16le(&Header[offsetof(ELF::Elf64_Ehdr, e_machine)], ELF::EM_AMDGPU);
  write32le(&Header[offsetof(ELF::Elf64_Ehdr, e_version)], ELF::EV_CURRENT);
  write32le(&Header[offsetof(ELF::Elf64_Ehdr, e_flags)], EFlags);
  write16le(&Header[offsetof(ELF::Elf64_Ehdr, e_ehsize)],
            sizeof(ELF::Elf64_Ehdr));
  write16le(&Header[offsetof(ELF::Elf64_Ehdr, e_phentsize)],
            sizeof(ELF::Elf64_Phdr));
  write16le(&Header[offsetof(ELF::Elf64_Ehdr, e_shentsize)],
            sizeof(ELF::Elf64_Shdr));

  MemoryBufferRef Buf(
      StringRef(reinterpret_cast<const char *>(Header.data()), Header.size()),
      "header");
  Expected<std::unique_ptr<object::ObjectFile>> Obj =
      object::ObjectFile::createELFObjectFile(Buf);
  if (!Obj)
    return "<" + toString(Obj.takeError()) + ">";
  std::optional<StringRef> Name = (*Obj)->tryGetCPUName();
  return Name ? Name->str() : "<none>";
}

class AMDGPUMC : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTargetMC();
  }

  std::unique_ptr<MCSubtargetInfo> subtarget(const TargetInfo &TI) {
    Triple TT("amdgcn-amd-amdhsa");
    std::string Err;
    const Target *T = TargetRegistry::lookupTarget(TT, Err);
    if (!T) {
      ADD_FAILURE() << Err;
      return nullptr;
    }
    return std::unique_ptr<MCSubtargetInfo>(
        T->createMCSubtargetInfo(TT, TI.MCPU, TI.Features));
  }
};

} // namespace

TEST(TargetInfoTest, KnownMachTableIsCompleteAndUnique) {
  ArrayRef<unsigned> Machs = allKnownMachs();
  // LLVM 22: 53 AMDGCN processors between GFX600 and GFX9_4_GENERIC, none
  // in the R600 range, and the reserved slots left out.
  EXPECT_EQ(Machs.size(), 53u);
  DenseSet<unsigned> Seen;
  for (unsigned Mach : Machs) {
    EXPECT_TRUE(Seen.insert(Mach).second) << "duplicate 0x" << std::hex << Mach;
    EXPECT_GE(Mach, unsigned(ELF::EF_AMDGPU_MACH_AMDGCN_FIRST));
    EXPECT_LE(Mach, unsigned(ELF::EF_AMDGPU_MACH_AMDGCN_LAST));
  }
  for (unsigned Reserved : {0x27u, 0x40u, 0x4bu, 0x4du, 0x50u, 0x56u, 0x57u})
    EXPECT_FALSE(Seen.contains(Reserved)) << std::hex << Reserved;
}

TEST(TargetInfoTest, EveryKnownMachMatchesLLVM) {
  for (unsigned Mach : allKnownMachs()) {
    SCOPED_TRACE("mach 0x" + utohexstr(Mach, true));
    TargetInfo TI = decodeOrFail(v6Flags(Mach));
    EXPECT_EQ(TI.Mach, Mach);
    EXPECT_EQ(TI.Name, llvmCPUName(v6Flags(Mach)));
    EXPECT_EQ(TI.MCPU, TI.Name);
    EXPECT_EQ(TI.IsGeneric, isGenericMach(Mach));
    EXPECT_EQ(TI.GenericVersion, TI.IsGeneric ? 1u : 0u);
    EXPECT_EQ(TI.CodeObjectVersion, 6u);
    EXPECT_EQ(TI.Features, "");

    // The generation agrees with LLVM's ISA version for the processor.
    AMDGPU::GPUKind Kind = AMDGPU::parseArchAMDGCN(TI.Name);
    ASSERT_NE(Kind, AMDGPU::GK_NONE) << TI.Name;
    AMDGPU::IsaVersion ISA = AMDGPU::getIsaVersion(TI.Name);
    unsigned ExpectedGen = ISA.Major - 6;
    if (ISA.Major == 12 && ISA.Minor == 5)
      ExpectedGen = unsigned(Generation::GFX125);
    EXPECT_EQ(unsigned(TI.Gen), ExpectedGen)
        << TI.Name << " is " << generationName(TI.Gen).str();

    // gfx10+ processors can run wave32 and LLVM defaults to it.
    bool HasWave32 = AMDGPU::getArchAttrAMDGCN(Kind) & AMDGPU::FEATURE_WAVE32;
    EXPECT_EQ(TI.DefaultWavefrontSize, HasWave32 ? 32u : 64u);

    // XNACK support (XNACK_MASK at the top of a gfx8-9 allocation) as
    // TargetParser lists it.
    EXPECT_EQ(TI.HasXnack,
              bool(AMDGPU::getArchAttrAMDGCN(Kind) & AMDGPU::FEATURE_XNACK))
        << TI.Name;

    // Internal consistency of the derived facts.
    bool AtLeast10 = TI.Gen >= Generation::GFX10;
    EXPECT_EQ(TI.HasCodeEnd, AtLeast10);
    EXPECT_EQ(TI.HasSGPRGranule, !AtLeast10);
    EXPECT_EQ(TI.PadWord, AtLeast10 ? 0xBF9F0000u : 0xBF800000u);
    EXPECT_EQ(TI.ArchitectedSGPRs, TI.Gen >= Generation::GFX12);
    if (TI.Gen >= Generation::GFX11)
      EXPECT_TRUE(TI.ArchitectedFlatScratch);
    EXPECT_EQ(TI.PreloadSkipsPrologue, TI.IsGFX90AClass);
    EXPECT_EQ(TI.HasKernargPreload,
              TI.IsGFX90AClass || TI.Gen == Generation::GFX125);
    EXPECT_EQ(TI.UserSGPRCountWidth, TI.Gen == Generation::GFX125 ? 6u : 5u);
    EXPECT_FALSE(TI.GetPC.empty());
    EXPECT_FALSE(TI.AddHi.empty());
    EXPECT_EQ(TI.targetID(), "amdgcn-amd-amdhsa--" + TI.Name);
  }
}

TEST_F(AMDGPUMC, EveryMCPUIsAcceptedByLLVMMC) {
  for (unsigned Mach : allKnownMachs()) {
    TargetInfo TI = decodeOrFail(v6Flags(Mach));
    std::unique_ptr<MCSubtargetInfo> STI = subtarget(TI);
    ASSERT_TRUE(STI) << TI.Name;
    EXPECT_TRUE(STI->isCPUStringValid(TI.MCPU)) << TI.MCPU;
    EXPECT_EQ(STI->getCPU(), TI.MCPU);
    // The facts TargetInfo keeps for stubs built without MC.
    EXPECT_EQ(TI.HasOffset3fBug, STI->checkFeatures("+offset-3f-bug"))
        << TI.MCPU;
  }
}

TEST_F(AMDGPUMC, FeatureStringsAreAppliedByLLVMMC) {
  // gfx90a supports both xnack and sramecc.
  TargetInfo On = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A |
                               ELF::EF_AMDGPU_FEATURE_XNACK_ON_V4 |
                               ELF::EF_AMDGPU_FEATURE_SRAMECC_ON_V4);
  std::unique_ptr<MCSubtargetInfo> STI = subtarget(On);
  ASSERT_TRUE(STI);
  EXPECT_TRUE(STI->checkFeatures("+xnack,+sramecc"));

  TargetInfo Off = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A |
                                ELF::EF_AMDGPU_FEATURE_XNACK_OFF_V4 |
                                ELF::EF_AMDGPU_FEATURE_SRAMECC_OFF_V4);
  STI = subtarget(Off);
  ASSERT_TRUE(STI);
  EXPECT_TRUE(STI->checkFeatures("-xnack,-sramecc"));
}

TEST(TargetInfoTest, ReservedAndUnknownMachsAreErrors) {
  DenseSet<unsigned> Known;
  for (unsigned Mach : allKnownMachs())
    Known.insert(Mach);
  for (unsigned Mach = 0; Mach <= 0xff; ++Mach) {
    if (Known.contains(Mach))
      continue;
    Expected<TargetInfo> TI = getTargetInfo(Mach, HSA, V6);
    EXPECT_FALSE(TI) << "mach 0x" << std::hex << Mach;
    if (!TI)
      consumeError(TI.takeError());
  }
  EXPECT_EQ(errorOf(0x4b),
            "unknown or reserved EF_AMDGPU_MACH 0x4b in e_flags 0x4b");
  EXPECT_EQ(errorOf(0x40 | ELF::EF_AMDGPU_FEATURE_XNACK_ANY_V4, HSA, V5),
            "unknown or reserved EF_AMDGPU_MACH 0x40 in e_flags 0x140");
  EXPECT_EQ(errorOf(0x0),
            "unknown or reserved EF_AMDGPU_MACH 0x0 in e_flags 0x0");
  // R600 processors are not AMDGCN targets.
  EXPECT_EQ(errorOf(ELF::EF_AMDGPU_MACH_R600_CAYMAN),
            "unknown or reserved EF_AMDGPU_MACH 0xf in e_flags 0xf");
  EXPECT_EQ(errorOf(0x60),
            "unknown or reserved EF_AMDGPU_MACH 0x60 in e_flags 0x60");
}

TEST(TargetInfoTest, OSABIMustBeHSA) {
  EXPECT_EQ(
      errorOf(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A, ELF::ELFOSABI_AMDGPU_PAL),
      "unsupported EI_OSABI 65 (ELFOSABI_AMDGPU_PAL), expected "
      "ELFOSABI_AMDGPU_HSA (64)");
  EXPECT_EQ(
      errorOf(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A, ELF::ELFOSABI_AMDGPU_MESA3D),
      "unsupported EI_OSABI 66 (ELFOSABI_AMDGPU_MESA3D), expected "
      "ELFOSABI_AMDGPU_HSA (64)");
  EXPECT_EQ(errorOf(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A, ELF::ELFOSABI_NONE),
            "unsupported EI_OSABI 0 (ELFOSABI_NONE), expected "
            "ELFOSABI_AMDGPU_HSA (64)");
  EXPECT_EQ(errorOf(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A, 97),
            "unsupported EI_OSABI 97, expected ELFOSABI_AMDGPU_HSA (64)");
}

TEST(TargetInfoTest, CodeObjectVersions) {
  const uint32_t Flags = ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100;
  EXPECT_EQ(decodeOrFail(Flags, V4).CodeObjectVersion, 4u);
  EXPECT_EQ(decodeOrFail(Flags, V5).CodeObjectVersion, 5u);
  EXPECT_EQ(decodeOrFail(Flags, V6).CodeObjectVersion, 6u);
  EXPECT_EQ(errorOf(Flags, HSA, ELF::ELFABIVERSION_AMDGPU_HSA_V2),
            "code object v2 is not supported (EI_ABIVERSION 0), only v4 and "
            "later");
  EXPECT_EQ(errorOf(Flags, HSA, ELF::ELFABIVERSION_AMDGPU_HSA_V3),
            "code object v3 is not supported (EI_ABIVERSION 1), only v4 and "
            "later");
  EXPECT_EQ(errorOf(Flags, HSA, 5), "unknown code object EI_ABIVERSION 5");
  EXPECT_EQ(errorOf(Flags, HSA, 255), "unknown code object EI_ABIVERSION 255");
}

TEST(TargetInfoTest, GenericVersion) {
  const uint32_t Gfx11Generic = ELF::EF_AMDGPU_MACH_AMDGCN_GFX11_GENERIC;
  // What clang 22 writes for gfx11-generic: 0x1000054.
  TargetInfo TI = decodeOrFail(0x1000054);
  EXPECT_EQ(TI.Name, "gfx11-generic");
  EXPECT_TRUE(TI.IsGeneric);
  EXPECT_EQ(TI.GenericVersion, 1u);
  EXPECT_EQ(decodeOrFail(Gfx11Generic | 0xff000000u).GenericVersion, 255u);

  EXPECT_EQ(errorOf(Gfx11Generic),
            "generic target 'gfx11-generic' has no EF_AMDGPU_GENERIC_VERSION "
            "in e_flags 0x54");
  EXPECT_EQ(errorOf(Gfx11Generic, HSA, V5),
            "generic target 'gfx11-generic' requires code object v6 or later, "
            "found v5");
  EXPECT_EQ(errorOf(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100 | 0x2000000u),
            "EF_AMDGPU_GENERIC_VERSION 2 set for non-generic processor "
            "'gfx1100' in e_flags 0x2000041");
  // Bits 24-31 only carry the generic version from v6 on.
  EXPECT_EQ(errorOf(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100 | 0x1000000u, HSA, V5),
            "unknown bits 0x1000000 in e_flags 0x1000041 for code object v5");
  EXPECT_EQ(errorOf(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100 | 0x1000u),
            "unknown bits 0x1000 in e_flags 0x1041 for code object v6");
}

TEST(TargetInfoTest, XnackAndSrameccDecoding) {
  const uint32_t Gfx90a = ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A;
  struct Case {
    uint32_t Bits;
    const char *Features;
    const char *ID;
  } Cases[] = {
      {0x000, "", "amdgcn-amd-amdhsa--gfx90a"},
      {0x100, "", "amdgcn-amd-amdhsa--gfx90a"},
      {0x400, "", "amdgcn-amd-amdhsa--gfx90a"},
      {0x500, "", "amdgcn-amd-amdhsa--gfx90a"},
      {0x200, "-xnack", "amdgcn-amd-amdhsa--gfx90a:xnack-"},
      {0x300, "+xnack", "amdgcn-amd-amdhsa--gfx90a:xnack+"},
      {0x800, "-sramecc", "amdgcn-amd-amdhsa--gfx90a:sramecc-"},
      {0xc00, "+sramecc", "amdgcn-amd-amdhsa--gfx90a:sramecc+"},
      {0xe00, "-xnack,+sramecc", "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"},
      {0xb00, "+xnack,-sramecc", "amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+"},
      {0x900, "-sramecc", "amdgcn-amd-amdhsa--gfx90a:sramecc-"},
      {0x700, "+xnack", "amdgcn-amd-amdhsa--gfx90a:xnack+"},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE("bits 0x" + utohexstr(C.Bits, true));
    for (uint8_t ABI : {V4, V5, V6}) {
      TargetInfo TI = decodeOrFail(Gfx90a | C.Bits, ABI);
      EXPECT_EQ(TI.Features, C.Features);
      EXPECT_EQ(TI.targetID(), C.ID);
    }
  }

  TargetInfo TI = decodeOrFail(Gfx90a | 0x100 | 0xc00);
  EXPECT_EQ(TI.Xnack, FeatureSetting::Any);
  EXPECT_EQ(TI.Sramecc, FeatureSetting::On);
  TI = decodeOrFail(Gfx90a);
  EXPECT_EQ(TI.Xnack, FeatureSetting::Unsupported);
  EXPECT_EQ(TI.Sramecc, FeatureSetting::Unsupported);

  // Generic targets keep their name in the target ID.
  TI = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX9_4_GENERIC | 0x1000000 |
                    0x200 | 0xc00);
  EXPECT_EQ(TI.targetID(), "amdgcn-amd-amdhsa--gfx9-4-generic:sramecc+:xnack-");
}

TEST(TargetInfoTest, GFX90AClass) {
  for (const char *Name : {"gfx90a", "gfx942", "gfx950", "gfx9-4-generic"}) {
    unsigned Mach = 0;
    for (unsigned M : allKnownMachs())
      if (decodeOrFail(v6Flags(M)).Name == Name)
        Mach = M;
    ASSERT_NE(Mach, 0u) << Name;
    TargetInfo TI = decodeOrFail(v6Flags(Mach));
    EXPECT_TRUE(TI.IsGFX90AClass) << Name;
    EXPECT_EQ(TI.PoolGuardBytes, 1024u) << Name;
    EXPECT_TRUE(TI.PreloadSkipsPrologue) << Name;
    EXPECT_TRUE(TI.HasKernargPreload) << Name;
    EXPECT_FALSE(TI.HasCodeEnd) << Name;
    EXPECT_EQ(TI.PadWord, 0xBF800000u) << Name;
    EXPECT_EQ(TI.GetPC, "s_getpc_b64") << Name;
  }
  unsigned ClassCount = 0;
  for (unsigned M : allKnownMachs())
    ClassCount += decodeOrFail(v6Flags(M)).IsGFX90AClass;
  EXPECT_EQ(ClassCount, 4u);

  TargetInfo Gfx90a = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A);
  EXPECT_FALSE(Gfx90a.ArchitectedFlatScratch);
  TargetInfo Gfx942 = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX942);
  EXPECT_TRUE(Gfx942.ArchitectedFlatScratch);
  EXPECT_FALSE(Gfx942.ArchitectedSGPRs);
  EXPECT_EQ(Gfx942.InstPrefWidth, 0u);
  EXPECT_EQ(Gfx942.AddressableSGPRs, 102u);
  EXPECT_EQ(Gfx942.SGPRGranuleExtra, 6u);
  EXPECT_EQ(Gfx942.DefaultWavefrontSize, 64u);
}

TEST(TargetInfoTest, SGPRFacts) {
  TargetInfo Gfx600 = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX600);
  EXPECT_EQ(Gfx600.AddressableSGPRs, 104u);
  EXPECT_EQ(Gfx600.SGPRGranuleExtra, 2u);
  EXPECT_EQ(Gfx600.PoolGuardBytes, 0u);
  TargetInfo Gfx701 = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX701);
  EXPECT_EQ(Gfx701.AddressableSGPRs, 104u);
  EXPECT_EQ(Gfx701.SGPRGranuleExtra, 4u);

  // Only gfx802 and gfx805 have the SGPR init bug (measured: llvm-mc sets
  // GRANULATED_WAVEFRONT_SGPR_COUNT to 11 for them, not for gfx801/803/810).
  for (unsigned M : allKnownMachs()) {
    TargetInfo TI = decodeOrFail(v6Flags(M));
    bool Bug = TI.Name == "gfx802" || TI.Name == "gfx805";
    EXPECT_EQ(TI.HasSGPRInitBug, Bug) << TI.Name;
  }
  TargetInfo Gfx802 = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX802);
  EXPECT_EQ(Gfx802.AddressableSGPRs, 96u);
  EXPECT_EQ(decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX805).AddressableSGPRs,
            96u);
  TargetInfo Gfx803 = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX803);
  EXPECT_EQ(Gfx803.AddressableSGPRs, 102u);
  EXPECT_EQ(Gfx803.SGPRGranuleExtra, 6u);
  EXPECT_EQ(decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX801).AddressableSGPRs,
            102u);

  TargetInfo Gfx1030 = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1030);
  EXPECT_EQ(Gfx1030.AddressableSGPRs, 106u);
  EXPECT_FALSE(Gfx1030.HasSGPRGranule);
  EXPECT_EQ(Gfx1030.SGPRGranuleExtra, 0u);
  EXPECT_EQ(Gfx1030.PoolGuardBytes, 192u);
  EXPECT_FALSE(Gfx1030.ArchitectedFlatScratch);
}

TEST(TargetInfoTest, InstPrefField) {
  TargetInfo Gfx1100 = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100);
  EXPECT_EQ(Gfx1100.InstPrefShift, 4u);
  EXPECT_EQ(Gfx1100.InstPrefWidth, 6u);
  EXPECT_EQ(Gfx1100.PoolGuardBytes, 384u);
  TargetInfo Gfx1201 = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1201);
  EXPECT_EQ(Gfx1201.InstPrefShift, 4u);
  EXPECT_EQ(Gfx1201.InstPrefWidth, 8u);
  TargetInfo Gfx1250 = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1250);
  EXPECT_EQ(Gfx1250.InstPrefWidth, 8u);
  EXPECT_EQ(decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1036).InstPrefWidth, 0u);
  EXPECT_EQ(decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A).InstPrefWidth, 0u);
}

TEST(TargetInfoTest, Mnemonics) {
  TargetInfo Gfx900 = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX900);
  EXPECT_EQ(Gfx900.GetPC, "s_getpc_b64");
  EXPECT_EQ(Gfx900.SetPC, "s_setpc_b64");
  EXPECT_EQ(Gfx900.AddLo, "s_add_u32");
  EXPECT_EQ(Gfx900.AddHi, "s_addc_u32");

  TargetInfo Gfx1151 = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1151);
  EXPECT_EQ(Gfx1151.GetPC, "s_getpc_b64");
  EXPECT_EQ(Gfx1151.AddLo, "s_add_u32");

  TargetInfo Gfx1200 = decodeOrFail(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1200);
  EXPECT_EQ(Gfx1200.GetPC, "s_getpc_b64");
  EXPECT_EQ(Gfx1200.SetPC, "s_setpc_b64");
  EXPECT_EQ(Gfx1200.AddLo, "s_add_co_u32");
  EXPECT_EQ(Gfx1200.AddHi, "s_add_co_ci_u32");

  for (uint32_t Mach : {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1250,
                        ELF::EF_AMDGPU_MACH_AMDGCN_GFX1251}) {
    TargetInfo TI = decodeOrFail(Mach);
    EXPECT_EQ(TI.Gen, Generation::GFX125);
    EXPECT_EQ(TI.GetPC, "s_get_pc_i64");
    EXPECT_EQ(TI.SetPC, "s_set_pc_i64");
    EXPECT_EQ(TI.AddLo, "s_add_co_u32");
    EXPECT_EQ(TI.AddHi, "s_add_co_ci_u32");
    EXPECT_EQ(TI.UserSGPRCountWidth, 6u);
    EXPECT_TRUE(TI.HasKernargPreload);
    EXPECT_FALSE(TI.PreloadSkipsPrologue);
    EXPECT_TRUE(TI.ArchitectedSGPRs);
    EXPECT_EQ(TI.DefaultWavefrontSize, 32u);
  }
}

TEST(TargetInfoTest, GenerationNames) {
  EXPECT_EQ(generationName(Generation::GFX6), "GFX6");
  EXPECT_EQ(generationName(Generation::GFX10), "GFX10");
  EXPECT_EQ(generationName(Generation::GFX125), "GFX125");
}

TEST(OccupancyTest, EveryKnownMachHasAModel) {
  // The features the model reads exist on every target (an unknown name
  // would be a fatal error of LLVM's), and the models are LLVM's.
  for (unsigned Mach : allKnownMachs()) {
    TargetInfo TI = decodeOrFail(v6Flags(Mach));
    Expected<std::unique_ptr<TargetMC>> MC =
        TargetMC::create(TI.MCPU, TI.Features);
    ASSERT_TRUE(bool(MC)) << TI.Name << ": " << toString(MC.takeError());
    for (bool Wave32 : {false, true}) {
      OccupancyModel M = occupancyModel(**MC, TI, Wave32);
      EXPECT_GE(M.MaxWaves, 8u) << TI.Name;
      EXPECT_EQ(M.SGPRsLimit, TI.Gen < Generation::GFX10) << TI.Name;
      // Few registers: as many waves as a SIMD runs.
      EXPECT_EQ(wavesPerSIMD(M, 4, 16), M.MaxWaves) << TI.Name;
      EXPECT_GE(wavesPerSIMD(M, 256, 16), 1u) << TI.Name;
    }
  }
  auto Model = [](StringRef CPU, bool Wave32) {
    Expected<std::unique_ptr<TargetMC>> MC = TargetMC::create(CPU, "");
    EXPECT_TRUE(bool(MC));
    TargetInfo TI;
    TI.Gen = CPU.starts_with("gfx8") ? Generation::GFX8 : Generation::GFX9;
    return occupancyModel(**MC, TI, Wave32);
  };
  // gfx900: 256 VGPRs in 4s, 10 waves; gfx8-9's SGPR steps.
  OccupancyModel G9 = Model("gfx900", false);
  EXPECT_EQ(wavesPerSIMD(G9, 64, 16), 4u);
  EXPECT_EQ(wavesPerSIMD(G9, 24, 81), 9u);
  EXPECT_EQ(wavesPerSIMD(G9, 24, 101), 7u);
  // gfx90a: 512 in 8s, 8 waves.
  EXPECT_EQ(wavesPerSIMD(Model("gfx90a", false), 96, 16), 5u);
  // gfx1030 wave32: 1024 in 16s, 16 waves; gfx1100 wave32: 1536 in 24s.
  EXPECT_EQ(wavesPerSIMD(Model("gfx1030", true), 96, 16), 10u);
  EXPECT_EQ(wavesPerSIMD(Model("gfx1100", true), 96, 16), 16u);
  EXPECT_EQ(wavesPerSIMD(Model("gfx1100", true), 128, 16), 10u);
  // gfx1010 runs 20 waves.
  EXPECT_EQ(Model("gfx1010", true).MaxWaves, 20u);
}
