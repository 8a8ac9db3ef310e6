//===- hotswap/AMDGPU/KernelDescriptor.h - AMDHSA KD ------------*- C++ -*-===//
//
// The 64-byte AMDHSA kernel descriptor (KD) as plain named fields, with a
// lossless little-endian reader/writer and decode helpers for the bit fields
// the passes need. Field layout: LLVM's llvm/Support/AMDHSAKernelDescriptor.h;
// per-target meaning of the bit fields: llvm/docs/AMDGPUUsage.rst ("Kernel
// Descriptor", "Initial Kernel Execution State"). Helpers that depend on the
// processor take a TargetInfo.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_KERNELDESCRIPTOR_H
#define HOTSWAP_AMDGPU_KERNELDESCRIPTOR_H

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace hotswap {
namespace amdgpu {

struct TargetInfo;

/// Byte offsets of the KD fields (checked against llvm::amdhsa's offsets).
namespace kd {
constexpr size_t Size = 64;
/// Required alignment of a KD in memory ("CP microcode requires").
constexpr size_t Alignment = 64;
constexpr size_t GroupSegmentFixedSizeOffset = 0;
constexpr size_t PrivateSegmentFixedSizeOffset = 4;
constexpr size_t KernargSizeOffset = 8;
constexpr size_t Reserved0Offset = 12;
constexpr size_t KernelCodeEntryByteOffsetOffset = 16;
constexpr size_t Reserved1Offset = 24;
constexpr size_t ComputePgmRsrc3Offset = 44;
constexpr size_t ComputePgmRsrc1Offset = 48;
constexpr size_t ComputePgmRsrc2Offset = 52;
constexpr size_t KernelCodePropertiesOffset = 56;
constexpr size_t KernargPreloadOffset = 58;
constexpr size_t Reserved3Offset = 60;
/// Kernel entry points must be aligned to this many bytes.
constexpr uint64_t EntryAlignment = 256;
} // namespace kd

/// One kernel descriptor. Every byte of the 64 is a field, so
/// read() followed by write() reproduces the input exactly, reserved bytes
/// included. Names follow llvm::amdhsa::kernel_descriptor_t in UpperCamel.
struct KernelDescriptor {
  uint32_t GroupSegmentFixedSize = 0;   ///< group_segment_fixed_size
  uint32_t PrivateSegmentFixedSize = 0; ///< private_segment_fixed_size
  uint32_t KernargSize = 0;             ///< kernarg_size
  std::array<uint8_t, 4> Reserved0 = {};
  /// kernel_code_entry_byte_offset: entry address minus the KD's address.
  int64_t KernelCodeEntryByteOffset = 0;
  std::array<uint8_t, 20> Reserved1 = {};
  uint32_t ComputePgmRsrc3 = 0;      ///< compute_pgm_rsrc3 (GFX90A+, GFX10+)
  uint32_t ComputePgmRsrc1 = 0;      ///< compute_pgm_rsrc1
  uint32_t ComputePgmRsrc2 = 0;      ///< compute_pgm_rsrc2
  uint16_t KernelCodeProperties = 0; ///< kernel_code_properties
  uint16_t KernargPreload = 0;       ///< kernarg_preload
  std::array<uint8_t, 4> Reserved3 = {};

  /// Decodes exactly kd::Size bytes (asserted); no validation.
  static KernelDescriptor read(llvm::ArrayRef<uint8_t> Bytes64);
  /// Encodes into exactly kd::Size bytes (asserted).
  void write(llvm::MutableArrayRef<uint8_t> Bytes64) const;

  bool operator==(const KernelDescriptor &Other) const;
  bool operator!=(const KernelDescriptor &Other) const {
    return !(*this == Other);
  }

  /// \name Entry point
  /// @{
  /// KDAddr + KernelCodeEntryByteOffset, or std::nullopt if that leaves the
  /// 64-bit address space.
  std::optional<uint64_t> entryAddress(uint64_t KDAddr) const;
  /// Points the KD at Entry. Returns false (and changes nothing) if
  /// Entry - KDAddr does not fit in an int64_t.
  bool setEntryAddress(uint64_t KDAddr, uint64_t Entry);
  /// @}

  /// \name COMPUTE_PGM_RSRC1
  /// @{
  /// GRANULATED_WORKITEM_VGPR_COUNT (bits 0-5), the raw encoded value.
  unsigned vgprGranule() const;
  void setVGPRGranule(unsigned Granule);
  /// GRANULATED_WAVEFRONT_SGPR_COUNT (bits 6-9), the raw encoded value.
  /// Meaningful on gfx6-9 only; LLVM writes 0 on gfx10+.
  unsigned sgprGranule() const;
  void setSGPRGranule(unsigned Granule);
  /// SGPRs the wave gets on gfx6-9, (granule + 1) * 8, including the
  /// VCC/FLAT_SCRATCH/XNACK_MASK registers at the top. 8 is LLVM's
  /// *encoding* granule; the hardware allocates in 16s on gfx8-9, so the
  /// real allocation can be larger, never smaller. std::nullopt on gfx10+
  /// (the field is reserved and 128 SGPRs are always allocated).
  std::optional<unsigned> allocatedSGPRs(const TargetInfo &TI) const;
  /// Highest SGPR number + 1 the kernel may use freely: on gfx6-9
  /// min(allocatedSGPRs - SGPRGranuleExtra, AddressableSGPRs), on gfx10+
  /// AddressableSGPRs.
  unsigned usableSGPRs(const TargetInfo &TI) const;
  /// Highest VGPR number + 1 the kernel's allocation is sure to hold
  /// (the granule times its encoding granule; on the gfx90a class not past
  /// ACCUM_OFFSET, where the AGPRs begin).
  unsigned usableVGPRs(const TargetInfo &TI) const;
  /// @}

  /// \name COMPUTE_PGM_RSRC2 and the initial SGPR layout
  /// @{
  bool enablesPrivateSegment() const;                 ///< bit 0
  unsigned userSGPRCount(const TargetInfo &TI) const; ///< bits 1.. (5 or 6)
  bool enablesWorkgroupIDX() const;                   ///< bit 7
  bool enablesWorkgroupIDY() const;                   ///< bit 8
  bool enablesWorkgroupIDZ() const;                   ///< bit 9
  bool enablesWorkgroupInfo() const;                  ///< bit 10
  /// System SGPRs CP/SPI write after the user SGPRs: workgroup IDs,
  /// workgroup info, and the scratch wave offset when the private segment is
  /// enabled and the target has no architected flat scratch. The workgroup
  /// IDs are counted even on architected-SGPR targets (conservative).
  unsigned systemSGPRCount(const TargetInfo &TI) const;
  /// The SGPR the launch puts workgroup ID \p Dim (0: x, 1: y, 2: z) in:
  /// after the user SGPRs and the IDs of the dimensions before it that are
  /// enabled. nullopt when the descriptor does not enable it, and on
  /// targets with architected SGPRs (gfx12 and later: the IDs are in
  /// TTMP9 and TTMP7 instead).
  std::optional<unsigned> workgroupIDSGPR(const TargetInfo &TI,
                                          unsigned Dim) const;
  /// SGPRs holding values at wave launch: s0 .. s(liveInSGPRs - 1).
  unsigned liveInSGPRs(const TargetInfo &TI) const;
  /// @}

  /// \name COMPUTE_PGM_RSRC3
  /// @{
  /// gfx90a class: ACCUM_OFFSET (bits 0-5), where the AGPRs begin in the
  /// unified register file, in registers (4 to 256, in 4s); the VGPR
  /// granule counts VGPRs and AGPRs together.
  unsigned accumOffset() const;
  /// Sets ACCUM_OFFSET to \p Registers (a multiple of 4 from 4 to 256),
  /// keeping every other RSRC3 bit.
  void setAccumOffset(unsigned Registers);
  /// INST_PREF_SIZE in 128-byte units; 0 if the target has no such field.
  unsigned instPrefSize(const TargetInfo &TI) const;
  /// Largest value INST_PREF_SIZE can hold on TI (0 without the field).
  static unsigned maxInstPrefSize(const TargetInfo &TI);
  /// Sets INST_PREF_SIZE, clamped to maxInstPrefSize(TI), keeping every
  /// other RSRC3 bit. No effect if the target has no such field.
  void setInstPrefSize(const TargetInfo &TI, unsigned Value);
  /// @}

  /// \name KERNEL_CODE_PROPERTIES and KERNARG_PRELOAD
  /// @{
  /// ENABLE_SGPR_FLAT_SCRATCH_INIT (bit 5): the kernel receives the values
  /// it may set FLAT_SCRATCH from (whether its code does is not recorded).
  bool enablesFlatScratchInit() const;
  bool isWave32() const;         ///< ENABLE_WAVEFRONT_SIZE32 (bit 10)
  bool usesDynamicStack() const; ///< USES_DYNAMIC_STACK (bit 11)
  /// 32 or 64: the wave size the KD selects (wave64 unless bit 10 is set).
  unsigned wavefrontSize() const;
  /// The first SGPR of the kernarg segment pointer at wave launch (an
  /// aligned pair), when ENABLE_SGPR_KERNARG_SEGMENT_PTR (bit 3) is set and
  /// the user SGPR count holds it: after the private segment buffer (4, bit
  /// 0), the dispatch pointer (2, bit 1) and the queue pointer (2, bit 2),
  /// in the order of AMDGPUUsage's initial kernel execution state.
  std::optional<unsigned> kernargSegmentPtrSGPR(const TargetInfo &TI) const;
  unsigned kernargPreloadLength() const; ///< dwords (bits 0-6)
  unsigned kernargPreloadOffset() const; ///< dwords (bits 7-15)
  /// @}

  /// Prints the fields and the decoded values, one per line.
  void print(llvm::raw_ostream &OS, const TargetInfo &TI) const;
};

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_KERNELDESCRIPTOR_H
