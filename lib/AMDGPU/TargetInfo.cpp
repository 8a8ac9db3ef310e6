//===- lib/AMDGPU/TargetInfo.cpp - Per-target AMDGPU facts ----------------===//
//
// Decodes EF_AMDGPU_MACH, the XNACK/SRAMECC selectors and the generic version
// from e_flags and fills TargetInfo from one table row per processor plus
// per-generation rules. The sources are those of TargetInfo.h: LLVM 22's
// ELF.h for the e_flags encoding, AMDGPUUsage.rst for the descriptor and the
// wave state at entry, AMDGPUBaseInfo.cpp for SGPR limits and granules,
// AMDGPUTargetStreamer::EmitCodeEnd for the guard after code
// (unittests/TargetInfoTest.cpp pins the values per target).
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/TargetInfo.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Errc.h"

#include <iterator>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

namespace {

/// Per-processor facts that do not follow from the generation alone.
enum MachFlags : unsigned {
  MF_None = 0,
  /// A generic target (gfx9-generic, gfx11-generic, ...).
  MF_Generic = 1u << 0,
  /// FeatureGFX90AInsts: gfx90a, gfx942, gfx950, gfx9-4-generic.
  MF_GFX90A = 1u << 1,
  /// FeatureSGPRInitBug: the SGPR count is fixed at 96 (gfx802, gfx805).
  MF_SGPRInitBug = 1u << 2,
  /// Architected flat scratch before gfx11 (gfx942, gfx950, gfx9-4-generic).
  MF_ArchFlatScratch = 1u << 3,
  /// FeatureOffset3fBug: gfx1010-1013, gfx10-1-generic.
  MF_Offset3fBug = 1u << 4,
  /// The processor supports XNACK (TargetParser's FEATURE_XNACK): gfx801,
  /// gfx810, every gfx9, gfx1010-1013 and their generic targets.
  MF_Xnack = 1u << 5,
};

struct MachEntry {
  unsigned Mach;
  const char *Name;
  Generation Gen;
  unsigned Flags;
};

// Ordered by generation, then by processor; values from LLVM 22's
// llvm/BinaryFormat/ELF.h. The R600 range and the reserved AMDGCN slots
// (0x27, 0x40, 0x4b, 0x4d, 0x50, 0x56, 0x57) are deliberately absent.
constexpr MachEntry MachTable[] = {
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX600, "gfx600", Generation::GFX6, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX601, "gfx601", Generation::GFX6, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX602, "gfx602", Generation::GFX6, MF_None},

    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX700, "gfx700", Generation::GFX7, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX701, "gfx701", Generation::GFX7, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX702, "gfx702", Generation::GFX7, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX703, "gfx703", Generation::GFX7, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX704, "gfx704", Generation::GFX7, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX705, "gfx705", Generation::GFX7, MF_None},

    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX801, "gfx801", Generation::GFX8, MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX802, "gfx802", Generation::GFX8,
     MF_SGPRInitBug},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX803, "gfx803", Generation::GFX8, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX805, "gfx805", Generation::GFX8,
     MF_SGPRInitBug},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX810, "gfx810", Generation::GFX8, MF_Xnack},

    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX900, "gfx900", Generation::GFX9, MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX902, "gfx902", Generation::GFX9, MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX904, "gfx904", Generation::GFX9, MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX906, "gfx906", Generation::GFX9, MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX908, "gfx908", Generation::GFX9, MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX909, "gfx909", Generation::GFX9, MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX90C, "gfx90c", Generation::GFX9, MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A, "gfx90a", Generation::GFX9,
     MF_GFX90A | MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX942, "gfx942", Generation::GFX9,
     MF_GFX90A | MF_ArchFlatScratch | MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX950, "gfx950", Generation::GFX9,
     MF_GFX90A | MF_ArchFlatScratch | MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX9_GENERIC, "gfx9-generic", Generation::GFX9,
     MF_Generic | MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX9_4_GENERIC, "gfx9-4-generic",
     Generation::GFX9, MF_Generic | MF_GFX90A | MF_ArchFlatScratch | MF_Xnack},

    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1010, "gfx1010", Generation::GFX10,
     MF_Offset3fBug | MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1011, "gfx1011", Generation::GFX10,
     MF_Offset3fBug | MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1012, "gfx1012", Generation::GFX10,
     MF_Offset3fBug | MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1013, "gfx1013", Generation::GFX10,
     MF_Offset3fBug | MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1030, "gfx1030", Generation::GFX10, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1031, "gfx1031", Generation::GFX10, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1032, "gfx1032", Generation::GFX10, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1033, "gfx1033", Generation::GFX10, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1034, "gfx1034", Generation::GFX10, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1035, "gfx1035", Generation::GFX10, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1036, "gfx1036", Generation::GFX10, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX10_1_GENERIC, "gfx10-1-generic",
     Generation::GFX10, MF_Generic | MF_Offset3fBug | MF_Xnack},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX10_3_GENERIC, "gfx10-3-generic",
     Generation::GFX10, MF_Generic},

    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100, "gfx1100", Generation::GFX11, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1101, "gfx1101", Generation::GFX11, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1102, "gfx1102", Generation::GFX11, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1103, "gfx1103", Generation::GFX11, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1150, "gfx1150", Generation::GFX11, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1151, "gfx1151", Generation::GFX11, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1152, "gfx1152", Generation::GFX11, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1153, "gfx1153", Generation::GFX11, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX11_GENERIC, "gfx11-generic",
     Generation::GFX11, MF_Generic},

    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1200, "gfx1200", Generation::GFX12, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1201, "gfx1201", Generation::GFX12, MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX12_GENERIC, "gfx12-generic",
     Generation::GFX12, MF_Generic},

    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1250, "gfx1250", Generation::GFX125,
     MF_None},
    {ELF::EF_AMDGPU_MACH_AMDGCN_GFX1251, "gfx1251", Generation::GFX125,
     MF_None},
};

constexpr unsigned NumMachs = std::size(MachTable);

/// The machine values in table order, for allKnownMachs().
struct MachList {
  unsigned Values[NumMachs];
  constexpr MachList() : Values() {
    for (unsigned I = 0; I != NumMachs; ++I)
      Values[I] = MachTable[I].Mach;
  }
};
constexpr MachList KnownMachs;

const MachEntry *lookupMach(unsigned Mach) {
  for (const MachEntry &E : MachTable)
    if (E.Mach == Mach)
      return &E;
  return nullptr;
}

StringRef osabiName(uint8_t OSABI) {
  switch (OSABI) {
  case ELF::ELFOSABI_NONE:
    return "ELFOSABI_NONE";
  case ELF::ELFOSABI_AMDGPU_HSA:
    return "ELFOSABI_AMDGPU_HSA";
  case ELF::ELFOSABI_AMDGPU_PAL:
    return "ELFOSABI_AMDGPU_PAL";
  case ELF::ELFOSABI_AMDGPU_MESA3D:
    return "ELFOSABI_AMDGPU_MESA3D";
  default:
    return "";
  }
}

/// Maps the two-bit XNACK/SRAMECC selector (already shifted to bits 0-1).
FeatureSetting decodeSetting(unsigned Bits) {
  switch (Bits & 3) {
  case 1:
    return FeatureSetting::Any;
  case 2:
    return FeatureSetting::Off;
  case 3:
    return FeatureSetting::On;
  default:
    return FeatureSetting::Unsupported;
  }
}

/// "+name" / "-name" for an explicit setting, empty otherwise.
std::string featureString(StringRef Name, FeatureSetting S) {
  if (S == FeatureSetting::On)
    return ("+" + Name).str();
  if (S == FeatureSetting::Off)
    return ("-" + Name).str();
  return "";
}

void fillFromGeneration(TargetInfo &TI, const MachEntry &E) {
  const Generation G = E.Gen;
  const bool AtLeast10 = G >= Generation::GFX10;

  TI.IsGFX90AClass = E.Flags & MF_GFX90A;
  TI.HasSGPRInitBug = E.Flags & MF_SGPRInitBug;
  TI.HasOffset3fBug = E.Flags & MF_Offset3fBug;
  TI.HasXnack = E.Flags & MF_Xnack;

  // getAddressableNumSGPRs / FIXED_NUM_SGPRS_FOR_INIT_BUG; measured with
  // llvm-mc (highest assemblable SGPR per generation).
  if (AtLeast10)
    TI.AddressableSGPRs = 106;
  else if (G >= Generation::GFX8)
    TI.AddressableSGPRs = TI.HasSGPRInitBug ? 96 : 102;
  else
    TI.AddressableSGPRs = 104;

  TI.HasSGPRGranule = !AtLeast10;
  switch (G) {
  case Generation::GFX6:
    TI.SGPRGranuleExtra = 2; // VCC
    break;
  case Generation::GFX7:
    TI.SGPRGranuleExtra = 4; // VCC, FLAT_SCRATCH
    break;
  case Generation::GFX8:
  case Generation::GFX9:
    TI.SGPRGranuleExtra = 6; // VCC, FLAT_SCRATCH, XNACK_MASK
    break;
  default:
    TI.SGPRGranuleExtra = 0;
    break;
  }

  TI.HasCodeEnd = AtLeast10;
  if (TI.IsGFX90AClass)
    TI.PoolGuardBytes = 16 * 64; // 16 cache lines of s_nop 0
  else if (G == Generation::GFX10)
    TI.PoolGuardBytes = 3 * 64; // 3 lines of s_code_end, 64-byte lines
  else if (G >= Generation::GFX11)
    TI.PoolGuardBytes = 3 * 128; // 3 lines of s_code_end, 128-byte lines
  else
    TI.PoolGuardBytes = 0;
  TI.PadWord = TI.HasCodeEnd ? 0xBF9F0000u : 0xBF800000u;

  TI.PreloadSkipsPrologue = TI.IsGFX90AClass;
  TI.HasKernargPreload = TI.IsGFX90AClass || G == Generation::GFX125;

  TI.InstPrefShift = 4;
  if (G == Generation::GFX11)
    TI.InstPrefWidth = 6;
  else if (G >= Generation::GFX12)
    TI.InstPrefWidth = 8;
  else
    TI.InstPrefWidth = 0;

  TI.UserSGPRCountWidth = G == Generation::GFX125 ? 6 : 5;
  TI.ArchitectedFlatScratch =
      (E.Flags & MF_ArchFlatScratch) || G >= Generation::GFX11;
  TI.ArchitectedSGPRs = G >= Generation::GFX12;
  TI.DefaultWavefrontSize = AtLeast10 ? 32 : 64;

  if (G == Generation::GFX125) {
    TI.GetPC = "s_get_pc_i64";
    TI.SetPC = "s_set_pc_i64";
  } else {
    TI.GetPC = "s_getpc_b64";
    TI.SetPC = "s_setpc_b64";
  }
  if (G >= Generation::GFX12) {
    TI.AddLo = "s_add_co_u32";
    TI.AddHi = "s_add_co_ci_u32";
  } else {
    TI.AddLo = "s_add_u32";
    TI.AddHi = "s_addc_u32";
  }
}

} // namespace

StringRef hotswap::amdgpu::generationName(Generation G) {
  switch (G) {
  case Generation::GFX6:
    return "GFX6";
  case Generation::GFX7:
    return "GFX7";
  case Generation::GFX8:
    return "GFX8";
  case Generation::GFX9:
    return "GFX9";
  case Generation::GFX10:
    return "GFX10";
  case Generation::GFX11:
    return "GFX11";
  case Generation::GFX12:
    return "GFX12";
  case Generation::GFX125:
    return "GFX125";
  }
  llvm_unreachable("unknown generation");
}

std::string TargetInfo::targetID() const {
  std::string ID = "amdgcn-amd-amdhsa--" + Name;
  // Features in alphabetical order; "any" and "unsupported" add nothing.
  auto Append = [&ID](StringRef Feature, FeatureSetting S) {
    if (S == FeatureSetting::On)
      ID += (":" + Feature + "+").str();
    else if (S == FeatureSetting::Off)
      ID += (":" + Feature + "-").str();
  };
  Append("sramecc", Sramecc);
  Append("xnack", Xnack);
  return ID;
}

Expected<TargetInfo> hotswap::amdgpu::getTargetInfo(uint32_t EFlags,
                                                    uint8_t OSABI,
                                                    uint8_t ABIVersion) {
  if (OSABI != ELF::ELFOSABI_AMDGPU_HSA) {
    StringRef Name = osabiName(OSABI);
    return makeError("unsupported EI_OSABI " + Twine(unsigned(OSABI)) +
                     (Name.empty() ? Twine() : " (" + Name + ")") +
                     ", expected ELFOSABI_AMDGPU_HSA (64)");
  }

  unsigned CodeObjectVersion;
  switch (ABIVersion) {
  case ELF::ELFABIVERSION_AMDGPU_HSA_V2:
  case ELF::ELFABIVERSION_AMDGPU_HSA_V3:
    return makeError("code object v" + Twine(ABIVersion + 2) +
                     " is not supported (EI_ABIVERSION " +
                     Twine(unsigned(ABIVersion)) + "), only v4 and later");
  case ELF::ELFABIVERSION_AMDGPU_HSA_V4:
    CodeObjectVersion = 4;
    break;
  case ELF::ELFABIVERSION_AMDGPU_HSA_V5:
    CodeObjectVersion = 5;
    break;
  case ELF::ELFABIVERSION_AMDGPU_HSA_V6:
    CodeObjectVersion = 6;
    break;
  default:
    return makeError("unknown code object EI_ABIVERSION " +
                     Twine(unsigned(ABIVersion)));
  }

  const unsigned Mach = EFlags & ELF::EF_AMDGPU_MACH;
  const MachEntry *E = lookupMach(Mach);
  if (!E)
    return makeError("unknown or reserved EF_AMDGPU_MACH " + hex(Mach) +
                     " in e_flags " + hex(EFlags));

  uint32_t KnownBits = ELF::EF_AMDGPU_MACH | ELF::EF_AMDGPU_FEATURE_XNACK_V4 |
                       ELF::EF_AMDGPU_FEATURE_SRAMECC_V4;
  if (CodeObjectVersion >= 6)
    KnownBits |= ELF::EF_AMDGPU_GENERIC_VERSION;
  if (uint32_t Unknown = EFlags & ~KnownBits)
    return makeError("unknown bits " + hex(Unknown) + " in e_flags " +
                     hex(EFlags) + " for code object v" +
                     Twine(CodeObjectVersion));

  TargetInfo TI;
  TI.Mach = Mach;
  TI.Name = E->Name;
  TI.MCPU = E->Name;
  TI.Gen = E->Gen;
  TI.IsGeneric = E->Flags & MF_Generic;
  TI.CodeObjectVersion = CodeObjectVersion;

  if (CodeObjectVersion >= 6)
    TI.GenericVersion = (EFlags & ELF::EF_AMDGPU_GENERIC_VERSION) >>
                        ELF::EF_AMDGPU_GENERIC_VERSION_OFFSET;
  if (TI.IsGeneric) {
    if (CodeObjectVersion < 6)
      return makeError("generic target '" + TI.Name +
                       "' requires code object v6 or later, found v" +
                       Twine(CodeObjectVersion));
    if (TI.GenericVersion < ELF::EF_AMDGPU_GENERIC_VERSION_MIN)
      return makeError("generic target '" + TI.Name +
                       "' has no EF_AMDGPU_GENERIC_VERSION in e_flags " +
                       hex(EFlags));
  } else if (TI.GenericVersion != 0) {
    return makeError("EF_AMDGPU_GENERIC_VERSION " + Twine(TI.GenericVersion) +
                     " set for non-generic processor '" + TI.Name +
                     "' in e_flags " + hex(EFlags));
  }

  TI.Xnack = decodeSetting((EFlags & ELF::EF_AMDGPU_FEATURE_XNACK_V4) >> 8);
  TI.Sramecc =
      decodeSetting((EFlags & ELF::EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10);
  std::string XnackFeature = featureString("xnack", TI.Xnack);
  std::string SrameccFeature = featureString("sramecc", TI.Sramecc);
  TI.Features = XnackFeature;
  if (!SrameccFeature.empty())
    TI.Features += (TI.Features.empty() ? "" : ",") + SrameccFeature;

  fillFromGeneration(TI, *E);
  return TI;
}

ArrayRef<unsigned> hotswap::amdgpu::allKnownMachs() {
  return ArrayRef<unsigned>(KnownMachs.Values);
}
