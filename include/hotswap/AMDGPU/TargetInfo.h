//===- hotswap/AMDGPU/TargetInfo.h - Per-target AMDGPU facts ----*- C++ -*-===//
//
// Everything the passes need to know about one AMDGPU processor, derived from
// the ELF header (e_flags, EI_OSABI, EI_ABIVERSION). Sources: LLVM 22's
// llvm/BinaryFormat/ELF.h (EF_AMDGPU_MACH values, e_flags selectors,
// ELFABIVERSION_AMDGPU_HSA_*), llvm/docs/AMDGPUUsage.rst (kernel descriptor,
// initial kernel execution state) and the AMDGPU backend (AMDGPUBaseInfo.cpp:
// addressable SGPRs and granules; AMDGPUTargetStreamer::EmitCodeEnd: the
// padding after code; AMDGPU.td: per-processor features). Each field says
// its values; unittests/TargetInfoTest.cpp checks them against LLVM itself.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_TARGETINFO_H
#define HOTSWAP_AMDGPU_TARGETINFO_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace hotswap {
namespace amdgpu {

enum class Generation { GFX6, GFX7, GFX8, GFX9, GFX10, GFX11, GFX12, GFX125 };

llvm::StringRef generationName(Generation G);

/// An e_flags XNACK or SRAMECC selector (v4+): 0 unsupported, 1 any, 2 off,
/// 3 on.
enum class FeatureSetting { Unsupported, Any, Off, On };

struct TargetInfo {
  /// EF_AMDGPU_MACH value and the processor name LLVM uses ("gfx90a",
  /// "gfx11-generic").
  unsigned Mach = 0;
  std::string Name;
  /// -mcpu for LLVM MC (the processor name; generic targets are accepted).
  std::string MCPU;
  /// MC subtarget features derived from e_flags ("+xnack", "-sramecc", ...).
  std::string Features;
  Generation Gen = Generation::GFX9;
  bool IsGeneric = false;
  /// EF_AMDGPU_GENERIC_VERSION (v6+, 0 for specific processors).
  unsigned GenericVersion = 0;
  /// Code object version (4, 5, 6) from EI_ABIVERSION.
  unsigned CodeObjectVersion = 0;
  /// The e_flags XNACK and SRAMECC selectors.
  FeatureSetting Xnack = FeatureSetting::Unsupported;
  FeatureSetting Sramecc = FeatureSetting::Unsupported;

  /// gfx90a, gfx942, gfx950 and gfx9-4-generic (FeatureGFX90AInsts).
  bool IsGFX90AClass = false;
  /// s0..s(N-1) addressable: 104 (gfx6-7), 102 (gfx8-9), 96 with the SGPR
  /// init bug (gfx802/805), 106 (gfx10+).
  unsigned AddressableSGPRs = 0;
  bool HasSGPRInitBug = false;
  /// An s_branch with offset 0x3f is mis-executed (gfx10.1).
  bool HasOffset3fBug = false;
  /// The processor supports XNACK (whether it is on is Xnack, from e_flags).
  bool HasXnack = false;
  /// GRANULATED_WAVEFRONT_SGPR_COUNT is meaningful (gfx6-9 only).
  bool HasSGPRGranule = false;
  /// SGPRs reserved at the top of the allocation for VCC/FLAT_SCRATCH/XNACK
  /// in the worst case (gfx6: 2, gfx7: 4, gfx8-9: 6; 0 on gfx10+).
  unsigned SGPRGranuleExtra = 0;

  /// `s_code_end` exists (gfx10+).
  bool HasCodeEnd = false;
  /// Padding after code that LLVM emits and the pool must end with:
  /// 192 (gfx10), 384 (gfx11+), 1024 (gfx90a class), 0 (other gfx6-9).
  unsigned PoolGuardBytes = 0;
  /// The 4-byte little-endian word used for stub padding and the guard:
  /// s_code_end (0xBF9F0000) on gfx10+, s_nop 0 (0xBF800000) before.
  uint32_t PadWord = 0;

  /// Firmware starts preload kernels at entry+256 (gfx90a class).
  bool PreloadSkipsPrologue = false;
  /// The target supports kernarg preload at all (gfx90a class, gfx125x).
  bool HasKernargPreload = false;

  /// COMPUTE_PGM_RSRC3.INST_PREF_SIZE position: bits 4-9 (gfx11), 4-11
  /// (gfx12+); width 0 when absent.
  unsigned InstPrefShift = 4;
  unsigned InstPrefWidth = 0;

  /// COMPUTE_PGM_RSRC2.USER_SGPR_COUNT width: 5, or 6 on gfx125x.
  unsigned UserSGPRCountWidth = 5;
  bool ArchitectedFlatScratch = false;
  bool ArchitectedSGPRs = false;
  /// The wave size LLVM compiles for by default: 64 before gfx10, 32 on
  /// gfx10+. A kernel's actual wave size is its KD's ENABLE_WAVEFRONT_SIZE32
  /// bit (KernelDescriptor::wavefrontSize()).
  unsigned DefaultWavefrontSize = 64;

  /// Mnemonics the assembler accepts for this target.
  std::string GetPC; // s_getpc_b64 | s_get_pc_i64
  std::string SetPC; // s_setpc_b64 | s_set_pc_i64
  std::string AddLo; // s_add_u32 | s_add_co_u32
  std::string AddHi; // s_addc_u32 | s_add_co_ci_u32

  /// "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-" style target ID.
  std::string targetID() const;
};

/// Decodes the target from ELF header fields. Unknown or reserved machine
/// values, non-HSA OS/ABI and legacy code object versions (v2/v3) are errors.
llvm::Expected<TargetInfo> getTargetInfo(uint32_t EFlags, uint8_t OSABI,
                                         uint8_t ABIVersion);

/// Every EF_AMDGPU_MACH value LLVM 22 defines (excluding reserved slots), for
/// tests.
llvm::ArrayRef<unsigned> allKnownMachs();

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_TARGETINFO_H
