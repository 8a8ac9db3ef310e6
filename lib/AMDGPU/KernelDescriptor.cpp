//===- lib/AMDGPU/KernelDescriptor.cpp - AMDHSA kernel descriptor ---------===//
//
// Little-endian encoding of the 64-byte kernel descriptor and the bit-field
// helpers. Offsets and masks come from LLVM's AMDHSAKernelDescriptor.h; the
// per-target interpretation from TargetInfo.
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/KernelDescriptor.h"
#include "hotswap/AMDGPU/TargetInfo.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/AMDHSAKernelDescriptor.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

namespace endian = llvm::support::endian;

// Our offsets must agree with LLVM's definition of the descriptor.
static_assert(sizeof(amdhsa::kernel_descriptor_t) == kd::Size,
              "kernel descriptor size");
static_assert(kd::GroupSegmentFixedSizeOffset ==
                  amdhsa::GROUP_SEGMENT_FIXED_SIZE_OFFSET,
              "group_segment_fixed_size offset");
static_assert(kd::PrivateSegmentFixedSizeOffset ==
                  amdhsa::PRIVATE_SEGMENT_FIXED_SIZE_OFFSET,
              "private_segment_fixed_size offset");
static_assert(kd::KernargSizeOffset == amdhsa::KERNARG_SIZE_OFFSET,
              "kernarg_size offset");
static_assert(kd::Reserved0Offset == amdhsa::RESERVED0_OFFSET,
              "reserved0 offset");
static_assert(kd::KernelCodeEntryByteOffsetOffset ==
                  amdhsa::KERNEL_CODE_ENTRY_BYTE_OFFSET_OFFSET,
              "kernel_code_entry_byte_offset offset");
static_assert(kd::Reserved1Offset == amdhsa::RESERVED1_OFFSET,
              "reserved1 offset");
static_assert(kd::ComputePgmRsrc3Offset == amdhsa::COMPUTE_PGM_RSRC3_OFFSET,
              "compute_pgm_rsrc3 offset");
static_assert(kd::ComputePgmRsrc1Offset == amdhsa::COMPUTE_PGM_RSRC1_OFFSET,
              "compute_pgm_rsrc1 offset");
static_assert(kd::ComputePgmRsrc2Offset == amdhsa::COMPUTE_PGM_RSRC2_OFFSET,
              "compute_pgm_rsrc2 offset");
static_assert(kd::KernelCodePropertiesOffset ==
                  amdhsa::KERNEL_CODE_PROPERTIES_OFFSET,
              "kernel_code_properties offset");
static_assert(kd::KernargPreloadOffset == amdhsa::KERNARG_PRELOAD_OFFSET,
              "kernarg_preload offset");
static_assert(kd::Reserved3Offset == amdhsa::RESERVED3_OFFSET,
              "reserved3 offset");

// The fields tile the 64 bytes with no gaps, so a round trip is lossless.
static_assert(kd::Reserved0Offset + 4 == kd::KernelCodeEntryByteOffsetOffset &&
                  kd::Reserved1Offset + 20 == kd::ComputePgmRsrc3Offset &&
                  kd::Reserved3Offset + 4 == kd::Size,
              "reserved ranges must cover the gaps");
static_assert(sizeof(KernelDescriptor::Reserved0) == 4 &&
                  sizeof(KernelDescriptor::Reserved1) == 20 &&
                  sizeof(KernelDescriptor::Reserved3) == 4,
              "reserved field sizes");

namespace {

/// Extracts Width bits at Shift.
uint32_t getBits(uint32_t Word, unsigned Shift, unsigned Width) {
  return (Word >> Shift) & maskTrailingOnes<uint32_t>(Width);
}

/// Replaces Width bits at Shift with Value (truncated), keeping the rest.
uint32_t setBits(uint32_t Word, unsigned Shift, unsigned Width,
                 uint32_t Value) {
  uint32_t Mask = maskTrailingOnes<uint32_t>(Width) << Shift;
  return (Word & ~Mask) | ((Value << Shift) & Mask);
}

template <typename T> T readLE(ArrayRef<uint8_t> Bytes, size_t Offset) {
  return endian::read<T, llvm::endianness::little>(Bytes.data() + Offset);
}

template <typename T>
void writeLE(MutableArrayRef<uint8_t> Bytes, size_t Offset, T Value) {
  endian::write<T, llvm::endianness::little>(Bytes.data() + Offset, Value);
}

template <size_t N>
void readArray(ArrayRef<uint8_t> Bytes, size_t Offset,
               std::array<uint8_t, N> &Out) {
  std::copy_n(Bytes.begin() + Offset, N, Out.begin());
}

template <size_t N>
void writeArray(MutableArrayRef<uint8_t> Bytes, size_t Offset,
                const std::array<uint8_t, N> &In) {
  std::copy_n(In.begin(), N, Bytes.begin() + Offset);
}

} // namespace

KernelDescriptor KernelDescriptor::read(ArrayRef<uint8_t> Bytes64) {
  assert(Bytes64.size() == kd::Size && "a kernel descriptor is 64 bytes");
  KernelDescriptor KD;
  KD.GroupSegmentFixedSize =
      readLE<uint32_t>(Bytes64, kd::GroupSegmentFixedSizeOffset);
  KD.PrivateSegmentFixedSize =
      readLE<uint32_t>(Bytes64, kd::PrivateSegmentFixedSizeOffset);
  KD.KernargSize = readLE<uint32_t>(Bytes64, kd::KernargSizeOffset);
  readArray(Bytes64, kd::Reserved0Offset, KD.Reserved0);
  KD.KernelCodeEntryByteOffset =
      readLE<int64_t>(Bytes64, kd::KernelCodeEntryByteOffsetOffset);
  readArray(Bytes64, kd::Reserved1Offset, KD.Reserved1);
  KD.ComputePgmRsrc3 = readLE<uint32_t>(Bytes64, kd::ComputePgmRsrc3Offset);
  KD.ComputePgmRsrc1 = readLE<uint32_t>(Bytes64, kd::ComputePgmRsrc1Offset);
  KD.ComputePgmRsrc2 = readLE<uint32_t>(Bytes64, kd::ComputePgmRsrc2Offset);
  KD.KernelCodeProperties =
      readLE<uint16_t>(Bytes64, kd::KernelCodePropertiesOffset);
  KD.KernargPreload = readLE<uint16_t>(Bytes64, kd::KernargPreloadOffset);
  readArray(Bytes64, kd::Reserved3Offset, KD.Reserved3);
  return KD;
}

void KernelDescriptor::write(MutableArrayRef<uint8_t> Bytes64) const {
  assert(Bytes64.size() == kd::Size && "a kernel descriptor is 64 bytes");
  writeLE<uint32_t>(Bytes64, kd::GroupSegmentFixedSizeOffset,
                    GroupSegmentFixedSize);
  writeLE<uint32_t>(Bytes64, kd::PrivateSegmentFixedSizeOffset,
                    PrivateSegmentFixedSize);
  writeLE<uint32_t>(Bytes64, kd::KernargSizeOffset, KernargSize);
  writeArray(Bytes64, kd::Reserved0Offset, Reserved0);
  writeLE<int64_t>(Bytes64, kd::KernelCodeEntryByteOffsetOffset,
                   KernelCodeEntryByteOffset);
  writeArray(Bytes64, kd::Reserved1Offset, Reserved1);
  writeLE<uint32_t>(Bytes64, kd::ComputePgmRsrc3Offset, ComputePgmRsrc3);
  writeLE<uint32_t>(Bytes64, kd::ComputePgmRsrc1Offset, ComputePgmRsrc1);
  writeLE<uint32_t>(Bytes64, kd::ComputePgmRsrc2Offset, ComputePgmRsrc2);
  writeLE<uint16_t>(Bytes64, kd::KernelCodePropertiesOffset,
                    KernelCodeProperties);
  writeLE<uint16_t>(Bytes64, kd::KernargPreloadOffset, KernargPreload);
  writeArray(Bytes64, kd::Reserved3Offset, Reserved3);
}

bool KernelDescriptor::operator==(const KernelDescriptor &O) const {
  return GroupSegmentFixedSize == O.GroupSegmentFixedSize &&
         PrivateSegmentFixedSize == O.PrivateSegmentFixedSize &&
         KernargSize == O.KernargSize && Reserved0 == O.Reserved0 &&
         KernelCodeEntryByteOffset == O.KernelCodeEntryByteOffset &&
         Reserved1 == O.Reserved1 && ComputePgmRsrc3 == O.ComputePgmRsrc3 &&
         ComputePgmRsrc1 == O.ComputePgmRsrc1 &&
         ComputePgmRsrc2 == O.ComputePgmRsrc2 &&
         KernelCodeProperties == O.KernelCodeProperties &&
         KernargPreload == O.KernargPreload && Reserved3 == O.Reserved3;
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

std::optional<uint64_t> KernelDescriptor::entryAddress(uint64_t KDAddr) const {
  if (KernelCodeEntryByteOffset >= 0) {
    uint64_t Delta = static_cast<uint64_t>(KernelCodeEntryByteOffset);
    if (Delta > UINT64_MAX - KDAddr)
      return std::nullopt;
    return KDAddr + Delta;
  }
  // Magnitude of a negative int64_t, valid for INT64_MIN too.
  uint64_t Delta =
      uint64_t(0) - static_cast<uint64_t>(KernelCodeEntryByteOffset);
  if (Delta > KDAddr)
    return std::nullopt;
  return KDAddr - Delta;
}

bool KernelDescriptor::setEntryAddress(uint64_t KDAddr, uint64_t Entry) {
  if (Entry >= KDAddr) {
    uint64_t Delta = Entry - KDAddr;
    if (Delta > static_cast<uint64_t>(INT64_MAX))
      return false;
    KernelCodeEntryByteOffset = static_cast<int64_t>(Delta);
    return true;
  }
  uint64_t Delta = KDAddr - Entry;
  // -INT64_MIN == INT64_MAX + 1 is representable as a negative offset.
  if (Delta > static_cast<uint64_t>(INT64_MAX) + 1)
    return false;
  KernelCodeEntryByteOffset = Delta == static_cast<uint64_t>(INT64_MAX) + 1
                                  ? INT64_MIN
                                  : -static_cast<int64_t>(Delta);
  return true;
}

//===----------------------------------------------------------------------===//
// COMPUTE_PGM_RSRC1
//===----------------------------------------------------------------------===//

namespace {
constexpr unsigned VGPRGranuleShift =
    amdhsa::COMPUTE_PGM_RSRC1_GRANULATED_WORKITEM_VGPR_COUNT_SHIFT;
constexpr unsigned VGPRGranuleWidth =
    amdhsa::COMPUTE_PGM_RSRC1_GRANULATED_WORKITEM_VGPR_COUNT_WIDTH;
constexpr unsigned SGPRGranuleShift =
    amdhsa::COMPUTE_PGM_RSRC1_GRANULATED_WAVEFRONT_SGPR_COUNT_SHIFT;
constexpr unsigned SGPRGranuleWidth =
    amdhsa::COMPUTE_PGM_RSRC1_GRANULATED_WAVEFRONT_SGPR_COUNT_WIDTH;
} // namespace

unsigned KernelDescriptor::vgprGranule() const {
  return getBits(ComputePgmRsrc1, VGPRGranuleShift, VGPRGranuleWidth);
}

void KernelDescriptor::setVGPRGranule(unsigned Granule) {
  assert(Granule < (1u << VGPRGranuleWidth) && "VGPR granule out of range");
  ComputePgmRsrc1 =
      setBits(ComputePgmRsrc1, VGPRGranuleShift, VGPRGranuleWidth, Granule);
}

unsigned KernelDescriptor::sgprGranule() const {
  return getBits(ComputePgmRsrc1, SGPRGranuleShift, SGPRGranuleWidth);
}

void KernelDescriptor::setSGPRGranule(unsigned Granule) {
  assert(Granule < (1u << SGPRGranuleWidth) && "SGPR granule out of range");
  ComputePgmRsrc1 =
      setBits(ComputePgmRsrc1, SGPRGranuleShift, SGPRGranuleWidth, Granule);
}

std::optional<unsigned>
KernelDescriptor::allocatedSGPRs(const TargetInfo &TI) const {
  if (!TI.HasSGPRGranule)
    return std::nullopt;
  // LLVM encodes ceil(count / 8) - 1 on every generation that has the field.
  return (sgprGranule() + 1) * 8;
}

unsigned KernelDescriptor::usableSGPRs(const TargetInfo &TI) const {
  std::optional<unsigned> Allocated = allocatedSGPRs(TI);
  if (!Allocated)
    return TI.AddressableSGPRs;
  unsigned Usable =
      *Allocated > TI.SGPRGranuleExtra ? *Allocated - TI.SGPRGranuleExtra : 0;
  return std::min(Usable, TI.AddressableSGPRs);
}

unsigned KernelDescriptor::usableVGPRs(const TargetInfo &TI) const {
  // The encoding granule (AMDGPUUsage, GRANULATED_WORKITEM_VGPR_COUNT): 8
  // on the gfx90a class (VGPRs and AGPRs together) and for wave32 on
  // gfx10+, 4 otherwise. Where the hardware allocates in larger blocks the
  // wave has more; this is what the descriptor guarantees.
  bool Eight = TI.IsGFX90AClass || (TI.Gen >= Generation::GFX10 && isWave32());
  unsigned Count = (vgprGranule() + 1) * (Eight ? 8 : 4);
  // gfx90a class: AGPRs start at ACCUM_OFFSET.
  if (TI.IsGFX90AClass)
    Count = std::min(Count, accumOffset());
  return Count;
}

//===----------------------------------------------------------------------===//
// COMPUTE_PGM_RSRC2
//===----------------------------------------------------------------------===//

bool KernelDescriptor::enablesPrivateSegment() const {
  return ComputePgmRsrc2 & amdhsa::COMPUTE_PGM_RSRC2_ENABLE_PRIVATE_SEGMENT;
}

unsigned KernelDescriptor::userSGPRCount(const TargetInfo &TI) const {
  static_assert(amdhsa::COMPUTE_PGM_RSRC2_GFX6_GFX120_USER_SGPR_COUNT_SHIFT ==
                    amdhsa::COMPUTE_PGM_RSRC2_GFX125_USER_SGPR_COUNT_SHIFT,
                "USER_SGPR_COUNT starts at the same bit on every target");
  return getBits(ComputePgmRsrc2,
                 amdhsa::COMPUTE_PGM_RSRC2_GFX6_GFX120_USER_SGPR_COUNT_SHIFT,
                 TI.UserSGPRCountWidth);
}

bool KernelDescriptor::enablesWorkgroupIDX() const {
  return ComputePgmRsrc2 & amdhsa::COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_X;
}

bool KernelDescriptor::enablesWorkgroupIDY() const {
  return ComputePgmRsrc2 & amdhsa::COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Y;
}

bool KernelDescriptor::enablesWorkgroupIDZ() const {
  return ComputePgmRsrc2 & amdhsa::COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Z;
}

bool KernelDescriptor::enablesWorkgroupInfo() const {
  return ComputePgmRsrc2 & amdhsa::COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_INFO;
}

unsigned KernelDescriptor::systemSGPRCount(const TargetInfo &TI) const {
  unsigned Count =
      unsigned(enablesWorkgroupIDX()) + unsigned(enablesWorkgroupIDY()) +
      unsigned(enablesWorkgroupIDZ()) + unsigned(enablesWorkgroupInfo());
  // The scratch wave offset SGPR exists only without architected flat
  // scratch; with it, the hardware sets FLAT_SCRATCH itself.
  if (enablesPrivateSegment() && !TI.ArchitectedFlatScratch)
    ++Count;
  return Count;
}

std::optional<unsigned> KernelDescriptor::workgroupIDSGPR(const TargetInfo &TI,
                                                          unsigned Dim) const {
  const bool Enabled[] = {enablesWorkgroupIDX(), enablesWorkgroupIDY(),
                          enablesWorkgroupIDZ()};
  if (TI.ArchitectedSGPRs || Dim > 2 || !Enabled[Dim])
    return std::nullopt;
  unsigned At = userSGPRCount(TI);
  for (unsigned D = 0; D < Dim; ++D)
    At += Enabled[D];
  return At;
}

unsigned KernelDescriptor::liveInSGPRs(const TargetInfo &TI) const {
  return userSGPRCount(TI) + systemSGPRCount(TI);
}

//===----------------------------------------------------------------------===//
// COMPUTE_PGM_RSRC3
//===----------------------------------------------------------------------===//

unsigned KernelDescriptor::accumOffset() const {
  return (getBits(ComputePgmRsrc3,
                  amdhsa::COMPUTE_PGM_RSRC3_GFX90A_ACCUM_OFFSET_SHIFT,
                  amdhsa::COMPUTE_PGM_RSRC3_GFX90A_ACCUM_OFFSET_WIDTH) +
          1) *
         4;
}

void KernelDescriptor::setAccumOffset(unsigned Registers) {
  assert(Registers >= 4 && Registers <= 256 && Registers % 4 == 0 &&
         "ACCUM_OFFSET out of range");
  ComputePgmRsrc3 = setBits(
      ComputePgmRsrc3, amdhsa::COMPUTE_PGM_RSRC3_GFX90A_ACCUM_OFFSET_SHIFT,
      amdhsa::COMPUTE_PGM_RSRC3_GFX90A_ACCUM_OFFSET_WIDTH, Registers / 4 - 1);
}

unsigned KernelDescriptor::instPrefSize(const TargetInfo &TI) const {
  if (TI.InstPrefWidth == 0)
    return 0;
  return getBits(ComputePgmRsrc3, TI.InstPrefShift, TI.InstPrefWidth);
}

unsigned KernelDescriptor::maxInstPrefSize(const TargetInfo &TI) {
  return maskTrailingOnes<uint32_t>(TI.InstPrefWidth);
}

void KernelDescriptor::setInstPrefSize(const TargetInfo &TI, unsigned Value) {
  if (TI.InstPrefWidth == 0)
    return;
  ComputePgmRsrc3 = setBits(ComputePgmRsrc3, TI.InstPrefShift, TI.InstPrefWidth,
                            std::min(Value, maxInstPrefSize(TI)));
}

//===----------------------------------------------------------------------===//
// KERNEL_CODE_PROPERTIES and KERNARG_PRELOAD
//===----------------------------------------------------------------------===//

bool KernelDescriptor::enablesFlatScratchInit() const {
  return KernelCodeProperties &
         amdhsa::KERNEL_CODE_PROPERTY_ENABLE_SGPR_FLAT_SCRATCH_INIT;
}

bool KernelDescriptor::isWave32() const {
  return KernelCodeProperties &
         amdhsa::KERNEL_CODE_PROPERTY_ENABLE_WAVEFRONT_SIZE32;
}

bool KernelDescriptor::usesDynamicStack() const {
  return KernelCodeProperties & amdhsa::KERNEL_CODE_PROPERTY_USES_DYNAMIC_STACK;
}

unsigned KernelDescriptor::wavefrontSize() const {
  return isWave32() ? 32 : 64;
}

std::optional<unsigned>
KernelDescriptor::kernargSegmentPtrSGPR(const TargetInfo &TI) const {
  using namespace amdhsa;
  if (!(KernelCodeProperties &
        KERNEL_CODE_PROPERTY_ENABLE_SGPR_KERNARG_SEGMENT_PTR))
    return std::nullopt;
  unsigned First = 0;
  if (KernelCodeProperties &
      KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER)
    First += 4;
  if (KernelCodeProperties & KERNEL_CODE_PROPERTY_ENABLE_SGPR_DISPATCH_PTR)
    First += 2;
  if (KernelCodeProperties & KERNEL_CODE_PROPERTY_ENABLE_SGPR_QUEUE_PTR)
    First += 2;
  if (First + 2 > userSGPRCount(TI))
    return std::nullopt;
  return First;
}

unsigned KernelDescriptor::kernargPreloadLength() const {
  return getBits(KernargPreload, amdhsa::KERNARG_PRELOAD_SPEC_LENGTH_SHIFT,
                 amdhsa::KERNARG_PRELOAD_SPEC_LENGTH_WIDTH);
}

unsigned KernelDescriptor::kernargPreloadOffset() const {
  return getBits(KernargPreload, amdhsa::KERNARG_PRELOAD_SPEC_OFFSET_SHIFT,
                 amdhsa::KERNARG_PRELOAD_SPEC_OFFSET_WIDTH);
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

void KernelDescriptor::print(raw_ostream &OS, const TargetInfo &TI) const {
  auto Hex32 = [](uint64_t V) { return format_hex(V, 10); };
  auto Hex16 = [](uint64_t V) { return format_hex(V, 6); };
  auto IsZero = [](ArrayRef<uint8_t> Bytes) {
    return llvm::all_of(Bytes, [](uint8_t B) { return B == 0; });
  };

  OS << "group_segment_fixed_size: " << GroupSegmentFixedSize << '\n';
  OS << "private_segment_fixed_size: " << PrivateSegmentFixedSize << '\n';
  OS << "kernarg_size: " << KernargSize << '\n';
  OS << "kernel_code_entry_byte_offset: " << KernelCodeEntryByteOffset << '\n';
  OS << "compute_pgm_rsrc1: " << Hex32(ComputePgmRsrc1) << '\n';
  OS << "  vgpr_granule: " << vgprGranule() << '\n';
  OS << "  sgpr_granule: " << sgprGranule();
  if (std::optional<unsigned> Allocated = allocatedSGPRs(TI))
    OS << " (" << *Allocated << " sgprs)";
  OS << '\n';
  OS << "compute_pgm_rsrc2: " << Hex32(ComputePgmRsrc2) << '\n';
  OS << "  user_sgpr_count: " << userSGPRCount(TI) << '\n';
  OS << "  workgroup_id_xyz: " << unsigned(enablesWorkgroupIDX())
     << unsigned(enablesWorkgroupIDY()) << unsigned(enablesWorkgroupIDZ())
     << '\n';
  OS << "  workgroup_info: " << unsigned(enablesWorkgroupInfo()) << '\n';
  OS << "  private_segment: " << unsigned(enablesPrivateSegment()) << '\n';
  OS << "  live_in_sgprs: " << liveInSGPRs(TI) << '\n';
  OS << "compute_pgm_rsrc3: " << Hex32(ComputePgmRsrc3) << '\n';
  if (TI.InstPrefWidth != 0)
    OS << "  inst_pref_size: " << instPrefSize(TI) << '\n';
  OS << "kernel_code_properties: " << Hex16(KernelCodeProperties) << '\n';
  OS << "  wavefront_size: " << wavefrontSize() << '\n';
  OS << "  uses_dynamic_stack: " << unsigned(usesDynamicStack()) << '\n';
  OS << "kernarg_preload: " << Hex16(KernargPreload) << '\n';
  OS << "  length: " << kernargPreloadLength() << '\n';
  OS << "  offset: " << kernargPreloadOffset() << '\n';
  if (!IsZero(Reserved0) || !IsZero(Reserved1) || !IsZero(Reserved3))
    OS << "reserved: nonzero\n";
}
