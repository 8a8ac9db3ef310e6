//===- unittests/BundleTest.cpp - Offload bundles, plain and compressed ---===//
//
// Inputs are laid out in memory by helpers written here from the format
// (clang/docs/ClangOffloadBundler.rst; summarised in the headers of
// include/hotswap/Bundle/), independently of the code under test, or
// are small bundles clang-offload-bundler 22 wrote (kept as hex, with the
// command). Outputs are checked against those helpers, against LLVM's own
// reader (llvm::object::OffloadBundleFatBin) and LLVM's CCOB compressor and
// decompressor (llvm::object::CompressedOffloadBundle).
//
//===----------------------------------------------------------------------===//

#include "hotswap/Bundle/Bundle.h"
#include "hotswap/Bundle/CompressedBundle.h"
#include "hotswap/Bundle/OffloadBundle.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/OffloadBundle.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Timer.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include "TestUtil.h"

#include <cstring>
#include <string>
#include <vector>

using namespace llvm;
using namespace hotswap::bundle;
using namespace hotswap::unittest;

namespace {

using Bytes = std::vector<uint8_t>;

//===----------------------------------------------------------------------===//
// Helpers: bytes, and bundles laid out from the format
//===----------------------------------------------------------------------===//

/// \p Size bytes that differ from one seed to the next.
Bytes payload(size_t Size, uint8_t Seed) {
  Bytes B(Size);
  for (size_t I = 0; I < Size; ++I)
    B[I] = uint8_t(Seed + I * 7 + (I >> 8));
  return B;
}

Bytes fromHexString(StringRef Hex) {
  std::string S = fromHex(Hex);
  return Bytes(S.begin(), S.end());
}

Bytes bytesOf(StringRef S) { return Bytes(S.begin(), S.end()); }

/// Offsets and sizes as messages spell them.
std::string hx(uint64_t V) { return "0x" + utohexstr(V, /*LowerCase=*/true); }

void put64(Bytes &B, uint64_t Off, uint64_t V) {
  support::endian::write64le(B.data() + Off, V);
}

/// One header-table entry, written as given (no checks).
struct RawEntry {
  uint64_t Offset;
  uint64_t Size;
  std::string ID;
};

/// Magic, count (Entries.size() unless \p Count), the table, then zeros up
/// to \p TotalSize (at least the table).
Bytes rawBundle(const std::vector<RawEntry> &Entries, uint64_t TotalSize,
                std::optional<uint64_t> Count = std::nullopt) {
  Bytes B = bytesOf("__CLANG_OFFLOAD_BUNDLE__");
  B.resize(32);
  put64(B, 24, Count.value_or(Entries.size()));
  for (const RawEntry &E : Entries) {
    size_t At = B.size();
    B.resize(At + 24);
    put64(B, At, E.Offset);
    put64(B, At + 8, E.Size);
    put64(B, At + 16, E.ID.size());
    B.insert(B.end(), E.ID.begin(), E.ID.end());
  }
  if (B.size() < TotalSize)
    B.resize(TotalSize, 0);
  return B;
}

/// The size of the header table for these ids.
uint64_t headerSize(const std::vector<std::string> &IDs) {
  uint64_t Size = 32;
  for (const std::string &ID : IDs)
    Size += 24 + ID.size();
  return Size;
}

/// What clang-offload-bundler -bundle-align=Align writes (BinaryFileHandler):
/// each offset is the end of what precedes it rounded up to Align, empty
/// entries included; the file ends with the last payload.
Bytes clangBundle(const std::vector<std::pair<std::string, Bytes>> &Entries,
                  uint64_t Align) {
  std::vector<std::string> IDs;
  for (const auto &E : Entries)
    IDs.push_back(E.first);
  uint64_t Pos = headerSize(IDs);
  std::vector<RawEntry> Raw;
  for (const auto &E : Entries) {
    Pos = (Pos + Align - 1) / Align * Align;
    Raw.push_back({Pos, E.second.size(), E.first});
    Pos += E.second.size();
  }
  Bytes B = rawBundle(Raw, Pos);
  for (size_t I = 0; I < Entries.size(); ++I)
    std::copy(Entries[I].second.begin(), Entries[I].second.end(),
              B.begin() + Raw[I].Offset);
  return B;
}

const std::string Host = "host-x86_64-unknown-linux-gnu-";
const std::string Gfx90a = "hip-amdgcn-amd-amdhsa--gfx90a";
const std::string Gfx1100 = "hip-amdgcn-amd-amdhsa--gfx1100";

/// A HIP bundle as clang 22 writes it for two GPUs: an empty host entry,
/// 4096-byte alignment.
std::vector<std::pair<std::string, Bytes>> hipEntries() {
  return {{Host, {}}, {Gfx90a, payload(0x1388, 1)}, {Gfx1100, payload(0xc, 2)}};
}

std::string parseError(const Bytes &B) {
  return errorOf(parseOffloadBundle(B));
}

/// Reads \p B with LLVM's reader: (offset, size, id) of every entry.
std::vector<std::tuple<uint64_t, uint64_t, std::string>>
llvmEntries(const Bytes &B) {
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> Out;
  MemoryBufferRef Ref(toStringRef(B), "bundle");
  auto FatBin = object::OffloadBundleFatBin::create(Ref, 0, "bundle");
  if (!FatBin) {
    ADD_FAILURE() << "LLVM's reader refused the bundle: "
                  << toString(FatBin.takeError());
    return Out;
  }
  for (const object::OffloadBundleEntry &E : (*FatBin)->getEntries())
    Out.emplace_back(E.Offset, E.Size, E.ID);
  return Out;
}

//===----------------------------------------------------------------------===//
// Input kinds
//===----------------------------------------------------------------------===//

Bytes elfHeader(uint8_t Class, uint8_t Data, uint16_t Machine) {
  Bytes B(64, 0);
  B[0] = 0x7f;
  B[1] = 'E';
  B[2] = 'L';
  B[3] = 'F';
  B[4] = Class;
  B[5] = Data;
  B[6] = 1;
  B[18] = uint8_t(Machine);
  B[19] = uint8_t(Machine >> 8);
  return B;
}

TEST(BundleInputKind, IdentifiesByMagic) {
  EXPECT_EQ(identifyInput(elfHeader(2, 1, 224)), InputKind::CodeObject);
  EXPECT_EQ(identifyInput(elfHeader(2, 1, 62)), InputKind::HostELF);
  // Other machines, ELF32, big-endian: not ours.
  EXPECT_EQ(identifyInput(elfHeader(2, 1, 183)), InputKind::Unknown);
  EXPECT_EQ(identifyInput(elfHeader(1, 1, 62)), InputKind::Unknown);
  EXPECT_EQ(identifyInput(elfHeader(2, 2, 224)), InputKind::Unknown);
  // e_machine cut off.
  Bytes Cut = elfHeader(2, 1, 224);
  Cut.resize(19);
  EXPECT_EQ(identifyInput(Cut), InputKind::Unknown);

  EXPECT_EQ(identifyInput(rawBundle({}, 32)), InputKind::OffloadBundle);
  EXPECT_EQ(identifyInput(bytesOf("__CLANG_OFFLOAD_BUNDLE__")),
            InputKind::OffloadBundle);
  EXPECT_EQ(identifyInput(bytesOf("__CLANG_OFFLOAD_BUNDLE")),
            InputKind::Unknown);
  EXPECT_EQ(identifyInput(bytesOf("CCOB")), InputKind::CompressedOffloadBundle);
  EXPECT_EQ(identifyInput(bytesOf("CCO")), InputKind::Unknown);
  EXPECT_EQ(identifyInput({}), InputKind::Unknown);
}

TEST(BundleInputKind, Names) {
  EXPECT_EQ(inputKindName(InputKind::CodeObject), "AMDGPU code object");
  EXPECT_EQ(inputKindName(InputKind::HostELF), "host ELF (x86-64)");
  EXPECT_EQ(inputKindName(InputKind::OffloadBundle), "offload bundle");
  EXPECT_EQ(inputKindName(InputKind::CompressedOffloadBundle),
            "compressed offload bundle");
  EXPECT_EQ(inputKindName(InputKind::Unknown), "unknown input");

  EXPECT_EQ(describeInput(bytesOf(StringRef("CCOB\x03\x00\x01\x00", 8))),
            "compressed offload bundle (CCOB v3, zstd)");
  EXPECT_EQ(describeInput(bytesOf(StringRef("CCOB\x02\x00\x00\x00", 8))),
            "compressed offload bundle (CCOB v2, zlib)");
  EXPECT_EQ(describeInput(bytesOf(StringRef("CCOB\x09\x00\x07\x00", 8))),
            "compressed offload bundle (CCOB v9, method 7)");
  EXPECT_EQ(describeInput(bytesOf("CCOB\x03")), "compressed offload bundle");
  EXPECT_EQ(describeInput(elfHeader(2, 1, 224)), "AMDGPU code object");
  EXPECT_EQ(describeInput(rawBundle({}, 32)), "offload bundle");
}

//===----------------------------------------------------------------------===//
// Uncompressed bundles: parsing
//===----------------------------------------------------------------------===//

// clang-offload-bundler 22.1 -type=o -bundle-align=16
//   -targets=host-x86_64-unknown-linux-gnu-,hip-amdgcn-amd-amdhsa--gfx90a,
//            hip-amdgcn-amd-amdhsa--gfx1100
//   -input=/dev/null -input=<"AMDGPU code object for gfx90a">
//   -input=<"gfx1100 object">
const char *ClangBundleHex =
    "5f5f434c414e475f4f46464c4f41445f42554e444c455f5f0300000000000000"
    "d00000000000000000000000000000001e00000000000000686f73742d783836"
    "5f36342d756e6b6e6f776e2d6c696e75782d676e752dd0000000000000001d00"
    "0000000000001d000000000000006869702d616d6467636e2d616d642d616d64"
    "6873612d2d676678393061f0000000000000000e000000000000001e00000000"
    "0000006869702d616d6467636e2d616d642d616d646873612d2d676678313130"
    "30000000000000000000000000000000414d4447505520636f6465206f626a65"
    "637420666f722067667839306100000067667831313030206f626a656374";

// The same with -compress (zstd level 3, long-distance matching, CCOB v3).
const char *ClangCompressedHex =
    "43434f4203000100cb00000000000000fe00000000000000e2a45d081610f30b"
    "28b52ffd20fe150500b4075f5f434c414e475f4f46464c4f41445f42554e444c"
    "455f5f0300d0001e00686f73742d7838365f36342d756e6b6e6f776e2d6c696e"
    "75782d676e752d1d1d69702d616d6467636e6873612d2d676678393061f0000e"
    "3131303000414d4447505520636f6465206f626a65637420666f722000000020"
    "6f626a656374100059f35886d1205f9011d6056e309072f15193bb002ae10039"
    "909959910c860664130378";

TEST(OffloadBundleParse, ReadsWhatClangWrote) {
  Bytes B = fromHexString(ClangBundleHex);
  ASSERT_EQ(B.size(), 0xfeu);
  Expected<OffloadBundle> Bundle = parseOffloadBundle(B);
  ASSERT_OK(Bundle);
  ASSERT_EQ(Bundle->Entries.size(), 3u);
  EXPECT_EQ(Bundle->HeaderSize, 0xc1u);
  EXPECT_EQ(Bundle->Size, 0xfeu);
  EXPECT_TRUE(Bundle->trailingBytes().empty());
  // The empty host entry shares the offset of the first device entry.
  EXPECT_EQ(Bundle->Entries[0].ID, Host);
  EXPECT_EQ(Bundle->Entries[0].Offset, 0xd0u);
  EXPECT_EQ(Bundle->Entries[0].Size, 0u);
  EXPECT_TRUE(Bundle->Entries[0].Payload.empty());
  EXPECT_EQ(Bundle->Entries[1].ID, Gfx90a);
  EXPECT_EQ(Bundle->Entries[1].Offset, 0xd0u);
  EXPECT_EQ(toStringRef(Bundle->Entries[1].Payload),
            "AMDGPU code object for gfx90a");
  EXPECT_EQ(Bundle->Entries[2].ID, Gfx1100);
  EXPECT_EQ(Bundle->Entries[2].Offset, 0xf0u);
  EXPECT_EQ(toStringRef(Bundle->Entries[2].Payload), "gfx1100 object");
  EXPECT_EQ(Bundle->payloadAlignment(), 16u);
}

TEST(OffloadBundleParse, HipLayout) {
  Bytes B = clangBundle(hipEntries(), 4096);
  Expected<OffloadBundle> Bundle = parseOffloadBundle(B);
  ASSERT_OK(Bundle);
  ASSERT_EQ(Bundle->Entries.size(), 3u);
  // Offsets and sizes as clang-offload-bundler 22 -bundle-align=4096 wrote
  // them for payloads of these sizes.
  EXPECT_EQ(Bundle->HeaderSize, 0xc1u);
  EXPECT_EQ(Bundle->Entries[0].Offset, 0x1000u);
  EXPECT_EQ(Bundle->Entries[1].Offset, 0x1000u);
  EXPECT_EQ(Bundle->Entries[1].Size, 0x1388u);
  EXPECT_EQ(Bundle->Entries[2].Offset, 0x3000u);
  EXPECT_EQ(Bundle->Size, 0x300cu);
  EXPECT_EQ(Bundle->Size, B.size());
  EXPECT_EQ(Bundle->payloadAlignment(), 4096u);
  EXPECT_EQ(Bundle->Entries[2].Payload, ArrayRef<uint8_t>(payload(0xc, 2)));
}

TEST(OffloadBundleParse, PayloadAlignmentFromOffsets) {
  auto AlignOf = [](const Bytes &B) -> uint64_t {
    Expected<OffloadBundle> Bundle = parseOffloadBundle(B);
    if (!Bundle) {
      ADD_FAILURE() << toString(Bundle.takeError());
      return 0;
    }
    return Bundle->payloadAlignment();
  };
  // Packed right after a header ending at 0xc1: alignment 1.
  Bytes Packed = clangBundle(hipEntries(), 1);
  EXPECT_EQ(read64(Packed, 32), 0xc1u);
  EXPECT_EQ(AlignOf(Packed), 1u);
  EXPECT_EQ(AlignOf(clangBundle(hipEntries(), 64)), 64u);
  // A lone device entry at 0x2000 keeps 0x2000: only offsets are known.
  EXPECT_EQ(AlignOf(rawBundle({{0x2000, 0x10, Gfx90a}}, 0x2010)), 0x2000u);
  // An empty entry at an odd offset does not lower it ...
  EXPECT_EQ(
      AlignOf(rawBundle({{0x1001, 0, Host}, {0x1000, 0x10, Gfx90a}}, 0x1010)),
      0x1000u);
  // ... unless no entry has a payload.
  EXPECT_EQ(
      AlignOf(rawBundle({{0x1001, 0, Host}, {0x1000, 0, Gfx90a}}, 0x1010)), 1u);
  EXPECT_EQ(AlignOf(rawBundle({}, 32)), 1u);
}

TEST(OffloadBundleParse, TrailingBytesAreReported) {
  Bytes B = clangBundle(hipEntries(), 4096);
  const uint64_t End = B.size();
  B.push_back(0);
  B.push_back(0x5a);
  Expected<OffloadBundle> Bundle = parseOffloadBundle(B);
  ASSERT_OK(Bundle);
  EXPECT_EQ(Bundle->Size, End);
  EXPECT_EQ(Bundle->trailingBytes(), ArrayRef<uint8_t>({0, 0x5a}));
}

TEST(OffloadBundleParse, EmptyEntriesNeedOnlyAnOffsetInside) {
  // Host entry at the very end, and one inside the header table: no bytes,
  // nothing to overlap.
  Bytes B = rawBundle(
      {{0x1010, 0, Host}, {0x1000, 0x10, Gfx90a}, {0x40, 0, "openmp-x86_64"}},
      0x1010);
  Expected<OffloadBundle> Bundle = parseOffloadBundle(B);
  ASSERT_OK(Bundle);
  EXPECT_EQ(Bundle->Size, 0x1010u);
}

TEST(OffloadBundleParse, TruncatedMagicCountAndTable) {
  EXPECT_EQ(parseError(bytesOf("__CLANG_OFF")),
            "offload bundle truncated in its magic: 0xb of 0x18 bytes");
  EXPECT_EQ(parseError({}),
            "offload bundle truncated in its magic: 0x0 of 0x18 bytes");
  EXPECT_EQ(parseError(bytesOf("__CLANG_OFFLOAD_BUNDLE_!........")),
            "not an offload bundle: it does not start with "
            "'__CLANG_OFFLOAD_BUNDLE__'");
  EXPECT_EQ(parseError(bytesOf("CCOB")),
            "not an offload bundle: it does not start with "
            "'__CLANG_OFFLOAD_BUNDLE__'");

  Bytes Count = rawBundle({}, 32);
  Count.resize(0x1c);
  EXPECT_EQ(parseError(Count), "offload bundle truncated in its entry count "
                               "at offset 0x18 (size 0x1c)");

  // Entry 0 (fields at 0x20, 40-byte id at 0x38) ends at 0x60; a count of 2
  // fits in 0x64 bytes, but entry 1's fields do not.
  const std::string Long(40, 'x');
  Bytes Fields = rawBundle({{0x60, 0, Long}}, 0, /*Count=*/2);
  ASSERT_EQ(Fields.size(), 0x60u);
  Fields.resize(0x64, 0);
  EXPECT_EQ(parseError(Fields), "entry 1: fields at offset 0x60 extend past "
                                "end of bundle (size 0x64)");

  // An id length past the end, and one that would wrap around.
  Bytes Id = rawBundle({{0x1000, 0, "0123456789"}}, 0);
  ASSERT_EQ(Id.size(), 0x42u);
  put64(Id, 0x30, 0x32);
  EXPECT_EQ(parseError(Id), "entry 0: id of 0x32 bytes at offset 0x38 "
                            "extends past end of bundle (size 0x42)");
  put64(Id, 0x30, UINT64_MAX);
  EXPECT_EQ(parseError(Id), "entry 0: id of 0xffffffffffffffff bytes at "
                            "offset 0x38 extends past end of bundle (size "
                            "0x42)");
}

TEST(OffloadBundleParse, AbsurdEntryCount) {
  // 0xe0 bytes after the prologue hold 9 entries of 0x18 bytes at most.
  EXPECT_EQ(parseError(rawBundle({}, 0x100, uint64_t(1) << 63)),
            "entry count 0x8000000000000000 is more than the 0x9 entries "
            "that fit in the bundle (size 0x100, 0x18 bytes at least per "
            "entry)");
  EXPECT_EQ(parseError(rawBundle({}, 0x100, UINT64_MAX)),
            "entry count 0xffffffffffffffff is more than the 0x9 entries "
            "that fit in the bundle (size 0x100, 0x18 bytes at least per "
            "entry)");
  EXPECT_EQ(parseError(rawBundle({}, 0x20, 1)),
            "entry count 0x1 is more than the 0x0 entries that fit in the "
            "bundle (size 0x20, 0x18 bytes at least per entry)");
  // Nine entries with empty... ids are refused, but the count passes.
  EXPECT_EQ(parseError(rawBundle({}, 0x100, 9)), "entry 0: empty id");
}

TEST(OffloadBundleParse, PayloadsPastTheEnd) {
  EXPECT_EQ(parseError(rawBundle({{0x1000, 0x20, Gfx90a}}, 0x1010)),
            "entry 0 ('hip-amdgcn-amd-amdhsa--gfx90a'): payload at offset "
            "0x1000 of size 0x20 extends past end of bundle (size 0x1010)");
  // offset + size wraps around 64 bits.
  EXPECT_EQ(parseError(rawBundle({{UINT64_MAX - 0xf, 0x20, Gfx90a}}, 0x1000)),
            "entry 0 ('hip-amdgcn-amd-amdhsa--gfx90a'): payload at offset "
            "0xfffffffffffffff0 of size 0x20 extends past end of bundle "
            "(size 0x1000)");
  EXPECT_EQ(parseError(rawBundle({{0x2000, 0, Host}}, 0x1000)),
            "entry 0 ('host-x86_64-unknown-linux-gnu-'): offset 0x2000 is "
            "past end of bundle (size 0x1000)");
  // Ending exactly at the end is fine.
  EXPECT_EQ(parseError(rawBundle({{0x1000, 0x10, Gfx90a}}, 0x1010)),
            "<success>");
}

TEST(OffloadBundleParse, ZeroOffsets) {
  EXPECT_EQ(
      parseError(rawBundle({{0x1000, 0, Host}, {0, 0x10, Gfx90a}}, 0x1010)),
      "entry 1 ('hip-amdgcn-amd-amdhsa--gfx90a'): offset is 0 "
      "(clang's reader stops at such an entry and drops the ones "
      "after it)");
  EXPECT_EQ(
      parseError(rawBundle({{0, 0, Host}, {0x1000, 0x10, Gfx90a}}, 0x1010)),
      "entry 0 ('host-x86_64-unknown-linux-gnu-'): offset is 0 "
      "(clang's reader stops at such an entry and drops the ones "
      "after it)");
}

TEST(OffloadBundleParse, PayloadInsideTheHeader) {
  // Header: 0x20 + 0x18 + 30 + 0x18 + 29 = 0x8b.
  EXPECT_EQ(
      parseError(rawBundle({{0x1000, 0, Host}, {0x40, 0x10, Gfx90a}}, 0x1000)),
      "entry 1 ('hip-amdgcn-amd-amdhsa--gfx90a'): payload at offset "
      "0x40 lies inside the header table, which ends at 0x8b");
  EXPECT_EQ(
      parseError(rawBundle({{0x1000, 0, Host}, {0x8a, 0x10, Gfx90a}}, 0x1000)),
      "entry 1 ('hip-amdgcn-amd-amdhsa--gfx90a'): payload at offset "
      "0x8a lies inside the header table, which ends at 0x8b");
  EXPECT_EQ(
      parseError(rawBundle({{0x1000, 0, Host}, {0x8b, 0x10, Gfx90a}}, 0x1000)),
      "<success>");
}

TEST(OffloadBundleParse, OverlappingPayloads) {
  EXPECT_EQ(parseError(rawBundle(
                {{0x1000, 0x100, Gfx90a}, {0x10ff, 0x10, Gfx1100}}, 0x2000)),
            "entry 1 ('hip-amdgcn-amd-amdhsa--gfx1100'): payload [0x10ff, "
            "0x110f) overlaps entry 0 ('hip-amdgcn-amd-amdhsa--gfx90a') "
            "payload [0x1000, 0x1100)");
  // Named in file order, whatever the table order.
  EXPECT_EQ(parseError(rawBundle(
                {{0x1100, 0x10, Gfx1100}, {0x1000, 0x101, Gfx90a}}, 0x2000)),
            "entry 0 ('hip-amdgcn-amd-amdhsa--gfx1100'): payload [0x1100, "
            "0x1110) overlaps entry 1 ('hip-amdgcn-amd-amdhsa--gfx90a') "
            "payload [0x1000, 0x1101)");
  // Contained, and at the same offset.
  EXPECT_EQ(
      parseError(rawBundle({{0x1000, 0x800, Gfx90a},
                            {0x1800, 0x10, "hip-amdgcn-amd-amdhsa--gfx942"},
                            {0x1100, 0x10, Gfx1100}},
                           0x2000)),
      "entry 2 ('hip-amdgcn-amd-amdhsa--gfx1100'): payload [0x1100, "
      "0x1110) overlaps entry 0 ('hip-amdgcn-amd-amdhsa--gfx90a') "
      "payload [0x1000, 0x1800)");
  EXPECT_EQ(parseError(rawBundle(
                {{0x1000, 0x10, Gfx90a}, {0x1000, 0x10, Gfx1100}}, 0x2000)),
            "entry 1 ('hip-amdgcn-amd-amdhsa--gfx1100'): payload [0x1000, "
            "0x1010) overlaps entry 0 ('hip-amdgcn-amd-amdhsa--gfx90a') "
            "payload [0x1000, 0x1010)");
  // Back to back is fine, and so is an empty entry in the middle of one.
  EXPECT_EQ(
      parseError(rawBundle(
          {{0x1000, 0x100, Gfx90a}, {0x1080, 0, Host}, {0x1100, 0x10, Gfx1100}},
          0x2000)),
      "<success>");
}

TEST(OffloadBundleParse, Ids) {
  EXPECT_EQ(parseError(rawBundle(
                {{0x1000, 0x10, Gfx90a}, {0x1010, 0x10, Gfx90a}}, 0x1020)),
            "entry 1 ('hip-amdgcn-amd-amdhsa--gfx90a'): same id as entry 0");
  EXPECT_EQ(parseError(rawBundle({{0x1000, 0x10, ""}}, 0x1010)),
            "entry 0: empty id");
  // Ids are kept byte for byte, whatever they hold.
  const std::string Odd("hip-\x01\xff\n", 7);
  Bytes B = rawBundle({{0x1000, 0x10, Odd}}, 0x1010);
  Expected<OffloadBundle> Bundle = parseOffloadBundle(B);
  ASSERT_OK(Bundle);
  EXPECT_EQ(Bundle->Entries[0].ID, Odd);
}

TEST(OffloadBundleParse, EntryNames) {
  EXPECT_EQ(describeEntry(1, Gfx90a),
            "entry 1 ('hip-amdgcn-amd-amdhsa--gfx90a')");
  EXPECT_EQ(describeEntry(3, StringRef("a\x01\n", 3)), "entry 3 ('a\\01\\0A')");
  EXPECT_EQ(describeEntry(0, std::string(81, 'y')),
            "entry 0 ('" + std::string(80, 'y') + "...')");
}

//===----------------------------------------------------------------------===//
// Uncompressed bundles: writing
//===----------------------------------------------------------------------===//

Bytes rewrite(const Bytes &In,
              std::vector<std::optional<ArrayRef<uint8_t>>> Replacements) {
  Expected<OffloadBundle> Bundle = parseOffloadBundle(In);
  if (!Bundle) {
    ADD_FAILURE() << toString(Bundle.takeError());
    return {};
  }
  Expected<Bytes> Out = rewriteOffloadBundle(*Bundle, Replacements);
  if (!Out) {
    ADD_FAILURE() << toString(Out.takeError());
    return {};
  }
  return *Out;
}

std::string
rewriteError(const Bytes &In,
             std::vector<std::optional<ArrayRef<uint8_t>>> Replacements) {
  Expected<OffloadBundle> Bundle = parseOffloadBundle(In);
  if (!Bundle)
    return "parse: " + toString(Bundle.takeError());
  return errorOf(rewriteOffloadBundle(*Bundle, Replacements));
}

/// \p B with every entry's offset and size fields zeroed: what must not
/// change when payloads are replaced.
Bytes headerWithoutOffsets(const Bytes &B, uint64_t HeaderSize) {
  Bytes H(B.begin(), B.begin() + HeaderSize);
  uint64_t Pos = 32;
  for (uint64_t I = 0, N = read64(B, 24); I < N; ++I) {
    put64(H, Pos, 0);
    put64(H, Pos + 8, 0);
    Pos += 24 + read64(B, Pos + 16);
  }
  return H;
}

TEST(OffloadBundleWrite, BuildsWhatClangBuilds) {
  Bytes Gfx90aCode = bytesOf("AMDGPU code object for gfx90a");
  Bytes Gfx1100Code = bytesOf("gfx1100 object");
  Expected<Bytes> Out = buildOffloadBundle(
      {{Host, {}}, {Gfx90a, Gfx90aCode}, {Gfx1100, Gfx1100Code}}, 16);
  ASSERT_OK(Out);
  EXPECT_EQ(*Out, fromHexString(ClangBundleHex));

  std::vector<std::pair<std::string, Bytes>> Entries = hipEntries();
  std::vector<OffloadBundleInput> Inputs;
  for (const auto &E : Entries)
    Inputs.push_back({E.first, E.second});
  for (uint64_t Align : {1, 8, 4096, 8192}) {
    Expected<Bytes> Aligned = buildOffloadBundle(Inputs, Align);
    ASSERT_OK(Aligned);
    EXPECT_EQ(*Aligned, clangBundle(Entries, Align)) << "align " << Align;
  }
}

TEST(OffloadBundleWrite, BuildRefusals) {
  Bytes P = payload(4, 0);
  EXPECT_EQ(errorOf(buildOffloadBundle({{Gfx90a, P}}, 0)),
            "payload alignment 0x0 is not a power of two");
  EXPECT_EQ(errorOf(buildOffloadBundle({{Gfx90a, P}}, 24)),
            "payload alignment 0x18 is not a power of two");
  EXPECT_EQ(errorOf(buildOffloadBundle({{Gfx90a, P}, {Gfx90a, P}}, 4096)),
            "entry 1 ('hip-amdgcn-amd-amdhsa--gfx90a'): id repeated");
  EXPECT_EQ(errorOf(buildOffloadBundle({{"", P}}, 4096)), "entry 0: empty id");
  // A header of exactly 0x1000 bytes fits: 0x20 + 2 * (0x18 + 2008).
  std::string A(2008, 'a'), B(2008, 'b');
  Expected<Bytes> Fits = buildOffloadBundle({{A, P}, {B, P}}, 4096);
  ASSERT_OK(Fits);
  EXPECT_EQ(read64(*Fits, 32), 0x1000u);
  std::string C(2009, 'c');
  EXPECT_EQ(errorOf(buildOffloadBundle({{A, P}, {C, P}}, 4096)),
            "offload bundle header of 0x1001 bytes does not fit in the first "
            "0x1000 bytes, all that HIP reads to find the entries");
}

TEST(OffloadBundleWrite, NothingReplacedIsByteIdentical) {
  Bytes In = clangBundle(hipEntries(), 4096);
  In.push_back(0x5a); // trailing bytes are kept too
  Expected<OffloadBundle> Bundle = parseOffloadBundle(In);
  ASSERT_OK(Bundle);
  // The same bytes at another address are no change either.
  Bytes Same(Bundle->Entries[1].Payload.begin(),
             Bundle->Entries[1].Payload.end());
  Bytes Other = payload(0x1388, 3);
  using Slots = std::vector<std::optional<ArrayRef<uint8_t>>>;
  for (const Slots &S :
       {Slots{}, Slots{std::nullopt, std::nullopt, std::nullopt},
        Slots{std::nullopt, ArrayRef<uint8_t>(Same), std::nullopt}}) {
    EXPECT_FALSE(replacesPayload(*Bundle, S));
    Expected<Bytes> Out = rewriteOffloadBundle(*Bundle, S);
    ASSERT_OK(Out);
    EXPECT_EQ(*Out, In);
  }
  EXPECT_TRUE(replacesPayload(
      *Bundle, Slots{std::nullopt, ArrayRef<uint8_t>(Other), std::nullopt}));

  // A layout clang would not write (payloads out of table order, a non-zero
  // gap) comes back unchanged as well.
  Bytes Odd =
      rawBundle({{0x2000, 0x10, Gfx1100}, {0x1000, 0x20, Gfx90a}}, 0x2010);
  std::fill(Odd.begin() + 0x1800, Odd.begin() + 0x1900, 0xee);
  EXPECT_EQ(rewrite(Odd, {}), Odd);
}

TEST(OffloadBundleWrite, ReplaceWithLargerPayload) {
  Bytes In = clangBundle(hipEntries(), 4096);
  Bytes New = payload(0x2345, 9);
  Bytes Out = rewrite(In, {std::nullopt, ArrayRef<uint8_t>(New), std::nullopt});

  std::vector<std::pair<std::string, Bytes>> Want = hipEntries();
  Want[1].second = New;
  EXPECT_EQ(Out, clangBundle(Want, 4096));

  // Same header layout: ids, id lengths and count, byte for byte.
  ASSERT_GE(Out.size(), 0xc1u);
  EXPECT_EQ(headerWithoutOffsets(Out, 0xc1), headerWithoutOffsets(In, 0xc1));
  // Host shares gfx90a's offset; gfx1100 moves to the next 4096 boundary
  // after 0x1000 + 0x2345.
  EXPECT_EQ(llvmEntries(Out),
            (std::vector<std::tuple<uint64_t, uint64_t, std::string>>{
                {0x1000, 0, Host},
                {0x1000, 0x2345, Gfx90a},
                {0x4000, 0xc, Gfx1100}}));
  ASSERT_EQ(Out.size(), 0x400cu);
  EXPECT_TRUE(std::all_of(Out.begin() + 0xc1, Out.begin() + 0x1000,
                          [](uint8_t B) { return B == 0; }));
  EXPECT_TRUE(std::all_of(Out.begin() + 0x3345, Out.begin() + 0x4000,
                          [](uint8_t B) { return B == 0; }));
  EXPECT_EQ(ArrayRef<uint8_t>(Out).slice(0x1000, 0x2345),
            ArrayRef<uint8_t>(New));
  EXPECT_EQ(ArrayRef<uint8_t>(Out).slice(0x4000, 0xc),
            ArrayRef<uint8_t>(payload(0xc, 2)));
}

TEST(OffloadBundleWrite, ReplaceWithSmallerPayload) {
  Bytes In = clangBundle(hipEntries(), 4096);
  // The last entry shrinks: everything before it stays where it was.
  Bytes Tiny = payload(4, 5);
  Bytes Out =
      rewrite(In, {std::nullopt, std::nullopt, ArrayRef<uint8_t>(Tiny)});
  ASSERT_EQ(Out.size(), 0x3004u);
  Bytes Prefix(In.begin(), In.begin() + 0x3000);
  put64(Prefix, 32 + 24 * 2 + Host.size() + Gfx90a.size() + 8, 4);
  EXPECT_EQ(Bytes(Out.begin(), Out.begin() + 0x3000), Prefix);

  // The first device entry shrinks: the next one moves down a page.
  Bytes Small = payload(0x10, 6);
  Out = rewrite(In, {std::nullopt, ArrayRef<uint8_t>(Small), std::nullopt});
  EXPECT_EQ(
      llvmEntries(Out),
      (std::vector<std::tuple<uint64_t, uint64_t, std::string>>{
          {0x1000, 0, Host}, {0x1000, 0x10, Gfx90a}, {0x2000, 0xc, Gfx1100}}));
  Expected<OffloadBundle> Again = parseOffloadBundle(Out);
  ASSERT_OK(Again);
  EXPECT_EQ(Again->Entries[1].Payload, ArrayRef<uint8_t>(Small));
  EXPECT_EQ(Again->payloadAlignment(), 4096u);
}

TEST(OffloadBundleWrite, KeepsTheInputsAlignment) {
  Bytes New = payload(0x33, 7);
  for (uint64_t Align : {1, 16, 4096}) {
    std::vector<std::pair<std::string, Bytes>> Entries = hipEntries();
    Bytes In = clangBundle(Entries, Align);
    Entries[2].second = New;
    EXPECT_EQ(rewrite(In, {std::nullopt, std::nullopt, ArrayRef<uint8_t>(New)}),
              clangBundle(Entries, Align))
        << "align " << Align;
  }
}

TEST(OffloadBundleWrite, EmptyEntryGetsAPayload) {
  Bytes In = clangBundle(hipEntries(), 4096);
  Bytes HostCode = bytesOf("HOST");
  Bytes Out =
      rewrite(In, {ArrayRef<uint8_t>(HostCode), std::nullopt, std::nullopt});
  EXPECT_EQ(llvmEntries(Out),
            (std::vector<std::tuple<uint64_t, uint64_t, std::string>>{
                {0x1000, 4, Host},
                {0x2000, 0x1388, Gfx90a},
                {0x4000, 0xc, Gfx1100}}));
}

TEST(OffloadBundleWrite, ManyEntriesAgreeWithLLVMsReader) {
  std::vector<std::pair<std::string, Bytes>> Entries = {{Host, {}}};
  const char *Archs[] = {"gfx803", "gfx900",  "gfx906",  "gfx908", "gfx90a",
                         "gfx942", "gfx1030", "gfx1100", "gfx1201"};
  for (auto [I, Arch] : enumerate(Archs))
    Entries.push_back({std::string("hipv4-amdgcn-amd-amdhsa--") + Arch,
                       payload(0x800 + I * 0x777, uint8_t(I))});
  Bytes In = clangBundle(Entries, 4096);
  Bytes A = payload(0x5000, 40), B = payload(0x10, 41);
  std::vector<std::optional<ArrayRef<uint8_t>>> Slots(Entries.size());
  Slots[3] = ArrayRef<uint8_t>(A);
  Slots[7] = ArrayRef<uint8_t>(B);
  Entries[3].second = A;
  Entries[7].second = B;
  Bytes Out = rewrite(In, Slots);
  EXPECT_EQ(Out, clangBundle(Entries, 4096));

  auto LLVM = llvmEntries(Out);
  ASSERT_EQ(LLVM.size(), Entries.size());
  uint64_t PrevEnd = 0;
  for (size_t I = 0; I < Entries.size(); ++I) {
    auto [Offset, Size, ID] = LLVM[I];
    EXPECT_EQ(ID, Entries[I].first);
    EXPECT_EQ(Size, Entries[I].second.size());
    EXPECT_EQ(Offset % 4096, 0u);
    EXPECT_GE(Offset, PrevEnd);
    EXPECT_EQ(ArrayRef<uint8_t>(Out).slice(Offset, Size),
              ArrayRef<uint8_t>(Entries[I].second));
    PrevEnd = Offset + Size;
  }
  std::vector<std::string> IDs;
  for (const auto &E : Entries)
    IDs.push_back(E.first);
  EXPECT_LE(headerSize(IDs), 4096u);
}

TEST(OffloadBundleWrite, HeaderPastFourKiB) {
  // 0x20 + 2 * (0x18 + 2100) = 0x10b8: parsed, written back unchanged, but
  // never laid out anew.
  std::string A(2100, 'a'), B(2100, 'b');
  Bytes In = clangBundle({{A, payload(8, 1)}, {B, payload(8, 2)}}, 4096);
  EXPECT_EQ(rewrite(In, {}), In);
  Bytes New = payload(9, 3);
  EXPECT_EQ(rewriteError(In, {ArrayRef<uint8_t>(New), std::nullopt}),
            "offload bundle header of 0x10b8 bytes does not fit in the first "
            "0x1000 bytes, all that HIP reads to find the entries");
}

TEST(OffloadBundleWrite, TrailingBytes) {
  Bytes In = clangBundle(hipEntries(), 4096);
  Bytes New = payload(0x20, 8);
  std::vector<std::pair<std::string, Bytes>> Entries = hipEntries();
  Entries[2].second = New;
  // Zero padding after the bundle is not part of it.
  Bytes Padded = In;
  Padded.resize(In.size() + 0x10, 0);
  EXPECT_EQ(
      rewrite(Padded, {std::nullopt, std::nullopt, ArrayRef<uint8_t>(New)}),
      clangBundle(Entries, 4096));
  // Anything else after it cannot be moved blindly.
  Bytes Data = In;
  Data.insert(Data.end(), {0, 0, 7});
  EXPECT_EQ(
      rewriteError(Data, {std::nullopt, std::nullopt, ArrayRef<uint8_t>(New)}),
      "cannot rewrite the bundle: 0x3 bytes follow its end at 0x300c "
      "and the one at 0x300e is not zero padding");
}

TEST(OffloadBundleWrite, ReplacementSlotsMatchEntries) {
  Bytes In = clangBundle(hipEntries(), 4096);
  EXPECT_EQ(rewriteError(In, {std::nullopt, std::nullopt}),
            "2 replacement slots for 3 entries");
}

//===----------------------------------------------------------------------===//
// Compressed bundles
//===----------------------------------------------------------------------===//

const CompressionMethod Methods[] = {CompressionMethod::Zlib,
                                     CompressionMethod::Zstd};
const uint16_t WritableVersions[] = {2, 3};

compression::Format llvmFormat(CompressionMethod M) {
  return M == CompressionMethod::Zlib ? compression::Format::Zlib
                                      : compression::Format::Zstd;
}

/// Incompressible bytes.
Bytes noise(size_t Size, uint64_t Seed) {
  Bytes B(Size);
  uint64_t X = Seed * 0x9e3779b97f4a7c15ull + 1;
  for (uint8_t &Byte : B) {
    X ^= X << 13;
    X ^= X >> 7;
    X ^= X << 17;
    Byte = uint8_t(X >> 24);
  }
  return B;
}

std::unique_ptr<MemoryBuffer> buffer(const Bytes &B) {
  return MemoryBuffer::getMemBufferCopy(toStringRef(B));
}

Bytes bytesOf(const MemoryBuffer &MB) {
  return Bytes(MB.getBufferStart(), MB.getBufferEnd());
}

/// LLVM's own compressor with clang-offload-bundler's parameters.
Bytes llvmCompress(const Bytes &In, uint16_t Version, CompressionMethod M,
                   int Level, bool Ldm = true) {
  auto Out = object::CompressedOffloadBundle::compress(
      compression::Params(llvmFormat(M), Level, Ldm), *buffer(In), Version);
  if (!Out) {
    ADD_FAILURE() << toString(Out.takeError());
    return {};
  }
  return bytesOf(**Out);
}

/// A v1 bundle, which nothing writes any more: laid out by hand.
Bytes v1Bundle(const Bytes &In, CompressionMethod M) {
  SmallVector<uint8_t, 0> Stream;
  compression::compress(compression::Params(llvmFormat(M)), In, Stream);
  Bytes B = bytesOf("CCOB");
  B.resize(20);
  support::endian::write16le(B.data() + 4, 1);
  support::endian::write16le(B.data() + 6, uint16_t(M));
  support::endian::write32le(B.data() + 8, uint32_t(In.size()));
  support::endian::write64le(B.data() + 12, compressedBundleHash(In));
  B.insert(B.end(), Stream.begin(), Stream.end());
  return B;
}

Bytes compress(const Bytes &In, uint16_t Version, CompressionMethod M) {
  Expected<Bytes> Out = compressBundle(In, Version, M);
  if (!Out) {
    ADD_FAILURE() << toString(Out.takeError());
    return {};
  }
  return *Out;
}

std::string decompressError(const Bytes &B,
                            uint64_t Max = DefaultMaxUncompressedBundleSize) {
  return errorOf(decompressBundle(B, Max));
}

TEST(CompressedBundle, Constants) {
  EXPECT_EQ(compressedBundleHeaderSize(1), 20u);
  EXPECT_EQ(compressedBundleHeaderSize(2), 24u);
  EXPECT_EQ(compressedBundleHeaderSize(3), 32u);
  EXPECT_EQ(compressedBundleHeaderSize(0), std::nullopt);
  EXPECT_EQ(compressedBundleHeaderSize(4), std::nullopt);
  EXPECT_EQ(defaultCompressionLevel(CompressionMethod::Zstd), 3);
  EXPECT_EQ(defaultCompressionLevel(CompressionMethod::Zlib), 6);
  EXPECT_EQ(compressionMethodName(CompressionMethod::Zlib), "zlib");
  EXPECT_EQ(compressionMethodName(CompressionMethod::Zstd), "zstd");
}

TEST(CompressedBundle, HashIsTheLow64BitsOfMD5) {
  // MD5("") = d41d8cd98f00b204..., MD5("abc") = 900150983cd24fb0...: the
  // first 8 digest bytes, little-endian.
  EXPECT_EQ(compressedBundleHash({}), 0x04b2008fd98c1dd4u);
  EXPECT_EQ(compressedBundleHash(bytesOf("abc")), 0xb04fd23c98500190u);
}

TEST(CompressedBundle, ReadsWhatClangWrote) {
  Bytes C = fromHexString(ClangCompressedHex);
  Expected<DecompressedBundle> D = decompressBundle(C);
  ASSERT_OK(D);
  EXPECT_EQ(D->Header.Version, 3);
  EXPECT_EQ(D->Header.Method, CompressionMethod::Zstd);
  EXPECT_EQ(D->Header.TotalSize, 0xcbu);
  EXPECT_EQ(D->Header.UncompressedSize, 0xfeu);
  EXPECT_EQ(D->Header.Hash, 0x0bf31016085da4e2u);
  EXPECT_EQ(D->Header.HeaderSize, 32u);
  EXPECT_EQ(D->Bytes, fromHexString(ClangBundleHex));
  EXPECT_EQ(D->Compressed, ArrayRef<uint8_t>(C));
  // clang's defaults and the same libzstd give clang's bytes back.
  EXPECT_EQ(compress(D->Bytes, 3, CompressionMethod::Zstd), C);
}

TEST(CompressedBundle, RoundTrips) {
  Bytes In = clangBundle(hipEntries(), 4096);
  for (CompressionMethod M : Methods) {
    for (uint16_t V : WritableVersions) {
      SCOPED_TRACE("v" + std::to_string(V) + " " +
                   compressionMethodName(M).str());
      Bytes C = compress(In, V, M);
      ASSERT_GT(C.size(), 32u);
      // The header, field by field.
      EXPECT_EQ(StringRef(reinterpret_cast<const char *>(C.data()), 4), "CCOB");
      EXPECT_EQ(support::endian::read16le(C.data() + 4), V);
      EXPECT_EQ(support::endian::read16le(C.data() + 6), uint16_t(M));
      if (V == 2) {
        EXPECT_EQ(support::endian::read32le(C.data() + 8), C.size());
        EXPECT_EQ(support::endian::read32le(C.data() + 12), In.size());
        EXPECT_EQ(read64(C, 16), compressedBundleHash(In));
      } else {
        EXPECT_EQ(read64(C, 8), C.size());
        EXPECT_EQ(read64(C, 16), In.size());
        EXPECT_EQ(read64(C, 24), compressedBundleHash(In));
      }
      Expected<DecompressedBundle> D = decompressBundle(C);
      ASSERT_OK(D);
      EXPECT_EQ(D->Bytes, In);
      EXPECT_EQ(D->Header.Version, V);
      EXPECT_EQ(D->Header.Method, M);

      // LLVM's decompressor accepts it, and its hash check agrees.
      std::string Verbose;
      raw_string_ostream OS(Verbose);
      auto LLVMOut =
          object::CompressedOffloadBundle::decompress(*buffer(C), &OS);
      ASSERT_OK(LLVMOut);
      EXPECT_EQ(bytesOf(**LLVMOut), In);
      EXPECT_NE(Verbose.find("Hashes match: Yes"), std::string::npos)
          << Verbose;
      // Verbose mode also times itself; drop the report it would print at
      // exit.
      TimerGroup::printAll(nulls());
      // And its compressor, with clang's parameters, writes the same bytes.
      EXPECT_EQ(C, llvmCompress(In, V, M, defaultCompressionLevel(M)));

      // Compressing what was decompressed gives the same bytes again.
      EXPECT_EQ(compress(D->Bytes, V, M), C);
    }
  }
}

TEST(CompressedBundle, LongDistanceMatchingAsClang) {
  // Two copies of 3 MiB of noise: zstd level 3 without long-distance
  // matching has a 2 MiB window and cannot see the repeat.
  Bytes Half = noise(3 << 20, 1);
  Bytes In = Half;
  In.insert(In.end(), Half.begin(), Half.end());
  Bytes C = compress(In, 3, CompressionMethod::Zstd);
  EXPECT_LT(C.size(), Half.size() + Half.size() / 8);
  EXPECT_GT(
      llvmCompress(In, 3, CompressionMethod::Zstd, 3, /*Ldm=*/false).size(),
      In.size() - In.size() / 8);
  EXPECT_EQ(C, llvmCompress(In, 3, CompressionMethod::Zstd, 3));
}

TEST(CompressedBundle, LevelsChangeTheBytes) {
  Bytes In = clangBundle(hipEntries(), 4096);
  Expected<Bytes> Nine = compressBundle(In, 3, CompressionMethod::Zlib, 9);
  Expected<Bytes> One = compressBundle(In, 3, CompressionMethod::Zlib, 1);
  ASSERT_OK(Nine);
  ASSERT_OK(One);
  EXPECT_NE(*Nine, *One);
  EXPECT_EQ(*Nine, llvmCompress(In, 3, CompressionMethod::Zlib, 9));
}

TEST(CompressedBundle, RecompressKeepsAnUnchangedBundle) {
  Bytes In = clangBundle(hipEntries(), 4096);
  for (CompressionMethod M : Methods) {
    SCOPED_TRACE(compressionMethodName(M).str());
    // Written at another level than ours: compressing again differs.
    const int Other = M == CompressionMethod::Zlib ? 1 : 19;
    Bytes C = llvmCompress(In, 3, M, Other);
    Expected<DecompressedBundle> D = decompressBundle(C);
    ASSERT_OK(D);
    EXPECT_NE(compress(D->Bytes, 3, M), C);
    Bytes Copy = D->Bytes;
    Expected<Bytes> Same = recompressBundle(*D, Copy);
    ASSERT_OK(Same);
    EXPECT_EQ(*Same, C);

    // A changed bundle is compressed at the original's version and method.
    std::vector<std::pair<std::string, Bytes>> Entries = hipEntries();
    Entries[1].second = payload(0x99, 4);
    Bytes New = clangBundle(Entries, 4096);
    Expected<Bytes> Changed = recompressBundle(*D, New);
    ASSERT_OK(Changed);
    Expected<DecompressedBundle> D2 = decompressBundle(*Changed);
    ASSERT_OK(D2);
    EXPECT_EQ(D2->Bytes, New);
    EXPECT_EQ(D2->Header.Version, 3);
    EXPECT_EQ(D2->Header.Method, M);
  }
  Bytes V2 = compress(In, 2, CompressionMethod::Zlib);
  Expected<DecompressedBundle> D = decompressBundle(V2);
  ASSERT_OK(D);
  Bytes New = In;
  New.back() ^= 1;
  Expected<Bytes> Changed = recompressBundle(*D, New);
  ASSERT_OK(Changed);
  EXPECT_EQ(support::endian::read16le(Changed->data() + 4), 2);
  EXPECT_EQ(support::endian::read16le(Changed->data() + 6), 0);
}

TEST(CompressedBundle, VersionOne) {
  Bytes In = clangBundle(hipEntries(), 4096);
  for (CompressionMethod M : Methods) {
    SCOPED_TRACE(compressionMethodName(M).str());
    Bytes C = v1Bundle(In, M);
    Expected<DecompressedBundle> D = decompressBundle(C);
    ASSERT_OK(D);
    EXPECT_EQ(D->Bytes, In);
    EXPECT_EQ(D->Header.Version, 1);
    EXPECT_EQ(D->Header.TotalSize, std::nullopt);
    EXPECT_EQ(D->Header.HeaderSize, 20u);
    // Kept when unchanged; never written.
    Expected<Bytes> Same = recompressBundle(*D, In);
    ASSERT_OK(Same);
    EXPECT_EQ(*Same, C);
    Bytes New = In;
    New.back() ^= 1;
    EXPECT_EQ(errorOf(recompressBundle(*D, New)),
              "refusing to write a v1 compressed bundle: HIP 6.2 and later "
              "read its uncompressed size as the total size");
  }
}

TEST(CompressedBundle, CompressRefusals) {
  Bytes In = payload(100, 0);
  EXPECT_EQ(errorOf(compressBundle(In, 1, CompressionMethod::Zstd)),
            "refusing to write a v1 compressed bundle: HIP 6.2 and later "
            "read its uncompressed size as the total size");
  EXPECT_EQ(errorOf(compressBundle(In, 4, CompressionMethod::Zstd)),
            "cannot write compressed bundle version 4 (only 2 and 3)");
  EXPECT_EQ(errorOf(compressBundle(In, 0, CompressionMethod::Zstd)),
            "cannot write compressed bundle version 0 (only 2 and 3)");
  EXPECT_EQ(errorOf(compressBundle(In, 3, CompressionMethod(5))),
            "unknown compression method 5 (known: 0 zlib, 1 zstd)");
  EXPECT_EQ(errorOf(compressBundle(In, 3, CompressionMethod::Zlib, 10)),
            "zlib compression level 10 is out of range (0 to 9)");
  EXPECT_EQ(errorOf(compressBundle(In, 3, CompressionMethod::Zlib, -1)),
            "zlib compression level -1 is out of range (0 to 9)");
  EXPECT_EQ(errorOf(compressBundle(In, 3, CompressionMethod::Zstd, 23)),
            "zstd compression level 23 is out of range (-5 to 22)");
}

TEST(CompressedBundle, MalformedHeaders) {
  Bytes In = clangBundle(hipEntries(), 4096);
  Bytes C3 = compress(In, 3, CompressionMethod::Zstd);
  Bytes C2 = compress(In, 2, CompressionMethod::Zstd);

  EXPECT_EQ(decompressError(bytesOf("CCOx....")),
            "not a compressed offload bundle: it does not start with 'CCOB'");
  EXPECT_EQ(decompressError(In),
            "not a compressed offload bundle: it does not start with 'CCOB'");
  EXPECT_EQ(decompressError(bytesOf("CC")),
            "compressed bundle truncated in its version and method fields: "
            "0x2 of 0x8 bytes");
  EXPECT_EQ(decompressError(bytesOf("CCOB\x03")),
            "compressed bundle truncated in its version and method fields: "
            "0x5 of 0x8 bytes");

  for (uint16_t V : {0, 4, 0xffff}) {
    Bytes B = C3;
    support::endian::write16le(B.data() + 4, V);
    EXPECT_EQ(decompressError(B), "unknown compressed bundle version " +
                                      std::to_string(V) + " (known: 1, 2, 3)");
  }
  Bytes Method = C3;
  support::endian::write16le(Method.data() + 6, 2);
  EXPECT_EQ(decompressError(Method),
            "unknown compression method 2 (known: 0 zlib, 1 zstd)");

  Bytes Short3(C3.begin(), C3.begin() + 0x1c);
  EXPECT_EQ(decompressError(Short3),
            "compressed bundle v3 header truncated: 0x1c of 0x20 bytes");
  Bytes Short2(C2.begin(), C2.begin() + 0x17);
  EXPECT_EQ(decompressError(Short2),
            "compressed bundle v2 header truncated: 0x17 of 0x18 bytes");

  // The total size must be the buffer's: one byte more in the field, or one
  // byte more after the bundle.
  Bytes Total = C3;
  put64(Total, 8, C3.size() + 1);
  EXPECT_EQ(decompressError(Total),
            "total size field " + hx(C3.size() + 1) +
                " does not match the compressed bundle's size " +
                hx(C3.size()));
  Bytes Longer = C2;
  Longer.push_back(0);
  EXPECT_EQ(decompressError(Longer),
            "total size field " + hx(C2.size()) +
                " does not match the compressed bundle's size " +
                hx(C2.size() + 1));
}

TEST(CompressedBundle, WrongHash) {
  Bytes In = clangBundle(hipEntries(), 4096);
  for (CompressionMethod M : Methods) {
    Bytes C = compress(In, 3, M);
    const uint64_t Hash = compressedBundleHash(In);
    put64(C, 24, Hash ^ 0x8000);
    EXPECT_EQ(decompressError(C), "hash " + hx(Hash ^ 0x8000) +
                                      " in the header is not the hash of the "
                                      "decompressed bundle, " +
                                      hx(Hash) + " (low 64 bits of its MD5)");
  }
}

TEST(CompressedBundle, UncompressedSizeMismatch) {
  Bytes In = clangBundle(hipEntries(), 4096); // 0x300c bytes
  for (CompressionMethod M : Methods) {
    const std::string Name = compressionMethodName(M).str();
    SCOPED_TRACE(Name);
    Bytes C = compress(In, 3, M);
    // One byte more than announced, and many more.
    for (uint64_t Claim : {uint64_t(0x300b), uint64_t(0x1000), uint64_t(0)}) {
      Bytes B = C;
      put64(B, 16, Claim);
      EXPECT_EQ(decompressError(B),
                Name +
                    " data decompresses to more than the header's "
                    "uncompressed size " +
                    hx(Claim));
    }
    Bytes Fewer = C;
    put64(Fewer, 16, 0x3011);
    EXPECT_EQ(decompressError(Fewer),
              Name + " data decompresses to 0x300c bytes, not the header's "
                     "uncompressed size 0x3011");
    // Same in a v2 header (32-bit field).
    Bytes C2 = compress(In, 2, M);
    support::endian::write32le(C2.data() + 12, 0x300b);
    EXPECT_EQ(decompressError(C2),
              Name + " data decompresses to more than the header's "
                     "uncompressed size 0x300b");
  }
}

TEST(CompressedBundle, AbsurdUncompressedSize) {
  Bytes In = clangBundle(hipEntries(), 4096);
  Bytes C = compress(In, 3, CompressionMethod::Zstd);
  Bytes Huge = C;
  put64(Huge, 16, uint64_t(1) << 40);
  EXPECT_EQ(decompressError(Huge), "uncompressed size 0x10000000000 is more "
                                   "than the limit of 0x100000000 bytes");
  put64(Huge, 16, UINT64_MAX);
  EXPECT_EQ(decompressError(Huge),
            "uncompressed size 0xffffffffffffffff is more than the limit of "
            "0x100000000 bytes");
  // The caller's limit.
  EXPECT_EQ(decompressError(C, 0x300b), "uncompressed size 0x300c is more "
                                        "than the limit of 0x300b bytes");
  Expected<DecompressedBundle> AtLimit = decompressBundle(C, 0x300c);
  ASSERT_OK(AtLimit);

  // Below the limit, but more than the stream could expand to.
  for (CompressionMethod M : Methods) {
    Bytes B = compress(In, 3, M);
    const uint64_t Stream = B.size() - 32;
    const uint64_t Ratio = M == CompressionMethod::Zlib ? 1032 : 32768;
    put64(B, 16, Stream * Ratio + 1);
    EXPECT_EQ(decompressError(B),
              "uncompressed size " + hx(Stream * Ratio + 1) + " is more than " +
                  compressionMethodName(M).str() + " can expand " + hx(Stream) +
                  " compressed bytes to");
  }
}

TEST(CompressedBundle, DecompressionFailure) {
  Bytes In = clangBundle(hipEntries(), 4096);
  // A stream that does not start like one.
  Bytes Zstd = compress(In, 3, CompressionMethod::Zstd);
  Zstd[32] = 0;
  EXPECT_EQ(decompressError(Zstd),
            "cannot decompress the zstd data: Unknown frame descriptor");
  Bytes Zlib = compress(In, 3, CompressionMethod::Zlib);
  Zlib[32] = 0;
  EXPECT_EQ(decompressError(Zlib),
            "cannot decompress the zlib data: zlib error: Z_DATA_ERROR");
  // A stream cut short (total size fixed up).
  for (CompressionMethod M : Methods) {
    Bytes Cut = compress(In, 3, M);
    Cut.resize(32 + (Cut.size() - 32) / 2);
    put64(Cut, 8, Cut.size());
    std::string Msg = decompressError(Cut);
    EXPECT_TRUE(StringRef(Msg).starts_with(
        "cannot decompress the " + compressionMethodName(M).str() + " data: "))
        << Msg;
  }
}

//===----------------------------------------------------------------------===//
// Damaged input: every truncation and many one-byte changes
//===----------------------------------------------------------------------===//

/// Bytes to try at each position: a flipped low bit and high bit, 0, 0xff.
std::vector<uint8_t> damages(uint8_t Old) {
  return {uint8_t(Old ^ 1), uint8_t(Old ^ 0x80), 0, 0xff};
}

TEST(OffloadBundleDamage, WhatIsAcceptedCanBeRewritten) {
  const Bytes Good = fromHexString(ClangBundleHex);
  const Bytes New = payload(0x45, 11);
  size_t Accepted = 0, Refused = 0;
  auto Try = [&](const Bytes &B) {
    Expected<OffloadBundle> Bundle = parseOffloadBundle(B);
    if (!Bundle) {
      consumeError(Bundle.takeError());
      ++Refused;
      return;
    }
    ++Accepted;
    // Replace the first entry with a payload: the result is a bundle both
    // readers accept, with every id and payload where they say.
    std::vector<std::optional<ArrayRef<uint8_t>>> Slots(Bundle->Entries.size());
    if (Slots.empty())
      return;
    Slots[0] = ArrayRef<uint8_t>(New);
    Expected<Bytes> Out = rewriteOffloadBundle(*Bundle, Slots);
    if (!Out) {
      // Only trailing data may stop a rewrite of a bundle this small.
      std::string Msg = toString(Out.takeError());
      EXPECT_TRUE(StringRef(Msg).starts_with("cannot rewrite the bundle: "))
          << Msg;
      return;
    }
    Expected<OffloadBundle> Again = parseOffloadBundle(*Out);
    ASSERT_OK(Again);
    ASSERT_EQ(Again->Entries.size(), Bundle->Entries.size());
    auto LLVM = llvmEntries(*Out);
    ASSERT_EQ(LLVM.size(), Bundle->Entries.size());
    for (size_t I = 0; I < LLVM.size(); ++I) {
      const ArrayRef<uint8_t> Want =
          I == 0 ? ArrayRef<uint8_t>(New) : Bundle->Entries[I].Payload;
      EXPECT_EQ(Again->Entries[I].ID, Bundle->Entries[I].ID);
      EXPECT_EQ(Again->Entries[I].Payload, Want);
      EXPECT_EQ(std::get<2>(LLVM[I]), Bundle->Entries[I].ID.str());
      EXPECT_EQ(std::get<1>(LLVM[I]), Want.size());
    }
  };
  for (size_t Size = 0; Size < Good.size(); ++Size)
    Try(Bytes(Good.begin(), Good.begin() + Size));
  for (size_t I = 0; I < Good.size(); ++I)
    for (uint8_t V : damages(Good[I])) {
      Bytes B = Good;
      B[I] = V;
      Try(B);
    }
  // Both outcomes happened: the loop tested something.
  EXPECT_GT(Accepted, 100u);
  EXPECT_GT(Refused, 100u);
}

TEST(CompressedBundleDamage, NothingDamagedDecompresses) {
  const Bytes Good = fromHexString(ClangCompressedHex);
  const Bytes Plain = fromHexString(ClangBundleHex);
  auto Try = [&](const Bytes &B) {
    Expected<DecompressedBundle> D = decompressBundle(B);
    if (!D) {
      consumeError(D.takeError());
      return;
    }
    // A change the checks miss must have left the contents intact.
    EXPECT_EQ(D->Bytes, Plain);
  };
  for (size_t Size = 0; Size < Good.size(); ++Size)
    Try(Bytes(Good.begin(), Good.begin() + Size));
  for (size_t I = 0; I < Good.size(); ++I)
    for (uint8_t V : damages(Good[I])) {
      Bytes B = Good;
      B[I] = V;
      Try(B);
    }
}

} // namespace
