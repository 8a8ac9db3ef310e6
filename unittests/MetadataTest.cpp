//===- unittests/MetadataTest.cpp - AMDGPU metadata note tests ------------===//
//
// Metadata blobs are built in memory with msgpack::Document, which writes
// map keys in sorted order and integers in their smallest encoding, exactly
// as LLVM's AMDGPU metadata streamer does. One real note, produced by clang
// 22, is embedded as a fixture (see RealNote below).
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/Metadata.h"
#include "hotswap/AMDGPU/Notes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/BinaryFormat/MsgPackReader.h"
#include "llvm/Support/Endian.h"
#include "gtest/gtest.h"

#include <functional>

using namespace llvm;
using namespace hotswap::amdgpu;
using Method = NoteRewrite::Method;

namespace {

#define ASSERT_OK(E) ASSERT_TRUE(bool(E)) << toString((E).takeError())
#define EXPECT_NO_ERR(X)                                                       \
  do {                                                                         \
    Error Err_ = (X);                                                          \
    EXPECT_FALSE(bool(Err_)) << toString(std::move(Err_));                     \
  } while (false)

struct KSpec {
  std::string Name;
  uint64_t SGPR = 10;
  uint64_t VGPR = 3;
  bool WithAGPR = true;
};

/// The keys and value kinds LLVM 22 writes for a kernel without arguments
/// (compare the real note below).
msgpack::MapDocNode kernelNode(msgpack::Document &D, const KSpec &K) {
  msgpack::MapDocNode M = D.getMapNode();
  if (K.WithAGPR)
    M[".agpr_count"] = D.getNode(uint64_t(0));
  M[".args"] = D.getArrayNode();
  M[".group_segment_fixed_size"] = D.getNode(uint64_t(0));
  M[".kernarg_segment_align"] = D.getNode(uint64_t(4));
  M[".kernarg_segment_size"] = D.getNode(uint64_t(0));
  M[".language"] = D.getNode("OpenCL C");
  msgpack::ArrayDocNode LV = D.getArrayNode();
  LV.push_back(D.getNode(uint64_t(1)));
  LV.push_back(D.getNode(uint64_t(2)));
  M[".language_version"] = LV;
  M[".max_flat_workgroup_size"] = D.getNode(uint64_t(256));
  M[".name"] = D.getNode(K.Name, /*Copy=*/true);
  M[".private_segment_fixed_size"] = D.getNode(uint64_t(0));
  M[".sgpr_count"] = D.getNode(K.SGPR);
  M[".sgpr_spill_count"] = D.getNode(uint64_t(0));
  M[".symbol"] = D.getNode(K.Name + ".kd", /*Copy=*/true);
  M[".uniform_work_group_size"] = D.getNode(uint64_t(1));
  M[".uses_dynamic_stack"] = D.getNode(false);
  M[".vgpr_count"] = D.getNode(K.VGPR);
  M[".vgpr_spill_count"] = D.getNode(uint64_t(0));
  M[".wavefront_size"] = D.getNode(uint64_t(64));
  return M;
}

std::string metadataBlob(ArrayRef<KSpec> Kernels, StringRef Target) {
  msgpack::Document D;
  msgpack::MapDocNode Root = D.getRoot().getMap(/*Convert=*/true);
  msgpack::ArrayDocNode Version = D.getArrayNode();
  Version.push_back(D.getNode(uint64_t(1)));
  Version.push_back(D.getNode(uint64_t(2)));
  Root["amdhsa.version"] = Version;
  Root["amdhsa.target"] = D.getNode(Target, /*Copy=*/true);
  msgpack::ArrayDocNode KA = D.getArrayNode();
  for (const KSpec &K : Kernels)
    KA.push_back(kernelNode(D, K));
  Root["amdhsa.kernels"] = KA;
  std::string Blob;
  D.writeToBlob(Blob);
  return Blob;
}

std::vector<uint8_t> noteSection(StringRef Blob, uint32_t Type = 32,
                                 StringRef Owner = "AMDGPU") {
  std::vector<uint8_t> S;
  appendNote(S, Owner, Type, arrayRefFromStringRef(Blob));
  return S;
}

/// Offset just past the first (or Nth) fixstr key \p Key in \p Bytes, i.e.
/// the offset of its value.
size_t valueOffset(ArrayRef<uint8_t> Bytes, StringRef Key, unsigned Nth = 0) {
  std::vector<uint8_t> Pat = {uint8_t(0xa0 | Key.size())};
  Pat.insert(Pat.end(), Key.bytes_begin(), Key.bytes_end());
  auto It = Bytes.begin();
  for (;;) {
    It = std::search(It, Bytes.end(), Pat.begin(), Pat.end());
    if (It == Bytes.end())
      return 0;
    if (Nth-- == 0)
      return (It - Bytes.begin()) + Pat.size();
    ++It;
  }
}

/// Replaces the 1-byte value of \p Key (first occurrence) by \p Encoding.
void reencodeValue(std::string &Blob, StringRef Key,
                   ArrayRef<uint8_t> Encoding) {
  size_t Off = valueOffset(arrayRefFromStringRef(Blob), Key);
  ASSERT_NE(Off, 0u);
  Blob.replace(Off, 1, toStringRef(Encoding).str());
}

/// A metadata note section whose descriptor has exactly \p Slack bytes of
/// alignment padding. The target string gets 0-3 'x' characters appended to
/// reach it (still a fixstr). \p Edit may re-encode values in the blob first.
std::vector<uint8_t>
sectionWithSlack(ArrayRef<KSpec> Kernels, unsigned Slack,
                 std::function<void(std::string &)> Edit = nullptr) {
  for (unsigned Extra = 0; Extra != 4; ++Extra) {
    std::string Blob = metadataBlob(
        Kernels, "amdgcn-amd-amdhsa--gfx90a" + std::string(Extra, 'x'));
    if (Edit)
      Edit(Blob);
    if ((4 - Blob.size() % 4) % 4 == Slack)
      return noteSection(Blob);
  }
  ADD_FAILURE() << "cannot reach the requested slack";
  return {};
}

uint32_t descSize(ArrayRef<uint8_t> Section) {
  return support::endian::read32le(Section.data() + 4);
}

/// Offsets at which A and B (same size) differ.
std::vector<size_t> diffOffsets(ArrayRef<uint8_t> A, ArrayRef<uint8_t> B) {
  std::vector<size_t> D;
  for (size_t I = 0; I != A.size(); ++I)
    if (A[I] != B[I])
      D.push_back(I);
  return D;
}

std::string parseError(ArrayRef<uint8_t> Section) {
  Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(Section);
  if (MD)
    return "<no error>";
  return toString(MD.takeError());
}

std::string parseBlobError(StringRef Blob) {
  return parseError(noteSection(Blob));
}

std::string rawBlob(std::initializer_list<uint8_t> Bytes) {
  return std::string(Bytes.begin(), Bytes.end());
}

/// Rewrites and re-parses, returning the kernel's value of \p F.
std::optional<uint64_t> reparsedValue(const NoteRewrite &R, StringRef Symbol,
                                      KernelField F) {
  Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(R.Bytes);
  if (!MD) {
    ADD_FAILURE() << toString(MD.takeError());
    return std::nullopt;
  }
  const KernelMD *K = MD->findBySymbol(Symbol);
  if (!K) {
    ADD_FAILURE() << "no kernel " << Symbol.str();
    return std::nullopt;
  }
  return K->get(F);
}

TEST(MetadataTest, ParsesLLVMShapedMetadata) {
  auto Section = noteSection(
      metadataBlob({{"a", 12, 7}, {"b", 100, 300}},
                   "amdgcn-amd-amdhsa--gfx90a"));
  Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_TRUE(MD->hasMetadata());
  ASSERT_TRUE(MD->version().has_value());
  EXPECT_EQ(MD->version()->Major, 1u);
  EXPECT_EQ(MD->version()->Minor, 2u);
  EXPECT_EQ(MD->target(), "amdgcn-amd-amdhsa--gfx90a");
  ASSERT_EQ(MD->kernels().size(), 2u);
  const KernelMD *B = MD->findBySymbol("b.kd");
  ASSERT_NE(B, nullptr);
  EXPECT_EQ(B->Name, "b");
  EXPECT_EQ(B->Index, 1u);
  EXPECT_EQ(B->SGPRCount, 100u);
  EXPECT_EQ(B->VGPRCount, 300u);
  EXPECT_EQ(B->AGPRCount, 0u);
  EXPECT_EQ(B->WavefrontSize, 64u);
  EXPECT_EQ(B->MaxFlatWorkgroupSize, 256u);
  EXPECT_EQ(B->KernargSegmentSize, 0u);
  EXPECT_EQ(B->UsesDynamicStack, false);
  EXPECT_EQ(B->get(KernelField::VGPRCount), 300u);
  EXPECT_EQ(MD->findBySymbol("b"), nullptr);
  EXPECT_EQ(MD->findBySymbol("a.kd")->SGPRCount, 12u);
  Expected<std::string> Y = MD->toYAML();
  ASSERT_OK(Y);
  EXPECT_NE(Y->find("amdhsa.target:"), std::string::npos);
  EXPECT_NE(Y->find(".symbol:         b.kd"), std::string::npos);
}

TEST(MetadataTest, NoMetadataNote) {
  std::vector<uint8_t> S;
  appendNote(S, "GNU", 3, {});
  appendNote(S, "AMDGPU", 33, {});
  Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(S);
  ASSERT_OK(MD);
  EXPECT_FALSE(MD->hasMetadata());
  EXPECT_TRUE(MD->kernels().empty());
  EXPECT_EQ(toString(MD->setSGPRCount("k.kd", 1)),
            "metadata: no AMDGPU metadata note");
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->Bytes, S);
  EXPECT_EQ(toString(MD->toYAML().takeError()),
            "metadata: no AMDGPU metadata note");
}

TEST(MetadataTest, ManyKernelsLookup) {
  std::vector<KSpec> Ks;
  for (unsigned I = 0; I != 2000; ++I)
    Ks.push_back({"kernel_" + std::to_string(I), I % 200, 1});
  auto Section = noteSection(metadataBlob(Ks, "amdgcn-amd-amdhsa--gfx942"));
  Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  ASSERT_EQ(MD->kernels().size(), 2000u);
  for (unsigned I = 0; I < 2000; I += 97) {
    const KernelMD *K = MD->findBySymbol("kernel_" + std::to_string(I) + ".kd");
    ASSERT_NE(K, nullptr) << I;
    EXPECT_EQ(K->SGPRCount, I % 200);
  }
  // Kernel 150's .sgpr_count (150) is 0xcc: 200 fits, 1999 -> 4 grows.
  EXPECT_NO_ERR(MD->setSGPRCount("kernel_150.kd", 200));
  EXPECT_NO_ERR(MD->setSGPRCount("kernel_1999.kd", 5));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->How, Method::InPlace);
  EXPECT_EQ(diffOffsets(Section, R->Bytes).size(), 2u);
}

TEST(MetadataTest, SameValueRecordsNothing) {
  auto Section = sectionWithSlack({{"k", 5, 3}}, 0);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 5));
  EXPECT_FALSE(MD->hasPendingChanges());
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->How, Method::Unchanged);
  EXPECT_EQ(R->Bytes, Section);
}

TEST(MetadataTest, UnknownSymbol) {
  auto MD = CodeObjectMetadata::parse(sectionWithSlack({{"k"}}, 0));
  ASSERT_OK(MD);
  EXPECT_EQ(toString(MD->setSGPRCount("k", 1)),
            "metadata: no kernel with symbol 'k'");
  EXPECT_EQ(toString(MD->setField("k.kd", KernelField::UsesDynamicStack, 2)),
            "metadata: '.uses_dynamic_stack' must be 0 or 1, not 2");
}

TEST(MetadataTest, InPlaceFixint5To6) {
  auto Section = sectionWithSlack({{"k", 5, 3}}, 0);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 6));
  EXPECT_EQ(MD->findBySymbol("k.kd")->SGPRCount, 6u);
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_TRUE(R->SameSize);
  EXPECT_EQ(R->How, Method::InPlace);
  size_t Off = valueOffset(Section, ".sgpr_count");
  EXPECT_EQ(diffOffsets(Section, R->Bytes), std::vector<size_t>{Off});
  EXPECT_EQ(R->Bytes[Off], 6);
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::SGPRCount), 6u);
}

TEST(MetadataTest, InPlaceKeepsWideEncoding) {
  // .vgpr_count 300 is 0xcd 0x01 0x2c; 5 is written as 0xcd 0x00 0x05.
  // .sgpr_count 200 is 0xcc 0xc8; 100 is written as 0xcc 0x64.
  auto Section = sectionWithSlack({{"k", 200, 300}}, 0);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setVGPRCount("k.kd", 5));
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 100));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->How, Method::InPlace);
  size_t V = valueOffset(Section, ".vgpr_count");
  size_t S = valueOffset(Section, ".sgpr_count");
  EXPECT_EQ(diffOffsets(Section, R->Bytes),
            (std::vector<size_t>{S + 1, V + 1, V + 2}));
  EXPECT_EQ(ArrayRef<uint8_t>(R->Bytes).slice(V, 3),
            ArrayRef<uint8_t>({0xcd, 0x00, 0x05}));
  EXPECT_EQ(ArrayRef<uint8_t>(R->Bytes).slice(S, 2),
            ArrayRef<uint8_t>({0xcc, 0x64}));
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::VGPRCount), 5u);
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::SGPRCount), 100u);
}

TEST(MetadataTest, InPlaceBoolean) {
  auto Section = sectionWithSlack({{"k"}}, 1);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setUsesDynamicStack("k.kd", true));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->How, Method::InPlace);
  size_t Off = valueOffset(Section, ".uses_dynamic_stack");
  EXPECT_EQ(diffOffsets(Section, R->Bytes), std::vector<size_t>{Off});
  EXPECT_EQ(R->Bytes[Off], 0xc3);
}

TEST(MetadataTest, SignedEncodingKeepsItsFamily) {
  // A producer may encode .sgpr_count as int8 (0xd0): still unsigned-valued.
  auto Section = sectionWithSlack({{"k", 5, 3}}, 0, [](std::string &B) {
    reencodeValue(B, ".sgpr_count", {0xd0, 0x05});
  });
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_EQ(MD->findBySymbol("k.kd")->SGPRCount, 5u);
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 100));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->How, Method::InPlace);
  size_t Off = valueOffset(Section, ".sgpr_count");
  EXPECT_EQ(ArrayRef<uint8_t>(R->Bytes).slice(Off, 2),
            ArrayRef<uint8_t>({0xd0, 100}));
}

TEST(MetadataTest, Growth127To128UsesPadding) {
  auto Section = sectionWithSlack({{"k", 127, 3}}, 1);
  uint32_t OldDesc = descSize(Section);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 128));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_TRUE(R->SameSize);
  EXPECT_EQ(R->How, Method::PaddingSlack);
  EXPECT_EQ(R->Bytes.size(), Section.size());
  EXPECT_EQ(descSize(R->Bytes), OldDesc + 1);
  size_t Off = valueOffset(Section, ".sgpr_count");
  EXPECT_EQ(ArrayRef<uint8_t>(R->Bytes).slice(Off, 2),
            ArrayRef<uint8_t>({0xcc, 0x80}));
  // Everything before the value is unchanged but n_descsz.
  std::vector<size_t> D = diffOffsets(Section, R->Bytes);
  ASSERT_FALSE(D.empty());
  EXPECT_EQ(D.front(), 4u);
  EXPECT_GE(D[1], Off);
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::SGPRCount), 128u);
}

TEST(MetadataTest, Growth127To128NoSlackRelocates) {
  auto Section = sectionWithSlack({{"k", 127, 3}}, 0);
  uint32_t OldDesc = descSize(Section);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 128));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_FALSE(R->SameSize);
  EXPECT_EQ(R->How, Method::Relocate);
  EXPECT_EQ(descSize(R->Bytes), OldDesc + 1);
  EXPECT_EQ(R->Bytes.size(), Section.size() + 4);
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::SGPRCount), 128u);
}

TEST(MetadataTest, Growth127To128CompactsOverWideInteger) {
  // No padding, but .group_segment_fixed_size (0) is encoded as
  // 0xcd 0x00 0x00: it is re-encoded as 0xcc 0x00 to make room for 1 byte.
  auto Section = sectionWithSlack({{"k", 127, 3}}, 0, [](std::string &B) {
    reencodeValue(B, ".group_segment_fixed_size", {0xcd, 0x00, 0x00});
  });
  uint32_t OldDesc = descSize(Section);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 128));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_TRUE(R->SameSize);
  EXPECT_EQ(R->How, Method::Compacted);
  EXPECT_EQ(descSize(R->Bytes), OldDesc);
  size_t G = valueOffset(R->Bytes, ".group_segment_fixed_size");
  EXPECT_EQ(ArrayRef<uint8_t>(R->Bytes).slice(G, 2),
            ArrayRef<uint8_t>({0xcc, 0x00}));
  size_t S = valueOffset(R->Bytes, ".sgpr_count");
  EXPECT_EQ(ArrayRef<uint8_t>(R->Bytes).slice(S, 2),
            ArrayRef<uint8_t>({0xcc, 0x80}));
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::SGPRCount), 128u);
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::GroupSegmentFixedSize), 0u);
}

TEST(MetadataTest, CompactionOvershootGoesToPadding) {
  // Need 1 byte, no padding; the only over-wide integer is a 9-byte 0
  // (0xcf). The smallest saving that covers 1 byte is 0xcf -> 0xce (4
  // bytes); the 3 extra bytes become descriptor padding.
  auto Section = sectionWithSlack({{"k", 127, 3}}, 0, [](std::string &B) {
    reencodeValue(B, ".sgpr_spill_count",
                  {0xcf, 0, 0, 0, 0, 0, 0, 0, 0});
  });
  uint32_t OldDesc = descSize(Section);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 128));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_TRUE(R->SameSize);
  EXPECT_EQ(R->How, Method::Compacted);
  EXPECT_EQ(descSize(R->Bytes), OldDesc - 3);
  size_t Off = valueOffset(R->Bytes, ".sgpr_spill_count");
  EXPECT_EQ(ArrayRef<uint8_t>(R->Bytes).slice(Off, 5),
            ArrayRef<uint8_t>({0xce, 0, 0, 0, 0}));
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::SGPRCount), 128u);
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::SGPRSpillCount), 0u);
}

TEST(MetadataTest, CompactionKeepsSignedFamily) {
  // .vgpr_spill_count 0 as int32 (0xd2): compacted to int16 (0xd1), never
  // to a fixint, which LLVM's reader would type as unsigned.
  auto Section = sectionWithSlack({{"k", 255, 3}}, 0, [](std::string &B) {
    reencodeValue(B, ".vgpr_spill_count", {0xd2, 0, 0, 0, 0});
  });
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 256));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->How, Method::Compacted);
  size_t Off = valueOffset(R->Bytes, ".vgpr_spill_count");
  EXPECT_EQ(ArrayRef<uint8_t>(R->Bytes).slice(Off, 3),
            ArrayRef<uint8_t>({0xd1, 0, 0}));
  EXPECT_EQ(descSize(R->Bytes), descSize(Section) - 1);
}

TEST(MetadataTest, Growth255To256) {
  for (unsigned Slack : {1u, 0u}) {
    SCOPED_TRACE(Slack);
    auto Section = sectionWithSlack({{"k", 255, 3}}, Slack);
    auto MD = CodeObjectMetadata::parse(Section);
    ASSERT_OK(MD);
    EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 256));
    Expected<NoteRewrite> R = MD->rewrite();
    ASSERT_OK(R);
    EXPECT_EQ(R->SameSize, Slack == 1);
    EXPECT_EQ(R->How, Slack ? Method::PaddingSlack : Method::Relocate);
    size_t Off = valueOffset(R->Bytes, ".sgpr_count");
    EXPECT_EQ(ArrayRef<uint8_t>(R->Bytes).slice(Off, 3),
              ArrayRef<uint8_t>({0xcd, 0x01, 0x00}));
    EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::SGPRCount), 256u);
  }
}

TEST(MetadataTest, BatchOverSeveralKernels) {
  // Three kernels; 3 bytes of padding absorb two 1-byte growths.
  auto Section =
      sectionWithSlack({{"a", 10, 3}, {"b", 127, 3}, {"c", 100, 127}}, 3);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("a.kd", 12));  // in place
  EXPECT_NO_ERR(MD->setSGPRCount("b.kd", 130)); // grows by 1
  EXPECT_NO_ERR(MD->setVGPRCount("c.kd", 128)); // grows by 1
  EXPECT_NO_ERR(MD->setAGPRCount("c.kd", 4));   // in place
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_TRUE(R->SameSize);
  EXPECT_EQ(R->How, Method::PaddingSlack);
  EXPECT_EQ(descSize(R->Bytes), descSize(Section) + 2);
  auto New = CodeObjectMetadata::parse(R->Bytes);
  ASSERT_OK(New);
  ASSERT_EQ(New->kernels().size(), 3u);
  EXPECT_EQ(New->kernels()[0].SGPRCount, 12u);
  EXPECT_EQ(New->kernels()[1].SGPRCount, 130u);
  EXPECT_EQ(New->kernels()[2].VGPRCount, 128u);
  EXPECT_EQ(New->kernels()[2].AGPRCount, 4u);
  EXPECT_EQ(New->kernels()[2].SGPRCount, 100u);
  EXPECT_EQ(New->kernels()[1].VGPRCount, 3u);
  // A second rewrite of the result with the same values changes nothing.
  EXPECT_NO_ERR(New->setSGPRCount("b.kd", 130));
  Expected<NoteRewrite> R2 = New->rewrite();
  ASSERT_OK(R2);
  EXPECT_EQ(R2->How, Method::Unchanged);
  EXPECT_EQ(R2->Bytes, R->Bytes);
}

TEST(MetadataTest, AbsentKeyIsInserted) {
  auto Section = sectionWithSlack({{"a", 10, 3, /*WithAGPR=*/false}}, 0);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_FALSE(MD->findBySymbol("a.kd")->AGPRCount.has_value());
  EXPECT_NO_ERR(MD->setAGPRCount("a.kd", 8));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  // 1 + 11 + 1 bytes do not fit any slack here.
  EXPECT_FALSE(R->SameSize);
  EXPECT_EQ(R->How, Method::Relocate);
  EXPECT_EQ(descSize(R->Bytes), descSize(Section) + 13);
  EXPECT_EQ(reparsedValue(*R, "a.kd", KernelField::AGPRCount), 8u);
  EXPECT_EQ(reparsedValue(*R, "a.kd", KernelField::SGPRCount), 10u);
}

TEST(MetadataTest, OtherNotesAreKept) {
  std::string Blob = metadataBlob({{"k", 127, 3}}, "amdgcn-amd-amdhsa--gfx90a");
  std::vector<uint8_t> S;
  appendNote(S, "GNU", 3, {1, 2, 3, 4});
  appendNote(S, "AMDGPU", 32, arrayRefFromStringRef(Blob));
  appendNote(S, "LLVM", 7, {9});
  auto MD = CodeObjectMetadata::parse(S);
  ASSERT_OK(MD);
  EXPECT_EQ(MD->noteOffset(), 20u);
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 1000));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  Expected<std::vector<NoteRef>> Notes = parseNotes(R->Bytes);
  ASSERT_OK(Notes);
  ASSERT_EQ(Notes->size(), 3u);
  EXPECT_EQ((*Notes)[0].Desc, ArrayRef<uint8_t>({1, 2, 3, 4}));
  EXPECT_EQ((*Notes)[2].Name, "LLVM");
  EXPECT_EQ((*Notes)[2].Desc, ArrayRef<uint8_t>({9}));
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::SGPRCount), 1000u);
}

//===-- errors ------------------------------------------------------------===//

TEST(MetadataTest, NoteErrorsPropagate) {
  std::vector<uint8_t> S(8, 0);
  EXPECT_EQ(parseError(S),
            "note at offset 0x0: truncated header (0x8 bytes left, need 0xc)");
  std::vector<uint8_t> T = noteSection("\x80");
  T[0] = 0x40; // namesz
  EXPECT_EQ(parseError(T), "note at offset 0x0: name size 0x40 extends past "
                           "end of section (size 0x18)");
  std::vector<uint8_t> U = noteSection("\x80");
  U[4] = 0x40; // descsz
  EXPECT_EQ(parseError(U), "note at offset 0x0: descriptor size 0x40 extends "
                           "past end of section (size 0x18)");
}

TEST(MetadataTest, MsgpackGarbage) {
  EXPECT_EQ(parseBlobError(rawBlob({0xc1, 0x00})),
            "metadata: note at offset 0x0: malformed msgpack payload");
  EXPECT_EQ(parseBlobError(rawBlob({0x82, 0xa1, 'a'})),
            "metadata: note at offset 0x0: malformed msgpack payload");
  EXPECT_EQ(parseBlobError(""),
            "metadata: note at offset 0x0: malformed msgpack payload");
  // A duplicate key is rejected by the msgpack reader.
  EXPECT_EQ(parseBlobError(rawBlob({0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02})),
            "metadata: note at offset 0x0: malformed msgpack payload");
}

TEST(MetadataTest, StructureErrors) {
  EXPECT_EQ(parseBlobError(rawBlob({0x92, 0x01, 0x02})),
            "metadata: root is not a map");
  // {"amdhsa.kernels": 1}
  std::string NotArray = "\x81\xae" "amdhsa.kernels" "\x01";
  EXPECT_EQ(parseBlobError(NotArray),
            "metadata: 'amdhsa.kernels' is not an array");
  // {"amdhsa.kernels": [1]}
  std::string NotMap = "\x81\xae" "amdhsa.kernels" "\x91\x01";
  EXPECT_EQ(parseBlobError(NotMap), "metadata: kernel 0 is not a map");
  // {"amdhsa.target": 1}
  std::string BadTarget = "\x81\xad" "amdhsa.target" "\x01";
  EXPECT_EQ(parseBlobError(BadTarget),
            "metadata: 'amdhsa.target' is not a string");
  // {"amdhsa.version": [1]}
  std::string BadVersion = "\x81\xae" "amdhsa.version" "\x91\x01";
  EXPECT_EQ(parseBlobError(BadVersion), "metadata: 'amdhsa.version' is not "
                                        "an array of two unsigned integers");
}

/// Builds a 4-kernel document and lets \p Edit break kernel 3.
std::string brokenKernelBlob(
    std::function<void(msgpack::Document &, msgpack::MapDocNode &)> Edit) {
  msgpack::Document D;
  msgpack::MapDocNode Root = D.getRoot().getMap(/*Convert=*/true);
  msgpack::ArrayDocNode KA = D.getArrayNode();
  for (unsigned I = 0; I != 4; ++I) {
    msgpack::MapDocNode M = kernelNode(D, {"k" + std::to_string(I)});
    if (I == 3)
      Edit(D, M);
    KA.push_back(M);
  }
  Root["amdhsa.kernels"] = KA;
  std::string Blob;
  D.writeToBlob(Blob);
  return Blob;
}

TEST(MetadataTest, KernelFieldErrors) {
  EXPECT_EQ(parseBlobError(brokenKernelBlob(
                [](msgpack::Document &, msgpack::MapDocNode &M) {
                  M.erase(M.find(".symbol"));
                })),
            "metadata: kernel 3: missing '.symbol'");
  EXPECT_EQ(parseBlobError(brokenKernelBlob(
                [](msgpack::Document &D, msgpack::MapDocNode &M) {
                  M[".name"] = D.getNode(uint64_t(1));
                })),
            "metadata: kernel 3: '.name' is not a string");
  EXPECT_EQ(parseBlobError(brokenKernelBlob(
                [](msgpack::Document &D, msgpack::MapDocNode &M) {
                  M[".sgpr_count"] = D.getNode("ten");
                })),
            "metadata: kernel 3: '.sgpr_count' is not an unsigned integer");
  EXPECT_EQ(parseBlobError(brokenKernelBlob(
                [](msgpack::Document &D, msgpack::MapDocNode &M) {
                  M[".vgpr_count"] = D.getNode(int64_t(-1));
                })),
            "metadata: kernel 3: '.vgpr_count' is not an unsigned integer");
  EXPECT_EQ(parseBlobError(brokenKernelBlob(
                [](msgpack::Document &D, msgpack::MapDocNode &M) {
                  M[".uses_dynamic_stack"] = D.getNode(uint64_t(0));
                })),
            "metadata: kernel 3: '.uses_dynamic_stack' is not a boolean");
  EXPECT_EQ(parseBlobError(brokenKernelBlob(
                [](msgpack::Document &D, msgpack::MapDocNode &M) {
                  M[".symbol"] = D.getNode("k1.kd");
                })),
            "metadata: kernels 1 and 3 have the same symbol 'k1.kd'");
}

TEST(MetadataTest, TwoMetadataNotes) {
  std::string Blob = metadataBlob({{"k"}}, "amdgcn-amd-amdhsa--gfx90a");
  std::vector<uint8_t> S = noteSection(Blob);
  size_t First = S.size();
  appendNote(S, "AMDGPU", 32, arrayRefFromStringRef(Blob));
  EXPECT_EQ(parseError(S),
            "metadata: more than one NT_AMDGPU_METADATA note (at offsets 0x0 "
            "and " + ("0x" + utohexstr(First, true)) + ")");
}

//===-- a real note -------------------------------------------------------===//

// The .note section of a gfx90a code object built with Debian clang 22.1.8:
//   echo '__kernel void nop(void) {}' > e.cl
//   clang --target=amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -O2 -c e.cl -o e.o
//   ld.lld -shared e.o -o e.so
//   llvm-objcopy -O binary --only-section=.note e.so e.note && xxd -i e.note
// One note: owner "AMDGPU", type 32, n_descsz 0x1a6 (2 bytes of padding);
// `llvm-readelf --notes e.so` shows .sgpr_count 4, .vgpr_count 0,
// .max_flat_workgroup_size 256 (0xcd 0x01 0x00), .wavefront_size 64.
const uint8_t RealNote[] = {
  0x07, 0x00, 0x00, 0x00, 0xa6, 0x01, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00,
  0x41, 0x4d, 0x44, 0x47, 0x50, 0x55, 0x00, 0x00, 0x83, 0xae, 0x61, 0x6d,
  0x64, 0x68, 0x73, 0x61, 0x2e, 0x6b, 0x65, 0x72, 0x6e, 0x65, 0x6c, 0x73,
  0x91, 0xde, 0x00, 0x12, 0xab, 0x2e, 0x61, 0x67, 0x70, 0x72, 0x5f, 0x63,
  0x6f, 0x75, 0x6e, 0x74, 0x00, 0xa5, 0x2e, 0x61, 0x72, 0x67, 0x73, 0x90,
  0xb9, 0x2e, 0x67, 0x72, 0x6f, 0x75, 0x70, 0x5f, 0x73, 0x65, 0x67, 0x6d,
  0x65, 0x6e, 0x74, 0x5f, 0x66, 0x69, 0x78, 0x65, 0x64, 0x5f, 0x73, 0x69,
  0x7a, 0x65, 0x00, 0xb6, 0x2e, 0x6b, 0x65, 0x72, 0x6e, 0x61, 0x72, 0x67,
  0x5f, 0x73, 0x65, 0x67, 0x6d, 0x65, 0x6e, 0x74, 0x5f, 0x61, 0x6c, 0x69,
  0x67, 0x6e, 0x04, 0xb5, 0x2e, 0x6b, 0x65, 0x72, 0x6e, 0x61, 0x72, 0x67,
  0x5f, 0x73, 0x65, 0x67, 0x6d, 0x65, 0x6e, 0x74, 0x5f, 0x73, 0x69, 0x7a,
  0x65, 0x00, 0xa9, 0x2e, 0x6c, 0x61, 0x6e, 0x67, 0x75, 0x61, 0x67, 0x65,
  0xa8, 0x4f, 0x70, 0x65, 0x6e, 0x43, 0x4c, 0x20, 0x43, 0xb1, 0x2e, 0x6c,
  0x61, 0x6e, 0x67, 0x75, 0x61, 0x67, 0x65, 0x5f, 0x76, 0x65, 0x72, 0x73,
  0x69, 0x6f, 0x6e, 0x92, 0x01, 0x02, 0xb8, 0x2e, 0x6d, 0x61, 0x78, 0x5f,
  0x66, 0x6c, 0x61, 0x74, 0x5f, 0x77, 0x6f, 0x72, 0x6b, 0x67, 0x72, 0x6f,
  0x75, 0x70, 0x5f, 0x73, 0x69, 0x7a, 0x65, 0xcd, 0x01, 0x00, 0xa5, 0x2e,
  0x6e, 0x61, 0x6d, 0x65, 0xa3, 0x6e, 0x6f, 0x70, 0xbb, 0x2e, 0x70, 0x72,
  0x69, 0x76, 0x61, 0x74, 0x65, 0x5f, 0x73, 0x65, 0x67, 0x6d, 0x65, 0x6e,
  0x74, 0x5f, 0x66, 0x69, 0x78, 0x65, 0x64, 0x5f, 0x73, 0x69, 0x7a, 0x65,
  0x00, 0xab, 0x2e, 0x73, 0x67, 0x70, 0x72, 0x5f, 0x63, 0x6f, 0x75, 0x6e,
  0x74, 0x04, 0xb1, 0x2e, 0x73, 0x67, 0x70, 0x72, 0x5f, 0x73, 0x70, 0x69,
  0x6c, 0x6c, 0x5f, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x00, 0xa7, 0x2e, 0x73,
  0x79, 0x6d, 0x62, 0x6f, 0x6c, 0xa6, 0x6e, 0x6f, 0x70, 0x2e, 0x6b, 0x64,
  0xb8, 0x2e, 0x75, 0x6e, 0x69, 0x66, 0x6f, 0x72, 0x6d, 0x5f, 0x77, 0x6f,
  0x72, 0x6b, 0x5f, 0x67, 0x72, 0x6f, 0x75, 0x70, 0x5f, 0x73, 0x69, 0x7a,
  0x65, 0x01, 0xb3, 0x2e, 0x75, 0x73, 0x65, 0x73, 0x5f, 0x64, 0x79, 0x6e,
  0x61, 0x6d, 0x69, 0x63, 0x5f, 0x73, 0x74, 0x61, 0x63, 0x6b, 0xc2, 0xab,
  0x2e, 0x76, 0x67, 0x70, 0x72, 0x5f, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x00,
  0xb1, 0x2e, 0x76, 0x67, 0x70, 0x72, 0x5f, 0x73, 0x70, 0x69, 0x6c, 0x6c,
  0x5f, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x00, 0xaf, 0x2e, 0x77, 0x61, 0x76,
  0x65, 0x66, 0x72, 0x6f, 0x6e, 0x74, 0x5f, 0x73, 0x69, 0x7a, 0x65, 0x40,
  0xad, 0x61, 0x6d, 0x64, 0x68, 0x73, 0x61, 0x2e, 0x74, 0x61, 0x72, 0x67,
  0x65, 0x74, 0xb9, 0x61, 0x6d, 0x64, 0x67, 0x63, 0x6e, 0x2d, 0x61, 0x6d,
  0x64, 0x2d, 0x61, 0x6d, 0x64, 0x68, 0x73, 0x61, 0x2d, 0x2d, 0x67, 0x66,
  0x78, 0x39, 0x30, 0x61, 0xae, 0x61, 0x6d, 0x64, 0x68, 0x73, 0x61, 0x2e,
  0x76, 0x65, 0x72, 0x73, 0x69, 0x6f, 0x6e, 0x92, 0x01, 0x02, 0x00, 0x00
};

TEST(MetadataTest, RealNoteParses) {
  ASSERT_EQ(sizeof(RealNote), 0x1bcu);
  auto MD = CodeObjectMetadata::parse(RealNote);
  ASSERT_OK(MD);
  EXPECT_EQ(MD->target(), "amdgcn-amd-amdhsa--gfx90a");
  EXPECT_EQ(MD->version()->Major, 1u);
  EXPECT_EQ(MD->version()->Minor, 2u);
  ASSERT_EQ(MD->kernels().size(), 1u);
  const KernelMD *K = MD->findBySymbol("nop.kd");
  ASSERT_NE(K, nullptr);
  EXPECT_EQ(K->Name, "nop");
  EXPECT_EQ(K->SGPRCount, 4u);
  EXPECT_EQ(K->VGPRCount, 0u);
  EXPECT_EQ(K->AGPRCount, 0u);
  EXPECT_EQ(K->KernargSegmentSize, 0u);
  EXPECT_EQ(K->GroupSegmentFixedSize, 0u);
  EXPECT_EQ(K->PrivateSegmentFixedSize, 0u);
  EXPECT_EQ(K->MaxFlatWorkgroupSize, 256u);
  EXPECT_EQ(K->WavefrontSize, 64u);
  EXPECT_EQ(K->SGPRSpillCount, 0u);
  EXPECT_EQ(K->VGPRSpillCount, 0u);
  EXPECT_EQ(K->UsesDynamicStack, false);
}

TEST(MetadataTest, RealNoteRewrites) {
  const size_t Off = valueOffset(RealNote, ".sgpr_count");
  ASSERT_EQ(RealNote[Off], 4);
  struct Case {
    uint64_t Value;
    Method How;
    uint32_t DescSize;
  } Cases[] = {
      {6, Method::InPlace, 0x1a6},
      {130, Method::PaddingSlack, 0x1a7},   // fixint -> 0xcc
      {300, Method::PaddingSlack, 0x1a8},   // fixint -> 0xcd
      {70000, Method::Relocate, 0x1aa},     // fixint -> 0xce
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Value);
    auto MD = CodeObjectMetadata::parse(RealNote);
    ASSERT_OK(MD);
    EXPECT_NO_ERR(MD->setSGPRCount("nop.kd", C.Value));
    Expected<NoteRewrite> R = MD->rewrite();
    ASSERT_OK(R);
    EXPECT_EQ(R->How, C.How);
    EXPECT_EQ(R->SameSize, C.How != Method::Relocate);
    EXPECT_EQ(descSize(R->Bytes), C.DescSize);
    if (R->SameSize)
      EXPECT_EQ(R->Bytes.size(), sizeof(RealNote));
    if (C.How == Method::InPlace)
      EXPECT_EQ(diffOffsets(RealNote, R->Bytes), std::vector<size_t>{Off});
    EXPECT_EQ(reparsedValue(*R, "nop.kd", KernelField::SGPRCount), C.Value);
  }
}

} // namespace

namespace {

TEST(MetadataTest, MutatedRealNoteNeverCrashes) {
  // Every byte of the real note replaced by a few values: parse either
  // fails cleanly or succeeds, and a rewrite of a parsed note either fails
  // cleanly or passes its self-check. Run under the sanitizer build.
  unsigned Parsed = 0;
  for (size_t I = 0; I != sizeof(RealNote); ++I) {
    for (uint8_t V : {0x00, 0x7f, 0x80, 0xcc, 0xcf, 0xdf, 0xff}) {
      std::vector<uint8_t> S(std::begin(RealNote), std::end(RealNote));
      S[I] = V;
      Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(S);
      if (!MD) {
        consumeError(MD.takeError());
        continue;
      }
      ++Parsed;
      std::vector<std::string> Symbols;
      for (const KernelMD &K : MD->kernels())
        Symbols.push_back(K.Symbol);
      for (const std::string &Sym : Symbols)
        EXPECT_NO_ERR(MD->setSGPRCount(Sym, 200));
      Expected<NoteRewrite> R = MD->rewrite();
      if (!R) {
        std::string Msg = toString(R.takeError());
        EXPECT_EQ(Msg.find("internal error"), std::string::npos) << Msg;
      }
    }
  }
  EXPECT_GT(Parsed, 0u);
}

} // namespace

//===-- the streaming reader ----------------------------------------------===//

namespace {

/// Whether Document::readFromBlob would meet a map or an array as a map key.
/// It does not descend into such a key and crashes comparing two of them,
/// so these inputs cannot be given to it.
bool documentMeetsContainerKey(StringRef B) {
  msgpack::Reader R(B);
  struct Level {
    bool IsMap;
    uint64_t Left; // tokens left, keys included
  };
  SmallVector<Level, 8> Stack;
  do {
    msgpack::Object O;
    Expected<bool> Got = R.read(O);
    if (!Got) {
      consumeError(Got.takeError());
      return false;
    }
    if (!*Got)
      return false;
    const bool Container =
        O.Kind == msgpack::Type::Map || O.Kind == msgpack::Type::Array;
    const bool IsKey = !Stack.empty() && Stack.back().IsMap &&
                       Stack.back().Left % 2 == 0;
    if (!Stack.empty())
      --Stack.back().Left;
    if (IsKey && Container)
      return true;
    if (Container)
      Stack.push_back({O.Kind == msgpack::Type::Map,
                       (O.Kind == msgpack::Type::Map ? 2 : 1) *
                           uint64_t(O.Length)});
    while (!Stack.empty() && Stack.back().Left == 0)
      Stack.pop_back();
  } while (!Stack.empty());
  return false;
}

bool isMalformed(const std::string &Msg) {
  return StringRef(Msg).ends_with("malformed msgpack payload") ||
         StringRef(Msg).ends_with(
             "malformed msgpack payload: a map key is an array or a map");
}

TEST(MetadataTest, AcceptsWhatDocumentAccepts) {
  // The reader accepts exactly the payloads msgpack::Document accepts. Every
  // byte of a two-kernel blob (with arguments: nested maps in arrays) is
  // replaced by values that turn it into other types, lengths and
  // containers; bytes are also cut off the end.
  msgpack::Document D;
  msgpack::MapDocNode Root = D.getRoot().getMap(/*Convert=*/true);
  msgpack::ArrayDocNode KA = D.getArrayNode();
  for (unsigned I = 0; I != 2; ++I) {
    msgpack::MapDocNode K = kernelNode(D, {"k" + std::to_string(I)});
    msgpack::MapDocNode Arg = D.getMapNode();
    Arg[".offset"] = D.getNode(uint64_t(0));
    Arg[".size"] = D.getNode(uint64_t(8));
    Arg[".value_kind"] = D.getNode("global_buffer");
    K[".args"].getArray(/*Convert=*/true).push_back(Arg);
    KA.push_back(K);
  }
  Root["amdhsa.kernels"] = KA;
  std::string Blob;
  D.writeToBlob(Blob);

  unsigned Checked = 0, Accepted = 0, ContainerKeys = 0;
  auto Check = [&](const std::string &B) {
    std::string Err = parseBlobError(B);
    ++Checked;
    if (documentMeetsContainerKey(B)) {
      ++ContainerKeys;
      EXPECT_TRUE(isMalformed(Err)) << toHex(B) << ": " << Err;
      return;
    }
    msgpack::Document Ref;
    bool RefOK = !B.empty() && Ref.readFromBlob(B, /*Multi=*/false);
    Accepted += !isMalformed(Err);
    EXPECT_EQ(RefOK, !isMalformed(Err)) << toHex(B) << ": " << Err;
  };
  for (size_t I = 0; I != Blob.size(); ++I) {
    for (uint8_t V : {0x00, 0x01, 0x7f, 0xa1, 0xc0, 0xc1, 0xc3, 0xca, 0xcc,
                      0xcf, 0xd0, 0xd4, 0xd9, 0xdc, 0xff}) {
      std::string B = Blob;
      B[I] = char(V);
      Check(B);
    }
    Check(Blob.substr(0, I));
  }
  EXPECT_GT(Accepted, 100u);
  EXPECT_GT(Checked - Accepted, 100u);
  EXPECT_GT(ContainerKeys, 0u);
}

TEST(MetadataTest, ContainerKeyIsRejected) {
  // Document reads [] as a key without its elements and cannot order two
  // container keys; the reader rejects them as malformed, and says why.
  EXPECT_EQ(parseBlobError(rawBlob({0x81, 0x90, 0x01})),
            "metadata: note at offset 0x0: malformed msgpack payload: a map "
            "key is an array or a map");
  EXPECT_EQ(parseBlobError(rawBlob({0x81, 0xa1, 'a', 0x81, 0x80, 0x01})),
            "metadata: note at offset 0x0: malformed msgpack payload: a map "
            "key is an array or a map");
}

TEST(MetadataTest, DuplicateKeys) {
  auto Malformed = "metadata: note at offset 0x0: malformed msgpack payload";
  // Keys out of order are fine; a repeated one is not, at any depth.
  EXPECT_EQ(parseBlobError(rawBlob({0x82, 0xa1, 'b', 0x01, 0xa1, 'a', 0x02})),
            "<no error>");
  EXPECT_EQ(parseBlobError(rawBlob(
                {0x83, 0xa1, 'b', 0x01, 0xa1, 'a', 0x02, 0xa1, 'b', 0x03})),
            Malformed);
  EXPECT_EQ(parseBlobError(rawBlob({0x81, 0xa1, 'x', 0x91, 0x82, 0xa1, 'a',
                                    0x01, 0xa1, 'a', 0x02})),
            Malformed);
  // Keys of different types differ: signed 1, unsigned 1, "1", bin "1".
  EXPECT_EQ(parseBlobError(rawBlob({0x84, 0xd0, 0x01, 0xc0, 0x01, 0xc0, 0xa1,
                                    '1', 0xc0, 0xc4, 0x01, '1', 0xc0})),
            "<no error>");
  // Keys equal as DocNode orders them: nil and nil, 0.0 and -0.0.
  EXPECT_EQ(parseBlobError(rawBlob({0x82, 0xc0, 0x01, 0xc0, 0x02})), Malformed);
  EXPECT_EQ(parseBlobError(rawBlob({0x82, 0xca, 0, 0, 0, 0, 0x01, 0xca, 0x80,
                                    0, 0, 0, 0x02})),
            Malformed);
  // The same key in two different maps is fine.
  EXPECT_EQ(parseBlobError(rawBlob({0x82, 0xa1, 'a', 0x81, 0xa1, 'a', 0x01,
                                    0xa1, 'b', 0x81, 0xa1, 'a', 0x01})),
            "<no error>");
}

TEST(MetadataTest, OtherPayloadRules) {
  auto Malformed = "metadata: note at offset 0x0: malformed msgpack payload";
  // An extension object anywhere.
  EXPECT_EQ(parseBlobError(rawBlob({0x81, 0xa1, 'a', 0xd4, 0x01, 0x02})),
            Malformed);
  // Bytes after the top-level map are ignored, as by Document.
  EXPECT_EQ(parseBlobError(rawBlob({0x80, 0xc1, 0xc1})), "<no error>");
  // Deep nesting of an unknown value needs no deep recursion.
  std::string Deep = "\x81\xa1x" + std::string(200000, '\x91') + "\x90";
  EXPECT_EQ(parseBlobError(Deep), "<no error>");
  // A malformed payload wins over an earlier semantic error.
  std::string BadThenTruncated =
      "\x82\xad" "amdhsa.target" "\x01" "\xa1x" "\x92\x01";
  EXPECT_EQ(parseBlobError(BadThenTruncated), Malformed);
}

TEST(MetadataTest, ErrorOrderIgnoresKeyOrder) {
  // amdhsa.kernels (kernel 0 is not a map) comes before a bad
  // amdhsa.version in the document; the version error is reported first,
  // as before.
  std::string Blob = "\x82\xae" "amdhsa.kernels" "\x91\x01"
                     "\xae" "amdhsa.version" "\x91\x01";
  EXPECT_EQ(parseBlobError(Blob), "metadata: 'amdhsa.version' is not an "
                                  "array of two unsigned integers");
  // Within a kernel, '.name' is checked before '.symbol' and the fields.
  EXPECT_EQ(parseBlobError(brokenKernelBlob(
                [](msgpack::Document &D, msgpack::MapDocNode &M) {
                  M[".agpr_count"] = D.getNode("x");
                  M[".name"] = D.getNode(uint64_t(1));
                })),
            "metadata: kernel 3: '.name' is not a string");
}

//===-- the rewrite self-check --------------------------------------------===//

/// A two-kernel note with .sgpr_count of k1 changed, its rewrite and the
/// metadata it was made from.
struct Rewritten {
  std::vector<uint8_t> Section;
  std::optional<CodeObjectMetadata> MD;
  NoteRewrite R;
};

Rewritten rewriteSGPR(std::function<void(CodeObjectMetadata &)> Change) {
  Rewritten W;
  W.Section = sectionWithSlack({{"k0", 10, 3}, {"k1", 10, 3}}, 0);
  Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(W.Section);
  if (!MD) {
    ADD_FAILURE() << toString(MD.takeError());
    return W;
  }
  W.MD.emplace(std::move(*MD));
  Change(*W.MD);
  Expected<NoteRewrite> R = W.MD->rewrite();
  if (!R) {
    ADD_FAILURE() << toString(R.takeError());
    return W;
  }
  W.R = std::move(*R);
  return W;
}

std::string verifyError(const CodeObjectMetadata &MD,
                        ArrayRef<uint8_t> Section) {
  Error E = MD.verifyRewrite(Section);
  return E ? toString(std::move(E)) : "<no error>";
}

TEST(MetadataTest, SelfCheckAcceptsTheRewrite) {
  Rewritten W = rewriteSGPR([](CodeObjectMetadata &MD) {
    EXPECT_NO_ERR(MD.setSGPRCount("k1.kd", 20));
  });
  ASSERT_TRUE(W.MD);
  EXPECT_EQ(W.R.How, Method::InPlace);
  EXPECT_EQ(verifyError(*W.MD, W.R.Bytes), "<no error>");
  // The unchanged input lacks the change.
  EXPECT_EQ(verifyError(*W.MD, W.Section),
            "metadata: internal error: rewritten note fails self-check: "
            "kernel 1: '.sgpr_count' does not have the expected value");
}

TEST(MetadataTest, SelfCheckCatchesValuesNobodyReads) {
  // Corruptions the field comparison cannot see: only the token streams
  // differ.
  Rewritten W = rewriteSGPR([](CodeObjectMetadata &MD) {
    EXPECT_NO_ERR(MD.setSGPRCount("k1.kd", 20));
  });
  ASSERT_TRUE(W.MD);
  const size_t DescOff = 20; // "AMDGPU\0" padded to 8 after the header
  auto Corrupt = [&](StringRef Key, unsigned Nth, uint8_t V) {
    std::vector<uint8_t> B = W.R.Bytes;
    size_t Off = valueOffset(ArrayRef<uint8_t>(B).drop_front(DescOff), Key,
                             Nth);
    EXPECT_NE(Off, 0u);
    B[DescOff + Off] = V;
    return verifyError(*W.MD, B);
  };
  // .kernarg_segment_align of k0: 4 -> 5.
  EXPECT_NE(Corrupt(".kernarg_segment_align", 0, 0x05)
                .find("fails self-check: msgpack object"),
            std::string::npos);
  // .language of k1: "OpenCL C" -> "OpenCL D" (first string byte -> 'P').
  std::string LangErr = [&] {
    std::vector<uint8_t> B = W.R.Bytes;
    size_t Off = valueOffset(ArrayRef<uint8_t>(B).drop_front(DescOff),
                             ".language", 1);
    B[DescOff + Off + 1] = 'P';
    return verifyError(*W.MD, B);
  }();
  EXPECT_EQ(LangErr.find("metadata: internal error: rewritten note fails "
                         "self-check: msgpack object "),
            0u)
      << LangErr;
  EXPECT_NE(LangErr.find("differs from the reference"), std::string::npos);
  // .uniform_work_group_size of k0: unsigned 1 -> signed 1 (0xd0 0x01 would
  // need a byte; a negative fixint keeps the size).
  EXPECT_NE(Corrupt(".uniform_work_group_size", 0, 0xff)
                .find("differs from the reference"),
            std::string::npos);
}

TEST(MetadataTest, SelfCheckCatchesWrongValues) {
  Rewritten W = rewriteSGPR([](CodeObjectMetadata &MD) {
    EXPECT_NO_ERR(MD.setSGPRCount("k1.kd", 20));
  });
  ASSERT_TRUE(W.MD);
  const size_t DescOff = 20;
  std::vector<uint8_t> B = W.R.Bytes;
  // k0's .vgpr_count (a field) and k1's new .sgpr_count.
  size_t V0 = DescOff + valueOffset(ArrayRef<uint8_t>(B).drop_front(DescOff),
                                    ".vgpr_count", 0);
  B[V0] = 4;
  EXPECT_EQ(verifyError(*W.MD, B),
            "metadata: internal error: rewritten note fails self-check: "
            "kernel 0: '.vgpr_count' does not have the expected value");
  B = W.R.Bytes;
  size_t S1 = DescOff + valueOffset(ArrayRef<uint8_t>(B).drop_front(DescOff),
                                    ".sgpr_count", 1);
  ASSERT_EQ(B[S1], 20);
  B[S1] = 21;
  EXPECT_EQ(verifyError(*W.MD, B),
            "metadata: internal error: rewritten note fails self-check: "
            "kernel 1: '.sgpr_count' does not have the expected value");
  // A byte outside the descriptor.
  B = W.R.Bytes;
  B[8] ^= 1; // n_type
  EXPECT_NE(verifyError(*W.MD, B).find("fails self-check"), std::string::npos);
}

TEST(MetadataTest, SelfCheckOfAddedKeys) {
  auto NoAGPR = [] {
    return sectionWithSlack({{"k0", 10, 3, /*WithAGPR=*/false},
                             {"k1", 10, 3, /*WithAGPR=*/false}},
                            0);
  };
  std::vector<uint8_t> Section = NoAGPR();
  Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setAGPRCount("k1.kd", 4));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(verifyError(*MD, R->Bytes), "<no error>");

  // The same bytes against a change of k0: k1 has a key it should not have
  // and k0 lacks one.
  Expected<CodeObjectMetadata> Other = CodeObjectMetadata::parse(Section);
  ASSERT_OK(Other);
  EXPECT_NO_ERR(Other->setAGPRCount("k0.kd", 4));
  std::string Err = verifyError(*Other, R->Bytes);
  EXPECT_EQ(Err.find("metadata: internal error: rewritten note fails "
                     "self-check: "),
            0u)
      << Err;

  // Both kernels changed, only k1's key added: k0 lacks its added key.
  Expected<CodeObjectMetadata> Both = CodeObjectMetadata::parse(Section);
  ASSERT_OK(Both);
  EXPECT_NO_ERR(Both->setAGPRCount("k0.kd", 4));
  EXPECT_NO_ERR(Both->setAGPRCount("k1.kd", 4));
  EXPECT_EQ(verifyError(*Both, R->Bytes),
            "metadata: internal error: rewritten note fails self-check: "
            "kernel 0: '.agpr_count' does not have the expected value");
}

} // namespace
