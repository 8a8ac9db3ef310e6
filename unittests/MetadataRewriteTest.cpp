//===- unittests/MetadataRewriteTest.cpp - Editing AMDGPU metadata notes --===//
//
// setSGPRCount() and rewrite(): values written in place, widened into the
// descriptor's padding, or refused with a NoteGrowthError; edits in the note
// that describes each kernel; and the self-check (verifyRewrite), which must
// catch every corruption of a rewrite.
//
//===----------------------------------------------------------------------===//

#include "MetadataTestUtil.h"

#include "hotswap/AMDGPU/Metadata.h"
#include "hotswap/AMDGPU/Notes.h"

#include "llvm/ADT/StringExtras.h"
#include "gtest/gtest.h"

using namespace llvm;
using namespace hotswap::amdgpu;
using namespace hotswap::amdgpu::testutil;
using Method = NoteRewrite::Method;

namespace {

TEST(MetadataRewriteTest, SameValueRecordsNothing) {
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

TEST(MetadataRewriteTest, SetterErrors) {
  auto MD = CodeObjectMetadata::parse(
      sectionWithSlack({{"k"}, {"n", 1, 1, true, /*WithSGPR=*/false}}, 0));
  ASSERT_OK(MD);
  EXPECT_EQ(toString(MD->setSGPRCount("k", 1)),
            "metadata: no kernel with symbol 'k'");
  EXPECT_FALSE(MD->hasPendingChanges());
  // A key the kernel lacks is added, which only a growing rewrite can do.
  EXPECT_FALSE(MD->findBySymbol("n.kd")->SGPRCount.has_value());
  EXPECT_NO_ERR(MD->setSGPRCount("n.kd", 1));
  EXPECT_TRUE(MD->hasPendingChanges());
  Error E = MD->rewrite().takeError();
  ASSERT_TRUE(E.isA<NoteGrowthError>());
  handleAllErrors(std::move(E), [](const NoteGrowthError &G) {
    EXPECT_EQ(G.Symbol, "n.kd");
    EXPECT_EQ(G.Field, KernelField::SGPRCount);
  });
}

TEST(MetadataRewriteTest, InPlaceFixint5To6) {
  auto Section = sectionWithSlack({{"k", 5, 3}}, 0);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 6));
  EXPECT_TRUE(MD->hasPendingChanges());
  EXPECT_EQ(MD->findBySymbol("k.kd")->SGPRCount, 6u);
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->How, Method::InPlace);
  size_t Off = valueOffset(Section, ".sgpr_count");
  EXPECT_EQ(diffOffsets(Section, R->Bytes), std::vector<size_t>{Off});
  EXPECT_EQ(R->Bytes[Off], 6);
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::SGPRCount), 6u);
}

TEST(MetadataRewriteTest, InPlaceKeepsWideEncoding) {
  // .sgpr_count 300 is 0xcd 0x01 0x2c; 5 is written as 0xcd 0x00 0x05.
  // .sgpr_count 200 is 0xcc 0xc8; 100 is written as 0xcc 0x64.
  auto Section = sectionWithSlack({{"a", 300}, {"b", 200}}, 0);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("a.kd", 5));
  EXPECT_NO_ERR(MD->setSGPRCount("b.kd", 100));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->How, Method::InPlace);
  size_t A = valueOffset(Section, ".sgpr_count", 0);
  size_t B = valueOffset(Section, ".sgpr_count", 1);
  EXPECT_EQ(diffOffsets(Section, R->Bytes),
            (std::vector<size_t>{A + 1, A + 2, B + 1}));
  EXPECT_EQ(ArrayRef<uint8_t>(R->Bytes).slice(A, 3),
            ArrayRef<uint8_t>({0xcd, 0x00, 0x05}));
  EXPECT_EQ(ArrayRef<uint8_t>(R->Bytes).slice(B, 2),
            ArrayRef<uint8_t>({0xcc, 0x64}));
  EXPECT_EQ(reparsedValue(*R, "a.kd", KernelField::SGPRCount), 5u);
  EXPECT_EQ(reparsedValue(*R, "b.kd", KernelField::SGPRCount), 100u);
}

TEST(MetadataRewriteTest, SignedEncodingKeepsItsFamily) {
  // A producer may encode .sgpr_count as int8 (0xd0): still unsigned-valued.
  auto Section = sectionWithSlack({{"k", 5, 3}}, 1, [](std::string &B) {
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
  // 200 needs int16 (0xd1), not uint8: one byte of the padding.
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 200));
  R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->How, Method::PaddingSlack);
  EXPECT_EQ(ArrayRef<uint8_t>(R->Bytes).slice(Off, 3),
            ArrayRef<uint8_t>({0xd1, 0x00, 200}));
}

TEST(MetadataRewriteTest, Growth127To128UsesPadding) {
  auto Section = sectionWithSlack({{"k", 127, 3}}, 1);
  uint32_t OldDesc = descSize(Section);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 128));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
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

TEST(MetadataRewriteTest, GrowthWithoutPaddingFails) {
  // No padding left; an over-wide integer elsewhere
  // (.group_segment_fixed_size 0 as 0xcd 0x00 0x00) is not touched either.
  auto Section = sectionWithSlack({{"k", 127, 3}}, 0, [](std::string &B) {
    reencodeValue(B, ".group_segment_fixed_size", {0xcd, 0x00, 0x00});
  });
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 128));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_FALSE(bool(R));
  Error E = R.takeError();
  ASSERT_TRUE(E.isA<NoteGrowthError>());
  handleAllErrors(std::move(E), [](const NoteGrowthError &G) {
    EXPECT_EQ(G.Symbol, "k.kd");
    EXPECT_EQ(G.Field, KernelField::SGPRCount);
    EXPECT_EQ(G.Value, 128u);
    EXPECT_EQ(G.NoteOffset, 0u);
    EXPECT_EQ(G.message(),
              "metadata: kernel 'k.kd': '.sgpr_count' 128 does not fit: the "
              "note at offset 0x0 would have to grow, and it is loaded "
              "memory");
  });
}

TEST(MetadataRewriteTest, Growth255To256) {
  for (unsigned Slack : {1u, 0u}) {
    SCOPED_TRACE(Slack);
    auto Section = sectionWithSlack({{"k", 255, 3}}, Slack);
    auto MD = CodeObjectMetadata::parse(Section);
    ASSERT_OK(MD);
    EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 256));
    Expected<NoteRewrite> R = MD->rewrite();
    if (!Slack) {
      ASSERT_FALSE(bool(R));
      EXPECT_TRUE(R.takeError().isA<NoteGrowthError>());
      continue;
    }
    ASSERT_OK(R);
    EXPECT_EQ(R->How, Method::PaddingSlack);
    size_t Off = valueOffset(R->Bytes, ".sgpr_count");
    EXPECT_EQ(ArrayRef<uint8_t>(R->Bytes).slice(Off, 3),
              ArrayRef<uint8_t>({0xcd, 0x01, 0x00}));
    EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::SGPRCount), 256u);
  }
}

TEST(MetadataRewriteTest, BatchOverSeveralKernels) {
  // Four kernels; 3 bytes of padding absorb 1-byte growths of two (and of
  // three) of them, not of four.
  auto Section = sectionWithSlack(
      {{"a", 10, 3}, {"b", 127, 3}, {"c", 127, 127}, {"d", 100, 3}}, 3);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("a.kd", 12));  // in place
  EXPECT_NO_ERR(MD->setSGPRCount("b.kd", 130)); // grows by 1
  EXPECT_NO_ERR(MD->setSGPRCount("c.kd", 128)); // grows by 1
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->How, Method::PaddingSlack);
  EXPECT_EQ(R->Bytes.size(), Section.size());
  EXPECT_EQ(descSize(R->Bytes), descSize(Section) + 2);
  auto New = CodeObjectMetadata::parse(R->Bytes);
  ASSERT_OK(New);
  ASSERT_EQ(New->kernels().size(), 4u);
  EXPECT_EQ(New->kernels()[0].SGPRCount, 12u);
  EXPECT_EQ(New->kernels()[1].SGPRCount, 130u);
  EXPECT_EQ(New->kernels()[2].SGPRCount, 128u);
  EXPECT_EQ(New->kernels()[2].VGPRCount, 127u);
  EXPECT_EQ(New->kernels()[3].SGPRCount, 100u);
  // A second rewrite of the result with the same values changes nothing.
  EXPECT_NO_ERR(New->setSGPRCount("b.kd", 130));
  Expected<NoteRewrite> R2 = New->rewrite();
  ASSERT_OK(R2);
  EXPECT_EQ(R2->How, Method::Unchanged);
  EXPECT_EQ(R2->Bytes, R->Bytes);
  // Four growths do not fit: the error names the first kernel, in document
  // order, whose value does not.
  EXPECT_NO_ERR(MD->setSGPRCount("d.kd", 200));
  EXPECT_NO_ERR(MD->setSGPRCount("a.kd", 128));
  Error E = MD->rewrite().takeError();
  ASSERT_TRUE(E.isA<NoteGrowthError>());
  EXPECT_EQ(toString(std::move(E)),
            "metadata: kernel 'd.kd': '.sgpr_count' 200 does not fit: the "
            "note at offset 0x0 would have to grow, and it is loaded memory");
}

TEST(MetadataRewriteTest, OtherNotesAreKept) {
  std::string Blob = metadataBlob({{"k", 127, 3}}, "amdgcn-amd-amdhsa--gfx90a");
  std::vector<uint8_t> S;
  appendNote(S, "GNU", 3, {1, 2, 3, 4});
  appendNote(S, "AMDGPU", 32, arrayRefFromStringRef(Blob));
  appendNote(S, "LLVM", 7, {9});
  auto MD = CodeObjectMetadata::parse(S);
  ASSERT_OK(MD);
  ASSERT_EQ(MD->notes().size(), 1u);
  EXPECT_EQ(MD->notes()[0].Offset, 20u);
  EXPECT_NO_ERR(MD->setSGPRCount("k.kd", 100));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  std::vector<size_t> D = diffOffsets(S, R->Bytes);
  ASSERT_EQ(D.size(), 1u);
  EXPECT_EQ(D[0], 20 + valueOffset(ArrayRef<uint8_t>(S).drop_front(20),
                                   ".sgpr_count"));
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::SGPRCount), 100u);
}

TEST(MetadataRewriteTest, RealNoteRewrites) {
  const size_t Off = valueOffset(RealNote, ".sgpr_count");
  ASSERT_EQ(RealNote[Off], 4);
  struct Case {
    uint64_t Value;
    Method How;
    uint32_t DescSize;
  } Cases[] = {
      {6, Method::InPlace, 0x1a6},
      {130, Method::PaddingSlack, 0x1a7}, // fixint -> 0xcc
      {300, Method::PaddingSlack, 0x1a8}, // fixint -> 0xcd
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Value);
    auto MD = CodeObjectMetadata::parse(RealNote);
    ASSERT_OK(MD);
    EXPECT_NO_ERR(MD->setSGPRCount("nop.kd", C.Value));
    Expected<NoteRewrite> R = MD->rewrite();
    ASSERT_OK(R);
    EXPECT_EQ(R->How, C.How);
    EXPECT_EQ(descSize(R->Bytes), C.DescSize);
    EXPECT_EQ(R->Bytes.size(), sizeof(RealNote));
    if (C.How == Method::InPlace)
      EXPECT_EQ(diffOffsets(RealNote, R->Bytes), std::vector<size_t>{Off});
    EXPECT_EQ(reparsedValue(*R, "nop.kd", KernelField::SGPRCount), C.Value);
  }
  // fixint -> 0xce needs 4 more bytes; the note has 2.
  auto MD = CodeObjectMetadata::parse(RealNote);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("nop.kd", 70000));
  EXPECT_TRUE(MD->rewrite().takeError().isA<NoteGrowthError>());
}

TEST(MetadataRewriteTest, MutatedRealNoteNeverCrashes) {
  // Every byte of the real note replaced by a few values: parse either
  // fails cleanly or succeeds, and a rewrite of a parsed note either
  // succeeds or says that the note would have to grow; its self-check never
  // fails. Run under the sanitizer build.
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
        if (K.SGPRCount)
          Symbols.push_back(K.Symbol);
      for (const std::string &Sym : Symbols)
        EXPECT_NO_ERR(MD->setSGPRCount(Sym, 200));
      Expected<NoteRewrite> R = MD->rewrite();
      if (!R)
        handleAllErrors(
            R.takeError(), [](const NoteGrowthError &) {},
            [&](const ErrorInfoBase &E) {
              ADD_FAILURE() << "byte " << I << " = " << unsigned(V) << ": "
                            << E.message();
            });
    }
  }
  EXPECT_GT(Parsed, 0u);
}

//===-- one note per LTO partition ----------------------------------------===//

/// Two metadata notes (kernels a0, a1 and b0, b1) around a GNU note; each
/// metadata descriptor has \p Slack bytes of padding.
std::vector<uint8_t> twoNotes(unsigned Slack, std::vector<size_t> &Offsets) {
  std::vector<uint8_t> S;
  Offsets = {0};
  appendNote(
      S, "AMDGPU", 32,
      arrayRefFromStringRef(blobWithSlack({{"a0", 127}, {"a1", 20}}, Slack)));
  appendNote(S, "GNU", 3, {1, 2, 3, 4});
  Offsets.push_back(S.size());
  appendNote(
      S, "AMDGPU", 32,
      arrayRefFromStringRef(blobWithSlack({{"b0", 30}, {"b1", 127}}, Slack)));
  return S;
}

TEST(MetadataRewriteTest, EditsTheNoteOfTheKernel) {
  std::vector<size_t> Off;
  std::vector<uint8_t> S = twoNotes(1, Off);
  auto MD = CodeObjectMetadata::parse(S);
  ASSERT_OK(MD);
  ASSERT_EQ(MD->notes().size(), 2u);
  EXPECT_EQ(MD->findBySymbol("b1.kd")->Note, 1u);
  // b1 in the second note only: every changed byte lies in it.
  EXPECT_NO_ERR(MD->setSGPRCount("b1.kd", 100));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->How, Method::InPlace);
  size_t B1 = Off[1] + valueOffset(ArrayRef<uint8_t>(S).drop_front(Off[1]),
                                   ".sgpr_count", 1);
  EXPECT_EQ(diffOffsets(S, R->Bytes), std::vector<size_t>{B1});
  // Both notes grow into their own padding (1 byte each).
  EXPECT_NO_ERR(MD->setSGPRCount("a0.kd", 128));
  EXPECT_NO_ERR(MD->setSGPRCount("b1.kd", 128));
  R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->How, Method::PaddingSlack);
  EXPECT_EQ(descSize(R->Bytes, Off[0]), descSize(S, Off[0]) + 1);
  EXPECT_EQ(descSize(R->Bytes, Off[1]), descSize(S, Off[1]) + 1);
  for (const char *K : {"a0.kd", "b1.kd"})
    EXPECT_EQ(reparsedValue(*R, K, KernelField::SGPRCount), 128u) << K;
  EXPECT_EQ(reparsedValue(*R, "b0.kd", KernelField::SGPRCount), 30u);
  // The GNU note between them is unchanged.
  auto Notes = parseNotes(R->Bytes);
  ASSERT_OK(Notes);
  EXPECT_EQ((*Notes)[1].Desc, ArrayRef<uint8_t>({1, 2, 3, 4}));
}

TEST(MetadataRewriteTest, EachNoteHasItsOwnPadding) {
  // Two growths in the second note do not fit its one byte of padding, even
  // though the first note has a byte to spare.
  std::vector<size_t> Off;
  auto MD = CodeObjectMetadata::parse(twoNotes(1, Off));
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("b0.kd", 200));
  EXPECT_NO_ERR(MD->setSGPRCount("b1.kd", 200));
  Error E = MD->rewrite().takeError();
  ASSERT_TRUE(E.isA<NoteGrowthError>());
  EXPECT_EQ(toString(std::move(E)),
            "metadata: kernel 'b1.kd': '.sgpr_count' 200 does not fit: the "
            "note at offset " +
                ("0x" + utohexstr(Off[1], true)) +
                " would have to grow, and it is loaded memory");
}

/// Where \p Key's \p Nth value lies in the note at \p NoteOffset of \p S.
size_t valueIn(ArrayRef<uint8_t> S, size_t NoteOffset, StringRef Key,
               unsigned Nth) {
  return NoteOffset + valueOffset(S.drop_front(NoteOffset), Key, Nth);
}

TEST(MetadataRewriteTest, GrowsOnlyWhenAllowed) {
  // No padding anywhere: a0's 127 -> 70000 needs 4 more bytes (0xce), b1's
  // 127 -> 128 one more (0xcc). The GNU note between them moves by 4, the
  // second note by 4 too, and grows by 4 (1 byte rounded up).
  std::vector<size_t> Off;
  std::vector<uint8_t> S = twoNotes(0, Off);
  auto MD = CodeObjectMetadata::parse(S);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("a0.kd", 70000));
  EXPECT_NO_ERR(MD->setSGPRCount("b1.kd", 128));
  EXPECT_TRUE(MD->rewrite().takeError().isA<NoteGrowthError>());
  Expected<NoteRewrite> R = MD->rewrite(/*AllowGrowth=*/true);
  ASSERT_OK(R);
  EXPECT_EQ(R->How, Method::Grown);
  ASSERT_EQ(R->Bytes.size(), S.size() + 8);
  EXPECT_EQ(descSize(R->Bytes, 0), descSize(S, 0) + 4);
  EXPECT_EQ(descSize(R->Bytes, Off[1] + 4), descSize(S, Off[1]) + 1);
  for (auto [K, V] : {std::pair<const char *, uint64_t>{"a0.kd", 70000},
                      {"a1.kd", 20},
                      {"b0.kd", 30},
                      {"b1.kd", 128}})
    EXPECT_EQ(reparsedValue(*R, K, KernelField::SGPRCount), V) << K;
  // Every byte but the two values, where it was or moved by the growth.
  const size_t A0 = valueIn(S, 0, ".sgpr_count", 0);
  const size_t B1 = valueIn(S, Off[1], ".sgpr_count", 1);
  ArrayRef<uint8_t> Old(S), New(R->Bytes);
  EXPECT_EQ(Old.slice(0, 4), New.slice(0, 4));
  EXPECT_EQ(Old.slice(8, A0 - 8), New.slice(8, A0 - 8));
  EXPECT_EQ(New.slice(A0, 5), ArrayRef<uint8_t>({0xce, 0, 1, 0x11, 0x70}));
  EXPECT_EQ(Old.slice(A0 + 1, Off[1] + 4 - (A0 + 1)),
            New.slice(A0 + 5, Off[1] + 4 - (A0 + 1)));
  EXPECT_EQ(New.slice(B1 + 4, 2), ArrayRef<uint8_t>({0xcc, 128}));
  EXPECT_EQ(Old.slice(B1 + 1), New.slice(B1 + 6, Old.size() - B1 - 1));
  // The GNU note, moved.
  auto Notes = parseNotes(R->Bytes);
  ASSERT_OK(Notes);
  ASSERT_EQ(Notes->size(), 3u);
  EXPECT_EQ((*Notes)[1].Offset, Off[1] - 20 + 4);
  EXPECT_EQ((*Notes)[1].Desc, ArrayRef<uint8_t>({1, 2, 3, 4}));
  EXPECT_NO_ERR(MD->verifyRewrite(R->Bytes));
}

/// A note of one kernel whose map has .name, .symbol and \p Extra more
/// keys (".k0", ".k1", ... holding 0).
std::vector<uint8_t> smallKernelNote(unsigned Extra) {
  msgpack::Document D;
  msgpack::MapDocNode M = D.getMapNode();
  M[".name"] = D.getNode("s");
  M[".symbol"] = D.getNode("s.kd");
  for (unsigned I = 0; I != Extra; ++I)
    M[D.getNode(".k" + std::to_string(I), /*Copy=*/true)] =
        D.getNode(uint64_t(0));
  msgpack::ArrayDocNode Kernels = D.getArrayNode();
  Kernels.push_back(M);
  D.getRoot().getMap(/*Convert=*/true)["amdhsa.kernels"] = Kernels;
  std::string Blob;
  D.writeToBlob(Blob);
  return noteSection(Blob);
}

TEST(MetadataRewriteTest, AddsKeysWhenAllowed) {
  // 2 keys (fixmap), 13 (fixmap to fixmap), 14 (fixmap 15 to map16 16 after
  // two keys added).
  for (unsigned Extra : {0u, 11u, 12u}) {
    SCOPED_TRACE(Extra);
    std::vector<uint8_t> S = smallKernelNote(Extra);
    auto MD = CodeObjectMetadata::parse(S);
    ASSERT_OK(MD);
    EXPECT_NO_ERR(MD->setField("s.kd", KernelField::UsesDynamicStack, 1));
    EXPECT_NO_ERR(MD->setField("s.kd", KernelField::VGPRCount, 300));
    EXPECT_TRUE(MD->rewrite().takeError().isA<NoteGrowthError>());
    Expected<NoteRewrite> R = MD->rewrite(/*AllowGrowth=*/true);
    ASSERT_OK(R);
    EXPECT_EQ(R->How, Method::Grown);
    EXPECT_EQ(reparsedValue(*R, "s.kd", KernelField::UsesDynamicStack), 1u);
    EXPECT_EQ(reparsedValue(*R, "s.kd", KernelField::VGPRCount), 300u);
    // The map, read as LLVM reads it: the old keys and the two new ones.
    auto Notes = parseNotes(R->Bytes);
    ASSERT_OK(Notes);
    msgpack::Document D;
    ASSERT_TRUE(D.readFromBlob(toStringRef((*Notes)[0].Desc), false));
    msgpack::MapDocNode K =
        D.getRoot().getMap()["amdhsa.kernels"].getArray()[0].getMap();
    EXPECT_EQ(K.size(), Extra + 4);
    EXPECT_TRUE(K[".uses_dynamic_stack"].getBool());
    EXPECT_EQ(K[".vgpr_count"].getUInt(), 300u);
    EXPECT_EQ(K[".name"].getString(), "s");
    EXPECT_NO_ERR(MD->verifyRewrite(R->Bytes));
    // A wrong added key is caught.
    std::vector<uint8_t> B = R->Bytes;
    auto At = std::search(B.begin(), B.end(), std::begin(".uses_dyn"),
                          std::end(".uses_dyn") - 1);
    ASSERT_NE(At, B.end());
    At[1] = 'U';
    Error E = MD->verifyRewrite(B);
    EXPECT_TRUE(bool(E));
    consumeError(std::move(E));
  }
}

TEST(MetadataRewriteTest, GrownSelfCheckCatchesCorruption) {
  std::vector<size_t> Off;
  std::vector<uint8_t> S = twoNotes(0, Off);
  auto MD = CodeObjectMetadata::parse(S);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("a0.kd", 70000));
  Expected<NoteRewrite> R = MD->rewrite(/*AllowGrowth=*/true);
  ASSERT_OK(R);
  ASSERT_EQ(R->How, Method::Grown);
  auto Notes = parseNotes(R->Bytes);
  ASSERT_OK(Notes);
  const size_t Gnu = (*Notes)[1].DescOffset;
  const size_t A0 = valueIn(R->Bytes, 0, ".sgpr_count", 0);
  struct Case {
    const char *What;
    std::function<void(std::vector<uint8_t> &)> Corrupt;
  } Cases[] = {
      {"the moved GNU note", [&](auto &B) { B[Gnu] ^= 1; }},
      {"a byte before the value", [&](auto &B) { B[A0 - 1] ^= 1; }},
      {"the new value", [&](auto &B) { B[A0 + 4] ^= 1; }},
      {"the next kernel's value",
       [&](auto &B) { B[valueIn(B, 0, ".sgpr_count", 1)] ^= 1; }},
      {"one note grown too far",
       [&](auto &B) {
         B.insert(B.begin() + (*Notes)[1].Offset, {0, 0, 0, 0});
         B[4] += 4;
       }},
      {"a byte more at the end", [&](auto &B) { B.push_back(0); }},
  };
  for (const Case &C : Cases) {
    std::vector<uint8_t> B = R->Bytes;
    C.Corrupt(B);
    Error E = MD->verifyRewrite(B);
    EXPECT_TRUE(bool(E)) << C.What;
    consumeError(std::move(E));
  }
}

//===-- the rewrite self-check --------------------------------------------===//

/// A two-kernel note with .sgpr_count of k1 changed, its rewrite and the
/// metadata it was made from.
struct Rewritten {
  std::vector<uint8_t> Section;
  std::optional<CodeObjectMetadata> MD;
  NoteRewrite R;
};

Rewritten rewriteSGPR(StringRef Symbol, uint64_t Value) {
  Rewritten W;
  W.Section = sectionWithSlack({{"k0", 10, 3}, {"k1", 10, 3}}, 0);
  Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(W.Section);
  if (!MD) {
    ADD_FAILURE() << toString(MD.takeError());
    return W;
  }
  W.MD.emplace(std::move(*MD));
  EXPECT_NO_ERR(W.MD->setSGPRCount(Symbol, Value));
  Expected<NoteRewrite> R = W.MD->rewrite();
  if (!R) {
    ADD_FAILURE() << toString(R.takeError());
    return W;
  }
  W.R = std::move(*R);
  return W;
}

/// The self-check's message for \p Section, "<no error>" if it passes. Its
/// errors must be MetadataSelfCheckErrors.
std::string verifyError(const CodeObjectMetadata &MD,
                        ArrayRef<uint8_t> Section) {
  Error E = MD.verifyRewrite(Section);
  if (!E)
    return "<no error>";
  EXPECT_TRUE(E.isA<MetadataSelfCheckError>());
  return toString(std::move(E));
}

const std::string SelfCheck =
    "metadata: internal error: rewritten note fails self-check: ";
const size_t DescOff = 20; // "AMDGPU\0" padded to 8 after the header

TEST(MetadataRewriteTest, SelfCheckAcceptsTheRewrite) {
  Rewritten W = rewriteSGPR("k1.kd", 20);
  ASSERT_TRUE(W.MD);
  EXPECT_EQ(W.R.How, Method::InPlace);
  EXPECT_EQ(verifyError(*W.MD, W.R.Bytes), "<no error>");
  // The unchanged input lacks the change.
  EXPECT_EQ(verifyError(*W.MD, W.Section),
            SelfCheck + "note at offset 0x0: kernel 'k1.kd': '.sgpr_count' "
                        "does not have the expected value");
  // The prefix is there once.
  std::string Msg = verifyError(*W.MD, W.Section);
  EXPECT_EQ(Msg.find("metadata:", 1), std::string::npos) << Msg;
}

TEST(MetadataRewriteTest, SelfCheckCatchesValuesNobodyReads) {
  // Corruptions the field comparison cannot see: only the bytes differ.
  Rewritten W = rewriteSGPR("k1.kd", 20);
  ASSERT_TRUE(W.MD);
  auto Corrupt = [&](StringRef Key, unsigned Nth, size_t Delta, uint8_t V) {
    std::vector<uint8_t> B = W.R.Bytes;
    size_t Off =
        valueOffset(ArrayRef<uint8_t>(B).drop_front(DescOff), Key, Nth);
    EXPECT_NE(Off, 0u);
    B[DescOff + Off + Delta] = V;
    return verifyError(*W.MD, B) == SelfCheck +
                                        "note at offset 0x0: byte at offset " +
                                        ("0x" + utohexstr(Off + Delta, true)) +
                                        " differs from the original";
  };
  // .kernarg_segment_align of k0: 4 -> 5.
  EXPECT_TRUE(Corrupt(".kernarg_segment_align", 0, 0, 0x05));
  // .language of k1: "OpenCL C" -> "PpenCL C" (the byte after the tag).
  EXPECT_TRUE(Corrupt(".language", 1, 1, 'P'));
  // .uniform_work_group_size of k0: unsigned 1 -> signed -1 (a negative
  // fixint keeps the size).
  EXPECT_TRUE(Corrupt(".uniform_work_group_size", 0, 0, 0xff));
  // After the change: .uniform_work_group_size of k1.
  EXPECT_TRUE(Corrupt(".uniform_work_group_size", 1, 0, 0x00));
  // The value changed is .sgpr_count of k1, not of k0.
  Rewritten Other = rewriteSGPR("k0.kd", 20);
  ASSERT_TRUE(Other.MD);
  EXPECT_EQ(verifyError(*Other.MD, W.R.Bytes).find(SelfCheck), 0u);
}

TEST(MetadataRewriteTest, SelfCheckOfTheNewToken) {
  // k1's .sgpr_count 10 -> 200 takes 0xcc 0xc8, one byte of the padding.
  std::vector<uint8_t> Section =
      sectionWithSlack({{"k0", 10, 3}, {"k1", 10, 3}}, 1);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("k1.kd", 200));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  ASSERT_EQ(R->How, Method::PaddingSlack);
  EXPECT_EQ(verifyError(*MD, R->Bytes), "<no error>");
  const size_t S1 = valueOffset(ArrayRef<uint8_t>(R->Bytes).drop_front(DescOff),
                                ".sgpr_count", 1);
  ASSERT_EQ(R->Bytes[DescOff + S1], 0xcc);
  // The new token as an int8 (-56), and one byte of the grown
  // descriptor's tail.
  std::vector<uint8_t> B = R->Bytes;
  B[DescOff + S1] = 0xd0;
  EXPECT_EQ(verifyError(*MD, B),
            SelfCheck + "note at offset 0x0: kernel 1: '.sgpr_count' is not "
                        "an unsigned integer");
  B = R->Bytes;
  const size_t Last = DescOff + descSize(R->Bytes) - 1;
  B[Last] ^= 0x01;
  EXPECT_EQ(verifyError(*MD, B).find(SelfCheck + "note at offset 0x0: "), 0u);
}

TEST(MetadataRewriteTest, SelfCheckCatchesWrongValues) {
  Rewritten W = rewriteSGPR("k1.kd", 20);
  ASSERT_TRUE(W.MD);
  std::vector<uint8_t> B = W.R.Bytes;
  // k0's .vgpr_count (a field) and k1's new .sgpr_count.
  size_t V0 = DescOff + valueOffset(ArrayRef<uint8_t>(B).drop_front(DescOff),
                                    ".vgpr_count", 0);
  B[V0] = 4;
  EXPECT_EQ(verifyError(*W.MD, B),
            SelfCheck + "note at offset 0x0: kernel 'k0.kd': '.vgpr_count' "
                        "does not have the expected value");
  B = W.R.Bytes;
  size_t S1 = DescOff + valueOffset(ArrayRef<uint8_t>(B).drop_front(DescOff),
                                    ".sgpr_count", 1);
  ASSERT_EQ(B[S1], 20);
  B[S1] = 21;
  EXPECT_EQ(verifyError(*W.MD, B),
            SelfCheck + "note at offset 0x0: kernel 'k1.kd': '.sgpr_count' "
                        "does not have the expected value");
  // A byte of the note header, a byte of the padding.
  B = W.R.Bytes;
  B[8] ^= 1; // n_type
  EXPECT_NE(verifyError(*W.MD, B).find(SelfCheck), std::string::npos);
  // A malformed result.
  B = W.R.Bytes;
  B[DescOff] = 0xc1;
  EXPECT_EQ(verifyError(*W.MD, B),
            SelfCheck + "note at offset 0x0: malformed msgpack payload");
  // A wrong value before a malformed tail: kernels are compared as they
  // are read, and what reading reports still comes first.
  B = W.R.Bytes;
  B[V0] = 4;
  B[DescOff + descSize(B) - 1] = 0xc1;
  EXPECT_EQ(verifyError(*W.MD, B),
            SelfCheck + "note at offset 0x0: malformed msgpack payload");
  // Another kernel (k1.kd renamed k2.kd, the same size).
  B = W.R.Bytes;
  const std::string Old = "k1.kd";
  auto At = std::search(B.begin() + DescOff, B.end(), Old.begin(), Old.end());
  ASSERT_NE(At, B.end());
  At[1] = '2';
  EXPECT_EQ(verifyError(*W.MD, B),
            SelfCheck + "note at offset 0x0: the kernel list differs");
  // A shorter section: its last note no longer fits; a longer one.
  B = W.R.Bytes;
  B.pop_back();
  EXPECT_EQ(verifyError(*W.MD, B),
            SelfCheck + "note at offset 0x0: descriptor size " +
                ("0x" + utohexstr(descSize(B), true)) +
                " extends past end of section (size " +
                ("0x" + utohexstr(B.size(), true)) + ")");
  B = W.R.Bytes;
  B.insert(B.end(), {0, 0, 0, 0});
  EXPECT_NE(verifyError(*W.MD, B).find(SelfCheck), std::string::npos);
}

TEST(MetadataRewriteTest, SelfCheckOfSeveralNotes) {
  std::vector<size_t> Off;
  std::vector<uint8_t> S = twoNotes(1, Off);
  auto MD = CodeObjectMetadata::parse(S);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setSGPRCount("b0.kd", 40));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(verifyError(*MD, R->Bytes), "<no error>");
  // A byte of the first note, which has no change, and of the GNU note.
  for (size_t At : {Off[0] + DescOff + 3, Off[1] - 1}) {
    SCOPED_TRACE(At);
    std::vector<uint8_t> B = R->Bytes;
    B[At] ^= 0x20;
    EXPECT_EQ(verifyError(*MD, B).find(SelfCheck + "note at offset "), 0u);
  }
}

// setField: every field the kernel has can change, in one batch with
// others; each value is written in place in its own width (a boolean as a
// boolean), and one that does not fit is refused naming its field.
TEST(MetadataRewriteTest, SetFieldEveryKindInOneBatch) {
  auto Section = sectionWithSlack({{"k", 10, 3}}, 0);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setField("k.kd", KernelField::VGPRCount, 100));
  EXPECT_NO_ERR(MD->setField("k.kd", KernelField::UsesDynamicStack, 1));
  EXPECT_NO_ERR(MD->setField("k.kd", KernelField::SGPRCount, 20));
  EXPECT_NO_ERR(MD->setField("k.kd", KernelField::MaxFlatWorkgroupSize, 1024));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->How, Method::InPlace);
  size_t V = valueOffset(Section, ".vgpr_count");
  size_t D = valueOffset(Section, ".uses_dynamic_stack");
  size_t S = valueOffset(Section, ".sgpr_count");
  size_t M = valueOffset(Section, ".max_flat_workgroup_size");
  // 256 is 0xcd 0x01 0x00, 1024 0xcd 0x04 0x00: one byte differs.
  EXPECT_EQ(diffOffsets(Section, R->Bytes),
            (std::vector<size_t>{M + 1, S, D, V}));
  EXPECT_EQ(R->Bytes[D], 0xc3);
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::VGPRCount), 100u);
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::UsesDynamicStack), 1u);
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::SGPRCount), 20u);
  EXPECT_EQ(reparsedValue(*R, "k.kd", KernelField::MaxFlatWorkgroupSize),
            1024u);
}

TEST(MetadataRewriteTest, SetFieldRefusals) {
  auto MD = CodeObjectMetadata::parse(
      sectionWithSlack({{"k", 10, 3, /*WithAGPR=*/false}}, 0));
  ASSERT_OK(MD);
  EXPECT_EQ(toString(MD->setField("k.kd", KernelField::UsesDynamicStack, 2)),
            "metadata: kernel 'k.kd': '.uses_dynamic_stack' is a boolean, "
            "not 2");
  EXPECT_FALSE(MD->hasPendingChanges());
  // 0 -> 1024 needs two more bytes than the note's padding has.
  EXPECT_NO_ERR(MD->setField("k.kd", KernelField::GroupSegmentFixedSize, 1024));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(toString(R.takeError()),
            "metadata: kernel 'k.kd': '.group_segment_fixed_size' 1024 does "
            "not fit: the note at offset 0x0 would have to grow, and it is "
            "loaded memory");
}

// The self-check knows every field: a wrong value in a field that was not
// changed (here .vgpr_count, next to a changed .sgpr_count) is caught.
TEST(MetadataRewriteTest, SelfCheckCoversEveryField) {
  auto Section = sectionWithSlack({{"k", 10, 3}}, 0);
  auto MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_NO_ERR(MD->setField("k.kd", KernelField::PrivateSegmentFixedSize, 9));
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(verifyError(*MD, R->Bytes), "<no error>");
  std::vector<uint8_t> B = R->Bytes;
  B[valueOffset(Section, ".vgpr_count")] = 4;
  EXPECT_NE(verifyError(*MD, B).find("'.vgpr_count' does not have the "
                                     "expected value"),
            std::string::npos);
  B = R->Bytes;
  B[valueOffset(Section, ".private_segment_fixed_size")] = 8;
  EXPECT_NE(verifyError(*MD, B).find("'.private_segment_fixed_size'"),
            std::string::npos);
}

} // namespace
